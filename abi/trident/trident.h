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

/* One place the runtime searched for driver modules, in the order searched. Since TRIDENT_1.1. */
typedef struct trd_driver_search {
    uint32_t struct_size;
    uint32_t modules;        /* module files found there and tried (see trd_runtime_driver_info) */
    const char *path;        /* a directory, or a module file named in a driver path list */
    const char *origin;      /* "trd_runtime_desc_t.driver_path", "[runtime] driver_path (env
                                TRIDENT_DRIVER_PATH)", "the build tree of the libtrident in use", ... */
    const char *problem;     /* why it could not be searched ("No such file or directory"), or NULL */
} trd_driver_search_t;

TRD_API trd_status_t trd_runtime_driver_search_count(trd_runtime_t *runtime, uint32_t *count);
TRD_API trd_status_t trd_runtime_driver_search_info(trd_runtime_t *runtime, uint32_t index,
                                                    trd_driver_search_t *info);

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

#ifdef __cplusplus
}
#endif

#endif /* TRIDENT_TRIDENT_H */
