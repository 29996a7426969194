/* SPDX-License-Identifier: Apache-2.0 */
/* levelzero.h: the Level Zero driver's parts (Intel GPUs, Triton backend "xpu").
 *
 * The vendor library (libze_loader.so.1) is dlopened at init; every call goes
 * through the function table below (symbols.h). One context per device; a
 * trident stream is an immediate command list on a compute queue group.
 *
 * Ordering: the Level Zero specification does not order the commands of a
 * command list (zeCommandListAppendBarrier is what makes later commands wait
 * for earlier ones), so a stream appends a barrier before a command whenever
 * an earlier command may still run. That gives trident's in-order stream
 * semantics on any conforming driver. */
#ifndef TRD_DRIVER_LEVELZERO_H
#define TRD_DRIVER_LEVELZERO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#include "drivers/common/scratch.h"
#include "drivers/common/services.h"
#include "drivers/common/vendor_lib.h"
#include <trident/driver.h>

#include "drivers/levelzero/symbols.h"

#define ZDRV_DEFAULT_LIBRARY "libze_loader.so.1"

/* Kernel handles per module that launches may use at once (see launch.c). */
#define ZDRV_KSLOTS 8

struct zdrv_api {
#define ZDRV_FIELD(name) __typeof__(name) *name;
    ZDRV_SYMBOLS(ZDRV_FIELD, ZDRV_FIELD)
#undef ZDRV_FIELD
};

/* What init learns about one device; lives until fini. */
struct zdrv_devinfo {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    char name[ZE_MAX_DEVICE_NAME];
    char vendor[32];
    char pci[32];              /* "DDDD:BB:DD.F", "" when unknown */
    uint8_t uuid[16];
    uint32_t flags;            /* enum trd_device_flags */
    uint32_t warp_size;
    uint32_t compute_units;
    uint64_t memory;
    ze_device_compute_properties_t compute;
    uint32_t compute_ordinal;  /* a command queue group that supports compute */
    double ns_per_tick;        /* global timestamp resolution */
    uint64_t ts_mask;          /* valid bits of a global timestamp */
    int free_blocking;         /* zeMemFreeExt with the blocking policy is available */
};

struct zdrv_driver {
    trd_vlib_t lib;
    struct zdrv_api api;
    uint32_t ndevices;
    struct zdrv_devinfo *devs;
};

struct zdrv_stream;

struct zdrv_device {
    struct zdrv_driver *drv;
    const struct zdrv_api *api;
    const struct zdrv_devinfo *info;
    uint32_t ordinal;
    ze_context_handle_t ctx;
    /* Launches without a stream and the synchronous copies go here, so that
     * they are ordered with each other (like CUDA's default stream). */
    struct zdrv_stream *defstream;
    /* Every stream of the device (defstream too): unloading a module or
     * freeing memory waits for what they may still run (zdrv_device_drain). */
    pthread_mutex_t streams_lock;
    struct zdrv_stream *streams;
    trd_scratch_mem_t scratch_mem;  /* zdrv_mem_alloc, zdrv_scratch_free on this device */
    /* Scratch of command lists passed bare per launch (not wrapped), until
     * the device closes (freed with the blocking policy where offered). */
    trd_arena_set_t foreign;
};

struct zdrv_stream {
    struct zdrv_device *dev;
    ze_command_list_handle_t list;
    int owned;                 /* 0: a caller's command list (stream_wrap) */
    /* Level Zero forbids appending to one command list from two threads at
     * once: every append of this stream happens under `lock`. */
    pthread_mutex_t lock;
    int busy;                  /* commands appended since the last synchronisation */
    /* The caller may append to the list too (a wrapped list, or an own one
     * whose handle trd_stream_native gave out): its commands are not in
     * `busy`, so ordering and waiting never skip. */
    atomic_int shared;
    ze_event_pool_handle_t pool;
    ze_event_handle_t done;    /* signalled by the barrier stream_sync appends */
    trd_arena_t arena;         /* its scratch */
    struct zdrv_stream *next;  /* in dev->streams */
};

struct zdrv_kslot {
    pthread_mutex_t lock;
    ze_kernel_handle_t kernel;     /* created on first use (slot 0 at load) */
};

struct zdrv_module {
    struct zdrv_device *dev;
    ze_module_handle_t module;
    ze_module_handle_t *libs;      /* extern_libs modules, linked to `module` */
    uint32_t nlibs;
    char *entry;
    uint32_t num_params;
    uint32_t group_size;           /* num_warps * warp_size */
    uint32_t shared;
    int slm_arg;                   /* the kernel takes the shared-local-memory argument */
    trd_scratch_spec_t scratch;
    char label[96];
    struct zdrv_kslot slots[ZDRV_KSLOTS];
};

struct zdrv_event {
    struct zdrv_device *dev;
    ze_event_pool_handle_t pool;
    ze_event_handle_t event;
    uint64_t *stamp;               /* host memory the device writes its global timestamp into */
    int recorded;
};

/* status.c */
const char *zdrv_result_name(ze_result_t r);
trd_status_t zdrv_status(ze_result_t r);
/* Reports a failed call: "<context>: <call> failed: ZE_RESULT_X (0x...)"; an
 * empty context leaves only the call part. Returns the mapped status. */
trd_status_t zdrv_fail(ze_result_t r, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* loader.c: opens the first library of the colon list `paths` (NULL or "":
 * the default) that has every required symbol. On failure returns
 * TRD_ERR_UNSUPPORTED with every path tried and why. */
trd_status_t zdrv_library_open(struct zdrv_driver *d, const char *paths);
void zdrv_library_close(struct zdrv_driver *d);

/* stream.c */
trd_status_t zdrv_stream_new(struct zdrv_device *dev, ze_command_list_handle_t list, int owned,
                             struct zdrv_stream **out);
void zdrv_stream_free(struct zdrv_stream *s);
/* Appends a barrier when an earlier command may still run; the caller holds s->lock. */
trd_status_t zdrv_stream_order(struct zdrv_stream *s);
/* Waits for everything appended so far; the caller holds s->lock. */
trd_status_t zdrv_stream_wait(struct zdrv_stream *s);
/* Waits for what every stream of the device has appended so far, before
 * code or memory that work may use goes (Level Zero requires it). Commands a
 * caller appends to a command list of its own that it passes per launch
 * (native_stream, not wrapped) are the caller's to wait for. */
void zdrv_device_drain(struct zdrv_device *dev, const char *why);
trd_status_t zdrv_stream_create(void *device, void **stream);
trd_status_t zdrv_stream_wrap(void *device, void *native, void **stream);
void zdrv_stream_destroy(void *stream);
trd_status_t zdrv_stream_sync(void *stream);
void *zdrv_stream_native(void *stream);

/* event.c */
trd_status_t zdrv_event_create(void *device, void **event);
void zdrv_event_destroy(void *event);
trd_status_t zdrv_event_record(void *event, void *stream);
trd_status_t zdrv_event_sync(void *event);
trd_status_t zdrv_event_elapsed(void *start, void *end, double *ms);

/* device.c */
trd_status_t zdrv_init(const trd_driver_init_args_t *args, void **driver);
void zdrv_fini(void *driver);
trd_status_t zdrv_device_count(void *driver, uint32_t *count);
trd_status_t zdrv_device_props(void *driver, uint32_t ordinal, trd_device_props_t *props);
trd_status_t zdrv_device_open(void *driver, uint32_t ordinal, void **device);
void zdrv_device_close(void *device);

/* module.c */
trd_status_t zdrv_module_load(void *device, const trd_driver_module_desc_t *desc, void **module,
                              trd_load_info_t *info);
void zdrv_module_unload(void *module);
/* Creates a kernel handle ready to launch: group size and the
 * shared-local-memory argument set. */
trd_status_t zdrv_kernel_new(struct zdrv_module *m, ze_kernel_handle_t *out);

/* launch.c */
trd_status_t zdrv_launch(void *module, void *stream, void *native, const trd_driver_launch_t *launch);

/* memory.c */
trd_status_t zdrv_mem_alloc(void *device, uint64_t size, void **ptr);
void zdrv_mem_free(void *device, void *ptr);
/* trd_scratch_mem_t's free (its alloc is zdrv_mem_alloc). It does not
 * drain: scratch goes only once its work is done (and under a stream's lock). */
void zdrv_scratch_free(void *device, void *ptr);
trd_status_t zdrv_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream);
trd_status_t zdrv_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream);

#endif
