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
 * graph. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trident/xla.h>

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
        for (int k = 0; k < XLA_STREAM_CACHE; k++) {
            void *w = atomic_load(&s->streams[k].wrapped);
            if (w)
                s->ops->stream_destroy(w);
        }
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
static XLA_FFI_TypeId state_id[PLATFORM_COUNT];
static XLA_FFI_TypeInfo state_info = {XLA_FFI_TypeInfo_STRUCT_SIZE, NULL, call_delete};

TRD_API void *trd_xla_cuda_type_id(void)
{
    return &state_id[PLATFORM_CUDA];
}

TRD_API void *trd_xla_rocm_type_id(void)
{
    return &state_id[PLATFORM_ROCM];
}

TRD_API void *trd_xla_cpu_type_id(void)
{
    return &state_id[PLATFORM_CPU];
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

/* ------------------------------------------------------------ metadata */

static const char *platform_name(int platform)
{
    return platform == PLATFORM_CUDA ? "cuda" : platform == PLATFORM_ROCM ? "rocm" : "cpu";
}

static int metadata_query(XLA_FFI_CallFrame *f, int platform, int constructs_state, XLA_FFI_Error **out)
{
    XLA_FFI_Extension_Base *e = f->extension_start;
    while (e && e->type != XLA_FFI_Extension_Metadata)
        e = e->next;
    if (!e)
        return 0;
    XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)e)->metadata;
    m->api_version = (XLA_FFI_Api_Version){XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR};
    m->traits = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE;
    *out = NULL;
    if (m->struct_size >= offsetof(XLA_FFI_Metadata, state_type_id) + sizeof(XLA_FFI_TypeId)) {
        if (constructs_state && state_id[platform].type_id == 0)
            *out = xla_error(f->api, XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "trident: register the state type (trd_xla_%s_type_id) with jax.ffi.register_ffi_type before "
                         "the handlers",
                         platform_name(platform));
        m->state_type_id = constructs_state ? state_id[platform] : (XLA_FFI_TypeId){0};
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
        return trd_error_set(TRD_ERR_FORMAT, "attribute 'options' is not a JSON object: %s", jerr.text);
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
                    st = trd_error_set(TRD_ERR_INVALID_ARGUMENT, "option %s: give a string, integer, bool or null", key);
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
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
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

/* The launch parameters from the first candidate's signature, the scalars packed now from their bytes. */
static XLA_FFI_Error *params_build(const XLA_FFI_Api *api, struct xla_call *c, const struct trd_signature *sig,
                                   const struct call_args *ca)
{
    if (ca->nparams != sig->num_params)
        return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "kernel '%s' takes %u parameters (%s); the call describes %zu", c->name, sig->num_params,
                         sig->canonical, ca->nparams);
    size_t soff = 0;
    uint32_t j = 0;
    for (uint32_t i = 0; i < sig->count; i++) {
        const struct trd_param *p = &sig->params[i];
        if (p->type == TRD_T_CONSTEXPR)
            continue;
        struct xla_param *cp = &c->params[j];
        cp->kind = (int32_t)ca->kinds[j];
        cp->index = ca->index[j];
        cp->elem = p->type == TRD_T_PTR ? p->elem : p->type;
        cp->size = p->size;
        cp->name = p->name;
        c->sizes[j] = p->size;
        int is_ptr = p->type == TRD_T_PTR;
        const char *bad = NULL;
        if (cp->kind < ARG_OPERAND || cp->kind > ARG_TMA)
            bad = "its kind is not 0 (operand), 1 (result), 2 (scalar), 3 (null) or 4 (tensor map)";
        else if ((p->type == TRD_T_NVTMADESC) != (cp->kind == ARG_TMA))
            bad = cp->kind == ARG_TMA ? "kind 4 (tensor map) is for nvTmaDesc parameters"
                                      : "it is a tensor map (nvTmaDesc): the call must pass kind 4 and a tma record";
        else if (cp->kind == ARG_TMA && c->ntma == XLA_TMA_MAX)
            bad = "a call takes at most 16 tensor maps";
        else if (cp->kind == ARG_TMA && (size_t)(c->ntma + 1) * TRD_XLA_TMA_FIELDS * c->ncand > ca->ntma)
            bad = c->ncand > 1 ? "the tma attribute has no record for it for every candidate"
                               : "the tma attribute has no record for it";
        else if (is_ptr && cp->kind == ARG_SCALAR)
            bad = "it is a pointer, the call passes a scalar";
        else if (!is_ptr && cp->kind != ARG_SCALAR && cp->kind != ARG_TMA)
            bad = "it is a scalar, the call passes a buffer";
        else if (cp->kind != ARG_SCALAR && cp->kind != ARG_NULL && (cp->index < 0 || cp->index > 65535))
            bad = "its buffer index is out of range";
        else if (cp->kind == ARG_SCALAR && soff + p->size > ca->slen)
            bad = "the scalars attribute is too short";
        if (bad)
            return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "kernel '%s' argument %u%s%s%s: %s", c->name,
                             j, p->name ? " '" : "", p->name ? p->name : "", p->name ? "'" : "", bad);
        if (cp->kind == ARG_SCALAR) {
            memcpy(&c->storage[j], ca->scalars + soff, p->size);
            soff += p->size;
        }
        c->ntma += cp->kind == ARG_TMA;
        j++;
    }
    c->nparams = j;
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
                         ca->slen, sig->canonical, soff);
    if (c->ntma && !(c->tma = calloc((size_t)c->ncand * c->ntma, sizeof *c->tma)))
        return xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
    return NULL;
}

/* A later candidate launches with the first one's parameters: its signature must pass the same types. */
static XLA_FFI_Error *params_match(const XLA_FFI_Api *api, const struct xla_call *c, uint32_t i,
                                   const struct trd_signature *sig)
{
    uint32_t j = 0;
    int same = sig->num_params == c->nparams;
    for (uint32_t k = 0; same && k < sig->count; k++) {
        const struct trd_param *p = &sig->params[k];
        if (p->type == TRD_T_CONSTEXPR)
            continue;
        const struct xla_param *cp = &c->params[j++];
        same = p->size == cp->size && (p->type == TRD_T_PTR ? p->elem : p->type) == cp->elem &&
               (p->type == TRD_T_PTR) == (cp->kind == ARG_OPERAND || cp->kind == ARG_RESULT || cp->kind == ARG_NULL);
    }
    if (same)
        return NULL;
    return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "trident_kernel_call: autotune candidate %u (kernel '%s', %s) does not take the parameters of "
                     "candidate 0 (kernel '%s', %s): every candidate is launched with the same arguments",
                     i, c->cands[i].kernel->src.name, sig->canonical, c->name,
                     c->cands[0].kernel->src.sig.canonical);
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
        if (p->kind != ARG_TMA)
            continue;
        const int64_t *rec = ca->tma + ((size_t)i * c->ntma + t) * TRD_XLA_TMA_FIELDS;
        trd_status_t st = xla_tma_decode(rec, c->name, c->ncand > 1 ? (int64_t)i : -1, j, p->name, p->index,
                                         &maps[t]);
        if (st == TRD_OK && c->platform != PLATFORM_CUDA)
            st = trd_error_set(TRD_ERR_UNSUPPORTED, "%s: tensor maps (TMA) need the CUDA platform, not %s",
                               maps[t].label, platform_name(c->platform));
        if (st == TRD_OK && i > 0 && !tma_same_tensor(&maps[t], &c->tma[t]))
            st = trd_error_set(TRD_ERR_INVALID_ARGUMENT,
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
    for (int d = 0; d < 3; d++)
        cand->grid[d] = (uint32_t)grid[d];
    cand->zero = zero;
    cand->nzero = (uint32_t)nzero;
    XLA_FFI_Error *e;
    if (i > 0) {
        e = params_match(api, c, i, &cand->kernel->src.sig);
    } else {
        c->name = cand->kernel->src.name;
        e = params_build(api, c, &cand->kernel->src.sig, ca);
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
    if (metadata_query(f, platform, 1, &q))
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
    c->ndev = rt->ndevices;
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
                                     XLA_FFI_ExecutionStage_INSTANTIATE, &state_id[platform], c};
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

static int device_ordinal(XLA_FFI_CallFrame *f, int32_t *ordinal)
{
    const XLA_FFI_Api *api = f->api;
    if (api->struct_size < offsetof(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get) + sizeof(void *) ||
        !api->XLA_FFI_DeviceOrdinal_Get)
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

/* The trident device of the platform's ordinal. */
static trd_device_t *find_device(trd_runtime_t *rt, int platform, int32_t ordinal)
{
    const char *drv = platform == PLATFORM_CUDA ? "cuda" : platform == PLATFORM_ROCM ? "hip" : "host";
    uint32_t nhost = 0;
    for (uint32_t i = 0; i < rt->ndevices; i++)
        nhost += !strcmp(rt->devices[i]->drv->name, "host");
    if (platform == PLATFORM_CPU && nhost)
        ordinal = (int32_t)((uint32_t)ordinal % nhost); /* XLA's CPU devices onto the host devices */
    for (uint32_t i = 0; i < rt->ndevices; i++) {
        trd_device_t *d = rt->devices[i];
        if (!strcmp(d->drv->name, drv) && d->ordinal == (uint32_t)ordinal)
            return d;
    }
    return NULL;
}

static const char *param_label(const struct xla_param *p, char *buf, size_t cap)
{
    if (p->name)
        snprintf(buf, cap, " '%s'", p->name);
    else
        buf[0] = '\0';
    return buf;
}

static int same_width_int(int32_t a, int32_t b)
{
    static const int32_t pairs[][2] = {{TRD_T_I8, TRD_T_U8},   {TRD_T_I16, TRD_T_U16}, {TRD_T_I32, TRD_T_U32},
                                       {TRD_T_I64, TRD_T_U64}, {TRD_T_I1, TRD_T_I8},   {TRD_T_I1, TRD_T_U8}};
    for (size_t i = 0; i < TRD_ARRAY_SIZE(pairs); i++)
        if ((a == pairs[i][0] && b == pairs[i][1]) || (a == pairs[i][1] && b == pairs[i][0]))
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
        if (p->kind != ARG_OPERAND && p->kind != ARG_RESULT)
            continue;
        const char *what = p->kind == ARG_OPERAND ? "operand" : "result";
        int64_t n = p->kind == ARG_OPERAND ? f->args.size : f->rets.size;
        if (p->index >= n)
            return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                             "kernel '%s' argument %u%s: %s %lld does not exist (the call has %lld)", c->name, i,
                             param_label(p, nm, sizeof nm), what, (long long)p->index, (long long)n);
        const XLA_FFI_Buffer *b =
            p->kind == ARG_OPERAND ? f->args.args[p->index] : f->rets.rets[p->index];
        int32_t got = xla_dtype_scalar(b->dtype);
        if (got != p->elem && !same_width_int(got, p->elem))
            return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                             "kernel '%s' argument %u%s (*%s): %s %lld is an array of %s", c->name, i,
                             param_label(p, nm, sizeof nm), trd_scalar_name(p->elem), what, (long long)p->index,
                             xla_dtype_name(b->dtype));
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
        trd_status_t st = xla_tma_check(f, &r->cand->tma[t], s->ops, s->dev->uri);
        if (st != TRD_OK)
            return st;
    }
    for (int k = 0; k < 2; k++) {
        if (!r->scratch_need[k])
            continue;
        const char *kind = k ? "profile" : "global";
        if (c->scratch[k] < 0 || c->scratch[k] >= f->rets.size)
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                                 "kernel '%s' needs %llu bytes of %s scratch on %s, but the call passes no scratch "
                                 "buffer",
                                 c->name, (unsigned long long)r->scratch_need[k], kind, s->dev->uri);
        uint64_t have = xla_buffer_bytes(f->rets.rets[c->scratch[k]]);
        if (have < r->scratch_need[k])
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                                 "kernel '%s' needs %llu bytes of %s scratch on %s, the scratch buffer has %llu",
                                 c->name, (unsigned long long)r->scratch_need[k], kind, s->dev->uri,
                                 (unsigned long long)have);
    }
    return TRD_OK;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return a ? (v + a - 1) / a * a : v;
}

trd_status_t xla_run_load(const struct xla_cand *cand, trd_device_t *dev, struct xla_run *out)
{
    struct trd_loaded *l;
    trd_status_t st = trd_kernel_loaded(cand->kernel, dev, &l);
    if (st != TRD_OK)
        return st;
    const struct trd_meta *m = &l->target->meta;
    uint64_t programs = (uint64_t)cand->grid[0] * cand->grid[1] * cand->grid[2] * m->num_ctas;
    out->cand = cand;
    out->loaded = l;
    out->scratch_need[0] =
        m->global_scratch_size ? programs * align_up(m->global_scratch_size, m->global_scratch_align) : 0;
    out->scratch_need[1] =
        m->profile_scratch_size ? programs * align_up(m->profile_scratch_size, m->profile_scratch_align) : 0;
    return TRD_OK;
}

/* The slow path, once per device: the slot, with the kernel loaded by that device's driver (an autotuned
 * call's candidate is chosen afterwards, by xla_tune_choose). */
static XLA_FFI_Error *slot_for(XLA_FFI_CallFrame *f, struct xla_call *c, trd_device_t *dev, struct xla_slot **out)
{
    const XLA_FFI_Api *api = f->api;
    pthread_mutex_lock(&c->lock);
    struct xla_slot *s = atomic_load_explicit(&c->slots[dev->index], memory_order_relaxed);
    XLA_FFI_Error *e = NULL;
    if (!s) {
        struct xla_run run = {0};
        void *h;
        trd_status_t st = c->tune ? TRD_OK : xla_run_load(&c->cands[0], dev, &run);
        if (st == TRD_OK)
            st = trd_device_handle(dev, &h);
        if (st != TRD_OK) {
            e = xla_error(api, xla_errc(st), "trident: %s", trd_error_message());
        } else if (!(s = calloc(1, sizeof *s))) {
            e = xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
        } else {
            s->dev = dev;
            s->devh = h;
            s->ops = dev->drv->ops;
            s->run = run;
            pthread_mutex_init(&s->tune_lock, NULL);
            atomic_store_explicit(&c->slots[dev->index], s, memory_order_release);
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (!e)
        *out = s;
    return e;
}

void *xla_slot_stream(struct xla_slot *s, void *native)
{
    for (int i = 0; i < XLA_STREAM_CACHE; i++) {
        void *cur = atomic_load_explicit(&s->streams[i].native, memory_order_acquire);
        if (cur == native) {
            void *w = atomic_load_explicit(&s->streams[i].wrapped, memory_order_acquire);
            if (w)
                return w;
            continue; /* being published by another thread */
        }
        if (cur)
            continue;
        void *expected = NULL;
        if (!atomic_compare_exchange_strong(&s->streams[i].native, &expected, native))
            continue;
        void *w = NULL;
        if (!s->ops->stream_wrap || s->ops->stream_wrap(s->devh, native, &w) != TRD_OK)
            return NULL;
        atomic_store_explicit(&s->streams[i].wrapped, w, memory_order_release);
        return w;
    }
    return NULL;
}

trd_status_t xla_run_launch(XLA_FFI_CallFrame *f, const struct xla_call *c, struct xla_slot *s,
                            const struct xla_run *r, void *stream)
{
    const struct xla_cand *cand = r->cand;
    /* zero what must be zeroed, on the same stream (a memset node in a graph) */
    void *ws = stream && cand->nzero ? xla_slot_stream(s, stream) : NULL;
    if (stream && cand->nzero && !ws)
        return trd_error_set(TRD_ERR_INTERNAL, "kernel '%s': cannot use XLA's stream on %s", c->name, s->dev->uri);
    for (uint32_t z = 0; z < cand->nzero; z++) {
        const XLA_FFI_Buffer *b = f->rets.rets[cand->zero[z]];
        trd_status_t st = s->ops->mem_set(s->devh, b->data, 0, xla_buffer_bytes(b), ws);
        if (st != TRD_OK)
            return trd_error_wrap(st, "kernel '%s': zeroing result %lld", c->name, (long long)cand->zero[z]);
    }
    if (cand->grid[0] == 0 || cand->grid[1] == 0 || cand->grid[2] == 0)
        return TRD_OK;
    uint64_t storage[XLA_MAX_PARAMS];
    void *params[XLA_MAX_PARAMS + TRD_DRIVER_EXTRA_PARAMS];
    uint32_t sizes[XLA_MAX_PARAMS + TRD_DRIVER_EXTRA_PARAMS];
    memcpy(storage, c->storage, c->nparams * sizeof *storage);
    memcpy(sizes, c->sizes, c->nparams * sizeof *sizes);
    for (uint32_t i = 0; i < c->nparams; i++) {
        const struct xla_param *p = &c->params[i];
        if (p->kind == ARG_OPERAND)
            memcpy(&storage[i], &((XLA_FFI_Buffer *)f->args.args[p->index])->data, sizeof(void *));
        else if (p->kind == ARG_RESULT)
            memcpy(&storage[i], &((XLA_FFI_Buffer *)f->rets.rets[p->index])->data, sizeof(void *));
        params[i] = &storage[i];
    }
    xla_tma_bytes maps[XLA_TMA_MAX];
    trd_status_t st;
    if (c->ntma && (st = xla_tma_encode(f, cand->tma, c->ntma, s->ops, s->devh, maps, params)) != TRD_OK)
        return trd_error_wrap(st, "encoding a tensor map on %s", s->dev->uri);
    trd_driver_launch_t dl = {
        .struct_size = sizeof dl,
        .num_params = c->nparams,
        .grid = {cand->grid[0], cand->grid[1], cand->grid[2]},
        .params = params,
        .param_sizes = sizes,
        .global_scratch = c->scratch[0] >= 0 && r->scratch_need[0] ? ((XLA_FFI_Buffer *)f->rets.rets[c->scratch[0]])->data : NULL,
        .profile_scratch = c->scratch[1] >= 0 && r->scratch_need[1] ? ((XLA_FFI_Buffer *)f->rets.rets[c->scratch[1]])->data : NULL,
    };
    st = s->ops->launch(r->loaded->module, NULL, stream, &dl);
    if (st != TRD_OK)
        return trd_error_wrap(st, "launching kernel '%s' on %s", c->name, s->dev->uri);
    return TRD_OK;
}

static XLA_FFI_Error *execute(XLA_FFI_CallFrame *f, int platform)
{
    XLA_FFI_Error *q;
    if (metadata_query(f, platform, 0, &q))
        return q;
    const XLA_FFI_Api *api = f->api;
    XLA_FFI_State_Get_Args ga = {XLA_FFI_State_Get_Args_STRUCT_SIZE, NULL, f->ctx, XLA_FFI_ExecutionStage_INSTANTIATE,
                                 &state_id[platform], NULL};
    XLA_FFI_Error *e = api->XLA_FFI_State_Get(&ga);
    if (e)
        return e;
    struct xla_call *c = ga.state;
    int32_t ordinal = 0;
    if (!device_ordinal(f, &ordinal) && platform != PLATFORM_CPU)
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
        trd_device_t *dev = find_device(c->cands[0].kernel->rt, platform, ordinal);
        if (!dev)
            return xla_error(api, XLA_FFI_Error_Code_NOT_FOUND,
                             "kernel '%s': trident has no %s device for XLA's device %d (see `trident devices`)",
                             c->name, backend_of(platform), ordinal);
        if ((e = slot_for(f, c, dev, &s)) != NULL)
            return e;
        if (c->tune) {
            int launched = 0;
            if ((e = xla_tune_choose(f, c, s, stream, &launched)) != NULL || launched)
                return e;
        }
        if (fast)
            atomic_store_explicit(&c->by_ordinal[ordinal], s, memory_order_release);
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
