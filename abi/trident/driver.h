/* SPDX-License-Identifier: Apache-2.0 */
/*
 * driver.h: the plugin ABI between libtrident and its driver modules.
 *
 * A driver module is a shared object that exports one function,
 *
 *     const trd_driver_ops_t *trd_driver_entry(uint32_t offered);
 *
 * returning a table that lives as long as the module is loaded. Version
 * negotiation: the core passes the highest driver ABI version it implements
 * (TRD_DRIVER_ABI_VERSION); the table begins with the version the module
 * implements and its own size. The core runs every version from
 * TRD_DRIVER_ABI_MIN_VERSION to its own, so a newer core loads older modules;
 * it refuses a module whose version is outside that range (naming both),
 * whose table is smaller than the version requires, or whose required
 * functions are NULL, and records why. (Version-1 modules declare the entry
 * without the parameter; the core's argument is then ignored.)
 *
 * Version 2: the core hands the driver a services table at init
 * (trd_driver_init_args_t.services: errors, logging, option getters,
 * configuration), so that a module needs nothing of libtrident at link time
 * and can be loaded and tested without it. Version-1 modules call the
 * exported trd_driver_error/trd_driver_log below instead.
 *
 * Threading: the core calls init/fini/device_count/device_props from one
 * thread; every other function may be called from several threads at once
 * and must be safe so. launch() is the hot path: it must not take a lock
 * shared by all streams and should not allocate in steady state.
 *
 * Errors: a function that fails returns a trd_status_t and describes the
 * failure with the services' error() (value, what was expected, the vendor's
 * error name), which fills the caller's thread-local message.
 *
 * Lifetimes (trident.h, "Lifetimes"): module_unload, event_destroy, mem_free
 * and stream_destroy may be called while work that uses the object is still
 * queued. The driver keeps what that work needs until it has run (module
 * code, the event) or waits for it (mem_free, stream_destroy); module_unload
 * and event_destroy may wait too. Queued work that fails when it runs is
 * reported by the next stream_sync of its stream, and by event_sync of the
 * events recorded after it (trident.h, "Errors of queued work").
 */
#ifndef TRIDENT_DRIVER_H
#define TRIDENT_DRIVER_H

#include <stdarg.h>
#include <trident/trident.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRD_DRIVER_ABI_VERSION 2      /* the highest this header describes */
#define TRD_DRIVER_ABI_MIN_VERSION 1  /* the oldest the core still runs */
#define TRD_DRIVER_ENTRY_SYMBOL "trd_driver_entry"

/* Launch parameter arrays have room for this many entries after the
 * kernel's own parameters: the driver appends Triton's scratch pointers. */
#define TRD_DRIVER_EXTRA_PARAMS 4

/* What the core gives a version-2 driver (init args' services). The table
 * lives as long as the libtrident that gave it: longer than any driver. */
typedef struct trd_driver_services {
    uint32_t struct_size;   /* sizeof the core's table: the driver checks it covers what it calls */
    uint32_t reserved;
    /* Sets the calling thread's error message and returns status. */
    trd_status_t (*error)(trd_status_t status, const char *fmt, va_list ap);
    /* Logs through trident's logger (a no-op below the configured level). */
    void (*log)(int32_t level, const char *fmt, va_list ap);
    /* This driver's [driver.<name>] configuration ("library", "devices",
     * ...) with init args' config_ctx: the value's text, or NULL when unset. */
    const char *(*config_get)(void *ctx, const char *key);
    /* trident.h's option getters, for trd_driver_module_desc_t.options. */
    trd_status_t (*options_get)(const trd_options_t *options, const char *name, char *buf, size_t cap,
                                size_t *len);
    trd_status_t (*options_get_int)(const trd_options_t *options, const char *name, int64_t *value);
    trd_status_t (*options_get_bool)(const trd_options_t *options, const char *name, int32_t *value);
    trd_status_t (*options_is_set)(const trd_options_t *options, const char *name, int32_t *is_set);
} trd_driver_services_t;

typedef struct trd_driver_init_args {
    uint32_t struct_size;
    uint32_t abi_version;   /* the version the core runs the module at: the module's own */
    /* Version 1's configuration callback: the same as services->config_get. */
    const char *(*config_get)(void *ctx, const char *key);
    void *config_ctx;
    /* The driver may write a short note here, shown by `trident drivers`
     * ("0 devices: hipErrorNoDevice"). NUL-terminated, note_cap bytes. */
    char *note;
    uint32_t note_cap;
    uint32_t reserved;
    /* Version 2: the core's services; never NULL for a version-2 module. */
    const trd_driver_services_t *services;
} trd_driver_init_args_t;

enum trd_module_flags {
    TRD_MODULE_COOPERATIVE = 1u << 0, /* launch_cooperative_grid */
    TRD_MODULE_PDL = 1u << 1          /* launch_pdl */
};

typedef struct trd_driver_module_desc {
    uint32_t struct_size;
    int32_t format;          /* enum trd_image_format */
    const void *image;       /* valid during module_load only: copy what you keep */
    uint64_t image_size;
    const char *entry;       /* the kernel's symbol */
    const char *arch;        /* the image's target arch ("sm90"); "" for generic */
    const char *label;       /* for messages: "kernel 'add_kernel'" */
    uint32_t num_warps;
    uint32_t warp_size;
    uint32_t num_ctas;
    uint32_t shared;         /* dynamic shared memory per block, bytes */
    uint32_t flags;          /* enum trd_module_flags */
    uint32_t num_params;     /* the kernel's own parameters (scratch excluded) */
    uint64_t global_scratch_size;   /* per program (per CTA), bytes */
    uint64_t global_scratch_align;
    uint64_t profile_scratch_size;
    uint64_t profile_scratch_align;
    const trd_options_t *options;   /* load-stage options; never NULL */
    const char *cache_dir;   /* private directory for JIT results, or NULL (disabled) */
    const uint8_t *image_hash;      /* SHA-256 of the image (32 bytes) */
    const char *metadata;    /* the image's Triton metadata JSON (backend-specific keys such as
                                Intel's build_flags), canonical text */
    /* Added after metadata; read only where struct_size covers it. The kernel's num_params launch
     * parameters (kind, size, name), for messages that name a parameter (the host driver names the
     * buffer a faulting address belongs to); valid during module_load only: copy what you keep. */
    const trd_param_info_t *params;
} trd_driver_module_desc_t;

typedef struct trd_driver_launch {
    uint32_t struct_size;
    uint32_t num_params;
    uint32_t grid[3];        /* programs; never all zero here (the core skips empty grids) */
    uint32_t reserved;
    /* params[i] points at parameter i's value, param_sizes[i] its size in
     * bytes. Both arrays have num_params + TRD_DRIVER_EXTRA_PARAMS entries. */
    void **params;
    uint32_t *param_sizes;
    void *global_scratch;    /* caller-provided scratch, or NULL */
    void *profile_scratch;
    /* Added after version 1; read only where struct_size covers them. The
     * scratch bytes the launch needs in all (programs x num_ctas x the size a
     * program needs rounded up to its alignment), computed once by the core,
     * overflow-checked; 0 where the kernel needs none. A driver allocates them
     * where the matching pointer above is NULL. */
    uint64_t global_scratch_bytes;
    uint64_t profile_scratch_bytes;
} trd_driver_launch_t;

/* trd_tensor_map_desc_t and enum trd_copy_kind are trident.h's (the public API takes them too). */

typedef struct trd_driver_ops {
    uint32_t abi_version;    /* TRD_DRIVER_ABI_VERSION */
    uint32_t struct_size;    /* sizeof(trd_driver_ops_t) */
    const char *name;        /* URI scheme: "cuda" */
    const char *backend;     /* Triton backend: "cuda", "hip", "xpu", "host" */
    int32_t priority;        /* keeps a device two drivers expose; higher wins */
    uint32_t flags;          /* reserved, 0 */

    /* Returns TRD_OK with a driver (possibly serving 0 devices: say why in
     * args->note), TRD_ERR_UNSUPPORTED when it cannot run here (vendor library
     * missing: the module is reported "skipped"), any other error when broken. */
    trd_status_t (*init)(const trd_driver_init_args_t *args, void **driver);
    void (*fini)(void *driver);
    trd_status_t (*device_count)(void *driver, uint32_t *count);
    /* Fills props except index/uri/driver; strings must live until fini. */
    trd_status_t (*device_props)(void *driver, uint32_t ordinal, trd_device_props_t *props);
    trd_status_t (*device_open)(void *driver, uint32_t ordinal, void **device);
    void (*device_close)(void *device);

    trd_status_t (*module_load)(void *device, const trd_driver_module_desc_t *desc, void **module,
                                trd_load_info_t *info);
    void (*module_unload)(void *module);
    /* stream: a driver stream, or NULL with native_stream the caller's own
     * (NULL native_stream: the device's default stream). */
    trd_status_t (*launch)(void *module, void *stream, void *native_stream,
                           const trd_driver_launch_t *launch);

    trd_status_t (*mem_alloc)(void *device, uint64_t size, void **ptr);
    void (*mem_free)(void *device, void *ptr);
    /* stream NULL: synchronous. */
    trd_status_t (*mem_copy)(void *device, void *dst, const void *src, uint64_t size, int32_t kind,
                             void *stream);
    trd_status_t (*mem_set)(void *device, void *dst, uint8_t value, uint64_t size, void *stream);

    trd_status_t (*stream_create)(void *device, void **stream);
    trd_status_t (*stream_wrap)(void *device, void *native, void **stream);
    void (*stream_destroy)(void *stream);
    trd_status_t (*stream_sync)(void *stream);
    void *(*stream_native)(void *stream);

    trd_status_t (*event_create)(void *device, void **event);
    void (*event_destroy)(void *event);
    /* stream NULL: the device's default stream; on the host, whose NULL-stream
     * work runs synchronously, the event completes at once. */
    trd_status_t (*event_record)(void *event, void *stream);
    trd_status_t (*event_sync)(void *event);
    trd_status_t (*event_elapsed)(void *start, void *end, double *ms);

    /* Optional ops, added after version 1: the core uses one only where the table's struct_size covers it and
     * it is not NULL. */

    /* Encodes a tensor map for a kernel parameter into out (TRD_TENSOR_MAP_BYTES bytes, written only on
     * success). Host work only: safe while a stream is being captured, takes no lock, allocates nothing.
     * TRD_ERR_UNSUPPORTED where the device or the vendor library has no tensor maps. */
    trd_status_t (*tensor_map_encode)(void *device, const trd_tensor_map_desc_t *desc, void *out);

    /* *capturing = 1 while the driver stream is being captured into a graph
     * (its work then runs only when the graph is launched, so nothing may wait
     * for it), else 0. NULL: the driver's streams are never captured. */
    trd_status_t (*stream_capturing)(void *stream, int32_t *capturing);
} trd_driver_ops_t;

typedef const trd_driver_ops_t *(*trd_driver_entry_fn)(uint32_t offered);

/* Version 1's services, exported by libtrident (a version-2 module uses
 * init args' services instead and links nothing of libtrident). */

/* Sets the calling thread's error message and returns status, so that a
 * driver can write `return trd_driver_error(TRD_ERR_DEVICE, "...", ...);`. */
TRD_API trd_status_t trd_driver_error(trd_status_t status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Logs through trident's logger (a no-op below the configured level). */
TRD_API void trd_driver_log(int32_t level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* What every driver says of a kernel that faulted on a memory access (the
 * host's SIGSEGV, CUDA's and HIP's illegal address, Level Zero's lost
 * device), after naming the kernel and the vendor's error. */
#define TRD_DRIVER_FAULT_HINT                                                        \
    "the kernel read or wrote outside its buffers: a buffer may be smaller than "   \
    "the grid and the sizes given make the kernel use, or a pointer argument null"

#if defined(__GNUC__)
#define TRD_DRIVER_EXPORT __attribute__((visibility("default")))
#else
#define TRD_DRIVER_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif /* TRIDENT_DRIVER_H */
