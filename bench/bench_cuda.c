/* SPDX-License-Identifier: Apache-2.0 */
/* bench_cuda: what the CUDA driver costs, measured against raw CUDA in the
 * same process and the same run (medians of many runs).
 *
 *   launch   host time of one launch of a tiny Triton kernel (1 program):
 *            trident's C paths (trd_kernel_launch on a native stream and on a
 *            trident stream; trd_prepared_launch with packed parameters on a
 *            native stream, as libtrident_xla launches) vs cuLaunchKernel of
 *            the same cubin's function with the same parameters.
 *   bw       a Triton vector add over 1 GiB fp32 arrays (3 GiB moved) vs a
 *            device-to-device copy of 1 GiB (2 GiB moved), in TB/s.
 *   cold     first launch in a fresh process of a PTX-only kernel, with the
 *            JIT disk cache cold and warm (the program re-executes itself).
 *   cli      `trident run` of the same add (1 program, and 2^24 elements),
 *            --repeat 1000 --json, its own reported median vs cuLaunchKernel
 *            of the cubin's function timed the way the CLI times (a pair of
 *            events around each launch, a synchronize after it, one warm-up),
 *            measured before and after the CLI's run in this run.
 *
 *   bench_cuda [--only launch|bw|cold|cli] [FIXTURES_DIR]
 *            (default: every part; $TRD_SRCDIR/tests/fixtures/triton/cuda; the CLI is
 *            $TRD_BUILDDIR/tools/trident, else ./tools/trident)
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <trident/trident.h>

#define BENCH_NAME "bench_cuda"
#include "bench/bench_util.h"


/* libcuda entry points the baseline calls directly */
static struct {
    CUresult (*ctxSet)(CUcontext);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*modLoad)(CUmodule *, const void *);
    CUresult (*getFn)(CUfunction *, CUmodule, const char *);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                       void **, void **);
    CUresult (*streamCreate)(CUstream *, unsigned);
    CUresult (*sync)(CUstream);
    CUresult (*memcpyDD)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*evCreate)(CUevent *, unsigned);
    CUresult (*evRecord)(CUevent, CUstream);
    CUresult (*evSync)(CUevent);
    CUresult (*evElapsed)(float *, CUevent, CUevent);
} cu;

static void load_cu(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "bench_cuda: no libcuda: %s\n", dlerror());
        exit(77);
    }
#define SYM(field, name) *(void **)&cu.field = dlsym(h, name)
    SYM(ctxSet, "cuCtxSetCurrent");
    SYM(retain, "cuDevicePrimaryCtxRetain");
    SYM(modLoad, "cuModuleLoadData");
    SYM(getFn, "cuModuleGetFunction");
    SYM(launch, "cuLaunchKernel");
    SYM(streamCreate, "cuStreamCreate");
    SYM(sync, "cuStreamSynchronize");
    SYM(memcpyDD, "cuMemcpyDtoDAsync_v2");
    SYM(evCreate, "cuEventCreate");
    SYM(evRecord, "cuEventRecord");
    SYM(evSync, "cuEventSynchronize");
    SYM(evElapsed, "cuEventElapsedTime_v2");
#undef SYM
}

/* ------------------------------------------------------------ launch */

#define LAUNCHES 10000
#define BATCH 100

static void bench_launch(trd_runtime_t *rt, trd_device_t *dev, const char *fixtures, int ordinal)
{
    char path[4096];
    snprintf(path, sizeof path, "%.3000s/add_fp32", fixtures);
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = path};
    CHECK(trd_kernel_create(rt, &d, &k));
    CHECK(trd_kernel_load(k, dev, NULL));
    CUcontext ctx;
    CU(cu.retain(&ctx, (CUdevice)ordinal));
    CU(cu.ctxSet(ctx));
    CUstream s;
    CU(cu.streamCreate(&s, CU_STREAM_NON_BLOCKING));
    snprintf(path, sizeof path, "%.3000s/add_fp32/add_kernel.cubin", fixtures);
    size_t size;
    void *cubin = slurp(path, &size);
    CUmodule mod;
    CUfunction fn;
    CU(cu.modLoad(&mod, cubin));
    CU(cu.getFn(&fn, mod, "add_kernel"));
    trd_buffer_t *b;
    CHECK(trd_buffer_alloc(dev, 4096 * 3, &b));
    void *base;
    CHECK(trd_buffer_address(b, &base));
    CUdeviceptr x = (CUdeviceptr)(uintptr_t)base, y = x + 4096, o = x + 8192, null = 0;
    int n = 1000;
    void *params[6] = {&x, &y, &o, &n, &null, &null};
    trd_arg_t args[4] = {trd_arg_ptr((void *)(uintptr_t)x), trd_arg_ptr((void *)(uintptr_t)y),
                         trd_arg_ptr((void *)(uintptr_t)o), trd_arg_int(n)};
    trd_launch_t native = {.struct_size = sizeof native, .grid = {1, 1, 1}, .num_args = 4, .args = args, .device = dev,
                           .native_stream = s};
    trd_stream_t *ts;
    CHECK(trd_stream_wrap(dev, s, &ts));
    trd_launch_t wrapped = native;
    wrapped.stream = ts;
    trd_prepared_t *prep;
    CHECK(trd_kernel_prepare(k, dev, &prep));
    trd_native_launch_t packed = {.struct_size = sizeof packed, .grid = {1, 1, 1}, .num_params = 4, .params = params,
                                  .native_stream = s};
    static double raw[LAUNCHES], tn[LAUNCHES], tw[LAUNCHES], tp[LAUNCHES];
    double *const outs[] = {raw, tn, tw, tp};
    /* interleave the four so that clock and queue state are shared */
    for (int round = 0; round < 2; round++) /* round 0 warms up */
        for (int i = 0; i < LAUNCHES; i += BATCH) {
            for (int which = 0; which < 4; which++) {
                double *out = outs[which];
                for (int j = 0; j < BATCH; j++) {
                    double t0 = now_us();
                    if (which == 0)
                        CU(cu.launch(fn, 1, 1, 1, 128, 1, 1, 0, s, params, NULL));
                    else if (which == 3)
                        CHECK(trd_prepared_launch(prep, &packed));
                    else
                        CHECK(trd_kernel_launch(k, which == 1 ? &native : &wrapped));
                    out[i + j] = now_us() - t0;
                }
                CU(cu.sync(s));
            }
        }
    double mr = median(raw, LAUNCHES), mn = median(tn, LAUNCHES), mw = median(tw, LAUNCHES);
    double mp = median(tp, LAUNCHES);
    printf("| launch | raw cuLaunchKernel | %.3f us | 1.00 |\n", mr);
    printf("| launch | trd_kernel_launch, native stream | %.3f us | %.3f |\n", mn, mn / mr);
    printf("| launch | trd_kernel_launch, trident stream | %.3f us | %.3f |\n", mw, mw / mr);
    printf("| launch | trd_prepared_launch, native stream (libtrident_xla's path) | %.3f us | %.3f |\n", mp, mp / mr);
    trd_prepared_destroy(prep);
    trd_stream_destroy(ts);
    trd_buffer_free(b);
    trd_kernel_destroy(k);
    free(cubin);
}

/* -------------------------------------------------------- bandwidth */

static void bench_bandwidth(trd_runtime_t *rt, trd_device_t *dev, const char *fixtures)
{
    const size_t n = (size_t)1 << 28; /* 2^28 fp32 = 1 GiB */
    char path[4096];
    snprintf(path, sizeof path, "%.3000s/add_fp32", fixtures);
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = path};
    CHECK(trd_kernel_create(rt, &d, &k));
    trd_buffer_t *bx, *by, *bo;
    CHECK(trd_buffer_alloc(dev, n * 4, &bx));
    CHECK(trd_buffer_alloc(dev, n * 4, &by));
    CHECK(trd_buffer_alloc(dev, n * 4, &bo));
    CHECK(trd_buffer_fill(bx, 0, n * 4, 0x3f, NULL)); /* 0.747 in every float: not zeros */
    CHECK(trd_buffer_fill(by, 0, n * 4, 0x40, NULL));
    trd_stream_t *s;
    CHECK(trd_stream_create(dev, &s));
    void *native;
    CHECK(trd_stream_native(s, &native));
    CUevent e0, e1;
    CU(cu.evCreate(&e0, 0));
    CU(cu.evCreate(&e1, 0));
    /* n fits an i32 argument: 2^28 */
    trd_arg_t a[4] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int((int64_t)n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)(n / 1024), 1, 1}, .num_args = 4, .args = a, .stream = s};
    void *px, *po;
    CHECK(trd_buffer_address(bx, &px));
    CHECK(trd_buffer_address(bo, &po));
    enum { REPS = 30 };
    double add[REPS], copy[REPS];
    for (int r = -3; r < REPS; r++) { /* 3 warm-ups */
        float ms;
        CU(cu.evRecord(e0, native));
        CHECK(trd_kernel_launch(k, &l));
        CU(cu.evRecord(e1, native));
        CU(cu.evSync(e1));
        CU(cu.evElapsed(&ms, e0, e1));
        if (r >= 0)
            add[r] = 3.0 * n * 4 / (ms * 1e-3) / 1e12;
        CU(cu.evRecord(e0, native));
        CU(cu.memcpyDD((CUdeviceptr)(uintptr_t)po, (CUdeviceptr)(uintptr_t)px, n * 4, native));
        CU(cu.evRecord(e1, native));
        CU(cu.evSync(e1));
        CU(cu.evElapsed(&ms, e0, e1));
        if (r >= 0)
            copy[r] = 2.0 * n * 4 / (ms * 1e-3) / 1e12;
    }
    double ma = median(add, REPS), mc = median(copy, REPS);
    printf("| bandwidth | device-to-device copy, 1 GiB | %.3f TB/s | 1.00 |\n", mc);
    printf("| bandwidth | Triton add via trident, 3 x 1 GiB | %.3f TB/s | %.3f |\n", ma, ma / mc);
    trd_stream_destroy(s);
    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    trd_kernel_destroy(k);
}

/* -------------------------------------------------------------- cli */

#define CLI_REPEAT 1000

/* Median of CLI_REPEAT launches of fn over n elements, each between two events with a synchronize after it, one
 * warm-up first: the protocol of trident run. */
static double raw_event_median(CUfunction fn, CUstream s, CUdeviceptr x, CUdeviceptr y, CUdeviceptr o, int n)
{
    CUevent e0, e1;
    CU(cu.evCreate(&e0, 0));
    CU(cu.evCreate(&e1, 0));
    CUdeviceptr null = 0;
    void *params[6] = {&x, &y, &o, &n, &null, &null};
    unsigned grid = (unsigned)((n + 1023) / 1024);
    static double t[CLI_REPEAT];
    for (int r = -1; r < CLI_REPEAT; r++) {
        float ms;
        CU(cu.evRecord(e0, s));
        CU(cu.launch(fn, grid, 1, 1, 128, 1, 1, 0, s, params, NULL));
        CU(cu.evRecord(e1, s));
        CU(cu.evSync(e1));
        CU(cu.evElapsed(&ms, e0, e1));
        if (r >= 0)
            t[r] = ms * 1e3;
    }
    return median(t, CLI_REPEAT);
}

/* trident run's own median (us) of the fixture add over n elements on the device. */
static double cli_median(const char *fixtures, const char *uri, int n)
{
    const char *b = getenv("TRD_BUILDDIR");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "'%.3000s/tools/trident' run '%.3000s/add_fp32' -d %s -g %d buf:%d:rand buf:%d:rand buf:%d %d "
             "--repeat %d --json --check 'out_ptr==x_ptr+y_ptr'",
             b ? b : ".", fixtures, uri, (n + 1023) / 1024, n, n, n, n, CLI_REPEAT);
    FILE *p = popen(cmd, "r");
    json_error_t err;
    json_t *j = p ? json_loadf(p, 0, &err) : NULL;
    int rc = p ? pclose(p) : -1;
    json_t *med = json_object_get(json_object_get(j, "timing"), "median_ms");
    if (!j || rc != 0 || !json_is_number(med)) {
        fprintf(stderr, "bench_cuda: %s failed (exit %d)%s%s\n", cmd, rc, j ? "" : ": ", j ? "" : err.text);
        exit(1);
    }
    double us = json_number_value(med) * 1e3;
    json_decref(j);
    return us;
}

static void bench_cli(trd_device_t *dev, const char *fixtures, int ordinal, const char *uri)
{
    char path[4096];
    snprintf(path, sizeof path, "%.3000s/add_fp32/add_kernel.cubin", fixtures);
    size_t size;
    void *cubin = slurp(path, &size);
    CUcontext ctx;
    CU(cu.retain(&ctx, (CUdevice)ordinal));
    CU(cu.ctxSet(ctx));
    CUstream s;
    CU(cu.streamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUmodule mod;
    CUfunction fn;
    CU(cu.modLoad(&mod, cubin));
    CU(cu.getFn(&fn, mod, "add_kernel"));
    const int sizes[] = {1024, 1 << 24};
    for (int k = 0; k < 2; k++) {
        int n = sizes[k];
        trd_buffer_t *b;
        CHECK(trd_buffer_alloc(dev, (uint64_t)n * 12, &b));
        CHECK(trd_buffer_fill(b, 0, (uint64_t)n * 12, 0x3f, NULL));
        void *base;
        CHECK(trd_buffer_address(b, &base));
        CUdeviceptr x = (CUdeviceptr)(uintptr_t)base, y = x + (CUdeviceptr)n * 4, o = y + (CUdeviceptr)n * 4;
        double before = raw_event_median(fn, s, x, y, o, n);
        double cli = cli_median(fixtures, uri, n);
        double after = raw_event_median(fn, s, x, y, o, n);
        double raw = (before + after) / 2;
        printf("| trident run | raw cuLaunchKernel, events, add %d fp32 (before / after) | %.3f / %.3f us | 1.00 |\n", n,
               before, after);
        printf("| trident run | CLI's own median, --repeat %d, add %d fp32 | %.3f us | %.3f |\n", CLI_REPEAT, n, cli,
               cli / raw);
        trd_buffer_free(b);
    }
    free(cubin);
}

/* ------------------------------------------------------------- cold */

/* child mode: time the first load+launch of the PTX-only kernel, print us */
static int cold_child(const char *fixtures)
{
    double t0 = now_us();
    trd_runtime_t *rt;
    CHECK(trd_runtime_create(NULL, &rt));
    trd_device_t *dev;
    CHECK(trd_runtime_device_find(rt, "backend=cuda", &dev));
    char path[4096];
    snprintf(path, sizeof path, "%.3000s/scale_ptx", fixtures);
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = path};
    CHECK(trd_kernel_create(rt, &d, &k));
    trd_buffer_t *b;
    CHECK(trd_buffer_alloc(dev, 4096, &b));
    trd_arg_t a[4] = {trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_int(1024), trd_arg_float(2.0)};
    double t1 = now_us();
    trd_load_info_t li = {.struct_size = sizeof li};
    CHECK(trd_kernel_load(k, dev, &li));
    trd_launch_t l = {.struct_size = sizeof l, .grid = {2, 1, 1}, .num_args = 4, .args = a, .device = dev};
    CHECK(trd_kernel_launch(k, &l));
    float v;
    CHECK(trd_buffer_read(b, 0, &v, 4, NULL));
    double t2 = now_us();
    printf("%.1f %.1f %u\n", t2 - t1, t2 - t0, li.from_cache);
    trd_buffer_free(b);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
    return 0;
}

static void run_child(const char *self, const char *fixtures, const char *cache, double *load_us, double *total_us,
                      unsigned *hit)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "TRIDENT_CACHE_DIR=%s '%.3000s' --cold-child '%.3000s'", cache, self, fixtures);
    FILE *p = popen(cmd, "r");
    if (!p || fscanf(p, "%lf %lf %u", load_us, total_us, hit) != 3) {
        fprintf(stderr, "bench_cuda: cold-start child failed\n");
        exit(1);
    }
    pclose(p);
}

static void bench_cold(const char *self, const char *fixtures)
{
    enum { REPS = 5 };
    double cold_load[REPS], warm_load[REPS], cold_total[REPS], warm_total[REPS];
    for (int r = 0; r < REPS; r++) {
        char cache[] = "/tmp/trd_bench_cache_XXXXXX";
        if (!mkdtemp(cache))
            exit(1);
        unsigned hit;
        run_child(self, fixtures, cache, &cold_load[r], &cold_total[r], &hit);
        if (hit)
            fprintf(stderr, "bench_cuda: a fresh cache reported a hit\n");
        run_child(self, fixtures, cache, &warm_load[r], &warm_total[r], &hit);
        if (!hit)
            fprintf(stderr, "bench_cuda: the warm cache missed\n");
        char rm[256];
        snprintf(rm, sizeof rm, "rm -rf %s", cache);
        if (system(rm) != 0)
            exit(1);
    }
    double cl = median(cold_load, REPS), wl = median(warm_load, REPS);
    printf("| cold start | PTX load+first launch, cache cold | %.0f us | 1.00 |\n", cl);
    printf("| cold start | PTX load+first launch, cache warm | %.0f us | %.3f |\n", wl, wl / cl);
    printf("| cold start | whole process to first result, cold / warm | %.0f / %.0f us | %.3f |\n",
           median(cold_total, REPS), median(warm_total, REPS), median(warm_total, REPS) / median(cold_total, REPS));
}

int main(int argc, char **argv)
{
    char def[4096];
    const char *src = getenv("TRD_SRCDIR");
    snprintf(def, sizeof def, "%s/tests/fixtures/triton/cuda", src ? src : ".");
    if (argc > 2 && !strcmp(argv[1], "--cold-child"))
        return cold_child(argv[2]);
    const char *self = argv[0], *only = NULL;
    if (argc > 2 && !strcmp(argv[1], "--only")) {
        only = argv[2];
        argc -= 2;
        argv += 2;
        if (strcmp(only, "launch") && strcmp(only, "bw") && strcmp(only, "cold") && strcmp(only, "cli")) {
            fprintf(stderr, "bench_cuda: --only takes launch, bw, cold or cli, not '%s'\n", only);
            return 2;
        }
    }
    const char *fixtures = argc > 1 ? argv[1] : def;
    load_cu();
    trd_runtime_t *rt;
    CHECK(trd_runtime_create(NULL, &rt));
    trd_device_t *dev;
    if (trd_runtime_device_find(rt, "backend=cuda", &dev) != TRD_OK) {
        printf("SKIP: bench_cuda: no CUDA device (%s)\n", trd_error_message());
        return 77;
    }
    trd_device_props_t p = {.struct_size = sizeof p};
    CHECK(trd_device_get_props(dev, &p));
    time_t t = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
    printf("bench_cuda %s on %s (%s, %s), trident %s\n\n", date, p.uri, p.name, p.arch, trd_version_string());
    printf("| what | how | median | ratio |\n|---|---|---|---|\n");
    if (!only || !strcmp(only, "launch"))
        bench_launch(rt, dev, fixtures, (int)p.ordinal);
    if (!only || !strcmp(only, "bw"))
        bench_bandwidth(rt, dev, fixtures);
    if (!only || !strcmp(only, "cold"))
        bench_cold(self, fixtures);
    if (!only || !strcmp(only, "cli"))
        bench_cli(dev, fixtures, (int)p.ordinal, p.uri);
    trd_runtime_destroy(rt);
    return 0;
}
