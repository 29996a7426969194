/* SPDX-License-Identifier: Apache-2.0 */
/* device.c: initialisation, devices and their properties, the primary
 * context (retained once per device). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/cuda/cuda_driver.h"

static int attr(const struct cuda_api *api, CUdevice d, CUdevice_attribute a)
{
    int v = 0;
    if (api->cuDeviceGetAttribute(&v, a, d) != CUDA_SUCCESS)
        return 0;
    return v;
}

trd_status_t cuda_init(const trd_driver_init_args_t *args, void **out)
{
    trd_status_t bound = trd_drv_bind(args); /* the core's services, before anything reports */
    if (bound != TRD_OK)
        return bound;
    struct cuda_driver *drv = calloc(1, sizeof *drv);
    if (!drv)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    const char *lib = trd_drv_config(args, "library");
    trd_status_t st = cuda_api_load(&drv->lib, &drv->api, lib);
    if (st != TRD_OK) {
        free(drv);
        return st;
    }
    const struct cuda_api *api = &drv->api;
    CUresult r = api->cuInit(0);
    if (r == CUDA_SUCCESS)
        r = api->cuDeviceGetCount(&drv->count);
    if (r != CUDA_SUCCESS) {
        /* The library is here but no device is usable: serve none, say why. */
        const char *name = NULL;
        if (api->cuGetErrorName)
            api->cuGetErrorName(r, &name);
        snprintf(args->note, args->note_cap, "0 devices: cuInit: %s (%d)", name ? name : "error", (int)r);
        drv->count = 0;
    }
    api->cuDriverGetVersion(&drv->driver_version);
    if (drv->count > 0) {
        drv->info = calloc((size_t)drv->count, sizeof *drv->info);
        if (!drv->info) {
            cuda_api_unload(&drv->lib, &drv->api);
            free(drv);
            return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
        }
    }
    for (int i = 0; i < drv->count; i++) {
        struct cuda_devinfo *di = &drv->info[i];
        CUdevice d;
        if ((r = api->cuDeviceGet(&d, i)) != CUDA_SUCCESS) {
            st = cuda_error(api, r, "cuDeviceGet(%d)", i);
            free(drv->info);
            cuda_api_unload(&drv->lib, &drv->api);
            free(drv);
            return st;
        }
        api->cuDeviceGetName(di->name, sizeof di->name, d);
        int major = attr(api, d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        int minor = attr(api, d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        snprintf(di->arch, sizeof di->arch, "sm%d%d", major, minor);
        char pci[64] = "";
        if (api->cuDeviceGetPCIBusId && api->cuDeviceGetPCIBusId(pci, sizeof pci, d) == CUDA_SUCCESS) {
            /* CUDA writes an 8-digit domain ("00000000:41:00.0"); trident uses 4, lower case */
            unsigned dom = 0, bus = 0, dev = 0, fn = 0;
            if (sscanf(pci, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4)
                snprintf(di->pci, sizeof di->pci, "%04x:%02x:%02x.%x", dom & 0xffff, bus, dev, fn);
        }
        trd_device_props_t *p = &di->props;
        p->kind = TRD_DEVICE_GPU;
        p->name = di->name;
        p->vendor = "NVIDIA";
        p->arch = di->arch;
        p->pci_bus_id = di->pci[0] ? di->pci : NULL;
        p->warp_size = (uint32_t)attr(api, d, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
        p->compute_units = (uint32_t)attr(api, d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        p->max_threads_per_block = (uint32_t)attr(api, d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
        p->max_shared_per_block = (uint32_t)attr(api, d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
        p->max_shared_per_block_optin = (uint32_t)attr(api, d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
        size_t mem = 0;
        api->cuDeviceTotalMem(&mem, d);
        p->memory_bytes = mem;
        if (attr(api, d, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH))
            p->flags |= TRD_DEVICE_COOPERATIVE_LAUNCH;
        if (attr(api, d, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH))
            p->flags |= TRD_DEVICE_CLUSTER_LAUNCH;
        CUuuid uuid;
        if (api->cuDeviceGetUuid && api->cuDeviceGetUuid(&uuid, d) == CUDA_SUCCESS) {
            memcpy(p->uuid, uuid.bytes, 16);
            p->flags |= TRD_DEVICE_HAS_UUID;
        }
    }
    atomic_init(&drv->cache_warned, 0);
    *out = drv;
    return TRD_OK;
}

void cuda_fini(void *driver)
{
    struct cuda_driver *drv = driver;
    free(drv->info);
    cuda_api_unload(&drv->lib, &drv->api);
    free(drv);
}

trd_status_t cuda_device_count(void *driver, uint32_t *count)
{
    *count = (uint32_t)((struct cuda_driver *)driver)->count;
    return TRD_OK;
}

trd_status_t cuda_device_props(void *driver, uint32_t ordinal, trd_device_props_t *props)
{
    struct cuda_driver *drv = driver;
    if ((int)ordinal >= drv->count)
        return trd_drv_error(TRD_ERR_NOT_FOUND, "cuda device %u does not exist", ordinal);
    uint32_t size = props->struct_size;
    *props = drv->info[ordinal].props;
    props->struct_size = size;
    return TRD_OK;
}

trd_status_t cuda_device_open(void *driver, uint32_t ordinal, void **out)
{
    struct cuda_driver *drv = driver;
    const struct cuda_api *api = &drv->api;
    struct cuda_device *d = calloc(1, sizeof *d);
    if (!d)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    d->drv = drv;
    d->api = api;
    d->ordinal = (int)ordinal;
    CUresult r = api->cuDeviceGet(&d->dev, (int)ordinal);
    if (r == CUDA_SUCCESS)
        r = api->cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
    if (r != CUDA_SUCCESS) {
        trd_status_t st = cuda_error(api, r, "retaining the primary context of cuda:%u", ordinal);
        free(d);
        return st;
    }
    d->cc = attr(api, d->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
            attr(api, d->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d->sm_count = attr(api, d->dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d->shared_optin = attr(api, d->dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    d->cooperative = attr(api, d->dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
    d->cluster = attr(api, d->dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
    d->scratch_mem = (trd_scratch_mem_t){cuda_mem_alloc, cuda_scratch_free, d};
    trd_arena_set_init(&d->foreign, &d->scratch_mem);
    *out = d;
    return TRD_OK;
}

void cuda_device_close(void *device)
{
    struct cuda_device *d = device;
    struct cuda_ctx_scope sc;
    int entered = cuda_ctx_enter(d, &sc) == TRD_OK;
    if (entered)
        cuda_ctx_drain(d, "before freeing the scratch of foreign streams");
    trd_arena_set_fini(&d->foreign);
    if (entered)
        cuda_ctx_leave(d, &sc);
    d->api->cuDevicePrimaryCtxRelease(d->dev);
    free(d);
}

trd_status_t cuda_ctx_enter(struct cuda_device *d, struct cuda_ctx_scope *scope)
{
    CUcontext cur = NULL;
    scope->pushed = 0;
    d->api->cuCtxGetCurrent(&cur);
    if (cur == d->ctx)
        return TRD_OK;
    CUresult r = d->api->cuCtxPushCurrent(d->ctx);
    if (r != CUDA_SUCCESS)
        return cuda_error(d->api, r, "making the context of cuda:%d current", d->ordinal);
    scope->pushed = 1;
    return TRD_OK;
}

void cuda_ctx_leave(struct cuda_device *d, struct cuda_ctx_scope *scope)
{
    if (scope->pushed) {
        CUcontext popped;
        d->api->cuCtxPopCurrent(&popped);
    }
}

void cuda_ctx_drain(struct cuda_device *d, const char *why)
{
    CUresult r = d->api->cuCtxSynchronize();
    if (r != CUDA_SUCCESS) {
        /* logged, not set: the caller's message (of the failure being cleaned up after) stays */
        const char *name = NULL;
        if (d->api->cuGetErrorName)
            d->api->cuGetErrorName(r, &name);
        trd_drv_log(TRD_LOG_WARN, "cuda: cuCtxSynchronize on cuda:%d %s: %s (%d)", d->ordinal, why,
                       name ? name : "CUDA_ERROR", (int)r);
    }
}
