/* SPDX-License-Identifier: Apache-2.0 */
/* device.c: the HIP runtime's devices: init, their properties, and the
 * thread's current device around calls that bind to it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/hip/hip.h"

/* Records why a device cannot be used (kept for device_props). */
static void hip_info_fail(struct hip_device_info *info, const struct hip_api *api, hipError_t e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void hip_info_fail(struct hip_device_info *info, const struct hip_api *api, hipError_t e, const char *fmt, ...)
{
    char what[240], why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (e != HIP_SUCCESS) {
        hip_describe(api, e, why, sizeof why);
        snprintf(info->error, sizeof info->error, "%s: %s", what, why);
        info->status = hip_status(e);
    } else {
        snprintf(info->error, sizeof info->error, "%s", what);
        info->status = TRD_ERR_DEVICE;
    }
}

static int hip_get_attr(const struct hip_api *api, struct hip_device_info *info, int ordinal, int attr,
                        const char *attr_name, int *value)
{
    hipError_t e = api->hipDeviceGetAttribute(value, attr, ordinal);
    if (e != HIP_SUCCESS) {
        hip_info_fail(info, api, e, "HIP device %d: hipDeviceGetAttribute(%s) failed", ordinal, attr_name);
        return 0;
    }
    return 1;
}

/* gcnArchName ("gfx942:sramecc+:xnack-") from the props struct, whose layout
 * depends on the entry point (hip_abi.h). The warp size stored beside it is
 * compared with the attribute's before the name is trusted. */
static int hip_read_arch(const struct hip_api *api, struct hip_device_info *info, int ordinal, int warp_size)
{
    /* larger than either layout, in case a runtime writes more than we know */
    union {
        unsigned char bytes[4096];
        max_align_t align;
    } props;
    size_t warp_at, name_at;
    const char *fn;
    hipError_t e;
    memset(&props, 0, sizeof props);
    if (api->hipGetDevicePropertiesR0600) {
        fn = "hipGetDevicePropertiesR0600";
        e = api->hipGetDevicePropertiesR0600(&props, ordinal);
        warp_at = HIP_PROPS_R0600_WARP_SIZE;
        name_at = HIP_PROPS_R0600_GCN_ARCH_NAME;
    } else if (api->hipGetDeviceProperties) {
        fn = "hipGetDeviceProperties";
        e = api->hipGetDeviceProperties(&props, ordinal);
        warp_at = HIP_PROPS_R0000_WARP_SIZE;
        name_at = HIP_PROPS_R0000_GCN_ARCH_NAME;
    } else {
        hip_info_fail(info, api, HIP_SUCCESS,
                      "HIP device %d: the runtime exports neither hipGetDevicePropertiesR0600 nor "
                      "hipGetDeviceProperties, the only way to its architecture name",
                      ordinal);
        return 0;
    }
    if (e != HIP_SUCCESS) {
        hip_info_fail(info, api, e, "HIP device %d: %s failed", ordinal, fn);
        return 0;
    }
    int stored;
    memcpy(&stored, props.bytes + warp_at, sizeof stored);
    const char *name = (const char *)props.bytes + name_at;
    size_t len = strnlen(name, HIP_PROPS_GCN_ARCH_NAME_LEN);
    if (stored != warp_size || len == HIP_PROPS_GCN_ARCH_NAME_LEN || strncmp(name, "gfx", 3) != 0) {
        hip_info_fail(info, api, HIP_SUCCESS,
                      "HIP device %d: %s returned a layout this driver does not know (warpSize %d where "
                      "hipDeviceGetAttribute says %d; gcnArchName '%.32s')",
                      ordinal, fn, stored, warp_size, len < HIP_PROPS_GCN_ARCH_NAME_LEN ? name : "?");
        return 0;
    }
    size_t n = strcspn(name, ":");
    if (n >= sizeof info->arch)
        n = sizeof info->arch - 1;
    memcpy(info->arch, name, n);
    info->arch[n] = '\0';
    info->cluster = -1;
    if (api->hipGetDevicePropertiesR0600)
        memcpy(&info->cluster, props.bytes + HIP_PROPS_R0600_CLUSTER_LAUNCH, sizeof info->cluster);
    return 1;
}

/* "0000:c1:00.0": the runtime's text when it parses, else the attributes. */
static void hip_read_pci(const struct hip_api *api, struct hip_device_info *info, int ordinal)
{
    char text[64] = "";
    unsigned dom, bus, dev, fn;
    char end;
    if (api->hipDeviceGetPCIBusId(text, (int)sizeof text, ordinal) == HIP_SUCCESS &&
        (text[sizeof text - 1] = '\0', sscanf(text, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &end) == 4) &&
        dom <= 0xffff && bus <= 0xff && dev <= 0x1f && fn <= 7) {
        snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
        return;
    }
    int d = 0, b = 0, s = 0;
    if (api->hipDeviceGetAttribute(&d, HIP_ATTR_PCI_DOMAIN_ID, ordinal) == HIP_SUCCESS &&
        api->hipDeviceGetAttribute(&b, HIP_ATTR_PCI_BUS_ID, ordinal) == HIP_SUCCESS &&
        api->hipDeviceGetAttribute(&s, HIP_ATTR_PCI_DEVICE_ID, ordinal) == HIP_SUCCESS && d >= 0 && d <= 0xffff &&
        b >= 0 && b <= 0xff && s >= 0 && s <= 0x1f) {
        snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "%04x:%02x:%02x.0", (unsigned)d, (unsigned)b,
                 (unsigned)s);
        return;
    }
    info->pci_bus_id[0] = '\0'; /* unknown */
}

static void hip_read_device(const struct hip_api *api, int ordinal, struct hip_device_info *info)
{
    trd_device_props_t *p = &info->props;
    hipError_t e = api->hipDeviceGet(&info->handle, ordinal);
    if (e != HIP_SUCCESS) {
        hip_info_fail(info, api, e, "HIP device %d: hipDeviceGet failed", ordinal);
        return;
    }
    if ((e = api->hipDeviceGetName(info->name, (int)sizeof info->name, info->handle)) != HIP_SUCCESS) {
        hip_info_fail(info, api, e, "HIP device %d: hipDeviceGetName failed", ordinal);
        return;
    }
    info->name[sizeof info->name - 1] = '\0';
    int warp, units, threads, shared, optin = 0;
    if (!hip_get_attr(api, info, ordinal, HIP_ATTR_WARP_SIZE, "hipDeviceAttributeWarpSize", &warp) ||
        !hip_get_attr(api, info, ordinal, HIP_ATTR_MULTIPROCESSOR_COUNT, "hipDeviceAttributeMultiprocessorCount",
                      &units) ||
        !hip_get_attr(api, info, ordinal, HIP_ATTR_MAX_THREADS_PER_BLOCK, "hipDeviceAttributeMaxThreadsPerBlock",
                      &threads) ||
        !hip_get_attr(api, info, ordinal, HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK,
                      "hipDeviceAttributeMaxSharedMemoryPerBlock", &shared) ||
        !hip_get_attr(api, info, ordinal, HIP_ATTR_COOPERATIVE_LAUNCH, "hipDeviceAttributeCooperativeLaunch",
                      &info->cooperative))
        return;
    if (warp <= 0 || warp > 1024 || units <= 0 || threads <= 0 || shared < 0) {
        hip_info_fail(info, api, HIP_SUCCESS,
                      "HIP device %d reports warp size %d, %d compute units, %d threads and %d bytes of shared "
                      "memory per block: not a device to launch on",
                      ordinal, warp, units, threads, shared);
        return;
    }
    /* Opt-in shared memory: 0 or an error where the runtime has no such notion. */
    if (api->hipDeviceGetAttribute(&optin, HIP_ATTR_SHARED_MEM_PER_BLOCK_OPTIN, ordinal) != HIP_SUCCESS ||
        optin < shared)
        optin = shared;
    size_t bytes = 0;
    if ((e = api->hipDeviceTotalMem(&bytes, info->handle)) != HIP_SUCCESS) {
        hip_info_fail(info, api, e, "HIP device %d: hipDeviceTotalMem failed", ordinal);
        return;
    }
    if (!hip_read_arch(api, info, ordinal, warp))
        return;
    hip_read_pci(api, info, ordinal);
    p->kind = TRD_DEVICE_GPU;
    p->warp_size = (uint32_t)warp;
    p->compute_units = (uint32_t)units;
    p->max_threads_per_block = (uint32_t)threads;
    p->memory_bytes = bytes;
    p->max_shared_per_block = (uint32_t)shared;
    p->max_shared_per_block_optin = (uint32_t)optin;
    p->flags = 0;
    hipUUID uuid;
    memset(&uuid, 0, sizeof uuid);
    if (api->hipDeviceGetUuid && api->hipDeviceGetUuid(&uuid, info->handle) == HIP_SUCCESS) {
        int nonzero = 0;
        for (size_t i = 0; i < sizeof uuid.bytes; i++)
            nonzero |= uuid.bytes[i] != 0;
        if (nonzero) {
            memcpy(p->uuid, uuid.bytes, sizeof p->uuid);
            p->flags |= TRD_DEVICE_HAS_UUID;
        }
    }
    if (info->cooperative && api->hipModuleLaunchCooperativeKernel)
        p->flags |= TRD_DEVICE_COOPERATIVE_LAUNCH;
    if (info->cluster > 0 && api->hipDrvLaunchKernelEx)
        p->flags |= TRD_DEVICE_CLUSTER_LAUNCH;
    info->status = TRD_OK;
}

trd_status_t hip_init(const trd_driver_init_args_t *args, void **out)
{
    trd_status_t bound = trd_drv_bind(args); /* the core's services, before anything reports */
    if (bound != TRD_OK)
        return bound;
    struct hip_driver *d = calloc(1, sizeof *d);
    if (!d)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    const char *library = trd_drv_config(args, "library");
    trd_status_t st = hip_library_open(d, library);
    if (st != TRD_OK) {
        free(d);
        return st;
    }
    const struct hip_api *api = &d->api;
    /* Without a GPU, ROCm's hipInit fails (hipErrorInvalidDevice) and
     * hipGetDeviceCount says why (hipErrorNoDevice): the driver then serves no
     * device and the note says so. */
    hipError_t ie = api->hipInit(0);
    int n = 0;
    hipError_t ce = api->hipGetDeviceCount(&n);
    if (ce != HIP_SUCCESS || n <= 0) {
        char why[256];
        hipError_t e = ce != HIP_SUCCESS ? ce : ie;
        if (e != HIP_SUCCESS) /* the name only: the note is one short line */
            snprintf(why, sizeof why, "%s (%d)", hip_error_name(api, e), (int)e);
        else
            snprintf(why, sizeof why, "hipGetDeviceCount found none");
        if (args->note && args->note_cap)
            snprintf(args->note, args->note_cap, "0 devices: %s", why);
        trd_drv_log(TRD_LOG_INFO, "hip: %s serves no device: %s", d->lib.path, why);
        *out = d;
        return TRD_OK;
    }
    if (ie != HIP_SUCCESS) {
        char why[256];
        hip_describe(api, ie, why, sizeof why);
        trd_drv_log(TRD_LOG_WARN, "hip: hipInit failed (%s) yet %d devices are listed", why, n);
    }
    d->devices = calloc((size_t)n, sizeof *d->devices);
    if (!d->devices) {
        hip_library_close(d);
        free(d);
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    }
    d->ndevices = (uint32_t)n;
    for (int i = 0; i < n; i++)
        hip_read_device(api, i, &d->devices[i]);
    *out = d;
    return TRD_OK;
}

void hip_fini(void *driver)
{
    struct hip_driver *d = driver;
    free(d->devices);
    hip_library_close(d);
    free(d);
}

trd_status_t hip_device_count(void *driver, uint32_t *count)
{
    *count = ((struct hip_driver *)driver)->ndevices;
    return TRD_OK;
}

trd_status_t hip_device_props(void *driver, uint32_t ordinal, trd_device_props_t *props)
{
    struct hip_driver *d = driver;
    if (ordinal >= d->ndevices)
        return trd_drv_error(TRD_ERR_NOT_FOUND, "HIP device %u does not exist (%u devices)", ordinal,
                                d->ndevices);
    struct hip_device_info *info = &d->devices[ordinal];
    if (info->status != TRD_OK)
        return trd_drv_error(info->status, "%s", info->error);
    const trd_device_props_t *p = &info->props;
    props->kind = p->kind;
    props->flags = p->flags;
    props->name = info->name;
    props->vendor = "AMD";
    props->arch = info->arch;
    props->pci_bus_id = info->pci_bus_id[0] ? info->pci_bus_id : NULL;
    props->warp_size = p->warp_size;
    props->compute_units = p->compute_units;
    props->max_threads_per_block = p->max_threads_per_block;
    props->memory_bytes = p->memory_bytes;
    props->max_shared_per_block = p->max_shared_per_block;
    props->max_shared_per_block_optin = p->max_shared_per_block_optin;
    memcpy(props->uuid, p->uuid, sizeof props->uuid);
    return TRD_OK;
}

trd_status_t hip_device_open(void *driver, uint32_t ordinal, void **out)
{
    struct hip_driver *d = driver;
    if (ordinal >= d->ndevices || d->devices[ordinal].status != TRD_OK)
        return trd_drv_error(TRD_ERR_NOT_FOUND, "HIP device %u is not usable", ordinal);
    struct hip_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    dev->drv = d;
    dev->info = &d->devices[ordinal];
    dev->ordinal = (int)ordinal;
    snprintf(dev->uri, sizeof dev->uri, "hip:%u", ordinal);
    dev->scratch_mem = (trd_scratch_mem_t){hip_mem_alloc, hip_mem_free, dev};
    trd_arena_set_init(&dev->native, &dev->scratch_mem);
    *out = dev;
    return TRD_OK;
}

void hip_device_close(void *device)
{
    struct hip_device *dev = device;
    const struct hip_api *api = &dev->drv->api;
    /* Kernels queued on the caller's streams may still read arena blocks. */
    int prev;
    if (hip_device_enter(dev, &prev) == TRD_OK) {
        hipError_t e = api->hipDeviceSynchronize();
        if (e != HIP_SUCCESS) {
            char why[256];
            hip_describe(api, e, why, sizeof why);
            trd_drv_log(TRD_LOG_WARN, "hip: closing %s: hipDeviceSynchronize failed: %s", dev->uri, why);
        }
        hip_device_leave(dev, prev);
    }
    trd_arena_set_fini(&dev->native);
    free(dev);
}

trd_status_t hip_device_enter(const struct hip_device *dev, int *prev)
{
    const struct hip_api *api = &dev->drv->api;
    int cur = -1;
    if (api->hipGetDevice(&cur) == HIP_SUCCESS && cur == dev->ordinal) {
        *prev = -1;
        return TRD_OK;
    }
    hipError_t e = api->hipSetDevice(dev->ordinal);
    if (e != HIP_SUCCESS)
        return hip_fail(api, e, "hipSetDevice(%d) for %s failed", dev->ordinal, dev->uri);
    *prev = cur;
    return TRD_OK;
}

void hip_device_leave(const struct hip_device *dev, int prev)
{
    if (prev < 0)
        return;
    const struct hip_api *api = &dev->drv->api;
    hipError_t e = api->hipSetDevice(prev);
    if (e != HIP_SUCCESS) {
        char why[256];
        hip_describe(api, e, why, sizeof why);
        trd_drv_log(TRD_LOG_WARN, "hip: restoring the current device %d after using %s failed: %s", prev, dev->uri,
                       why);
    }
}
