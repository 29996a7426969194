/* SPDX-License-Identifier: Apache-2.0 */
/* test_prepared.c: prepared launches and native memory (TRIDENT_1.2) and a kernel's scratch sizes without a device
 * (TRIDENT_1.3), through the public API only. Host kernels
 * (examples/host) run from native pointers and packed parameters on random inputs, every output element checked;
 * parameter descriptions; scratch sizes, overflow-checked (a grid whose scratch bytes wrap 64 bits is refused, not
 * launched with a wrapped size); each refusal of a bad launch; memset/memcpy on native pointers; streams that are
 * or are not being captured (the driver double named "cuda", offering stream_capturing); and the launch path of a loaded kernel
 * counted on the calling thread: no allocation and no mutex for trd_prepared_launch (and trd_kernel_launch) on a
 * test driver's device, no allocation on the host. */
#include <dlfcn.h>
#include <pthread.h>

#include "tests/drivers/driver_double.h"
#include "tests/testutil.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

/* ------------------------------------------------ counting on this thread */

/* malloc and friends and pthread_mutex_lock, interposed to count the calls of the thread that is counting. Not
 * under the sanitizers, whose runtimes own these functions. */
#ifndef SANITIZED
static _Thread_local int counting;
static _Thread_local unsigned long allocs, locks;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_memalign)(void **, size_t, size_t);
static int (*real_lock)(pthread_mutex_t *);
/* dlsym may allocate before the real functions are known: from here, never freed */
static _Alignas(16) char boot[8192];
static size_t boot_used;

static void resolve(void)
{
    static int busy;
    if (busy)
        return;
    busy = 1;
    *(void **)&real_malloc = dlsym(RTLD_NEXT, "malloc");
    *(void **)&real_calloc = dlsym(RTLD_NEXT, "calloc");
    *(void **)&real_realloc = dlsym(RTLD_NEXT, "realloc");
    *(void **)&real_free = dlsym(RTLD_NEXT, "free");
    *(void **)&real_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    *(void **)&real_lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
    busy = 0;
}

/* the build hides symbols by default: these must be seen by the libraries to interpose theirs */
#define INTERPOSE __attribute__((visibility("default")))

static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (boot_used + n > sizeof boot)
        return NULL;
    void *p = boot + boot_used;
    boot_used += n;
    return p;
}

INTERPOSE void *malloc(size_t n)
{
    if (!real_malloc)
        resolve();
    if (!real_malloc)
        return boot_alloc(n);
    allocs += counting;
    return real_malloc(n);
}

INTERPOSE void *calloc(size_t n, size_t m)
{
    if (!real_calloc)
        resolve();
    if (!real_calloc)
        return boot_alloc(n * m); /* static, so zeroed */
    allocs += counting;
    return real_calloc(n, m);
}

INTERPOSE void *realloc(void *p, size_t n)
{
    if (!real_realloc)
        resolve();
    allocs += counting;
    return real_realloc(p, n);
}

INTERPOSE void free(void *p)
{
    if ((char *)p >= boot && (char *)p < boot + sizeof boot)
        return;
    if (!real_free)
        resolve();
    allocs += counting && p;
    real_free(p);
}

INTERPOSE int posix_memalign(void **p, size_t align, size_t n)
{
    if (!real_memalign)
        resolve();
    allocs += counting;
    return real_memalign(p, align, n);
}

INTERPOSE int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (!real_lock)
        resolve();
    locks += counting;
    return real_lock(m);
}
#endif

/* ---------------------------------------------------------------- setup */

static trd_runtime_t *rt;
static trd_device_t *host;

static void setup(void)
{
    /* cuda's device and tda's first share a PCI id (0000:80:00.0): cuda:0 and tda:1 stay */
    tdd_facts(tdd_open("td_cuda", NULL), "cuda", "cuda", "sm90", 1, NULL)->capture = 1;
    tdd_facts(tdd_open("td_a", NULL), "tda", "cuda", "sm90", 2, NULL);
    const char *files[] = {"td_cuda", "td_a"};
    rt = tu_runtime(tdd_paths(files, 2), NULL);
    TU_OK(trd_runtime_device_find(rt, "host:0", &host));
}

static void teardown(void)
{
    trd_runtime_destroy(rt);
    tdd_assert_clean(tdd_get("td_cuda")); /* every stream, buffer and module released, each once */
    tdd_assert_clean(tdd_get("td_a"));
}

static trd_kernel_t *host_kernel(const char *name, const char *sig, const char *metadata)
{
    return tu_host_kernel_create(rt, name, sig, metadata);
}

static void *device_alloc(trd_device_t *dev, uint64_t bytes, trd_buffer_t **b)
{
    void *p;
    TU_OK(trd_buffer_alloc(dev, bytes, b));
    TU_OK(trd_buffer_address(*b, &p));
    return p;
}

/* ---------------------------------------------------------------- tests */

START_TEST(add_from_native_pointers)
{
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    trd_prepared_t *p, *again;
    TU_OK(trd_kernel_prepare(k, host, &p));
    TU_OK(trd_kernel_prepare(k, host, &again)); /* another handle over the same load */
    ck_assert_ptr_ne(p, again);
    trd_prepared_destroy(again);
    trd_stream_t *s;
    TU_OK(trd_stream_create(host, &s));
    const int32_t sizes[] = {1, 1000, 1025, 77777};
    for (size_t c = 0; c < TU_LEN(sizes); c++) {
        int32_t n = sizes[c];
        size_t bytes = (size_t)n * 4;
        float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
        tu_fill_f32(x, (size_t)n, 1 + c);
        tu_fill_f32(y, (size_t)n, 50 + c);
        trd_buffer_t *bx, *by, *bo;
        void *dx = device_alloc(host, bytes, &bx), *dy = device_alloc(host, bytes, &by),
             *dout = device_alloc(host, bytes, &bo);
        TU_OK(trd_device_memcpy(host, dx, x, bytes, TRD_COPY_HOST_TO_DEVICE, NULL));
        TU_OK(trd_device_memcpy(host, dy, y, bytes, TRD_COPY_HOST_TO_DEVICE, NULL));
        TU_OK(trd_device_memset(host, dout, 0xff, bytes, NULL)); /* NaN poison */
        void *const params[] = {&dx, &dy, &dout, &n};
        trd_native_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)(n + 1023) / 1024, 1, 1},
                                 .num_params = 4, .params = params};
        if (c % 2) /* on a trident stream, or with native_stream NULL (before the call returns) */
            l.stream = s;
        TU_OK(trd_prepared_launch(p, &l));
        if (l.stream)
            TU_OK(trd_stream_synchronize(s));
        TU_OK(trd_device_memcpy(host, out, dout, bytes, TRD_COPY_DEVICE_TO_HOST, NULL));
        for (int32_t i = 0; i < n; i++)
            ck_assert_msg(out[i] == x[i] + y[i], "n=%d out[%d] = %g, expected %g", n, i, out[i], x[i] + y[i]);
        trd_buffer_free(bo);
        trd_buffer_free(by);
        trd_buffer_free(bx);
        free(out);
        free(y);
        free(x);
    }
    trd_stream_destroy(s);
    trd_prepared_destroy(p);
    trd_prepared_destroy(NULL);
    trd_kernel_destroy(k);
}
END_TEST

START_TEST(param_info)
{
    /* a raw image: nothing is read from it before a load, the signature is the one given */
    static const char ptx[] = ".version 8.0\n.target sm_90\n";
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_IMAGE, .data = ptx, .size = sizeof ptx - 1,
                           .name = "k", .signature = "a:nvTmaDesc,b:**fp16,BLOCK:constexpr,c:i64,*u8",
                           .format = TRD_FORMAT_PTX, .target = "cuda:sm90"};
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_param_info_t pi = {.struct_size = sizeof pi};
    TU_OK(trd_kernel_param_info(k, 0, &pi));
    ck_assert_int_eq(pi.kind, TRD_PARAM_TENSOR_MAP);
    ck_assert_uint_eq(pi.size, TRD_TENSOR_MAP_BYTES);
    ck_assert_str_eq(pi.name, "a");
    ck_assert_str_eq(pi.scalar, "nvTmaDesc");
    TU_OK(trd_kernel_param_info(k, 1, &pi));
    ck_assert_int_eq(pi.kind, TRD_PARAM_POINTER);
    ck_assert_uint_eq(pi.size, 8);
    ck_assert_uint_eq(pi.pointer_depth, 2);
    ck_assert_str_eq(pi.scalar, "fp16");
    TU_OK(trd_kernel_param_info(k, 2, &pi)); /* the constexpr is not a launch parameter */
    ck_assert_int_eq(pi.kind, TRD_PARAM_SCALAR);
    ck_assert_str_eq(pi.name, "c");
    ck_assert_str_eq(pi.scalar, "i64");
    ck_assert_uint_eq(pi.size, 8);
    TU_OK(trd_kernel_param_info(k, 3, &pi));
    ck_assert_ptr_null(pi.name);
    ck_assert_uint_eq(pi.pointer_depth, 1);
    ck_assert_str_eq(pi.scalar, "u8");
    trd_param_info_t keep = pi;
    TU_FAILS(trd_kernel_param_info(k, 4, &pi), TRD_ERR_NOT_FOUND, "kernel 'k' has 4 launch parameters");
    ck_assert_mem_eq(&pi, &keep, sizeof pi); /* untouched on failure */
    pi.struct_size = 4;
    TU_FAILS(trd_kernel_param_info(k, 0, &pi), TRD_ERR_VERSION, "trd_param_info_t");
    trd_kernel_destroy(k);
}
END_TEST

/* 16 bytes of scratch a program (examples/host/scratch_kernel.c sums each program's 4 floats through it). */
static const char scratch_meta[] = "{\"name\":\"scratch_kernel\",\"target\":{\"backend\":\"host\",\"arch\":\"\"},"
                                   "\"num_warps\":1,\"global_scratch_size\":12,\"global_scratch_align\":16}";

START_TEST(scratch_sizes_checked)
{
    trd_kernel_t *k = host_kernel("scratch_kernel", "x:*fp32,out:*fp32", scratch_meta);
    trd_prepared_t *p;
    TU_OK(trd_kernel_prepare(k, host, &p));
    uint64_t g = 1, pr = 1;
    TU_OK(trd_prepared_scratch(p, (uint32_t[3]){10, 2, 3}, &g, &pr));
    ck_assert_uint_eq(g, 60 * 16); /* 12 bytes aligned to 16, a program */
    ck_assert_uint_eq(pr, 0);
    TU_OK(trd_prepared_scratch(p, (uint32_t[3]){0, 5, 1}, &g, NULL));
    ck_assert_uint_eq(g, 0);
    /* 2^60 programs x 16 bytes wraps 64 bits to 0: refused, never a zero-sized need */
    g = 7;
    TU_FAILS(trd_prepared_scratch(p, (uint32_t[3]){1u << 30, 1u << 30, 1}, &g, NULL), TRD_ERR_LIMIT,
             "grid 1073741824x1073741824x1 x 1 CTAs x 16 bytes of global scratch a program is more than 2^64 bytes");
    ck_assert_uint_eq(g, 7);
    TU_FAILS(trd_prepared_scratch(p, (uint32_t[3]){0x80000000u, 1, 1}, &g, NULL), TRD_ERR_INVALID_ARGUMENT,
             "more than 2^31-1");
    enum { N = 100 };
    float x[4 * N], out[N];
    tu_fill_f32(x, 4 * N, 7);
    trd_buffer_t *bx, *bo, *bs;
    void *dx = device_alloc(host, sizeof x, &bx), *dout = device_alloc(host, sizeof out, &bo);
    void *ds = device_alloc(host, N * 16, &bs);
    TU_OK(trd_device_memcpy(host, dx, x, sizeof x, TRD_COPY_HOST_TO_DEVICE, NULL));
    void *const params[] = {&dx, &dout};
    trd_native_launch_t l = {.struct_size = sizeof l, .grid = {N, 1, 1}, .num_params = 2, .params = params,
                             .global_scratch = ds, .global_scratch_size = N * 16 - 1};
    TU_FAILS(trd_prepared_launch(p, &l), TRD_ERR_INVALID_ARGUMENT,
             "kernel 'scratch_kernel' on host:0: grid 100x1x1 needs 1600 bytes of global scratch, the launch gives 1599");
    l.grid[0] = 0x7fffffff;
    l.grid[1] = 0x7fffffff;
    TU_FAILS(trd_prepared_launch(p, &l), TRD_ERR_LIMIT, "more than 2^64 bytes");
    l.grid[0] = N;
    l.grid[1] = 1;
    l.global_scratch_size = N * 16;
    TU_OK(trd_prepared_launch(p, &l));
    TU_OK(trd_device_memcpy(host, out, dout, sizeof out, TRD_COPY_DEVICE_TO_HOST, NULL));
    for (int i = 0; i < N; i++) {
        float want = x[4 * i] + x[4 * i + 1] + x[4 * i + 2] + x[4 * i + 3];
        ck_assert_msg(out[i] == want, "out[%d] = %g, expected %g", i, out[i], want);
    }
    /* no scratch given: the driver's own */
    l.global_scratch = NULL;
    l.global_scratch_size = 0;
    TU_OK(trd_device_memset(host, dout, 0, sizeof out, NULL));
    TU_OK(trd_prepared_launch(p, &l));
    TU_OK(trd_device_memcpy(host, out, dout, sizeof out, TRD_COPY_DEVICE_TO_HOST, NULL));
    ck_assert(out[N - 1] == x[4 * N - 4] + x[4 * N - 3] + x[4 * N - 2] + x[4 * N - 1]);
    trd_buffer_free(bs);
    trd_buffer_free(bo);
    trd_buffer_free(bx);
    trd_prepared_destroy(p);
    trd_kernel_destroy(k);
}
END_TEST

/* trd_kernel_scratch (TRIDENT_1.3): each image's scratch from its metadata alone, without a device, by the rule of
 * trd_prepared_scratch. Two host images of scratch_kernel: 0 runs here (arch ""), 2 CTAs, 12 global bytes aligned to
 * 16 and 20 profile bytes aligned to 32 a CTA; 1 never does (riscv64), 4 CTAs, 100 global bytes aligned to 64. */
static const char scratch_meta0[] =
    "{\"name\":\"scratch_kernel\",\"target\":{\"backend\":\"host\",\"arch\":\"\"},\"num_warps\":1,\"num_ctas\":2,"
    "\"global_scratch_size\":12,\"global_scratch_align\":16,\"profile_scratch_size\":20,\"profile_scratch_align\":32}";
static const char scratch_meta1[] =
    "{\"name\":\"scratch_kernel\",\"target\":{\"backend\":\"host\",\"arch\":\"riscv64\"},\"num_warps\":1,"
    "\"num_ctas\":4,\"global_scratch_size\":100,\"global_scratch_align\":64}";

START_TEST(kernel_scratch_without_a_device)
{
    trd_kernel_t *one = host_kernel("scratch_kernel", "x:*fp32,out:*fp32", NULL);
    trd_target_info_t ti = {.struct_size = sizeof ti};
    TU_OK(trd_kernel_target_info(one, 0, &ti));
    trd_bundle_target_t t[2] = {
        {.struct_size = sizeof t[0], .format = TRD_FORMAT_HOST_SO, .backend = "host", .arch = "", .image = ti.image,
         .image_size = ti.size, .metadata = scratch_meta0},
        {.struct_size = sizeof t[1], .format = TRD_FORMAT_HOST_SO, .backend = "host", .arch = "riscv64",
         .image = ti.image, .image_size = ti.size, .metadata = scratch_meta1},
    };
    void *data;
    uint64_t size;
    TU_OK(trd_bundle_write("scratch_kernel", "x:*fp32,out:*fp32", t, 2, &data, &size));
    trd_kernel_destroy(one);
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .data = data, .size = size};
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_free(data);

    /* programs x CTAs x the size rounded up to its alignment */
    static const struct {
        uint32_t grid[3];
        uint64_t want[2][2]; /* [target][global, profile] */
    } cases[] = {
        {{1, 1, 1}, {{2 * 16, 2 * 32}, {4 * 128, 0}}},
        {{7, 1, 1}, {{7 * 2 * 16, 7 * 2 * 32}, {7 * 4 * 128, 0}}},
        {{10, 2, 3}, {{60 * 2 * 16, 60 * 2 * 32}, {60 * 4 * 128, 0}}},
        {{0, 5, 1}, {{0, 0}, {0, 0}}},
        {{1u << 30, 1u << 20, 1}, {{(uint64_t)1 << 55, (uint64_t)1 << 56}, {(uint64_t)1 << 59, 0}}},
    };
    trd_prepared_t *p;
    TU_OK(trd_kernel_prepare(k, host, &p)); /* image 0: the same figures as a prepared launch's */
    for (size_t c = 0; c < TU_LEN(cases); c++) {
        for (uint32_t i = 0; i < 2; i++) {
            uint64_t g = 1, pr = 1;
            TU_OK(trd_kernel_scratch(k, i, cases[c].grid, &g, &pr));
            ck_assert_msg(g == cases[c].want[i][0] && pr == cases[c].want[i][1],
                          "case %zu target %u: %llu global and %llu profile bytes, expected %llu and %llu", c, i,
                          (unsigned long long)g, (unsigned long long)pr, (unsigned long long)cases[c].want[i][0],
                          (unsigned long long)cases[c].want[i][1]);
        }
        uint64_t g = 1, pr = 1;
        TU_OK(trd_prepared_scratch(p, cases[c].grid, &g, &pr));
        ck_assert_uint_eq(g, cases[c].want[0][0]);
        ck_assert_uint_eq(pr, cases[c].want[0][1]);
    }
    trd_prepared_destroy(p);
    /* either out pointer may be NULL */
    uint64_t g = 1, pr = 1;
    TU_OK(trd_kernel_scratch(k, 1, (uint32_t[3]){3, 1, 1}, NULL, NULL));
    TU_OK(trd_kernel_scratch(k, 0, (uint32_t[3]){3, 1, 1}, NULL, &pr));
    ck_assert_uint_eq(pr, 3 * 2 * 32);
    TU_OK(trd_kernel_scratch(k, 1, (uint32_t[3]){3, 1, 1}, &g, NULL));
    ck_assert_uint_eq(g, 3 * 4 * 128);

    /* each refusal leaves both outputs as they were */
    g = 7;
    pr = 9;
    /* 2^55 programs x 4 CTAs x 128 bytes is 2^64: image 1 only (image 0 needs 2^61) */
    const uint32_t wraps[3] = {1u << 30, 1u << 25, 1};
    TU_FAILS(trd_kernel_scratch(k, 1, wraps, &g, &pr), TRD_ERR_LIMIT,
             "kernel 'scratch_kernel' on target 1 (host:riscv64): grid 1073741824x33554432x1 x 4 CTAs x 128 bytes of "
             "global scratch a program is more than 2^64 bytes");
    ck_assert(g == 7 && pr == 9);
    TU_FAILS(trd_kernel_scratch(k, 2, wraps, &g, &pr), TRD_ERR_NOT_FOUND,
             "kernel 'scratch_kernel' has 2 targets, 0 .. 1: no target 2");
    ck_assert(g == 7 && pr == 9);
    /* the index as given, not one past it (trd_kernel_target_info said "not 0" for UINT32_MAX) */
    TU_FAILS(trd_kernel_scratch(k, UINT32_MAX, wraps, &g, &pr), TRD_ERR_NOT_FOUND, "no target 4294967295");
    trd_target_info_t keep = ti;
    TU_FAILS(trd_kernel_target_info(k, UINT32_MAX, &ti), TRD_ERR_NOT_FOUND, "0 .. 1: no target 4294967295");
    ck_assert_mem_eq(&ti, &keep, sizeof ti);
    TU_FAILS(trd_kernel_scratch(k, 0, (uint32_t[3]){1, 0x80000000u, 1}, &g, &pr), TRD_ERR_INVALID_ARGUMENT,
             "kernel 'scratch_kernel': grid 1x2147483648x1 has 2147483648 programs along y, more than 2^31-1");
    ck_assert(g == 7 && pr == 9);
    TU_FAILS(trd_kernel_scratch(k, 0, (uint32_t[3]){INT32_MAX, INT32_MAX, 3}, &g, &pr), TRD_ERR_INVALID_ARGUMENT,
             "grid 2147483647x2147483647x3 has more than 2^63-1 programs");
    ck_assert(g == 7 && pr == 9);
    TU_FAILS(trd_kernel_scratch(NULL, 0, wraps, &g, &pr), TRD_ERR_INVALID_ARGUMENT, "trd_kernel_scratch: NULL argument");
    TU_FAILS(trd_kernel_scratch(k, 0, NULL, &g, &pr), TRD_ERR_INVALID_ARGUMENT, "trd_kernel_scratch: NULL argument");
    ck_assert(g == 7 && pr == 9);
    trd_kernel_destroy(k);

    /* an image without scratch metadata needs none */
    k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    TU_OK(trd_kernel_scratch(k, 0, (uint32_t[3]){INT32_MAX, INT32_MAX, 2}, &g, &pr));
    ck_assert(g == 0 && pr == 0);
    trd_kernel_destroy(k);
}
END_TEST

/* How the vendor launches a prepared kernel, for a caller that records the launch itself (XLA's RECORD stage): the
 * loaded image at the kernel's own address, its symbol, the block, no cluster, Triton's two scratch pointers. */
START_TEST(native_description)
{
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    trd_prepared_t *p;
    TU_OK(trd_kernel_prepare(k, host, &p));
    trd_prepared_native_t n = {.struct_size = sizeof n};
    TU_OK(trd_prepared_native(p, &n));
    trd_target_info_t t = {.struct_size = sizeof t};
    TU_OK(trd_kernel_target_info(k, 0, &t));
    ck_assert_int_eq(n.format, t.format);
    ck_assert_ptr_eq(n.image, t.image);
    ck_assert_uint_eq(n.image_size, t.size);
    ck_assert_str_eq(n.entry, "add_kernel");
    ck_assert_uint_eq(n.block[0], t.num_warps * t.warp_size);
    ck_assert_uint_eq(n.block[1], 1);
    ck_assert_uint_eq(n.block[2], 1);
    ck_assert_uint_eq(n.cluster[0] + n.cluster[1] + n.cluster[2], 0);
    ck_assert_uint_eq(n.shared, t.shared);
    ck_assert_uint_eq(n.flags, 0);
    ck_assert_uint_eq(n.extra_params, 2);
    trd_prepared_native_t small = {.struct_size = 8};
    TU_FAILS(trd_prepared_native(p, &small), TRD_ERR_VERSION, "trd_prepared_native_t");
    TU_FAILS(trd_prepared_native(NULL, &n), TRD_ERR_INVALID_ARGUMENT, "trd_prepared_native: NULL argument");
    trd_prepared_destroy(p);
    trd_kernel_destroy(k);
}
END_TEST

START_TEST(bad_launches_refused)
{
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    trd_device_t *tdb;
    TU_OK(trd_runtime_device_find(rt, "tda:1", &tdb));
    trd_prepared_t *p = NULL;
    TU_FAILS(trd_kernel_prepare(k, tdb, &p), TRD_ERR_UNSUPPORTED, "has no image tda:1 (cuda sm90) can run");
    ck_assert_ptr_null(p);
    TU_FAILS(trd_kernel_prepare(NULL, host, &p), TRD_ERR_INVALID_ARGUMENT, "trd_kernel_prepare: NULL argument");
    TU_OK(trd_kernel_prepare(k, host, &p));
    void *ptr = NULL;
    int32_t n = 0;
    void *const params[] = {&ptr, &ptr, &ptr, &n};
    trd_native_launch_t l = {.struct_size = sizeof l, .grid = {1, 1, 1}, .num_params = 3, .params = params};
    TU_FAILS(trd_prepared_launch(p, &l), TRD_ERR_INVALID_ARGUMENT,
             "kernel 'add_kernel' takes 4 parameters (x:*fp32,y:*fp32,out:*fp32,n:i32), the launch passes 3");
    l.num_params = 4;
    l.params = NULL;
    TU_FAILS(trd_prepared_launch(p, &l), TRD_ERR_INVALID_ARGUMENT, "and no params array");
    l.params = params;
    l.flags = 2;
    TU_FAILS(trd_prepared_launch(p, &l), TRD_ERR_INVALID_ARGUMENT, "flags is 0x2; it is reserved (0)");
    l.flags = 0;
    l.grid[2] = 0x80000000u;
    TU_FAILS(trd_prepared_launch(p, &l), TRD_ERR_INVALID_ARGUMENT, "programs along z, more than 2^31-1");
    l.grid[2] = 1;
    l.struct_size = 8;
    TU_FAILS(trd_prepared_launch(p, &l), TRD_ERR_VERSION, "trd_native_launch_t");
    l.struct_size = sizeof l;
    trd_stream_t *s;
    TU_OK(trd_stream_create(tdb, &s));
    l.stream = s;
    TU_FAILS(trd_prepared_launch(p, &l), TRD_ERR_INVALID_ARGUMENT, "prepared for host:0, the stream is on tda:1");
    TU_FAILS(trd_device_memset(host, &n, 0, 4, s), TRD_ERR_INVALID_ARGUMENT, "the stream is on tda:1, not host:0");
    trd_stream_destroy(s);
    l.stream = NULL;
    l.grid[0] = 0; /* an empty grid: nothing runs (the NULL pointers are never read) */
    TU_OK(trd_prepared_launch(p, &l));
    TU_FAILS(trd_device_memcpy(host, &n, &n, 4, 0, NULL), TRD_ERR_INVALID_ARGUMENT, "kind 0 is not a trd_copy_kind");
    TU_FAILS(trd_device_memset(host, NULL, 0, 4, NULL), TRD_ERR_INVALID_ARGUMENT, "dst is NULL (4 bytes on host:0)");
    TU_OK(trd_device_memset(host, NULL, 0, 0, NULL));
    trd_prepared_destroy(p);
    trd_kernel_destroy(k);
}
END_TEST

/* The cuda double's answer to whether its streams are being captured. */
static int32_t *capture_switch(void)
{
    return &tdd_get("td_cuda")->capturing;
}

START_TEST(capturing_and_tensor_maps)
{
    int32_t *td_capturing = capture_switch();
    trd_device_t *cuda;
    TU_OK(trd_runtime_device_find(rt, "cuda:0", &cuda));
    int token;
    trd_stream_t *s, *hs;
    TU_OK(trd_stream_wrap(cuda, &token, &s));
    int32_t c = -1;
    *td_capturing = 1;
    TU_OK(trd_stream_capturing(s, &c));
    ck_assert_int_eq(c, 1);
    *td_capturing = 0;
    TU_OK(trd_stream_capturing(s, &c));
    ck_assert_int_eq(c, 0);
    TU_OK(trd_stream_create(host, &hs)); /* the host driver's streams are never captured */
    c = -1;
    TU_OK(trd_stream_capturing(hs, &c));
    ck_assert_int_eq(c, 0);
    trd_stream_destroy(hs);
    trd_stream_destroy(s);
    /* neither the host nor the test driver encodes tensor maps */
    trd_tensor_map_desc_t d = {.struct_size = sizeof d, .rank = 1, .label = "kernel 'k' argument 0 'a_desc'"};
    unsigned char map[TRD_TENSOR_MAP_BYTES];
    TU_FAILS(trd_device_tensor_map_encode(host, &d, map), TRD_ERR_UNSUPPORTED,
             "kernel 'k' argument 0 'a_desc': host:0's driver 'host' cannot encode tensor maps (TMA)");
    d.struct_size = 8;
    TU_FAILS(trd_device_tensor_map_encode(cuda, &d, map), TRD_ERR_VERSION, "trd_tensor_map_desc_t");
}
END_TEST

static char logged[4096];

static void on_log(void *user, int32_t level, const char *message)
{
    (void)user;
    (void)level;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "%s\n", message);
}

/* A tuner's first launch while the stream is being captured (TRIDENT_1.5): variant 0, unbenchmarked, a warning
 * once, nothing kept, so that the first launch outside a capture benchmarks. */
START_TEST(tuner_while_capturing)
{
    int32_t *td_capturing = capture_switch();
    trd_device_t *cuda;
    TU_OK(trd_runtime_device_find(rt, "cuda:0", &cuda));
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_fixture("cuda", "add_fp32")};
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_kernel_t *two[] = {k, k};
    trd_tuner_desc_t td_desc = {.struct_size = sizeof td_desc, .flags = TRD_TUNER_MEMORY_ONLY, .variants = two,
                                .num_variants = 2};
    trd_tuner_t *tuner;
    TU_OK(trd_tuner_create(&td_desc, &tuner));
    int token;
    trd_stream_t *s;
    TU_OK(trd_stream_wrap(cuda, &token, &s));
    void *x = (void *)(uintptr_t)0x1000;
    trd_arg_t a[] = {trd_arg_ptr(x), trd_arg_ptr(x), trd_arg_ptr(x), trd_arg_int(16)};
    trd_launch_t kl = {.struct_size = sizeof kl, .grid = {1, 1, 1}, .num_args = 4, .args = a, .stream = s};
    trd_tuned_launch_t tl = {.struct_size = sizeof tl, .key = "captured", .key_size = 8, .launch = &kl};
    logged[0] = '\0';
    TU_OK(trd_log_set_level(TRD_LOG_INFO));
    TU_OK(trd_log_set_callback(on_log, NULL));
    *td_capturing = 1;
    uint32_t v = 9;
    TU_OK(trd_tuner_launch(tuner, &tl, &v));
    ck_assert_uint_eq(v, 0);
    v = 9;
    TU_OK(trd_tuner_launch(tuner, &tl, &v));
    ck_assert_uint_eq(v, 0);
    *td_capturing = 0;
    TU_OK(trd_tuner_launch(tuner, &tl, &v));
    trd_log_set_callback(NULL, NULL);
    trd_log_set_level(TRD_LOG_WARN);
    const char *w = strstr(logged, "being captured");
    ck_assert_msg(w && !strstr(w + 1, "being captured"), "one warning expected: %s", logged);
    ck_assert_msg(!strstr(logged, "chosen by benchmark") || strstr(logged, "chosen by benchmark") > w, "%s", logged);
    ck_assert_msg(strstr(logged, "chosen by benchmark") != NULL, "%s", logged);
    trd_stream_destroy(s);
    trd_tuner_destroy(tuner);
    trd_kernel_destroy(k);
}
END_TEST

/* An event on the device's default stream (the host's timing of NULL-stream launches: test_xla's
 * host_events_without_a_stream); a NULL event is refused. */
START_TEST(event_on_default_stream)
{
    trd_event_t *e;
    TU_OK(trd_event_create(host, &e));
    TU_OK(trd_event_record(e, NULL));
    TU_OK(trd_event_synchronize(e));
    trd_event_destroy(e);
    TU_FAILS(trd_event_record(NULL, NULL), TRD_ERR_INVALID_ARGUMENT, "event is NULL");
}
END_TEST

START_TEST(launch_path_takes_no_lock_and_allocates_nothing)
{
#ifdef SANITIZED
    tu_skip("counting allocations", "the sanitizers' runtimes own malloc and pthread_mutex_lock");
    return;
#else
    /* the counter counts (called through pointers the compiler cannot drop); valgrind replaces malloc itself */
    void *(*volatile alloc)(size_t) = malloc;
    void (*volatile release)(void *) = free;
    allocs = 0;
    counting = 1;
    release(alloc(16));
    counting = 0;
    if (allocs != 2) {
        tu_skip("counting allocations", "malloc is not interposable here (valgrind replaces it)");
        return;
    }
    /* a test driver's device, whose launch records without locks: what is counted is libtrident's */
    trd_device_t *tdb;
    TU_OK(trd_runtime_device_find(rt, "tda:1", &tdb));
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_fixture("cuda", "add_fp32")};
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_prepared_t *p;
    TU_OK(trd_kernel_prepare(k, tdb, &p));
    trd_stream_t *s;
    int token;
    TU_OK(trd_stream_wrap(tdb, &token, &s));
    void *x = (void *)(uintptr_t)0x1000, *y = (void *)(uintptr_t)0x2000, *o = (void *)(uintptr_t)0x3000;
    int32_t n = 1024;
    void *const params[] = {&x, &y, &o, &n};
    trd_native_launch_t l = {.struct_size = sizeof l, .grid = {2, 1, 1}, .num_params = 4, .params = params,
                             .native_stream = &token};
    trd_arg_t a[] = {trd_arg_ptr(x), trd_arg_ptr(y), trd_arg_ptr(o), trd_arg_int(n)};
    trd_launch_t kl = {.struct_size = sizeof kl, .grid = {2, 1, 1}, .num_args = 4, .args = a, .device = tdb,
                       .native_stream = &token};
    TU_OK(trd_prepared_launch(p, &l)); /* warm: the device is open */
    TU_OK(trd_kernel_launch(k, &kl));
    /* a tuner's launch of a known key (TRIDENT_1.5) */
    trd_kernel_t *two[] = {k, k};
    trd_tuner_desc_t td_desc = {.struct_size = sizeof td_desc, .flags = TRD_TUNER_MEMORY_ONLY, .variants = two,
                                .num_variants = 2};
    trd_tuner_t *tuner;
    TU_OK(trd_tuner_create(&td_desc, &tuner));
    trd_tuned_launch_t tl = {.struct_size = sizeof tl, .key = "k", .key_size = 1, .launch = &kl};
    TU_OK(trd_tuner_launch(tuner, &tl, NULL)); /* the first chooses */
    allocs = locks = 0;
    void *dev_mem = (void *)&token;
    counting = 1;
    for (int i = 0; i < 1000; i++) {
        trd_prepared_launch(p, &l);
        trd_kernel_launch(k, &kl);
        trd_tuner_launch(tuner, &tl, NULL);
        trd_device_memset(tdb, dev_mem, 0, sizeof token, s);
        trd_device_memcpy(tdb, dev_mem, dev_mem, sizeof token, TRD_COPY_DEVICE_TO_DEVICE, s);
        int32_t cap;
        trd_stream_capturing(s, &cap);
    }
    counting = 0;
    ck_assert_msg(allocs == 0 && locks == 0, "%lu allocations and %lu mutex locks in 1000 launch rounds", allocs, locks);
    struct tdd_state *rec = tdd_get("td_a");
    ck_assert_ptr_eq(rec->native, &token);
    ck_assert_uint_eq(rec->grid[0], 2);
    ck_assert_mem_eq(rec->bytes[3], &n, 4);
    ck_assert_mem_eq(rec->bytes[2], &o, sizeof o);
    trd_stream_destroy(s);
    trd_tuner_destroy(tuner);
    trd_prepared_destroy(p);
    trd_kernel_destroy(k);
    /* the host: its driver runs NULL-stream launches on its worker pool (whose lock is the driver's) */
    k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    TU_OK(trd_kernel_prepare(k, host, &p));
    float hx[64], hy[64], ho[64];
    tu_fill_f32(hx, 64, 3);
    tu_fill_f32(hy, 64, 4);
    void *px = hx, *py = hy, *po = ho;
    n = 64;
    void *const hparams[] = {&px, &py, &po, &n};
    trd_native_launch_t hl = {.struct_size = sizeof hl, .grid = {1, 1, 1}, .num_params = 4, .params = hparams};
    TU_OK(trd_prepared_launch(p, &hl));
    allocs = 0;
    counting = 1;
    for (int i = 0; i < 100; i++)
        trd_prepared_launch(p, &hl);
    counting = 0;
    ck_assert_msg(allocs == 0, "%lu allocations in 100 host launches", allocs);
    for (int i = 0; i < 64; i++)
        ck_assert(ho[i] == hx[i] + hy[i]);
    trd_prepared_destroy(p);
    trd_kernel_destroy(k);
#endif
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("prepared");
    TCase *t = tcase_create("prepared");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, add_from_native_pointers);
    tcase_add_test(t, param_info);
    tcase_add_test(t, scratch_sizes_checked);
    tcase_add_test(t, kernel_scratch_without_a_device);
    tcase_add_test(t, native_description);
    tcase_add_test(t, bad_launches_refused);
    tcase_add_test(t, capturing_and_tensor_maps);
    tcase_add_test(t, event_on_default_stream);
    tcase_add_test(t, tuner_while_capturing);
    tcase_add_test(t, launch_path_takes_no_lock_and_allocates_nothing);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
