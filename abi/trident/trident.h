/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file trident.h
 * @brief The public C API of libtrident: devices, kernels, launches, memory, options and configuration.
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
 *
 * What every function below follows unless its comment says otherwise:
 *  - **Failure**: the return value is not TRD_OK, trd_error_message() on the
 *    calling thread names the input, the value and what was expected, and
 *    nothing is written through the out-parameters. A NULL handle or out
 *    pointer is TRD_ERR_INVALID_ARGUMENT; a struct_size smaller than the
 *    first published version of the struct is TRD_ERR_VERSION.
 *  - **Ownership**: an object a `_create`/`_alloc` call returns belongs to the
 *    caller, who releases it with the matching `_destroy`/`_free` (NULL is
 *    accepted and ignored); every object of a runtime is released before the
 *    runtime. Pointers passed in (descriptors, strings, argument arrays) are
 *    read during the call only, unless the comment says they are kept.
 *  - **Threads**: any thread may call any function, also at once on one
 *    object, except that an object is never destroyed while another thread
 *    uses it, and trd_config_t and trd_options_t objects are changed by one
 *    thread at a time (reading them from several threads while none changes
 *    them is safe).
 *  - **Host faults**: the host driver installs handlers for SIGSEGV, SIGBUS,
 *    SIGFPE and SIGILL when it loads its first kernel, so that a host
 *    kernel's fault fails its launch; signals raised elsewhere go to the
 *    handlers installed before ([driver.host] catch_faults = false turns
 *    this off).
 */
#ifndef TRIDENT_TRIDENT_H
#define TRIDENT_TRIDENT_H

#include <stddef.h>
#include <stdint.h>

#include <trident/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks a function libtrident exports. */
#if defined(__GNUC__)
#define TRD_API __attribute__((visibility("default")))
#else
#define TRD_API
#endif

/* ------------------------------------------------------------------ status */

/** What every function returns: TRD_OK (0) or an enum trd_status_code value. */
typedef int32_t trd_status_t;

/** The values of trd_status_t. */
enum trd_status_code {
    TRD_OK = 0,                   /**< success */
    TRD_ERR_INVALID_ARGUMENT = 1, /**< a caller's value is wrong */
    TRD_ERR_NOT_FOUND = 2,        /**< no such device, option, file, symbol */
    TRD_ERR_UNSUPPORTED = 3,      /**< valid, but not on this device/driver */
    TRD_ERR_NO_MEMORY = 4,        /**< host allocation failed */
    TRD_ERR_DEVICE = 5,           /**< the vendor API reported a failure (a kernel's fault among them) */
    TRD_ERR_IO = 6,               /**< reading or writing a file failed */
    TRD_ERR_FORMAT = 7,           /**< malformed input: image, metadata, bundle, ini */
    TRD_ERR_DRIVER = 8,           /**< a driver module is missing or broken */
    TRD_ERR_LIMIT = 9,            /**< a device or library limit was exceeded */
    TRD_ERR_NO_DEVICE = 10,       /**< no device can serve the request */
    TRD_ERR_VERSION = 11,         /**< an ABI or format version is not supported */
    TRD_ERR_STATE = 12,           /**< the object is not in a state that allows this */
    TRD_ERR_BUFFER_TOO_SMALL = 13,/**< a caller's buffer is too small (size reported) */
    TRD_ERR_INTERNAL = 14         /**< a bug of trident's: please report it */
};

/** The message of the last failure on this thread ("" when none). The text is
 * the library's, valid until the next trident call on this thread; every
 * thread has its own. Never fails. */
TRD_API const char *trd_error_message(void);
/** "TRD_ERR_NOT_FOUND" etc.; "TRD_ERR_UNKNOWN" for a value outside the enum.
 * A static string; never fails, any thread. */
TRD_API const char *trd_status_name(trd_status_t status);

/* ----------------------------------------------------------------- version */

/** TRD_MAKE_VERSION(major, minor, patch) of the loaded library (which may be
 * newer than the header's TRD_VERSION). Never fails, any thread. */
TRD_API uint32_t trd_version(void);
/** The loaded library's version as text ("0.1.0"); a static string. Never
 * fails, any thread. */
TRD_API const char *trd_version_string(void);
/** The loaded library's TRD_ABI_VERSION (its soname's major). Never fails,
 * any thread. */
TRD_API uint32_t trd_abi_version(void);

/* ----------------------------------------------------------------- logging */

/** Logging levels, from nothing to everything. */
enum trd_log_level {
    TRD_LOG_OFF = 0,   /**< nothing */
    TRD_LOG_ERROR = 1, /**< failures */
    TRD_LOG_WARN = 2,  /**< and what may be a mistake */
    TRD_LOG_INFO = 3,  /**< and what the runtime decided (drivers loaded, caches) */
    TRD_LOG_DEBUG = 4  /**< and every error set, as it is set */
};

/** Receives every message at or above the level. Called from any thread, at
 * once from several; `message` lives for the call only. */
typedef void (*trd_log_fn)(void *user, int32_t level, const char *message);

/** Sets the process-wide level. Logging is off unless TRIDENT_LOG=error|warn|info|debug,
 * a [runtime] log_level, or this call turns it on; a level set here wins over
 * both. Any thread. Fails (TRD_ERR_INVALID_ARGUMENT) for a level outside 0 .. 4,
 * leaving the level as it was. Without a callback, messages go to stderr
 * prefixed with "trident: <level>: ". */
TRD_API trd_status_t trd_log_set_level(int32_t level);
/** The process-wide level (enum trd_log_level). Never fails, any thread. */
TRD_API int32_t trd_log_get_level(void);
/** Sends the messages to `fn` (with `user`, kept until the next call) instead
 * of stderr; fn NULL restores stderr. Any thread: the call waits for a message
 * being delivered, so fn must not call it. Never fails. */
TRD_API trd_status_t trd_log_set_callback(trd_log_fn fn, void *user);

/* ----------------------------------------------------------------- handles */

/** A set of drivers and their devices, with a configuration (trd_runtime_create). */
typedef struct trd_runtime trd_runtime_t;
/** A driver module (only seen through trd_driver_info_t). */
typedef struct trd_driver trd_driver_t;
/** One device of a runtime; lives as long as its runtime, never destroyed by the caller. */
typedef struct trd_device trd_device_t;
/** A backend's option values (trd_options_create). */
typedef struct trd_options trd_options_t;
/** Configuration: ini files, environment, API values (trd_config_create). */
typedef struct trd_config trd_config_t;
/** A kernel with its images for one or more targets (trd_kernel_create). */
typedef struct trd_kernel trd_kernel_t;
/** An in-order queue of work on one device (trd_stream_create, trd_stream_wrap). */
typedef struct trd_stream trd_stream_t;
/** A point in a stream, for waiting and timing (trd_event_create). */
typedef struct trd_event trd_event_t;
/** Device memory (trd_buffer_alloc). */
typedef struct trd_buffer trd_buffer_t;

/* ------------------------------------------------------------------ config */

/** Flags of trd_config_create and trd_config_check_file. */
enum trd_config_flags {
    TRD_CONFIG_STRICT = 1u << 0 /**< unknown keys and unused TRIDENT_* variables are errors */
};

/** Where a configuration value came from (trd_config_entry_t.kind). */
enum trd_config_origin {
    TRD_ORIGIN_DEFAULT = 0, /**< the option table's default */
    TRD_ORIGIN_FILE = 1,    /**< an ini file */
    TRD_ORIGIN_ENV = 2,     /**< a TRIDENT_* environment variable */
    TRD_ORIGIN_API = 3      /**< trd_config_set */
};

/** One value of a configuration (trd_config_entry_get). Its strings belong to
 * the configuration and live until it is changed or destroyed. */
typedef struct trd_config_entry {
    uint32_t struct_size; /**< the caller's sizeof(trd_config_entry_t) */
    int32_t kind;        /**< enum trd_config_origin */
    const char *section; /**< "runtime", "driver.cuda", "backend.cuda", "device \"cuda:0\"" */
    const char *key;     /**< the option's name */
    const char *value;   /**< canonical text */
    const char *origin;  /**< "FILE:LINE", "env TRIDENT_CUDA_NUM_WARPS", "api" */
} trd_config_entry_t;

/** Receives one diagnostic: level is TRD_LOG_ERROR or TRD_LOG_WARN; file may be
 * NULL for environment variables; line is 0 when not from a file. The
 * strings live for the call only; called on the thread that loads. */
typedef void (*trd_diag_fn)(void *user, int32_t level, const char *file, uint32_t line,
                            const char *message);

/** Creates an empty configuration (no file or variable read yet) with `flags`
 * (enum trd_config_flags). The caller owns *out (trd_config_destroy). Fails
 * with TRD_ERR_INVALID_ARGUMENT for an unknown flag. */
TRD_API trd_status_t trd_config_create(uint32_t flags, trd_config_t **out);
/** Releases a configuration and every string read from it; NULL is ignored.
 * A runtime that borrows it must be destroyed first. */
TRD_API void trd_config_destroy(trd_config_t *config);
/** A diagnostic sink for what the load functions find (default: the log);
 * fn and user are kept until the next call. Fails only for a NULL config. */
TRD_API trd_status_t trd_config_set_diag(trd_config_t *config, trd_diag_fn fn, void *user);
/** Loads the standard sources in order, later overriding earlier:
 * $(sysconfdir)/trident/trident.ini, $XDG_CONFIG_HOME/trident/trident.ini
 * (~/.config when unset), the file named by TRIDENT_CONFIG, then TRIDENT_*
 * environment variables. Missing default files are not errors; a file named
 * by TRIDENT_CONFIG that cannot be read is. Every problem goes to the
 * diagnostic sink as FILE:LINE: message; the first error is the call's
 * failure (TRD_ERR_FORMAT, TRD_ERR_IO), with the values loaded before it kept. */
TRD_API trd_status_t trd_config_load_defaults(trd_config_t *config);
/** Loads one ini file (a regular file; FIFOs and devices are refused), its
 * values overriding earlier ones. TRD_ERR_IO when it cannot be read (nothing
 * applied); TRD_ERR_FORMAT for bad lines or values, each reported to the
 * diagnostic sink, the first in the message (the valid lines are applied). */
TRD_API trd_status_t trd_config_load_file(trd_config_t *config, const char *path);
/** Loads ini text; `name` is what messages call it ("test.ini"). Failures as
 * trd_config_load_file. The text is read during the call only. */
TRD_API trd_status_t trd_config_load_string(trd_config_t *config, const char *text,
                                            const char *name);
/** Loads the TRIDENT_* environment variables (each checked against its
 * option; in setuid processes the path-valued ones are ignored). Fails with
 * TRD_ERR_FORMAT naming the variable whose value is wrong. */
TRD_API trd_status_t trd_config_load_env(trd_config_t *config);
/** Sets a value through the API (the highest precedence); checked like a
 * file's: TRD_ERR_INVALID_ARGUMENT for an unknown section or key (the
 * nearest name in the message) or a value the option refuses; the
 * configuration is unchanged then. The strings are copied. */
TRD_API trd_status_t trd_config_set(trd_config_t *config, const char *section, const char *key,
                                    const char *value);
/** The value of section/key and where it came from. value and origin are
 * NULL-safe out pointers to the configuration's strings (valid until it
 * changes). TRD_ERR_NOT_FOUND when the key is unset. */
TRD_API trd_status_t trd_config_get(const trd_config_t *config, const char *section,
                                    const char *key, const char **value, const char **origin);
/** How many values are set (for trd_config_entry_get). */
TRD_API trd_status_t trd_config_entry_count(const trd_config_t *config, uint32_t *count);
/** The index-th value, in the order set; TRD_ERR_NOT_FOUND past the end. The
 * entry's strings live until the configuration changes. */
TRD_API trd_status_t trd_config_entry_get(const trd_config_t *config, uint32_t index,
                                          trd_config_entry_t *entry);
/** Validates a file without applying it: every problem goes to fn as
 * "FILE:LINE: message"; *errors (NULL-safe) receives the error count, also on
 * failure (1 when the file cannot be read). Returns TRD_OK when the file is
 * valid, TRD_ERR_FORMAT when not, TRD_ERR_IO when it cannot be read. Any thread. */
TRD_API trd_status_t trd_config_check_file(const char *path, uint32_t flags, trd_diag_fn fn,
                                           void *user, uint32_t *errors);

/* ----------------------------------------------------------------- options */

/** How an option's value is typed. */
enum trd_option_type {
    TRD_OPT_BOOL = 1,        /**< true or false */
    TRD_OPT_INT = 2,         /**< int64 */
    TRD_OPT_OPT_INT = 3,     /**< int64 or none */
    TRD_OPT_STRING = 4,      /**< a string */
    TRD_OPT_OPT_STRING = 5,  /**< string or none */
    TRD_OPT_ENUM = 6,        /**< one of a fixed set of strings */
    TRD_OPT_STRING_LIST = 7, /**< tuple of strings */
    TRD_OPT_PATH_MAP = 8,    /**< name -> path (extern_libs) */
    TRD_OPT_INT_TRIPLE = 9,  /**< (x, y, z) */
    TRD_OPT_OPT_BOOL = 10    /**< bool or none */
};

/** Where an option takes effect. */
enum trd_option_stage {
    TRD_STAGE_COMPILE = 1, /**< matters to the compiler only: carried, validated, hashed */
    TRD_STAGE_LOAD = 2,    /**< applied when a module is built or loaded */
    TRD_STAGE_LAUNCH = 3,  /**< applied at every launch */
    TRD_STAGE_RUNTIME = 4  /**< a runtime-wide setting */
};

/** trd_option_info_t.flags. */
enum trd_option_flags {
    TRD_OPTION_DERIVED = 1u << 0,   /**< the default is derived from the target */
    TRD_OPTION_NOT_FIELD = 1u << 1  /**< not a field of Triton's options class */
};

/** One row of a backend's option table. Its strings are static: they live
 * for the process. */
typedef struct trd_option_info {
    uint32_t struct_size;      /**< the caller's sizeof(trd_option_info_t) */
    int32_t type;              /**< enum trd_option_type */
    int32_t stage;             /**< enum trd_option_stage */
    uint32_t flags;            /**< enum trd_option_flags */
    const char *backend;       /**< "cuda", "hip", "xpu", "host", "runtime", "driver" */
    const char *name;          /**< the option's name, as Triton spells it */
    const char *type_name;     /**< "int", "bool", "Optional[int]", "Tuple[str]", ... */
    const char *default_value; /**< canonical text of the static default ("none" when none) */
    const char *derived;       /**< how a derived default is computed, or NULL */
    const char *values;        /**< accepted values ("a|b|c") or range, or NULL */
    const char *doc;           /**< what it does */
    const char *triton_since;  /**< first Triton release with the field, e.g. "3.0" */
    const char *triton_until;  /**< last release with it, or NULL when current */
    const char *env;           /**< the environment variable that sets it, or NULL */
} trd_option_info_t;

/** How many backends have option tables ("cuda", "hip", "xpu", "host", "runtime", "driver"). */
TRD_API trd_status_t trd_backend_count(uint32_t *count);
/** The index-th backend's name (a static string); TRD_ERR_NOT_FOUND past the end. */
TRD_API trd_status_t trd_backend_name(uint32_t index, const char **name);

/** How many rows the backend's table has (fields of every release it knows,
 * and trident's own rows); TRD_ERR_NOT_FOUND for an unknown backend. */
TRD_API trd_status_t trd_option_count(const char *backend, uint32_t *count);
/** The index-th row of the backend's table; TRD_ERR_NOT_FOUND past the end or
 * for an unknown backend. */
TRD_API trd_status_t trd_option_info(const char *backend, uint32_t index, trd_option_info_t *info);
/** The row named `name`: NOT_FOUND (with the nearest name in the message) when
 * name is not an option. */
TRD_API trd_status_t trd_option_lookup(const char *backend, const char *name,
                                       trd_option_info_t *info);
/** *present = 1 when name is an option of backend in the given Triton release
 * (NULL: the current one), else 0 (also for an unknown backend or name).
 * TRD_ERR_INVALID_ARGUMENT for a malformed release. */
TRD_API trd_status_t trd_option_exists(const char *backend, const char *name,
                                       const char *triton_version, int32_t *present);
/** The static default of an option in a release ("3.9", "3.7.1"; NULL: the table's current one), for
 * defaults that changed between releases (HIP's schedule_hint, 'none' up to 3.7, '' from 3.8); *value
 * is a static string.
 * NOT_FOUND when name is not an option of that release; UNSUPPORTED for a release the table does
 * not know (trd_option_releases). Since TRIDENT_1.1. */
TRD_API trd_status_t trd_option_default(const char *backend, const char *name,
                                        const char *triton_version, const char **value);

/** Which releases a backend's table knows (static strings). Since TRIDENT_1.1. */
typedef struct trd_option_releases {
    uint32_t struct_size; /**< the caller's sizeof(trd_option_releases_t) */
    const char *product; /**< "Triton", "intel-xpu-backend-for-triton"; NULL for trident's own tables */
    const char *oldest;  /**< the oldest release the rows know ("3.0") */
    const char *newest;  /**< the newest ("3.9"): the one trd_options_create follows */
    const char *tested;  /**< the releases CI compares the rows with, installed, space separated; "" if none */
} trd_option_releases_t;
/** Fills info for a backend; TRD_ERR_NOT_FOUND for an unknown one. Since TRIDENT_1.1. */
TRD_API trd_status_t trd_option_releases(const char *backend, trd_option_releases_t *info);

/** New options of a backend, every one at its static default (derived
 * defaults unresolved: see trd_options_create_for_device). The caller owns
 * *out (trd_options_destroy). TRD_ERR_NOT_FOUND for an unknown backend. */
TRD_API trd_status_t trd_options_create(const char *backend, trd_options_t **out);
/** Options for a device: derived defaults resolved from it (arch, fp8 types,
 * warp size ...), then the runtime configuration's [backend.X] and
 * [device "..."] values applied. The caller owns *out; the device need not
 * outlive it. */
TRD_API trd_status_t trd_options_create_for_device(const trd_device_t *device,
                                                   trd_options_t **out);
/** Releases options; NULL is ignored. A kernel created with them keeps its own copy. */
TRD_API void trd_options_destroy(trd_options_t *options);
/** An independent copy, owned by the caller. */
TRD_API trd_status_t trd_options_copy(const trd_options_t *options, trd_options_t **out);
/** The options' backend (a static string). */
TRD_API trd_status_t trd_options_backend(const trd_options_t *options, const char **backend);
/** Sets from text: "8", "true", "none", "sm90", "fp8e5,fp8e4nv",
 * "libdevice=/path/libdevice.bc", "1,1,1". TRD_ERR_NOT_FOUND for an unknown
 * name (the nearest in the message), TRD_ERR_INVALID_ARGUMENT for a value the
 * option refuses (the accepted ones in the message); the value is unchanged then. */
TRD_API trd_status_t trd_options_set(trd_options_t *options, const char *name, const char *value);
/** Sets an integer option; failures as trd_options_set. */
TRD_API trd_status_t trd_options_set_int(trd_options_t *options, const char *name, int64_t value);
/** Sets a bool option (0 or 1); failures as trd_options_set. */
TRD_API trd_status_t trd_options_set_bool(trd_options_t *options, const char *name, int32_t value);
/** Canonical text of the value into buf (NUL-terminated); *len (NULL-safe)
 * receives the length without the NUL. BUFFER_TOO_SMALL leaves buf as it was
 * and sets *len to what is needed (the one out-parameter written on failure). */
TRD_API trd_status_t trd_options_get(const trd_options_t *options, const char *name, char *buf,
                                     size_t cap, size_t *len);
/** An integer option's value; TRD_ERR_STATE when the value is none,
 * TRD_ERR_INVALID_ARGUMENT when the option is not an integer. */
TRD_API trd_status_t trd_options_get_int(const trd_options_t *options, const char *name,
                                         int64_t *value);
/** A bool option's value (0 or 1); TRD_ERR_STATE when none. */
TRD_API trd_status_t trd_options_get_bool(const trd_options_t *options, const char *name,
                                          int32_t *value);
/** *set = 1 when the value was set explicitly (not a default). */
TRD_API trd_status_t trd_options_is_set(const trd_options_t *options, const char *name,
                                        int32_t *set);
/** Resets one option to its default; name NULL resets every option. */
TRD_API trd_status_t trd_options_reset(trd_options_t *options, const char *name);
/** Canonical JSON object of every option (sorted keys): equal options give
 * byte-identical text. buf, cap and len as trd_options_get. */
TRD_API trd_status_t trd_options_serialize(const trd_options_t *options, char *buf, size_t cap,
                                           size_t *len);
/** SHA-256 over the canonical serialization, with each extern_libs path
 * replaced by the SHA-256 of the file's content (as Triton does); fails with
 * the file's error (TRD_ERR_IO, TRD_ERR_NOT_FOUND) naming the library when
 * such a file cannot be read. */
TRD_API trd_status_t trd_options_hash(const trd_options_t *options, uint8_t digest[32]);

/* ----------------------------------------------------------------- runtime */

/** trd_runtime_desc_t.flags. */
enum trd_runtime_flags {
    TRD_RUNTIME_NO_DEFAULT_DRIVERS = 1u << 0, /**< only desc->driver_path, not the installed ones */
    TRD_RUNTIME_NO_ENV = 1u << 1              /**< ignore TRIDENT_DRIVER_PATH and other env */
};

/** How trd_runtime_create starts. */
typedef struct trd_runtime_desc {
    uint32_t struct_size;    /**< the caller's sizeof(trd_runtime_desc_t) */
    uint32_t flags;          /**< enum trd_runtime_flags */
    const char *driver_path; /**< colon list of directories or module files, searched first (copied) */
    trd_config_t *config;    /**< NULL: trd_config_load_defaults(); borrowed otherwise: it must outlive the runtime */
} trd_runtime_desc_t;

/** Starts a runtime: loads the configuration (unless desc->config), finds and
 * initialises every driver module (a failing module is recorded, never
 * fatal: see trd_runtime_driver_info) and lists their devices. desc may be
 * NULL for the defaults. The caller owns *out (trd_runtime_destroy). Fails
 * with the configuration's error (TRD_ERR_FORMAT naming FILE:LINE or the
 * variable) rather than run with half of it. Any thread; several runtimes may
 * live at once. */
TRD_API trd_status_t trd_runtime_create(const trd_runtime_desc_t *desc, trd_runtime_t **out);
/** Releases the runtime, its devices and drivers; NULL is ignored. Every
 * kernel, stream, event, buffer and options object made from it must be
 * released first; the shared runtime must not be destroyed. */
TRD_API void trd_runtime_destroy(trd_runtime_t *runtime);
/** The process-wide runtime (default configuration), created on first use and
 * kept until exit; the XLA handlers and the Python package use it. Any thread
 * (the first call creates it once). Fails, every time, with the first
 * creation's error when that failed. Never destroy it. */
TRD_API trd_status_t trd_runtime_shared(trd_runtime_t **out);
/** The runtime's configuration (its own or the borrowed one); valid while the runtime lives. */
TRD_API trd_status_t trd_runtime_config(trd_runtime_t *runtime, const trd_config_t **config);
/** The directory of trident's disk caches: [runtime] cache_dir, else $XDG_CACHE_HOME/trident, else
 * ~/.cache/trident (the JIT cache uses it when jit_cache is on; trident.jax keeps compiled kernels and
 * autotuning choices there). *dir is the runtime's and lives as long as it; TRD_ERR_NOT_FOUND when there is
 * none (no HOME, no XDG_CACHE_HOME), *dir untouched. Any thread. Since TRIDENT_1.1. */
TRD_API trd_status_t trd_runtime_cache_dir(trd_runtime_t *runtime, const char **dir);

/* ----------------------------------------------------------------- drivers */

/** trd_driver_info_t.status. */
enum trd_driver_status {
    TRD_DRIVER_LOADED = 0,   /**< initialised: its devices are listed */
    TRD_DRIVER_SKIPPED = 1,  /**< not usable here: vendor library missing, disabled */
    TRD_DRIVER_FAILED = 2    /**< broken module: bad entry, ABI mismatch, init failed */
};

/** One driver module the runtime found. Its strings live as long as the runtime. */
typedef struct trd_driver_info {
    uint32_t struct_size;    /**< the caller's sizeof(trd_driver_info_t) */
    int32_t status;          /**< enum trd_driver_status */
    uint32_t device_count;   /**< devices this driver serves (after de-duplication) */
    uint32_t abi_version;    /**< the module's driver ABI version (0 if unknown) */
    const char *name;        /**< "cuda"; the file name when the module has no valid entry */
    const char *backend;     /**< "cuda", or "" when unknown */
    const char *path;        /**< the module's file, or "(built-in)" */
    const char *reason;      /**< why skipped or failed; notes (e.g. "0 devices: hipErrorNoDevice"); "" when none */
} trd_driver_info_t;

/** How many driver modules the runtime found (loaded, skipped and failed). */
TRD_API trd_status_t trd_runtime_driver_count(trd_runtime_t *runtime, uint32_t *count);
/** The index-th driver module, in the order found; TRD_ERR_NOT_FOUND past the end. */
TRD_API trd_status_t trd_runtime_driver_info(trd_runtime_t *runtime, uint32_t index,
                                             trd_driver_info_t *info);

/** One place the runtime searched for driver modules, in the order searched.
 * Its strings live as long as the runtime. Since TRIDENT_1.1. */
typedef struct trd_driver_search {
    uint32_t struct_size;    /**< the caller's sizeof(trd_driver_search_t) */
    uint32_t modules;        /**< module files found there and tried (see trd_runtime_driver_info) */
    const char *path;        /**< a directory, or a module file named in a driver path list */
    const char *origin;      /**< "trd_runtime_desc_t.driver_path", "[runtime] driver_path (env
                                TRIDENT_DRIVER_PATH)", "the build tree of the libtrident in use", ... */
    const char *problem;     /**< why it could not be searched ("No such file or directory"), or NULL */
} trd_driver_search_t;

/** How many places the runtime searched for driver modules. Since TRIDENT_1.1. */
TRD_API trd_status_t trd_runtime_driver_search_count(trd_runtime_t *runtime, uint32_t *count);
/** The index-th place searched; TRD_ERR_NOT_FOUND past the end. Since TRIDENT_1.1. */
TRD_API trd_status_t trd_runtime_driver_search_info(trd_runtime_t *runtime, uint32_t index,
                                                    trd_driver_search_t *info);

/* ----------------------------------------------------------------- devices */

/** trd_device_props_t.kind. */
enum trd_device_kind {
    TRD_DEVICE_GPU = 1, /**< a GPU */
    TRD_DEVICE_CPU = 2  /**< the host CPU */
};

/** trd_device_props_t.flags. */
enum trd_device_flags {
    TRD_DEVICE_HAS_UUID = 1u << 0,           /**< uuid is set */
    TRD_DEVICE_COOPERATIVE_LAUNCH = 1u << 1, /**< launch_cooperative_grid kernels run */
    TRD_DEVICE_CLUSTER_LAUNCH = 1u << 2      /**< thread-block clusters (num_ctas > 1) run */
};

/** What a device is. Its strings live as long as the runtime. */
typedef struct trd_device_props {
    uint32_t struct_size;    /**< the caller's sizeof(trd_device_props_t) */
    uint32_t index;          /**< position in the runtime's device list */
    int32_t kind;            /**< enum trd_device_kind */
    uint32_t flags;          /**< enum trd_device_flags */
    const char *uri;         /**< "driver:ordinal": "cuda:0", "host:0" */
    const char *driver;      /**< the serving driver's name */
    const char *backend;     /**< Triton backend: "cuda", "hip", "xpu", "host" */
    const char *name;        /**< the vendor's name of the device */
    const char *vendor;      /**< "NVIDIA", "AMD", "Intel", the CPU's vendor */
    const char *arch;        /**< "sm90", "gfx942", "x86_64" */
    const char *pci_bus_id;  /**< "0000:41:00.0", or NULL when unknown */
    uint32_t ordinal;        /**< the driver's (vendor's) device number */
    uint32_t warp_size;      /**< threads of a warp / wavefront / sub-group (1 on the host) */
    uint32_t compute_units;  /**< SMs, CUs, Xe cores, or the host's worker threads */
    uint32_t max_threads_per_block; /**< the largest block */
    uint64_t memory_bytes;   /**< device memory (the host's physical memory) */
    uint32_t max_shared_per_block;        /**< bytes without opt-in */
    uint32_t max_shared_per_block_optin;  /**< bytes with opt-in */
    uint8_t uuid[16];        /**< the vendor's UUID, with TRD_DEVICE_HAS_UUID */
} trd_device_props_t;

/** How many devices the runtime lists (fixed for its life). */
TRD_API trd_status_t trd_runtime_device_count(trd_runtime_t *runtime, uint32_t *count);
/** The index-th device; it lives as long as the runtime (never destroyed by
 * the caller). TRD_ERR_NOT_FOUND past the end. */
TRD_API trd_status_t trd_runtime_device_get(trd_runtime_t *runtime, uint32_t index,
                                            trd_device_t **device);
/** The device a selector names. selector: a URI ("cuda:1"), a list index ("2"),
 * "best" or NULL (a GPU before the host), a driver or backend name, or property
 * matches joined by ',' ("arch=sm90", "backend=cuda,name=H200",
 * "pci=0000:41:00.0", "uuid=..."): the first match. TRD_ERR_NO_DEVICE (naming
 * the selector and listing the devices) when none matches,
 * TRD_ERR_INVALID_ARGUMENT for a malformed selector. */
TRD_API trd_status_t trd_runtime_device_find(trd_runtime_t *runtime, const char *selector,
                                             trd_device_t **device);
/** Fills props (as much as props->struct_size holds). */
TRD_API trd_status_t trd_device_get_props(const trd_device_t *device, trd_device_props_t *props);
/** *match = 1 when the device matches the selector (same syntax as
 * device_find; "best" and NULL match every device), else 0;
 * TRD_ERR_INVALID_ARGUMENT for a malformed selector. */
TRD_API trd_status_t trd_device_matches(const trd_device_t *device, const char *selector,
                                        int32_t *match);

/* ------------------------------------------------------ streams and events */

/*
 * Lifetimes. Work queued on a stream (launches, copies, fills, event records)
 * runs after the call that queued it returns; the objects it uses may be
 * destroyed before it has run, and it still runs on them, as with CUDA and HIP:
 *  - trd_event_destroy while a record of the event is queued: the event is
 *    released once the stream has passed the record (the call does not wait;
 *    Level Zero's does, for the record).
 *  - trd_kernel_destroy while launches of the kernel are queued: they run with
 *    its code, which is unloaded after the last of them. The host driver
 *    returns at once; the GPU drivers wait for the device's queued work first
 *    (on Level Zero, work on a command list the caller passes per launch as
 *    native_stream, not wrapped, is the caller's to wait for: trident cannot).
 *  - trd_buffer_free while queued work reads or writes the buffer: the call
 *    waits for the work queued on the buffer's device before it, then frees
 *    (as cudaFree and hipFree do).
 *  - trd_stream_destroy with work queued: the call waits for that work, then
 *    releases the stream (a wrapped stream stays the caller's). Events
 *    recorded on it stay valid.
 *  - Kernel scratch the caller does not pass comes from the stream's arena
 *    (a trident stream's, wrapped ones too, freed with it), or for a launch
 *    on a native_stream not wrapped, from the device's arena for that handle
 *    (kept until the runtime is destroyed, which waits for the device's work
 *    first; on Level Zero a bare command list's work is the caller's to
 *    finish by then). A per-thread default stream (CU_STREAM_PER_THREAD,
 *    hipStreamPerThread) is another stream on each thread and gets none: a
 *    kernel that needs scratch there fails unless the launch passes it.
 * What the caller owns must live until the work using it has run: host memory
 * a queued copy reads or writes, a wrapped native stream. No object is
 * destroyed while another thread is inside a call that uses it, and every
 * object is destroyed before its runtime.
 *
 * Errors of queued work. A launch, copy or fill that fails as it is queued
 * fails the call that queues it. One that fails when the stream runs it (a
 * host launch whose scratch cannot be allocated, a kernel's fault on a GPU) is
 * reported by the next trd_stream_synchronize of that stream, and by
 * trd_event_synchronize of every event recorded on it after the failed work,
 * with a message naming the kernel (the one that failed; where the device
 * cannot tell, the last one launched on the stream). On the host the failure
 * is sticky until trd_stream_synchronize has reported it: the stream skips the
 * work queued after the failure (nothing computes on what the failed work
 * should have written) and events recorded meanwhile complete with the error;
 * once reported, the stream runs what is queued next. On a GPU the vendor's
 * rule applies: a kernel's fault is a sticky error of the device (CUDA, HIP)
 * that fails every later call on it.
 */

/** Creates an in-order queue of work on one device (the driver's own stream,
 * command list or executor thread). The caller owns *out
 * (trd_stream_destroy). Fails with the vendor's error (TRD_ERR_DEVICE) naming
 * the device. Work queued from several threads at once runs in the order the
 * calls reached the stream. */
TRD_API trd_status_t trd_stream_create(trd_device_t *device, trd_stream_t **out);
/** Wraps a stream the caller owns (CUstream, hipStream_t, a Level Zero command
 * list): trident launches on it without creating or switching contexts, and
 * never destroys it; the native stream must outlive the wrapper.
 * TRD_ERR_UNSUPPORTED for a driver without foreign streams (the host's). */
TRD_API trd_status_t trd_stream_wrap(trd_device_t *device, void *native, trd_stream_t **out);
/** Waits for the work queued on the stream, then releases it (a wrapped
 * native stream stays the caller's; see Lifetimes); NULL is ignored. */
TRD_API void trd_stream_destroy(trd_stream_t *stream);
/** Waits until the work queued on the stream before the call has run. A
 * failure of that work (a host launch whose scratch cannot be allocated, a
 * kernel's fault: the host's signal, CUDA's illegal address) is reported here
 * with a message naming the kernel (see Errors of queued work); on the host it
 * is reported once, and the stream runs what is queued next. Any thread. */
TRD_API trd_status_t trd_stream_synchronize(trd_stream_t *stream);
/** The vendor's stream behind it (CUstream, hipStream_t, ...; the host
 * stream itself), valid while the stream lives. */
TRD_API trd_status_t trd_stream_native(const trd_stream_t *stream, void **native);
/** The stream's device. */
TRD_API trd_status_t trd_stream_device(const trd_stream_t *stream, trd_device_t **device);

/** Creates an event of the device (not yet recorded). The caller owns *out (trd_event_destroy). */
TRD_API trd_status_t trd_event_create(trd_device_t *device, trd_event_t **out);
/** Releases an event; NULL is ignored. May be called while a record of the
 * event is queued: the event lives until the stream has passed it (see Lifetimes). */
TRD_API void trd_event_destroy(trd_event_t *event);
/** Queues the event on the stream: it completes when the stream has passed
 * the work queued before it, and stamps the device's clock then. The event
 * and the stream must be of one device (TRD_ERR_INVALID_ARGUMENT otherwise).
 * A NULL stream is the device's default stream (since TRIDENT_1.2; see
 * Prepared launches and native memory). */
TRD_API trd_status_t trd_event_record(trd_event_t *event, trd_stream_t *stream);
/** Waits until the event's last record has completed; an event never
 * recorded completes at once. Reports a failure of the work queued before the
 * record (see Errors of queued work). Any thread. */
TRD_API trd_status_t trd_event_synchronize(trd_event_t *event);
/** Milliseconds of the device's clock between two completed records of one
 * device (end - start). TRD_ERR_STATE (or the vendor's error) when either has
 * not been recorded or has not completed; *ms untouched then. */
TRD_API trd_status_t trd_event_elapsed(trd_event_t *start, trd_event_t *end, double *ms);

/* ------------------------------------------------------------------ memory */

/** Allocates `size` bytes (more than 0) of device memory. The memory is NOT
 * zeroed (trd_buffer_fill it when the contents matter). The caller owns *out
 * (trd_buffer_free, before the runtime is destroyed). Fails with
 * TRD_ERR_INVALID_ARGUMENT for size 0, TRD_ERR_NO_MEMORY or the vendor's error
 * when the device cannot hold it, naming the size and the device. On a host
 * device the buffer is 16-byte aligned and lies between guard pages, so that a
 * kernel's access past either end fails its launch naming the buffer
 * (README.md, "Host buffers"; [driver.host] guarded_buffers). */
TRD_API trd_status_t trd_buffer_alloc(trd_device_t *device, uint64_t size, trd_buffer_t **out);
/** Releases a buffer; NULL is ignored. Waits for the work queued on the
 * buffer's device first, then frees it (as cudaFree does; see Lifetimes). */
TRD_API void trd_buffer_free(trd_buffer_t *buffer);
/** The buffer's size in bytes, as allocated. */
TRD_API trd_status_t trd_buffer_size(const trd_buffer_t *buffer, uint64_t *size);
/** The device address (what a kernel's pointer argument receives), valid
 * while the buffer lives. */
TRD_API trd_status_t trd_buffer_address(const trd_buffer_t *buffer, void **address);
/** Copies size bytes from host memory at src into the buffer at offset.
 * stream NULL: synchronous (done on return). Otherwise ordered on the stream
 * (of the buffer's device); the host memory must stay valid until the stream
 * has passed the copy. TRD_ERR_INVALID_ARGUMENT when [offset, offset + size)
 * exceeds the buffer or the stream is another device's; size 0 does nothing. */
TRD_API trd_status_t trd_buffer_write(trd_buffer_t *dst, uint64_t offset, const void *src,
                                      uint64_t size, trd_stream_t *stream);
/** Copies size bytes of the buffer at offset to host memory at dst; stream,
 * ranges and failures as trd_buffer_write (with a stream, dst is written when
 * the stream passes the copy). */
TRD_API trd_status_t trd_buffer_read(const trd_buffer_t *src, uint64_t offset, void *dst,
                                     uint64_t size, trd_stream_t *stream);
/** Sets size bytes of the buffer at offset to value; stream, ranges and
 * failures as trd_buffer_write. */
TRD_API trd_status_t trd_buffer_fill(trd_buffer_t *buffer, uint64_t offset, uint64_t size,
                                     uint8_t value, trd_stream_t *stream);
/** Copies size bytes between two buffers of one device (TRD_ERR_UNSUPPORTED
 * across devices); stream, ranges and failures as trd_buffer_write. The
 * ranges may overlap only as memmove allows on the host; on GPUs they must not. */
TRD_API trd_status_t trd_buffer_copy(trd_buffer_t *dst, uint64_t dst_offset,
                                     const trd_buffer_t *src, uint64_t src_offset, uint64_t size,
                                     trd_stream_t *stream);

/* ----------------------------------------------------------------- kernels */

/** What trd_kernel_desc_t describes. */
enum trd_kernel_source {
    TRD_SOURCE_AUTO = 0,         /**< decide from the bytes / file name */
    TRD_SOURCE_BUNDLE = 1,       /**< a trident kernel bundle (docs/bundle.md) */
    TRD_SOURCE_TRITON_CACHE = 2, /**< a Triton cache entry: name.json or its directory */
    TRD_SOURCE_IMAGE = 3         /**< one raw image: format and target given */
};

/** The formats of kernel images. */
enum trd_image_format {
    TRD_FORMAT_UNKNOWN = 0,  /**< not known (yet) */
    TRD_FORMAT_CUBIN = 1,    /**< NVIDIA's ELF for one sm */
    TRD_FORMAT_PTX = 2,      /**< NVIDIA's virtual ISA, compiled by the driver (JIT, cached on disk) */
    TRD_FORMAT_FATBIN = 3,   /**< NVIDIA's fat binary */
    TRD_FORMAT_HSACO = 4,    /**< AMD's code object */
    TRD_FORMAT_SPIRV = 5,    /**< SPIR-V for Level Zero */
    TRD_FORMAT_ZEBIN = 6,    /**< Intel's native binary */
    TRD_FORMAT_HOST_SO = 7   /**< a host shared object (host_kernel.h) */
};

/** What trd_kernel_create reads. Only used during the call: every string and
 * byte is copied. */
typedef struct trd_kernel_desc {
    uint32_t struct_size;      /**< the caller's sizeof(trd_kernel_desc_t) */
    int32_t source;            /**< enum trd_kernel_source */
    const char *path;          /**< a file, or NULL with data/size */
    const void *data;          /**< bytes (copied), used when path is NULL */
    uint64_t size;             /**< bytes at data */
    const char *name;          /**< kernel name: picks the entry in a cache directory; entry symbol of a raw image */
    const char *signature;     /**< "*fp32,*fp32,i32,constexpr" or "x:*fp32,...", "" for no parameters (needed
                                  when the input has none; else it must agree with the input's) */
    const char *metadata;      /**< Triton metadata JSON for a raw image (optional) */
    int32_t format;            /**< enum trd_image_format, for a raw image */
    const char *target;        /**< "cuda:sm90", "hip:gfx942", "host:x86_64", for a raw image */
    const trd_options_t *options; /**< load-stage options (maxnreg, debug, ptx_options, extern_libs, ...); copied */
} trd_kernel_desc_t;

/** What a kernel is; its strings live as long as the kernel. */
typedef struct trd_kernel_info {
    uint32_t struct_size;      /**< the caller's sizeof(trd_kernel_info_t) */
    uint32_t num_params;       /**< parameters a launch passes (constexpr removed) */
    uint32_t num_targets;      /**< images (see trd_kernel_target_info) */
    uint32_t reserved;         /**< 0 */
    const char *name;          /**< the kernel's name */
    const char *signature;     /**< canonical form */
} trd_kernel_info_t;

/** One image of a kernel; its strings and image live as long as the kernel. */
typedef struct trd_target_info {
    uint32_t struct_size;      /**< the caller's sizeof(trd_target_info_t) */
    int32_t format;            /**< enum trd_image_format */
    uint64_t size;             /**< image bytes */
    const void *image;         /**< the image, owned by the kernel */
    const char *backend;       /**< "cuda", "hip", "xpu", "host" */
    const char *arch;          /**< "sm90", "gfx942", "x86_64" */
    const char *metadata;      /**< the target's metadata JSON (canonical text) */
    uint32_t num_warps;        /**< warps a program (block) */
    uint32_t num_ctas;         /**< CTAs of a cluster */
    uint32_t shared;           /**< dynamic shared memory bytes a block */
    uint32_t warp_size;        /**< threads a warp */
} trd_target_info_t;

/** What loading a kernel on a device gave. */
typedef struct trd_load_info {
    uint32_t struct_size;      /**< the caller's sizeof(trd_load_info_t) */
    int32_t format;            /**< the image that was loaded */
    uint32_t registers;        /**< per thread, 0 when the driver cannot tell */
    uint32_t spills;           /**< local memory bytes / 4, as Triton reports n_spills */
    uint32_t max_threads_per_block; /**< what the loaded function allows */
    uint32_t block_size;       /**< num_warps * warp_size */
    uint32_t shared;           /**< dynamic shared memory bytes per block */
    uint32_t from_cache;       /**< 1 when a JIT result came from the disk cache */
} trd_load_info_t;

/** Reads a kernel: a bundle, a Triton cache entry (its metadata, images and
 * the signature from the Triton IR beside it) or a raw image with a
 * signature. Nothing is loaded on a device yet (see trd_kernel_load). The
 * caller owns *out (trd_kernel_destroy, before the runtime). Fails with
 * TRD_ERR_IO / TRD_ERR_NOT_FOUND for an unreadable input, TRD_ERR_FORMAT for
 * malformed bytes or metadata, TRD_ERR_INVALID_ARGUMENT for a signature that
 * is missing or contradicts the input's, naming the input. */
TRD_API trd_status_t trd_kernel_create(trd_runtime_t *runtime, const trd_kernel_desc_t *desc,
                                       trd_kernel_t **out);
/** Releases a kernel and unloads it from every device; NULL is ignored. May
 * be called while launches of it are queued: they run with its code, unloaded
 * after the last of them (see Lifetimes). */
TRD_API void trd_kernel_destroy(trd_kernel_t *kernel);
/** Fills info. */
TRD_API trd_status_t trd_kernel_get_info(const trd_kernel_t *kernel, trd_kernel_info_t *info);
/** Fills info for the index-th image; TRD_ERR_NOT_FOUND past the end. */
TRD_API trd_status_t trd_kernel_target_info(const trd_kernel_t *kernel, uint32_t index,
                                            trd_target_info_t *info);
/** The bytes of global and profile scratch (Triton's two scratch buffers) a launch of `grid` of the kernel's
 * image `target` (an index as trd_kernel_target_info's) needs, by trd_prepared_scratch's rule (programs x num_ctas
 * x the per-program size, aligned; 0 when the image uses none) from the image's metadata alone: no device, so a
 * caller sizes scratch before it chooses one (trident.jax, while it lowers a call). TRD_ERR_INVALID_ARGUMENT for
 * a NULL kernel or grid or a grid trd_kernel_launch refuses, TRD_ERR_NOT_FOUND for a target past the last (as
 * trd_kernel_target_info), TRD_ERR_LIMIT when the bytes do not fit 64 bits. Either out pointer may be NULL; both
 * are written only on success. Thread-safe, no lock, no allocation. Since TRIDENT_1.3. */
TRD_API trd_status_t trd_kernel_scratch(const trd_kernel_t *kernel, uint32_t target, const uint32_t grid[3],
                                        uint64_t *global_bytes, uint64_t *profile_bytes);
/** *supported = 1 when the kernel has an image the device can run, else 0. */
TRD_API trd_status_t trd_kernel_supports(const trd_kernel_t *kernel, const trd_device_t *device,
                                         int32_t *supported);
/** Loads the kernel for a device now (launch does it lazily otherwise); info
 * may be NULL. Loading happens once per device (concurrent callers wait for
 * the first); a failed load (other than out of memory) is remembered and
 * reported again, so that a launch loop does not retry a failing JIT.
 * TRD_ERR_NO_DEVICE when no image suits the device, TRD_ERR_FORMAT / the
 * vendor's error when the image does not load, naming the kernel and device. */
TRD_API trd_status_t trd_kernel_load(trd_kernel_t *kernel, trd_device_t *device,
                                     trd_load_info_t *info);

/** One argument of a launch. The kind must suit the parameter's type in the
 * signature: pointers take PTR or BUFFER; integers INT or UINT (range
 * checked); floats FLOAT (converted) or BITS (the raw bit pattern). */
enum trd_arg_kind {
    TRD_ARG_INT = 1,    /**< value.i */
    TRD_ARG_UINT = 2,   /**< value.u */
    TRD_ARG_FLOAT = 3,  /**< value.f */
    TRD_ARG_PTR = 4,    /**< value.ptr, a device address */
    TRD_ARG_BUFFER = 5, /**< value.buffer */
    TRD_ARG_BITS = 6    /**< value.bits */
};

/** One launch argument (see the trd_arg_* helpers). */
typedef struct trd_arg {
    int32_t kind;  /**< enum trd_arg_kind */
    uint32_t reserved; /**< 0 */
    /** The value, as kind says. */
    union {
        int64_t i;            /**< TRD_ARG_INT */
        uint64_t u;           /**< TRD_ARG_UINT */
        double f;             /**< TRD_ARG_FLOAT */
        void *ptr;            /**< TRD_ARG_PTR */
        trd_buffer_t *buffer; /**< TRD_ARG_BUFFER */
        uint64_t bits;        /**< TRD_ARG_BITS */
    } value;
} trd_arg_t;

/** One launch (trd_kernel_launch). Read during the call only. */
typedef struct trd_launch {
    uint32_t struct_size;      /**< the caller's sizeof(trd_launch_t) */
    uint32_t flags;            /**< reserved, 0 */
    uint32_t grid[3];          /**< programs along x, y, z, each <= 2^31-1 and < 2^63 in all; a zero makes
                                  the launch a no-op */
    uint32_t num_args;         /**< entries of args: the kernel's num_params */
    const trd_arg_t *args;     /**< the arguments, in the signature's order */
    trd_stream_t *stream;      /**< a trident stream, or NULL with device + native_stream */
    trd_device_t *device;      /**< with native_stream */
    void *native_stream;       /**< the vendor's stream (NULL: the device's default/synchronous) */
    void *global_scratch;      /**< optional caller-provided scratch (else trident's arena) */
    void *profile_scratch;     /**< optional caller-provided profile scratch */
} trd_launch_t;

/** Checks the arguments against the signature, loads the kernel for the
 * stream's device on first use, and enqueues it. Thread-safe; takes no lock
 * and allocates nothing once the kernel is loaded for that device. Returns
 * once the launch is queued: a failure when it runs (a kernel's fault) is
 * reported by the stream's next synchronize (and, on GPUs, by the vendor's
 * later calls). Fails at once with TRD_ERR_INVALID_ARGUMENT naming the
 * argument (index, name, type) and the value, TRD_ERR_LIMIT for a grid the
 * device cannot run, or the load's error. */
TRD_API trd_status_t trd_kernel_launch(trd_kernel_t *kernel, const trd_launch_t *launch);

/** An integer argument (inline, no ABI cost). */
static inline trd_arg_t trd_arg_int(int64_t v) { trd_arg_t a; a.kind = TRD_ARG_INT; a.reserved = 0; a.value.i = v; return a; }
/** An unsigned integer argument. */
static inline trd_arg_t trd_arg_uint(uint64_t v) { trd_arg_t a; a.kind = TRD_ARG_UINT; a.reserved = 0; a.value.u = v; return a; }
/** A floating-point argument (converted to the parameter's type). */
static inline trd_arg_t trd_arg_float(double v) { trd_arg_t a; a.kind = TRD_ARG_FLOAT; a.reserved = 0; a.value.f = v; return a; }
/** A device address for a pointer parameter. */
static inline trd_arg_t trd_arg_ptr(void *v) { trd_arg_t a; a.kind = TRD_ARG_PTR; a.reserved = 0; a.value.ptr = v; return a; }
/** A buffer for a pointer parameter (its device must be the launch's). */
static inline trd_arg_t trd_arg_buffer(trd_buffer_t *v) { trd_arg_t a; a.kind = TRD_ARG_BUFFER; a.reserved = 0; a.value.buffer = v; return a; }
/** A raw bit pattern (fp16, bf16, fp8 scalars as their bits). */
static inline trd_arg_t trd_arg_bits(uint64_t v) { trd_arg_t a; a.kind = TRD_ARG_BITS; a.reserved = 0; a.value.bits = v; return a; }

/* ----------------------------------------------------------------- bundles */

/** One image of a bundle being written; read during the call only. */
typedef struct trd_bundle_target {
    uint32_t struct_size;      /**< the caller's sizeof(trd_bundle_target_t) */
    int32_t format;            /**< enum trd_image_format */
    const char *backend;       /**< "cuda" */
    const char *arch;          /**< "sm90" */
    const void *image;         /**< the image's bytes */
    uint64_t image_size;       /**< bytes at image */
    const char *metadata;      /**< Triton metadata JSON text, or NULL */
} trd_bundle_target_t;

/** Writes a kernel bundle (docs/bundle.md) for name/signature and the targets
 * (1 .. the format's limit) into a malloc'ed buffer the caller frees with
 * trd_free(). The signature and each target's metadata are checked first
 * (TRD_ERR_INVALID_ARGUMENT / TRD_ERR_FORMAT naming the target). */
TRD_API trd_status_t trd_bundle_write(const char *name, const char *signature,
                                      const trd_bundle_target_t *targets, uint32_t num_targets,
                                      void **data, uint64_t *size);
/** The same bundle written to `path` (its size to *size unless NULL): through a temporary beside
 * it, renamed over `path` only once whole, so that a failed write (a full disk) leaves the old
 * file as it was (TRD_ERR_IO naming the path). */
TRD_API trd_status_t trd_bundle_write_file(const char *path, const char *name, const char *signature,
                                           const trd_bundle_target_t *targets, uint32_t num_targets,
                                           uint64_t *size);
/** Frees what libtrident allocated for the caller (trd_bundle_write's data); NULL is ignored. */
TRD_API void trd_free(void *ptr);

/* ------------------------------------ prepared launches, native memory (TRIDENT_1.2) */

/** @name Prepared launches and native memory (TRIDENT_1.2)
 * For callers that hold their own device memory and streams (XLA's buffers and CUstream, PyTorch's, a C
 * program's cuMemAlloc'ed pointers) and pack a launch's parameters themselves, as the XLA handlers
 * (libtrident_xla) do. A kernel is prepared for a device once (loaded, its parameter sizes and per-program
 * scratch known); each launch then passes native pointers on a native stream and takes no lock and allocates
 * nothing in libtrident (the driver's scratch arena aside: pass the scratch to keep it out). Devices are found
 * with trd_runtime_device_find ("cuda:0"). Since TRIDENT_1.2 trd_event_record also takes a NULL stream: the
 * device's default stream (on the host, whose default-stream work runs before each call returns, the event
 * completes at once), so that work launched with native_stream NULL can be timed.
 * @{ */

/** Tensor maps: at most this many dimensions. */
#define TRD_TENSOR_MAP_MAX_RANK 5
/** Tensor maps: the bytes of one (CUDA's CUtensorMap), passed by value. */
#define TRD_TENSOR_MAP_BYTES 128

/** A tiled tensor map: the 128-byte descriptor (CUDA's CUtensorMap) through which the TMA unit of sm90 and
 * newer copies boxes of a tensor, which Triton passes by value for a host tensor descriptor it lowered to TMA.
 * Described as Triton and row-major arrays see the tensor: dimension 0 outermost, dimension rank-1 innermost and
 * contiguous; the driver reverses the dimensions and turns the strides into bytes for the vendor call.
 * Enumerated values are CUDA's (cuda.h). The interleave is none and every element stride 1, as Triton encodes
 * them. Read during trd_device_tensor_map_encode (and the driver's tensor_map_encode) and trd_tensor_map_check
 * only. */
typedef struct trd_tensor_map_desc {
    uint32_t struct_size;    /**< the caller's sizeof(trd_tensor_map_desc_t) */
    uint32_t rank;           /**< 1 .. TRD_TENSOR_MAP_MAX_RANK */
    int32_t elem_type;       /**< CUtensorMapDataType: 0 UINT8 ... 7 FLOAT32, 9 BFLOAT16, ... 15 16U6_ALIGN16B */
    uint32_t elem_size;      /**< bytes of one element of the base array: the unit of strides (1 for the packed
                                  16U4/16U6 types, whose base array is bytes) */
    void *base;              /**< device address of element 0, 16-byte aligned (32 for 16U4_ALIGN16B,
                                  16U6_ALIGN16B) */
    uint64_t shape[TRD_TENSOR_MAP_MAX_RANK];   /**< elements along each dimension (packed types: values) */
    uint64_t strides[TRD_TENSOR_MAP_MAX_RANK]; /**< in elements of elem_size bytes; strides[rank-1] is 1 */
    uint32_t box[TRD_TENSOR_MAP_MAX_RANK];     /**< elements one copy moves along each dimension, 1 .. 256 */
    int32_t swizzle;         /**< CUtensorMapSwizzle, 0 (none) .. 6 */
    int32_t oob_fill;        /**< out-of-bounds elements read as 0: zero, 1: NaN (floating-point types only) */
    int32_t l2_promotion;    /**< CUtensorMapL2promotion, 0 .. 3; Triton uses 2 (128 bytes) */
    uint32_t reserved;       /**< 0 */
    const char *label;       /**< what is encoded, for messages ("kernel 'k' argument 0 'a_desc'"), or NULL */
} trd_tensor_map_desc_t;

/** The direction of trd_device_memcpy (and of the drivers' mem_copy). */
enum trd_copy_kind {
    TRD_COPY_HOST_TO_DEVICE = 1,   /**< host memory to the device's */
    TRD_COPY_DEVICE_TO_HOST = 2,   /**< the device's memory to host memory */
    TRD_COPY_DEVICE_TO_DEVICE = 3  /**< within the device's memory */
};

/** A kernel loaded for one device (trd_kernel_prepare), launched with trd_prepared_launch. */
typedef struct trd_prepared trd_prepared_t;

/** How a launch parameter is passed (trd_param_info_t.kind). */
enum trd_param_kind {
    TRD_PARAM_SCALAR = 1,     /**< its value, of `size` bytes */
    TRD_PARAM_POINTER = 2,    /**< a device address (8 bytes) */
    TRD_PARAM_TENSOR_MAP = 3  /**< a 128-byte tensor map (nvTmaDesc) by value: trd_device_tensor_map_encode */
};

/** One launch parameter of a kernel (trd_kernel_param_info). */
typedef struct trd_param_info {
    uint32_t struct_size;      /**< the caller's sizeof(trd_param_info_t) */
    int32_t kind;              /**< enum trd_param_kind */
    uint32_t size;             /**< bytes the launch passes: 8 for a pointer, TRD_TENSOR_MAP_BYTES for a tensor map */
    uint32_t pointer_depth;    /**< the number of '*' of a pointer ("**fp32": 2); 0 otherwise */
    const char *name;          /**< from the signature, or NULL when it names none */
    const char *scalar;        /**< the Triton type of a scalar ("i32", "fp16"), the scalar at the end of a
                                    pointer's chain ("fp32" for "*fp32" and "**fp32"), "nvTmaDesc" for a tensor map */
} trd_param_info_t;

/** Launch parameter `index` (constexpr parameters removed, as trd_kernel_info_t.num_params counts) of the kernel
 * into *info. Its strings live as long as the kernel. Thread-safe. TRD_ERR_NOT_FOUND for an index past the last,
 * TRD_ERR_VERSION for a struct_size too small; *info is written only on success. */
TRD_API trd_status_t trd_kernel_param_info(const trd_kernel_t *kernel, uint32_t index, trd_param_info_t *info);

/** Loads the kernel for the device (as trd_kernel_load) and returns a handle to launch it there with
 * trd_prepared_launch. The handle is the caller's: free it with trd_prepared_destroy before the kernel is
 * destroyed (several handles of one kernel and device share its one load). Thread-safe; a failed load is
 * reported (and remembered for the device) as trd_kernel_load does, TRD_ERR_NO_MEMORY when the handle cannot
 * be allocated; *out is written only on success. */
TRD_API trd_status_t trd_kernel_prepare(trd_kernel_t *kernel, trd_device_t *device, trd_prepared_t **out);
/** Frees a handle of trd_kernel_prepare (the kernel stays loaded); NULL is ignored. No launch may be in progress
 * with it on another thread. */
TRD_API void trd_prepared_destroy(trd_prepared_t *prepared);

/** The bytes of global and profile scratch (Triton's two scratch buffers) a launch of `grid` needs: programs x
 * num_ctas x the per-program size, aligned; 0 when the kernel uses none. TRD_ERR_INVALID_ARGUMENT for a grid
 * trd_kernel_launch refuses, TRD_ERR_LIMIT when the bytes do not fit 64 bits. Either out pointer may be NULL;
 * both are written only on success. Thread-safe, no lock, no allocation. */
TRD_API trd_status_t trd_prepared_scratch(const trd_prepared_t *prepared, const uint32_t grid[3],
                                          uint64_t *global_bytes, uint64_t *profile_bytes);

/** One launch of a prepared kernel (trd_prepared_launch). Read during the call only. */
typedef struct trd_native_launch {
    uint32_t struct_size;        /**< the caller's sizeof(trd_native_launch_t) */
    uint32_t flags;              /**< reserved, 0 */
    uint32_t grid[3];            /**< as trd_launch_t's: each <= 2^31-1, < 2^63 in all; a zero makes it a no-op */
    uint32_t num_params;         /**< the kernel's launch parameters (trd_kernel_info_t.num_params) */
    void *const *params;         /**< params[i] points at parameter i's value, of trd_param_info_t.size bytes: a
                                      scalar's bytes, a device address, a 64-byte aligned tensor map */
    trd_stream_t *stream;        /**< a trident stream of the prepared device, or NULL with native_stream */
    void *native_stream;         /**< the vendor's stream (CUstream, hipStream_t); NULL: the device's default (the
                                      host: runs before the call returns) */
    void *global_scratch;        /**< the scratch trd_prepared_scratch says the grid needs, or NULL: the driver's
                                      arena for the stream, allocated on first need */
    uint64_t global_scratch_size;  /**< bytes at global_scratch: at least what the grid needs */
    void *profile_scratch;       /**< as global_scratch, for the profile scratch */
    uint64_t profile_scratch_size; /**< bytes at profile_scratch */
} trd_native_launch_t;

/** Enqueues the prepared kernel with the caller's packed parameters. Checks the grid (as trd_kernel_launch), the
 * flags, the parameter count, the stream's device and the scratch sizes (TRD_ERR_INVALID_ARGUMENT naming the
 * value, TRD_ERR_LIMIT for scratch bytes past 64 bits); the parameters' values are the caller's to get right
 * (trd_kernel_param_info). Thread-safe; takes no lock and allocates nothing (with the scratch given, or the
 * arena grown), and is safe while the stream is being captured into a graph. A failure when the kernel runs is
 * reported as trd_kernel_launch's are. */
TRD_API trd_status_t trd_prepared_launch(const trd_prepared_t *prepared, const trd_native_launch_t *launch);

/** Sets size bytes of the device's memory at dst (a native pointer: XLA's buffers, trd_buffer_address) to value.
 * `stream`: a trident stream of the device (trd_stream_wrap makes one over a native stream, once), ordering the
 * work after what the stream holds; NULL: synchronous. Nothing is range-checked: the pointer is the caller's.
 * Thread-safe, no lock, no allocation. TRD_ERR_INVALID_ARGUMENT for a NULL dst with a size, a stream of another
 * device; the driver's error otherwise. */
TRD_API trd_status_t trd_device_memset(trd_device_t *device, void *dst, uint8_t value, uint64_t size,
                                       trd_stream_t *stream);
/** Copies size bytes between native pointers, `kind` an enum trd_copy_kind, ordered on `stream` as
 * trd_device_memset is (host memory must stay valid until the stream has passed the copy). Thread-safe, no
 * lock, no allocation. */
TRD_API trd_status_t trd_device_memcpy(trd_device_t *device, void *dst, const void *src, uint64_t size,
                                       int32_t kind, trd_stream_t *stream);

/** Encodes a tensor map of the device's memory into out (TRD_TENSOR_MAP_BYTES bytes, 64-byte aligned as a kernel
 * parameter needs; written only on success), for a TRD_PARAM_TENSOR_MAP parameter. Host work only: no lock, no
 * allocation, safe while a stream is being captured. TRD_ERR_UNSUPPORTED where the device or its vendor library
 * has no tensor maps (CUDA sm90 and newer have them), TRD_ERR_INVALID_ARGUMENT with desc->label in the message
 * for a descriptor the vendor cannot encode. */
TRD_API trd_status_t trd_device_tensor_map_encode(trd_device_t *device, const trd_tensor_map_desc_t *desc,
                                                  void *out);

/** *capturing = 1 while the stream (or the native stream it wraps) is being captured into a graph, whose work
 * runs only when the graph is launched, so that nothing may wait for it; else 0 (always 0 for a driver whose
 * streams are never captured: the host). Written only on success. Thread-safe. */
TRD_API trd_status_t trd_stream_capturing(const trd_stream_t *stream, int32_t *capturing);

/** What a prepared launch is to the vendor (trd_prepared_native_t.flags). */
enum trd_native_flags {
    TRD_NATIVE_PDL = 1u << 0,         /**< launched with programmatic dependent launch (Triton's launch_pdl) */
    TRD_NATIVE_COOPERATIVE = 1u << 1  /**< a cooperative launch (launch_cooperative_grid) */
};

/** A prepared kernel as the vendor launches it (trd_prepared_native): for a caller that puts the launch into a
 * graph itself instead of calling trd_prepared_launch (XLA's RECORD stage makes a kernel node of it). The vendor
 * grid is trd_native_launch_t.grid with x multiplied by cluster[0] (1 without clusters); the parameters are the
 * kernel's launch parameters followed by `extra_params` device pointers, Triton's global and profile scratch
 * (NULL where trd_prepared_scratch says the grid needs none). Its image and strings are the kernel's: they live,
 * at the same address, as long as the kernel. Since TRIDENT_1.4. */
typedef struct trd_prepared_native {
    uint32_t struct_size;      /**< the caller's sizeof(trd_prepared_native_t) */
    int32_t format;            /**< enum trd_image_format of the image loaded on the device */
    const void *image;         /**< that image's bytes, owned by the kernel */
    uint64_t image_size;       /**< bytes at image */
    const char *entry;         /**< the kernel's symbol in the image */
    uint32_t block[3];         /**< threads of a block: num_warps x warp_size, 1, 1 */
    uint32_t cluster[3];       /**< blocks of a cluster: num_ctas, 1, 1; 0, 0, 0 when num_ctas is 1 */
    uint32_t shared;           /**< dynamic shared memory bytes of a block */
    uint32_t flags;            /**< enum trd_native_flags */
    uint32_t extra_params;     /**< pointers after the kernel's own parameters: 2 */
    uint32_t reserved;         /**< 0 */
} trd_prepared_native_t;

/** Fills *info for the prepared kernel (written only on success). TRD_ERR_INVALID_ARGUMENT for a NULL argument,
 * TRD_ERR_VERSION for a struct_size too small. Thread-safe, no lock, no allocation. Since TRIDENT_1.4. */
TRD_API trd_status_t trd_prepared_native(const trd_prepared_t *prepared, trd_prepared_native_t *info);

/** @} */

/* --------------------------------------------- variants and tuning (TRIDENT_1.5) */

/** @name Kernels of several compiled configurations, chosen at run time (TRIDENT_1.5)
 * A bundle may hold several variants of one kernel: compiled configurations (block sizes, num_warps, stages),
 * each with its own images and metadata, sharing one signature. The kernel trd_kernel_create makes from it is
 * its variant 0, so that a caller that knows nothing of variants launches that one; trd_kernel_variant gives
 * the others. A tuner chooses among them at run time: the first launch for a (key, device arch) benchmarks every
 * variant on the caller's stream and buffers, and later launches run the choice with no lock and no allocation.
 * @{ */

/** One variant of a bundle being written (trd_bundle_write_variants); read during the call only. */
typedef struct trd_bundle_variant {
    uint32_t struct_size;               /**< the caller's sizeof(trd_bundle_variant_t) */
    uint32_t num_targets;               /**< entries of targets: 1 .. 64 */
    const trd_bundle_target_t *targets; /**< this configuration's images (one a target) */
    const char *config;                 /**< the configuration as text ("BLOCK_M=64,num_warps=4"), shown by `trident
                                           info` and the tuning table; NULL for none */
    const char *grid;                   /**< its launch dimensions rule, or NULL: 1 to 3 comma-separated integer
                                           expressions of the kernel's integer parameters (by name) and the config's
                                           NAME=integer pairs, with + - * / %, parentheses, cdiv, min and max
                                           ("cdiv(M,BLOCK_M),cdiv(N,BLOCK_N)") */
} trd_bundle_variant_t;

/** Writes a bundle of 1 .. 64 variants of one kernel (docs/bundle.md, format version 2; one variant without a
 * config is written as trd_bundle_write writes it) into a malloc'ed buffer the caller frees with trd_free().
 * Errors as trd_bundle_write's, naming the variant. */
TRD_API trd_status_t trd_bundle_write_variants(const char *name, const char *signature,
                                               const trd_bundle_variant_t *variants, uint32_t num_variants,
                                               void **data, uint64_t *size);
/** The same bundle written atomically to `path`, as trd_bundle_write_file. */
TRD_API trd_status_t trd_bundle_write_variants_file(const char *path, const char *name, const char *signature,
                                                    const trd_bundle_variant_t *variants, uint32_t num_variants,
                                                    uint64_t *size);
/** *count = the kernel's variants (1 for a kernel of one configuration). */
TRD_API trd_status_t trd_kernel_variant_count(const trd_kernel_t *kernel, uint32_t *count);
/** One variant of a kernel (trd_kernel_variant); its strings and kernel live as long as the kernel asked. */
typedef struct trd_variant_info {
    uint32_t struct_size;   /**< the caller's sizeof(trd_variant_info_t) */
    uint32_t index;         /**< the variant's index */
    trd_kernel_t *kernel;   /**< the variant, owned by the kernel asked (the kernel itself for index 0): launched
                               and loaded as any kernel */
    const char *config;     /**< its configuration text, "" when the bundle gives none */
    const char *grid;       /**< its launch dimensions rule (trd_bundle_variant_t.grid), "" when none */
} trd_variant_info_t;

/** Variant `index` of a kernel (0 is the kernel itself) into *info. TRD_ERR_NOT_FOUND past the last,
 * TRD_ERR_VERSION for a struct_size too small. Thread-safe. */
TRD_API trd_status_t trd_kernel_variant(trd_kernel_t *kernel, uint32_t index, trd_variant_info_t *info);
/** The grid variant `index` launches with these arguments, by its launch dimensions rule (dimensions it does not
 * give are 1). TRD_ERR_NOT_FOUND for a variant past the last or one without a rule, TRD_ERR_INVALID_ARGUMENT for
 * an argument the rule reads that is no integer, a division by zero, or a dimension outside 0 .. 2^32-1. No lock,
 * no allocation. *grid is written only on success. */
TRD_API trd_status_t trd_kernel_variant_grid(const trd_kernel_t *kernel, uint32_t index, const trd_arg_t *args,
                                             uint32_t num_args, uint32_t grid[3]);

/** Chooses among variants at run time (trd_tuner_create). */
typedef struct trd_tuner trd_tuner_t;

/** The longest tuning key, in bytes. */
#define TRD_TUNE_KEY_MAX 1024

/** Flags of trd_tuner_desc_t. */
enum trd_tuner_flags {
    TRD_TUNER_MEMORY_ONLY = 1 /**< keep choices in this process only, not in the runtime's cache directory */
};

/** What a tuner chooses among; read during trd_tuner_create only. */
typedef struct trd_tuner_desc {
    uint32_t struct_size;             /**< the caller's sizeof(trd_tuner_desc_t) */
    uint32_t flags;                   /**< enum trd_tuner_flags */
    trd_kernel_t *kernel;             /**< its variants are the candidates (when variants is NULL) */
    trd_kernel_t *const *variants;    /**< or: num_variants kernels of one runtime and one signature */
    uint32_t num_variants;            /**< entries of variants (1 .. 256) */
    uint32_t num_written;             /**< entries of written */
    const uint32_t *written;          /**< the launch parameters (indices among a launch's arguments) the kernel
                                         writes: pointers, saved before the benchmark and restored after each
                                         variant, so that they come out as one launch leaves them */
    /* TRIDENT_1.6 (struct_size covers them; zero or NULL: as before) */
    const char *cache_dir;            /**< NULL: the runtime's cache directory (trd_runtime_cache_dir); else the
                                         directory whose tune/ keeps the choices ("" keeps none on disk) */
    const void *identity;             /**< NULL, or identity_size bytes of what else a choice holds for (a caller's
                                         grids, hooks): a kept choice is used only for the same bytes */
    uint32_t identity_size;           /**< bytes at identity */
    uint32_t reserved;                /**< 0 */
    const char *log_name;             /**< NULL: "tune"; the word that starts the tuner's log lines and errors */
    const char *variant_noun;         /**< NULL: "variant"; what its log lines and errors call a variant */
} trd_tuner_desc_t;

/** A caller's own launch of one variant (trd_tuned_launch_t.launch_fn): launches variant `variant` with this
 * launch's arguments on its stream (or device), as the caller launches the kernel outside the tuner (its own
 * launch parameters, tensor maps, zeroing); TRD_OK, or an error with trd_error_message set. */
typedef trd_status_t (*trd_tuned_launch_fn)(void *user, uint32_t variant);

/** One launch through a tuner; read during the call only. */
typedef struct trd_tuned_launch {
    uint32_t struct_size;             /**< the caller's sizeof(trd_tuned_launch_t) */
    uint32_t key_size;                /**< bytes at key: 1 .. TRD_TUNE_KEY_MAX */
    const void *key;                  /**< what the choice depends on, as the caller sees it (shapes, dtypes) */
    const trd_launch_t *launch;       /**< arguments, stream or device, scratch and grid of every variant's launch */
    const uint32_t *grids;            /**< NULL, or 3 a variant: each variant's grid in place of launch->grid (a
                                         variant's block sizes decide its grid); NULL: a variant with a launch
                                         dimensions rule (trd_kernel_variant_grid) launches with its rule's grid,
                                         one without with launch->grid */
    const uint64_t *written_bytes;    /**< NULL, or one a written parameter: its bytes, needed where its argument is
                                         a TRD_ARG_PTR (a TRD_ARG_BUFFER's are the buffer's) */
    /* TRIDENT_1.6 (struct_size covers them; NULL: as before) */
    trd_tuned_launch_fn launch_fn;    /**< NULL: the tuner launches a variant with trd_kernel_launch(launch, its
                                         grid); else the tuner calls it for every launch of a variant, the
                                         benchmark's and the chosen one's (launch->args then only need to hold
                                         the written parameters, grid and grids are not read) */
    void *user;                       /**< launch_fn's first argument */
} trd_tuned_launch_t;

/** Makes a tuner over a kernel's variants (or a list of kernels). The tuner borrows the kernels: destroy it
 * first. TRD_ERR_INVALID_ARGUMENT, naming both, for variants whose signatures differ or that belong to two
 * runtimes, and for a written index that is no pointer parameter. */
TRD_API trd_status_t trd_tuner_create(const trd_tuner_desc_t *desc, trd_tuner_t **out);
/** Releases a tuner; NULL is ignored. No launch through it may be in progress. */
TRD_API void trd_tuner_destroy(trd_tuner_t *tuner);
/** Launches the variant chosen for (key, the launch's device arch). At the first launch for a key and arch the
 * choice is read from this process's memory, else from the runtime's cache directory (tune/ under
 * trd_runtime_cache_dir; a file that is not one trident wrote for these variants is ignored with a warning and
 * replaced), else made by a benchmark: every variant runs on the launch's stream and buffers (the written ones
 * restored after each), a variant that cannot load or launch here counts as infinitely slow, and the fastest is
 * kept in memory and on disk (written atomically). Threads that launch one key at once benchmark once: the
 * others wait for its choice. While the stream is being captured into a graph no choice is made: variant 0 runs,
 * a warning is logged once, and nothing is kept. Later launches for a known key take no lock and allocate
 * nothing. *variant (may be NULL) is the variant launched. Errors: TRD_ERR_INVALID_ARGUMENT for a key empty or
 * longer than TRD_TUNE_KEY_MAX, the launch's errors, or the first failure when no variant can run. */
TRD_API trd_status_t trd_tuner_launch(trd_tuner_t *tuner, const trd_tuned_launch_t *launch, uint32_t *variant);
/** The variant a tuner has chosen for (key, device's arch) and keeps (trd_tuner_launch launches it for the key
 * on this device with no lock), into *variant. TRD_ERR_NOT_FOUND while there is none: no launch of the key on the
 * device chose one yet (or the one that ran could not: a stream being captured, buffers that could not be saved);
 * TRD_ERR_INVALID_ARGUMENT for a key trd_tuner_launch refuses. Takes no lock and allocates nothing. TRIDENT_1.6. */
TRD_API trd_status_t trd_tuner_choice(const trd_tuner_t *tuner, const void *key, uint32_t key_size,
                                      const trd_device_t *device, uint32_t *variant);
/** Benchmarks every variant on the launch's stream and buffers, as trd_tuner_launch's first launch does, and
 * keeps nothing: times_ms[i] (num_times entries, at least the variant count) is variant i's milliseconds a
 * launch (INFINITY where it cannot run), *best (may be NULL) the fastest. The written buffers are restored: the
 * call leaves them as they were. The key is not used. Fails only when no variant can run (with the first
 * variant's error) or the written buffers cannot be saved or restored. */
TRD_API trd_status_t trd_tuner_benchmark(trd_tuner_t *tuner, const trd_tuned_launch_t *launch, double *times_ms,
                                         uint32_t num_times, uint32_t *best);

/** @} */

/* ------------------------------------------------- tensor maps' rule (TRIDENT_1.6) */

/** @name What a tensor map may be (TRIDENT_1.6)
 * @{ */

/** Whether desc describes a tensor map that trd_device_tensor_map_encode can encode: CUDA's requirements of
 * cuTensorMapEncodeTiled (cuda.h), checked without a device, the one rule the CUDA driver also encodes by. A NULL
 * base is a template whose buffer comes later (XLA's, at each execution): everything but the address is checked;
 * any other base must be 16-byte aligned (32 for 16U4_ALIGN16B and 16U6_ALIGN16B). TRD_OK, or
 * TRD_ERR_INVALID_ARGUMENT naming desc->label, the descriptor and the value at fault ("strides[0] is 72 bytes, not
 * a multiple of 16"); TRD_ERR_VERSION for a struct_size smaller than TRIDENT_1.2's. No lock, no allocation. */
TRD_API trd_status_t trd_tensor_map_check(const trd_tensor_map_desc_t *desc);

/** @} */

/* ------------------------------------------------ float scalars (TRIDENT_1.6) */

/** @name Float scalars as a launch packs them (TRIDENT_1.6)
 * For a caller that writes and reads the elements of fp16/bf16/fp32/fp64 arrays (the CLI does) and wants
 * libtrident's rounding: the one a launch packs a float argument with.
 * @{ */

/** Writes value as Triton float type `type` ("fp16", "bf16", "fp32", "fp64"; "f16", "f32", "f64" too) at out
 * (2, 2, 4 or 8 bytes, little-endian as every device trident runs on): fp16 and bf16 rounded to nearest even, an
 * infinity beyond the type's range (a launch refuses such an argument instead), NaN kept; fp32 as C converts.
 * TRD_ERR_INVALID_ARGUMENT for a type that is no float type (integers and fp8 are written as bits) or NULL out. */
TRD_API trd_status_t trd_float_encode(const char *type, double value, void *out);
/** Reads the float of type `type` at in into *value, exactly (every fp16, bf16 and fp32 value is a double).
 * TRD_ERR_INVALID_ARGUMENT as trd_float_encode. */
TRD_API trd_status_t trd_float_decode(const char *type, const void *in, double *value);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* TRIDENT_TRIDENT_H */
