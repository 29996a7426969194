/* SPDX-License-Identifier: Apache-2.0 */
/* test_host.c: the host CPU driver runs real kernels (examples/host/,
 * native code in Triton's programming model) on random inputs; every output
 * element is checked against C. Grids from 1 to 10^5 programs, 2-D and 3-D
 * grids, every scalar type, scratch, streams and events, several threads;
 * objects destroyed while work that uses them is queued, failures of queued
 * work, and where kernel images are written before dlopen. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testutil.h"

/* libtrident's call to memfd_create lands here (the executable's definition
 * comes first in symbol lookup): a test counts the calls, or makes them fail
 * as a kernel without memfd_create (or a sandbox forbidding it) does. */
static int memfd_fails;
static unsigned memfd_calls;

__attribute__((visibility("default"))) int memfd_create(const char *name, unsigned int flags)
{
    memfd_calls++;
    if (memfd_fails) {
        errno = ENOSYS;
        return -1;
    }
    return (int)syscall(SYS_memfd_create, name, flags);
}

static trd_runtime_t *rt;
static trd_device_t *host;

static void setup(void)
{
    rt = tu_runtime(NULL, NULL);
    TU_OK(trd_runtime_device_find(rt, "host:0", &host));
}

static void teardown(void)
{
    trd_runtime_destroy(rt);
}

static trd_kernel_t *host_kernel(const char *name, const char *sig, const char *metadata)
{
    return tu_host_kernel_create(rt, name, sig, metadata);
}

static trd_buffer_t *upload(const void *data, size_t bytes)
{
    trd_buffer_t *b;
    TU_OK(trd_buffer_alloc(host, bytes, &b));
    TU_OK(trd_buffer_write(b, 0, data, bytes, NULL));
    return b;
}

START_TEST(vector_add_grids)
{
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    /* grids of 1 .. 4096 programs of 1024 elements (program_ids goes to 10^5 programs) */
    const long sizes[] = {1, 1000, 1024, 1025, 77777, 1 << 20, 1 << 22};
    for (size_t c = 0; c < TU_LEN(sizes); c++) {
        long n = sizes[c];
        size_t bytes = (size_t)n * 4;
        float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
        tu_fill_f32(x, (size_t)n, 1 + c);
        tu_fill_f32(y, (size_t)n, 100 + c);
        for (long i = 0; i < n; i++)
            out[i] = NAN; /* poison */
        trd_buffer_t *bx = upload(x, bytes), *by = upload(y, bytes), *bo = upload(out, bytes);
        trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(n)};
        uint32_t programs = (uint32_t)((n + 1023) / 1024);
        trd_launch_t l = {.struct_size = sizeof l, .grid = {programs, 1, 1}, .num_args = 4, .args = a, .device = host};
        TU_OK(trd_kernel_launch(k, &l));
        TU_OK(trd_buffer_read(bo, 0, out, bytes, NULL));
        for (long i = 0; i < n; i++)
            ck_assert_msg(out[i] == x[i] + y[i], "n=%ld: out[%ld] = %g, expected %g", n, i, out[i], x[i] + y[i]);
        trd_buffer_free(bx);
        trd_buffer_free(by);
        trd_buffer_free(bo);
        free(x);
        free(y);
        free(out);
    }
    trd_kernel_destroy(k);
}
END_TEST

START_TEST(transpose_2d)
{
    trd_kernel_t *k = host_kernel("transpose_kernel", "in:*fp32,out:*fp32,M:i32,N:i32,alpha:fp32,TILE:constexpr", NULL);
    const int shapes[][2] = {{1, 1}, {33, 65}, {300, 17}, {512, 512}};
    for (size_t c = 0; c < TU_LEN(shapes); c++) {
        int m = shapes[c][0], n = shapes[c][1];
        size_t bytes = (size_t)m * n * 4;
        float *in = malloc(bytes), *out = malloc(bytes);
        tu_fill_f32(in, (size_t)m * n, 7 + c);
        for (int i = 0; i < m * n; i++)
            out[i] = NAN;
        trd_buffer_t *bi = upload(in, bytes), *bo = upload(out, bytes);
        trd_arg_t a[5] = {trd_arg_buffer(bi), trd_arg_buffer(bo), trd_arg_int(m), trd_arg_int(n), trd_arg_float(-1.5)};
        trd_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)(n + 31) / 32, (uint32_t)(m + 31) / 32, 1},
                          .num_args = 5, .args = a, .device = host};
        TU_OK(trd_kernel_launch(k, &l));
        TU_OK(trd_buffer_read(bo, 0, out, bytes, NULL));
        for (int r = 0; r < m; r++)
            for (int col = 0; col < n; col++)
                ck_assert_msg(out[(size_t)col * m + r] == -1.5f * in[(size_t)r * n + col], "%dx%d: out[%d][%d]", m, n, col, r);
        trd_buffer_free(bi);
        trd_buffer_free(bo);
        free(in);
        free(out);
    }
    trd_kernel_destroy(k);
}
END_TEST

START_TEST(program_ids)
{
    trd_kernel_t *k = host_kernel("pid_grid_kernel", "out:*i32,hits:*i32", NULL);
    const uint32_t grids[][3] = {{1, 1, 1}, {7, 1, 1}, {5, 3, 2}, {1, 1, 9}, {100000, 1, 1}, {31, 17, 13}};
    for (size_t c = 0; c < TU_LEN(grids); c++) {
        const uint32_t *g = grids[c];
        uint64_t total = (uint64_t)g[0] * g[1] * g[2];
        int32_t *out = malloc(total * 6 * 4), *hits = calloc(total, 4);
        for (uint64_t i = 0; i < total * 6; i++)
            out[i] = -1;
        trd_buffer_t *bo = upload(out, total * 24), *bh = upload(hits, total * 4);
        trd_arg_t a[2] = {trd_arg_buffer(bo), trd_arg_buffer(bh)};
        trd_launch_t l = {.struct_size = sizeof l, .grid = {g[0], g[1], g[2]}, .num_args = 2, .args = a, .device = host};
        TU_OK(trd_kernel_launch(k, &l));
        TU_OK(trd_buffer_read(bo, 0, out, total * 24, NULL));
        TU_OK(trd_buffer_read(bh, 0, hits, total * 4, NULL));
        for (uint32_t z = 0; z < g[2]; z++)
            for (uint32_t y = 0; y < g[1]; y++)
                for (uint32_t x = 0; x < g[0]; x++) {
                    uint64_t p = x + (uint64_t)g[0] * (y + (uint64_t)g[1] * z);
                    ck_assert_msg(hits[p] == 1, "program (%u,%u,%u) ran %d times", x, y, z, hits[p]);
                    ck_assert_int_eq(out[6 * p + 0], (int32_t)x);
                    ck_assert_int_eq(out[6 * p + 1], (int32_t)y);
                    ck_assert_int_eq(out[6 * p + 2], (int32_t)z);
                    for (int d = 0; d < 3; d++)
                        ck_assert_int_eq(out[6 * p + 3 + (uint64_t)d], (int32_t)g[d]);
                }
        trd_buffer_free(bo);
        trd_buffer_free(bh);
        free(out);
        free(hits);
    }
    trd_kernel_destroy(k);
}
END_TEST

START_TEST(scalar_types)
{
    trd_kernel_t *k = host_kernel("scalars_kernel", "out:*fp64,a:i8,b:i16,c:i32,d:i64,e:u32,f:u64,g:fp16,h:bf16,i:fp32,"
                                                    "j:fp64,C:constexpr,l:i1", NULL);
    double out[11];
    for (int i = 0; i < 11; i++)
        out[i] = NAN;
    trd_buffer_t *bo = upload(out, sizeof out);
    uint64_t seed = 99;
    for (int round = 0; round < 20; round++) {
        int8_t a = (int8_t)(tu_rand(&seed) % 256 - 128);
        int16_t b = (int16_t)(tu_rand(&seed) % 65536 - 32768);
        int32_t c = (int32_t)(tu_rand(&seed) % 2000000) - 1000000;
        int64_t d = (int64_t)(tu_rand(&seed) >> 12) * (round % 2 ? -1 : 1); /* 52 bits: exact as fp64 */
        uint32_t e = (uint32_t)tu_rand(&seed);
        uint64_t f = tu_rand(&seed) >> 11 << 11;                           /* exact as fp64 */
        /* k/64 with |k| < 2048 is exact in fp16, with |k| < 256 exact in bf16 */
        double fp = ((double)(tu_rand(&seed) % 4095) - 2047.0) / 64.0;
        double fb = ((double)(tu_rand(&seed) % 511) - 255.0) / 64.0;
        trd_arg_t args[12] = {trd_arg_buffer(bo), trd_arg_int(a), trd_arg_int(b), trd_arg_int(c), trd_arg_int(d),
                              trd_arg_uint(e), trd_arg_uint(f), trd_arg_float(fp), trd_arg_float(fb), trd_arg_float(fp),
                              trd_arg_float(fp / 3.0), trd_arg_int(round % 2)};
        trd_launch_t l = {.struct_size = sizeof l, .grid = {1, 1, 1}, .num_args = 12, .args = args, .device = host};
        TU_OK(trd_kernel_launch(k, &l));
        TU_OK(trd_buffer_read(bo, 0, out, sizeof out, NULL));
        const double want[11] = {a, b, c, (double)d, e, (double)f, fp, fb, (double)(float)fp, fp / 3.0, round % 2};
        for (int i = 0; i < 11; i++)
            ck_assert_msg(out[i] == want[i], "round %d scalar %d: %.17g, expected %.17g", round, i, out[i], want[i]);
    }
    trd_buffer_free(bo);
    trd_kernel_destroy(k);
}
END_TEST

START_TEST(global_scratch)
{
    /* the metadata says 16 bytes of scratch a program: every program gets its own slice */
    const char *meta = "{\"name\":\"scratch_kernel\",\"target\":{\"backend\":\"host\",\"arch\":\"\"},\"num_warps\":1,"
                       "\"global_scratch_size\":16,\"global_scratch_align\":16}";
    trd_kernel_t *k = host_kernel("scratch_kernel", "x:*fp32,out:*fp32", meta);
    const uint32_t n = 5000;
    float *x = malloc(n * 16), *out = malloc(n * 4);
    tu_fill_f32(x, n * 4, 3);
    trd_buffer_t *bx = upload(x, n * 16), *bo = upload(out, n * 4);
    trd_arg_t a[2] = {trd_arg_buffer(bx), trd_arg_buffer(bo)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {n, 1, 1}, .num_args = 2, .args = a, .device = host};
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_buffer_read(bo, 0, out, n * 4, NULL));
    for (uint32_t p = 0; p < n; p++) {
        float want = x[4 * p] + x[4 * p + 1] + x[4 * p + 2] + x[4 * p + 3];
        ck_assert_msg(out[p] == want, "program %u: %g, expected %g", p, out[p], want);
    }
    /* a caller-provided scratch is used instead */
    float *mine = calloc(n, 16);
    l.global_scratch = mine;
    TU_OK(trd_kernel_launch(k, &l));
    ck_assert(mine[4 * 17] == x[4 * 17]);
    free(mine);
    trd_buffer_free(bx);
    trd_buffer_free(bo);
    free(x);
    free(out);
    trd_kernel_destroy(k);
}
END_TEST

START_TEST(streams_and_events)
{
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    const int n = 1 << 16;
    float *x = malloc(n * 4), *y = malloc(n * 4), *out = malloc(n * 4);
    tu_fill_f32(x, n, 11);
    tu_fill_f32(y, n, 12);
    trd_stream_t *s;
    TU_OK(trd_stream_create(host, &s));
    trd_buffer_t *bx, *by, *bo;
    TU_OK(trd_buffer_alloc(host, n * 4, &bx));
    TU_OK(trd_buffer_alloc(host, n * 4, &by));
    TU_OK(trd_buffer_alloc(host, n * 4, &bo));
    trd_event_t *e0, *e1;
    TU_OK(trd_event_create(host, &e0));
    TU_OK(trd_event_create(host, &e1));
    /* everything queued in order on one stream: writes, a fill, launches, a read */
    TU_OK(trd_buffer_write(bx, 0, x, n * 4, s));
    TU_OK(trd_buffer_write(by, 0, y, n * 4, s));
    TU_OK(trd_buffer_fill(bo, 0, n * 4, 0xff, s));
    TU_OK(trd_event_record(e0, s));
    trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {n / 1024, 1, 1}, .num_args = 4, .args = a, .stream = s};
    for (int i = 0; i < 100; i++) /* more than the ring holds: launches wait for room */
        TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_event_record(e1, s));
    TU_OK(trd_buffer_read(bo, 0, out, n * 4, s));
    TU_OK(trd_event_synchronize(e1));
    double ms = -1;
    TU_OK(trd_event_elapsed(e0, e1, &ms));
    ck_assert(ms >= 0.0);
    TU_OK(trd_stream_synchronize(s));
    for (int i = 0; i < n; i++)
        ck_assert(out[i] == x[i] + y[i]);
    void *native;
    TU_OK(trd_stream_native(s, &native));
    ck_assert_ptr_nonnull(native);
    trd_device_t *sd;
    TU_OK(trd_stream_device(s, &sd));
    ck_assert_ptr_eq(sd, host);
    TU_FAILS(trd_stream_wrap(host, native, &s), TRD_ERR_UNSUPPORTED, "no foreign one to wrap");
    trd_event_destroy(e0);
    trd_event_destroy(e1);
    trd_stream_destroy(s);
    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    free(x);
    free(y);
    free(out);
    trd_kernel_destroy(k);
}
END_TEST

struct worker {
    trd_kernel_t *k;
    int id;
    int ok;
};

static void *launch_many(void *arg)
{
    struct worker *w = arg;
    const int n = 3000 + 1000 * w->id;
    float *x = malloc(n * 4), *y = malloc(n * 4), *out = malloc(n * 4);
    tu_fill_f32(x, n, 40 + w->id);
    tu_fill_f32(y, n, 80 + w->id);
    trd_stream_t *s;
    trd_buffer_t *bx, *by, *bo;
    w->ok = trd_stream_create(host, &s) == TRD_OK && trd_buffer_alloc(host, n * 4, &bx) == TRD_OK &&
            trd_buffer_alloc(host, n * 4, &by) == TRD_OK && trd_buffer_alloc(host, n * 4, &bo) == TRD_OK;
    if (!w->ok)
        return NULL;
    trd_buffer_write(bx, 0, x, n * 4, NULL);
    trd_buffer_write(by, 0, y, n * 4, NULL);
    trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(n)};
    for (int r = 0; r < 50 && w->ok; r++) {
        trd_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)(n + 1023) / 1024, 1, 1}, .num_args = 4, .args = a};
        if (r % 2)
            l.stream = s;
        else
            l.device = host;
        w->ok = trd_kernel_launch(w->k, &l) == TRD_OK;
    }
    trd_stream_synchronize(s);
    trd_buffer_read(bo, 0, out, n * 4, NULL);
    for (int i = 0; i < n && w->ok; i++)
        w->ok = out[i] == x[i] + y[i];
    trd_stream_destroy(s);
    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    free(x);
    free(y);
    free(out);
    return NULL;
}

START_TEST(threads)
{
    /* one kernel, loaded lazily by whichever thread comes first, launched from 6 */
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    pthread_t t[6];
    struct worker w[6];
    for (int i = 0; i < 6; i++) {
        w[i] = (struct worker){.k = k, .id = i};
        pthread_create(&t[i], NULL, launch_many, &w[i]);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(w[i].ok, "thread %d", i);
    }
    trd_kernel_destroy(k);
}
END_TEST

/* TRD_HOST_KERNEL_SIGNATURE: a host image declares its entry's signature; a kernel made from the image alone
 * takes it, one given other parameters (a Triton kernel's twin with its pointer and scalar swapped: the README's
 * add_kernel once was) is refused naming both, and integers compare signlessly as in Triton IR. */
START_TEST(declared_signature)
{
    trd_kernel_t *k = host_kernel("add_kernel", NULL, NULL);
    trd_kernel_info_t info = {.struct_size = sizeof info};
    TU_OK(trd_kernel_get_info(k, &info));
    ck_assert_str_eq(info.signature, "x:*fp32,y:*fp32,out:*fp32,n:i32");
    trd_kernel_destroy(k);
    /* other names, a constexpr entry: the same launch parameters */
    trd_kernel_destroy(host_kernel("add_kernel", "x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n:i32,BLOCK:constexpr", NULL));
    /* Triton's IR spells u32/u64 as i32/i64 */
    trd_kernel_destroy(host_kernel("scalars_kernel", "*fp64,i8,i16,i32,i64,i32,i64,fp16,bf16,fp32,fp64,i1", NULL));
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_host_kernel("add_kernel"), .name = "add_kernel",
                           .signature = "x_ptr:*fp32,y_ptr:*fp32,n:i32,out_ptr:*fp32"};
    TU_FAILS(trd_kernel_create(rt, &d, &k), TRD_ERR_INVALID_ARGUMENT,
             "declares add_kernel(x:*fp32,y:*fp32,out:*fp32,n:i32) (TRD_HOST_KERNEL_SIGNATURE), the kernel's signature "
             "is (x_ptr:*fp32,y_ptr:*fp32,n:i32,out_ptr:*fp32)");
    d.signature = "*fp32,*fp32,*fp32";
    TU_FAILS(trd_kernel_create(rt, &d, &k), TRD_ERR_INVALID_ARGUMENT, "the parameters differ");
    d.signature = "*fp32,*fp32,*fp16,i32";
    TU_FAILS(trd_kernel_create(rt, &d, &k), TRD_ERR_INVALID_ARGUMENT, "the parameters differ");
}
END_TEST

START_TEST(bad_launches)
{
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    float buf[4];
    trd_arg_t a[4] = {trd_arg_ptr(buf), trd_arg_ptr(buf), trd_arg_ptr(buf), trd_arg_int(4)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {1, 1, 1}, .num_args = 3, .args = a, .device = host};
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_INVALID_ARGUMENT, "kernel 'add_kernel' takes 4 arguments");
    l.num_args = 4;
    a[3] = trd_arg_float(4.0);
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_INVALID_ARGUMENT, "argument 3 'n' (i32): expects an integer, got a float");
    a[3] = trd_arg_int(4);
    l.struct_size = 8;
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_VERSION, "trd_launch_t.struct_size is 8");
    l.struct_size = sizeof l;
    l.device = NULL;
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_INVALID_ARGUMENT, "names neither a stream nor a device");
    /* a kernel of another runtime */
    trd_runtime_t *rt2 = tu_runtime(NULL, NULL);
    trd_device_t *h2;
    TU_OK(trd_runtime_device_find(rt2, "host:0", &h2));
    l.device = h2;
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_INVALID_ARGUMENT, "belong to different runtimes");
    trd_runtime_destroy(rt2);
    /* images that are not host kernels, or lack the symbol */
    trd_kernel_t *bad;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_host_kernel("add_kernel"), .name = "no_such_kernel",
                           .signature = "*fp32"};
    TU_OK(trd_kernel_create(rt, &d, &bad));
    TU_FAILS(trd_kernel_load(bad, host, NULL), TRD_ERR_NOT_FOUND, "exports no function 'no_such_kernel'");
    trd_kernel_destroy(bad);
    d.signature = NULL; /* the image declares no signature for this entry */
    TU_FAILS(trd_kernel_create(rt, &d, &bad), TRD_ERR_INVALID_ARGUMENT, "its signature is unknown");
    d.path = NULL;
    d.data = "not an image at all";
    d.size = 19;
    d.signature = "*fp32";
    TU_FAILS(trd_kernel_create(rt, &d, &bad), TRD_ERR_FORMAT, "not a kernel image trident knows");
    /* a truncated shared object is refused at load */
    char *text;
    size_t len;
    FILE *f = fopen(tu_host_kernel("add_kernel"), "rb");
    text = malloc(20000);
    len = fread(text, 1, 20000, f);
    fclose(f);
    d.data = text;
    d.size = len / 3;
    TU_OK(trd_kernel_create(rt, &d, &bad));
    TU_FAILS(trd_kernel_load(bad, host, NULL), TRD_ERR_FORMAT, "does not load");
    /* the failure is remembered: a second try says the same without reloading */
    TU_FAILS(trd_kernel_load(bad, host, NULL), TRD_ERR_FORMAT, "does not load");
    trd_kernel_destroy(bad);
    free(text);
    trd_kernel_destroy(k);
}
END_TEST

START_TEST(demo_bundle)
{
    /* the bundle `make` builds: four targets; the host runs its own */
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_path("%s/examples/add_kernel.trdb", tu_builddir())};
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    TU_OK(trd_kernel_get_info(k, &ki));
    ck_assert_uint_eq(ki.num_targets, 4);
    trd_load_info_t li = {.struct_size = sizeof li};
    TU_OK(trd_kernel_load(k, host, &li));
    ck_assert_int_eq(li.format, TRD_FORMAT_HOST_SO);
    trd_kernel_destroy(k);
}
END_TEST


/* Queues `count` launches of add_kernel on s (n elements each): enough work
 * that what the test does next happens while most of it is still queued. */
static void queue_adds(trd_kernel_t *k, trd_stream_t *s, trd_buffer_t *bx, trd_buffer_t *by, trd_buffer_t *bo, int n,
                       int count)
{
    trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)(n + 1023) / 1024, 1, 1}, .num_args = 4, .args = a,
                      .stream = s};
    for (int i = 0; i < count; i++)
        TU_OK(trd_kernel_launch(k, &l));
}

struct adds {
    int n;
    float *x, *y, *out;
    trd_buffer_t *bx, *by, *bo;
};

static void adds_setup(struct adds *a, int n, uint64_t seed)
{
    a->n = n;
    a->x = malloc((size_t)n * 4);
    a->y = malloc((size_t)n * 4);
    a->out = malloc((size_t)n * 4);
    tu_fill_f32(a->x, (size_t)n, seed);
    tu_fill_f32(a->y, (size_t)n, seed + 1);
    for (int i = 0; i < n; i++)
        a->out[i] = NAN;
    a->bx = upload(a->x, (size_t)n * 4);
    a->by = upload(a->y, (size_t)n * 4);
    a->bo = upload(a->out, (size_t)n * 4);
}

static void adds_check(const struct adds *a)
{
    for (int i = 0; i < a->n; i++)
        ck_assert_msg(a->out[i] == a->x[i] + a->y[i], "out[%d] = %g, expected %g", i, a->out[i], a->x[i] + a->y[i]);
}

static void adds_free(struct adds *a)
{
    trd_buffer_free(a->bx);
    trd_buffer_free(a->by);
    trd_buffer_free(a->bo);
    free(a->x);
    free(a->y);
    free(a->out);
}

/* Destroying an event whose record is still queued is allowed: the record
 * completes on a live event (it used to write freed memory). */
START_TEST(event_destroyed_while_queued)
{
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    struct adds a;
    adds_setup(&a, 1 << 18, 21);
    trd_stream_t *s;
    TU_OK(trd_stream_create(host, &s));
    for (int round = 0; round < 4; round++) {
        trd_event_t *e;
        TU_OK(trd_event_create(host, &e));
        queue_adds(k, s, a.bx, a.by, a.bo, a.n, 8);
        TU_OK(trd_event_record(e, s));
        trd_event_destroy(e);
    }
    TU_OK(trd_buffer_read(a.bo, 0, a.out, (size_t)a.n * 4, s));
    TU_OK(trd_stream_synchronize(s));
    adds_check(&a);
    trd_stream_destroy(s);
    adds_free(&a);
    trd_kernel_destroy(k);
}
END_TEST

/* Destroying a kernel whose launches are still queued is allowed: they run
 * with the kernel's code, which is unloaded after the last (it used to be
 * unloaded at once, and the stream ran unmapped code). */
START_TEST(kernel_destroyed_while_queued)
{
    struct adds a;
    adds_setup(&a, 1 << 18, 31);
    trd_stream_t *s;
    TU_OK(trd_stream_create(host, &s));
    for (int round = 0; round < 4; round++) {
        trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
        queue_adds(k, s, a.bx, a.by, a.bo, a.n, 16);
        trd_kernel_destroy(k);
    }
    TU_OK(trd_buffer_read(a.bo, 0, a.out, (size_t)a.n * 4, s));
    TU_OK(trd_stream_synchronize(s));
    adds_check(&a);
    trd_stream_destroy(s);
    adds_free(&a);
}
END_TEST

/* Freeing a buffer that queued work still reads waits for that work; so does
 * destroying the stream, and the read queued on it lands first. */
START_TEST(buffer_and_stream_destroyed_while_queued)
{
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    struct adds a;
    adds_setup(&a, 1 << 18, 41); /* 1 MiB buffers: malloc maps them, free unmaps them */
    trd_stream_t *s;
    TU_OK(trd_stream_create(host, &s));
    queue_adds(k, s, a.bx, a.by, a.bo, a.n, 16);
    TU_OK(trd_buffer_read(a.bo, 0, a.out, (size_t)a.n * 4, s));
    trd_buffer_free(a.bx);
    trd_buffer_free(a.by);
    a.bx = a.by = NULL;
    trd_stream_destroy(s);
    adds_check(&a);
    adds_free(&a);
    trd_kernel_destroy(k);
}
END_TEST

/* A launch whose scratch cannot be had fails when the stream runs it: the
 * stream skips what follows until trd_stream_synchronize reports it, naming
 * the kernel; events recorded after it report it too; then the stream runs
 * again. Without a stream the launch itself fails. (The failure used to be
 * dropped: success was reported and nothing ran.) */
START_TEST(failed_launch_reported)
{
    /* 1 GiB of scratch a program, 2^20 programs: more than the machine's memory */
    const char *meta = "{\"name\":\"scratch_kernel\",\"target\":{\"backend\":\"host\",\"arch\":\"\"},\"num_warps\":1,"
                       "\"global_scratch_size\":1073741824,\"global_scratch_align\":16}";
    trd_kernel_t *k = host_kernel("scratch_kernel", "x:*fp32,out:*fp32", meta);
    float x[4] = {1, 2, 3, 4}, out[4] = {5, 6, 7, 8}, back[4];
    trd_buffer_t *bx = upload(x, sizeof x), *bo = upload(out, sizeof out);
    trd_stream_t *s;
    trd_event_t *e;
    TU_OK(trd_stream_create(host, &s));
    TU_OK(trd_event_create(host, &e));
    trd_arg_t a[2] = {trd_arg_buffer(bx), trd_arg_buffer(bo)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {1u << 20, 1, 1}, .num_args = 2, .args = a, .stream = s};
    TU_OK(trd_kernel_launch(k, &l)); /* queued: it fails when the stream runs it */
    TU_OK(trd_buffer_fill(bo, 0, sizeof out, 0, s));
    TU_OK(trd_event_record(e, s));
    TU_FAILS(trd_event_synchronize(e), TRD_ERR_NO_MEMORY, "a queued launch of kernel 'scratch_kernel' on host:0 failed");
    TU_FAILS(trd_stream_synchronize(s), TRD_ERR_NO_MEMORY,
             "synchronizing a stream of host:0: a queued launch of kernel 'scratch_kernel' on host:0 failed: cannot "
             "allocate 1125899906842624 bytes of scratch (1048576 programs x 1073741824 bytes)");
    TU_OK(trd_buffer_read(bo, 0, back, sizeof back, NULL));
    ck_assert_msg(memcmp(back, out, sizeof out) == 0, "the fill queued after the failed launch ran");
    /* reported once: the stream runs what is queued next */
    TU_OK(trd_stream_synchronize(s));
    TU_OK(trd_buffer_fill(bo, 0, sizeof out, 0, s));
    TU_OK(trd_event_record(e, s));
    TU_OK(trd_event_synchronize(e));
    TU_OK(trd_stream_synchronize(s));
    TU_OK(trd_buffer_read(bo, 0, back, sizeof back, NULL));
    for (int i = 0; i < 4; i++)
        ck_assert(back[i] == 0.0f);
    /* without a stream the launch runs at once, and fails there */
    l.stream = NULL;
    l.device = host;
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_NO_MEMORY, "launching kernel 'scratch_kernel' on host:0: cannot allocate");
    /* a grid whose scratch does not fit 64 bits, a grid whose programs do not */
    l.grid[0] = 1u << 30;
    l.grid[1] = 1u << 4;
    l.stream = s;
    /* the core computes every launch's scratch once, overflow-checked, and refuses it before the driver */
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_LIMIT, "grid 1073741824x16x1 x 1 CTAs x 1073741824 bytes of global "
                                                      "scratch a program is more than 2^64 bytes");
    TU_OK(trd_stream_synchronize(s));
    /* (trd_kernel_launch refuses such a grid before it reaches the driver) */
    l.grid[0] = l.grid[1] = l.grid[2] = 1u << 30;
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_INVALID_ARGUMENT,
             "grid 1073741824x1073741824x1073741824 has more than 2^63-1 programs");
    trd_event_destroy(e);
    trd_stream_destroy(s);
    trd_buffer_free(bx);
    trd_buffer_free(bo);
    trd_kernel_destroy(k);
}
END_TEST

/* ------------------------------------------------------------------ faults */

#define GATHER_SIG "x:*fp32,idx:*i64,out:*fp32,n:i32"
#define GATHER_BLOCK 256 /* examples/host/gather_kernel.c */

/* gather_kernel over n elements with x = i + 0.5 and idx a random map into x, except the indices at `bad` (count
 * nbad), which point 2^40 elements past x; returns the launch's status (the synchronize's with a stream), and
 * when it succeeded the number of output elements that differ from x[idx[i]] in *wrong. No Check calls: the
 * child processes below use it too. */
static trd_status_t gather(trd_kernel_t *k, trd_device_t *dev, trd_stream_t *s, int n, const int *bad, int nbad,
                           int *wrong)
{
    float *x = malloc(n * 4), *out = malloc(n * 4);
    int64_t *idx = malloc(n * 8);
    uint64_t seed = 99;
    for (int i = 0; i < n; i++) {
        x[i] = (float)i + 0.5f;
        idx[i] = (int64_t)(tu_rand(&seed) % (uint64_t)n);
    }
    for (int i = 0; i < nbad; i++)
        idx[bad[i]] = (int64_t)1 << 40;
    trd_buffer_t *bx = NULL, *bi = NULL, *bo = NULL;
    trd_status_t st;
    if ((st = trd_buffer_alloc(dev, n * 4, &bx)) == TRD_OK && (st = trd_buffer_alloc(dev, n * 8, &bi)) == TRD_OK &&
        (st = trd_buffer_alloc(dev, n * 4, &bo)) == TRD_OK && (st = trd_buffer_write(bx, 0, x, n * 4, NULL)) == TRD_OK &&
        (st = trd_buffer_write(bi, 0, idx, n * 8, NULL)) == TRD_OK &&
        (st = trd_buffer_fill(bo, 0, n * 4, 0, NULL)) == TRD_OK) {
        trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(bi), trd_arg_buffer(bo), trd_arg_int(n)};
        trd_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)(n + GATHER_BLOCK - 1) / GATHER_BLOCK, 1, 1},
                          .num_args = 4, .args = a, .stream = s, .device = s ? NULL : dev};
        st = trd_kernel_launch(k, &l);
        if (st == TRD_OK && s)
            st = trd_stream_synchronize(s);
        if (st == TRD_OK && (st = trd_buffer_read(bo, 0, out, n * 4, NULL)) == TRD_OK) {
            *wrong = 0;
            for (int i = 0; i < n; i++)
                *wrong += out[i] != x[idx[i]];
        }
    }
    trd_buffer_free(bx);
    trd_buffer_free(bi);
    trd_buffer_free(bo);
    free(x);
    free(idx);
    free(out);
    return st;
}

/* A kernel that reads outside its buffers fails its launch with a message naming the kernel, the program, the
 * signal and the likely cause (it used to kill the process with SIGSEGV); the worker threads keep catching faults
 * (each one's signal unblocked again) and the next launches compute every element right. */
START_TEST(faulting_kernel_fails_its_launch)
{
    trd_kernel_t *k = host_kernel("gather_kernel", GATHER_SIG, NULL);
    const int n = 64 * GATHER_BLOCK;
    int bad[] = {3 * GATHER_BLOCK + 7}, wrong = -1;
    TU_FAILS(gather(k, host, NULL, n, bad, 1, &wrong), TRD_ERR_DEVICE,
             "launching kernel 'gather_kernel' on host:0: program (3,0,0) of the 64x1x1 grid faulted (SIGSEGV");
    ck_assert_ptr_nonnull(strstr(trd_error_message(), "a buffer may be smaller than the grid"));
    /* every program faults, on every worker, many times over */
    int all[64];
    for (int i = 0; i < 64; i++)
        all[i] = i * GATHER_BLOCK;
    for (int r = 0; r < 20; r++)
        TU_FAILS(gather(k, host, NULL, n, all, 64, &wrong), TRD_ERR_DEVICE, "faulted (SIGSEGV");
    TU_OK(gather(k, host, NULL, n, NULL, 0, &wrong));
    ck_assert_int_eq(wrong, 0);
    /* queued on a stream: reported by the synchronize, once; the stream then runs what comes next */
    trd_stream_t *s;
    TU_OK(trd_stream_create(host, &s));
    TU_FAILS(gather(k, host, s, n, all, 64, &wrong), TRD_ERR_DEVICE,
             "a queued launch of kernel 'gather_kernel' on host:0 failed: program (");
    TU_OK(trd_stream_synchronize(s));
    wrong = -1;
    TU_OK(gather(k, host, s, n, NULL, 0, &wrong));
    ck_assert_int_eq(wrong, 0);
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
}
END_TEST

/* add_kernel over x, y of n floats into out (a buffer of any size), on the stream s or synchronously. */
static trd_status_t add_into(trd_kernel_t *k, trd_stream_t *s, const struct adds *a, trd_buffer_t *out, int n)
{
    trd_arg_t args[4] = {trd_arg_buffer(a->bx), trd_arg_buffer(a->by), trd_arg_buffer(out), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)(n + 1023) / 1024, 1, 1}, .num_args = 4,
                      .args = args, .stream = s, .device = s ? NULL : host};
    trd_status_t st = trd_kernel_launch(k, &l);
    return st == TRD_OK && s ? trd_stream_synchronize(s) : st;
}

/* A host add writing 4096 floats into a 16-byte buffer of trident's: the write past its end hits the guard after
 * it, and the launch fails naming the kernel, the program and the buffer (it used to overwrite the heap: a crash,
 * a glibc abort or a hang later); the process carries on and computes the next launches right. */
START_TEST(overrun_fails_naming_the_buffer)
{
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    struct adds a;
    adds_setup(&a, 4096, 61);
    trd_buffer_t *small;
    TU_OK(trd_buffer_alloc(host, 16, &small));
    trd_stream_t *s;
    TU_OK(trd_stream_create(host, &s));
    for (int r = 0; r < 10; r++) {
        TU_FAILS(add_into(k, r % 2 ? s : NULL, &a, small, a.n), TRD_ERR_DEVICE,
                 r % 2 ? "a queued launch of kernel 'add_kernel' on host:0 failed: program ("
                       : "launching kernel 'add_kernel' on host:0: program (");
        const char *m = trd_error_message();
        ck_assert_msg(strstr(m, " of the 4x1x1 grid faulted (SIGSEGV, a protected address, at 0x") &&
                          strstr(m, " bytes past the end of buffer 'out' (16 bytes at 0x") &&
                          strstr(m, "the kernel read or wrote outside its buffers"),
                      "%s", m);
    }
    for (int r = 0; r < 2; r++) {
        TU_OK(add_into(k, r ? s : NULL, &a, a.bo, a.n));
        TU_OK(trd_buffer_read(a.bo, 0, a.out, (size_t)a.n * 4, NULL));
        adds_check(&a);
    }
    trd_stream_destroy(s);
    trd_buffer_free(small);
    adds_free(&a);
    trd_kernel_destroy(k);
}
END_TEST

/* A read before a buffer's start (a negative index) hits the guard before it: x holds whole pages, so it starts
 * at a page's start. */
START_TEST(underrun_fails_naming_the_buffer)
{
    trd_kernel_t *k = host_kernel("gather_kernel", GATHER_SIG, NULL);
    const int n = 1024;
    int64_t idx[1024];
    uint64_t seed = 5;
    for (int i = 0; i < n; i++)
        idx[i] = (int64_t)(tu_rand(&seed) % n);
    idx[700] = -3;
    trd_buffer_t *bx, *bi, *bo;
    TU_OK(trd_buffer_alloc(host, n * 4, &bx));
    TU_OK(trd_buffer_fill(bx, 0, n * 4, 0x3f, NULL));
    TU_OK(trd_buffer_alloc(host, n * 8, &bi));
    TU_OK(trd_buffer_write(bi, 0, idx, n * 8, NULL));
    TU_OK(trd_buffer_alloc(host, n * 4, &bo));
    trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(bi), trd_arg_buffer(bo), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {n / GATHER_BLOCK, 1, 1}, .num_args = 4, .args = a,
                      .device = host};
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_DEVICE, "launching kernel 'gather_kernel' on host:0: program (2,0,0)");
    ck_assert_msg(strstr(trd_error_message(), ", 12 bytes before the start of buffer 'x' (4096 bytes at 0x"), "%s",
                  trd_error_message());
    trd_buffer_free(bx);
    trd_buffer_free(bi);
    trd_buffer_free(bo);
    trd_kernel_destroy(k);
}
END_TEST

/* Whether the memory before addr and the memory from end (rounded up to 16 bytes) on are guard pages. */
static int between_guards(const void *addr, uint64_t size)
{
    uintptr_t start = (uintptr_t)addr, end = (start + size + 15) & ~(uintptr_t)15;
    int before = 0, after = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || strcmp(perms, "---p") != 0)
            continue;
        uintptr_t page_before = (start & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1)) - 1;
        before |= lo <= page_before && page_before < hi;
        after |= lo <= end && end < hi;
    }
    fclose(f);
    return before && after;
}

/* Buffers of any size start 16-byte aligned between guards, their end within 15 bytes of the one after;
 * [driver.host] guarded_buffers bounds how many at once (for the process's memory map count), the rest coming
 * from the heap, and they all work alike. */
START_TEST(guarded_buffers_and_their_limit)
{
    const uint64_t sizes[] = {1, 10, 16, 4096, 5000, 1 << 20};
    for (size_t i = 0; i < TU_LEN(sizes); i++) {
        trd_buffer_t *b;
        void *p;
        TU_OK(trd_buffer_alloc(host, sizes[i], &b));
        TU_OK(trd_buffer_address(b, &p));
        ck_assert_msg((uintptr_t)p % 16 == 0 && between_guards(p, sizes[i]), "%llu bytes at %p",
                      (unsigned long long)sizes[i], p);
        trd_buffer_free(b);
    }
    trd_runtime_t *limited = tu_runtime(NULL, "[driver.host]\nguarded_buffers = 2\n");
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(limited, "host:0", &dev));
    trd_buffer_t *b[3];
    void *p[3];
    for (int i = 0; i < 3; i++) {
        TU_OK(trd_buffer_alloc(dev, 4096, &b[i]));
        TU_OK(trd_buffer_address(b[i], &p[i]));
        ck_assert_int_eq(between_guards(p[i], 4096), i < 2);
    }
    trd_buffer_free(b[0]); /* a guarded one freed makes room for another */
    TU_OK(trd_buffer_alloc(dev, 4096, &b[0]));
    TU_OK(trd_buffer_address(b[0], &p[0]));
    ck_assert(between_guards(p[0], 4096));
    trd_kernel_t *k = tu_host_kernel_create(limited, "add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    float x[1024], y[1024], out[1024];
    tu_fill_f32(x, 1024, 3);
    tu_fill_f32(y, 1024, 4);
    TU_OK(trd_buffer_write(b[1], 0, x, sizeof x, NULL));
    TU_OK(trd_buffer_write(b[2], 0, y, sizeof y, NULL)); /* from the heap */
    trd_arg_t a[4] = {trd_arg_buffer(b[1]), trd_arg_buffer(b[2]), trd_arg_buffer(b[0]), trd_arg_int(1024)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {1, 1, 1}, .num_args = 4, .args = a, .device = dev};
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_buffer_read(b[0], 0, out, sizeof out, NULL));
    for (int i = 0; i < 1024; i++)
        ck_assert_msg(out[i] == x[i] + y[i], "out[%d] = %g, expected %g", i, out[i], x[i] + y[i]);
    trd_kernel_destroy(k);
    for (int i = 0; i < 3; i++)
        trd_buffer_free(b[i]);
    trd_runtime_destroy(limited);
}
END_TEST

static void add_once(trd_kernel_t *k)
{
    struct adds a;
    adds_setup(&a, 3000, 51);
    trd_arg_t args[4] = {trd_arg_buffer(a.bx), trd_arg_buffer(a.by), trd_arg_buffer(a.bo), trd_arg_int(a.n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {3, 1, 1}, .num_args = 4, .args = args, .device = host};
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_buffer_read(a.bo, 0, a.out, (size_t)a.n * 4, NULL));
    adds_check(&a);
    adds_free(&a);
}

static int dir_is_empty(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", dir);
    return system(cmd) == 0;
}

static int count_memfd_objects(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    unsigned *counts = arg;
    if (strncmp(info->dlpi_name, "/proc/self/fd/", 14) != 0)
        return 0;
    char target[256];
    ssize_t n = readlink(info->dlpi_name, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    counts[0]++;
    if (strncmp(target, "/memfd:trident-host-kernel", 26) == 0)
        counts[1]++;
    return 0;
}

/* Every loaded object named /proc/self/fd/N still names its own memory file: N stays open while the object
 * is loaded. A tool that reads loaded objects by name (TSan's symbolizer did, in test_concurrency) otherwise
 * gets whatever file N is now, such as another thread's empty memory file, and faults (SIGBUS). */
static void memfd_names_hold(unsigned loaded)
{
    unsigned counts[2] = {0, 0};
    dl_iterate_phdr(count_memfd_objects, counts);
    ck_assert_msg(counts[0] == loaded, "%u objects named /proc/self/fd/N are loaded, expected %u", counts[0], loaded);
    ck_assert_msg(counts[1] == counts[0], "%u of the %u objects named /proc/self/fd/N name another file",
                  counts[0] - counts[1], counts[0]);
}

/* Near the descriptor limit the driver keeps no descriptor: the kernel loads and runs, its memory file closed. */
static void memfd_not_kept_near_the_limit(void)
{
    struct rlimit saved, tight;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &saved), 0);
    int lowest = dup(0);
    ck_assert_int_ge(lowest, 0);
    close(lowest);
    tight = saved;
    tight.rlim_cur = (rlim_t)lowest + 100; /* the next descriptors lie within the driver's reserve of 256 */
    if (saved.rlim_cur != RLIM_INFINITY && tight.rlim_cur >= saved.rlim_cur) {
        tu_skip("kernel_files: a memory file near the descriptor limit", "the limit is already that low");
        return;
    }
    ck_assert_msg(setrlimit(RLIMIT_NOFILE, &tight) == 0, "setrlimit: %s", strerror(errno));
    trd_kernel_t *k = host_kernel("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    add_once(k);
    unsigned counts[2] = {0, 0};
    dl_iterate_phdr(count_memfd_objects, counts);
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &saved), 0);
    ck_assert_msg(counts[0] == 1 && counts[1] == 0, "%u loaded, %u with their memory file kept (expected 1, 0)",
                  counts[0], counts[1]);
    trd_kernel_destroy(k);
}

/* Host kernels load from an anonymous memory file where the kernel has
 * memfd_create (no directory involved); else from a file in TMPDIR (or
 * /tmp), removed once loaded; a directory that cannot take the file is named
 * in the error. (memfd_create used to be compiled out and /tmp hard-wired.) */
START_TEST(kernel_files)
{
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    const char *kernel = "add_kernel", *sig = "x:*fp32,y:*fp32,out:*fp32,n:i32";
    trd_kernel_t *k;
#if HAVE_MEMFD_CREATE
    setenv("TMPDIR", "/nonexistent/trident-test", 1);
    memfd_calls = 0;
    k = host_kernel(kernel, sig, NULL);
    add_once(k);
    ck_assert_msg(memfd_calls == 1, "memfd_create was called %u times", memfd_calls);
    memfd_names_hold(1);
    /* a descriptor opened now must not take the first kernel's number; a second kernel is its own object */
    int other = memfd_create("not-a-kernel", MFD_CLOEXEC);
    ck_assert_int_ge(other, 0);
    trd_kernel_t *k2 = host_kernel("pid_grid_kernel", "out:*i32,hits:*i32", NULL);
    TU_OK(trd_kernel_load(k2, host, NULL));
    memfd_names_hold(2);
    trd_kernel_destroy(k2);
    close(other);
    add_once(k);
    memfd_names_hold(1);
    trd_kernel_destroy(k);
    memfd_names_hold(0);
    memfd_not_kept_near_the_limit();
#else
    tu_skip("kernel_files: the memfd_create path", "this build has no memfd_create");
#endif
    memfd_fails = 1;
    const char *dir = tu_path("%s/tests/home/kernels", tu_builddir());
    mkdir(tu_path("%s/tests/home", tu_builddir()), 0700);
    ck_assert(mkdir(dir, 0700) == 0 || errno == EEXIST);
    setenv("TMPDIR", dir, 1);
    k = host_kernel(kernel, sig, NULL);
    add_once(k);
    trd_kernel_destroy(k);
    ck_assert_msg(dir_is_empty(dir), "the kernel's file was left in %s", dir);
    const char *bad[] = {"/nonexistent/trident-test", "/etc/hostname"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        setenv("TMPDIR", bad[i], 1);
        k = host_kernel(kernel, sig, NULL);
        TU_FAILS(trd_kernel_load(k, host, NULL), TRD_ERR_IO,
                 tu_path("cannot create a file in %s (TMPDIR): %s", bad[i], i ? "Not a directory" : "No such file"));
#if HAVE_MEMFD_CREATE
        TU_FAILS(trd_kernel_load(k, host, NULL), TRD_ERR_IO, "memfd_create failed: Function not implemented");
#endif
        trd_kernel_destroy(k);
    }
    memfd_fails = 0;
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
}
END_TEST

static const char *self_path(void)
{
    static char path[4096];
    ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
    ck_assert_int_gt(len, 0);
    path[len] = '\0';
    return path;
}

/* Runs this program again with `mode` as its argument, in a fresh process (nothing installed yet); its output
 * (stdout and stderr) into out; returns its wait status. */
static int run_self(const char *mode, char *out, size_t cap)
{
    const char *self = self_path();
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execl(self, self, mode, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(fds[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return status;
}

static void user_handler(int sig)
{
    (void)sig;
    static const char msg[] = "the program's own handler\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    _exit(42);
}

/* The child modes: "--chain": the program's own SIGSEGV handler, installed first, still gets the faults raised
 * outside kernels; "--uncaught": with [driver.host] catch_faults = false, a kernel's fault kills the process. */
static int fault_child(const char *mode)
{
    int chain = strcmp(mode, "--chain") == 0;
    if (chain) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = user_handler;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
    }
    trd_config_t *c = NULL;
    trd_runtime_t *r = NULL;
    trd_device_t *dev;
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_host_kernel("gather_kernel"), .name = "gather_kernel",
                           .signature = GATHER_SIG};
    if (trd_config_create(0, &c) != TRD_OK ||
        (!chain && trd_config_load_string(c, "[driver.host]\ncatch_faults = false\n", "test.ini") != TRD_OK))
        return 3;
    trd_runtime_desc_t rd = {.struct_size = sizeof rd, .config = c};
    if (trd_runtime_create(&rd, &r) != TRD_OK || trd_runtime_device_find(r, "host:0", &dev) != TRD_OK ||
        trd_kernel_create(r, &d, &k) != TRD_OK) {
        printf("%s\n", trd_error_message());
        return 3;
    }
    int bad[] = {5}, wrong;
    trd_status_t st = gather(k, dev, NULL, GATHER_BLOCK, bad, 1, &wrong);
    printf("kernel fault: %s\n", st == TRD_ERR_DEVICE && strstr(trd_error_message(), "faulted (SIGSEGV") ? "caught"
                                                                                                          : "missed");
    fflush(stdout);
    volatile uintptr_t where = 8;
    *(volatile int *)where = 1; /* a fault outside any kernel */
    printf("not reached\n");
    return 0;
}

START_TEST(faults_outside_kernels_pass_on)
{
    static char out[1 << 16];
    int st = run_self("--chain", out, sizeof out);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 42, "status %d: %s", st, out);
    ck_assert_msg(strstr(out, "kernel fault: caught\nthe program's own handler\n"), "%s", out);
    st = run_self("--uncaught", out, sizeof out);
    /* killed by the signal, or (a sanitized build) by the sanitizer's report of it */
    ck_assert_msg((WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) || strstr(out, "SEGV on unknown address"),
                  "status %d: %s", st, out);
    ck_assert_msg(!strstr(out, "kernel fault:"), "%s", out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("host");
    TCase *t = tcase_create("host");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, vector_add_grids);
    tcase_add_test(t, transpose_2d);
    tcase_add_test(t, program_ids);
    tcase_add_test(t, scalar_types);
    tcase_add_test(t, global_scratch);
    tcase_add_test(t, streams_and_events);
    tcase_add_test(t, threads);
    tcase_add_test(t, declared_signature);
    tcase_add_test(t, bad_launches);
    tcase_add_test(t, demo_bundle);
    tcase_add_test(t, event_destroyed_while_queued);
    tcase_add_test(t, kernel_destroyed_while_queued);
    tcase_add_test(t, buffer_and_stream_destroyed_while_queued);
    tcase_add_test(t, failed_launch_reported);
    tcase_add_test(t, kernel_files);
    suite_add_tcase(s, t);
    TCase *f = tcase_create("faults");
    tcase_add_checked_fixture(f, setup, teardown);
    tcase_set_timeout(f, 300);
    tcase_add_test(f, faulting_kernel_fails_its_launch);
    tcase_add_test(f, overrun_fails_naming_the_buffer);
    tcase_add_test(f, underrun_fails_naming_the_buffer);
    tcase_add_test(f, guarded_buffers_and_their_limit);
    tcase_add_test(f, faults_outside_kernels_pass_on);
    suite_add_tcase(s, f);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return fault_child(argv[1]);
    return tu_run(suite());
}
