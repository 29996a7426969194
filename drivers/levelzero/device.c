/* SPDX-License-Identifier: Apache-2.0 */
/* device.c: initialisation, device enumeration and properties, and the
 * per-device state (a context and a default stream). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/levelzero/levelzero.h"

static void zdrv_note(const trd_driver_init_args_t *args, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void zdrv_note(const trd_driver_init_args_t *args, const char *fmt, ...)
{
    if (!args->note || args->note_cap == 0)
        return;
    size_t len = strnlen(args->note, args->note_cap);
    if (len + 1 >= args->note_cap)
        return;
    if (len > 0 && len + 3 < args->note_cap) {
        memcpy(args->note + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args->note + len, args->note_cap - len, fmt, ap);
    va_end(ap);
}

/* Puts `prefix` before the note (what the note explains comes first). */
static void zdrv_note_prefix(const trd_driver_init_args_t *args, const char *prefix)
{
    if (!args->note || args->note_cap == 0)
        return;
    size_t len = strnlen(args->note, args->note_cap), n = strlen(prefix);
    if (n + 1 > args->note_cap)
        return;
    if (len + n + 1 > args->note_cap)
        len = args->note_cap - n - 1;
    memmove(args->note + n, args->note, len);
    memcpy(args->note, prefix, n);
    args->note[len + n] = '\0';
}

static int zdrv_has_extension(const ze_driver_extension_properties_t *ext, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strncmp(ext[i].name, name, sizeof ext[i].name) == 0)
            return 1;
    return 0;
}

/* What the driver offers: the PCI-properties extension, the blocking free
 * policy, and whether device properties report the timer in cycles/s. */
struct zdrv_drvcaps {
    int pci;
    int free_blocking;
    int props_1_2;
};

static void zdrv_driver_caps(const struct zdrv_api *api, ze_driver_handle_t drv, struct zdrv_drvcaps *caps)
{
    memset(caps, 0, sizeof *caps);
    ze_api_version_t version = 0;
    if (api->zeDriverGetApiVersion(drv, &version) == ZE_RESULT_SUCCESS)
        caps->props_1_2 = version >= ZE_MAKE_VERSION(1, 2);
    uint32_t n = 0;
    if (api->zeDriverGetExtensionProperties(drv, &n, NULL) != ZE_RESULT_SUCCESS || n == 0 || n > 4096)
        return;
    ze_driver_extension_properties_t *ext = calloc(n, sizeof *ext);
    if (!ext)
        return;
    if (api->zeDriverGetExtensionProperties(drv, &n, ext) == ZE_RESULT_SUCCESS) {
        caps->pci = api->zeDevicePciGetPropertiesExt && zdrv_has_extension(ext, n, ZE_PCI_PROPERTIES_EXT_NAME);
        if (api->zeMemFreeExt && zdrv_has_extension(ext, n, ZE_MEMORY_FREE_POLICIES_EXT_NAME)) {
            ze_driver_memory_free_ext_properties_t fp = {.stype = ZE_STRUCTURE_TYPE_DRIVER_MEMORY_FREE_EXT_PROPERTIES};
            ze_driver_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, .pNext = &fp};
            if (api->zeDriverGetProperties(drv, &dp) == ZE_RESULT_SUCCESS)
                caps->free_blocking = (fp.freePolicies & ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE) != 0;
        }
    }
    free(ext);
}

/* The warp size trident advertises: 32 when the device has that sub-group
 * size (Triton's XPUOptions default), else its largest. A kernel's own
 * metadata (threads_per_warp) decides its launch. */
static uint32_t zdrv_pick_warp_size(const ze_device_compute_properties_t *c)
{
    uint32_t n = c->numSubGroupSizes < ZE_SUBGROUPSIZE_COUNT ? c->numSubGroupSizes : ZE_SUBGROUPSIZE_COUNT;
    uint32_t best = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (c->subGroupSizes[i] == 32)
            return 32;
        if (c->subGroupSizes[i] > best)
            best = c->subGroupSizes[i];
    }
    return best ? best : 32;
}

static ze_result_t zdrv_pick_compute_ordinal(const struct zdrv_api *api, ze_device_handle_t dev, uint32_t *ordinal)
{
    uint32_t n = 0;
    ze_result_t r = api->zeDeviceGetCommandQueueGroupProperties(dev, &n, NULL);
    if (r != ZE_RESULT_SUCCESS)
        return r;
    if (n == 0 || n > 1024)
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    ze_command_queue_group_properties_t *g = calloc(n, sizeof *g);
    if (!g)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; i < n; i++)
        g[i].stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    r = api->zeDeviceGetCommandQueueGroupProperties(dev, &n, g);
    if (r == ZE_RESULT_SUCCESS) {
        r = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        for (uint32_t i = 0; i < n; i++)
            if (g[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
                *ordinal = i;
                r = ZE_RESULT_SUCCESS;
                break;
            }
    }
    free(g);
    return r;
}

/* Fills one device's description; returns 0 (with a note) to skip it. */
static int zdrv_describe(const trd_driver_init_args_t *args, const struct zdrv_api *api, ze_driver_handle_t drv,
                         ze_device_handle_t dev, const struct zdrv_drvcaps *caps, uint32_t index,
                         struct zdrv_devinfo *out)
{
    memset(out, 0, sizeof *out);
    out->driver = drv;
    out->device = dev;
    ze_device_properties_t p = {.stype = caps->props_1_2 ? ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
                                                          : ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ze_result_t r = api->zeDeviceGetProperties(dev, &p);
    if (r != ZE_RESULT_SUCCESS) {
        zdrv_note(args, "device %u skipped: zeDeviceGetProperties failed: %s (0x%08x)", index, zdrv_result_name(r),
                  (unsigned)r);
        return 0;
    }
    if (p.type != ZE_DEVICE_TYPE_GPU) {
        zdrv_note(args, "device %u skipped: not a GPU (type %d)", index, (int)p.type);
        return 0;
    }
    out->compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
    if ((r = api->zeDeviceGetComputeProperties(dev, &out->compute)) != ZE_RESULT_SUCCESS) {
        zdrv_note(args, "device %u skipped: zeDeviceGetComputeProperties failed: %s (0x%08x)", index,
                  zdrv_result_name(r), (unsigned)r);
        return 0;
    }
    out->compute.pNext = NULL;
    if ((r = zdrv_pick_compute_ordinal(api, dev, &out->compute_ordinal)) != ZE_RESULT_SUCCESS) {
        zdrv_note(args, "device %u skipped: no compute command queue group (%s)", index, zdrv_result_name(r));
        return 0;
    }
    uint32_t nmem = 0;
    if (api->zeDeviceGetMemoryProperties(dev, &nmem, NULL) == ZE_RESULT_SUCCESS && nmem > 0 && nmem <= 64) {
        ze_device_memory_properties_t mem[64];
        memset(mem, 0, sizeof mem);
        for (uint32_t i = 0; i < nmem; i++)
            mem[i].stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
        if (api->zeDeviceGetMemoryProperties(dev, &nmem, mem) == ZE_RESULT_SUCCESS)
            for (uint32_t i = 0; i < nmem && i < 64; i++)
                out->memory += mem[i].totalSize;
    }
    snprintf(out->name, sizeof out->name, "%.*s", (int)sizeof p.name, p.name);
    if (p.vendorId == 0x8086)
        snprintf(out->vendor, sizeof out->vendor, "Intel");
    else
        snprintf(out->vendor, sizeof out->vendor, "vendor 0x%04x", (unsigned)p.vendorId);
    memcpy(out->uuid, p.uuid.id, sizeof out->uuid);
    for (size_t i = 0; i < sizeof out->uuid; i++)
        if (out->uuid[i])
            out->flags |= TRD_DEVICE_HAS_UUID;
    out->warp_size = zdrv_pick_warp_size(&out->compute);
    out->compute_units = p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice;
    /* timerResolution is ns per tick, or ticks per second with the 1.2 stype. */
    if (caps->props_1_2)
        out->ns_per_tick = p.timerResolution ? 1e9 / (double)p.timerResolution : 0.0;
    else
        out->ns_per_tick = (double)p.timerResolution;
    out->ts_mask = p.timestampValidBits == 0 || p.timestampValidBits >= 64
                       ? UINT64_MAX
                       : (UINT64_C(1) << p.timestampValidBits) - 1;
    if (caps->pci) {
        ze_pci_ext_properties_t pci = {.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES};
        if (api->zeDevicePciGetPropertiesExt(dev, &pci) == ZE_RESULT_SUCCESS)
            snprintf(out->pci, sizeof out->pci, "%04x:%02x:%02x.%x", pci.address.domain & 0xffff,
                     pci.address.bus & 0xff, pci.address.device & 0x1f, pci.address.function & 0x7);
    }
    out->free_blocking = caps->free_blocking;
    return 1;
}

static trd_status_t zdrv_enumerate(const trd_driver_init_args_t *args, struct zdrv_driver *d)
{
    const struct zdrv_api *api = &d->api;
    uint32_t ndrv = 0;
    ze_result_t r = api->zeDriverGet(&ndrv, NULL);
    if (r != ZE_RESULT_SUCCESS) {
        zdrv_note(args, "0 devices: zeDriverGet failed: %s (0x%08x)", zdrv_result_name(r), (unsigned)r);
        return TRD_OK;
    }
    if (ndrv == 0) {
        zdrv_note(args, "0 devices: zeDriverGet reports no driver");
        return TRD_OK;
    }
    if (ndrv > 64)
        ndrv = 64;
    ze_driver_handle_t drivers[64];
    if ((r = api->zeDriverGet(&ndrv, drivers)) != ZE_RESULT_SUCCESS) {
        zdrv_note(args, "0 devices: zeDriverGet failed: %s (0x%08x)", zdrv_result_name(r), (unsigned)r);
        return TRD_OK;
    }
    uint32_t seen = 0;
    for (uint32_t i = 0; i < ndrv; i++) {
        uint32_t n = 0;
        if ((r = api->zeDeviceGet(drivers[i], &n, NULL)) != ZE_RESULT_SUCCESS) {
            zdrv_note(args, "driver %u: zeDeviceGet failed: %s (0x%08x)", i, zdrv_result_name(r), (unsigned)r);
            continue;
        }
        if (n == 0)
            continue;
        if (n > 1024)
            n = 1024;
        ze_device_handle_t *devs = calloc(n, sizeof *devs);
        struct zdrv_devinfo *grown = realloc(d->devs, (d->ndevices + n) * sizeof *grown);
        if (!devs || !grown) {
            free(devs);
            if (grown)
                d->devs = grown;
            return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory enumerating Level Zero devices");
        }
        d->devs = grown;
        if ((r = api->zeDeviceGet(drivers[i], &n, devs)) != ZE_RESULT_SUCCESS) {
            zdrv_note(args, "driver %u: zeDeviceGet failed: %s (0x%08x)", i, zdrv_result_name(r), (unsigned)r);
            free(devs);
            continue;
        }
        struct zdrv_drvcaps caps;
        zdrv_driver_caps(api, drivers[i], &caps);
        for (uint32_t k = 0; k < n; k++, seen++)
            if (zdrv_describe(args, api, drivers[i], devs[k], &caps, seen, &d->devs[d->ndevices]))
                d->ndevices++;
        free(devs);
    }
    if (d->ndevices == 0 && seen == 0)
        zdrv_note(args, "0 devices: the Level Zero drivers report no GPU");
    else if (d->ndevices == 0)
        zdrv_note_prefix(args, "0 devices: ");
    return TRD_OK;
}

trd_status_t zdrv_init(const trd_driver_init_args_t *args, void **out)
{
    trd_status_t bound = trd_drv_bind(args); /* the core's services, before anything reports */
    if (bound != TRD_OK)
        return bound;
    struct zdrv_driver *d = calloc(1, sizeof *d);
    if (!d)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    const char *lib = trd_drv_config(args, "library");
    trd_status_t st = zdrv_library_open(d, lib);
    if (st != TRD_OK) {
        free(d);
        return st;
    }
    /* The loader keeps the first zeInit result for the whole process. */
    ze_result_t r = d->api.zeInit(ZE_INIT_FLAG_GPU_ONLY);
    if (r != ZE_RESULT_SUCCESS) {
        zdrv_note(args, "0 devices: zeInit(ZE_INIT_FLAG_GPU_ONLY) returned %s (0x%08x)%s", zdrv_result_name(r),
                  (unsigned)r,
                  r == ZE_RESULT_ERROR_UNINITIALIZED ? ": no Level Zero GPU driver is installed or none initialised"
                                                     : "");
        *out = d;
        return TRD_OK;
    }
    if ((st = zdrv_enumerate(args, d)) != TRD_OK) {
        free(d->devs);
        zdrv_library_close(d);
        free(d);
        return st;
    }
    *out = d;
    return TRD_OK;
}

void zdrv_fini(void *driver)
{
    struct zdrv_driver *d = driver;
    if (!d)
        return;
    free(d->devs);
    zdrv_library_close(d);
    free(d);
}

trd_status_t zdrv_device_count(void *driver, uint32_t *count)
{
    *count = ((struct zdrv_driver *)driver)->ndevices;
    return TRD_OK;
}

trd_status_t zdrv_device_props(void *driver, uint32_t ordinal, trd_device_props_t *p)
{
    struct zdrv_driver *d = driver;
    if (ordinal >= d->ndevices)
        return trd_drv_error(TRD_ERR_NOT_FOUND, "levelzero device %u does not exist (%u devices)", ordinal,
                                d->ndevices);
    const struct zdrv_devinfo *i = &d->devs[ordinal];
    p->kind = TRD_DEVICE_GPU;
    p->flags = i->flags;
    p->name = i->name;
    p->vendor = i->vendor;
    /* Triton's Intel backend describes its target by device properties and
     * the core reads their "name" as the arch: the device name is the arch. */
    p->arch = i->name;
    p->pci_bus_id = i->pci[0] ? i->pci : NULL;
    p->warp_size = i->warp_size;
    p->compute_units = i->compute_units;
    p->max_threads_per_block = i->compute.maxTotalGroupSize;
    p->memory_bytes = i->memory;
    p->max_shared_per_block = i->compute.maxSharedLocalMemory;
    p->max_shared_per_block_optin = i->compute.maxSharedLocalMemory;
    memcpy(p->uuid, i->uuid, sizeof p->uuid);
    return TRD_OK;
}

trd_status_t zdrv_device_open(void *driver, uint32_t ordinal, void **out)
{
    struct zdrv_driver *d = driver;
    if (ordinal >= d->ndevices)
        return trd_drv_error(TRD_ERR_NOT_FOUND, "levelzero device %u does not exist", ordinal);
    struct zdrv_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    dev->drv = d;
    dev->api = &d->api;
    dev->info = &d->devs[ordinal];
    dev->ordinal = ordinal;
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_result_t r = d->api.zeContextCreate(dev->info->driver, &cd, &dev->ctx);
    if (r != ZE_RESULT_SUCCESS) {
        free(dev);
        return zdrv_fail(r, "zeContextCreate", "creating a context for levelzero:%u", ordinal);
    }
    pthread_mutex_init(&dev->streams_lock, NULL);
    dev->scratch_mem = (trd_scratch_mem_t){zdrv_mem_alloc, zdrv_scratch_free, dev};
    trd_arena_set_init(&dev->foreign, &dev->scratch_mem);
    trd_status_t st = zdrv_stream_new(dev, NULL, 1, &dev->defstream);
    if (st != TRD_OK) {
        trd_arena_set_fini(&dev->foreign);
        pthread_mutex_destroy(&dev->streams_lock);
        d->api.zeContextDestroy(dev->ctx);
        free(dev);
        return st;
    }
    *out = dev;
    return TRD_OK;
}

void zdrv_device_close(void *device)
{
    struct zdrv_device *dev = device;
    if (!dev)
        return;
    zdrv_stream_free(dev->defstream);
    trd_arena_set_fini(&dev->foreign);
    pthread_mutex_destroy(&dev->streams_lock);
    dev->api->zeContextDestroy(dev->ctx);
    free(dev);
}
