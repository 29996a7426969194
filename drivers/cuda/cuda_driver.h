/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_driver.h: the CUDA driver's parts. */
#ifndef TRD_DRIVER_CUDA_H
#define TRD_DRIVER_CUDA_H

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <trident/driver.h>

#include "drivers/common/scratch.h"
#include "drivers/common/services.h"
#include "drivers/common/vendor_lib.h"
#include "drivers/cuda/symbols.h"

/* Function pointers with the exact prototypes of the cuda.h we build with. */
struct cuda_api {
#define CUDA_FIELD(name) __typeof__(name) *name;
    CUDA_REQUIRED_SYMBOLS(CUDA_FIELD)
    CUDA_OPTIONAL_SYMBOLS(CUDA_FIELD)
#undef CUDA_FIELD
};

/* Loads libcuda from the colon list `paths` (NULL: the default names) by
 * drivers/common's rule. On failure returns TRD_ERR_UNSUPPORTED with every
 * path tried and why. */
trd_status_t cuda_api_load(trd_vlib_t *lib, struct cuda_api *api, const char *paths);
void cuda_api_unload(trd_vlib_t *lib, struct cuda_api *api);

/* Sets the error message from a CUresult: "<what>: CUDA_ERROR_X (n): text". */
trd_status_t cuda_error(const struct cuda_api *api, CUresult r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

struct cuda_driver;

struct cuda_device {
    struct cuda_driver *drv;
    const struct cuda_api *api;
    int ordinal;
    CUdevice dev;
    CUcontext ctx;              /* the primary context, retained once */
    int cc;                     /* compute capability, 90 */
    int sm_count;
    int shared_optin;
    int cooperative;
    int cluster;
    trd_scratch_mem_t scratch_mem;  /* cuda_mem_alloc, cuda_scratch_free on this device */
    trd_arena_set_t foreign;    /* scratch of native streams launched on unwrapped, until the device closes */
};

struct cuda_stream {
    struct cuda_device *dev;
    CUstream s;
    int wrapped;                /* a caller's CUstream */
    trd_arena_t arena;          /* its scratch */
};

struct cuda_module {
    struct cuda_device *dev;
    CUmodule mod;
    CUfunction fn;
    uint32_t num_ctas;
    uint32_t block;
    uint32_t shared;
    trd_scratch_spec_t scratch;
    uint64_t coop_limit;        /* max co-resident blocks, for cooperative launches */
    uint32_t nattrs;
    CUlaunchAttribute attrs[4];
    char label[96];
};

struct cuda_devinfo {
    char name[256];
    char arch[16];
    char pci[32];
    trd_device_props_t props;
};

struct cuda_driver {
    trd_vlib_t lib;
    struct cuda_api api;
    int driver_version;
    int count;
    struct cuda_devinfo *info;
    atomic_int cache_warned;
};

/* Context of our own objects: made current for the call when another is. */
struct cuda_ctx_scope {
    int pushed;
};
trd_status_t cuda_ctx_enter(struct cuda_device *d, struct cuda_ctx_scope *scope);
void cuda_ctx_leave(struct cuda_device *d, struct cuda_ctx_scope *scope);
/* Waits for the work queued in the device's context, on any stream (trident's
 * and the caller's), before code or memory that work may use goes; the
 * context is current. A failure (a queued kernel's sticky error) is logged,
 * not reported: what is released goes all the same. */
void cuda_ctx_drain(struct cuda_device *d, const char *why);

/* trd_scratch_mem_t's free (memory.c; its alloc is cuda_mem_alloc). */
void cuda_scratch_free(void *device, void *ptr);
/* The scratch arena of a launch's stream: a trident stream's own, else the foreign set's for the native handle
 * (NULL: the set is full, or CU_STREAM_PER_THREAD). */
trd_arena_t *cuda_stream_arena(struct cuda_device *d, struct cuda_stream *cs, CUstream s);

trd_status_t cuda_module_load(void *device, const trd_driver_module_desc_t *desc, void **out, trd_load_info_t *info);
void cuda_module_unload(void *module);
trd_status_t cuda_launch(void *module, void *stream, void *native, const trd_driver_launch_t *l);
/* trd_driver_ops_t.tensor_map_encode (tensor_map.c) */
trd_status_t cuda_tensor_map_encode(void *device, const trd_tensor_map_desc_t *desc, void *out);

/* The on-disk JIT cache (PTX -> cubin). */
int cuda_cache_read(struct cuda_driver *drv, const char *dir, const char *key, void **data, size_t *size);
void cuda_cache_write(struct cuda_driver *drv, const char *dir, const char *key, const void *data, size_t size);

/* The ops, one file each (device.c, memory.c, stream.c, event.c; entry.c holds the table). */
trd_status_t cuda_init(const trd_driver_init_args_t *args, void **driver);
void cuda_fini(void *driver);
trd_status_t cuda_device_count(void *driver, uint32_t *count);
trd_status_t cuda_device_props(void *driver, uint32_t ordinal, trd_device_props_t *props);
trd_status_t cuda_device_open(void *driver, uint32_t ordinal, void **device);
void cuda_device_close(void *device);
trd_status_t cuda_mem_alloc(void *device, uint64_t size, void **ptr);
void cuda_mem_free(void *device, void *ptr);
trd_status_t cuda_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream);
trd_status_t cuda_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream);
/* The CUstream of a driver stream (NULL: the default stream). */
CUstream cuda_stream_of(void *stream);
trd_status_t cuda_stream_create(void *device, void **stream);
trd_status_t cuda_stream_wrap(void *device, void *native, void **stream);
void cuda_stream_destroy(void *stream);
trd_status_t cuda_stream_sync(void *stream);
void *cuda_stream_native(void *stream);
trd_status_t cuda_stream_capturing(void *stream, int32_t *capturing);
trd_status_t cuda_event_create(void *device, void **event);
void cuda_event_destroy(void *event);
trd_status_t cuda_event_record(void *event, void *stream);
trd_status_t cuda_event_sync(void *event);
trd_status_t cuda_event_elapsed(void *start, void *end, double *ms);

#endif
