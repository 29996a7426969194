/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h: what the parts of libtrident share and callers never see. */
#ifndef TRD_CORE_INTERNAL_H
#define TRD_CORE_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <trident/driver.h>
#include <trident/trident.h>

#include "base/error.h"
#include "base/formats.h"
#include "base/intern.h"
#include "base/log.h"
#include "base/scalars.h"
#include "base/selector.h"
#include "base/sha256.h"
#include "base/util.h"
#include "options/options.h"

/* ------------------------------------------------------------ signature */
/* (the scalar types, enum trd_scalar, and their names and sizes are base/scalars.h's) */

struct trd_param {
    char *name;       /* NULL when the signature gives none */
    int32_t type;     /* enum trd_scalar */
    int32_t elem;     /* pointee for TRD_T_PTR: a scalar, or TRD_T_PTR for a pointer to pointers */
    int32_t base;     /* TRD_T_PTR: the scalar at the end of the chain ("**fp32": fp32) */
    uint32_t depth;   /* TRD_T_PTR: the number of '*' ("*fp32": 1) */
    uint32_t size;    /* bytes passed to the kernel (0 for constexpr) */
    uint32_t align;
};

/* Pointers to pointers: Triton's str_to_ty and its IR nest without a fixed limit, but its
 * recursion stops them below Python's default recursion limit (Triton 3.6 compiles 983 levels). */
#define TRD_MAX_PTR_DEPTH 1000
/* Room for any parameter's type text ("***...fp8e4b15"). */
#define TRD_PARAM_TYPE_MAX (TRD_MAX_PTR_DEPTH + 16)

struct trd_signature {
    uint32_t count;       /* entries, constexpr included */
    uint32_t num_params;  /* entries passed at launch */
    struct trd_param *params;
    char *canonical;      /* "x:*fp32,y:*fp32,n:i32" */
};

/* Parses a comma list of Triton types, each optionally "name:type".
 * `what` names the input in errors ("signature of kernel X"). */
trd_status_t trd_signature_parse(const char *text, const char *what, struct trd_signature *out);
/* Reads the parameters of `tt.func public @name(...)` in Triton IR text. */
trd_status_t trd_signature_from_ttir(const char *ttir, size_t len, const char *name,
                                     const char *what, struct trd_signature *out);
void trd_signature_free(struct trd_signature *sig);
trd_status_t trd_signature_copy(const struct trd_signature *src, struct trd_signature *dst);
/* A signature given for a kernel that has its own (`what` names the kernel): the launch parameters
 * must agree in number, order and type (either signedness fills the IR's signless integers) and in
 * name where both name one. *out is the given signature with the names only the kernel's own has. */
trd_status_t trd_signature_merge(const struct trd_signature *own, const struct trd_signature *given,
                                 const char *what, struct trd_signature *out);
/* A parameter's type in Triton's notation ("**fp32", "i32") into buf (TRD_PARAM_TYPE_MAX bytes). */
void trd_param_type(const struct trd_param *p, char *buf, size_t cap);
/* A launch parameter as trd_kernel_param_info describes it (its strings are p's). */
void trd_param_info_of(const struct trd_param *p, trd_param_info_t *info);

/* What the two signature parsers share (signature.c: Triton's notation; ttir.c: Triton IR). */
/* Makes p a pointer, depth levels deep, to the scalar base. */
void trd_param_set_pointer(struct trd_param *p, uint32_t depth, int32_t base);
/* Appends a zeroed parameter to sig (cap: its allocated length), refusing more than the parsers' limit. */
trd_status_t trd_signature_push(struct trd_signature *sig, uint32_t *cap, const char *what);
/* Fills in num_params and the canonical text once every parameter is read. */
trd_status_t trd_signature_finish(struct trd_signature *sig, const char *what);
/* A character of an identifier (letters, digits, '_'). */
int trd_char_is_ident(char c);

/* ------------------------------------------------------------- metadata */

struct trd_meta {
    char *name;
    char *backend;        /* "cuda" */
    char *arch;           /* "sm90", "gfx942" */
    char *triton_version; /* or NULL */
    uint32_t num_warps;
    uint32_t num_ctas;
    uint32_t warp_size;
    uint32_t shared;
    uint32_t flags;       /* enum trd_module_flags */
    uint64_t global_scratch_size, global_scratch_align;
    uint64_t profile_scratch_size, profile_scratch_align;
    char *json;           /* canonical text of the whole metadata object */
    int from_json;        /* 0: defaults for a raw image without metadata */
};

/* Parses Triton's <name>.json (or the metadata object of a bundle target).
 * backend_hint fills a missing target. `what` names the input in errors. */
trd_status_t trd_meta_parse(const char *json, size_t len, const char *what, struct trd_meta *out);
/* Metadata for a raw image without JSON: defaults of the backend. */
trd_status_t trd_meta_default(const char *name, const char *backend, const char *arch,
                              struct trd_meta *out);
void trd_meta_free(struct trd_meta *meta);
trd_status_t trd_meta_copy(const struct trd_meta *src, struct trd_meta *dst);

/* --------------------------------------------------------------- images */

struct trd_target {
    int32_t format;       /* enum trd_image_format */
    uint8_t *image;       /* owned */
    uint64_t size;
    uint8_t sha256[32];
    struct trd_meta meta; /* backend and arch live here */
    uint32_t variant;     /* the compiled configuration it belongs to (0 in a kernel without variants) */
};

/* The format a file's bytes and name suggest, or TRD_FORMAT_UNKNOWN. */
int32_t trd_format_sniff(const void *data, size_t size, const char *filename);
/* 1 when data is a whole image of kernel `name` in format (what the format implies: an ELF of the backend's machine
 * whose tables and sections lie inside it and which names the kernel; PTX text with .version, .target, the
 * kernel's .entry and balanced braces; SPIR-V words with its magic); else 0 with the reason in why. Other formats
 * pass. python/trident/jax/triton_cache.py's image_problem applies the same rules (test_triton_cache holds them
 * together). */
int trd_image_check(int32_t format, const void *data, size_t size, const char *name, char *why, size_t cap);
void trd_target_free(struct trd_target *t);

/* 0 when the device cannot run the target; else a rank, higher preferred
 * (exact-arch binary > compatible binary > IR to JIT). */
int trd_target_rank(const struct trd_target *t, const trd_device_props_t *props);

/* -------------------------------------------------------- kernel sources */

struct trd_kernel_src {
    char *name;
    char *origin;              /* the input's path, for messages; NULL for bytes */
    struct trd_signature sig;  /* count == 0 when the source has none */
    uint32_t ntargets;
    struct trd_target *targets;
    uint32_t nvariants;        /* compiled configurations (a bundle's variants); 0 or 1: one */
    char **configs;            /* nvariants of them (NULL entries: none said), or NULL */
    char **grids;              /* nvariants launch dimensions rules (NULL entries: none), or NULL */
};

/* A variant's launch dimensions rule (core/grid_rule.c), compiled to a postfix program. */
#define TRD_GRID_RULE_MAX_OPS 64
struct trd_grid_rule {
    uint32_t nops, ndims;
    struct {
        int32_t op;
        int64_t value;
    } ops[TRD_GRID_RULE_MAX_OPS];
};
/* "cdiv(M,BLOCK_M),cdiv(N,BLOCK_N)" over sig's integer parameters and config's NAME=integer pairs; TRD_ERR_FORMAT
 * naming `what`, the rule and the place for one that does not parse or names something else. */
trd_status_t trd_grid_rule_compile(const char *text, const struct trd_signature *sig, const char *config,
                                   const char *what, struct trd_grid_rule *out);
/* The grid for a launch's arguments (missing dimensions 1); no lock, no allocation. */
trd_status_t trd_grid_rule_eval(const struct trd_grid_rule *rule, const trd_arg_t *args, uint32_t num_args,
                                const char *kernel, uint32_t grid[3]);

void trd_kernel_src_free(struct trd_kernel_src *src);
/* The signature a host image declares for `entry` (TRD_HOST_KERNEL_SIGNATURE); *found = 0 when none. */
trd_status_t trd_host_signature_read(const void *image, size_t size, const char *entry, const char *what,
                                     struct trd_signature *out, int *found);
/* Every host target's declared signature against src's (same launch types, in order); a src without a
 * signature takes the declared one. */
trd_status_t trd_host_signatures_check(struct trd_kernel_src *src);
trd_status_t trd_bundle_read(const void *data, size_t size, const char *what,
                             struct trd_kernel_src *out);
int trd_bundle_is(const void *data, size_t size);
/* path: <name>.json, or a directory with one kernel (or `name` picks one). read_signature 0: the caller
 * gives the signature, so the Triton IR beside it is not read (it may hold types trident does not parse). */
trd_status_t trd_triton_cache_read(const char *path, const char *name, int read_signature,
                                   struct trd_kernel_src *out);

/* ---------------------------------------------------------------- runtime */

struct trd_driver {
    char *name;            /* from the entry, or the file name */
    char *backend;
    char *path;
    char *reason;          /* why skipped/failed, or a note */
    int32_t status;        /* enum trd_driver_status */
    uint32_t abi_version;
    int32_t priority;
    uint32_t ndevices;     /* served after de-duplication */
    void *dl;
    const trd_driver_ops_t *ops;
    void *ctx;
    trd_runtime_t *rt;
};

/* An optional driver op, added to trd_driver_ops_t after version 1: NULL when the driver's table is older
 * (shorter) than the field or leaves it NULL. */
#define TRD_OPS_OPTIONAL(ops, field)                                                                             \
    ((ops)->struct_size >= offsetof(trd_driver_ops_t, field) + sizeof((ops)->field) ? (ops)->field : NULL)

struct trd_device {
    trd_runtime_t *rt;
    struct trd_driver *drv;
    uint32_t index;
    uint32_t ordinal;
    trd_device_props_t props;  /* strings point into the fields below */
    char *uri, *name, *vendor, *arch, *pci_bus_id, *backend;
    _Atomic(void *) handle;    /* the driver's opened device */
    pthread_mutex_t open_lock;
    trd_status_t open_status;  /* sticky failure of device_open */
    char *open_error;
};

/* One place the loader looked for driver modules (trd_runtime_driver_search). */
struct trd_search {
    char *path;
    char *origin;
    char *problem;     /* NULL when it could be searched */
    uint32_t modules;  /* module files found there and tried */
};

struct trd_runtime {
    trd_config_t *config;
    int own_config;
    struct trd_driver **drivers;
    uint32_t ndrivers;
    struct trd_search *searched;
    uint32_t nsearched;
    trd_device_t **devices;
    uint32_t ndevices;
    char *cache_dir;       /* JIT cache, or NULL when disabled */
    char *cache_root;      /* [runtime] cache_dir resolved (the JIT's and trident.jax's caches), or NULL */
};

struct trd_stream {
    trd_device_t *dev;
    void *h;
    int wrapped;
    /* The name of the kernel launched last on the stream (interned: it
     * outlives the kernel), for the message of a failed synchronize. */
    _Atomic(const char *) last_kernel;
};

struct trd_event {
    trd_device_t *dev;
    void *h;
    _Atomic(const char *) after_kernel; /* the stream's last kernel when recorded */
};

struct trd_buffer {
    trd_device_t *dev;
    void *ptr;
    uint64_t size;
};

/* The driver's handle for a device, opened on first use. */
trd_status_t trd_device_handle(trd_device_t *dev, void **handle);
trd_status_t trd_runtime_load_drivers(trd_runtime_t *rt, const char *path_list, uint32_t flags);
void trd_driver_unload(struct trd_driver *drv);
void trd_runtime_searched_free(trd_runtime_t *rt);
int trd_device_is_gpu(const trd_device_t *dev);
/* Options of the runtime's configuration for a device (options/ for its properties). */
trd_status_t trd_options_for_device_config(const trd_device_t *device, const trd_config_t *config,
                                           trd_options_t **out);

/* ---------------------------------------------------------------- kernels */

struct trd_loaded {
    trd_device_t *dev;
    const struct trd_target *target;
    void *module;
    trd_load_info_t info;
};

struct trd_kernel {
    trd_runtime_t *rt;
    struct trd_kernel_src src;
    const char *iname;           /* src.name, interned (trd_name_intern) */
    trd_options_t *options;      /* owned copy, or NULL */
    pthread_mutex_t load_lock;   /* serialises the load slow path of this kernel */
    uint32_t ndev;
    _Atomic(struct trd_loaded *) *slots;  /* per runtime device */
    trd_status_t *load_status;   /* sticky load failures, per device */
    char **load_error;
    /* A kernel of several compiled configurations is its variant 0; the others are kernels of their own, owned
     * here (core/variant.c). */
    uint32_t nvariants;          /* 1 for a kernel without variants */
    trd_kernel_t **variants;     /* nvariants; [0] is the kernel itself */
    char *config;                /* this variant's configuration text, or NULL */
    char *grid_text;             /* this variant's launch dimensions rule, or NULL */
    struct trd_grid_rule *grid_rule; /* compiled, or NULL */
};

/* ------------------------------------------------------------- tuning */

/* Choices kept in the process (core/tune_keep.c), by name (the choice's file, or its name without a cache
 * directory) and the variants' digest. claim: 1 with the choice known (*choice); 0 when this thread claimed it
 * and must put or release it; -1 for no claim (another thread's benchmark is taking too long, or no memory). */
int trd_tune_known_claim(const char *name, const uint8_t digest[32], uint32_t *choice);
void trd_tune_known_release(const char *name);
void trd_tune_known_put(const char *name, const uint8_t digest[32], uint32_t choice);
struct trd_tune_record {
    const char *kernel, *key_sha256, *arch, *device, *digest;
    const char *log_name, *noun;  /* how the log names the tuner ("tune") and a variant ("variant") */
    uint32_t n, choice;
    const double *times;         /* n, INFINITY where a variant cannot run */
    const char *const *configs;  /* n */
};
/* A choice's file (in dir): 1 with the choice it keeps for want's key, arch, n variants and digest; 0 when there
 * is none to use (said why in the log: a warning for a file trident did not write, another key's or arch's, or
 * one another user may have written). */
int trd_tune_file_load(const char *dir, const char *path, const struct trd_tune_record *want, uint32_t *choice);
/* Writes the record to path (dir made first) atomically; a failure is a warning: the choice stays in memory. */
void trd_tune_file_store(const char *dir, const char *path, const struct trd_tune_record *r);

/* A kernel with nothing read yet (one variant: itself); NULL when out of memory. */
trd_kernel_t *trd_kernel_new(trd_runtime_t *rt);
/* Splits a source of several variants (src->nvariants > 1): *out gets variant v's targets, moved out of src
 * (src keeps its other targets), with copies of its name, origin and signature and config. */
trd_status_t trd_kernel_src_take_variant(struct trd_kernel_src *src, uint32_t v, struct trd_kernel_src *out);
/* Builds k's variants 1.. from its source (k->src then keeps variant 0's targets); desc as trd_kernel_create's. */
trd_status_t trd_kernel_variants_make(trd_kernel_t *k, const trd_kernel_desc_t *desc);
/* Compiles k's grid rule text (variant v, for messages) once its signature is final. */
trd_status_t trd_kernel_variant_rule(trd_kernel_t *k, uint32_t v);
/* The steps of trd_kernel_create after the source is read (signature, options, device slots). */
trd_status_t trd_kernel_finish(trd_kernel_t *k, const trd_kernel_desc_t *desc);

/* Launch parameter arrays live on the stack: trd_kernel_create refuses kernels with more parameters. */
#define TRD_MAX_LAUNCH_PARAMS 512

/* Loads (or returns) the kernel for a device: the launch slow path. */
trd_status_t trd_kernel_loaded(trd_kernel_t *k, trd_device_t *dev, struct trd_loaded **out);

/* A launch's grid: at most 2^31-1 programs along each axis, as Triton's i32 program ids count,
 * and fewer than 2^63 in all, so that no driver's program count wraps. Zeros pass (an empty
 * launch). Each driver checks its device's own, lower limits. */
trd_status_t trd_grid_check(const uint32_t grid[3], const char *kernel);

/* Scratch (core/scratch.c), computed once here for every driver: the bytes
 * one program needs ([0] global, [1] profile), rounded up to the alignment
 * (UINT64_MAX where that overflows, so that any grid's product does), and a
 * launch's total for a checked grid, overflow-checked. */
void trd_scratch_per_program(const struct trd_meta *m, uint64_t per[2]);
trd_status_t trd_scratch_need(const uint64_t per[2], uint32_t num_ctas, const uint32_t grid[3], const char *kernel,
                              const char *uri, uint64_t need[2]);
/* Both at once for an image's metadata (its num_ctas); `where` names the device or image in errors. */
trd_status_t trd_scratch_of(const struct trd_meta *m, const uint32_t grid[3], const char *kernel, const char *where,
                            uint64_t need[2]);

/* Checks args against the signature and packs them: values into `storage`
 * (8 bytes a parameter), pointers into params[], sizes into sizes[]. */
trd_status_t trd_args_pack(const trd_kernel_t *k, const trd_device_t *dev, const trd_arg_t *args,
                           uint32_t num_args, uint64_t *storage, void **params, uint32_t *sizes);

/* float.c: binary64 to fp16 / bf16 rounded to nearest even; a float scalar (enum trd_scalar: FP16, BF16, FP32,
 * FP64) stored from and loaded to binary64, little-endian, as a launch packs it. */
uint16_t trd_float_to_half(double v);
uint16_t trd_float_to_bf16(double v);
void trd_float_store(int32_t type, double v, void *out);
double trd_float_load(int32_t type, const void *in);

#endif
