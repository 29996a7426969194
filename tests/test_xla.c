/* SPDX-License-Identifier: Apache-2.0 */
/* test_xla.c: the XLA handlers (libtrident_xla) driven as XLA drives them, through
 * a stand-in for XLA's side of the FFI (the API table, call frames,
 * attributes, state) and trident's real runtime: host kernels on the CPU
 * platform, and the driver double named "cuda" (tests/drivers, offering stream_capturing) for
 * what needs a stream that can be captured into a graph.
 *
 * Autotuned calls (attribute version 2): the fastest candidate is chosen at
 * the first execution on the call's own buffers (one candidate is made slow
 * by a grid of millions of empty programs), aliased operands come out as one
 * launch leaves them, zeroed results are zeroed, the choice is kept by
 * libtrident's tuner (trd_tuner_*) in memory and in
 * <cache_dir>/tune/<kernel>-<sha256(key)>-<arch>.json, a corrupt file is replaced,
 * a planted one (another key's or arch's, another user's, open to others) ignored,
 * an unwritable directory leaves the choice in memory, a candidate that
 * cannot run loses, and a captured stream gets candidate 0 unchosen. */
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <trident/xla.h>

#include "base/sha256.h"
#include "xla/ffi.h"
#include "tests/drivers/driver_double.h"
#include "tests/testutil.h"

/* ------------------------------------------------------ XLA's side, faked */

struct fx_error {
    XLA_FFI_Error_Code code;
    char msg[4096];
};

struct fx_ctx {          /* XLA_FFI_ExecutionContext: opaque to the handler */
    void *state;
    void *stream;
    int32_t ordinal;
    const void *record;  /* the record extension (an XLA_FFI_Extension) of a RECORD call, or NULL */
};

static XLA_FFI_Error *fx_error_create(XLA_FFI_Error_Create_Args *a)
{
    struct fx_error *e = calloc(1, sizeof *e);
    ck_assert_ptr_nonnull(e);
    e->code = a->errc;
    snprintf(e->msg, sizeof e->msg, "%s", a->message);
    return (XLA_FFI_Error *)e;
}

static void fx_error_destroy(XLA_FFI_Error_Destroy_Args *a)
{
    free(a->error);
}

static XLA_FFI_Error *fx_state_set(XLA_FFI_State_Set_Args *a)
{
    ((struct fx_ctx *)a->ctx)->state = a->state;
    return NULL;
}

static XLA_FFI_Error *fx_state_get(XLA_FFI_State_Get_Args *a)
{
    a->state = ((struct fx_ctx *)a->ctx)->state;
    return NULL;
}

static XLA_FFI_Error *fx_stream_get(XLA_FFI_Stream_Get_Args *a)
{
    a->stream = ((struct fx_ctx *)a->ctx)->stream;
    return NULL;
}

static XLA_FFI_Error *fx_ordinal_get(XLA_FFI_DeviceOrdinal_Get_Args *a)
{
    a->device_ordinal = ((struct fx_ctx *)a->ctx)->ordinal;
    return NULL;
}

#if XLA_HAVE_RECORD
static XLA_FFI_Error *fx_find_extension(XLA_FFI_InvokeContext_FindExtension_Args *a)
{
    const XLA_FFI_Extension *e = ((struct fx_ctx *)a->ctx)->record;
    a->extension = e && e->id.extension_type == a->extension_type ? e : NULL;
    return NULL;
}
#endif

static XLA_FFI_Api fx_api = {
    .struct_size = XLA_FFI_Api_STRUCT_SIZE,
    .api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR},
    .XLA_FFI_Error_Create = fx_error_create,
    .XLA_FFI_Error_Destroy = fx_error_destroy,
    .XLA_FFI_Stream_Get = fx_stream_get,
    .XLA_FFI_State_Set = fx_state_set,
    .XLA_FFI_State_Get = fx_state_get,
    .XLA_FFI_DeviceOrdinal_Get = fx_ordinal_get,
#if XLA_HAVE_RECORD
    .XLA_FFI_InvokeContext_FindExtension = fx_find_extension,
#endif
};

/* A call's attributes, as XLA hands them over. */
struct fx_attrs {
    int64_t n;
    XLA_FFI_AttrType types[24];
    XLA_FFI_ByteSpan name_spans[24];
    XLA_FFI_ByteSpan *names[24];
    void *values[24];
    XLA_FFI_ByteSpan strings[24];
    XLA_FFI_Array arrays[24];
    XLA_FFI_Scalar scalars[24];
};

static void fx_add(struct fx_attrs *a, const char *name, XLA_FFI_AttrType type, void *value)
{
    ck_assert_int_lt(a->n, 24);
    int64_t i = a->n++;
    a->name_spans[i] = (XLA_FFI_ByteSpan){name, strlen(name)};
    a->names[i] = &a->name_spans[i];
    a->types[i] = type;
    a->values[i] = value;
}

static void fx_string(struct fx_attrs *a, const char *name, const void *data, size_t len)
{
    a->strings[a->n] = (XLA_FFI_ByteSpan){data, len};
    fx_add(a, name, XLA_FFI_AttrType_STRING, &a->strings[a->n]);
}

static void fx_ints(struct fx_attrs *a, const char *name, const int64_t *v, size_t n)
{
    a->arrays[a->n] = (XLA_FFI_Array){XLA_FFI_DataType_S64, n, (void *)v};
    fx_add(a, name, XLA_FFI_AttrType_ARRAY, &a->arrays[a->n]);
}

static void fx_int(struct fx_attrs *a, const char *name, int32_t *v)
{
    a->scalars[a->n] = (XLA_FFI_Scalar){XLA_FFI_DataType_S32, v};
    fx_add(a, name, XLA_FFI_AttrType_SCALAR, &a->scalars[a->n]);
}

/* Drops an attribute (to test its absence). */
static void fx_drop(struct fx_attrs *a, const char *name)
{
    for (int64_t i = 0; i < a->n; i++)
        if (a->name_spans[i].len == strlen(name) && !memcmp(a->name_spans[i].ptr, name, a->name_spans[i].len)) {
            a->types[i] = a->types[a->n - 1];
            a->name_spans[i] = a->name_spans[a->n - 1];
            a->names[i] = &a->name_spans[i];
            a->values[i] = a->values[a->n - 1];
            a->n--;
            return;
        }
}

struct fx_buf {
    XLA_FFI_Buffer b;
    int64_t dim;
};

static void fx_buffer(struct fx_buf *fb, XLA_FFI_DataType dtype, void *data, int64_t n)
{
    fb->dim = n;
    fb->b = (XLA_FFI_Buffer){XLA_FFI_Buffer_STRUCT_SIZE, NULL, dtype, data, 1, &fb->dim};
}

/* One executable holding one call: INSTANTIATE, then EXECUTEs. */
struct fx_exec {
    struct fx_ctx ctx;
    int platform;
    XLA_FFI_ArgType arg_types[8];
    XLA_FFI_RetType ret_types[8];
    void *args[8], *rets[8];
    int64_t nargs, nrets;
};

static XLA_FFI_CallFrame fx_frame(struct fx_exec *x, struct fx_attrs *a, XLA_FFI_ExecutionStage stage)
{
    XLA_FFI_CallFrame f = {XLA_FFI_CallFrame_STRUCT_SIZE, NULL, &fx_api, (XLA_FFI_ExecutionContext *)&x->ctx, stage,
                           {XLA_FFI_Args_STRUCT_SIZE, NULL, x->nargs, x->arg_types, x->args},
                           {XLA_FFI_Rets_STRUCT_SIZE, NULL, x->nrets, x->ret_types, x->rets},
                           {XLA_FFI_Attrs_STRUCT_SIZE, NULL, a->n, a->types, a->names, a->values}, NULL};
    return f;
}

static void *(*const instantiate_fn[])(void *) = {trd_xla_cuda_instantiate, trd_xla_rocm_instantiate,
                                                  trd_xla_cpu_instantiate};
static void *(*const execute_fn[])(void *) = {trd_xla_cuda_execute, trd_xla_rocm_execute, trd_xla_cpu_execute};

/* NULL on success, else the error's message (the error freed); the text lives until the next call. */
static const char *fx_result(XLA_FFI_Error *e)
{
    static char msg[4096];
    if (!e)
        return NULL;
    snprintf(msg, sizeof msg, "%s", ((struct fx_error *)e)->msg);
    free(e);
    return msg;
}

static const char *fx_instantiate(struct fx_exec *x, struct fx_attrs *a)
{
    XLA_FFI_CallFrame f = fx_frame(x, a, XLA_FFI_ExecutionStage_INSTANTIATE);
    return fx_result(instantiate_fn[x->platform](&f));
}

static const char *fx_execute(struct fx_exec *x, struct fx_attrs *a)
{
    XLA_FFI_CallFrame f = fx_frame(x, a, XLA_FFI_ExecutionStage_EXECUTE);
    return fx_result(execute_fn[x->platform](&f));
}

/* The executable goes away: XLA deletes the state with the registered type's deleter. */
static void fx_release(struct fx_exec *x)
{
    if (x->ctx.state)
        ((XLA_FFI_TypeInfo *)trd_xla_type_info())->deleter(x->ctx.state);
    x->ctx.state = NULL;
}

#define FX_OK(what) do { const char *m_ = (what); ck_assert_msg(m_ == NULL, "%s: %s", #what, m_); } while (0)
#define FX_FAILS(what, needle)                                                                           \
    do {                                                                                                 \
        const char *m_ = (what);                                                                         \
        ck_assert_msg(m_ != NULL, "%s succeeded", #what);                                                \
        ck_assert_msg(strstr(m_, (needle)) != NULL, "%s: '%s' lacks '%s'", #what, m_, (needle));         \
    } while (0)

/* ------------------------------------------------------------- the log */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[1 << 16];

static void on_log(void *user, int32_t level, const char *message)
{
    (void)user;
    pthread_mutex_lock(&log_lock);
    size_t n = strlen(log_text);
    static const char *const names[] = {"off", "error", "warn", "info", "debug"};
    snprintf(log_text + n, sizeof log_text - n, "%s: %s\n", level >= 0 && level <= 4 ? names[level] : "?", message);
    pthread_mutex_unlock(&log_lock);
}

static void log_reset(void)
{
    log_text[0] = '\0';
}

static unsigned log_count(const char *needle)
{
    unsigned n = 0;
    for (const char *p = strstr(log_text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

#define LOG_HAS(needle) ck_assert_msg(log_count(needle) > 0, "the log lacks '%s':\n%s", (needle), log_text)

/* --------------------------------------------------------------- kernels */

struct blob {
    void *data;
    uint64_t size;
};

/* A kernel (any source; metadata for a raw image, or NULL) as a bundle. */
static struct blob bundle_with(const char *path, const char *name, const char *signature, const char *metadata)
{
    trd_runtime_t *rt;
    TU_OK(trd_runtime_shared(&rt));
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = path, .name = name, .signature = signature,
                           .metadata = metadata};
    trd_kernel_t *k;
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    TU_OK(trd_kernel_get_info(k, &ki));
    trd_bundle_target_t t[8];
    ck_assert_uint_le(ki.num_targets, 8);
    for (uint32_t i = 0; i < ki.num_targets; i++) {
        trd_target_info_t ti = {.struct_size = sizeof ti};
        TU_OK(trd_kernel_target_info(k, i, &ti));
        t[i] = (trd_bundle_target_t){.struct_size = sizeof t[i], .format = ti.format, .backend = ti.backend,
                                     .arch = ti.arch, .image = ti.image, .image_size = ti.size,
                                     .metadata = ti.metadata};
    }
    struct blob b;
    TU_OK(trd_bundle_write(ki.name, ki.signature, t, ki.num_targets, &b.data, &b.size));
    trd_kernel_destroy(k);
    return b;
}

static struct blob bundle_of(const char *path, const char *name, const char *signature)
{
    return bundle_with(path, name, signature, NULL);
}

static struct blob add_bundle(void) /* the host twin, sm90 cubin and PTX, gfx942 */
{
    return bundle_of(tu_path("%s/examples/add_kernel.trdb", tu_builddir()), NULL, NULL);
}

/* Bundles concatenated, with the offsets attribute kernel_offsets. */
struct cands {
    char data[1 << 21];
    size_t len;
    int64_t off[9];
    int64_t n;
};

static void cands_add(struct cands *c, struct blob b)
{
    ck_assert_uint_le(c->len + b.size, sizeof c->data);
    memcpy(c->data + c->len, b.data, b.size);
    c->len += b.size;
    c->off[++c->n] = (int64_t)c->len;
    trd_free(b.data);
}

/* The attributes of an autotuned call of a kernel with the launch parameters described by kinds/index. */
struct call_spec {
    struct cands k;
    int64_t grid[24];
    int64_t zero[16], zoff[9];
    int64_t kinds[16], index[16];
    size_t nparams, nzero, naliased;
    int64_t aliased[4];
    char scalars[64];
    size_t slen;
    int64_t scratch[2];
    const char *key;
    const char *dir;
    int32_t version;        /* 1 for one kernel without a key, else 2 */
    int32_t force_version;  /* instead, when set */
    const char *options;    /* the options attribute; NULL: {} */
};

static void spec_attrs(struct call_spec *s, struct fx_attrs *a)
{
    memset(a, 0, sizeof *a);
    s->scratch[0] = s->scratch[1] = -1;
    fx_string(a, "kernel", s->k.data, s->k.len);
    fx_ints(a, "grid", s->grid, 3 * (size_t)s->k.n);
    fx_ints(a, "arg_kind", s->kinds, s->nparams);
    fx_ints(a, "arg_index", s->index, s->nparams);
    fx_string(a, "scalars", s->scalars, s->slen);
    fx_ints(a, "zero", s->zero, s->nzero);
    fx_ints(a, "scratch", s->scratch, 2);
    const char *opts = s->options ? s->options : "{}";
    fx_string(a, "options", opts, strlen(opts));
    int tuned = s->k.n > 1 || s->key;
    s->version = s->force_version ? s->force_version : tuned ? 2 : 1;
    fx_int(a, "version", &s->version);
    if (tuned) {
        fx_ints(a, "kernel_offsets", s->k.off, (size_t)s->k.n + 1);
        fx_ints(a, "zero_offsets", s->zoff, (size_t)s->k.n + 1);
        fx_ints(a, "aliased", s->aliased, s->naliased);
        fx_string(a, "autotune_key", s->key ? s->key : "k", strlen(s->key ? s->key : "k"));
        fx_string(a, "cache_dir", s->dir ? s->dir : "", strlen(s->dir ? s->dir : ""));
    }
}

/* A grid of millions of programs that do nothing but be scheduled: the slow candidate. */
#define SLOW_PROGRAMS 4000000

/* A call of `ncand` candidates made by `bundle`, one grid of programs[i] along x each, launched with the
 * parameters kinds/index (scalars and zeroed results left to the caller). */
static void spec_init(struct call_spec *s, int ncand, struct blob (*bundle)(void), const uint32_t *programs,
                      const int64_t *kinds, const int64_t *index, size_t nparams, const char *key, const char *dir)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < ncand; i++) {
        cands_add(&s->k, bundle());
        s->grid[3 * i] = programs[i];
        s->grid[3 * i + 1] = s->grid[3 * i + 2] = 1;
    }
    memcpy(s->kinds, kinds, nparams * sizeof *kinds);
    memcpy(s->index, index, nparams * sizeof *index);
    s->nparams = nparams;
    s->key = key;
    s->dir = dir;
}

static struct blob cuda_add_bundle(void) /* Triton's sm90 add: nothing the host can run */
{
    return bundle_of(tu_fixture("cuda", "add_fp32"), NULL, NULL);
}

static struct blob scale_bundle(void) /* x *= alpha, in place */
{
    return bundle_of(tu_host_kernel("scale_inplace_kernel"), "scale_inplace_kernel", "x:*fp32,n:i32,alpha:fp32");
}

static struct blob accumulate_bundle(void) /* out[0] += sum(x), count[0] += n, with atomics */
{
    return bundle_of(tu_host_kernel("accumulate_kernel"), "accumulate_kernel", "x:*i32,n:i32,out:*i64,count:*i32");
}

/* add_kernel over n floats: operands x, y; result out; 1024 elements a program. */
static void add_spec(struct call_spec *s, const uint32_t *programs, int ncand, const char *key, const char *dir)
{
    static const int64_t kinds[] = {0, 0, 1, 2}, index[] = {0, 1, 0, 0};
    spec_init(s, ncand, add_bundle, programs, kinds, index, 4, key, dir);
}

struct add_bufs {
    float *x, *y, *out;
    int32_t n;
    struct fx_buf bx, by, bo;
};

static void add_bufs(struct add_bufs *b, struct fx_exec *x, int32_t n)
{
    b->n = n;
    b->x = malloc(n * 4);
    b->y = malloc(n * 4);
    b->out = malloc(n * 4);
    tu_fill_f32(b->x, (size_t)n, 1);
    tu_fill_f32(b->y, (size_t)n, 2);
    memset(b->out, 0xff, (size_t)n * 4); /* NaN: unwritten elements show */
    fx_buffer(&b->bx, XLA_FFI_DataType_F32, b->x, n);
    fx_buffer(&b->by, XLA_FFI_DataType_F32, b->y, n);
    fx_buffer(&b->bo, XLA_FFI_DataType_F32, b->out, n);
    x->nargs = 2;
    x->args[0] = &b->bx.b;
    x->args[1] = &b->by.b;
    x->arg_types[0] = x->arg_types[1] = XLA_FFI_ArgType_BUFFER;
    x->nrets = 1;
    x->rets[0] = &b->bo.b;
    x->ret_types[0] = XLA_FFI_RetType_BUFFER;
}

/* An add call over n elements: its buffers, the scalar n, the attributes. */
static void add_call(struct call_spec *s, struct fx_exec *x, struct add_bufs *b, struct fx_attrs *a, int32_t n)
{
    add_bufs(b, x, n);
    memcpy(s->scalars, &n, 4);
    s->slen = 4;
    spec_attrs(s, a);
}

static void add_check(const struct add_bufs *b)
{
    for (int32_t i = 0; i < b->n; i++)
        ck_assert_msg(b->out[i] == b->x[i] + b->y[i], "out[%d] = %g, expected %g", i, b->out[i], b->x[i] + b->y[i]);
}

static void add_free(struct add_bufs *b)
{
    free(b->x);
    free(b->y);
    free(b->out);
}

/* ------------------------------------------------------------ cache dirs */

static char tmp_root[] = "/tmp/trd_xla_XXXXXX";

static const char *host_arch(void)
{
    trd_runtime_t *rt;
    trd_device_t *d;
    TU_OK(trd_runtime_shared(&rt));
    TU_OK(trd_runtime_device_find(rt, "host:0", &d));
    static trd_device_props_t p = {.struct_size = sizeof p};
    TU_OK(trd_device_get_props(d, &p));
    return p.arch;
}

/* Where libtrident's tuner keeps the add kernel's choice for key on arch (core/tune.c). */
static const char *choice_file_on(const char *dir, const char *key, const char *arch)
{
    uint8_t d[32];
    char hex[65];
    trd_sha256(key, strlen(key), d);
    trd_hex(d, 32, hex);
    return tu_path("%s/tune/add_kernel-%s-%s.json", dir, hex, arch);
}

static const char *choice_file(const char *dir, const char *key)
{
    return choice_file_on(dir, key, host_arch());
}

static json_t *read_json(const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    ck_assert_msg(j != NULL, "%s: %s", path, err.text);
    return j;
}

static void setup(void)
{
    log_reset();
    TU_OK(trd_log_set_callback(on_log, NULL));
    TU_OK(trd_log_set_level(TRD_LOG_INFO));
}

static void teardown(void)
{
    trd_log_set_callback(NULL, NULL);
    trd_log_set_level(TRD_LOG_OFF);
}

/* The add kernel's autotuned call with a slow candidate 0 and a fast candidate 1, its choice kept under key in dir,
 * executed once (its result checked). */
static void slow_fast_first(struct call_spec *s, const char *key, const char *dir, struct fx_exec *x,
                            struct add_bufs *b, struct fx_attrs *a)
{
    static const uint32_t programs[] = {SLOW_PROGRAMS, 4};
    add_spec(s, programs, 2, key, dir);
    *x = (struct fx_exec){.platform = PLATFORM_CPU};
    add_call(s, x, b, a, 4000);
    FX_OK(fx_instantiate(x, a));
    FX_OK(fx_execute(x, a));
    add_check(b);
}

/* Another executable of x's call (as XLA makes for a new compilation): instantiated and executed on the same
 * buffers, its result checked. */
static void run_again(const struct fx_exec *x, struct fx_exec *again, struct add_bufs *b, struct fx_attrs *a)
{
    *again = *x;
    again->ctx.state = NULL;
    memset(b->out, 0, (size_t)b->n * 4);
    FX_OK(fx_instantiate(again, a));
    FX_OK(fx_execute(again, a));
    add_check(b);
}

/* ----------------------------------------------------------------- tests */

/* A call with one kernel (version 1) runs as it always did. */
START_TEST(single_kernel_call)
{
    static struct call_spec s; /* large: bundles of several targets */
    static const uint32_t programs[] = {3};
    add_spec(&s, programs, 1, NULL, NULL);
    struct fx_exec x = {.platform = PLATFORM_CPU};
    struct add_bufs b;
    struct fx_attrs a;
    add_call(&s, &x, &b, &a, 3000);
    ck_assert_int_eq(s.version, 1);
    FX_OK(fx_instantiate(&x, &a));
    FX_OK(fx_execute(&x, &a));
    add_check(&b);
    ck_assert_uint_eq(log_count("autotune"), 0);
    fx_release(&x);
    add_free(&b);
}
END_TEST

/* A grid whose scratch bytes wrap 64 bits (2^60 programs x 16 bytes = 2^64) is refused at the first execution,
 * naming the sizes; it was taken for a kernel that needs no scratch (2^64 mod 2^64 = 0) and launched: 2^60
 * programs on the host, without end. */
START_TEST(scratch_bytes_that_wrap_refused)
{
    static struct call_spec s;
    static const uint32_t programs[] = {1u << 30};
    static const int64_t kinds[] = {0, 1}, index[] = {0, 0};
    memset(&s, 0, sizeof s);
    cands_add(&s.k, bundle_with(tu_host_kernel("scratch_kernel"), "scratch_kernel", "x:*fp32,out:*fp32",
                                "{\"name\":\"scratch_kernel\",\"target\":{\"backend\":\"host\",\"arch\":\"\"},"
                                "\"num_warps\":1,\"global_scratch_size\":16,\"global_scratch_align\":16}"));
    s.grid[0] = programs[0];
    s.grid[1] = 1u << 30;
    s.grid[2] = 1;
    memcpy(s.kinds, kinds, sizeof kinds);
    memcpy(s.index, index, sizeof index);
    s.nparams = 2;
    float x[4] = {1, 2, 3, 4}, out[1] = {0};
    struct fx_buf bx, bo;
    fx_buffer(&bx, XLA_FFI_DataType_F32, x, 4);
    fx_buffer(&bo, XLA_FFI_DataType_F32, out, 1);
    struct fx_exec xe = {.platform = PLATFORM_CPU, .nargs = 1, .nrets = 1, .args = {&bx.b}, .rets = {&bo.b}};
    struct fx_attrs a;
    spec_attrs(&s, &a);
    FX_OK(fx_instantiate(&xe, &a));
    FX_FAILS(fx_execute(&xe, &a), "kernel 'scratch_kernel' on host:0: grid 1073741824x1073741824x1 x 1 CTAs x 16 "
                                  "bytes of global scratch a program is more than 2^64 bytes");
    ck_assert(out[0] == 0); /* nothing ran */
    fx_release(&xe);
}
END_TEST

/* The slow candidate first: the fast one wins on the call's buffers, the choice is kept on disk and in
 * memory; another executable of the same call takes it from memory, without benchmarking. The choice is
 * libtrident's tuner's (trd_tuner_*): its file in <cache_dir>/tune/, in the core's format, naming the key by its
 * sha256; a choice file of the handler's earlier format (<cache_dir>/autotune/<key>-<arch>.json) is never read:
 * here one names the slow candidate, and the benchmark chooses the fast one. */
START_TEST(fastest_candidate_chosen_and_kept)
{
    const char *dir = tu_path("%s/fastest", tmp_root);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(mkdir(tu_path("%s/autotune", dir), 0700), 0);
    const char *old = tu_path("%s/autotune/fastest-%s.json", dir, host_arch());
    FILE *fp = fopen(old, "w");
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "{\"kernel\": \"add_kernel\", \"key\": \"fastest\", \"arch\": \"%s\", \"candidates\": 2, "
                "\"choice\": 0}", host_arch());
    fclose(fp);
    ck_assert_int_eq(chmod(old, 0600), 0);
    static struct call_spec s; /* large: bundles of several targets */
    struct fx_exec x;
    struct add_bufs b;
    struct fx_attrs a;
    slow_fast_first(&s, "fastest", dir, &x, &b, &a);
    LOG_HAS("autotune: kernel 'add_kernel' on host:0: candidate 1 of 2 chosen by benchmark on the call's buffers");
    ck_assert_uint_eq(log_count("warn:"), 0);
    /* the file, in a private directory */
    const char *path = choice_file(dir, "fastest");
    json_t *j = read_json(path);
    uint8_t d[32];
    char hex[65];
    trd_sha256("fastest", 7, d);
    trd_hex(d, 32, hex);
    ck_assert_str_eq(json_string_value(json_object_get(j, "key_sha256")), hex);
    ck_assert(json_is_array(json_object_get(j, "configs")) && json_array_size(json_object_get(j, "configs")) == 2);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "choice")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "variants")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(j, "format")), "trident-tune"); /* the core tuner's file */
    ck_assert_str_eq(json_string_value(json_object_get(j, "kernel")), "add_kernel");
    ck_assert_str_eq(json_string_value(json_object_get(j, "device")), "host:0");
    json_t *times = json_object_get(j, "times_ms");
    ck_assert(json_is_array(times) && json_array_size(times) == 2);
    ck_assert(json_real_value(json_array_get(times, 0)) > json_real_value(json_array_get(times, 1)));
    json_decref(j);
    struct stat st;
    ck_assert_int_eq(stat(tu_path("%s/tune", dir), &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0700);
    /* later executions: the fast path, no new benchmark */
    memset(b.out, 0, (size_t)b.n * 4);
    FX_OK(fx_execute(&x, &a));
    add_check(&b);
    ck_assert_uint_eq(log_count("chosen by benchmark"), 1);
    /* another executable of the same call */
    struct fx_exec x2;
    run_again(&x, &x2, &b, &a);
    ck_assert_uint_eq(log_count("chosen by benchmark"), 1);
    LOG_HAS("candidate 1 of 2, from this process's memory");
    /* a file another process wrote: copied into a new directory this process never used */
    const char *dir2 = tu_path("%s/fastest2", tmp_root);
    char *text;
    size_t size;
    ck_assert_int_eq(mkdir(dir2, 0700), 0);
    ck_assert_int_eq(mkdir(tu_path("%s/tune", dir2), 0700), 0);
    fp = fopen(path, "rb");
    ck_assert_ptr_nonnull(fp);
    text = calloc(1, 1 << 16);
    size = fread(text, 1, (1 << 16) - 1, fp);
    fclose(fp);
    fp = fopen(choice_file(dir2, "fastest"), "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(text, 1, size, fp), size);
    fclose(fp);
    free(text);
    s.dir = dir2;
    spec_attrs(&s, &a);
    struct fx_exec x3 = x;
    x3.ctx.state = NULL;
    FX_OK(fx_instantiate(&x3, &a));
    FX_OK(fx_execute(&x3, &a));
    add_check(&b);
    ck_assert_uint_eq(log_count("chosen by benchmark"), 1);
    LOG_HAS(tu_path("candidate 1 of 2, from %s", choice_file(dir2, "fastest")));
    fx_release(&x3);
    fx_release(&x2);
    fx_release(&x);
    add_free(&b);
}
END_TEST

/* x *= alpha in place (operand 0 aliased to result 0): after benchmarking both candidates, several launches
 * each, x holds x0 * alpha exactly once. */
START_TEST(aliased_operand_restored)
{
    enum { N = 5000 };
    static struct call_spec s; /* large: bundles of several targets */
    static const uint32_t programs[] = {SLOW_PROGRAMS, (N + 511) / 512};
    static const int64_t kinds[] = {0, 2, 2}, index[] = {0, 0, 0};
    spec_init(&s, 2, scale_bundle, programs, kinds, index, 3, "aliased", tu_path("%s/aliased", tmp_root));
    int32_t n = N;
    float alpha = 1.75f;
    memcpy(s.scalars, &n, 4);
    memcpy(s.scalars + 4, &alpha, 4);
    s.slen = 8;
    s.aliased[0] = 0;
    s.naliased = 1;
    float *x0 = malloc(N * 4), *xv = malloc(N * 4);
    tu_fill_f32(x0, N, 7);
    memcpy(xv, x0, N * 4);
    struct fx_buf bx;
    fx_buffer(&bx, XLA_FFI_DataType_F32, xv, N);
    struct fx_exec x = {.platform = PLATFORM_CPU, .nargs = 1, .nrets = 1};
    x.args[0] = x.rets[0] = &bx.b; /* XLA passes the one buffer as both */
    struct fx_attrs a;
    spec_attrs(&s, &a);
    FX_OK(fx_instantiate(&x, &a));
    FX_OK(fx_execute(&x, &a));
    LOG_HAS("candidate 1 of 2 chosen by benchmark");
    for (int i = 0; i < N; i++)
        ck_assert_msg(xv[i] == x0[i] * alpha, "x[%d] = %g, expected %g", i, xv[i], x0[i] * alpha);
    fx_release(&x);
    free(x0);
    free(xv);
}
END_TEST

/* Results each candidate zeroes are zeroed before every launch, the benchmark's and the real one. */
START_TEST(zeroed_results_per_candidate)
{
    enum { N = 3000 };
    static struct call_spec s; /* large: bundles of several targets */
    static const uint32_t programs[] = {(N + 127) / 128, SLOW_PROGRAMS};
    static const int64_t kinds[] = {0, 2, 1, 1}, index[] = {0, 0, 0, 1};
    spec_init(&s, 2, accumulate_bundle, programs, kinds, index, 4, "zeroed", NULL);
    for (int i = 0; i < 2; i++) {
        s.zero[s.nzero++] = 0;
        s.zero[s.nzero++] = 1;
        s.zoff[i + 1] = (int64_t)s.nzero;
    }
    int32_t n = N;
    memcpy(s.scalars, &n, 4);
    s.slen = 4;
    int32_t *xs = malloc(N * 4);
    tu_fill_i32(xs, N, 5);
    int64_t total = -12345, want = 0;
    int32_t count = -6789;
    for (int i = 0; i < N; i++)
        want += xs[i];
    struct fx_buf bx, bt, bc;
    fx_buffer(&bx, XLA_FFI_DataType_S32, xs, N);
    fx_buffer(&bt, XLA_FFI_DataType_S64, &total, 1);
    fx_buffer(&bc, XLA_FFI_DataType_S32, &count, 1);
    struct fx_exec x = {.platform = PLATFORM_CPU, .nargs = 1, .nrets = 2};
    x.args[0] = &bx.b;
    x.rets[0] = &bt.b;
    x.rets[1] = &bc.b;
    struct fx_attrs a;
    spec_attrs(&s, &a);
    FX_OK(fx_instantiate(&x, &a));
    FX_OK(fx_execute(&x, &a));
    LOG_HAS("candidate 0 of 2 chosen by benchmark");
    ck_assert_int_eq(total, want);
    ck_assert_int_eq(count, N);
    fx_release(&x);
    free(xs);
}
END_TEST

/* A file that is not a choice is ignored with a warning, and replaced by the benchmark's. */
START_TEST(corrupt_choice_file_replaced)
{
    const char *dir = tu_path("%s/corrupt", tmp_root);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(mkdir(tu_path("%s/tune", dir), 0700), 0);
    const char *path = choice_file(dir, "corrupt");
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("{\"choice\": 1, \"candidates\": ", fp);
    fclose(fp);
    static struct call_spec s; /* large: bundles of several targets */
    struct fx_exec x;
    struct add_bufs b;
    struct fx_attrs a;
    slow_fast_first(&s, "corrupt", dir, &x, &b, &a);
    LOG_HAS(tu_path("warn: autotune: kernel 'add_kernel': ignoring %s", path));
    LOG_HAS("candidate 1 of 2 chosen by benchmark");
    json_t *j = read_json(path);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "choice")), 1);
    json_decref(j);
    fx_release(&x);
    add_free(&b);
}
END_TEST

/* A choice file proves what it holds and only this user may have written it: a file naming another key or arch, a
 * file or directory of another user or writable by group or others, a symbolic link are ignored with a warning
 * and the benchmark runs again. Each planted file names the slow candidate 0 with the right digest: the control
 * case, the same file trusted, shows it would be used (as every one of them was). */
START_TEST(planted_choice_files_ignored)
{
    static struct call_spec s; /* large: bundles of several targets */
    struct fx_exec x;
    struct add_bufs b;
    struct fx_attrs a;
    slow_fast_first(&s, "planted", tu_path("%s/planted", tmp_root), &x, &b, &a);
    json_t *good = read_json(choice_file(tu_path("%s/planted", tmp_root), "planted"));
    ck_assert_int_eq(json_integer_value(json_object_get(good, "choice")), 1);
    json_object_set_new(good, "choice", json_integer(0));
    static const struct { const char *name, *why; } cases[] = {
        {"trusted", NULL},
        {"owner", "belongs to another user (uid 4242)"},
        {"mode", "is writable by group or others (mode 0666)"},
        {"dir", "tune' is writable by group or others (mode 0777); its entries are ignored"},
        {"link", "is a symbolic link"},
        {"key", "which holds the choice of key 0123 on arch"},
        {"arch", "on arch 'sm90', not its name's"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[512], sub[600], path[1024], real[1024];
        snprintf(dir, sizeof dir, "%s/planted-%s", tmp_root, cases[i].name);
        snprintf(sub, sizeof sub, "%s/tune", dir);
        snprintf(path, sizeof path, "%s", choice_file(dir, "planted"));
        snprintf(real, sizeof real, "%s/elsewhere.json", dir);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        ck_assert_int_eq(mkdir(sub, 0700), 0);
        json_t *j = json_deep_copy(good);
        if (!strcmp(cases[i].name, "key"))
            json_object_set_new(j, "key_sha256", json_string("0123"));
        if (!strcmp(cases[i].name, "arch"))
            json_object_set_new(j, "arch", json_string("sm90"));
        int link = !strcmp(cases[i].name, "link");
        ck_assert_int_eq(json_dump_file(j, link ? real : path, 0), 0);
        json_decref(j);
        ck_assert_int_eq(chmod(link ? real : path, 0600), 0);
        if (link)
            ck_assert_int_eq(symlink(real, path), 0);
        if (!strcmp(cases[i].name, "owner") && chown(path, 4242, (gid_t)-1) != 0)
            continue; /* not root: no file of another user can be made */
        if (!strcmp(cases[i].name, "mode"))
            ck_assert_int_eq(chmod(path, 0666), 0);
        if (!strcmp(cases[i].name, "dir"))
            ck_assert_int_eq(chmod(sub, 0777), 0);
        log_reset();
        s.dir = dir;
        spec_attrs(&s, &a);
        struct fx_exec xi;
        run_again(&x, &xi, &b, &a);
        if (cases[i].why) {
            LOG_HAS(cases[i].why);
            LOG_HAS("warn: autotune: kernel 'add_kernel': ignoring");
            LOG_HAS("candidate 1 of 2 chosen by benchmark");
        } else {
            LOG_HAS(tu_path("candidate 0 of 2, from %s", path));
        }
        fx_release(&xi);
    }
    json_decref(good);
    fx_release(&x);
    add_free(&b);
}
END_TEST

/* A directory that cannot be made: a warning, and the choice stays in memory for this process. */
START_TEST(unwritable_cache_dir)
{
    const char *file = tu_path("%s/a_file", tmp_root);
    FILE *fp = fopen(file, "w");
    ck_assert_ptr_nonnull(fp);
    fclose(fp);
    const char *dir = tu_path("%s/sub", file); /* below a regular file */
    static struct call_spec s; /* large: bundles of several targets */
    struct fx_exec x;
    struct add_bufs b;
    struct fx_attrs a;
    slow_fast_first(&s, "unwritable", dir, &x, &b, &a);
    LOG_HAS("warn: autotune: kernel 'add_kernel': cannot keep the choice");
    LOG_HAS("in this process's memory only");
    struct fx_exec x2;
    run_again(&x, &x2, &b, &a);
    ck_assert_uint_eq(log_count("chosen by benchmark"), 1);
    LOG_HAS("candidate 1 of 2, from this process's memory");
    fx_release(&x2);
    fx_release(&x);
    add_free(&b);
}
END_TEST

/* A candidate that cannot run here (only a CUDA image) loses; when none can run, the call fails. */
START_TEST(candidate_that_cannot_run)
{
    static struct call_spec s; /* large: bundles of several targets */
    static const uint32_t programs[] = {4, 4};
    add_spec(&s, programs, 2, "cannot_run", NULL);
    memset(&s.k, 0, sizeof s.k);
    cands_add(&s.k, cuda_add_bundle());
    cands_add(&s.k, add_bundle());
    struct fx_exec x = {.platform = PLATFORM_CPU};
    struct add_bufs b;
    struct fx_attrs a;
    add_call(&s, &x, &b, &a, 4000);
    FX_OK(fx_instantiate(&x, &a));
    FX_OK(fx_execute(&x, &a));
    add_check(&b);
    LOG_HAS("candidate 0 cannot run");
    LOG_HAS("candidate 1 of 2 chosen by benchmark on the call's buffers (ms a launch: failed, ");
    fx_release(&x);

    memset(&s.k, 0, sizeof s.k);
    cands_add(&s.k, cuda_add_bundle());
    cands_add(&s.k, cuda_add_bundle());
    s.key = "none_can_run";
    spec_attrs(&s, &a);
    FX_OK(fx_instantiate(&x, &a));
    FX_FAILS(fx_execute(&x, &a), "none of its 2 candidates can run on host:0 (candidate 0: ");
    fx_release(&x);
    add_free(&b);
}
END_TEST

/* Attributes that do not describe candidates are refused at INSTANTIATE, naming what is wrong. */
START_TEST(bad_attributes)
{
    static struct call_spec s; /* large: bundles of several targets */
    static const uint32_t programs[] = {4, 4};
    add_spec(&s, programs, 2, "bad", NULL);
    struct fx_exec x = {.platform = PLATFORM_CPU};
    struct add_bufs b;
    struct fx_attrs a;
    add_call(&s, &x, &b, &a, 4000);
    fx_drop(&a, "kernel_offsets");
    FX_FAILS(fx_instantiate(&x, &a), "attribute 'kernel_offsets' is missing");
    s.k.off[2] -= 1;
    spec_attrs(&s, &a);
    FX_FAILS(fx_instantiate(&x, &a), "attribute 'kernel_offsets' must start at 0 and end at the size");
    s.k.off[2] += 1;
    s.zoff[1] = 1;
    spec_attrs(&s, &a);
    FX_FAILS(fx_instantiate(&x, &a), "attribute 'zero_offsets'");
    s.zoff[1] = 0;
    spec_attrs(&s, &a);
    a.arrays[1].size = 5; /* grid: 5 values for 2 candidates */
    FX_FAILS(fx_instantiate(&x, &a), "2 candidates need kernel_offsets and zero_offsets of 3 values (got 3 and 3), "
                                     "grid needs 6 values (got 5)");
    s.options = "[{}]";
    spec_attrs(&s, &a);
    FX_FAILS(fx_instantiate(&x, &a), "attribute 'options' must be a JSON object, or an array of 2 objects");
    s.options = "[{}, {\"host\": {\"grain\": 7}}]"; /* per candidate */
    spec_attrs(&s, &a);
    FX_OK(fx_instantiate(&x, &a));
    fx_release(&x);
    s.options = NULL;
    s.key = "../escape";
    spec_attrs(&s, &a);
    FX_FAILS(fx_instantiate(&x, &a), "attribute 'autotune_key' names a file");
    s.key = "bad";
    s.aliased[0] = s.aliased[1] = 0;
    s.naliased = 2;
    spec_attrs(&s, &a);
    FX_FAILS(fx_instantiate(&x, &a), "attribute 'aliased' names operand 0 twice");
    s.aliased[0] = 7;
    s.naliased = 1;
    spec_attrs(&s, &a);
    FX_OK(fx_instantiate(&x, &a));
    FX_FAILS(fx_execute(&x, &a), "kernel 'add_kernel': aliased operand 7 does not exist (the call has 2)");
    fx_release(&x);
    s.naliased = 0;
    /* a candidate with other launch parameters */
    s.k.len = (size_t)s.k.off[1];
    s.k.n = 1;
    cands_add(&s.k, scale_bundle());
    spec_attrs(&s, &a);
    FX_FAILS(fx_instantiate(&x, &a), "autotune candidate 1 (kernel 'scale_inplace_kernel', "
                                     "x:*fp32,n:i32,alpha:fp32) does not take the parameters of candidate 0");
    s.force_version = 3;
    spec_attrs(&s, &a);
    FX_FAILS(fx_instantiate(&x, &a), "attribute version 3; this libtrident reads versions 1 and 2");
    ck_assert_ptr_null(x.ctx.state);
    add_free(&b);
}
END_TEST

/* The host times launches that run without a stream (the CPU platform's) with events on the default stream, which
 * complete at once; its streams are never captured. */
START_TEST(host_events_without_a_stream)
{
    trd_runtime_t *rt;
    trd_device_t *d;
    TU_OK(trd_runtime_shared(&rt));
    TU_OK(trd_runtime_device_find(rt, "host:0", &d));
    trd_stream_t *s;
    TU_OK(trd_stream_create(d, &s));
    int32_t capturing = -1;
    TU_OK(trd_stream_capturing(s, &capturing));
    ck_assert_int_eq(capturing, 0);
    trd_stream_destroy(s);
    trd_event_t *e0, *e1;
    TU_OK(trd_event_create(d, &e0));
    TU_OK(trd_event_create(d, &e1));
    TU_OK(trd_event_record(e0, NULL));
    usleep(20000);
    TU_OK(trd_event_record(e1, NULL));
    TU_OK(trd_event_synchronize(e1));
    double ms = 0;
    TU_OK(trd_event_elapsed(e0, e1, &ms));
    ck_assert_msg(ms >= 19.0 && ms < 5000.0, "elapsed %g ms", ms);
    trd_event_destroy(e1);
    trd_event_destroy(e0);
}
END_TEST

/* A stream being captured into a graph with no choice yet: candidate 0 runs, a warning once, nothing kept;
 * the first execution outside a capture benchmarks. (The test driver named "cuda" answers stream_capturing;
 * its launches only record their grid.) */
START_TEST(captured_stream_gets_candidate_zero)
{
    trd_runtime_t *rt;
    TU_OK(trd_runtime_shared(&rt)); /* loads the drivers */
    struct tdd_state *rec = tdd_get("td_cuda");
    int32_t *capturing = &rec->capturing;
    const char *dir = tu_path("%s/captured", tmp_root);
    static struct call_spec s; /* large: bundles of several targets */
    static const uint32_t programs[] = {7, 4};
    add_spec(&s, programs, 2, "captured", dir);
    int stream_token;
    struct fx_exec x = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}};
    struct add_bufs b;
    struct fx_attrs a;
    add_call(&s, &x, &b, &a, 4000);
    FX_OK(fx_instantiate(&x, &a));
    *capturing = 1;
    unsigned launches = rec->launches;
    for (int i = 0; i < 2; i++) {
        FX_OK(fx_execute(&x, &a));
        ck_assert_uint_eq(rec->launches, launches + 1 + (unsigned)i);
        ck_assert_uint_eq(rec->grid[0], 7); /* candidate 0 */
        ck_assert_ptr_eq(rec->native, &stream_token);
    }
    ck_assert_uint_eq(log_count("is being captured into a graph"), 1);
    ck_assert_uint_eq(log_count("chosen by benchmark"), 0);
    ck_assert_int_ne(access(tu_path("%s/tune", dir), F_OK), 0);
    *capturing = 0;
    FX_OK(fx_execute(&x, &a));
    LOG_HAS("autotune: kernel 'add_kernel' on cuda:0: candidate ");
    LOG_HAS("chosen by benchmark");
    ck_assert_int_eq(access(choice_file_on(dir, "captured", "sm90"), F_OK), 0);
    /* chosen: a capture now records the choice */
    *capturing = 1;
    launches = rec->launches;
    FX_OK(fx_execute(&x, &a));
    ck_assert_uint_eq(rec->launches, launches + 1);
    ck_assert_uint_eq(log_count("is being captured into a graph"), 1);
    *capturing = 0;
    fx_release(&x);
    add_free(&b);
}
END_TEST

/* ------------------------------------------- version negotiation, RECORD */

/* The runtime of a metadata query (the handlers keep it: kept static) and the registration it was asked for. */
static XLA_FFI_Api fx_meta_api;
static XLA_FFI_Handler_Register_Args fx_registered;
static char fx_registered_name[64];

static XLA_FFI_Error *fx_register(XLA_FFI_Handler_Register_Args *a)
{
    fx_registered = *a;
    snprintf(fx_registered_name, sizeof fx_registered_name, "%.*s", (int)a->name.len, a->name.ptr);
    return NULL;
}

/* XLA's metadata query at registration of `handler` against a runtime of API major.minor: NULL with the version
 * the handler reports in *out, else the error's message. */
static const char *fx_metadata(void *(*handler)(void *), int major, int minor, XLA_FFI_Api_Version *out)
{
    fx_meta_api = fx_api;
    fx_meta_api.api_version.major_version = major;
    fx_meta_api.api_version.minor_version = minor;
#if XLA_FFI_API_MINOR >= 4
    fx_meta_api.XLA_FFI_Handler_Register = fx_register;
#else
    (void)fx_register;
#endif
    XLA_FFI_Metadata m = {.struct_size = sizeof m};
    XLA_FFI_Metadata_Extension ext = {{sizeof ext, XLA_FFI_Extension_Metadata, NULL}, &m};
    XLA_FFI_CallFrame f = {.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE, .extension_start = &ext.extension_base,
                           .api = &fx_meta_api};
    const char *why = fx_result(handler(&f));
    *out = m.api_version;
    return why;
}

/* One binary for every jaxlib from 0.10.2 (API 0.3) on: each runtime hears the older of its version and the
 * header's; a runtime older than 0.3 or of another major version is refused naming both versions. */
START_TEST(api_version_negotiated)
{
    XLA_FFI_Api_Version v;
    ck_assert_int_eq(trd_xla_ffi_version(), XLA_FFI_API_MAJOR * 1000 + XLA_FFI_API_MINOR);
    for (int minor = 3; minor <= XLA_FFI_API_MINOR + 2; minor++) {
        FX_OK(fx_metadata(trd_xla_cpu_execute, 0, minor, &v));
        ck_assert_int_eq(v.major_version, 0);
        ck_assert_int_eq(v.minor_version, minor < XLA_FFI_API_MINOR ? minor : XLA_FFI_API_MINOR);
    }
    char built[32];
    snprintf(built, sizeof built, "built against API 0.%d", XLA_FFI_API_MINOR);
    FX_FAILS(fx_metadata(trd_xla_cpu_execute, 0, 2, &v), "this XLA speaks FFI API 0.2");
    FX_FAILS(fx_metadata(trd_xla_cuda_instantiate, 0, 2, &v), built);
    FX_FAILS(fx_metadata(trd_xla_cpu_execute, 1, 0, &v), "this XLA speaks FFI API 1.0");
    /* the record target is registered through the CUDA runtime of the last metadata query, 0.4 and newer */
    FX_OK(fx_metadata(trd_xla_cuda_execute, 0, 3, &v));
    const char *why = trd_xla_cuda_record_register();
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, XLA_HAVE_RECORD ? "this XLA speaks FFI API 0.3, which has no RECORD stage"
                                              : "which have no RECORD stage"), "%s", why);
#if XLA_HAVE_RECORD
    FX_OK(fx_metadata(trd_xla_cuda_execute, 0, XLA_FFI_API_MINOR + 1, &v));
    why = trd_xla_cuda_record_register();
    ck_assert_msg(why && strstr(why, "newer than the"), "%s", why ? why : "registered");
    FX_OK(fx_metadata(trd_xla_cuda_execute, 0, 4, &v));
    memset(&fx_registered, 0, sizeof fx_registered);
    why = trd_xla_cuda_record_register();
    ck_assert_msg(!why, "%s", why);
    ck_assert_str_eq(fx_registered_name, TRD_XLA_TARGET_RECORD);
    ck_assert_uint_eq(fx_registered.platform.len, 4);
    ck_assert_int_eq(memcmp(fx_registered.platform.ptr, "CUDA", 4), 0);
    ck_assert_uint_ge(fx_registered.struct_size, XLA_FFI_Handler_Register_Args_STRUCT_SIZE);
    ck_assert_ptr_eq((void *)fx_registered.bundle.instantiate, (void *)trd_xla_cuda_instantiate);
    ck_assert_ptr_eq((void *)fx_registered.bundle.execute, (void *)trd_xla_cuda_execute);
    ck_assert_ptr_eq((void *)fx_registered.bundle.record, (void *)trd_xla_cuda_record);
    ck_assert_uint_eq(fx_registered.traits, XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE);
#endif
}
END_TEST

#if XLA_HAVE_RECORD
/* XLA's record extension, faked: what the handler asked for. */
struct fx_record {
    XLA_FFI_Record_Extension ext;
    XLA_FFI_RecordFrame frame;
    const XLA_FFI_Command *commands[16];
    int64_t ncommands;
    unsigned creates, updates, captures;
    /* the last create_launch / update_launch */
    char name[64];
    const void *data;
    int64_t size;
    XLA_FFI_SourceFormat format;
    XLA_FFI_LaunchDims dims;
    uint32_t shared;
    int32_t uses_pdl;
    XLA_FFI_KernelArg args[16];
    uint64_t values[16];  /* the host values' bytes (XLA copies them) */
    int64_t nargs;
    const XLA_FFI_Command *updated;
};

static struct fx_record fx_rec;
static int fx_command_token; /* the command create_launch gives */

static void fx_take_args(struct fx_record *r, const XLA_FFI_KernelArgs *args)
{
    ck_assert_int_le(args->num_args, 16);
    r->nargs = args->num_args;
    for (int64_t i = 0; i < args->num_args; i++) {
        r->args[i] = args->args[i];
        r->values[i] = 0;
        if (args->args[i].type == XLA_FFI_KernelArgType_HostValue && args->args[i].size <= 8)
            memcpy(&r->values[i], args->args[i].arg_address, (size_t)args->args[i].size);
    }
}

static XLA_FFI_Error *fx_create_launch(XLA_FFI_RecordContext *ctx, const char *name, const void *data, int64_t size,
                                       XLA_FFI_SourceFormat format, XLA_FFI_LaunchDims dims, uint32_t shared,
                                       int32_t uses_pdl, const XLA_FFI_KernelArgs *args,
                                       const XLA_FFI_Command *const *deps, uint32_t ndeps, const XLA_FFI_Command **out)
{
    struct fx_record *r = (struct fx_record *)ctx; /* the faked extension's: fx_record_on */
    ck_assert_uint_eq(ndeps, 0);
    (void)deps;
    r->creates++;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->data = data;
    r->size = size;
    r->format = format;
    r->dims = dims;
    r->shared = shared;
    r->uses_pdl = uses_pdl;
    fx_take_args(r, args);
    *out = (const XLA_FFI_Command *)&fx_command_token;
    return NULL;
}

static XLA_FFI_Error *fx_update_launch(XLA_FFI_RecordContext *ctx, const XLA_FFI_Command *cmd,
                                       const XLA_FFI_KernelArgs *args)
{
    struct fx_record *r = (struct fx_record *)ctx;
    r->updates++;
    r->updated = cmd;
    fx_take_args(r, args);
    return NULL;
}

static XLA_FFI_Error *fx_request_capture(XLA_FFI_RecordContext *ctx)
{
    ((struct fx_record *)ctx)->captures++;
    return NULL;
}

static const XLA_FFI_RecordApi fx_record_api = {.create_launch = fx_create_launch, .update_launch = fx_update_launch,
                                                .request_stream_capture = fx_request_capture};

/* A RECORD call of the executable into r: action Create (no commands yet) or Update (the commands of the
 * creation). */
static const char *fx_record_on(struct fx_record *r, struct fx_exec *x, struct fx_attrs *a,
                                XLA_FFI_RecordAction action, int minor)
{
    r->ext.extension_base = (XLA_FFI_Extension){sizeof r->ext,
                                                {XLA_FFI_Extension_Record, XLA_FFI_Extension_Record_MajorVersion, minor},
                                                NULL};
    r->ext.record_frame = &r->frame;
    if (action == XLA_FFI_RecordAction_Create)
        r->ncommands = 0;
    r->frame = (XLA_FFI_RecordFrame){(XLA_FFI_RecordContext *)r, &fx_record_api, action, r->commands, &r->ncommands,
                                     16};
    x->ctx.record = &r->ext.extension_base;
    XLA_FFI_CallFrame f = fx_frame(x, a, XLA_FFI_ExecutionStage_RECORD);
    const char *why = fx_result(trd_xla_cuda_record(&f));
    x->ctx.record = NULL;
    return why;
}

static const char *fx_record(struct fx_exec *x, struct fx_attrs *a, XLA_FFI_RecordAction action, int minor)
{
    return fx_record_on(&fx_rec, x, a, action, minor);
}

/* What a record call's kernel arguments must be: each one's type, and a host value's size and bytes. */
struct rec_expect {
    int64_t n;
    XLA_FFI_KernelArgType type[16];
    int64_t size[16];
    uint64_t value[16];
};

static void expect_ptr(struct rec_expect *e)
{
    e->type[e->n++] = XLA_FFI_KernelArgType_DevicePtr;
}

static void expect_value(struct rec_expect *e, const void *bytes, int64_t size)
{
    e->type[e->n] = XLA_FFI_KernelArgType_HostValue;
    e->size[e->n] = size;
    memcpy(&e->value[e->n++], bytes, (size_t)size);
}

/* The node of add_kernel(x, y, out, n) as the handler records it: three buffers, n by value, Triton's two scratch
 * pointers (none needed: null). */
static struct rec_expect expect_add(int32_t n)
{
    struct rec_expect e = {0};
    expect_ptr(&e);
    expect_ptr(&e);
    expect_ptr(&e);
    expect_value(&e, &n, 4);
    expect_ptr(&e);
    expect_ptr(&e);
    return e;
}

/* r's last create_launch or update_launch got what e says, with device pointers ptr[i]. */
static void args_in(const struct fx_record *r, const struct rec_expect *e, void *const *ptr)
{
    ck_assert_int_eq(r->nargs, e->n);
    for (int64_t i = 0; i < e->n; i++) {
        const XLA_FFI_KernelArg *g = &r->args[i];
        ck_assert_msg(g->type == e->type[i], "argument %lld: type %d, expected %d", (long long)i, (int)g->type,
                      (int)e->type[i]);
        if (e->type[i] == XLA_FFI_KernelArgType_DevicePtr)
            ck_assert_msg(g->size == 0 && g->arg_address == ptr[i], "argument %lld: %lld bytes at %p, expected %p",
                          (long long)i, (long long)g->size, g->arg_address, ptr[i]);
        else
            ck_assert_msg(g->size == e->size[i] && r->values[i] == e->value[i],
                          "argument %lld: %lld bytes 0x%llx, expected %lld bytes 0x%llx", (long long)i,
                          (long long)g->size, (unsigned long long)r->values[i], (long long)e->size[i],
                          (unsigned long long)e->value[i]);
    }
}

static void args_are(const struct rec_expect *e, void *const *ptr)
{
    args_in(&fx_rec, e, ptr);
}

/* The launch of a call becomes a kernel node: the cubin loaded on the device, its grid, block and shared memory,
 * buffers and Triton's two (unneeded: null) scratch pointers as device pointers, the scalar by value; an update
 * gives the node the buffers' new addresses, no new node. Before its first execution on the device, a call
 * asks for stream capture. (The test driver named "cuda" loads the bundle's sm90 cubin.) */
START_TEST(record_makes_a_kernel_node)
{
    static struct call_spec s; /* large: bundles of several targets */
    static const uint32_t programs[] = {5};
    add_spec(&s, programs, 1, NULL, NULL);
    int stream_token;
    struct fx_exec x = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}};
    struct add_bufs b, moved;
    struct fx_attrs a;
    add_call(&s, &x, &b, &a, 5000);
    memset(&fx_rec, 0, sizeof fx_rec);
    FX_FAILS(fx_record(&x, &a, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion),
             "RECORD without the call's state");
    FX_OK(fx_instantiate(&x, &a));
    FX_OK(fx_record(&x, &a, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.captures, 1); /* not loaded on the device yet */
    ck_assert_uint_eq(fx_rec.creates, 0);
    FX_OK(fx_execute(&x, &a));
    TU_OK(trd_log_set_level(TRD_LOG_DEBUG)); /* the node's updates are logged (scripts/record-probe.py counts them) */
    FX_OK(fx_record(&x, &a, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.creates, 1);
    ck_assert_uint_eq(fx_rec.captures, 1);
    ck_assert_int_eq(fx_rec.ncommands, 1);
    ck_assert_ptr_eq(fx_rec.commands[0], (void *)&fx_command_token);
    ck_assert_str_eq(fx_rec.name, "add_kernel");
    ck_assert_int_eq(fx_rec.format, XLA_FFI_SourceFormat_CUBIN);
    ck_assert_int_gt(fx_rec.size, 4);
    ck_assert_int_eq(memcmp(fx_rec.data, "\177ELF", 4), 0);
    ck_assert_int_eq(fx_rec.dims.grid.x, 5);
    ck_assert_int_eq(fx_rec.dims.grid.y, 1);
    ck_assert_int_eq(fx_rec.dims.grid.z, 1);
    ck_assert_int_eq(fx_rec.dims.block.x % 32, 0);
    ck_assert_int_gt(fx_rec.dims.block.x, 0);
    ck_assert_int_eq(fx_rec.dims.cluster.x, 0);
    ck_assert_int_eq(fx_rec.uses_pdl, 0);
    ck_assert_int_eq(fx_rec.nargs, 6);
    const struct rec_expect e = expect_add(5000); /* Triton's scratch pointers: none needed (null) */
    args_are(&e, (void *const[16]){b.x, b.y, b.out});
    /* the buffers move: XLA updates the node */
    add_bufs(&moved, &x, 5000);
    FX_OK(fx_record(&x, &a, XLA_FFI_RecordAction_Update, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.creates, 1);
    ck_assert_uint_eq(fx_rec.updates, 1);
    ck_assert_ptr_eq(fx_rec.updated, (void *)&fx_command_token);
    /* through the plan (the path of a call of tensor maps names the kernel and the device instead) */
    ck_assert_msg(log_count("record: kernel on XLA's device 0: kernel node updated") == 1, "one update logged:\n%s",
                  log_text);
    args_are(&e, (void *const[16]){moved.x, moved.y, moved.out});
    /* an update of a command buffer made by capture is captured again */
    fx_rec.ncommands = 0;
    FX_OK(fx_record(&x, &a, XLA_FFI_RecordAction_Update, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.updates, 1);
    ck_assert_uint_eq(fx_rec.captures, 2);
    /* a record extension of another version is refused, naming both */
    FX_FAILS(fx_record(&x, &a, XLA_FFI_RecordAction_Create, 99), "record extension is version 0.99");
    ck_assert_uint_eq(fx_rec.creates, 1);
    fx_release(&x);
    add_free(&b);
    add_free(&moved);
}
END_TEST

/* What the record API has no node for goes to stream capture: a call that zeroes a result (a memset); an
 * autotuned call before its choice (the first execution benchmarks). */
START_TEST(record_falls_back_to_capture)
{
    static struct call_spec s;
    static const uint32_t programs[] = {5, 3};
    int stream_token;
    struct add_bufs b;
    struct fx_attrs a;
    add_spec(&s, programs, 1, NULL, NULL);
    s.zero[0] = 0;
    s.nzero = 1;
    struct fx_exec x = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}};
    add_call(&s, &x, &b, &a, 5000);
    FX_OK(fx_instantiate(&x, &a));
    FX_OK(fx_execute(&x, &a));
    memset(&fx_rec, 0, sizeof fx_rec);
    FX_OK(fx_record(&x, &a, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.creates, 0);
    ck_assert_uint_eq(fx_rec.captures, 1);
    /* an update that comes with one command, of a call that no node was made for: captured again, not updated */
    fx_rec.ncommands = 1;
    fx_rec.commands[0] = (XLA_FFI_Command *)&fx_command_token;
    FX_OK(fx_record(&x, &a, XLA_FFI_RecordAction_Update, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.updates, 0);
    ck_assert_uint_eq(fx_rec.captures, 2);
    fx_release(&x);
    add_free(&b);
    /* captured at creation (not executed yet), then updated once executed: the command XLA gives back is the
     * capture's, so the update is captured again (not an update_launch of it) */
    add_spec(&s, programs, 1, NULL, NULL);
    struct fx_exec u = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}};
    add_call(&s, &u, &b, &a, 5000);
    FX_OK(fx_instantiate(&u, &a));
    fx_rec.ncommands = 0;
    FX_OK(fx_record(&u, &a, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.captures, 3);
    FX_OK(fx_execute(&u, &a));
    fx_rec.ncommands = 1;
    fx_rec.commands[0] = (XLA_FFI_Command *)&fx_command_token;
    FX_OK(fx_record(&u, &a, XLA_FFI_RecordAction_Update, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.updates, 0);
    ck_assert_uint_eq(fx_rec.captures, 4);
    ck_assert_uint_eq(fx_rec.creates, 0);
    fx_release(&u);
    add_free(&b);
    /* autotuned, not yet chosen: captured; chosen: a node of the chosen candidate's grid */
    add_spec(&s, programs, 2, "rec", "");
    struct fx_exec t = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}};
    add_call(&s, &t, &b, &a, 5000);
    FX_OK(fx_instantiate(&t, &a));
    FX_OK(fx_record(&t, &a, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.captures, 5);
    ck_assert_uint_eq(fx_rec.creates, 0);
    FX_OK(fx_execute(&t, &a));
    FX_OK(fx_record(&t, &a, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.creates, 1);
    ck_assert_msg(fx_rec.dims.grid.x == 5 || fx_rec.dims.grid.x == 3, "grid %d", fx_rec.dims.grid.x);
    fx_release(&t);
    add_free(&b);
}
END_TEST


/* One frame's buffers (XLA_FFI_Buffer pointers), operands then results. */
struct rec_frame {
    void *args[8], *rets[8];
};

static void frame_use(struct fx_exec *x, const struct rec_frame *fr)
{
    memcpy(x->args, fr->args, sizeof x->args);
    memcpy(x->rets, fr->rets, sizeof x->rets);
}

/* The call, executed on frame `a`, is recorded as a kernel node with the arguments e (device pointers pa[]); its
 * buffers move to frame `b` (executed there first, as XLA would): the update gives the node the creation's
 * arguments with b's addresses (pb[]); XLA making its command buffer again gets b's arguments too; an update
 * back to `a` gives a's. `between` (an executable of the same kernel with other scalars, or NULL) is recorded
 * between the creation and the update: its scalars must not reach this call's node. */
static void record_moves(struct fx_exec *x, struct fx_attrs *at, const struct rec_expect *e, const struct rec_frame *a,
                         void *const *pa, const struct rec_frame *b, void *const *pb, struct fx_exec *between,
                         struct fx_attrs *between_at)
{
    unsigned creates = fx_rec.creates, updates = fx_rec.updates, captures = fx_rec.captures;
    frame_use(x, a);
    FX_OK(fx_execute(x, at));
    FX_OK(fx_record(x, at, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.creates, creates + 1);
    args_are(e, pa);
    if (between) {
        FX_OK(fx_execute(between, between_at));
        FX_OK(fx_record(between, between_at, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
        ck_assert_uint_eq(fx_rec.creates, creates + 2);
        creates++;
        fx_rec.ncommands = 1;
        fx_rec.commands[0] = (const XLA_FFI_Command *)&fx_command_token;
    }
    frame_use(x, b);
    FX_OK(fx_execute(x, at));
    FX_OK(fx_record(x, at, XLA_FFI_RecordAction_Update, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.updates, updates + 1);
    ck_assert_ptr_eq(fx_rec.updated, (void *)&fx_command_token);
    args_are(e, pb);
    FX_OK(fx_record(x, at, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.creates, creates + 2);
    args_are(e, pb);
    frame_use(x, a);
    FX_OK(fx_record(x, at, XLA_FFI_RecordAction_Update, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(fx_rec.updates, updates + 2);
    args_are(e, pa);
    ck_assert_uint_eq(fx_rec.captures, captures);
}

/* Scalars of every size Triton passes (i1 .. i64, u32, u64, fp16, bf16, fp32, fp64) by their bytes. */
struct scalar_values {
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint32_t u32;
    uint64_t u64;
    uint16_t f16, bf16;
    float f32;
    double f64;
    uint8_t i1;
};

static void scalars_pack(const struct scalar_values *v, struct call_spec *s, struct rec_expect *e)
{
    const void *p[] = {&v->i8, &v->i16, &v->i32, &v->i64, &v->u32, &v->u64, &v->f16, &v->bf16, &v->f32, &v->f64,
                       &v->i1};
    static const size_t size[] = {1, 2, 4, 8, 4, 8, 2, 2, 4, 8, 1};
    s->slen = 0;
    memset(e, 0, sizeof *e);
    expect_ptr(e); /* out */
    for (size_t i = 0; i < XLA_ARRAY_SIZE(p); i++) {
        memcpy(s->scalars + s->slen, p[i], size[i]);
        s->slen += size[i];
        expect_value(e, p[i], (int64_t)size[i]);
    }
    expect_ptr(e); /* Triton's scratch pointers: none needed (null) */
    expect_ptr(e);
}

static struct blob cuda_scalars_bundle(void)
{
    return bundle_of(tu_fixture("cuda", "scalars"), NULL, NULL);
}

static struct blob cuda_scratch_bundle(void)
{
    return bundle_of(tu_fixture("cuda", "scratch"), NULL, NULL);
}

/* XLA updates a kernel node for new buffers: update_launch gets the list create_launch got with the buffers' new
 * addresses, argument by argument (type, size, value bytes): a kernel of scalars of every size; operands and
 * results (taken by index, not in order) with a parameter passed as a null pointer; Triton's global scratch from
 * a result. Another executable of the same kernel with other scalars, recorded in between, changes nothing. */
START_TEST(record_update_moves_only_the_buffers)
{
    static struct call_spec s, s2;
    static const uint32_t one[] = {1}, three[] = {3};
    int stream_token;
    struct fx_attrs at, at2;
    struct rec_expect e, e2;
    memset(&fx_rec, 0, sizeof fx_rec);
    /* scalars_kernel(out, i8, i16, i32, i64, u32, u64, f16, bf16, f32, f64, i1) */
    static const int64_t skinds[] = {1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, sindex[12] = {0};
    const struct scalar_values v = {-5, -1234, 123456789, -((int64_t)1 << 40) - 7, 0xdeadbeefu,
                                    0x0123456789abcdefull, 0xc0a0, 0x4049, 3.25f, -1e300, 1},
                               w = {7, 4321, -98765, 42, 17, 99, 0x3c00, 0x3f80, -0.5f, 2.5, 0};
    spec_init(&s, 1, cuda_scalars_bundle, one, skinds, sindex, 12, NULL, NULL);
    spec_init(&s2, 1, cuda_scalars_bundle, one, skinds, sindex, 12, NULL, NULL);
    scalars_pack(&v, &s, &e);
    scalars_pack(&w, &s2, &e2);
    double out_a[11], out_b[11], out_w[11];
    struct fx_buf ba, bb, bw;
    fx_buffer(&ba, XLA_FFI_DataType_F64, out_a, 11);
    fx_buffer(&bb, XLA_FFI_DataType_F64, out_b, 11);
    fx_buffer(&bw, XLA_FFI_DataType_F64, out_w, 11);
    const struct rec_frame fa = {.rets = {&ba.b}}, fb = {.rets = {&bb.b}};
    void *const pa[16] = {out_a}, *const pb[16] = {out_b};
    struct fx_exec x = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}, .nrets = 1};
    struct fx_exec y = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}, .nrets = 1, .rets = {&bw.b}};
    spec_attrs(&s, &at);
    spec_attrs(&s2, &at2);
    FX_OK(fx_instantiate(&x, &at));
    FX_OK(fx_instantiate(&y, &at2));
    record_moves(&x, &at, &e, &fa, pa, &fb, pb, &y, &at2);
    ck_assert_int_eq(fx_rec.nargs, 14);
    fx_release(&x);
    fx_release(&y);
    /* scratch_kernel(x, out, n) with its global scratch (128 bytes a program) in result 1 */
    static const int64_t kinds[] = {0, 1, 2}, index[] = {0, 0, 0};
    spec_init(&s, 1, cuda_scratch_bundle, three, kinds, index, 3, NULL, NULL);
    int32_t n = 700;
    memcpy(s.scalars, &n, 4);
    s.slen = 4;
    spec_attrs(&s, &at);
    s.scratch[0] = 1;
    float xs[2][700], outs[2][700];
    uint8_t scratch[2][512];
    struct fx_buf bx[2], bo[2], bs[2];
    for (int i = 0; i < 2; i++) {
        fx_buffer(&bx[i], XLA_FFI_DataType_F32, xs[i], 700);
        fx_buffer(&bo[i], XLA_FFI_DataType_F32, outs[i], 700);
        fx_buffer(&bs[i], XLA_FFI_DataType_U8, scratch[i], 512);
    }
    const struct rec_frame ga = {{&bx[0].b}, {&bo[0].b, &bs[0].b}}, gb = {{&bx[1].b}, {&bo[1].b, &bs[1].b}};
    void *const qa[16] = {xs[0], outs[0], NULL, scratch[0]}, *const qb[16] = {xs[1], outs[1], NULL, scratch[1]};
    memset(&e, 0, sizeof e);
    expect_ptr(&e);
    expect_ptr(&e);
    expect_value(&e, &n, 4);
    expect_ptr(&e); /* global scratch */
    expect_ptr(&e); /* profile scratch: none (null) */
    struct fx_exec z = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}, .nargs = 1, .nrets = 2};
    FX_OK(fx_instantiate(&z, &at));
    record_moves(&z, &at, &e, &ga, qa, &gb, qb, NULL, NULL);
    fx_release(&z);
    /* add_kernel(x, y, out, n): x passed as a null pointer, y operand 1 (operand 0 unused), out result 0 */
    static const int64_t akinds[] = {3, 0, 1, 2}, aindex[] = {0, 1, 0, 0};
    spec_init(&s, 1, cuda_add_bundle, three, akinds, aindex, 4, NULL, NULL);
    memcpy(s.scalars, &n, 4);
    s.slen = 4;
    spec_attrs(&s, &at);
    struct fx_buf bu[2];
    for (int i = 0; i < 2; i++)
        fx_buffer(&bu[i], XLA_FFI_DataType_F32, outs[i] + 1, 600); /* the unused operand 0 */
    const struct rec_frame ha = {{&bu[0].b, &bx[0].b}, {&bo[0].b}}, hb = {{&bu[1].b, &bx[1].b}, {&bo[1].b}};
    void *const ra[16] = {NULL, xs[0], outs[0]}, *const rb[16] = {NULL, xs[1], outs[1]};
    memset(&e, 0, sizeof e);
    expect_ptr(&e); /* the null pointer */
    expect_ptr(&e);
    expect_ptr(&e);
    expect_value(&e, &n, 4);
    expect_ptr(&e);
    expect_ptr(&e);
    struct fx_exec u = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}, .nargs = 2, .nrets = 1};
    FX_OK(fx_instantiate(&u, &at));
    record_moves(&u, &at, &e, &ha, ra, &hb, rb, NULL, NULL);
    fx_release(&u);
}
END_TEST

/* One call recorded on two devices (XLA's ordinals 0 and 1, one state): each device's node gets its own frame's
 * addresses on every update. The first ordinal recorded has its plan in the call's hot line, the second finds its
 * own by ordinal; an update of either after the other's records still gets its own frame's. */
START_TEST(record_each_device_its_node)
{
    static struct call_spec s;
    static const uint32_t programs[] = {1};
    static const int64_t kinds[] = {0, 0, 1, 2}, index[] = {0, 1, 0, 0};
    static float data[2][2][3][64]; /* device, frame, buffer (x, y, out), elements */
    int stream_token;
    struct fx_attrs at;
    struct add_bufs b;
    memset(&fx_rec, 0, sizeof fx_rec);
    spec_init(&s, 1, cuda_add_bundle, programs, kinds, index, 4, NULL, NULL);
    struct fx_exec x = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}};
    add_call(&s, &x, &b, &at, 64);
    FX_OK(fx_instantiate(&x, &at));
    struct fx_exec dev[2] = {x, x};
    dev[1].ctx.ordinal = 1;
    struct fx_buf bufs[2][2][3];
    struct rec_frame fr[2][2];
    void *ptr[2][2][16] = {{{0}}};
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 2; i++) {
            for (int k = 0; k < 3; k++) {
                tu_fill_f32(data[d][i][k], 64, (unsigned)(10 * d + 3 * i + k + 1));
                fx_buffer(&bufs[d][i][k], XLA_FFI_DataType_F32, data[d][i][k], 64);
            }
            fr[d][i] = (struct rec_frame){{&bufs[d][i][0].b, &bufs[d][i][1].b}, {&bufs[d][i][2].b}};
            ptr[d][i][0] = data[d][i][0];
            ptr[d][i][1] = data[d][i][1];
            ptr[d][i][2] = data[d][i][2];
        }
    const struct rec_expect e = expect_add(b.n);
    TU_OK(trd_log_set_level(TRD_LOG_DEBUG));
    record_moves(&dev[0], &at, &e, &fr[0][0], ptr[0][0], &fr[0][1], ptr[0][1], NULL, NULL);
    record_moves(&dev[1], &at, &e, &fr[1][0], ptr[1][0], &fr[1][1], ptr[1][1], NULL, NULL);
    for (int d = 0; d < 2; d++) {
        frame_use(&dev[d], &fr[d][1]);
        FX_OK(fx_record(&dev[d], &at, XLA_FFI_RecordAction_Update, XLA_FFI_Extension_Record_MinorVersion));
        args_are(&e, ptr[d][1]);
    }
    ck_assert_uint_eq(fx_rec.captures, 0);
    /* every update through a plan (the hot line's or the ordinal's): the log names the ordinal only there */
    ck_assert_msg(log_count("record: kernel on XLA's device 0: kernel node updated") == 3 &&
                      log_count("record: kernel on XLA's device 1: kernel node updated") == 3 &&
                      log_count("kernel node updated") == 6,
                  "three updates a device, each through a plan:\n%s", log_text);
    /* the update's debug line goes by the level at the call's last creation (no call into the log on an update
     * otherwise): none after a creation at info, even with debug on by the update */
    TU_OK(trd_log_set_level(TRD_LOG_INFO));
    FX_OK(fx_record(&dev[0], &at, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
    TU_OK(trd_log_set_level(TRD_LOG_DEBUG));
    log_reset();
    frame_use(&dev[0], &fr[0][0]);
    FX_OK(fx_record(&dev[0], &at, XLA_FFI_RecordAction_Update, XLA_FFI_Extension_Record_MinorVersion));
    args_are(&e, ptr[0][0]);
    ck_assert_msg(log_count("kernel node updated") == 0, "no update logged:\n%s", log_text);
    FX_OK(fx_record(&dev[0], &at, XLA_FFI_RecordAction_Create, XLA_FFI_Extension_Record_MinorVersion));
    FX_OK(fx_record(&dev[0], &at, XLA_FFI_RecordAction_Update, XLA_FFI_Extension_Record_MinorVersion));
    ck_assert_uint_eq(log_count("record: kernel on XLA's device 0: kernel node updated"), 1);
    fx_release(&x);
    add_free(&b);
}
END_TEST

/* One thread's executions of a call recorded by several at once: the same state, its own record frame and
 * buffers (two frames, a and b). */
struct rec_thread {
    pthread_t tid;
    pthread_barrier_t *start;
    struct fx_exec x;
    struct fx_attrs *at;
    const struct rec_expect *e;
    struct fx_record r;
    float data[2][3][64];  /* frame, buffer (x, y, out), elements */
    struct fx_buf b[2][3];
};

#define REC_ROUNDS 64

static void *rec_thread_run(void *arg)
{
    struct rec_thread *t = arg;
    void *ptr[2][16] = {{0}};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 3; k++) {
            fx_buffer(&t->b[i][k], XLA_FFI_DataType_F32, t->data[i][k], 64);
            ptr[i][k] = t->data[i][k];
        }
    pthread_barrier_wait(t->start);
    for (int round = 0; round < REC_ROUNDS; round++) {
        for (int i = 0; i < 2; i++) {
            t->x.args[0] = &t->b[i][0].b;
            t->x.args[1] = &t->b[i][1].b;
            t->x.rets[0] = &t->b[i][2].b;
            XLA_FFI_RecordAction action = i ? XLA_FFI_RecordAction_Update : XLA_FFI_RecordAction_Create;
            const char *why = fx_record_on(&t->r, &t->x, t->at, action, XLA_FFI_Extension_Record_MinorVersion);
            ck_assert_msg(!why, "%s", why);
            args_in(&t->r, t->e, ptr[i]);
        }
    }
    return NULL;
}

/* Threads record one call on one device at once (XLA making command buffers of one executable on several
 * threads, each its own record frame), the first creations racing: each Create makes a node of the call's
 * arguments, each update gives its own frame's addresses; the slot's plan is made once (TSan: no race). */
START_TEST(record_on_threads_at_once)
{
    static struct call_spec s;
    static const uint32_t programs[] = {1};
    static const int64_t kinds[] = {0, 0, 1, 2}, index[] = {0, 1, 0, 0};
    enum { NTHREADS = 4 };
    static struct rec_thread th[NTHREADS];
    int stream_token;
    struct fx_attrs at;
    struct add_bufs b;
    spec_init(&s, 1, cuda_add_bundle, programs, kinds, index, 4, NULL, NULL);
    struct fx_exec x = {.platform = PLATFORM_CUDA, .ctx = {.stream = &stream_token}};
    add_call(&s, &x, &b, &at, 64);
    FX_OK(fx_instantiate(&x, &at));
    FX_OK(fx_execute(&x, &at));
    const struct rec_expect e = expect_add(b.n);
    TU_OK(trd_log_set_level(TRD_LOG_ERROR)); /* the log's lock would order the threads' records */
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++) {
        th[i] = (struct rec_thread){.start = &start, .x = x, .at = &at, .e = &e};
        ck_assert_int_eq(pthread_create(&th[i].tid, NULL, rec_thread_run, &th[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i].tid, NULL);
        ck_assert_uint_eq(th[i].r.creates, REC_ROUNDS);
        ck_assert_uint_eq(th[i].r.updates, REC_ROUNDS);
        ck_assert_uint_eq(th[i].r.captures, 0);
    }
    pthread_barrier_destroy(&start);
    fx_release(&x);
    add_free(&b);
}
END_TEST
#endif

static Suite *suite(void)
{
    Suite *s = suite_create("xla");
    TCase *t = tcase_create("xla");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, single_kernel_call);
    tcase_add_test(t, scratch_bytes_that_wrap_refused);
    tcase_add_test(t, fastest_candidate_chosen_and_kept);
    tcase_add_test(t, aliased_operand_restored);
    tcase_add_test(t, zeroed_results_per_candidate);
    tcase_add_test(t, corrupt_choice_file_replaced);
    tcase_add_test(t, planted_choice_files_ignored);
    tcase_add_test(t, unwritable_cache_dir);
    tcase_add_test(t, candidate_that_cannot_run);
    tcase_add_test(t, bad_attributes);
    tcase_add_test(t, host_events_without_a_stream);
    tcase_add_test(t, captured_stream_gets_candidate_zero);
    tcase_add_test(t, api_version_negotiated);
#if XLA_HAVE_RECORD
    tcase_add_test(t, record_makes_a_kernel_node);
    tcase_add_test(t, record_falls_back_to_capture);
    tcase_add_test(t, record_update_moves_only_the_buffers);
    tcase_add_test(t, record_on_threads_at_once);
    tcase_add_test(t, record_each_device_its_node);
#endif
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    /* the runtime the handlers share reads this when it starts: the driver double named "cuda" */
    const char *cuda;
    tdd_facts(tdd_open("td_cuda", &cuda), "cuda", "cuda", "sm90", 2, NULL)->capture = 1; /* two: XLA's ordinals 0, 1 */
    setenv("TRIDENT_DRIVER_PATH", cuda, 1);
    if (!mkdtemp(tmp_root)) {
        perror("test_xla: mkdtemp");
        return 1;
    }
    int rc = tu_run(suite());
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "test_xla: could not remove %s\n", tmp_root);
    return rc;
}
