/* ffi.c: XLA custom-call handlers (typed FFI, a stage bundle).
 *
 * INSTANTIATE (once per executable) decodes the attributes into a call state:
 * the kernel (from the bundle, shared through a content-addressed cache), the
 * grid, where each kernel parameter comes from, the scalars already packed.
 * The first EXECUTE on a device loads the kernel for it (its own driver, so a
 * host with several GPU models works) and checks the buffers' types once.
 * After that EXECUTE copies the packed parameters to the stack, puts the
 * buffer addresses in, zeroes what must be zeroed and launches on XLA's
 * stream: no parsing, no hashing, no lock, no heap allocation, nothing that
 * waits, so that it can be captured into a CUDA graph. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trident/xla.h>

#include "core/xla/ffi.h"

enum { PLATFORM_CUDA, PLATFORM_ROCM, PLATFORM_CPU, PLATFORM_COUNT };

#define MAX_PARAMS 512
#define STREAM_CACHE 8

enum arg_kind { ARG_OPERAND = 0, ARG_RESULT = 1, ARG_SCALAR = 2, ARG_NULL = 3, ARG_TMA = 4 };

/* -------------------------------------------------------- kernel cache */

/* Calls of one kernel share one trd_kernel_t (and its loaded modules): the
 * cache is keyed by the bytes of the call (bundle, options, platform). */
struct cached_kernel {
    uint8_t key[32];
    trd_kernel_t *kernel;
    unsigned refs;
    struct cached_kernel *next;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached_kernel *cache;

static void cache_release(struct cached_kernel *ck)
{
    pthread_mutex_lock(&cache_lock);
    if (--ck->refs == 0) {
        struct cached_kernel **p = &cache;
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

struct param {
    int32_t kind;
    int64_t index;
    int32_t elem;       /* pointee type of a pointer parameter */
    uint32_t size;
    const char *name;   /* from the signature, may be NULL */
};

struct stream_wrap {
    _Atomic(void *) native;   /* the key, claimed first */
    _Atomic(void *) wrapped;  /* the driver's stream object over it, published second */
};

struct slot {           /* the call on one device */
    trd_device_t *dev;
    void *devh;
    const trd_driver_ops_t *ops;
    struct trd_loaded *loaded;
    uint64_t scratch_need[2];
    atomic_int checked;
    struct stream_wrap streams[STREAM_CACHE];
};

struct call {
    int platform;
    struct cached_kernel *ck;
    const char *name;
    uint32_t grid[3];
    uint32_t nparams;
    struct param params[MAX_PARAMS];
    uint64_t storage[MAX_PARAMS];   /* scalars packed; pointers filled per execute */
    uint32_t sizes[MAX_PARAMS + TRD_DRIVER_EXTRA_PARAMS];
    uint32_t nzero;
    int64_t zero[64];
    int64_t scratch[2];
    uint32_t ntma;                  /* tensor maps (tma.c), in parameter order */
    struct xla_tma tma[XLA_TMA_MAX];
    uint32_t ndev;
    _Atomic(struct slot *) *slots;  /* per trident device */
    _Atomic(struct slot *) by_ordinal[64]; /* XLA's device ordinal -> slot: the fast path */
    pthread_mutex_t lock;           /* the first execute on a device */
};

static void call_delete(void *p)
{
    struct call *c = p;
    if (!c)
        return;
    for (uint32_t i = 0; c->slots && i < c->ndev; i++) {
        struct slot *s = atomic_load(&c->slots[i]);
        if (!s)
            continue;
        for (int k = 0; k < STREAM_CACHE; k++) {
            void *w = atomic_load(&s->streams[k].wrapped);
            if (w)
                s->ops->stream_destroy(w);
        }
        free(s);
    }
    free(c->slots);
    if (c->ck)
        cache_release(c->ck);
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

static XLA_FFI_Error *error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static XLA_FFI_Error *error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg, code};
    return api->XLA_FFI_Error_Create(&a);
}

static XLA_FFI_Error_Code errc_of(trd_status_t st)
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
            *out = error(f->api, XLA_FFI_Error_Code_FAILED_PRECONDITION,
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
    return error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "trident_kernel_call: %s", a->err);
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
                               int platform, struct cached_kernel **out)
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
    for (struct cached_kernel *c = cache; c; c = c->next)
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
    struct cached_kernel *c = calloc(1, sizeof *c);
    if (!c) {
        trd_kernel_destroy(k);
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(c->key, key, 32);
    c->kernel = k;
    c->refs = 1;
    pthread_mutex_lock(&cache_lock);
    /* another thread may have made it meanwhile: keep the first */
    for (struct cached_kernel *o = cache; o; o = o->next)
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
    if (version != TRD_XLA_CALL_VERSION)
        return error(api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                     "trident_kernel_call: attribute version %lld; this libtrident reads version %d (update trident)",
                     (long long)version, TRD_XLA_CALL_VERSION);
    const char *bundle, *scalars, *opts;
    size_t blen, slen, olen;
    int64_t grid[3], kinds[MAX_PARAMS], index[MAX_PARAMS], zero[64], scratch[2];
    size_t ngrid, nkinds, nindex, nzero, nscratch;
    if (!xla_attr_string(&a, "kernel", &bundle, &blen) || !xla_attr_string(&a, "scalars", &scalars, &slen) ||
        !xla_attr_string(&a, "options", &opts, &olen) || !xla_attr_ints(&a, "grid", grid, 3, &ngrid) ||
        !xla_attr_ints(&a, "arg_kind", kinds, MAX_PARAMS, &nkinds) ||
        !xla_attr_ints(&a, "arg_index", index, MAX_PARAMS, &nindex) || !xla_attr_ints(&a, "zero", zero, 64, &nzero) ||
        !xla_attr_ints(&a, "scratch", scratch, 2, &nscratch))
        return bad_attr(api, &a);
    int64_t tma[XLA_TMA_MAX * TRD_XLA_TMA_FIELDS];
    size_t ntma = 0;
    if (xla_attr_present(&a, "tma") && !xla_attr_ints(&a, "tma", tma, TRD_ARRAY_SIZE(tma), &ntma))
        return bad_attr(api, &a);
    if (ngrid != 3 || nscratch != 2 || nkinds != nindex)
        return error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "trident_kernel_call: grid needs 3 values (got %zu), scratch 2 (got %zu), arg_kind and arg_index "
                     "one per parameter (got %zu and %zu)",
                     ngrid, nscratch, nkinds, nindex);
    for (int i = 0; i < 3; i++)
        if (grid[i] < 0 || grid[i] > 0x7fffffff)
            return error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "trident_kernel_call: grid[%d] = %lld is out of range", i,
                         (long long)grid[i]);
    trd_runtime_t *rt;
    trd_status_t st = trd_runtime_shared(&rt);
    if (st != TRD_OK)
        return error(api, errc_of(st), "trident: %s", trd_error_message());
    struct call *c = calloc(1, sizeof *c);
    if (!c)
        return error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
    pthread_mutex_init(&c->lock, NULL);
    c->platform = platform;
    if ((st = get_kernel(rt, bundle, blen, opts, olen, platform, &c->ck)) != TRD_OK) {
        call_delete(c);
        return error(api, errc_of(st), "trident_kernel_call: %s", trd_error_message());
    }
    trd_kernel_t *k = c->ck->kernel;
    c->name = k->src.name;
    const struct trd_signature *sig = &k->src.sig;
    if (nkinds != sig->num_params) {
        XLA_FFI_Error *e = error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                                 "kernel '%s' takes %u parameters (%s); the call describes %zu", c->name, sig->num_params,
                                 sig->canonical, nkinds);
        call_delete(c);
        return e;
    }
    /* parameters, in launch order; scalars packed now from their bytes */
    size_t soff = 0;
    uint32_t j = 0;
    for (uint32_t i = 0; i < sig->count; i++) {
        const struct trd_param *p = &sig->params[i];
        if (p->type == TRD_T_CONSTEXPR)
            continue;
        struct param *cp = &c->params[j];
        cp->kind = (int32_t)kinds[j];
        cp->index = index[j];
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
        else if (cp->kind == ARG_TMA && (c->ntma + 1) * TRD_XLA_TMA_FIELDS > ntma)
            bad = "the tma attribute has no record for it";
        else if (is_ptr && cp->kind == ARG_SCALAR)
            bad = "it is a pointer, the call passes a scalar";
        else if (!is_ptr && cp->kind != ARG_SCALAR && cp->kind != ARG_TMA)
            bad = "it is a scalar, the call passes a buffer";
        else if (cp->kind != ARG_SCALAR && cp->kind != ARG_NULL && (cp->index < 0 || cp->index > 65535))
            bad = "its buffer index is out of range";
        else if (cp->kind == ARG_SCALAR && soff + p->size > slen)
            bad = "the scalars attribute is too short";
        if (bad) {
            XLA_FFI_Error *e = error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "kernel '%s' argument %u%s%s%s: %s",
                                     c->name, j, p->name ? " '" : "", p->name ? p->name : "", p->name ? "'" : "", bad);
            call_delete(c);
            return e;
        }
        if (cp->kind == ARG_SCALAR) {
            memcpy(&c->storage[j], scalars + soff, p->size);
            soff += p->size;
        }
        if (cp->kind == ARG_TMA) {
            st = xla_tma_decode(tma + c->ntma * TRD_XLA_TMA_FIELDS, c->name, j, p->name, cp->index, &c->tma[c->ntma]);
            if (st == TRD_OK && platform != PLATFORM_CUDA)
                st = trd_error_set(TRD_ERR_UNSUPPORTED, "%s: tensor maps (TMA) need the CUDA platform, not %s",
                                   c->tma[c->ntma].label, platform_name(platform));
            if (st != TRD_OK) {
                XLA_FFI_Error *e = error(api, errc_of(st), "%s", trd_error_message());
                call_delete(c);
                return e;
            }
            c->ntma++;
        }
        j++;
    }
    c->nparams = j;
    if (c->ntma * TRD_XLA_TMA_FIELDS != ntma) {
        XLA_FFI_Error *e = error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                                 "kernel '%s': the tma attribute has %zu values; its %u tensor map parameters need %u "
                                 "(%d each)",
                                 c->name, ntma, c->ntma, c->ntma * TRD_XLA_TMA_FIELDS, TRD_XLA_TMA_FIELDS);
        call_delete(c);
        return e;
    }
    if (soff != slen) {
        XLA_FFI_Error *e = error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                                 "kernel '%s': the scalars attribute has %zu bytes, the signature %s needs %zu", c->name,
                                 slen, sig->canonical, soff);
        call_delete(c);
        return e;
    }
    for (int i = 0; i < 3; i++)
        c->grid[i] = (uint32_t)grid[i];
    c->nzero = (uint32_t)nzero;
    memcpy(c->zero, zero, nzero * sizeof *zero);
    c->scratch[0] = scratch[0];
    c->scratch[1] = scratch[1];
    c->ndev = rt->ndevices;
    c->slots = calloc(c->ndev ? c->ndev : 1, sizeof *c->slots);
    if (!c->slots) {
        call_delete(c);
        return error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
    }
    XLA_FFI_State_Set_Args sa = {XLA_FFI_State_Set_Args_STRUCT_SIZE, NULL, f->ctx, XLA_FFI_ExecutionStage_INSTANTIATE,
                                 &state_id[platform], c};
    XLA_FFI_Error *e = api->XLA_FFI_State_Set(&sa);
    if (e)
        call_delete(c);
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

static const char *param_label(const struct param *p, char *buf, size_t cap)
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

static uint64_t buffer_bytes(const XLA_FFI_Buffer *b)
{
    uint64_t n = xla_dtype_bytes(b->dtype);
    for (int64_t i = 0; i < b->rank; i++)
        n *= (uint64_t)b->dims[i];
    return n;
}

/* The first execute on a device: the buffers' types against the signature. */
static XLA_FFI_Error *check_buffers(XLA_FFI_CallFrame *f, struct call *c, struct slot *s)
{
    const XLA_FFI_Api *api = f->api;
    char nm[96];
    for (uint32_t i = 0; i < c->nparams; i++) {
        const struct param *p = &c->params[i];
        if (p->kind != ARG_OPERAND && p->kind != ARG_RESULT)
            continue;
        const char *what = p->kind == ARG_OPERAND ? "operand" : "result";
        int64_t n = p->kind == ARG_OPERAND ? f->args.size : f->rets.size;
        if (p->index >= n)
            return error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "kernel '%s' argument %u%s: %s %lld does not exist (the call has %lld)", c->name, i,
                         param_label(p, nm, sizeof nm), what, (long long)p->index, (long long)n);
        const XLA_FFI_Buffer *b =
            p->kind == ARG_OPERAND ? f->args.args[p->index] : f->rets.rets[p->index];
        int32_t got = xla_dtype_scalar(b->dtype);
        if (got != p->elem && !same_width_int(got, p->elem))
            return error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "kernel '%s' argument %u%s (*%s): %s %lld is an array of %s", c->name, i,
                         param_label(p, nm, sizeof nm), trd_scalar_name(p->elem), what, (long long)p->index,
                         xla_dtype_name(b->dtype));
    }
    for (uint32_t t = 0; t < c->ntma; t++) {
        trd_status_t st = xla_tma_check(f, &c->tma[t], s->ops, s->dev->uri);
        if (st != TRD_OK)
            return error(api, errc_of(st), "%s", trd_error_message());
    }
    for (uint32_t z = 0; z < c->nzero; z++)
        if (c->zero[z] < 0 || c->zero[z] >= f->rets.size)
            return error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "kernel '%s': result %lld to zero does not exist",
                         c->name, (long long)c->zero[z]);
    for (int k = 0; k < 2; k++) {
        if (!s->scratch_need[k])
            continue;
        const char *kind = k ? "profile" : "global";
        if (c->scratch[k] < 0 || c->scratch[k] >= f->rets.size)
            return error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "kernel '%s' needs %llu bytes of %s scratch on %s, but the call passes no scratch buffer",
                         c->name, (unsigned long long)s->scratch_need[k], kind, s->dev->uri);
        uint64_t have = buffer_bytes(f->rets.rets[c->scratch[k]]);
        if (have < s->scratch_need[k])
            return error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "kernel '%s' needs %llu bytes of %s scratch on %s, the scratch buffer has %llu", c->name,
                         (unsigned long long)s->scratch_need[k], kind, s->dev->uri, (unsigned long long)have);
    }
    return NULL;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return a ? (v + a - 1) / a * a : v;
}

/* The slow path, once per device: load the kernel with that device's driver. */
static XLA_FFI_Error *slot_for(XLA_FFI_CallFrame *f, struct call *c, trd_device_t *dev, struct slot **out)
{
    const XLA_FFI_Api *api = f->api;
    pthread_mutex_lock(&c->lock);
    struct slot *s = atomic_load_explicit(&c->slots[dev->index], memory_order_relaxed);
    XLA_FFI_Error *e = NULL;
    if (!s) {
        struct trd_loaded *l;
        void *h;
        trd_status_t st = trd_kernel_loaded(c->ck->kernel, dev, &l);
        if (st == TRD_OK)
            st = trd_device_handle(dev, &h);
        if (st != TRD_OK) {
            e = error(api, errc_of(st), "trident: %s", trd_error_message());
        } else if (!(s = calloc(1, sizeof *s))) {
            e = error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
        } else {
            s->dev = dev;
            s->devh = h;
            s->ops = dev->drv->ops;
            s->loaded = l;
            const struct trd_meta *m = &l->target->meta;
            uint64_t programs = (uint64_t)c->grid[0] * c->grid[1] * c->grid[2] * m->num_ctas;
            s->scratch_need[0] = m->global_scratch_size ? programs * align_up(m->global_scratch_size, m->global_scratch_align) : 0;
            s->scratch_need[1] = m->profile_scratch_size ? programs * align_up(m->profile_scratch_size, m->profile_scratch_align) : 0;
            atomic_store_explicit(&c->slots[dev->index], s, memory_order_release);
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (!e)
        *out = s;
    return e;
}

/* The driver's stream object over XLA's stream, for memsets: made once per
 * stream (XLA uses few: its compute stream, a capture stream). */
static void *wrapped_stream(struct slot *s, void *native)
{
    for (int i = 0; i < STREAM_CACHE; i++) {
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
    struct call *c = ga.state;
    int32_t ordinal = 0;
    if (!device_ordinal(f, &ordinal) && platform != PLATFORM_CPU)
        return error(api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                     "trident_kernel_call: this XLA does not tell the device ordinal (XLA_FFI_DeviceOrdinal_Get)");
    trd_runtime_t *rt = c->ck->kernel->rt;
    /* the device's slot: one load on the fast path */
    struct slot *s = ordinal >= 0 && ordinal < 64 ? atomic_load_explicit(&c->by_ordinal[ordinal], memory_order_acquire)
                                                  : NULL;
    if (!s) {
        trd_device_t *dev = find_device(rt, platform, ordinal);
        if (!dev)
            return error(api, XLA_FFI_Error_Code_NOT_FOUND,
                         "kernel '%s': trident has no %s device for XLA's device %d (see `trident devices`)", c->name,
                         backend_of(platform), ordinal);
        if ((e = slot_for(f, c, dev, &s)) != NULL)
            return e;
        if (ordinal >= 0 && ordinal < 64)
            atomic_store_explicit(&c->by_ordinal[ordinal], s, memory_order_release);
    }
    if (!atomic_load_explicit(&s->checked, memory_order_acquire)) {
        if ((e = check_buffers(f, c, s)) != NULL)
            return e;
        atomic_store_explicit(&s->checked, 1, memory_order_release);
    }
    void *stream = NULL;
    if (platform != PLATFORM_CPU) {
        XLA_FFI_Stream_Get_Args sa = {XLA_FFI_Stream_Get_Args_STRUCT_SIZE, NULL, f->ctx, NULL};
        if ((e = api->XLA_FFI_Stream_Get(&sa)) != NULL)
            return e;
        stream = sa.stream;
    }
    /* zero what must be zeroed, on the same stream (a memset node in a graph) */
    for (uint32_t z = 0; z < c->nzero; z++) {
        const XLA_FFI_Buffer *b = f->rets.rets[c->zero[z]];
        void *ws = stream ? wrapped_stream(s, stream) : NULL;
        if (stream && !ws)
            return error(api, XLA_FFI_Error_Code_INTERNAL, "kernel '%s': cannot use XLA's stream on %s", c->name,
                         s->dev->uri);
        trd_status_t st = s->ops->mem_set(s->devh, b->data, 0, buffer_bytes(b), ws);
        if (st != TRD_OK)
            return error(api, errc_of(st), "kernel '%s': zeroing result %lld: %s", c->name, (long long)c->zero[z],
                         trd_error_message());
    }
    if (c->grid[0] == 0 || c->grid[1] == 0 || c->grid[2] == 0)
        return NULL;
    uint64_t storage[MAX_PARAMS];
    void *params[MAX_PARAMS + TRD_DRIVER_EXTRA_PARAMS];
    uint32_t sizes[MAX_PARAMS + TRD_DRIVER_EXTRA_PARAMS];
    memcpy(storage, c->storage, c->nparams * sizeof *storage);
    memcpy(sizes, c->sizes, c->nparams * sizeof *sizes);
    for (uint32_t i = 0; i < c->nparams; i++) {
        const struct param *p = &c->params[i];
        if (p->kind == ARG_OPERAND)
            memcpy(&storage[i], &((XLA_FFI_Buffer *)f->args.args[p->index])->data, sizeof(void *));
        else if (p->kind == ARG_RESULT)
            memcpy(&storage[i], &((XLA_FFI_Buffer *)f->rets.rets[p->index])->data, sizeof(void *));
        params[i] = &storage[i];
    }
    xla_tma_bytes maps[XLA_TMA_MAX];
    trd_status_t st;
    if (c->ntma && (st = xla_tma_encode(f, c->tma, c->ntma, s->ops, s->devh, maps, params)) != TRD_OK)
        return error(api, errc_of(st), "encoding a tensor map on %s: %s", s->dev->uri, trd_error_message());
    trd_driver_launch_t dl = {
        .struct_size = sizeof dl,
        .num_params = c->nparams,
        .grid = {c->grid[0], c->grid[1], c->grid[2]},
        .params = params,
        .param_sizes = sizes,
        .global_scratch = c->scratch[0] >= 0 && s->scratch_need[0] ? ((XLA_FFI_Buffer *)f->rets.rets[c->scratch[0]])->data : NULL,
        .profile_scratch = c->scratch[1] >= 0 && s->scratch_need[1] ? ((XLA_FFI_Buffer *)f->rets.rets[c->scratch[1]])->data : NULL,
    };
    st = s->ops->launch(s->loaded->module, NULL, stream, &dl);
    if (st != TRD_OK)
        return error(api, errc_of(st), "launching kernel '%s' on %s: %s", c->name, s->dev->uri, trd_error_message());
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
