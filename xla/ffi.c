/* SPDX-License-Identifier: Apache-2.0 */
/* ffi.c: XLA custom-call handlers (typed FFI, a stage bundle).
 *
 * INSTANTIATE (once per executable) decodes the attributes into a call state:
 * the kernel of each candidate (one, or an autotuned call's several; bundles
 * shared through a content-addressed cache), the grids, where each kernel
 * parameter comes from, the scalars already packed. The first EXECUTE on a
 * device loads the kernel for it (its own driver, so a host with several GPU
 * models works), checks the buffers' types once, and for an autotuned call
 * chooses a candidate (autotune.c). After that EXECUTE copies the packed
 * parameters to the stack, puts the buffer addresses in, encodes the launched
 * candidate's tensor maps there (tma.c), zeroes what must be zeroed and
 * launches on XLA's stream: no parsing, no hashing, no lock, no heap
 * allocation, nothing that waits, so that it can be captured into a CUDA
 * graph.
 *
 * Everything goes through libtrident's public API: kernels prepared for a
 * device (trd_kernel_prepare, which checks the grid and overflow-checks the
 * scratch bytes) and launched from the packed parameters on XLA's stream
 * (trd_prepared_launch), trd_device_memset for zeroing, trd_stream_wrap over
 * XLA's stream once per stream, trd_device_tensor_map_encode for tensor maps,
 * trd_stream_capturing for graph captures. */
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "xla/ffi.h"

/* -------------------------------------------------------- kernel cache */

/* Calls of one kernel share one trd_kernel_t (and its loaded modules): the
 * cache is keyed by the bytes of the call (bundle, options, platform). */
struct xla_cached_kernel {
    uint8_t key[32];
    trd_kernel_t *kernel;
    unsigned refs;
    struct xla_cached_kernel *next;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xla_cached_kernel *cache;

static void cache_release(struct xla_cached_kernel *ck)
{
    pthread_mutex_lock(&cache_lock);
    if (--ck->refs == 0) {
        struct xla_cached_kernel **p = &cache;
        while (*p && *p != ck)
            p = &(*p)->next;
        if (*p)
            *p = ck->next;
        trd_kernel_destroy(ck->kernel);
        free(ck);
    }
    pthread_mutex_unlock(&cache_lock);
}

/* ---------------------------------------------------------- call state */

static void call_delete(void *p)
{
    struct xla_call *c = p;
    if (!c)
        return;
    for (uint32_t i = 0; c->slots && i < c->ndev; i++) {
        struct xla_slot *s = atomic_load(&c->slots[i]);
        if (!s)
            continue;
        for (uint32_t k = 0; k < c->ncand; k++)
            trd_prepared_destroy(s->prepared[k]);
        free(s->prepared);
        for (int k = 0; k < XLA_STREAM_CACHE; k++)
            trd_stream_destroy(atomic_load(&s->streams[k].wrapped));
        pthread_mutex_destroy(&s->tune_lock);
        free(s);
    }
    free(c->slots);
    xla_tune_free(c->tune);
    for (uint32_t i = 0; c->cands && i < c->ncand; i++)
        if (c->cands[i].ck)
            cache_release(c->cands[i].ck);
    free(c->cands);
    free(c->zero);
    free(c->tma);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* One type id per platform: each XLA FFI instance (jaxlib's CPU client, each GPU plugin) keeps its own type
 * registry and numbers types from its own counter, so an id one registry assigned may name another type in the
 * next (a state deleted by the wrong deleter). Each platform's registry assigns its own. */
XLA_FFI_TypeId xla_state_id[PLATFORM_COUNT];
static XLA_FFI_TypeInfo state_info = {XLA_FFI_TypeInfo_STRUCT_SIZE, NULL, call_delete};

TRD_API void *trd_xla_cuda_type_id(void)
{
    return &xla_state_id[PLATFORM_CUDA];
}

TRD_API void *trd_xla_rocm_type_id(void)
{
    return &xla_state_id[PLATFORM_ROCM];
}

TRD_API void *trd_xla_cpu_type_id(void)
{
    return &xla_state_id[PLATFORM_CPU];
}

TRD_API void *trd_xla_type_info(void)
{
    return &state_info;
}

TRD_API int32_t trd_xla_available(void)
{
    return 1;
}

/* -------------------------------------------------------------- errors */

XLA_FFI_Error *xla_error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg, code};
    return api->XLA_FFI_Error_Create(&a);
}

XLA_FFI_Error_Code xla_errc(trd_status_t st)
{
    switch (st) {
    case TRD_ERR_INVALID_ARGUMENT:
    case TRD_ERR_FORMAT: return XLA_FFI_Error_Code_INVALID_ARGUMENT;
    case TRD_ERR_NOT_FOUND:
    case TRD_ERR_NO_DEVICE: return XLA_FFI_Error_Code_NOT_FOUND;
    case TRD_ERR_UNSUPPORTED: return XLA_FFI_Error_Code_UNIMPLEMENTED;
    case TRD_ERR_NO_MEMORY:
    case TRD_ERR_LIMIT: return XLA_FFI_Error_Code_RESOURCE_EXHAUSTED;
    default: return XLA_FFI_Error_Code_INTERNAL;
    }
}

trd_status_t xla_wrap(trd_status_t st, const char *fmt, ...)
{
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    return xla_fail(st, "%s: %s", prefix, trd_error_message());
}

/* ------------------------------------------------------------ metadata */

static const char *platform_name(int platform)
{
    return platform == PLATFORM_CUDA ? "cuda" : platform == PLATFORM_ROCM ? "rocm" : "cpu";
}

int xla_api_negotiate(const XLA_FFI_Api *api, XLA_FFI_Api_Version *out, char *err, size_t cap)
{
    int major = api->api_version.major_version, minor = api->api_version.minor_version;
    if (major != XLA_FFI_API_MAJOR || minor < XLA_API_MINOR_OLDEST) {
        snprintf(err, cap,
                 "trident: this XLA speaks FFI API %d.%d; libtrident_xla was built against API %d.%d and works with "
                 "%d.%d to %d.%d (jaxlib 0.10.2 or newer)",
                 major, minor, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR, XLA_FFI_API_MAJOR, XLA_API_MINOR_OLDEST,
                 XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
        return 0;
    }
    *out = (XLA_FFI_Api_Version){XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR,
                                 XLA_MIN(minor, XLA_FFI_API_MINOR)};
    return 1;
}

/* The runtime's API table of each platform, from its metadata query at registration: the CUDA plugin's own (it
 * keeps its own handler registry), through which record.c registers the record bundle. */
_Atomic(const XLA_FFI_Api *) xla_platform_api[PLATFORM_COUNT];

int xla_metadata_query(XLA_FFI_CallFrame *f, int platform, int constructs_state, XLA_FFI_Error **out)
{
    xla_internal_ext *e = f->extension_start;
    while (e && e->type != XLA_FFI_Extension_Metadata)
        e = e->next;
    if (!e)
        return 0;
    XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)e)->metadata;
    char why[256];
    if (!xla_api_negotiate(f->api, &m->api_version, why, sizeof why)) {
        *out = xla_error(f->api, XLA_FFI_Error_Code_FAILED_PRECONDITION, "%s", why);
        return 1;
    }
    atomic_store(&xla_platform_api[platform], f->api);
    m->traits = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE;
    *out = NULL;
    if (m->struct_size >= offsetof(XLA_FFI_Metadata, state_type_id) + sizeof(XLA_FFI_TypeId)) {
        if (constructs_state && xla_state_id[platform].type_id == 0)
            *out = xla_error(f->api, XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "trident: register the state type (trd_xla_%s_type_id) with jax.ffi.register_ffi_type before "
                         "the handlers",
                         platform_name(platform));
        m->state_type_id = constructs_state ? xla_state_id[platform] : (XLA_FFI_TypeId){0};
    }
    return 1;
}

/* ---------------------------------------------------------- instantiate */

static XLA_FFI_Error *bad_attr(const XLA_FFI_Api *api, struct xla_attrs *a)
{
    return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "trident_kernel_call: %s", a->err);
}

static const char *backend_of(int platform)
{
    return platform == PLATFORM_CUDA ? "cuda" : platform == PLATFORM_ROCM ? "hip" : "host";
}

/* Load-stage options for the platform's backend from the JSON attribute. */
static trd_status_t options_from_json(const char *text, size_t len, int platform, trd_options_t **out)
{
    *out = NULL;
    if (len == 0)
        return TRD_OK;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    if (!json_is_object(root)) {
        json_decref(root);
        return xla_fail(TRD_ERR_FORMAT, "attribute 'options' is not a JSON object: %s", jerr.text);
    }
    json_t *mine = json_object_get(root, backend_of(platform));
    trd_status_t st = TRD_OK;
    if (json_is_object(mine) && json_object_size(mine) > 0) {
        if ((st = trd_options_create(backend_of(platform), out)) == TRD_OK) {
            const char *key;
            json_t *v;
            json_object_foreach(mine, key, v) {
                char buf[64];
                const char *value = buf;
                if (json_is_string(v))
                    value = json_string_value(v);
                else if (json_is_boolean(v))
                    value = json_is_true(v) ? "true" : "false";
                else if (json_is_integer(v))
                    snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
                else if (json_is_null(v))
                    value = "none";
                else {
                    st = xla_fail(TRD_ERR_INVALID_ARGUMENT, "option %s: give a string, integer, bool or null", key);
                    break;
                }
                if ((st = trd_options_set(*out, key, value)) != TRD_OK)
                    break;
            }
            if (st != TRD_OK) {
                trd_options_destroy(*out);
                *out = NULL;
            }
        }
    }
    json_decref(root);
    return st;
}

static trd_status_t get_kernel(trd_runtime_t *rt, const char *bundle, size_t len, const char *opts, size_t olen,
                               int platform, struct xla_cached_kernel **out)
{
    /* key: sha256(sha256(bundle) || options || platform) */
    uint8_t parts[32 + 8];
    trd_sha256(bundle, len, parts);
    uint8_t oh[32];
    trd_sha256(opts, olen, oh);
    memcpy(parts + 32, oh, 7);
    parts[39] = (uint8_t)platform;
    uint8_t key[32];
    trd_sha256(parts, sizeof parts, key);
    pthread_mutex_lock(&cache_lock);
    for (struct xla_cached_kernel *c = cache; c; c = c->next)
        if (!memcmp(c->key, key, 32)) {
            c->refs++;
            pthread_mutex_unlock(&cache_lock);
            *out = c;
            return TRD_OK;
        }
    pthread_mutex_unlock(&cache_lock);
    trd_options_t *options;
    trd_status_t st = options_from_json(opts, olen, platform, &options);
    if (st != TRD_OK)
        return st;
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_BUNDLE, .data = bundle, .size = len,
                           .options = options};
    st = trd_kernel_create(rt, &d, &k);
    trd_options_destroy(options);
    if (st != TRD_OK)
        return st;
    struct xla_cached_kernel *c = calloc(1, sizeof *c);
    if (!c) {
        trd_kernel_destroy(k);
        return xla_fail(TRD_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(c->key, key, 32);
    c->kernel = k;
    c->refs = 1;
    pthread_mutex_lock(&cache_lock);
    /* another thread may have made it meanwhile: keep the first */
    for (struct xla_cached_kernel *o = cache; o; o = o->next)
        if (!memcmp(o->key, key, 32)) {
            o->refs++;
            pthread_mutex_unlock(&cache_lock);
            trd_kernel_destroy(k);
            free(c);
            *out = o;
            return TRD_OK;
        }
    c->next = cache;
    cache = c;
    pthread_mutex_unlock(&cache_lock);
    *out = c;
    return TRD_OK;
}

/* What every candidate shares: where each launch parameter comes from, the scalars' bytes. */
struct call_args {
    const int64_t *kinds, *index;
    size_t nparams;
    const char *scalars;
    size_t slen;
    const char *opts;   /* load-stage options: a JSON object, or (version 2) an array of one per candidate */
    size_t olen;
    json_t *per_cand;   /* that array, parsed */
    const int64_t *tma; /* the tma records: TRD_XLA_TMA_FIELDS values per tensor-map parameter per candidate */
    size_t ntma;        /* values */
};

/* A kernel's name, canonical signature and launch parameters (libtrident's strings: they live as long as it). */
struct kernel_sig {
    const char *name, *signature;
    uint32_t num_params;
};

static trd_status_t kernel_sig(const trd_kernel_t *k, struct kernel_sig *out)
{
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    trd_status_t st = trd_kernel_get_info(k, &ki);
    if (st != TRD_OK)
        return st;
    if (ki.num_params > XLA_MAX_PARAMS)
        return xla_fail(TRD_ERR_LIMIT, "kernel '%s' has %u parameters, more than %d", ki.name, ki.num_params,
                        XLA_MAX_PARAMS);
    *out = (struct kernel_sig){ki.name, ki.signature, ki.num_params};
    return TRD_OK;
}

/* The launch parameters from the first candidate's signature, the scalars packed now from their bytes. */
static XLA_FFI_Error *params_build(const XLA_FFI_Api *api, struct xla_call *c, const trd_kernel_t *k,
                                   const struct kernel_sig *sig, const struct call_args *ca)
{
    if (ca->nparams != sig->num_params)
        return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "kernel '%s' takes %u parameters (%s); the call describes %zu", c->name, sig->num_params,
                         sig->signature, ca->nparams);
    size_t soff = 0;
    for (uint32_t j = 0; j < sig->num_params; j++) {
        struct xla_param *cp = &c->params[j];
        cp->info.struct_size = sizeof cp->info;
        trd_status_t st = trd_kernel_param_info(k, j, &cp->info);
        if (st != TRD_OK)
            return xla_error(api, xla_errc(st), "trident: %s", trd_error_message());
        const trd_param_info_t *p = &cp->info;
        cp->kind = (int32_t)ca->kinds[j];
        cp->index = ca->index[j];
        int is_ptr = p->kind == TRD_PARAM_POINTER;
        const char *bad = NULL;
        if (cp->kind < TRD_XLA_ARG_OPERAND || cp->kind > TRD_XLA_ARG_TENSOR_MAP)
            bad = "its kind is not 0 (operand), 1 (result), 2 (scalar), 3 (null) or 4 (tensor map)";
        else if ((p->kind == TRD_PARAM_TENSOR_MAP) != (cp->kind == TRD_XLA_ARG_TENSOR_MAP))
            bad = cp->kind == TRD_XLA_ARG_TENSOR_MAP
                      ? "kind 4 (tensor map) is for nvTmaDesc parameters"
                      : "it is a tensor map (nvTmaDesc): the call must pass kind 4 and a tma record";
        else if (cp->kind == TRD_XLA_ARG_TENSOR_MAP && c->ntma == XLA_TMA_MAX)
            bad = "a call takes at most 16 tensor maps";
        else if (cp->kind == TRD_XLA_ARG_TENSOR_MAP && (size_t)(c->ntma + 1) * TRD_XLA_TMA_FIELDS * c->ncand > ca->ntma)
            bad = c->ncand > 1 ? "the tma attribute has no record for it for every candidate"
                               : "the tma attribute has no record for it";
        else if (is_ptr && cp->kind == TRD_XLA_ARG_SCALAR)
            bad = "it is a pointer, the call passes a scalar";
        else if (!is_ptr && cp->kind != TRD_XLA_ARG_SCALAR && cp->kind != TRD_XLA_ARG_TENSOR_MAP)
            bad = "it is a scalar, the call passes a buffer";
        else if (cp->kind != TRD_XLA_ARG_SCALAR && cp->kind != TRD_XLA_ARG_NULL && (cp->index < 0 || cp->index > 65535))
            bad = "its buffer index is out of range";
        else if (cp->kind == TRD_XLA_ARG_SCALAR && soff + p->size > ca->slen)
            bad = "the scalars attribute is too short";
        if (bad)
            return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "kernel '%s' argument %u%s%s%s: %s", c->name,
                             j, p->name ? " '" : "", p->name ? p->name : "", p->name ? "'" : "", bad);
        if (cp->kind == TRD_XLA_ARG_SCALAR) {
            memcpy(&c->storage[j], ca->scalars + soff, p->size);
            soff += p->size;
        }
        c->ntma += cp->kind == TRD_XLA_ARG_TENSOR_MAP;
    }
    c->nparams = sig->num_params;
    if ((size_t)c->ntma * TRD_XLA_TMA_FIELDS * c->ncand != ca->ntma) {
        char each[64] = "";
        if (c->ncand > 1)
            snprintf(each, sizeof each, ", for each of %u candidates", c->ncand);
        return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "kernel '%s': the tma attribute has %zu values; its %u tensor map parameters need %zu "
                         "(%d each%s)",
                         c->name, ca->ntma, c->ntma, (size_t)c->ntma * TRD_XLA_TMA_FIELDS * c->ncand,
                         TRD_XLA_TMA_FIELDS, each);
    }
    if (soff != ca->slen)
        return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "kernel '%s': the scalars attribute has %zu bytes, the signature %s needs %zu", c->name,
                         ca->slen, sig->signature, soff);
    if (c->ntma && !(c->tma = calloc((size_t)c->ncand * c->ntma, sizeof *c->tma)))
        return xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
    return NULL;
}

/* A later candidate launches with the first one's parameters: its signature must pass the same types. */
static XLA_FFI_Error *params_match(const XLA_FFI_Api *api, const struct xla_call *c, uint32_t i, const trd_kernel_t *k,
                                   const struct kernel_sig *sig)
{
    int same = sig->num_params == c->nparams;
    for (uint32_t j = 0; same && j < sig->num_params; j++) {
        trd_param_info_t p = {.struct_size = sizeof p};
        const trd_param_info_t *q = &c->params[j].info;
        trd_status_t st = trd_kernel_param_info(k, j, &p);
        if (st != TRD_OK)
            return xla_error(api, xla_errc(st), "trident: %s", trd_error_message());
        same = p.kind == q->kind && p.size == q->size && p.pointer_depth == q->pointer_depth &&
               !strcmp(p.scalar, q->scalar);
    }
    if (same)
        return NULL;
    return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "trident_kernel_call: autotune candidate %u (kernel '%s', %s) does not take the parameters of "
                     "candidate 0 (kernel '%s', %s): every candidate is launched with the same arguments",
                     i, sig->name, sig->signature, c->name, c->cands[0].signature);
}

/* Two candidates' maps of one parameter describe the same tensor: the argument's, not the compilation's. */
static int tma_same_tensor(const struct xla_tma *a, const struct xla_tma *b)
{
    const trd_tensor_map_desc_t *x = &a->desc, *y = &b->desc;
    return a->base_kind == b->base_kind && a->fp4_padded == b->fp4_padded && x->elem_size == y->elem_size &&
           x->rank == y->rank && !memcmp(x->shape, y->shape, sizeof x->shape) &&
           !memcmp(x->strides, y->strides, sizeof x->strides);
}

/* Candidate i's tensor maps, from its own records (at i * ntma): a map's box comes from the candidate's
 * compilation (tensordesc_meta block_size), so each candidate launches with its own encoding. */
static XLA_FFI_Error *cand_tma(const XLA_FFI_Api *api, struct xla_call *c, uint32_t i, const struct call_args *ca)
{
    if (!c->ntma)
        return NULL;
    struct xla_tma *maps = c->tma + (size_t)i * c->ntma;
    uint32_t t = 0;
    for (uint32_t j = 0; j < c->nparams && t < c->ntma; j++) {
        const struct xla_param *p = &c->params[j];
        if (p->kind != TRD_XLA_ARG_TENSOR_MAP)
            continue;
        const int64_t *rec = ca->tma + ((size_t)i * c->ntma + t) * TRD_XLA_TMA_FIELDS;
        trd_status_t st = xla_tma_decode(rec, c->name, c->ncand > 1 ? (int64_t)i : -1, j, p->info.name, p->index,
                                         &maps[t]);
        if (st == TRD_OK && c->platform != PLATFORM_CUDA)
            st = xla_fail(TRD_ERR_UNSUPPORTED, "%s: tensor maps (TMA) need the CUDA platform, not %s",
                               maps[t].label, platform_name(c->platform));
        if (st == TRD_OK && i > 0 && !tma_same_tensor(&maps[t], &c->tma[t]))
            st = xla_fail(TRD_ERR_INVALID_ARGUMENT,
                               "%s: tensor map: its record describes another tensor than candidate 0's (base, element "
                               "size, shape and strides are the argument's, the same for every candidate)",
                               maps[t].label);
        if (st != TRD_OK)
            return xla_error(api, xla_errc(st), "%s", trd_error_message());
        t++;
    }
    c->cands[i].tma = maps;
    return NULL;
}

/* One candidate: its kernel from the cache, its grid, zeroed results and tensor maps; the first also decides
 * the launch parameters, which the others must take as they are. */
static XLA_FFI_Error *cand_build(const XLA_FFI_Api *api, trd_runtime_t *rt, struct xla_call *c, uint32_t i,
                                 const char *bundle, size_t len, const int64_t grid[3], const int64_t *zero,
                                 size_t nzero, const struct call_args *ca)
{
    struct xla_cand *cand = &c->cands[i];
    char *own = ca->per_cand ? json_dumps(json_array_get(ca->per_cand, i), JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (ca->per_cand && !own)
        return xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
    trd_status_t st = get_kernel(rt, bundle, len, own ? own : ca->opts, own ? strlen(own) : ca->olen, c->platform,
                                 &cand->ck);
    free(own);
    if (st != TRD_OK)
        return c->ncand > 1 ? xla_error(api, xla_errc(st), "trident_kernel_call: autotune candidate %u: %s", i,
                                        trd_error_message())
                            : xla_error(api, xla_errc(st), "trident_kernel_call: %s", trd_error_message());
    cand->kernel = cand->ck->kernel;
    struct kernel_sig sig = {0};
    if ((st = kernel_sig(cand->kernel, &sig)) != TRD_OK)
        return xla_error(api, xla_errc(st), "trident_kernel_call: %s", trd_error_message());
    cand->name = sig.name;
    cand->signature = sig.signature;
    for (int d = 0; d < 3; d++)
        cand->grid[d] = (uint32_t)grid[d];
    cand->zero = zero;
    cand->nzero = (uint32_t)nzero;
    XLA_FFI_Error *e;
    if (i > 0) {
        e = params_match(api, c, i, cand->kernel, &sig);
    } else {
        c->name = sig.name;
        e = params_build(api, c, cand->kernel, &sig, ca);
    }
    return e ? e : cand_tma(api, c, i, ca);
}

/* Offsets that cut `total` items into n consecutive runs: off[0] = 0, off[n] = total, never decreasing. */
static const char *bad_offsets(const int64_t *off, size_t n, size_t total)
{
    if (off[0] != 0 || (uint64_t)off[n] != total)
        return "must start at 0 and end at the size of what it cuts";
    for (size_t i = 0; i < n; i++)
        if (off[i + 1] < off[i])
            return "must not decrease";
    return NULL;
}

static XLA_FFI_Error *instantiate(XLA_FFI_CallFrame *f, int platform)
{
    XLA_FFI_Error *q;
    if (xla_metadata_query(f, platform, 1, &q))
        return q;
    const XLA_FFI_Api *api = f->api;
    struct xla_attrs a = {.attrs = &f->attrs};
    int64_t version = 0;
    if (!xla_attr_int(&a, "version", &version))
        return bad_attr(api, &a);
    if (version != 1 && version != TRD_XLA_CALL_VERSION)
        return xla_error(api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                         "trident_kernel_call: attribute version %lld; this libtrident reads versions 1 and %d "
                         "(update trident)",
                         (long long)version, TRD_XLA_CALL_VERSION);
    const char *bundle;
    size_t blen, nkinds, nindex, nscratch;
    int64_t kinds[XLA_MAX_PARAMS], index[XLA_MAX_PARAMS], scratch[2];
    struct call_args ca = {.kinds = kinds, .index = index};
    if (!xla_attr_string(&a, "kernel", &bundle, &blen) || !xla_attr_string(&a, "scalars", &ca.scalars, &ca.slen) ||
        !xla_attr_string(&a, "options", &ca.opts, &ca.olen) ||
        !xla_attr_ints(&a, "arg_kind", kinds, XLA_MAX_PARAMS, &nkinds) ||
        !xla_attr_ints(&a, "arg_index", index, XLA_MAX_PARAMS, &nindex) ||
        !xla_attr_ints(&a, "scratch", scratch, 2, &nscratch))
        return bad_attr(api, &a);
    ca.nparams = nkinds;
    /* the candidates: version 1 has one; version 2 cuts the bundles and zero lists by offsets */
    int64_t one_kernel[2] = {0, (int64_t)blen}, *koff = one_kernel, *zoff = NULL, *grid = NULL, *zero = NULL;
    int64_t *tma = NULL;
    size_t nkoff = 2, nzoff = 0, ngrid = 0, nzero = 0;
    XLA_FFI_Error *e = NULL;
    if (version >= 2 && !xla_attr_ints_new(&a, "kernel_offsets", XLA_MAX_CANDIDATES + 1, &koff, &nkoff))
        return bad_attr(api, &a);
    if (nkoff < 2) {
        free(koff);
        return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "trident_kernel_call: attribute 'kernel_offsets' needs at least 2 values (one candidate)");
    }
    size_t ncand = nkoff - 1;
    if (!xla_attr_ints_new(&a, "grid", 3 * ncand, &grid, &ngrid) ||
        !xla_attr_ints_new(&a, "zero", XLA_MAX_ZERO * ncand, &zero, &nzero) ||
        (version >= 2 && !xla_attr_ints_new(&a, "zero_offsets", XLA_MAX_CANDIDATES + 1, &zoff, &nzoff)) ||
        (xla_attr_present(&a, "tma") &&
         !xla_attr_ints_new(&a, "tma", ncand * XLA_TMA_MAX * TRD_XLA_TMA_FIELDS, &tma, &ca.ntma))) {
        e = bad_attr(api, &a);
        goto out;
    }
    ca.tma = tma;
    if (version < 2) {
        int64_t *z = malloc(2 * sizeof *z);
        if (!z) {
            e = xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
            goto out;
        }
        z[0] = 0;
        z[1] = (int64_t)nzero;
        zoff = z;
        nzoff = 2;
    }
    if (ngrid != 3 * ncand || nscratch != 2 || nkinds != nindex || nzoff != nkoff) {
        char cands[160] = "";
        if (version >= 2)
            snprintf(cands, sizeof cands, "%zu candidates need kernel_offsets and zero_offsets of %zu values (got %zu "
                     "and %zu), ", ncand, ncand + 1, nkoff, nzoff);
        e = xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                      "trident_kernel_call: %sgrid needs %zu values (got %zu), scratch 2 (got %zu), arg_kind and "
                      "arg_index one per parameter (got %zu and %zu)",
                      cands, 3 * ncand, ngrid, nscratch, nkinds, nindex);
        goto out;
    }
    const char *which = "kernel_offsets", *bad = bad_offsets(koff, ncand, blen);
    if (!bad) {
        which = "zero_offsets";
        bad = bad_offsets(zoff, ncand, nzero);
    }
    if (bad) {
        e = xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "trident_kernel_call: attribute '%s' %s", which, bad);
        goto out;
    }
    for (size_t i = 0; i < ncand; i++) {
        for (int d = 0; d < 3; d++)
            if (grid[3 * i + d] < 0 || grid[3 * i + d] > 0x7fffffff) {
                e = xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                              "trident_kernel_call: grid[%zu] = %lld is out of range", 3 * i + d,
                              (long long)grid[3 * i + d]);
                goto out;
            }
        if (zoff[i + 1] - zoff[i] > XLA_MAX_ZERO) {
            e = xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                          "trident_kernel_call: candidate %zu zeroes %lld results, more than %d", i,
                          (long long)(zoff[i + 1] - zoff[i]), XLA_MAX_ZERO);
            goto out;
        }
    }
    if (version >= 2 && ca.olen > 0 && ca.opts[0] == '[') {
        json_error_t jerr;
        ca.per_cand = json_loadb(ca.opts, ca.olen, 0, &jerr);
        size_t k = 0;
        while (json_is_array(ca.per_cand) && k < json_array_size(ca.per_cand) &&
               json_is_object(json_array_get(ca.per_cand, k)))
            k++;
        if (!json_is_array(ca.per_cand) || k != ncand || json_array_size(ca.per_cand) != ncand) {
            e = xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                          "trident_kernel_call: attribute 'options' must be a JSON object, or an array of %zu "
                          "objects (one per candidate)%s%s",
                          ncand, ca.per_cand ? "" : ": ", ca.per_cand ? "" : jerr.text);
            goto out;
        }
    }
    trd_runtime_t *rt;
    trd_status_t st = trd_runtime_shared(&rt);
    if (st != TRD_OK) {
        e = xla_error(api, xla_errc(st), "trident: %s", trd_error_message());
        goto out;
    }
    struct xla_call *c = calloc(1, sizeof *c);
    if (!c) {
        e = xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
        goto out;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->platform = platform;
    c->ncand = (uint32_t)ncand;
    c->cands = calloc(ncand, sizeof *c->cands);
    c->rt = rt;
    trd_runtime_device_count(rt, &c->ndev);
    c->slots = calloc(c->ndev ? c->ndev : 1, sizeof *c->slots);
    if (!c->cands || !c->slots) {
        call_delete(c);
        e = xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
        goto out;
    }
    c->zero = zero;
    zero = NULL;
    c->scratch[0] = scratch[0];
    c->scratch[1] = scratch[1];
    for (uint32_t i = 0; i < c->ncand && !e; i++)
        e = cand_build(api, rt, c, i, bundle + koff[i], (size_t)(koff[i + 1] - koff[i]), grid + 3 * i,
                       c->zero + zoff[i], (size_t)(zoff[i + 1] - zoff[i]), &ca);
    if (!e && version >= 2)
        e = xla_tune_create(api, &a, c, bundle, blen, tma, ca.ntma);
    if (!e) {
        XLA_FFI_State_Set_Args sa = {XLA_FFI_State_Set_Args_STRUCT_SIZE, NULL, f->ctx,
                                     XLA_FFI_ExecutionStage_INSTANTIATE, &xla_state_id[platform], c};
        e = api->XLA_FFI_State_Set(&sa);
    }
    if (e)
        call_delete(c);
out:
    json_decref(ca.per_cand);
    if (koff != one_kernel)
        free(koff);
    free(zoff);
    free(grid);
    free(zero);
    free(tma);
    return e;
}

/* -------------------------------------------------------------- execute */

int xla_device_ordinal(XLA_FFI_CallFrame *f, int32_t *ordinal)
{
    const XLA_FFI_Api *api = f->api;
    if (!XLA_API_HAS(api, XLA_FFI_DeviceOrdinal_Get))
        return 0;
    XLA_FFI_DeviceOrdinal_Get_Args a = {XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, NULL, f->ctx, 0};
    XLA_FFI_Error *e = api->XLA_FFI_DeviceOrdinal_Get(&a);
    if (e) {
        XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
        api->XLA_FFI_Error_Destroy(&d);
        return 0;
    }
    *ordinal = a.device_ordinal;
    return 1;
}

/* The trident device of the platform's ordinal: its URI, "<driver>:<ordinal>"; XLA's CPU devices onto the host
 * devices. NULL when there is none. */
static trd_device_t *find_device(trd_runtime_t *rt, int platform, int32_t ordinal)
{
    const char *drv = platform == PLATFORM_CUDA ? "cuda" : platform == PLATFORM_ROCM ? "hip" : "host";
    uint32_t n = 0, nhost = 0;
    trd_runtime_device_count(rt, &n);
    for (uint32_t i = 0; platform == PLATFORM_CPU && i < n; i++) {
        trd_device_t *d;
        trd_device_props_t p = {.struct_size = sizeof p};
        if (trd_runtime_device_get(rt, i, &d) == TRD_OK && trd_device_get_props(d, &p) == TRD_OK)
            nhost += !strcmp(p.driver, "host");
    }
    if (platform == PLATFORM_CPU && nhost)
        ordinal = (int32_t)((uint32_t)ordinal % nhost);
    char uri[64];
    snprintf(uri, sizeof uri, "%s:%u", drv, (uint32_t)ordinal);
    trd_device_t *d;
    return trd_runtime_device_find(rt, uri, &d) == TRD_OK ? d : NULL;
}

static const char *param_label(const struct xla_param *p, char *buf, size_t cap)
{
    if (p->info.name)
        snprintf(buf, cap, " '%s'", p->info.name);
    else
        buf[0] = '\0';
    return buf;
}

/* An array of `got` (Triton's name of its dtype) fits a pointer to `want`: the same type, or an integer of the
 * same width (Triton's IR is signless; bool arrays are bytes). */
static int element_fits(const char *got, const char *want)
{
    static const char *const pairs[][2] = {{"i8", "u8"}, {"i16", "u16"}, {"i32", "u32"},
                                           {"i64", "u64"}, {"i1", "i8"},  {"i1", "u8"}};
    if (!got)
        return 0;
    if (!strcmp(got, want))
        return 1;
    for (size_t i = 0; i < XLA_ARRAY_SIZE(pairs); i++)
        if ((!strcmp(got, pairs[i][0]) && !strcmp(want, pairs[i][1])) ||
            (!strcmp(got, pairs[i][1]) && !strcmp(want, pairs[i][0])))
            return 1;
    return 0;
}

uint64_t xla_buffer_bytes(const XLA_FFI_Buffer *b)
{
    uint64_t n = xla_dtype_bytes(b->dtype);
    for (int64_t i = 0; i < b->rank; i++)
        n *= (uint64_t)b->dims[i];
    return n;
}

/* The first execute on a device: the buffers' types against the signature, every candidate's zeroed results. */
XLA_FFI_Error *xla_check_buffers(XLA_FFI_CallFrame *f, const struct xla_call *c)
{
    const XLA_FFI_Api *api = f->api;
    char nm[96];
    for (uint32_t i = 0; i < c->nparams; i++) {
        const struct xla_param *p = &c->params[i];
        if (p->kind != TRD_XLA_ARG_OPERAND && p->kind != TRD_XLA_ARG_RESULT)
            continue;
        const char *what = p->kind == TRD_XLA_ARG_OPERAND ? "operand" : "result";
        int64_t n = p->kind == TRD_XLA_ARG_OPERAND ? f->args.size : f->rets.size;
        if (p->index >= n)
            return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                             "kernel '%s' argument %u%s: %s %lld does not exist (the call has %lld)", c->name, i,
                             param_label(p, nm, sizeof nm), what, (long long)p->index, (long long)n);
        const XLA_FFI_Buffer *b =
            p->kind == TRD_XLA_ARG_OPERAND ? f->args.args[p->index] : f->rets.rets[p->index];
        /* a pointer to pointers takes no array XLA has */
        if (p->info.pointer_depth != 1 || !element_fits(xla_dtype_triton(b->dtype), p->info.scalar))
            return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                             "kernel '%s' argument %u%s (%.*s%s): %s %lld is an array of %s", c->name, i,
                             param_label(p, nm, sizeof nm), (int)p->info.pointer_depth, "*****************",
                             p->info.scalar, what, (long long)p->index, xla_dtype_name(b->dtype));
    }
    for (uint32_t k = 0; k < c->ncand; k++)
        for (uint32_t z = 0; z < c->cands[k].nzero; z++)
            if (c->cands[k].zero[z] < 0 || c->cands[k].zero[z] >= f->rets.size)
                return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                                 "kernel '%s': result %lld to zero does not exist", c->name,
                                 (long long)c->cands[k].zero[z]);
    return NULL;
}

trd_status_t xla_run_check(XLA_FFI_CallFrame *f, const struct xla_call *c, const struct xla_slot *s,
                           const struct xla_run *r)
{
    for (uint32_t t = 0; t < c->ntma; t++) {
        trd_status_t st = xla_tma_check(f, &r->cand->tma[t]);
        if (st != TRD_OK)
            return st;
    }
    for (int k = 0; k < 2; k++) {
        if (!r->scratch_need[k])
            continue;
        const char *kind = k ? "profile" : "global";
        if (c->scratch[k] < 0 || c->scratch[k] >= f->rets.size)
            return xla_fail(TRD_ERR_INVALID_ARGUMENT,
                            "kernel '%s' needs %llu bytes of %s scratch on %s, but the call passes no scratch buffer",
                            c->name, (unsigned long long)r->scratch_need[k], kind, s->uri);
        uint64_t have = xla_buffer_bytes(f->rets.rets[c->scratch[k]]);
        if (have < r->scratch_need[k])
            return xla_fail(TRD_ERR_INVALID_ARGUMENT,
                            "kernel '%s' needs %llu bytes of %s scratch on %s, the scratch buffer has %llu", c->name,
                            (unsigned long long)r->scratch_need[k], kind, s->uri, (unsigned long long)have);
    }
    return TRD_OK;
}

trd_status_t xla_run_load(const struct xla_call *c, struct xla_slot *s, uint32_t i, struct xla_run *out)
{
    const struct xla_cand *cand = &c->cands[i];
    trd_status_t st = s->prepared[i] ? TRD_OK : trd_kernel_prepare(cand->kernel, s->dev, &s->prepared[i]);
    uint64_t need[2];
    if (st == TRD_OK)
        st = trd_prepared_scratch(s->prepared[i], cand->grid, &need[0], &need[1]);
    if (st != TRD_OK)
        return st;
    out->cand = cand;
    out->prepared = s->prepared[i];
    out->scratch_need[0] = need[0];
    out->scratch_need[1] = need[1];
    return TRD_OK;
}

/* The slow path, once per device: the slot, with the kernel prepared for that device (an autotuned call's
 * candidate is chosen afterwards, by xla_tune_choose). */
static XLA_FFI_Error *slot_for(XLA_FFI_CallFrame *f, struct xla_call *c, trd_device_t *dev,
                               const trd_device_props_t *props, struct xla_slot **out)
{
    const XLA_FFI_Api *api = f->api;
    if (props->index >= c->ndev)
        return xla_error(api, XLA_FFI_Error_Code_INTERNAL, "trident: device %s is not among the %u the call knows",
                         props->uri, c->ndev);
    pthread_mutex_lock(&c->lock);
    struct xla_slot *s = atomic_load_explicit(&c->slots[props->index], memory_order_relaxed);
    XLA_FFI_Error *e = NULL;
    if (!s) {
        trd_status_t st = TRD_OK;
        if (!(s = calloc(1, sizeof *s)) || !(s->prepared = calloc(c->ncand, sizeof *s->prepared))) {
            free(s);
            s = NULL;
            e = xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
        } else {
            s->dev = dev;
            s->index = props->index;
            s->uri = props->uri;
            s->arch = props->arch;
            s->name = props->name;
            if (!c->tune)
                st = xla_run_load(c, s, 0, &s->run);
        }
        if (st != TRD_OK) {
            e = xla_error(api, xla_errc(st), "trident: %s", trd_error_message());
            trd_prepared_destroy(s->prepared[0]);
            free(s->prepared);
            free(s);
        } else if (s) {
            pthread_mutex_init(&s->tune_lock, NULL);
            atomic_store_explicit(&c->slots[props->index], s, memory_order_release);
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (!e)
        *out = s;
    return e;
}

trd_stream_t *xla_slot_stream(struct xla_slot *s, void *native)
{
    if (!native)
        return NULL;
    for (int i = 0; i < XLA_STREAM_CACHE; i++) {
        void *cur = atomic_load_explicit(&s->streams[i].native, memory_order_acquire);
        if (cur == native) {
            /* claimed by another thread, which publishes its wrap or releases the slot when wrapping failed: wait
             * for either (a wrap is a few calls), so that one native stream is never wrapped twice */
            trd_stream_t *w;
            while (!(w = atomic_load_explicit(&s->streams[i].wrapped, memory_order_acquire)) &&
                   atomic_load_explicit(&s->streams[i].native, memory_order_acquire) == native)
                sched_yield();
            if (w)
                return w;
            cur = NULL;
        }
        if (cur)
            continue;
        void *expected = NULL;
        if (!atomic_compare_exchange_strong(&s->streams[i].native, &expected, native)) {
            if (expected == native)
                i--; /* another thread claimed this slot for the same stream just now: wait on it */
            continue;
        }
        trd_stream_t *w = NULL;
        if (trd_stream_wrap(s->dev, native, &w) != TRD_OK) {
            atomic_store_explicit(&s->streams[i].native, NULL, memory_order_release); /* the slot is free again */
            return NULL;
        }
        atomic_store_explicit(&s->streams[i].wrapped, w, memory_order_release);
        return w;
    }
    xla_fail(TRD_ERR_LIMIT, "more than %d of XLA's streams on %s", XLA_STREAM_CACHE, s->uri);
    return NULL;
}

trd_status_t xla_run_params(XLA_FFI_CallFrame *f, const struct xla_call *c, const struct xla_slot *s,
                            const struct xla_run *r, uint64_t *storage, xla_tma_bytes *maps, void **params)
{
    memcpy(storage, c->storage, c->nparams * sizeof *storage);
    for (uint32_t i = 0; i < c->nparams; i++) {
        const struct xla_param *p = &c->params[i];
        if (p->kind == TRD_XLA_ARG_OPERAND)
            memcpy(&storage[i], &((XLA_FFI_Buffer *)f->args.args[p->index])->data, sizeof(void *));
        else if (p->kind == TRD_XLA_ARG_RESULT)
            memcpy(&storage[i], &((XLA_FFI_Buffer *)f->rets.rets[p->index])->data, sizeof(void *));
        params[i] = &storage[i];
    }
    trd_status_t st;
    if (c->ntma && (st = xla_tma_encode(f, r->cand->tma, c->ntma, s->dev, maps, params)) != TRD_OK)
        return xla_wrap(st, "encoding a tensor map on %s", s->uri);
    return TRD_OK;
}

void xla_run_scratch(XLA_FFI_CallFrame *f, const struct xla_call *c, const struct xla_run *r,
                     const XLA_FFI_Buffer *out[2])
{
    for (int k = 0; k < 2; k++)
        out[k] = c->scratch[k] >= 0 && r->scratch_need[k] ? f->rets.rets[c->scratch[k]] : NULL;
}

trd_status_t xla_run_launch(XLA_FFI_CallFrame *f, const struct xla_call *c, struct xla_slot *s,
                            const struct xla_run *r, void *stream)
{
    const struct xla_cand *cand = r->cand;
    /* zero what must be zeroed, on the same stream (a memset node in a graph) */
    trd_stream_t *ws = stream && cand->nzero ? xla_slot_stream(s, stream) : NULL;
    if (stream && cand->nzero && !ws)
        return xla_wrap(TRD_ERR_INTERNAL, "kernel '%s': cannot use XLA's stream on %s", c->name, s->uri);
    for (uint32_t z = 0; z < cand->nzero; z++) {
        const XLA_FFI_Buffer *b = f->rets.rets[cand->zero[z]];
        trd_status_t st = trd_device_memset(s->dev, b->data, 0, xla_buffer_bytes(b), ws);
        if (st != TRD_OK)
            return xla_wrap(st, "kernel '%s': zeroing result %lld", c->name, (long long)cand->zero[z]);
    }
    if (cand->grid[0] == 0 || cand->grid[1] == 0 || cand->grid[2] == 0)
        return TRD_OK;
    uint64_t storage[XLA_MAX_PARAMS];
    void *params[XLA_MAX_PARAMS];
    xla_tma_bytes maps[XLA_TMA_MAX];
    trd_status_t st = xla_run_params(f, c, s, r, storage, maps, params);
    if (st != TRD_OK)
        return st;
    const XLA_FFI_Buffer *scratch[2];
    xla_run_scratch(f, c, r, scratch);
    trd_native_launch_t l = {
        .struct_size = sizeof l,
        .grid = {cand->grid[0], cand->grid[1], cand->grid[2]},
        .num_params = c->nparams,
        .params = params,
        .native_stream = stream,
        .global_scratch = scratch[0] ? scratch[0]->data : NULL,
        .global_scratch_size = scratch[0] ? xla_buffer_bytes(scratch[0]) : 0,
        .profile_scratch = scratch[1] ? scratch[1]->data : NULL,
        .profile_scratch_size = scratch[1] ? xla_buffer_bytes(scratch[1]) : 0,
    };
    return trd_prepared_launch(r->prepared, &l);
}

static XLA_FFI_Error *execute(XLA_FFI_CallFrame *f, int platform)
{
    XLA_FFI_Error *q;
    if (xla_metadata_query(f, platform, 0, &q))
        return q;
    const XLA_FFI_Api *api = f->api;
    XLA_FFI_State_Get_Args ga = {XLA_FFI_State_Get_Args_STRUCT_SIZE, NULL, f->ctx, XLA_FFI_ExecutionStage_INSTANTIATE,
                                 &xla_state_id[platform], NULL};
    XLA_FFI_Error *e = api->XLA_FFI_State_Get(&ga);
    if (e)
        return e;
    struct xla_call *c = ga.state;
    int32_t ordinal = 0;
    if (!xla_device_ordinal(f, &ordinal) && platform != PLATFORM_CPU)
        return xla_error(api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                         "trident_kernel_call: this XLA does not tell the device ordinal (XLA_FFI_DeviceOrdinal_Get)");
    void *stream = NULL;
    if (platform != PLATFORM_CPU) {
        XLA_FFI_Stream_Get_Args sa = {XLA_FFI_Stream_Get_Args_STRUCT_SIZE, NULL, f->ctx, NULL};
        if ((e = api->XLA_FFI_Stream_Get(&sa)) != NULL)
            return e;
        stream = sa.stream;
    }
    /* the device's slot: one load on the fast path */
    int fast = ordinal >= 0 && ordinal < XLA_MAX_ORDINALS;
    struct xla_slot *s = fast ? atomic_load_explicit(&c->by_ordinal[ordinal], memory_order_acquire) : NULL;
    if (!s) {
        trd_device_t *dev = find_device(c->rt, platform, ordinal);
        trd_device_props_t props = {.struct_size = sizeof props};
        if (!dev || trd_device_get_props(dev, &props) != TRD_OK)
            return xla_error(api, XLA_FFI_Error_Code_NOT_FOUND,
                             "kernel '%s': trident has no %s device for XLA's device %d (see `trident devices`)",
                             c->name, backend_of(platform), ordinal);
        if ((e = slot_for(f, c, dev, &props, &s)) != NULL)
            return e;
        int launched = 0, kept = 0;
        if (c->tune && (e = xla_tune_choose(f, c, s, stream, &launched, &kept)) != NULL)
            return e;
        if (fast && (!launched || kept))
            atomic_store_explicit(&c->by_ordinal[ordinal], s, memory_order_release);
        if (launched)
            return NULL;
    }
    if (!atomic_load_explicit(&s->checked, memory_order_acquire)) {
        trd_status_t st;
        if ((e = xla_check_buffers(f, c)) != NULL)
            return e;
        if ((st = xla_run_check(f, c, s, &s->run)) != TRD_OK)
            return xla_error(api, xla_errc(st), "%s", trd_error_message());
        atomic_store_explicit(&s->checked, 1, memory_order_release);
    }
    trd_status_t st = xla_run_launch(f, c, s, &s->run, stream);
    if (st != TRD_OK)
        return xla_error(api, xla_errc(st), "%s", trd_error_message());
    return NULL;
}

TRD_API void *trd_xla_cuda_instantiate(void *f)
{
    return instantiate(f, PLATFORM_CUDA);
}

TRD_API void *trd_xla_cuda_execute(void *f)
{
    return execute(f, PLATFORM_CUDA);
}

TRD_API void *trd_xla_rocm_instantiate(void *f)
{
    return instantiate(f, PLATFORM_ROCM);
}

TRD_API void *trd_xla_rocm_execute(void *f)
{
    return execute(f, PLATFORM_ROCM);
}

TRD_API void *trd_xla_cpu_instantiate(void *f)
{
    return instantiate(f, PLATFORM_CPU);
}

TRD_API void *trd_xla_cpu_execute(void *f)
{
    return execute(f, PLATFORM_CPU);
}
