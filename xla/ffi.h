/* SPDX-License-Identifier: Apache-2.0 */
/* ffi.h: what the XLA handler's files share. libtrident_xla is built over libtrident's public API only
 * (trident.h, and driver.h's error and log services), plus base/'s stateless sha256. */
#ifndef TRD_XLA_FFI_H
#define TRD_XLA_FFI_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <xla/ffi/api/c_api.h>

/* The FFI header the library is built against (jaxlib's, XLA_FFI_API 0.3 .. 0.5): built against the newest, it
 * tells each runtime the highest version both speak (ffi.c, xla_api_negotiate), so that one binary registers on
 * jaxlib 0.10.2 (0.3) to 0.12 (0.5). Names the 0.4 header changed, each under one name here. */
#if XLA_FFI_API_MAJOR != 0 || XLA_FFI_API_MINOR < 3
#error "libtrident_xla needs an XLA FFI header of API 0.3 or newer (jaxlib 0.10.2 or newer)"
#endif
#if XLA_FFI_API_MINOR >= 4
typedef XLA_FFI_InternalExtension xla_internal_ext;
#else
typedef XLA_FFI_Extension_Base xla_internal_ext;
#endif
/* The RECORD stage (API 0.4, jaxlib 0.11.1+) with its record extension (record_c_api.h, jaxlib 0.11.2+): built
 * only against a header that has both; otherwise the record handler refuses (record.c). */
#if XLA_FFI_API_MINOR >= 4 && defined(__has_include)
#if __has_include(<xla/ffi/api/record_c_api.h>)
#include <xla/ffi/api/record_c_api.h>
#define XLA_HAVE_RECORD 1
#endif
#endif
#ifndef XLA_HAVE_RECORD
#define XLA_HAVE_RECORD 0
#endif
/* The oldest runtime API the handlers work with (0.3: XLA_FFI_DeviceOrdinal_Get and the State API's stage). */
#define XLA_API_MINOR_OLDEST 3

#include <trident/driver.h>
#include <trident/trident.h>
#include <trident/xla.h>

#define XLA_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define XLA_MIN(a, b) ((a) < (b) ? (a) : (b))
#define XLA_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Reads the call's attributes. Each getter returns 1 and fills its output when
 * the attribute is there with the right type; else 0 and `err` says why. */
struct xla_attrs {
    const XLA_FFI_Attrs *attrs;
    char err[512];
};

int xla_attr_string(struct xla_attrs *a, const char *name, const char **data, size_t *len);
/* An array of integers (S8 .. S64, U8 .. U64), converted to int64. */
int xla_attr_ints(struct xla_attrs *a, const char *name, int64_t *out, size_t cap, size_t *count);
/* The same into a malloc'ed array (at least one element) the caller frees. */
int xla_attr_ints_new(struct xla_attrs *a, const char *name, size_t cap, int64_t **out, size_t *count);
int xla_attr_int(struct xla_attrs *a, const char *name, int64_t *out);
/* 1 when the call has the attribute (of any type). */
int xla_attr_present(struct xla_attrs *a, const char *name);

/* XLA dtypes: Triton's name of the element ("fp32"; NULL for one Triton has none for), bytes, NumPy's name. */
const char *xla_dtype_triton(XLA_FFI_DataType t);
size_t xla_dtype_bytes(XLA_FFI_DataType t);
const char *xla_dtype_name(XLA_FFI_DataType t);

/* Sets libtrident's message of the calling thread (trd_error_message) and returns st; xla_wrap prefixes it. */
#define xla_fail trd_driver_error
trd_status_t xla_wrap(trd_status_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define xla_log trd_driver_log

/* tma.c: tensor-map parameters (arg_kind 4). */
#define XLA_TMA_MAX 16  /* per candidate */

struct xla_tma {
    uint32_t param;               /* the launch parameter it fills */
    int32_t base_kind;            /* 0 operand, 1 result */
    int64_t index;                /* of the base buffer */
    int fp4_padded;
    trd_tensor_map_desc_t desc;   /* all but the base address; label points at `label` */
    char label[160];              /* "kernel 'k' argument 3 'a_desc'", "kernel 'k' candidate 1 argument 3 'a_desc'" */
};

/* 128-byte maps as kernel parameters take them: 64-byte aligned. */
typedef struct {
    _Alignas(64) unsigned char bytes[TRD_TENSOR_MAP_BYTES];
} xla_tma_bytes;

/* INSTANTIATE: decodes and checks one record of the `tma` attribute (TRD_XLA_TMA_FIELDS values) for launch
 * parameter `param` of `kernel` (named pname, or NULL), autotune candidate `cand` (-1: the call's only kernel),
 * whose base is buffer `index` (arg_index). */
trd_status_t xla_tma_decode(const int64_t *record, const char *kernel, int64_t cand, uint32_t param,
                            const char *pname, int64_t index, struct xla_tma *out);
/* The first EXECUTE of a candidate on a device: the base buffer exists, has the map's element size and holds
 * every element the map reaches (the device's driver says at the first encoding whether it has tensor maps). */
trd_status_t xla_tma_check(XLA_FFI_CallFrame *f, const struct xla_tma *t);
/* EXECUTE: encodes the n maps from the buffers' addresses into out[] and points params[] at them. */
trd_status_t xla_tma_encode(XLA_FFI_CallFrame *f, const struct xla_tma *maps, uint32_t n, trd_device_t *dev,
                            xla_tma_bytes *out, void **params);

/* ------------------------------------------------------------- the call */

enum { PLATFORM_CUDA, PLATFORM_ROCM, PLATFORM_CPU, PLATFORM_COUNT };

#define XLA_MAX_PARAMS 512
#define XLA_MAX_ZERO 64          /* results one candidate zeroes */
#define XLA_MAX_CANDIDATES 256
#define XLA_MAX_ORDINALS 64      /* XLA device ordinals with a lock-free slot lookup */
#define XLA_STREAM_CACHE 8

struct xla_param {
    int32_t kind;         /* enum trd_xla_arg_kind */
    int64_t index;
    trd_param_info_t info; /* from the signature: its strings live as long as the kernel */
};

/* Calls of one kernel share one trd_kernel_t (and its loaded modules): the
 * cache is keyed by the bytes of the call (bundle, options, platform). */
struct xla_cached_kernel {
    uint8_t key[32];
    trd_kernel_t *kernel;
    unsigned refs;
    struct xla_cached_kernel *next;
};

/* One kernel the call may launch: its only one, or an autotune candidate. */
struct xla_cand {
    struct xla_cached_kernel *ck;
    trd_kernel_t *kernel;
    const char *name, *signature;  /* the kernel's */
    uint32_t grid[3];
    uint32_t nzero;
    const int64_t *zero;   /* results zeroed before each launch (into the call's array) */
    const struct xla_tma *tma;  /* its c->ntma tensor maps (into the call's array): its own, since a map's box
                                   comes from the candidate's compilation */
};

/* A candidate prepared for a device: what launching it there needs. */
struct xla_run {
    const struct xla_cand *cand;
    trd_prepared_t *prepared;   /* the slot's (slot->prepared[i]) */
    uint64_t scratch_need[2];   /* bytes of global and profile scratch its grid needs */
};

struct xla_stream_wrap {
    _Atomic(void *) native;           /* the key, claimed first */
    _Atomic(trd_stream_t *) wrapped;  /* libtrident's stream over it, published second */
};

/* record.c: what updating the slot's kernel node needs (one block, immutable once published). */
struct xla_record_plan;

/* record.c: a record plan small enough to sit in the call's first cache line, for the first ordinal recorded. An
 * update comes after a whole execution, when the call's memory is cold: with it, an update reads one line of the
 * call and nothing else of trident's. */
#define XLA_HOT_WORDS 14
struct xla_hot_plan {
    _Alignas(64) _Atomic int32_t ordinal; /* XLA's device ordinal it serves: -1 none yet, -2 being written */
    uint16_t nargs;
    uint8_t nvalues;
    _Atomic uint8_t log_updates;   /* debug logging was on at the call's last creation: its updates are logged */
    uint32_t words[XLA_HOT_WORDS]; /* the plan's arguments, then its values (8-byte aligned): record.c */
};
_Static_assert(sizeof(struct xla_hot_plan) == 64, "one cache line");

/* The call on one device. */
struct xla_slot {
    trd_device_t *dev;
    uint32_t index;                 /* the device's in the runtime's list */
    const char *uri, *arch, *name;  /* the device's */
    struct xla_run run;           /* what EXECUTE launches; set before the slot is published by ordinal */
    atomic_int checked;
    atomic_int recorded;            /* a kernel node of its launch was made (record.c): nothing blocks one */
    _Atomic(struct xla_record_plan *) plan; /* published before `recorded` (NULL: none, e.g. tensor maps) */
    struct xla_stream_wrap streams[XLA_STREAM_CACHE];
    pthread_mutex_t tune_lock;    /* an autotuned call's choice on this device, and prepared[] */
    trd_prepared_t **prepared;    /* per candidate, made on first need */
};

struct xla_tune;

struct xla_call {
    struct xla_hot_plan hot;         /* first: the line an update reads (the call is allocated 64-byte aligned) */
    int platform;
    trd_runtime_t *rt;
    const char *name;
    uint32_t nparams;
    struct xla_param params[XLA_MAX_PARAMS];
    uint64_t storage[XLA_MAX_PARAMS];   /* scalars packed; pointers filled per execute */
    int64_t scratch[2];
    uint32_t ncand;
    struct xla_cand *cands;
    int64_t *zero;                   /* every candidate's zeroed results */
    uint32_t ntma;                   /* tensor-map parameters, the same in every candidate */
    struct xla_tma *tma;             /* ncand * ntma: candidate i's maps at i * ntma, in parameter order */
    struct xla_tune *tune;           /* NULL: one candidate, launched as it is */
    uint32_t ndev;
    _Atomic(struct xla_slot *) *slots;                       /* per trident device */
    _Atomic(struct xla_slot *) by_ordinal[XLA_MAX_ORDINALS]; /* ready slots by XLA's ordinal: the fast path */
    /* record.c: each ordinal's slot's record plan (its slot's, which owns it), for XLA's updates: one line of the
     * call read, not by_ordinal's and the slot's */
    _Atomic(const struct xla_record_plan *) plan_by_ordinal[XLA_MAX_ORDINALS];
    pthread_mutex_t lock;            /* making a slot */
};

/* The version the handlers report to the runtime `api` in their metadata: the older of its own and the header's
 * (every runtime accepts 0.1 up to its own). 0 with `err` naming both versions when there is none: a runtime of
 * another major version, or older than XLA_API_MINOR_OLDEST. */
int xla_api_negotiate(const XLA_FFI_Api *api, XLA_FFI_Api_Version *out, char *err, size_t cap);
/* 1 when the runtime's XLA_FFI_Api table covers the function `field` (one added after 0.1) and has it. */
#define XLA_API_HAS(api, field) \
    ((api)->struct_size >= offsetof(XLA_FFI_Api, field) + sizeof(void *) && (api)->field != NULL)

XLA_FFI_Error *xla_error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
XLA_FFI_Error_Code xla_errc(trd_status_t st);
uint64_t xla_buffer_bytes(const XLA_FFI_Buffer *b);

/* Prepares candidate i for the slot's device (once: kept in the slot). */
trd_status_t xla_run_load(const struct xla_call *c, struct xla_slot *s, uint32_t i, struct xla_run *out);
/* The first EXECUTE on a device: the buffers' element types against the signature, the zeroed results. */
XLA_FFI_Error *xla_check_buffers(XLA_FFI_CallFrame *f, const struct xla_call *c);
/* The first EXECUTE of a run on a device: the call's scratch results are large enough for it, and its tensor
 * maps' base buffers fit them. */
trd_status_t xla_run_check(XLA_FFI_CallFrame *f, const struct xla_call *c, const struct xla_slot *s,
                           const struct xla_run *r);
/* Zeroes the run's zeroed results, encodes its tensor maps and launches it on XLA's stream (NULL on the CPU):
 * EXECUTE's work. */
trd_status_t xla_run_launch(XLA_FFI_CallFrame *f, const struct xla_call *c, struct xla_slot *s,
                            const struct xla_run *r, void *stream);
/* The run's launch parameters from the frame's buffers: the packed scalars copied to storage[] with the buffers'
 * addresses put in, its tensor maps encoded into maps[], params[i] pointing at parameter i's value. */
trd_status_t xla_run_params(XLA_FFI_CallFrame *f, const struct xla_call *c, const struct xla_slot *s,
                            const struct xla_run *r, uint64_t *storage, xla_tma_bytes *maps, void **params);
/* The call's result that holds the run's scratch k (0 global, 1 profile), or -1 where its grid needs none. */
int64_t xla_run_scratch_result(const struct xla_call *c, const struct xla_run *r, int k);
/* The call's results that hold the run's global and profile scratch; NULL where its grid needs none. */
void xla_run_scratch(XLA_FFI_CallFrame *f, const struct xla_call *c, const struct xla_run *r,
                     const XLA_FFI_Buffer *out[2]);
/* Answers XLA's metadata query (1, *out the error or NULL) when the frame is one; else 0. Keeps the platform's API
 * table in xla_platform_api. */
int xla_metadata_query(XLA_FFI_CallFrame *f, int platform, int constructs_state, XLA_FFI_Error **out);
/* XLA's device ordinal of the call (1), or 0 where this XLA does not tell it. */
int xla_device_ordinal(XLA_FFI_CallFrame *f, int32_t *ordinal);
/* The state type's id in each platform's registry, and each platform's API table (from its metadata query). */
extern XLA_FFI_TypeId xla_state_id[PLATFORM_COUNT];
extern _Atomic(const XLA_FFI_Api *) xla_platform_api[PLATFORM_COUNT];

/* The platform's name in messages ("cuda", "rocm", "cpu") and its trident backend ("cuda", "hip", "host"). */
const char *xla_platform_name(int platform);
const char *xla_backend_of(int platform);

/* cache.c: the kernel of a bundle with options (a JSON attribute) on a platform, shared by every call of the same
 * bytes (a reference the call's state releases: xla_call_delete); the state type's deleter. */
trd_status_t xla_kernel_get(trd_runtime_t *rt, const char *bundle, size_t len, const char *opts, size_t olen,
                            int platform, struct xla_cached_kernel **out);
void xla_call_delete(void *call);

/* libtrident's stream over XLA's stream, made once per stream; NULL for NULL. */
trd_stream_t *xla_slot_stream(struct xla_slot *s, void *native);

/* autotune.c: an autotuned call (version 2 attributes). */
XLA_FFI_Error *xla_tune_create(const XLA_FFI_Api *api, struct xla_attrs *a, struct xla_call *c,
                               const char *bundles, size_t len, const int64_t *tma, size_t ntma);
void xla_tune_free(struct xla_tune *t);
/* The first EXECUTE on a device: launches the candidate libtrident's tuner chooses (kept in memory, on disk, or
 * benchmarked on the call's buffers) and sets *launched; where the tuner keeps that choice, makes it s->run and
 * sets *kept (while XLA's stream is being captured, or the aliased operands could not be copied aside, the tuner
 * launched candidate 0 and keeps nothing: the next execution asks again). Neither set: another thread made
 * s->run meanwhile. */
XLA_FFI_Error *xla_tune_choose(XLA_FFI_CallFrame *f, struct xla_call *c, struct xla_slot *s, void *stream,
                               int *launched, int *kept);

#endif
