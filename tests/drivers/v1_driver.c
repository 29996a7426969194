/* SPDX-License-Identifier: Apache-2.0 */
/* v1_driver.c: a driver module of the version-1 contract (trident/driver.h),
 * which the core still runs: its entry takes no argument, its table ends at
 * event_elapsed, it reports errors through libtrident's exported
 * trd_driver_error (it links libtrident) and reads its configuration through
 * init args' config_get. One device, "tdv1:0", of host memory. With
 * [driver.tdv1] library set, init reports that vendor library unusable, as a
 * driver whose library is missing does (test_loader's version_negotiation). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <trident/driver.h>

static int driver_token, device_token, stream_token;

static trd_status_t v1_init(const trd_driver_init_args_t *args, void **out)
{
    const char *lib = args->config_get(args->config_ctx, "library");
    if (lib)
        return trd_driver_error(TRD_ERR_UNSUPPORTED, "tdv1: no usable vendor library (library = %s)", lib);
    *out = &driver_token;
    return TRD_OK;
}

static void v1_fini(void *d)
{
    (void)d;
}

static trd_status_t v1_device_count(void *d, uint32_t *n)
{
    (void)d;
    *n = 1;
    return TRD_OK;
}

static const trd_device_props_t props = {
    .kind = TRD_DEVICE_GPU, .name = "version-1 test device", .vendor = "trident tests", .arch = "sm80",
    .warp_size = 32, .compute_units = 1, .max_threads_per_block = 1024, .memory_bytes = (uint64_t)1 << 30,
    .max_shared_per_block = 48 << 10, .max_shared_per_block_optin = 48 << 10,
};

static trd_status_t v1_device_props(void *d, uint32_t ordinal, trd_device_props_t *p)
{
    (void)d;
    if (ordinal != 0)
        return trd_driver_error(TRD_ERR_NOT_FOUND, "tdv1: no device %u", ordinal);
    uint32_t size = p->struct_size; /* the caller's */
    *p = props;
    p->struct_size = size;
    return TRD_OK;
}

static trd_status_t v1_device_open(void *d, uint32_t ordinal, void **out)
{
    (void)d;
    (void)ordinal;
    *out = &device_token;
    return TRD_OK;
}

static void v1_device_close(void *dev)
{
    (void)dev;
}

static trd_status_t v1_module_load(void *dev, const trd_driver_module_desc_t *d, void **out, trd_load_info_t *info)
{
    (void)dev;
    (void)out;
    (void)info;
    return trd_driver_error(TRD_ERR_UNSUPPORTED, "tdv1: loads no kernels (%s)", d->label);
}

static void v1_module_unload(void *m)
{
    (void)m;
}

static trd_status_t v1_launch(void *m, void *s, void *native, const trd_driver_launch_t *l)
{
    (void)m;
    (void)s;
    (void)native;
    (void)l;
    return trd_driver_error(TRD_ERR_UNSUPPORTED, "tdv1: launches nothing");
}

static trd_status_t v1_mem_alloc(void *dev, uint64_t size, void **p)
{
    (void)dev;
    *p = malloc(size ? size : 1);
    return *p ? TRD_OK : trd_driver_error(TRD_ERR_NO_MEMORY, "tdv1: cannot allocate %llu bytes",
                                          (unsigned long long)size);
}

static void v1_mem_free(void *dev, void *p)
{
    (void)dev;
    free(p);
}

static trd_status_t v1_mem_copy(void *dev, void *dst, const void *src, uint64_t size, int32_t kind, void *s)
{
    (void)dev;
    (void)kind;
    (void)s;
    memmove(dst, src, size);
    return TRD_OK;
}

static trd_status_t v1_mem_set(void *dev, void *dst, uint8_t v, uint64_t size, void *s)
{
    (void)dev;
    (void)s;
    memset(dst, v, size);
    return TRD_OK;
}

static trd_status_t v1_stream_create(void *dev, void **s)
{
    (void)dev;
    *s = &stream_token;
    return TRD_OK;
}

static void v1_stream_destroy(void *s)
{
    (void)s;
}

/* Streams and events: work is synchronous, so there is nothing to wait for or time. */
static trd_status_t v1_sync(void *s)
{
    (void)s;
    return TRD_OK;
}

static void *v1_stream_native(void *s)
{
    return s;
}

static trd_status_t v1_event_create(void *dev, void **e)
{
    (void)dev;
    *e = &stream_token;
    return TRD_OK;
}

static trd_status_t v1_event_record(void *e, void *s)
{
    (void)e;
    (void)s;
    return TRD_OK;
}

static trd_status_t v1_event_elapsed(void *a, void *b, double *ms)
{
    (void)a;
    (void)b;
    *ms = 0;
    return TRD_OK;
}

static const trd_driver_ops_t ops = {
    .abi_version = 1,
    .struct_size = offsetof(trd_driver_ops_t, event_elapsed) + sizeof ops.event_elapsed, /* version 1's table */
    .name = "tdv1",
    .backend = "cuda",
    .init = v1_init,
    .fini = v1_fini,
    .device_count = v1_device_count,
    .device_props = v1_device_props,
    .device_open = v1_device_open,
    .device_close = v1_device_close,
    .module_load = v1_module_load,
    .module_unload = v1_module_unload,
    .launch = v1_launch,
    .mem_alloc = v1_mem_alloc,
    .mem_free = v1_mem_free,
    .mem_copy = v1_mem_copy,
    .mem_set = v1_mem_set,
    .stream_create = v1_stream_create,
    .stream_destroy = v1_stream_destroy,
    .stream_sync = v1_sync,
    .stream_native = v1_stream_native,
    .event_create = v1_event_create,
    .event_destroy = v1_stream_destroy,
    .event_record = v1_event_record,
    .event_sync = v1_sync,
    .event_elapsed = v1_event_elapsed,
};

/* Version 1's entry: no argument. */
TRD_DRIVER_EXPORT const trd_driver_ops_t *trd_driver_entry(void);
TRD_DRIVER_EXPORT const trd_driver_ops_t *trd_driver_entry(void)
{
    return &ops;
}
