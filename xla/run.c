/* SPDX-License-Identifier: Apache-2.0 */
/* run.c: EXECUTE: the first execution on a device makes the call's slot there (the kernel prepared for the
 * device, the buffers checked once, an autotuned call's candidate chosen); after that one atomic load finds the
 * slot and the launch packs the parameters on the stack, encodes tensor maps, zeroes what must be zeroed and
 * launches on XLA's stream: no lock, no heap allocation. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xla/ffi.h"

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

int64_t xla_run_scratch_result(const struct xla_call *c, const struct xla_run *r, int k)
{
    return c->scratch[k] >= 0 && r->scratch_need[k] ? c->scratch[k] : -1;
}

void xla_run_scratch(XLA_FFI_CallFrame *f, const struct xla_call *c, const struct xla_run *r,
                     const XLA_FFI_Buffer *out[2])
{
    for (int k = 0; k < 2; k++) {
        int64_t i = xla_run_scratch_result(c, r, k);
        out[k] = i >= 0 ? f->rets.rets[i] : NULL;
    }
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
                             c->name, xla_backend_of(platform), ordinal);
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

TRD_API void *trd_xla_cuda_execute(void *f)
{
    return execute(f, PLATFORM_CUDA);
}

TRD_API void *trd_xla_rocm_execute(void *f)
{
    return execute(f, PLATFORM_ROCM);
}

TRD_API void *trd_xla_cpu_execute(void *f)
{
    return execute(f, PLATFORM_CPU);
}
