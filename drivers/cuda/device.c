/* device.c: initialisation, devices and their properties, the primary
 * context (retained once per device), streams, events and memory. */
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

static trd_status_t cuda_init(const trd_driver_init_args_t *args, void **out)
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

static void cuda_fini(void *driver)
{
    struct cuda_driver *drv = driver;
    free(drv->info);
    cuda_api_unload(&drv->lib, &drv->api);
    free(drv);
}

static trd_status_t cuda_device_count(void *driver, uint32_t *count)
{
    *count = (uint32_t)((struct cuda_driver *)driver)->count;
    return TRD_OK;
}

static trd_status_t cuda_device_props(void *driver, uint32_t ordinal, trd_device_props_t *props)
{
    struct cuda_driver *drv = driver;
    if ((int)ordinal >= drv->count)
        return trd_drv_error(TRD_ERR_NOT_FOUND, "cuda device %u does not exist", ordinal);
    uint32_t size = props->struct_size;
    *props = drv->info[ordinal].props;
    props->struct_size = size;
    return TRD_OK;
}

static trd_status_t cuda_device_open(void *driver, uint32_t ordinal, void **out)
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
    for (int i = 0; i < CUDA_FOREIGN_STREAMS; i++) {
        atomic_init(&d->foreign[i].stream, NULL);
        cuda_arena_init(&d->foreign[i].arena);
    }
    *out = d;
    return TRD_OK;
}

static void cuda_device_close(void *device)
{
    struct cuda_device *d = device;
    struct cuda_ctx_scope sc;
    int entered = cuda_ctx_enter(d, &sc) == TRD_OK;
    if (entered)
        cuda_ctx_drain(d, "before freeing the scratch of foreign streams");
    for (int i = 0; i < CUDA_FOREIGN_STREAMS; i++)
        cuda_arena_free(d->api, &d->foreign[i].arena);
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

/* -------------------------------------------------------------- memory */

static trd_status_t cuda_mem_alloc(void *device, uint64_t size, void **ptr)
{
    struct cuda_device *d = device;
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(d, &sc);
    if (st != TRD_OK)
        return st;
    CUdeviceptr p;
    CUresult r = d->api->cuMemAlloc(&p, (size_t)size);
    cuda_ctx_leave(d, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(d->api, r, "cuMemAlloc of %llu bytes on cuda:%d", (unsigned long long)size, d->ordinal);
    *ptr = (void *)(uintptr_t)p;
    return TRD_OK;
}

/* Queued work may still use the memory: trd_buffer_free waits for it. */
static void cuda_mem_free(void *device, void *ptr)
{
    struct cuda_device *d = device;
    struct cuda_ctx_scope sc;
    if (cuda_ctx_enter(d, &sc) != TRD_OK)
        return;
    cuda_ctx_drain(d, "before freeing a buffer");
    d->api->cuMemFree((CUdeviceptr)(uintptr_t)ptr);
    cuda_ctx_leave(d, &sc);
}

static CUstream stream_of(void *stream)
{
    return stream ? ((struct cuda_stream *)stream)->s : NULL;
}

static trd_status_t cuda_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream)
{
    struct cuda_device *d = device;
    const struct cuda_api *api = d->api;
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(d, &sc);
    if (st != TRD_OK)
        return st;
    CUstream s = stream_of(stream);
    CUdeviceptr dd = (CUdeviceptr)(uintptr_t)dst, ds = (CUdeviceptr)(uintptr_t)src;
    CUresult r;
    const char *what;
    switch (kind) {
    case TRD_COPY_HOST_TO_DEVICE:
        what = "copy host to device";
        r = stream ? api->cuMemcpyHtoDAsync(dd, src, (size_t)size, s) : api->cuMemcpyHtoD(dd, src, (size_t)size);
        break;
    case TRD_COPY_DEVICE_TO_HOST:
        what = "copy device to host";
        r = stream ? api->cuMemcpyDtoHAsync(dst, ds, (size_t)size, s) : api->cuMemcpyDtoH(dst, ds, (size_t)size);
        break;
    default:
        what = "copy device to device";
        r = stream ? api->cuMemcpyDtoDAsync(dd, ds, (size_t)size, s) : api->cuMemcpyDtoD(dd, ds, (size_t)size);
        break;
    }
    cuda_ctx_leave(d, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(api, r, "%s of %llu bytes on cuda:%d", what, (unsigned long long)size, d->ordinal);
    return TRD_OK;
}

static trd_status_t cuda_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream)
{
    struct cuda_device *d = device;
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(d, &sc);
    if (st != TRD_OK)
        return st;
    CUdeviceptr p = (CUdeviceptr)(uintptr_t)dst;
    CUresult r = stream ? d->api->cuMemsetD8Async(p, value, (size_t)size, stream_of(stream))
                        : d->api->cuMemsetD8(p, value, (size_t)size);
    cuda_ctx_leave(d, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(d->api, r, "memset of %llu bytes on cuda:%d", (unsigned long long)size, d->ordinal);
    return TRD_OK;
}

/* ------------------------------------------------------------- streams */

static trd_status_t stream_new(struct cuda_device *d, CUstream native, void **out)
{
    struct cuda_stream *s = calloc(1, sizeof *s);
    if (!s)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    s->dev = d;
    cuda_arena_init(&s->arena);
    if (native) {
        s->s = native;
        s->wrapped = 1;
    } else {
        struct cuda_ctx_scope sc;
        trd_status_t st = cuda_ctx_enter(d, &sc);
        if (st != TRD_OK) {
            free(s);
            return st;
        }
        CUresult r = d->api->cuStreamCreate(&s->s, CU_STREAM_NON_BLOCKING);
        cuda_ctx_leave(d, &sc);
        if (r != CUDA_SUCCESS) {
            free(s);
            return cuda_error(d->api, r, "cuStreamCreate on cuda:%d", d->ordinal);
        }
    }
    *out = s;
    return TRD_OK;
}

static trd_status_t cuda_stream_create(void *device, void **out)
{
    return stream_new(device, NULL, out);
}

static trd_status_t cuda_stream_wrap(void *device, void *native, void **out)
{
    if (!native)
        return trd_drv_error(TRD_ERR_INVALID_ARGUMENT, "cannot wrap the NULL (legacy default) CUstream: "
                                                          "pass a stream, or launch with native_stream NULL");
    return stream_new(device, native, out);
}

static void cuda_stream_destroy(void *stream)
{
    struct cuda_stream *s = stream;
    if (!s)
        return;
    struct cuda_device *d = s->dev;
    struct cuda_ctx_scope sc;
    if (cuda_ctx_enter(d, &sc) == TRD_OK) {
        /* queued kernels may still use the scratch blocks */
        d->api->cuStreamSynchronize(s->s);
        cuda_arena_free(d->api, &s->arena);
        if (!s->wrapped)
            d->api->cuStreamDestroy(s->s);
        cuda_ctx_leave(d, &sc);
    }
    free(s);
}

static trd_status_t cuda_stream_sync(void *stream)
{
    struct cuda_stream *s = stream;
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(s->dev, &sc);
    if (st != TRD_OK)
        return st;
    CUresult r = s->dev->api->cuStreamSynchronize(s->s);
    cuda_ctx_leave(s->dev, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(s->dev->api, r, "cuStreamSynchronize on cuda:%d", s->dev->ordinal);
    return TRD_OK;
}

static void *cuda_stream_native(void *stream)
{
    return ((struct cuda_stream *)stream)->s;
}

static trd_status_t cuda_stream_capturing(void *stream, int32_t *capturing)
{
    struct cuda_stream *s = stream;
    const struct cuda_api *api = s->dev->api;
    if (!api->cuStreamIsCapturing)
        return trd_drv_error(TRD_ERR_UNSUPPORTED, "this libcuda has no cuStreamIsCapturing");
    CUstreamCaptureStatus status;
    CUresult r = api->cuStreamIsCapturing(s->s, &status);
    if (r != CUDA_SUCCESS)
        return cuda_error(api, r, "cuStreamIsCapturing on cuda:%d", s->dev->ordinal);
    /* an invalidated capture is still a capture: waiting on the stream would fail the same way */
    *capturing = status != CU_STREAM_CAPTURE_STATUS_NONE;
    return TRD_OK;
}

/* -------------------------------------------------------------- events */

struct cuda_event {
    struct cuda_device *dev;
    CUevent e;
};

static trd_status_t cuda_event_create(void *device, void **out)
{
    struct cuda_device *d = device;
    struct cuda_event *e = calloc(1, sizeof *e);
    if (!e)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(d, &sc);
    if (st != TRD_OK) {
        free(e);
        return st;
    }
    CUresult r = d->api->cuEventCreate(&e->e, CU_EVENT_DEFAULT);
    cuda_ctx_leave(d, &sc);
    if (r != CUDA_SUCCESS) {
        free(e);
        return cuda_error(d->api, r, "cuEventCreate on cuda:%d", d->ordinal);
    }
    e->dev = d;
    *out = e;
    return TRD_OK;
}

static void cuda_event_destroy(void *event)
{
    struct cuda_event *e = event;
    if (!e)
        return;
    struct cuda_ctx_scope sc;
    if (cuda_ctx_enter(e->dev, &sc) == TRD_OK) {
        e->dev->api->cuEventDestroy(e->e);
        cuda_ctx_leave(e->dev, &sc);
    }
    free(e);
}

static trd_status_t cuda_event_record(void *event, void *stream)
{
    struct cuda_event *e = event;
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(e->dev, &sc);
    if (st != TRD_OK)
        return st;
    CUresult r = e->dev->api->cuEventRecord(e->e, stream_of(stream));
    cuda_ctx_leave(e->dev, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(e->dev->api, r, "cuEventRecord on cuda:%d", e->dev->ordinal);
    return TRD_OK;
}

static trd_status_t cuda_event_sync(void *event)
{
    struct cuda_event *e = event;
    CUresult r = e->dev->api->cuEventSynchronize(e->e);
    if (r != CUDA_SUCCESS)
        return cuda_error(e->dev->api, r, "cuEventSynchronize on cuda:%d", e->dev->ordinal);
    return TRD_OK;
}

static trd_status_t cuda_event_elapsed(void *start, void *end, double *ms)
{
    struct cuda_event *a = start, *b = end;
    float v = 0;
    CUresult r = a->dev->api->cuEventElapsedTime(&v, a->e, b->e);
    if (r != CUDA_SUCCESS)
        return cuda_error(a->dev->api, r, "cuEventElapsedTime on cuda:%d", a->dev->ordinal);
    *ms = v;
    return TRD_OK;
}

static const trd_driver_ops_t ops = {
    .abi_version = TRD_DRV_ABI_VERSION,
    .struct_size = sizeof(trd_driver_ops_t),
    .name = "cuda",
    .backend = "cuda",
    .priority = 100,
    .init = cuda_init,
    .fini = cuda_fini,
    .device_count = cuda_device_count,
    .device_props = cuda_device_props,
    .device_open = cuda_device_open,
    .device_close = cuda_device_close,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .launch = cuda_launch,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .mem_copy = cuda_mem_copy,
    .mem_set = cuda_mem_set,
    .stream_create = cuda_stream_create,
    .stream_wrap = cuda_stream_wrap,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .stream_native = cuda_stream_native,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_sync = cuda_event_sync,
    .event_elapsed = cuda_event_elapsed,
    .tensor_map_encode = cuda_tensor_map_encode,
    .stream_capturing = cuda_stream_capturing,
};

TRD_DRV_DEFINE_ENTRY(ops)
