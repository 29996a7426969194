/*
 * trident.h: the public C API of libtrident.
 *
 * ABI rules (abi/README.md has the full text):
 *  - every object is an opaque handle;
 *  - every struct the caller passes in or asks to be filled begins with
 *    uint32_t struct_size, which the caller sets to sizeof(the struct it was
 *    compiled with); the library reads and writes only that many bytes, so
 *    structs can grow at their end without breaking old callers;
 *  - enums are plain int32_t/uint32_t values with explicit numbers;
 *  - fixed-width integers only, no C bool and no bit-fields;
 *  - every function returns trd_status_t (or nothing for destructors); on
 *    failure trd_error_message() tells, on the calling thread, what failed;
 *  - out-parameters are written only on success;
 *  - strings returned through `const char *` are owned by the library and live
 *    as long as the object they were read from.
 */
#ifndef TRIDENT_TRIDENT_H
#define TRIDENT_TRIDENT_H

#include <stddef.h>
#include <stdint.h>

#include <trident/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TRD_API __attribute__((visibility("default")))
#else
#define TRD_API
#endif

/* ------------------------------------------------------------------ status */

typedef int32_t trd_status_t;

enum trd_status_code {
    TRD_OK = 0,
    TRD_ERR_INVALID_ARGUMENT = 1, /* a caller's value is wrong */
    TRD_ERR_NOT_FOUND = 2,        /* no such device, option, file, symbol */
    TRD_ERR_UNSUPPORTED = 3,      /* valid, but not on this device/driver */
    TRD_ERR_NO_MEMORY = 4,        /* host allocation failed */
    TRD_ERR_DEVICE = 5,           /* the vendor API reported a failure */
    TRD_ERR_IO = 6,               /* reading or writing a file failed */
    TRD_ERR_FORMAT = 7,           /* malformed input: image, metadata, bundle, ini */
    TRD_ERR_DRIVER = 8,           /* a driver module is missing or broken */
    TRD_ERR_LIMIT = 9,            /* a device or library limit was exceeded */
    TRD_ERR_NO_DEVICE = 10,       /* no device can serve the request */
    TRD_ERR_VERSION = 11,         /* an ABI or format version is not supported */
    TRD_ERR_STATE = 12,           /* the object is not in a state that allows this */
    TRD_ERR_BUFFER_TOO_SMALL = 13,/* a caller's buffer is too small (size reported) */
    TRD_ERR_INTERNAL = 14
};

/* The message of the last failure on this thread ("" when none). Valid until
 * the next trident call on this thread. */
TRD_API const char *trd_error_message(void);
/* "TRD_ERR_NOT_FOUND" etc.; "TRD_ERR_UNKNOWN" for a value outside the enum. */
TRD_API const char *trd_status_name(trd_status_t status);

/* ----------------------------------------------------------------- version */

/* TRD_MAKE_VERSION(major, minor, patch) of the loaded library. */
TRD_API uint32_t trd_version(void);
TRD_API const char *trd_version_string(void);
/* The loaded library's TRD_ABI_VERSION. */
TRD_API uint32_t trd_abi_version(void);

/* ----------------------------------------------------------------- logging */

enum trd_log_level {
    TRD_LOG_OFF = 0,
    TRD_LOG_ERROR = 1,
    TRD_LOG_WARN = 2,
    TRD_LOG_INFO = 3,
    TRD_LOG_DEBUG = 4
};

/* Receives every message at or above the level. Called from any thread. */
typedef void (*trd_log_fn)(void *user, int32_t level, const char *message);

/* Logging is off unless TRIDENT_LOG=error|warn|info|debug, a [runtime]
 * log_level, or these calls turn it on. Without a callback, messages go to
 * stderr prefixed with "trident: <level>: ". */
TRD_API trd_status_t trd_log_set_level(int32_t level);
TRD_API int32_t trd_log_get_level(void);
/* fn NULL restores stderr. */
TRD_API trd_status_t trd_log_set_callback(trd_log_fn fn, void *user);

/* ----------------------------------------------------------------- handles */

typedef struct trd_runtime trd_runtime_t;
typedef struct trd_driver trd_driver_t;
typedef struct trd_device trd_device_t;
typedef struct trd_options trd_options_t;
typedef struct trd_config trd_config_t;
typedef struct trd_kernel trd_kernel_t;
typedef struct trd_stream trd_stream_t;
typedef struct trd_event trd_event_t;
typedef struct trd_buffer trd_buffer_t;

/* ------------------------------------------------------------------ config */

enum trd_config_flags {
    TRD_CONFIG_STRICT = 1u << 0 /* unknown keys and unused TRIDENT_* variables are errors */
};

enum trd_config_origin {
    TRD_ORIGIN_DEFAULT = 0,
    TRD_ORIGIN_FILE = 1,
    TRD_ORIGIN_ENV = 2,
    TRD_ORIGIN_API = 3
};

typedef struct trd_config_entry {
    uint32_t struct_size;
    int32_t kind;        /* enum trd_config_origin */
    const char *section; /* "runtime", "driver.cuda", "backend.cuda", "device \"cuda:0\"" */
    const char *key;
    const char *value;   /* canonical text */
    const char *origin;  /* "FILE:LINE", "env TRIDENT_CUDA_NUM_WARPS", "api" */
} trd_config_entry_t;

/* Receives one diagnostic: level is TRD_LOG_ERROR or TRD_LOG_WARN; file may be
 * NULL for environment variables; line is 0 when not from a file. */
typedef void (*trd_diag_fn)(void *user, int32_t level, const char *file, uint32_t line,
                            const char *message);

TRD_API trd_status_t trd_config_create(uint32_t flags, trd_config_t **out);
TRD_API void trd_config_destroy(trd_config_t *config);
/* A diagnostic sink for what the load functions find (default: the log). */
TRD_API trd_status_t trd_config_set_diag(trd_config_t *config, trd_diag_fn fn, void *user);
/* The standard sources in order, later overriding earlier:
 * $(sysconfdir)/trident/trident.ini, $XDG_CONFIG_HOME/trident/trident.ini
 * (~/.config when unset), the file named by TRIDENT_CONFIG, then TRIDENT_*
 * environment variables. Missing default files are not errors. */
TRD_API trd_status_t trd_config_load_defaults(trd_config_t *config);
TRD_API trd_status_t trd_config_load_file(trd_config_t *config, const char *path);
TRD_API trd_status_t trd_config_load_string(trd_config_t *config, const char *text,
                                            const char *name);
TRD_API trd_status_t trd_config_load_env(trd_config_t *config);
/* Sets a value through the API (the highest precedence); checked like a file's. */
TRD_API trd_status_t trd_config_set(trd_config_t *config, const char *section, const char *key,
                                    const char *value);
/* value and origin are NULL-safe out pointers; NOT_FOUND when the key is unset. */
TRD_API trd_status_t trd_config_get(const trd_config_t *config, const char *section,
                                    const char *key, const char **value, const char **origin);
TRD_API trd_status_t trd_config_entry_count(const trd_config_t *config, uint32_t *count);
TRD_API trd_status_t trd_config_entry_get(const trd_config_t *config, uint32_t index,
                                          trd_config_entry_t *entry);
/* Validates a file without applying it: every problem goes to fn as
 * "FILE:LINE: message"; *errors receives the error count. Returns TRD_OK
 * when the file is valid, TRD_ERR_FORMAT when not. */
TRD_API trd_status_t trd_config_check_file(const char *path, uint32_t flags, trd_diag_fn fn,
                                           void *user, uint32_t *errors);

/* ----------------------------------------------------------------- options */

enum trd_option_type {
    TRD_OPT_BOOL = 1,
    TRD_OPT_INT = 2,         /* int64 */
    TRD_OPT_OPT_INT = 3,     /* int64 or none */
    TRD_OPT_STRING = 4,
    TRD_OPT_OPT_STRING = 5,  /* string or none */
    TRD_OPT_ENUM = 6,        /* one of a fixed set of strings */
    TRD_OPT_STRING_LIST = 7, /* tuple of strings */
    TRD_OPT_PATH_MAP = 8,    /* name -> path (extern_libs) */
    TRD_OPT_INT_TRIPLE = 9,  /* (x, y, z) */
    TRD_OPT_OPT_BOOL = 10    /* bool or none */
};

enum trd_option_stage {
    TRD_STAGE_COMPILE = 1, /* matters to the compiler only: carried, validated, hashed */
    TRD_STAGE_LOAD = 2,    /* applied when a module is built or loaded */
    TRD_STAGE_LAUNCH = 3,  /* applied at every launch */
    TRD_STAGE_RUNTIME = 4  /* a runtime-wide setting */
};

enum trd_option_flags {
    TRD_OPTION_DERIVED = 1u << 0,   /* the default is derived from the target */
    TRD_OPTION_NOT_FIELD = 1u << 1  /* not a field of Triton's options class */
};

typedef struct trd_option_info {
    uint32_t struct_size;
    int32_t type;              /* enum trd_option_type */
    int32_t stage;             /* enum trd_option_stage */
    uint32_t flags;            /* enum trd_option_flags */
    const char *backend;       /* "cuda", "hip", "xpu", "host", "runtime" */
    const char *name;
    const char *type_name;     /* "int", "bool", "Optional[int]", "Tuple[str]", ... */
    const char *default_value; /* canonical text of the static default ("none" when none) */
    const char *derived;       /* how a derived default is computed, or NULL */
    const char *values;        /* accepted values ("a|b|c") or range, or NULL */
    const char *doc;
    const char *triton_since;  /* first Triton release with the field, e.g. "3.0" */
    const char *triton_until;  /* last release with it, or NULL when current */
    const char *env;           /* the environment variable that sets it */
} trd_option_info_t;

/* Backends with option tables: "cuda", "hip", "xpu", "host", "runtime". */
TRD_API trd_status_t trd_backend_count(uint32_t *count);
TRD_API trd_status_t trd_backend_name(uint32_t index, const char **name);

TRD_API trd_status_t trd_option_count(const char *backend, uint32_t *count);
TRD_API trd_status_t trd_option_info(const char *backend, uint32_t index, trd_option_info_t *info);
/* NOT_FOUND (with the nearest name in the message) when name is not an option. */
TRD_API trd_status_t trd_option_lookup(const char *backend, const char *name,
                                       trd_option_info_t *info);
/* *present = 1 when name is an option of backend in the given Triton release
 * (NULL: the current one), else 0. Never fails for an unknown name. */
TRD_API trd_status_t trd_option_exists(const char *backend, const char *name,
                                       const char *triton_version, int32_t *present);
/* The static default of an option in a release ("3.9", "3.7.1"; NULL: the table's current one), for
 * defaults that changed between releases (HIP's schedule_hint, 'none' up to 3.7, '' from 3.8).
 * NOT_FOUND when name is not an option of that release; UNSUPPORTED for a release the table does
 * not know (trd_option_releases). Since TRIDENT_1.1. */
TRD_API trd_status_t trd_option_default(const char *backend, const char *name,
                                        const char *triton_version, const char **value);

/* Which releases a backend's table knows. Since TRIDENT_1.1. */
typedef struct trd_option_releases {
    uint32_t struct_size;
    const char *product; /* "Triton", "intel-xpu-backend-for-triton"; NULL for trident's own tables */
    const char *oldest;  /* the oldest release the rows know ("3.0") */
    const char *newest;  /* the newest ("3.9"): the one trd_options_create follows */
    const char *tested;  /* the releases CI compares the rows with, installed, space separated; "" if none */
} trd_option_releases_t;
TRD_API trd_status_t trd_option_releases(const char *backend, trd_option_releases_t *info);

TRD_API trd_status_t trd_options_create(const char *backend, trd_options_t **out);
/* Options for a device: derived defaults resolved from it (arch, fp8 types,
 * warp size ...), then the configuration's [backend.X] and [device "..."]
 * values applied. */
TRD_API trd_status_t trd_options_create_for_device(const trd_device_t *device,
                                                   trd_options_t **out);
TRD_API void trd_options_destroy(trd_options_t *options);
TRD_API trd_status_t trd_options_copy(const trd_options_t *options, trd_options_t **out);
TRD_API trd_status_t trd_options_backend(const trd_options_t *options, const char **backend);
/* Sets from text: "8", "true", "none", "sm90", "fp8e5,fp8e4nv",
 * "libdevice=/path/libdevice.bc", "1,1,1". */
TRD_API trd_status_t trd_options_set(trd_options_t *options, const char *name, const char *value);
TRD_API trd_status_t trd_options_set_int(trd_options_t *options, const char *name, int64_t value);
TRD_API trd_status_t trd_options_set_bool(trd_options_t *options, const char *name, int32_t value);
/* Canonical text of the value into buf (NUL-terminated); *len receives the
 * length without the NUL. BUFFER_TOO_SMALL sets *len to what is needed. */
TRD_API trd_status_t trd_options_get(const trd_options_t *options, const char *name, char *buf,
                                     size_t cap, size_t *len);
/* NOT_FOUND-like TRD_ERR_STATE when the value is none. */
TRD_API trd_status_t trd_options_get_int(const trd_options_t *options, const char *name,
                                         int64_t *value);
TRD_API trd_status_t trd_options_get_bool(const trd_options_t *options, const char *name,
                                          int32_t *value);
/* *set = 1 when the value was set explicitly (not a default). */
TRD_API trd_status_t trd_options_is_set(const trd_options_t *options, const char *name,
                                        int32_t *set);
/* name NULL resets every option. */
TRD_API trd_status_t trd_options_reset(trd_options_t *options, const char *name);
/* Canonical JSON object of every option (sorted keys): equal options give
 * byte-identical text. */
TRD_API trd_status_t trd_options_serialize(const trd_options_t *options, char *buf, size_t cap,
                                           size_t *len);
/* SHA-256 over the canonical serialization, with each extern_libs path
 * replaced by the SHA-256 of the file's content (as Triton does). */
TRD_API trd_status_t trd_options_hash(const trd_options_t *options, uint8_t digest[32]);

/* ----------------------------------------------------------------- runtime */

enum trd_runtime_flags {
    TRD_RUNTIME_NO_DEFAULT_DRIVERS = 1u << 0, /* only desc->driver_path, not the installed ones */
    TRD_RUNTIME_NO_ENV = 1u << 1              /* ignore TRIDENT_DRIVER_PATH and other env */
};

typedef struct trd_runtime_desc {
    uint32_t struct_size;
    uint32_t flags;          /* enum trd_runtime_flags */
    const char *driver_path; /* colon list of directories or module files, searched first */
    trd_config_t *config;    /* NULL: trd_config_load_defaults(); borrowed otherwise */
} trd_runtime_desc_t;

/* desc may be NULL for the defaults. */
TRD_API trd_status_t trd_runtime_create(const trd_runtime_desc_t *desc, trd_runtime_t **out);
TRD_API void trd_runtime_destroy(trd_runtime_t *runtime);
/* The process-wide runtime (default configuration), created on first use and
 * kept until exit; the XLA handlers and the Python package use it. */
TRD_API trd_status_t trd_runtime_shared(trd_runtime_t **out);
TRD_API trd_status_t trd_runtime_config(trd_runtime_t *runtime, const trd_config_t **config);
/* The directory of trident's disk caches: [runtime] cache_dir, else $XDG_CACHE_HOME/trident, else
 * ~/.cache/trident (the JIT cache uses it when jit_cache is on; trident.jax keeps compiled kernels and
 * autotuning choices there). NOT_FOUND when there is none. Since 1.1. */
TRD_API trd_status_t trd_runtime_cache_dir(trd_runtime_t *runtime, const char **dir);

/* ----------------------------------------------------------------- drivers */

enum trd_driver_status {
    TRD_DRIVER_LOADED = 0,
    TRD_DRIVER_SKIPPED = 1,  /* not usable here: vendor library missing, disabled */
    TRD_DRIVER_FAILED = 2    /* broken module: bad entry, ABI mismatch, init failed */
};

typedef struct trd_driver_info {
    uint32_t struct_size;
    int32_t status;          /* enum trd_driver_status */
    uint32_t device_count;   /* devices this driver serves (after de-duplication) */
    uint32_t abi_version;    /* the module's driver ABI version (0 if unknown) */
    const char *name;        /* "cuda"; the file name when the module has no valid entry */
    const char *backend;     /* "cuda", or "" when unknown */
    const char *path;
    const char *reason;      /* why skipped or failed; notes (e.g. "0 devices: hipErrorNoDevice") */
} trd_driver_info_t;

TRD_API trd_status_t trd_runtime_driver_count(trd_runtime_t *runtime, uint32_t *count);
TRD_API trd_status_t trd_runtime_driver_info(trd_runtime_t *runtime, uint32_t index,
                                             trd_driver_info_t *info);

/* ----------------------------------------------------------------- devices */

enum trd_device_kind {
    TRD_DEVICE_GPU = 1,
    TRD_DEVICE_CPU = 2
};

enum trd_device_flags {
    TRD_DEVICE_HAS_UUID = 1u << 0,
    TRD_DEVICE_COOPERATIVE_LAUNCH = 1u << 1,
    TRD_DEVICE_CLUSTER_LAUNCH = 1u << 2
};

typedef struct trd_device_props {
    uint32_t struct_size;
    uint32_t index;          /* position in the runtime's device list */
    int32_t kind;            /* enum trd_device_kind */
    uint32_t flags;          /* enum trd_device_flags */
    const char *uri;         /* "<driver>:<ordinal>": "cuda:0", "host:0" */
    const char *driver;
    const char *backend;     /* Triton backend: "cuda", "hip", "xpu", "host" */
    const char *name;
    const char *vendor;
    const char *arch;        /* "sm90", "gfx942", "x86_64" */
    const char *pci_bus_id;  /* "0000:41:00.0", or NULL when unknown */
    uint32_t ordinal;        /* the driver's (vendor's) device number */
    uint32_t warp_size;
    uint32_t compute_units;
    uint32_t max_threads_per_block;
    uint64_t memory_bytes;
    uint32_t max_shared_per_block;        /* bytes without opt-in */
    uint32_t max_shared_per_block_optin;  /* bytes with opt-in */
    uint8_t uuid[16];
} trd_device_props_t;

TRD_API trd_status_t trd_runtime_device_count(trd_runtime_t *runtime, uint32_t *count);
TRD_API trd_status_t trd_runtime_device_get(trd_runtime_t *runtime, uint32_t index,
                                            trd_device_t **device);
/* selector: a URI ("cuda:1"), a list index ("2"), "best" or NULL (a GPU
 * before the host), or property matches joined by ',' ("arch=sm90",
 * "backend=cuda,name=H200", "pci=0000:41:00.0", "uuid=..."): the first match. */
TRD_API trd_status_t trd_runtime_device_find(trd_runtime_t *runtime, const char *selector,
                                             trd_device_t **device);
TRD_API trd_status_t trd_device_get_props(const trd_device_t *device, trd_device_props_t *props);
/* 1 when the device matches the selector (same syntax as device_find). */
TRD_API trd_status_t trd_device_matches(const trd_device_t *device, const char *selector,
                                        int32_t *match);

/* ------------------------------------------------------ streams and events */

/* An in-order queue of work on one device. */
TRD_API trd_status_t trd_stream_create(trd_device_t *device, trd_stream_t **out);
/* Wraps a stream the caller owns (CUstream, hipStream_t, ...): trident
 * launches on it without creating or switching contexts, and never destroys it. */
TRD_API trd_status_t trd_stream_wrap(trd_device_t *device, void *native, trd_stream_t **out);
TRD_API void trd_stream_destroy(trd_stream_t *stream);
TRD_API trd_status_t trd_stream_synchronize(trd_stream_t *stream);
TRD_API trd_status_t trd_stream_native(const trd_stream_t *stream, void **native);
TRD_API trd_status_t trd_stream_device(const trd_stream_t *stream, trd_device_t **device);

TRD_API trd_status_t trd_event_create(trd_device_t *device, trd_event_t **out);
TRD_API void trd_event_destroy(trd_event_t *event);
TRD_API trd_status_t trd_event_record(trd_event_t *event, trd_stream_t *stream);
TRD_API trd_status_t trd_event_synchronize(trd_event_t *event);
/* Milliseconds between two recorded events of one device. */
TRD_API trd_status_t trd_event_elapsed(trd_event_t *start, trd_event_t *end, double *ms);

/* ------------------------------------------------------------------ memory */

TRD_API trd_status_t trd_buffer_alloc(trd_device_t *device, uint64_t size, trd_buffer_t **out);
TRD_API void trd_buffer_free(trd_buffer_t *buffer);
TRD_API trd_status_t trd_buffer_size(const trd_buffer_t *buffer, uint64_t *size);
/* The device address (what a kernel's pointer argument receives). */
TRD_API trd_status_t trd_buffer_address(const trd_buffer_t *buffer, void **address);
/* stream NULL: synchronous. Otherwise ordered on the stream; host memory
 * must stay valid until the stream has passed the copy. */
TRD_API trd_status_t trd_buffer_write(trd_buffer_t *dst, uint64_t offset, const void *src,
                                      uint64_t size, trd_stream_t *stream);
TRD_API trd_status_t trd_buffer_read(const trd_buffer_t *src, uint64_t offset, void *dst,
                                     uint64_t size, trd_stream_t *stream);
TRD_API trd_status_t trd_buffer_fill(trd_buffer_t *buffer, uint64_t offset, uint64_t size,
                                     uint8_t value, trd_stream_t *stream);
TRD_API trd_status_t trd_buffer_copy(trd_buffer_t *dst, uint64_t dst_offset,
                                     const trd_buffer_t *src, uint64_t src_offset, uint64_t size,
                                     trd_stream_t *stream);

/* ----------------------------------------------------------------- kernels */

enum trd_kernel_source {
    TRD_SOURCE_AUTO = 0,         /* decide from the bytes / file name */
    TRD_SOURCE_BUNDLE = 1,       /* a trident kernel bundle (docs/bundle.md) */
    TRD_SOURCE_TRITON_CACHE = 2, /* a Triton cache entry: <name>.json or its directory */
    TRD_SOURCE_IMAGE = 3         /* one raw image: format and target given */
};

enum trd_image_format {
    TRD_FORMAT_UNKNOWN = 0,
    TRD_FORMAT_CUBIN = 1,
    TRD_FORMAT_PTX = 2,
    TRD_FORMAT_FATBIN = 3,
    TRD_FORMAT_HSACO = 4,
    TRD_FORMAT_SPIRV = 5,
    TRD_FORMAT_ZEBIN = 6,
    TRD_FORMAT_HOST_SO = 7
};

typedef struct trd_kernel_desc {
    uint32_t struct_size;
    int32_t source;            /* enum trd_kernel_source */
    const char *path;          /* a file, or NULL with data/size */
    const void *data;          /* bytes (copied), used when path is NULL */
    uint64_t size;
    const char *name;          /* kernel name: picks the entry in a cache directory; entry symbol of a raw image */
    const char *signature;     /* "*fp32,*fp32,i32,constexpr" or "x:*fp32,...", "" for no parameters (needed
                                  when the input has none; else it must agree with the input's) */
    const char *metadata;      /* Triton metadata JSON for a raw image (optional) */
    int32_t format;            /* enum trd_image_format, for a raw image */
    const char *target;        /* "cuda:sm90", "hip:gfx942", "host:x86_64", for a raw image */
    const trd_options_t *options; /* load-stage options (maxnreg, debug, ptx_options, extern_libs, ...) */
} trd_kernel_desc_t;

typedef struct trd_kernel_info {
    uint32_t struct_size;
    uint32_t num_params;       /* parameters a launch passes (constexpr removed) */
    uint32_t num_targets;
    uint32_t reserved;
    const char *name;
    const char *signature;     /* canonical form */
} trd_kernel_info_t;

typedef struct trd_target_info {
    uint32_t struct_size;
    int32_t format;            /* enum trd_image_format */
    uint64_t size;             /* image bytes */
    const void *image;         /* the image, owned by the kernel */
    const char *backend;
    const char *arch;
    const char *metadata;      /* the target's metadata JSON (canonical text) */
    uint32_t num_warps;
    uint32_t num_ctas;
    uint32_t shared;
    uint32_t warp_size;
} trd_target_info_t;

typedef struct trd_load_info {
    uint32_t struct_size;
    int32_t format;            /* the image that was loaded */
    uint32_t registers;        /* per thread, 0 when the driver cannot tell */
    uint32_t spills;           /* local memory bytes / 4, as Triton reports n_spills */
    uint32_t max_threads_per_block;
    uint32_t block_size;       /* num_warps * warp_size */
    uint32_t shared;           /* dynamic shared memory bytes per block */
    uint32_t from_cache;       /* 1 when a JIT result came from the disk cache */
} trd_load_info_t;

TRD_API trd_status_t trd_kernel_create(trd_runtime_t *runtime, const trd_kernel_desc_t *desc,
                                       trd_kernel_t **out);
TRD_API void trd_kernel_destroy(trd_kernel_t *kernel);
TRD_API trd_status_t trd_kernel_get_info(const trd_kernel_t *kernel, trd_kernel_info_t *info);
TRD_API trd_status_t trd_kernel_target_info(const trd_kernel_t *kernel, uint32_t index,
                                            trd_target_info_t *info);
/* 1 when the kernel has an image the device can run. */
TRD_API trd_status_t trd_kernel_supports(const trd_kernel_t *kernel, const trd_device_t *device,
                                         int32_t *supported);
/* Loads the kernel for a device now (launch does it lazily otherwise); info may be NULL. */
TRD_API trd_status_t trd_kernel_load(trd_kernel_t *kernel, trd_device_t *device,
                                     trd_load_info_t *info);

/* One argument of a launch. The kind must suit the parameter's type in the
 * signature: pointers take PTR or BUFFER; integers INT or UINT (range
 * checked); floats FLOAT (converted) or BITS (the raw bit pattern). */
enum trd_arg_kind {
    TRD_ARG_INT = 1,
    TRD_ARG_UINT = 2,
    TRD_ARG_FLOAT = 3,
    TRD_ARG_PTR = 4,
    TRD_ARG_BUFFER = 5,
    TRD_ARG_BITS = 6
};

typedef struct trd_arg {
    int32_t kind;  /* enum trd_arg_kind */
    uint32_t reserved;
    union {
        int64_t i;
        uint64_t u;
        double f;
        void *ptr;
        trd_buffer_t *buffer;
        uint64_t bits;
    } value;
} trd_arg_t;

typedef struct trd_launch {
    uint32_t struct_size;
    uint32_t flags;            /* reserved, 0 */
    uint32_t grid[3];          /* programs along x, y, z, each <= 2^31-1 and < 2^63 in all; a zero makes
                                  the launch a no-op */
    uint32_t num_args;
    const trd_arg_t *args;
    trd_stream_t *stream;      /* a trident stream, or NULL with device + native_stream */
    trd_device_t *device;      /* with native_stream */
    void *native_stream;       /* the vendor's stream (NULL: the device's default/synchronous) */
    void *global_scratch;      /* optional caller-provided scratch (else trident's arena) */
    void *profile_scratch;
} trd_launch_t;

/* Checks the arguments against the signature, loads the kernel for the
 * stream's device on first use, and enqueues it. Thread-safe; takes no lock
 * and allocates nothing once the kernel is loaded for that device. */
TRD_API trd_status_t trd_kernel_launch(trd_kernel_t *kernel, const trd_launch_t *launch);

/* Arguments helpers (inline, no ABI cost). */
static inline trd_arg_t trd_arg_int(int64_t v) { trd_arg_t a; a.kind = TRD_ARG_INT; a.reserved = 0; a.value.i = v; return a; }
static inline trd_arg_t trd_arg_uint(uint64_t v) { trd_arg_t a; a.kind = TRD_ARG_UINT; a.reserved = 0; a.value.u = v; return a; }
static inline trd_arg_t trd_arg_float(double v) { trd_arg_t a; a.kind = TRD_ARG_FLOAT; a.reserved = 0; a.value.f = v; return a; }
static inline trd_arg_t trd_arg_ptr(void *v) { trd_arg_t a; a.kind = TRD_ARG_PTR; a.reserved = 0; a.value.ptr = v; return a; }
static inline trd_arg_t trd_arg_buffer(trd_buffer_t *v) { trd_arg_t a; a.kind = TRD_ARG_BUFFER; a.reserved = 0; a.value.buffer = v; return a; }
static inline trd_arg_t trd_arg_bits(uint64_t v) { trd_arg_t a; a.kind = TRD_ARG_BITS; a.reserved = 0; a.value.bits = v; return a; }

/* ----------------------------------------------------------------- bundles */

typedef struct trd_bundle_target {
    uint32_t struct_size;
    int32_t format;            /* enum trd_image_format */
    const char *backend;       /* "cuda" */
    const char *arch;          /* "sm90" */
    const void *image;
    uint64_t image_size;
    const char *metadata;      /* Triton metadata JSON text, or NULL */
} trd_bundle_target_t;

/* Writes a kernel bundle (docs/bundle.md) for name/signature and the targets
 * into a malloc'ed buffer the caller frees with trd_free(). */
TRD_API trd_status_t trd_bundle_write(const char *name, const char *signature,
                                      const trd_bundle_target_t *targets, uint32_t num_targets,
                                      void **data, uint64_t *size);
/* The same bundle written to `path` (its size to *size unless NULL): through a temporary beside
 * it, renamed over `path` only once whole, so that a failed write (a full disk) leaves the old
 * file as it was. */
TRD_API trd_status_t trd_bundle_write_file(const char *path, const char *name, const char *signature,
                                           const trd_bundle_target_t *targets, uint32_t num_targets,
                                           uint64_t *size);
TRD_API void trd_free(void *ptr);

/* ------------------------------------ prepared launches, native memory (TRIDENT_1.2) */

/* For callers that hold their own device memory and streams (XLA's buffers and CUstream, PyTorch's, a C program's
 * cuMemAlloc'ed pointers) and pack a launch's parameters themselves, as the XLA handlers (libtrident_xla) do. A
 * kernel is prepared for a device once (loaded, its parameters and scratch known); each launch then passes native
 * pointers on a native stream and takes no lock and allocates nothing in libtrident (the driver's own scratch arena
 * aside: pass the scratch to keep it out). Devices are found with trd_runtime_device_find ("cuda:0"). */

/* A tiled tensor map: the 128-byte descriptor (CUDA's CUtensorMap) through which the TMA unit of sm90 and newer
 * copies boxes of a tensor, which Triton passes by value for a host tensor descriptor it lowered to TMA. Described
 * as Triton and row-major arrays see the tensor: dimension 0 outermost, dimension rank-1 innermost and contiguous;
 * the driver reverses the dimensions and turns the strides into bytes for the vendor call. Enumerated values are
 * CUDA's (cuda.h): elem_type a CUtensorMapDataType, swizzle a CUtensorMapSwizzle, l2_promotion a
 * CUtensorMapL2promotion. The interleave is none and every element stride 1, as Triton encodes them. */
#define TRD_TENSOR_MAP_MAX_RANK 5
#define TRD_TENSOR_MAP_BYTES 128

typedef struct trd_tensor_map_desc {
    uint32_t struct_size;
    uint32_t rank;           /* 1 .. TRD_TENSOR_MAP_MAX_RANK */
    int32_t elem_type;       /* CUtensorMapDataType: 0 UINT8 ... 7 FLOAT32, 9 BFLOAT16, ... 15 16U6_ALIGN16B */
    uint32_t elem_size;      /* bytes of one element of the base array: the unit of strides (1 for the packed
                                16U4/16U6 types, whose base array is bytes) */
    void *base;              /* device address of element 0, 16-byte aligned (32 for 16U4_ALIGN16B, 16U6_ALIGN16B) */
    uint64_t shape[TRD_TENSOR_MAP_MAX_RANK];    /* elements along each dimension (packed types: values) */
    uint64_t strides[TRD_TENSOR_MAP_MAX_RANK];  /* in elements of elem_size bytes; strides[rank-1] is 1 */
    uint32_t box[TRD_TENSOR_MAP_MAX_RANK];      /* elements one copy moves along each dimension, 1 .. 256 */
    int32_t swizzle;         /* CUtensorMapSwizzle, 0 (none) .. 6 */
    int32_t oob_fill;        /* out-of-bounds elements read as 0: zero, 1: NaN (floating-point types only) */
    int32_t l2_promotion;    /* CUtensorMapL2promotion, 0 .. 3; Triton uses 2 (128 bytes) */
    uint32_t reserved;       /* 0 */
    const char *label;       /* what is encoded, for messages ("kernel 'k' argument 0 'a_desc'"), or NULL */
} trd_tensor_map_desc_t;

enum trd_copy_kind {
    TRD_COPY_HOST_TO_DEVICE = 1,
    TRD_COPY_DEVICE_TO_HOST = 2,
    TRD_COPY_DEVICE_TO_DEVICE = 3
};

/* A kernel loaded for one device. */
typedef struct trd_prepared trd_prepared_t;

/* How a launch parameter is passed. */
enum trd_param_kind {
    TRD_PARAM_SCALAR = 1,     /* its value, of `size` bytes */
    TRD_PARAM_POINTER = 2,    /* a device address (8 bytes) */
    TRD_PARAM_TENSOR_MAP = 3  /* a 128-byte tensor map (nvTmaDesc) by value: trd_device_tensor_map_encode */
};

typedef struct trd_param_info {
    uint32_t struct_size;
    int32_t kind;              /* enum trd_param_kind */
    uint32_t size;             /* bytes the launch passes: 8 for a pointer, TRD_TENSOR_MAP_BYTES for a tensor map */
    uint32_t pointer_depth;    /* the number of '*' of a pointer ("**fp32": 2); 0 otherwise */
    const char *name;          /* from the signature, or NULL when it names none */
    const char *scalar;        /* the Triton type of a scalar ("i32", "fp16"), the scalar at the end of a pointer's
                                  chain ("fp32" for "*fp32" and "**fp32"), "nvTmaDesc" for a tensor map */
} trd_param_info_t;

/* Launch parameter `index` (constexpr parameters removed, as trd_kernel_info_t.num_params counts) of the kernel.
 * Strings live as long as the kernel. NOT_FOUND for an index past the last; *info is written only on success. */
TRD_API trd_status_t trd_kernel_param_info(const trd_kernel_t *kernel, uint32_t index, trd_param_info_t *info);

/* Loads the kernel for the device (as trd_kernel_load) and returns a handle to launch it there with
 * trd_prepared_launch. The handle is the caller's: free it with trd_prepared_destroy before the kernel is
 * destroyed. Thread-safe; a failed load is reported (and remembered for the device) as trd_kernel_load does, and
 * *out is written only on success. */
TRD_API trd_status_t trd_kernel_prepare(trd_kernel_t *kernel, trd_device_t *device, trd_prepared_t **out);
/* NULL is allowed. No launch may be in progress on another thread. */
TRD_API void trd_prepared_destroy(trd_prepared_t *prepared);

/* The bytes of global and profile scratch (Triton's two scratch buffers) a launch of `grid` needs: programs x
 * num_ctas x the per-program size, aligned; 0 when the kernel uses none. INVALID_ARGUMENT for a grid
 * trd_kernel_launch refuses, LIMIT when the bytes do not fit 64 bits. Either out pointer may be NULL; both are
 * written only on success. Thread-safe, no lock, no allocation. */
TRD_API trd_status_t trd_prepared_scratch(const trd_prepared_t *prepared, const uint32_t grid[3],
                                          uint64_t *global_bytes, uint64_t *profile_bytes);

typedef struct trd_native_launch {
    uint32_t struct_size;
    uint32_t flags;              /* reserved, 0 */
    uint32_t grid[3];            /* as trd_launch_t's: each <= 2^31-1, < 2^63 in all; a zero makes it a no-op */
    uint32_t num_params;         /* the kernel's launch parameters (trd_kernel_info_t.num_params) */
    void *const *params;         /* params[i] points at parameter i's value, of trd_param_info_t.size bytes: a
                                    scalar's bytes, a device address, a 64-byte aligned tensor map; read before the
                                    call returns */
    trd_stream_t *stream;        /* a trident stream of the prepared device, or NULL with native_stream */
    void *native_stream;         /* the vendor's stream (CUstream, hipStream_t); NULL: the device's default (the
                                    host: runs before the call returns) */
    void *global_scratch;        /* the scratch trd_prepared_scratch says the grid needs, of the given size (at
                                    least that), or NULL: the driver's arena for the stream, allocated on first need */
    uint64_t global_scratch_size;
    void *profile_scratch;
    uint64_t profile_scratch_size;
} trd_native_launch_t;

/* Enqueues the prepared kernel with the caller's packed parameters. Checks the grid (as trd_kernel_launch), the
 * parameter count and the scratch sizes; the parameters' values are the caller's to get right (trd_param_info).
 * Thread-safe; takes no lock and allocates nothing (with the scratch given, or the arena grown). Safe while the
 * stream is being captured into a graph. */
TRD_API trd_status_t trd_prepared_launch(const trd_prepared_t *prepared, const trd_native_launch_t *launch);

/* Memory of a device the caller owns (native pointers: XLA's buffers, trd_buffer_address): `stream` a trident
 * stream of the device (trd_stream_wrap makes one over a native stream, once), ordering the work after what the
 * stream holds; NULL: synchronous. Nothing is range-checked: the pointers are the caller's. Thread-safe, no lock,
 * no allocation. */
TRD_API trd_status_t trd_device_memset(trd_device_t *device, void *dst, uint8_t value, uint64_t size,
                                       trd_stream_t *stream);
/* kind: enum trd_copy_kind (host memory must stay valid until the stream has passed the copy). */
TRD_API trd_status_t trd_device_memcpy(trd_device_t *device, void *dst, const void *src, uint64_t size,
                                       int32_t kind, trd_stream_t *stream);

/* Encodes a tensor map of the device's memory into out (TRD_TENSOR_MAP_BYTES bytes, 64-byte aligned as a kernel
 * parameter needs; written only on success), for a TRD_PARAM_TENSOR_MAP parameter. Host work only: no lock, no
 * allocation, safe while a stream is being captured. UNSUPPORTED where the device or its vendor library has no
 * tensor maps (CUDA sm90 and newer have them), INVALID_ARGUMENT with desc->label in the message for a descriptor
 * the vendor cannot encode. */
TRD_API trd_status_t trd_device_tensor_map_encode(trd_device_t *device, const trd_tensor_map_desc_t *desc,
                                                  void *out);

/* *capturing = 1 while the stream (or the native stream it wraps) is being captured into a graph, whose work runs
 * only when the graph is launched, so that nothing may wait for it; else 0 (always 0 for a driver whose streams
 * are never captured: the host). Written only on success. */
TRD_API trd_status_t trd_stream_capturing(const trd_stream_t *stream, int32_t *capturing);

/* Since TRIDENT_1.2, trd_event_record takes a NULL stream: the event is recorded on the device's default stream
 * (on the host, whose default-stream work runs before each call returns, it completes at once), so that work
 * launched with native_stream NULL can be timed. */

#ifdef __cplusplus
}
#endif

#endif /* TRIDENT_TRIDENT_H */
