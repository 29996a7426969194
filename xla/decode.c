/* SPDX-License-Identifier: Apache-2.0 */
/* decode.c: INSTANTIATE (once per executable): decodes the call's attributes into its state: each candidate's
 * kernel (from the kernel cache), grid, zeroed results and tensor maps, where each launch parameter comes from,
 * the scalars already packed; an autotuned call's tuner (autotune.c). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xla/ffi.h"

/* ---------------------------------------------------------- instantiate */

static XLA_FFI_Error *bad_attr(const XLA_FFI_Api *api, struct xla_attrs *a)
{
    return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "trident_kernel_call: %s", a->err);
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
                               maps[t].label, xla_platform_name(c->platform));
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
    trd_status_t st = xla_kernel_get(rt, bundle, len, own ? own : ca->opts, own ? strlen(own) : ca->olen,
                                     c->platform, &cand->ck);
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
    struct xla_call *c = aligned_alloc(_Alignof(struct xla_call), sizeof *c); /* the hot line: a line of its own */
    if (!c) {
        e = xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
        goto out;
    }
    memset(c, 0, sizeof *c);
    atomic_init(&c->hot.ordinal, -1);
    pthread_mutex_init(&c->lock, NULL);
    c->platform = platform;
    c->ncand = (uint32_t)ncand;
    c->cands = calloc(ncand, sizeof *c->cands);
    c->rt = rt;
    trd_runtime_device_count(rt, &c->ndev);
    c->slots = calloc(c->ndev ? c->ndev : 1, sizeof *c->slots);
    if (!c->cands || !c->slots) {
        xla_call_delete(c);
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
        xla_call_delete(c);
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

TRD_API void *trd_xla_cuda_instantiate(void *f)
{
    return instantiate(f, PLATFORM_CUDA);
}

TRD_API void *trd_xla_rocm_instantiate(void *f)
{
    return instantiate(f, PLATFORM_ROCM);
}

TRD_API void *trd_xla_cpu_instantiate(void *f)
{
    return instantiate(f, PLATFORM_CPU);
}
