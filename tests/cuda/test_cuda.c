/* SPDX-License-Identifier: Apache-2.0 */
/* test_cuda.c: the CUDA driver on a real GPU, with real Triton 3.6 output
 * for sm90 (tests/fixtures/triton/cuda): vector add fp32 and fp16, a 2-D
 * kernel, softmax, a matmul with more than 48 KiB of shared memory, a kernel
 * with global scratch, a num_ctas=2 cluster kernel, a cooperative-grid
 * kernel, a PTX-only kernel (JIT, disk cache), every scalar type; each on
 * random inputs with every output element checked against C. Also: foreign
 * streams and contexts, errors. Without a CUDA device it exits 77 (SKIP) with
 * a visible message. */
#include <cuda.h>
#include <dlfcn.h>
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/internal.h"
#include "tests/testutil.h"

static trd_runtime_t *rt;
static trd_device_t *gpu;
static trd_device_props_t props = {.struct_size = sizeof props};
static char cache_dir[] = "/tmp/trd_jit_XXXXXX";

static void setup(void)
{
    char ini[256];
    snprintf(ini, sizeof ini, "[runtime]\ncache_dir = %s\n", cache_dir);
    rt = tu_runtime(NULL, ini);
    TU_OK(trd_runtime_device_find(rt, "backend=cuda", &gpu));
    TU_OK(trd_device_get_props(gpu, &props));
}

static void teardown(void)
{
    trd_runtime_destroy(rt);
}

static trd_kernel_t *fixture(const char *variant)
{
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_fixture("cuda", variant)};
    TU_OK(trd_kernel_create(rt, &d, &k));
    return k;
}

static trd_buffer_t *upload(const void *data, size_t bytes)
{
    trd_buffer_t *b;
    TU_OK(trd_buffer_alloc(gpu, bytes, &b));
    TU_OK(trd_buffer_write(b, 0, data, bytes, NULL));
    return b;
}

static trd_buffer_t *poisoned(size_t bytes)
{
    trd_buffer_t *b;
    TU_OK(trd_buffer_alloc(gpu, bytes, &b));
    TU_OK(trd_buffer_fill(b, 0, bytes, 0xff, NULL)); /* NaN for floats: unwritten elements show */
    return b;
}

static void launch(trd_kernel_t *k, uint32_t gx, uint32_t gy, trd_arg_t *args, uint32_t n)
{
    trd_launch_t l = {.struct_size = sizeof l, .grid = {gx, gy, 1}, .num_args = n, .args = args, .device = gpu};
    TU_OK(trd_kernel_launch(k, &l));
}

/* float -> fp16, round to nearest even, subnormals included */
static uint16_t f2h(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    int e = (int)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = (x & 0x7fffff) | 0x800000;
    if (((x >> 23) & 0xff) == 0)
        return sign;
    int shift = e > 0 ? 13 : 13 + 1 - e; /* normal: drop 13 bits; subnormal: more */
    if (shift > 24)
        return sign;
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    if (e <= 0)
        return (uint16_t)(sign | q); /* q == 0x400 is the smallest normal */
    uint32_t v = ((uint32_t)e << 10) + (q - 0x400); /* a carry bumps the exponent */
    return (uint16_t)(sign | (v >= 0x7c00 ? 0x7c00 : v));
}

static float h2f(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m + 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

START_TEST(add_fp32_and_fp16)
{
    const int n = 1000003;
    float *x = malloc(n * 4), *y = malloc(n * 4), *o = malloc(n * 4);
    tu_fill_f32(x, n, 1);
    tu_fill_f32(y, n, 2);
    trd_buffer_t *bx = upload(x, n * 4), *by = upload(y, n * 4), *bo = poisoned(n * 4);
    trd_kernel_t *k = fixture("add_fp32");
    trd_load_info_t li = {.struct_size = sizeof li};
    TU_OK(trd_kernel_load(k, gpu, &li));
    ck_assert_int_eq(li.format, TRD_FORMAT_CUBIN);
    ck_assert_uint_eq(li.block_size, 128);
    ck_assert_uint_gt(li.registers, 0);
    trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(n)};
    launch(k, (n + 1023) / 1024, 1, a, 4);
    TU_OK(trd_buffer_read(bo, 0, o, n * 4, NULL));
    for (int i = 0; i < n; i++)
        ck_assert_msg(o[i] == x[i] + y[i], "out[%d] = %g, expected %g", i, o[i], x[i] + y[i]);
    trd_kernel_destroy(k);
    /* fp16 */
    uint16_t *hx = malloc(n * 2), *hy = malloc(n * 2), *ho = malloc(n * 2);
    for (int i = 0; i < n; i++) {
        hx[i] = f2h(x[i]);
        hy[i] = f2h(y[i]);
    }
    TU_OK(trd_buffer_write(bx, 0, hx, n * 2, NULL));
    TU_OK(trd_buffer_write(by, 0, hy, n * 2, NULL));
    TU_OK(trd_buffer_fill(bo, 0, n * 4, 0xff, NULL));
    k = fixture("add_fp16");
    launch(k, (n + 1023) / 1024, 1, a, 4);
    TU_OK(trd_buffer_read(bo, 0, ho, n * 2, NULL));
    for (int i = 0; i < n; i++) {
        float want = h2f(f2h(h2f(hx[i]) + h2f(hy[i])));
        ck_assert_msg(h2f(ho[i]) == want, "fp16 out[%d] = %g, expected %g", i, h2f(ho[i]), want);
    }
    trd_kernel_destroy(k);
    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    free(x);
    free(y);
    free(o);
    free(hx);
    free(hy);
    free(ho);
}
END_TEST

START_TEST(transpose_2d)
{
    const int m = 1000, n = 777;
    float *in = malloc((size_t)m * n * 4), *o = malloc((size_t)m * n * 4);
    tu_fill_f32(in, (size_t)m * n, 3);
    trd_buffer_t *bi = upload(in, (size_t)m * n * 4), *bo = poisoned((size_t)m * n * 4);
    trd_kernel_t *k = fixture("transpose");
    trd_arg_t a[5] = {trd_arg_buffer(bi), trd_arg_buffer(bo), trd_arg_int(m), trd_arg_int(n), trd_arg_float(0.75)};
    launch(k, (n + 31) / 32, (m + 31) / 32, a, 5);
    TU_OK(trd_buffer_read(bo, 0, o, (size_t)m * n * 4, NULL));
    for (int r = 0; r < m; r++)
        for (int c = 0; c < n; c++)
            ck_assert_msg(o[(size_t)c * m + r] == 0.75f * in[(size_t)r * n + c], "out[%d][%d]", c, r);
    trd_kernel_destroy(k);
    trd_buffer_free(bi);
    trd_buffer_free(bo);
    free(in);
    free(o);
}
END_TEST

START_TEST(softmax)
{
    const int rows = 4096, cols = 1000;
    float *in = malloc((size_t)rows * cols * 4), *o = malloc((size_t)rows * cols * 4);
    tu_fill_f32(in, (size_t)rows * cols, 4);
    for (size_t i = 0; i < (size_t)rows * cols; i++)
        in[i] *= 8.0f;
    trd_buffer_t *bi = upload(in, (size_t)rows * cols * 4), *bo = poisoned((size_t)rows * cols * 4);
    trd_kernel_t *k = fixture("softmax");
    trd_arg_t a[5] = {trd_arg_buffer(bo), trd_arg_buffer(bi), trd_arg_int(cols), trd_arg_int(cols), trd_arg_int(cols)};
    launch(k, rows, 1, a, 5);
    TU_OK(trd_buffer_read(bo, 0, o, (size_t)rows * cols * 4, NULL));
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        const float *x = in + (size_t)r * cols;
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < cols; c++)
            mx = fmax(mx, x[c]);
        for (int c = 0; c < cols; c++)
            sum += exp(x[c] - mx);
        for (int c = 0; c < cols; c++) {
            double want = exp(x[c] - mx) / sum, got = o[(size_t)r * cols + c];
            ck_assert_msg(isfinite(got), "row %d col %d unwritten", r, c);
            worst = fmax(worst, fabs(got - want) / want);
        }
    }
    ck_assert_msg(worst < 1e-4, "softmax relative error %g", worst);
    trd_kernel_destroy(k);
    trd_buffer_free(bi);
    trd_buffer_free(bo);
    free(in);
    free(o);
}
END_TEST

START_TEST(matmul_big_shared)
{
    const int M = 1000, N = 700, K = 300;
    uint16_t *a = malloc((size_t)M * K * 2), *b = malloc((size_t)K * N * 2), *c = malloc((size_t)M * N * 2);
    float *af = malloc((size_t)M * K * 4), *bf = malloc((size_t)K * N * 4);
    tu_fill_f32(af, (size_t)M * K, 5);
    tu_fill_f32(bf, (size_t)K * N, 6);
    for (size_t i = 0; i < (size_t)M * K; i++)
        a[i] = f2h(af[i]);
    for (size_t i = 0; i < (size_t)K * N; i++)
        b[i] = f2h(bf[i]);
    trd_buffer_t *ba = upload(a, (size_t)M * K * 2), *bb = upload(b, (size_t)K * N * 2), *bc = poisoned((size_t)M * N * 2);
    trd_kernel_t *k = fixture("matmul");
    trd_target_info_t ti = {.struct_size = sizeof ti};
    TU_OK(trd_kernel_target_info(k, 0, &ti));
    ck_assert_uint_gt(ti.shared, 49152); /* the opt-in path */
    trd_arg_t args[12] = {trd_arg_buffer(ba), trd_arg_buffer(bb), trd_arg_buffer(bc), trd_arg_int(M), trd_arg_int(N),
                          trd_arg_int(K), trd_arg_int(K), trd_arg_int(1), trd_arg_int(N), trd_arg_int(1), trd_arg_int(N),
                          trd_arg_int(1)};
    launch(k, (M + 127) / 128, (N + 127) / 128, args, 12);
    TU_OK(trd_buffer_read(bc, 0, c, (size_t)M * N * 2, NULL));
    double num = 0, den = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = 0;
            for (int kk = 0; kk < K; kk++)
                ref += (double)h2f(a[(size_t)i * K + kk]) * h2f(b[(size_t)kk * N + j]);
            double got = h2f(c[(size_t)i * N + j]);
            ck_assert_msg(isfinite(got), "c[%d][%d] unwritten", i, j);
            num += (got - ref) * (got - ref);
            den += ref * ref;
        }
    ck_assert_msg(sqrt(num / den) < 2e-3, "matmul relative error %g", sqrt(num / den));
    trd_kernel_destroy(k);
    trd_buffer_free(ba);
    trd_buffer_free(bb);
    trd_buffer_free(bc);
    free(a);
    free(b);
    free(c);
    free(af);
    free(bf);
}
END_TEST

START_TEST(global_scratch)
{
    const int n = 256 * 1000;
    float *x = malloc(n * 4), *o = malloc(n * 4);
    tu_fill_f32(x, n, 7);
    trd_buffer_t *bx = upload(x, n * 4), *bo = poisoned(n * 4);
    trd_kernel_t *k = fixture("scratch");
    trd_stream_t *s;
    TU_OK(trd_stream_create(gpu, &s));
    trd_arg_t a[3] = {trd_arg_buffer(bx), trd_arg_buffer(bo), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {n / 256, 1, 1}, .num_args = 3, .args = a, .stream = s};
    for (int rep = 0; rep < 3; rep++) /* the arena grows once, then is reused */
        TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_stream_synchronize(s));
    TU_OK(trd_buffer_read(bo, 0, o, n * 4, NULL));
    for (int i = 0; i < n; i++)
        ck_assert_msg(o[i] == x[i] * 2.0f + 1.0f, "out[%d] = %g", i, o[i]);
    /* caller-provided scratch, on a foreign-stream launch */
    trd_buffer_t *scratch;
    TU_OK(trd_buffer_alloc(gpu, (size_t)(n / 256) * 128, &scratch));
    void *sp;
    TU_OK(trd_buffer_address(scratch, &sp));
    TU_OK(trd_buffer_fill(bo, 0, n * 4, 0xff, NULL));
    trd_launch_t l2 = {.struct_size = sizeof l2, .grid = {n / 256, 1, 1}, .num_args = 3, .args = a, .device = gpu,
                       .global_scratch = sp};
    TU_OK(trd_kernel_launch(k, &l2));
    TU_OK(trd_buffer_read(bo, 0, o, n * 4, NULL));
    for (int i = 0; i < n; i++)
        ck_assert(o[i] == x[i] * 2.0f + 1.0f);
    trd_stream_destroy(s);
    trd_buffer_free(scratch);
    trd_kernel_destroy(k);
    trd_buffer_free(bx);
    trd_buffer_free(bo);
    free(x);
    free(o);
}
END_TEST

START_TEST(cluster_num_ctas_2)
{
    const int n = 1 << 20;
    float *x = malloc(n * 4), *y = malloc(n * 4), *o = malloc(n * 4);
    tu_fill_f32(x, n, 8);
    tu_fill_f32(y, n, 9);
    trd_buffer_t *bx = upload(x, n * 4), *by = upload(y, n * 4), *bo = poisoned(n * 4);
    trd_kernel_t *k = fixture("cluster");
    trd_target_info_t ti = {.struct_size = sizeof ti};
    TU_OK(trd_kernel_target_info(k, 0, &ti));
    ck_assert_uint_eq(ti.num_ctas, 2);
    trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(n)};
    launch(k, n / 1024, 1, a, 4);
    TU_OK(trd_buffer_read(bo, 0, o, n * 4, NULL));
    for (int i = 0; i < n; i++)
        ck_assert_msg(o[i] == x[i] + y[i], "out[%d]", i);
    trd_kernel_destroy(k);
    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    free(x);
    free(y);
    free(o);
}
END_TEST

START_TEST(cooperative_grid)
{
    trd_kernel_t *k = fixture("coop");
    const int n = (int)props.compute_units; /* one program an SM: all co-resident */
    trd_buffer_t *bx = poisoned((size_t)n * 4), *bo = poisoned((size_t)n * 4), *bc;
    TU_OK(trd_buffer_alloc(gpu, 4, &bc));
    TU_OK(trd_buffer_fill(bc, 0, 4, 0, NULL));
    trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(bo), trd_arg_buffer(bc), trd_arg_int(n)};
    launch(k, (uint32_t)n, 1, a, 4);
    float *o = malloc((size_t)n * 4);
    TU_OK(trd_buffer_read(bo, 0, o, (size_t)n * 4, NULL));
    for (int p = 0; p < n; p++)
        ck_assert_msg(o[p] == (float)(((p + 1) % n) * 3 + 1) * 2.0f, "program %d: %g", p, o[p]);
    /* a grid larger than what can be resident at once is refused before launch */
    trd_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)n * 4096, 1, 1}, .num_args = 4, .args = a, .device = gpu};
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_LIMIT, "can be resident at once");
    free(o);
    trd_buffer_free(bx);
    trd_buffer_free(bo);
    trd_buffer_free(bc);
    trd_kernel_destroy(k);
}
END_TEST

START_TEST(ptx_only_and_jit_cache)
{
    const int n = 300000;
    float *x = malloc(n * 4), *o = malloc(n * 4);
    tu_fill_f32(x, n, 10);
    trd_buffer_t *bx = upload(x, n * 4), *bo = poisoned(n * 4);
    trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(bo), trd_arg_int(n), trd_arg_float(-3.0)};
    for (int round = 0; round < 2; round++) {
        trd_kernel_t *k = fixture("scale_ptx");
        trd_load_info_t li = {.struct_size = sizeof li};
        TU_OK(trd_kernel_load(k, gpu, &li));
        ck_assert_int_eq(li.format, TRD_FORMAT_PTX);
        /* a fresh cache compiles; the second kernel object finds the result on disk */
        ck_assert_uint_eq(li.from_cache, (uint32_t)round);
        launch(k, (n + 511) / 512, 1, a, 4);
        TU_OK(trd_buffer_read(bo, 0, o, n * 4, NULL));
        for (int i = 0; i < n; i++)
            ck_assert(o[i] == -3.0f * x[i]);
        trd_kernel_destroy(k);
    }
    /* JIT options are part of the key: maxnreg compiles again */
    trd_options_t *opts;
    TU_OK(trd_options_create_for_device(gpu, &opts));
    TU_OK(trd_options_set(opts, "maxnreg", "32"));
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_fixture("cuda", "scale_ptx"), .options = opts};
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_load_info_t li = {.struct_size = sizeof li};
    TU_OK(trd_kernel_load(k, gpu, &li));
    ck_assert_uint_eq(li.from_cache, 0);
    ck_assert_uint_le(li.registers, 32);
    trd_kernel_destroy(k);
    /* a corrupted entry is detected and rebuilt */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "for f in %s/cuda/*.cubin; do printf 'garbage' | dd of=$f bs=1 seek=40 conv=notrunc 2>/dev/null; done",
             cache_dir);
    ck_assert_int_eq(system(cmd), 0);
    k = fixture("scale_ptx");
    TU_OK(trd_kernel_load(k, gpu, &li));
    ck_assert_uint_eq(li.from_cache, 0);
    launch(k, (n + 511) / 512, 1, a, 4);
    TU_OK(trd_buffer_read(bo, 0, o, n * 4, NULL));
    for (int i = 0; i < n; i++)
        ck_assert(o[i] == -3.0f * x[i]);
    trd_kernel_destroy(k);
    /* unknown ptxas options are refused, not dropped */
    TU_OK(trd_options_set(opts, "ptx_options", "--warn-on-spills"));
    TU_OK(trd_kernel_create(rt, &d, &k));
    TU_FAILS(trd_kernel_load(k, gpu, NULL), TRD_ERR_INVALID_ARGUMENT, "no equivalent in the driver's PTX JIT");
    trd_kernel_destroy(k);
    trd_options_destroy(opts);
    trd_buffer_free(bx);
    trd_buffer_free(bo);
    free(x);
    free(o);
}
END_TEST

START_TEST(scalar_types)
{
    trd_kernel_t *k = fixture("scalars");
    trd_buffer_t *bo = poisoned(11 * 8);
    trd_arg_t a[12] = {trd_arg_buffer(bo), trd_arg_int(-100), trd_arg_int(-30000), trd_arg_int(-2000000000),
                       trd_arg_int(-9000000000000LL), trd_arg_uint(4000000000u), trd_arg_uint(1ull << 60),
                       trd_arg_float(-1.5), trd_arg_float(0.15625), trd_arg_float(3.25), trd_arg_float(1e300),
                       trd_arg_int(1)};
    launch(k, 1, 1, a, 12);
    double o[11];
    TU_OK(trd_buffer_read(bo, 0, o, sizeof o, NULL));
    const double want[11] = {-100, -30000, -2000000000, -9000000000000.0, 4000000000.0, 1152921504606846976.0, -1.5,
                             0.15625, 3.25, 1e300, 1};
    for (int i = 0; i < 11; i++)
        ck_assert_msg(o[i] == want[i], "scalar %d: %.17g, expected %.17g", i, o[i], want[i]);
    trd_buffer_free(bo);
    trd_kernel_destroy(k);
}
END_TEST


/* The optional stream_capturing op (the XLA handler's question before it
 * benchmarks) on a stream the caller captures into a CUDA graph. */
START_TEST(stream_capture_query)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    ck_assert_ptr_nonnull(lib);
    CUresult (*set)(CUcontext) = (CUresult(*)(CUcontext))dlsym(lib, "cuCtxSetCurrent");
    CUresult (*retain)(CUcontext *, CUdevice) = (CUresult(*)(CUcontext *, CUdevice))dlsym(lib, "cuDevicePrimaryCtxRetain");
    CUresult (*release)(CUdevice) = (CUresult(*)(CUdevice))dlsym(lib, "cuDevicePrimaryCtxRelease_v2");
    CUresult (*screate)(CUstream *, unsigned) = (CUresult(*)(CUstream *, unsigned))dlsym(lib, "cuStreamCreate");
    CUresult (*sdestroy)(CUstream) = (CUresult(*)(CUstream))dlsym(lib, "cuStreamDestroy_v2");
    CUresult (*begin)(CUstream, CUstreamCaptureMode) =
        (CUresult(*)(CUstream, CUstreamCaptureMode))dlsym(lib, "cuStreamBeginCapture_v2");
    CUresult (*end)(CUstream, CUgraph *) = (CUresult(*)(CUstream, CUgraph *))dlsym(lib, "cuStreamEndCapture");
    CUresult (*gdestroy)(CUgraph) = (CUresult(*)(CUgraph))dlsym(lib, "cuGraphDestroy");
    ck_assert(begin && end && gdestroy);
    CUcontext ctx;
    ck_assert_int_eq(retain(&ctx, (CUdevice)props.ordinal), CUDA_SUCCESS);
    ck_assert_int_eq(set(ctx), CUDA_SUCCESS);
    CUstream s;
    ck_assert_int_eq(screate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    trd_stream_t *ts;
    TU_OK(trd_stream_wrap(gpu, s, &ts));
    trd_status_t (*capturing)(void *, int32_t *) = TRD_OPS_OPTIONAL(ts->dev->drv->ops, stream_capturing);
    ck_assert_ptr_nonnull(capturing);
    int32_t cap = -1;
    TU_OK(capturing(ts->h, &cap));
    ck_assert_int_eq(cap, 0);
    ck_assert_int_eq(begin(s, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    TU_OK(capturing(ts->h, &cap));
    ck_assert_int_eq(cap, 1);
    CUgraph g = NULL;
    ck_assert_int_eq(end(s, &g), CUDA_SUCCESS);
    gdestroy(g);
    TU_OK(capturing(ts->h, &cap));
    ck_assert_int_eq(cap, 0);
    trd_stream_destroy(ts);
    sdestroy(s);
    set(NULL);
    release((CUdevice)props.ordinal);
    dlclose(lib);
}
END_TEST

/* The caller's own context and stream, through libcuda directly. */
START_TEST(foreign_stream_and_context)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    ck_assert_ptr_nonnull(lib);
    CUresult (*get)(CUcontext *) = (CUresult(*)(CUcontext *))dlsym(lib, "cuCtxGetCurrent");
    CUresult (*set)(CUcontext) = (CUresult(*)(CUcontext))dlsym(lib, "cuCtxSetCurrent");
    CUresult (*retain)(CUcontext *, CUdevice) = (CUresult(*)(CUcontext *, CUdevice))dlsym(lib, "cuDevicePrimaryCtxRetain");
    CUresult (*release)(CUdevice) = (CUresult(*)(CUdevice))dlsym(lib, "cuDevicePrimaryCtxRelease_v2");
    CUresult (*screate)(CUstream *, unsigned) = (CUresult(*)(CUstream *, unsigned))dlsym(lib, "cuStreamCreate");
    CUresult (*ssync)(CUstream) = (CUresult(*)(CUstream))dlsym(lib, "cuStreamSynchronize");
    CUresult (*sdestroy)(CUstream) = (CUresult(*)(CUstream))dlsym(lib, "cuStreamDestroy_v2");
    CUcontext ctx, cur;
    ck_assert_int_eq(retain(&ctx, (CUdevice)props.ordinal), CUDA_SUCCESS);
    ck_assert_int_eq(set(ctx), CUDA_SUCCESS);
    CUstream s;
    ck_assert_int_eq(screate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    const int n = 5000;
    float *x = malloc(n * 4), *o = malloc(n * 4);
    tu_fill_f32(x, n, 11);
    trd_buffer_t *bx = upload(x, n * 4), *bo = poisoned(n * 4);
    trd_kernel_t *k = fixture("add_fp32");
    trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(bx), trd_arg_buffer(bo), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {5, 1, 1}, .num_args = 4, .args = a, .device = gpu,
                      .native_stream = s};
    TU_OK(trd_kernel_launch(k, &l));
    ck_assert_int_eq(ssync(s), CUDA_SUCCESS);
    ck_assert_int_eq(get(&cur), CUDA_SUCCESS);
    ck_assert_ptr_eq(cur, ctx); /* nothing switched behind the caller's back */
    TU_OK(trd_buffer_read(bo, 0, o, n * 4, NULL));
    for (int i = 0; i < n; i++)
        ck_assert(o[i] == 2.0f * x[i]);
    /* wrapped as a trident stream */
    trd_stream_t *ts;
    TU_OK(trd_stream_wrap(gpu, s, &ts));
    l.stream = ts;
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_stream_synchronize(ts));
    trd_stream_destroy(ts); /* does not destroy the caller's stream */
    ck_assert_int_eq(ssync(s), CUDA_SUCCESS);
    /* a caller with no current context: trident's own calls push and pop */
    ck_assert_int_eq(set(NULL), CUDA_SUCCESS);
    trd_stream_t *own;
    TU_OK(trd_stream_create(gpu, &own));
    l.stream = own;
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_stream_synchronize(own));
    ck_assert_int_eq(get(&cur), CUDA_SUCCESS);
    ck_assert_ptr_null(cur);
    trd_stream_destroy(own);
    ck_assert_int_eq(set(ctx), CUDA_SUCCESS);
    sdestroy(s);
    set(NULL);
    release((CUdevice)props.ordinal);
    trd_kernel_destroy(k);
    trd_buffer_free(bx);
    trd_buffer_free(bo);
    free(x);
    free(o);
    dlclose(lib);
}
END_TEST

START_TEST(errors_and_properties)
{
    ck_assert_int_eq(props.kind, TRD_DEVICE_GPU);
    ck_assert_str_eq(props.vendor, "NVIDIA");
    ck_assert_ptr_nonnull(props.pci_bus_id);
    ck_assert_uint_eq(strlen(props.pci_bus_id), 12); /* 0000:BB:DD.F */
    ck_assert_uint_eq(props.warp_size, 32);
    ck_assert_uint_gt(props.max_shared_per_block_optin, props.max_shared_per_block);
    ck_assert_uint_eq(props.flags & TRD_DEVICE_HAS_UUID, TRD_DEVICE_HAS_UUID);
    /* more shared memory than the device allows: a clear error at load */
    char *meta;
    size_t len;
    FILE *f = fopen(tu_path("%s/add_kernel.json", tu_fixture("cuda", "add_fp32")), "r");
    meta = malloc(1 << 16);
    len = fread(meta, 1, (1 << 16) - 1, f);
    meta[len] = '\0';
    fclose(f);
    char *sh = strstr(meta, "\"shared\": 0");
    ck_assert_ptr_nonnull(sh);
    char *big = malloc(len + 32);
    snprintf(big, len + 32, "%.*s\"shared\": 999999%s", (int)(sh - meta), meta, sh + 11);
    char *cubin;
    f = fopen(tu_path("%s/add_kernel.cubin", tu_fixture("cuda", "add_fp32")), "rb");
    cubin = malloc(1 << 20);
    size_t clen = fread(cubin, 1, 1 << 20, f);
    fclose(f);
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .data = cubin, .size = clen, .metadata = big,
                           .signature = "*fp32,*fp32,*fp32,i32", .source = TRD_SOURCE_IMAGE, .format = TRD_FORMAT_CUBIN,
                           .target = "cuda:sm90"};
    TU_OK(trd_kernel_create(rt, &d, &k));
    TU_FAILS(trd_kernel_load(k, gpu, NULL), TRD_ERR_LIMIT, "bytes of shared memory a block");
    ck_assert_ptr_nonnull(strstr(trd_error_message(), "cuda:"));
    trd_kernel_destroy(k);
    /* a damaged cubin: the CUDA error name and what was being done */
    for (size_t i = 200; i < clen && i < 2000; i++)
        cubin[i] ^= 0x5a;
    d.metadata = meta;
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_status_t st = trd_kernel_load(k, gpu, NULL);
    ck_assert_int_ne(st, TRD_OK);
    ck_assert_msg(strstr(trd_error_message(), "CUDA_ERROR_") && strstr(trd_error_message(), "loading kernel 'add_kernel'"),
                  "%s", trd_error_message());
    trd_kernel_destroy(k);
    free(cubin);
    free(big);
    free(meta);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cuda");
    TCase *t = tcase_create("cuda");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, add_fp32_and_fp16);
    tcase_add_test(t, transpose_2d);
    tcase_add_test(t, softmax);
    tcase_add_test(t, matmul_big_shared);
    tcase_add_test(t, global_scratch);
    tcase_add_test(t, cluster_num_ctas_2);
    tcase_add_test(t, cooperative_grid);
    tcase_add_test(t, ptx_only_and_jit_cache);
    tcase_add_test(t, scalar_types);
    tcase_add_test(t, foreign_stream_and_context);
    tcase_add_test(t, stream_capture_query);
    tcase_add_test(t, errors_and_properties);
    suite_add_tcase(s, t);
    return s;
}

/* Whether a CUDA device is there, found in a child process: CUDA must not be
 * initialised in the parent of the processes Check forks for the tests. */
static int probe(char *why, size_t cap)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 0;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        trd_runtime_t *prt = NULL;
        trd_runtime_desc_t pd = {.struct_size = sizeof pd, .flags = TRD_RUNTIME_NO_ENV};
        char msg[1024] = "no CUDA driver module";
        int have = 0;
        if (trd_runtime_create(&pd, &prt) == TRD_OK) {
            trd_device_t *d;
            have = trd_runtime_device_find(prt, "backend=cuda", &d) == TRD_OK;
            uint32_t n = 0;
            trd_runtime_driver_count(prt, &n);
            for (uint32_t i = 0; i < n; i++) {
                trd_driver_info_t info = {.struct_size = sizeof info};
                if (trd_runtime_driver_info(prt, i, &info) == TRD_OK && !strcmp(info.name, "cuda"))
                    snprintf(msg, sizeof msg, "%s", info.reason[0] ? info.reason : "the cuda driver reports no device");
            }
            trd_runtime_destroy(prt);
        } else {
            snprintf(msg, sizeof msg, "%s", trd_error_message());
        }
        if (write(fds[1], msg, strlen(msg) + 1) < 0)
            _exit(2);
        _exit(have ? 0 : 1);
    }
    close(fds[1]);
    ssize_t n = read(fds[0], why, cap - 1);
    why[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
    char why[1024];
    if (!probe(why, sizeof why)) {
        tu_skip("CUDA GPU tests", why);
        return 77;
    }
    if (!mkdtemp(cache_dir))
        return 1;
    int rc = tu_run(suite());
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
