/* SPDX-License-Identifier: Apache-2.0 */
/* bench_host: what the host driver costs, against plain C in the same process
 * and the same run (medians of many runs). No GPU needed.
 *
 *   launch   a one-program launch of examples/host/add_kernel (1000 fp32) on a
 *            trident stream of host:0, to the end of trd_stream_synchronize,
 *            vs the same function called directly through dlsym plus a hand-off
 *            to a waiting thread and back (a mutex and two condition variables:
 *            the least a queued launch must do). Interleaved in batches.
 *   grid     the add over 2^24 fp32 (16384 programs of 1024) on host:0 with
 *            [driver.host] threads = 1, 2 and every core, each in its own runtime:
 *            median time of a launch + synchronize, GB/s (12 bytes an element)
 *            and the speed-up over one thread.
 *
 *   bench_host [ADD_KERNEL_SO]   (default: $TRD_BUILDDIR/examples/host/.libs/add_kernel.so)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <trident/host_kernel.h>
#include <trident/trident.h>

#define BENCH_NAME "bench_host"
#include "bench/bench_util.h"

#define LAUNCHES 20000
#define BATCH 100
#define GRID_RUNS 30
#define GRID_N (1 << 24)


/* ------------------------------------------------ the baseline's thread hand-off */

struct handoff {
    pthread_mutex_t lock;
    pthread_cond_t posted, done;
    int pending, finished, stop;
    trd_host_kernel_fn *fn;
    void *const *args;
    trd_host_program_t program;
};

static void *handoff_worker(void *p)
{
    struct handoff *h = p;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (!h->pending && !h->stop)
            pthread_cond_wait(&h->posted, &h->lock);
        if (h->stop)
            break;
        h->pending = 0;
        pthread_mutex_unlock(&h->lock);
        h->fn(h->args, &h->program);
        pthread_mutex_lock(&h->lock);
        h->finished = 1;
        pthread_cond_signal(&h->done);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static void handoff_call(struct handoff *h)
{
    pthread_mutex_lock(&h->lock);
    h->pending = 1;
    h->finished = 0;
    pthread_cond_signal(&h->posted);
    while (!h->finished)
        pthread_cond_wait(&h->done, &h->lock);
    pthread_mutex_unlock(&h->lock);
}

static trd_kernel_t *add_kernel(trd_runtime_t *rt, const char *so)
{
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = so, .name = "add_kernel"};
    CHECK(trd_kernel_create(rt, &d, &k));
    return k;
}

static float *filled(size_t n, unsigned seed)
{
    float *v = malloc(n * sizeof *v);
    if (!v) {
        fprintf(stderr, "bench_host: out of memory\n");
        exit(1);
    }
    srand(seed);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    return v;
}

static int check_sum(const float *x, const float *y, const float *o, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (o[i] != x[i] + y[i]) {
            fprintf(stderr, "bench_host: %s: element %zu is %g, expected %g\n", what, i, o[i], x[i] + y[i]);
            return 0;
        }
    return 1;
}

static int bench_launch(const char *so)
{
    trd_runtime_t *rt;
    CHECK(trd_runtime_create(NULL, &rt));
    trd_device_t *dev;
    CHECK(trd_runtime_device_find(rt, "host:0", &dev));
    trd_kernel_t *k = add_kernel(rt, so);
    CHECK(trd_kernel_load(k, dev, NULL));
    trd_stream_t *s;
    CHECK(trd_stream_create(dev, &s));
    enum { N = 1000 };
    float *x = filled(N, 1), *y = filled(N, 2), *o = calloc(N, sizeof *o), *o2 = calloc(N, sizeof *o2);
    int32_t n = N;
    trd_arg_t args[4] = {trd_arg_ptr(x), trd_arg_ptr(y), trd_arg_ptr(o), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {1, 1, 1}, .num_args = 4, .args = args, .stream = s};

    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    trd_host_kernel_fn *fn = h ? (trd_host_kernel_fn *)dlsym(h, "add_kernel") : NULL;
    if (!fn) {
        fprintf(stderr, "bench_host: %s: no add_kernel: %s\n", so, dlerror());
        return 0;
    }
    void *direct_args[4] = {&x, &y, &o2, &n};
    struct handoff ho = {.lock = PTHREAD_MUTEX_INITIALIZER, .posted = PTHREAD_COND_INITIALIZER,
                         .done = PTHREAD_COND_INITIALIZER, .fn = fn, .args = direct_args,
                         .program = {.struct_size = sizeof(trd_host_program_t),
                                     .abi_version = TRD_HOST_KERNEL_ABI_VERSION,
                                     .num_programs = {1, 1, 1}}};
    pthread_t worker;
    if (pthread_create(&worker, NULL, handoff_worker, &ho) != 0) {
        fprintf(stderr, "bench_host: cannot start a thread\n");
        return 0;
    }
    static double tt[LAUNCHES], tc[LAUNCHES], td[LAUNCHES];
    for (int round = 0; round < 2; round++) /* round 0 warms up */
        for (int i = 0; i < LAUNCHES; i += BATCH)
            for (int which = 0; which < 3; which++)
                for (int j = 0; j < BATCH; j++) {
                    double t0 = now_us();
                    if (which == 0) {
                        CHECK(trd_kernel_launch(k, &l));
                        CHECK(trd_stream_synchronize(s));
                    } else if (which == 1) {
                        handoff_call(&ho);
                    } else {
                        fn(direct_args, &ho.program);
                    }
                    (which == 0 ? tt : which == 1 ? tc : td)[i + j] = now_us() - t0;
                }
    pthread_mutex_lock(&ho.lock);
    ho.stop = 1;
    pthread_cond_signal(&ho.posted);
    pthread_mutex_unlock(&ho.lock);
    pthread_join(worker, NULL);
    int ok = check_sum(x, y, o, N, "trident launch") && check_sum(x, y, o2, N, "direct call");
    double mt = median(tt, LAUNCHES), mc = median(tc, LAUNCHES), md = median(td, LAUNCHES);
    printf("| launch | direct call (dlsym) | %.3f us | %.2f |\n", md, md / mc);
    printf("| launch | direct call + thread hand-off | %.3f us | 1.00 |\n", mc);
    printf("| launch | trd_kernel_launch + trd_stream_synchronize, host:0 | %.3f us | %.2f |\n", mt, mt / mc);
    dlclose(h);
    free(x);
    free(y);
    free(o);
    free(o2);
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
    return ok;
}

/* One runtime whose host device has `threads` workers: the median launch + synchronize of the big add, in us. */
static double grid_run(const char *so, int threads, const float *x, const float *y, float *o, int *ok)
{
    trd_config_t *cfg;
    CHECK(trd_config_create(0, &cfg));
    CHECK(trd_config_load_defaults(cfg));
    char v[16];
    snprintf(v, sizeof v, "%d", threads);
    CHECK(trd_config_set(cfg, "driver.host", "threads", v));
    trd_runtime_desc_t rd = {.struct_size = sizeof rd, .config = cfg};
    trd_runtime_t *rt;
    CHECK(trd_runtime_create(&rd, &rt));
    trd_device_t *dev;
    CHECK(trd_runtime_device_find(rt, "host:0", &dev));
    trd_kernel_t *k = add_kernel(rt, so);
    trd_stream_t *s;
    CHECK(trd_stream_create(dev, &s));
    int32_t n = GRID_N;
    trd_arg_t args[4] = {trd_arg_ptr((void *)x), trd_arg_ptr((void *)y), trd_arg_ptr(o), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {GRID_N / 1024, 1, 1}, .num_args = 4, .args = args,
                      .stream = s};
    double t[GRID_RUNS];
    for (int i = -3; i < GRID_RUNS; i++) { /* 3 warm-ups */
        memset(o, 0, (size_t)GRID_N * sizeof *o);
        double t0 = now_us();
        CHECK(trd_kernel_launch(k, &l));
        CHECK(trd_stream_synchronize(s));
        if (i >= 0)
            t[i] = now_us() - t0;
    }
    *ok = *ok && check_sum(x, y, o, GRID_N, "grid launch");
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
    trd_config_destroy(cfg);
    return median(t, GRID_RUNS);
}

static int bench_grid(const char *so)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    float *x = filled(GRID_N, 3), *y = filled(GRID_N, 4), *o = malloc((size_t)GRID_N * sizeof(float));
    int ok = o != NULL;
    int counts[3] = {1, 2, (int)(cores > 0 ? cores : 1)};
    double base = 0;
    for (int i = 0; i < 3 && ok; i++) {
        if (i == 2 && counts[2] <= 2)
            break; /* "every core" is one of the rows above */
        double us = grid_run(so, counts[i], x, y, o, &ok);
        if (i == 0)
            base = us;
        printf("| grid | 2^24-element add, 16384 programs, %d thread%s | %.0f us (%.1f GB/s) | %.2fx |\n",
               counts[i], counts[i] > 1 ? "s" : "", us, 12.0 * GRID_N / us / 1e3, base / us);
    }
    free(x);
    free(y);
    free(o);
    return ok;
}

int main(int argc, char **argv)
{
    char so[4096];
    const char *b = getenv("TRD_BUILDDIR");
    if (argc > 1)
        snprintf(so, sizeof so, "%s", argv[1]);
    else
        snprintf(so, sizeof so, "%s/examples/host/.libs/add_kernel.so", b ? b : ".");
    time_t now = time(NULL);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%d", localtime(&now));
    printf("bench_host %s: %ld cores; launch: median of %d, interleaved in batches of %d; grid: median of %d\n\n",
           day, sysconf(_SC_NPROCESSORS_ONLN), LAUNCHES, BATCH, GRID_RUNS);
    printf("| what | how | median | ratio |\n|---|---|---|---|\n");
    int ok = bench_launch(so);
    ok = bench_grid(so) && ok;
    return ok ? 0 : 1;
}
