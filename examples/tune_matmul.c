/* SPDX-License-Identifier: Apache-2.0 */
/* tune_matmul: a kernel of several compiled configurations, chosen at run time. Loads a bundle of matmul
 * variants (c[M][N] = a[M][K] b[K][N], fp32 row-major; launch parameters a, b, c, M, N, K; a 2-D grid of
 * BLOCK_M x BLOCK_N tiles, each variant's block sizes read from its config text "BLOCK_M=..,BLOCK_N=.."), runs
 * on the best device that has an image for it, times every variant (trd_tuner_benchmark), launches through a
 * tuner keyed by the shape (trd_tuner_launch: the first launch chooses, later ones run the choice with no lock
 * and no allocation), checks every element of c against a double-precision reference, and compares the tuned
 * launch's time with the fastest variant's.
 *
 *     tune_matmul [BUNDLE] [M N K]
 *
 * The build makes examples/tune_matmul.trdb from the host twin at three tile sizes (examples/host/matmul_kernel.c
 * built with TILE 16, 32, 64). For a GPU, compile a Triton kernel of these launch parameters (program_id(0) over
 * row blocks, program_id(1) over column blocks, BLOCK_M/BLOCK_N/BLOCK_K constexpr, input_precision "ieee") at
 * several configurations and bundle them (bench/make_tune_matmul.py): trident bundle -o mm.trdb --variants
 * --config BLOCK_M=64,BLOCK_N=64 --grid 'cdiv(M,BLOCK_M),cdiv(N,BLOCK_N)' ENTRY1.json --config ... ENTRY2.json ...
 * (with the grid rules, `trident run mm.trdb --tune` needs no -g). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trident/trident.h>

#define MAX_VARIANTS 64
#define TIMED 20

#define CHECK(call)                                                                      \
    do {                                                                                 \
        if ((call) != TRD_OK) {                                                          \
            fprintf(stderr, "tune_matmul: %s failed: %s\n", #call, trd_error_message()); \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

/* The value of NAME=... in a config text, or 0. */
static uint32_t config_value(const char *config, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = config; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, n) && p[n] == '=')
            return (uint32_t)strtoul(p + n + 1, NULL, 10);
    return 0;
}

static float uniform(void)
{
    return (float)((double)rand() / RAND_MAX * 2.0 - 1.0);
}

int main(int argc, char **argv)
{
    const char *bundle = argc > 1 ? argv[1] : "examples/tune_matmul.trdb";
    long m = argc > 4 ? atol(argv[2]) : 256, n = argc > 4 ? atol(argv[3]) : 192, kk = argc > 4 ? atol(argv[4]) : 128;
    if ((argc != 1 && argc != 2 && argc != 5) || m <= 0 || n <= 0 || kk <= 0 || m > 16384 || n > 16384 ||
        kk > 16384) {
        fprintf(stderr, "usage: tune_matmul [BUNDLE] [M N K]  (each 1 .. 16384)\n");
        return 2;
    }
    trd_runtime_t *rt;
    CHECK(trd_runtime_create(NULL, &rt));
    trd_kernel_t *k;
    trd_kernel_desc_t desc = {.struct_size = sizeof desc, .path = bundle};
    CHECK(trd_kernel_create(rt, &desc, &k));
    uint32_t nv = 0;
    CHECK(trd_kernel_variant_count(k, &nv));
    if (nv > MAX_VARIANTS) {
        fprintf(stderr, "tune_matmul: %s has %u variants; this example takes at most %d\n", bundle, nv, MAX_VARIANTS);
        return 1;
    }
    /* each variant's grid follows from its block sizes */
    uint32_t grids[3 * MAX_VARIANTS];
    const char *configs[MAX_VARIANTS];
    for (uint32_t v = 0; v < nv; v++) {
        trd_variant_info_t vi = {.struct_size = sizeof vi};
        CHECK(trd_kernel_variant(k, v, &vi));
        configs[v] = vi.config;
        uint32_t bm = config_value(configs[v], "BLOCK_M"), bn = config_value(configs[v], "BLOCK_N");
        if (!bm || !bn) {
            fprintf(stderr, "tune_matmul: variant %u's config '%s' does not give BLOCK_M and BLOCK_N\n", v,
                    configs[v]);
            return 1;
        }
        grids[3 * v] = (uint32_t)((m + bm - 1) / bm);
        grids[3 * v + 1] = (uint32_t)((n + bn - 1) / bn);
        grids[3 * v + 2] = 1;
    }

    /* the best device the kernel has an image for: a GPU before the host */
    uint32_t ndev = 0;
    CHECK(trd_runtime_device_count(rt, &ndev));
    trd_device_t *dev = NULL;
    trd_device_props_t best = {.struct_size = sizeof best};
    for (uint32_t i = 0; i < ndev; i++) {
        trd_device_t *d;
        trd_device_props_t p = {.struct_size = sizeof p};
        int32_t ok = 0;
        CHECK(trd_runtime_device_get(rt, i, &d));
        CHECK(trd_device_get_props(d, &p));
        CHECK(trd_kernel_supports(k, d, &ok));
        if (ok && (!dev || (p.kind == TRD_DEVICE_GPU && best.kind != TRD_DEVICE_GPU))) {
            dev = d;
            best = p;
        }
    }
    if (!dev) {
        fprintf(stderr, "tune_matmul: no device can run %s\n", bundle);
        return 1;
    }

    size_t abytes = (size_t)(m * kk) * 4, bbytes = (size_t)(kk * n) * 4, cbytes = (size_t)(m * n) * 4;
    float *a = malloc(abytes), *b = malloc(bbytes), *c = malloc(cbytes);
    if (!a || !b || !c)
        return 1;
    srand(7);
    for (long i = 0; i < m * kk; i++)
        a[i] = uniform();
    for (long i = 0; i < kk * n; i++)
        b[i] = uniform();
    for (long i = 0; i < m * n; i++)
        c[i] = NAN; /* poison: every element must be written */
    trd_stream_t *s;
    trd_buffer_t *ba, *bb, *bc;
    CHECK(trd_stream_create(dev, &s));
    CHECK(trd_buffer_alloc(dev, abytes, &ba));
    CHECK(trd_buffer_alloc(dev, bbytes, &bb));
    CHECK(trd_buffer_alloc(dev, cbytes, &bc));
    CHECK(trd_buffer_write(ba, 0, a, abytes, s));
    CHECK(trd_buffer_write(bb, 0, b, bbytes, s));
    CHECK(trd_buffer_write(bc, 0, c, cbytes, s));

    trd_arg_t args[6] = {trd_arg_buffer(ba), trd_arg_buffer(bb), trd_arg_buffer(bc),
                         trd_arg_int(m),     trd_arg_int(n),     trd_arg_int(kk)};
    trd_launch_t launch = {.struct_size = sizeof launch, .num_args = 6, .args = args, .stream = s};
    const uint32_t written[] = {2}; /* c: saved before the benchmark, put back after each variant */
    trd_tuner_desc_t td = {.struct_size = sizeof td, .kernel = k, .num_written = 1, .written = written};
    trd_tuner_t *tuner;
    CHECK(trd_tuner_create(&td, &tuner));
    int32_t key[3] = {(int32_t)m, (int32_t)n, (int32_t)kk}; /* the choice depends on the shape */
    trd_tuned_launch_t tl = {.struct_size = sizeof tl, .key = key, .key_size = sizeof key, .launch = &launch,
                             .grids = grids};

    double times[MAX_VARIANTS];
    uint32_t fastest = 0, chosen = 0;
    CHECK(trd_tuner_benchmark(tuner, &tl, times, nv, &fastest));
    printf("matmul %ldx%ldx%ld on %s (%s), %u variants:\n", m, n, kk, best.uri, best.name, nv);
    for (uint32_t v = 0; v < nv; v++) {
        if (isfinite(times[v]))
            printf("  variant %u  %-36s %10.4f ms  %6.3fx%s\n", v, configs[v], times[v], times[v] / times[fastest],
                   v == fastest ? "  fastest" : "");
        else
            printf("  variant %u  %-36s cannot run here\n", v, configs[v]);
    }

    CHECK(trd_tuner_launch(tuner, &tl, &chosen));
    CHECK(trd_buffer_read(bc, 0, c, cbytes, s));
    CHECK(trd_stream_synchronize(s));
    long bad = 0;
    for (long i = 0; i < m; i++)
        for (long j = 0; j < n; j++) {
            double ref = 0, mag = 0;
            for (long p = 0; p < kk; p++) {
                ref += (double)a[i * kk + p] * b[p * n + j];
                mag += fabs((double)a[i * kk + p] * b[p * n + j]);
            }
            double got = c[i * n + j];
            /* fp32 sums of kk terms: the recursive-summation bound, kk units of rounding */
            if (!(fabs(got - ref) <= ((double)kk * 6e-8 + 1e-6) * mag + 1e-6) && bad++ < 5)
                fprintf(stderr, "  c[%ld][%ld] = %g, expected %g\n", i, j, got, ref);
        }

    /* the tuned launch's time: it must be the fastest variant's */
    trd_event_t *e0, *e1;
    CHECK(trd_event_create(dev, &e0));
    CHECK(trd_event_create(dev, &e1));
    CHECK(trd_event_record(e0, s));
    for (int r = 0; r < TIMED; r++)
        CHECK(trd_tuner_launch(tuner, &tl, NULL));
    CHECK(trd_event_record(e1, s));
    CHECK(trd_event_synchronize(e1));
    double ms;
    CHECK(trd_event_elapsed(e0, e1, &ms));
    ms /= TIMED;
    printf("tuned: variant %u (%s), %.4f ms a launch; the fastest measured %.4f ms (variant %u): %.3fx\n", chosen,
           configs[chosen], ms, times[fastest], fastest, ms / times[fastest]);
    printf("c: %ld x %ld elements, %s\n", m, n, bad ? "MISMATCH" : "every element verified against a double reference");

    trd_event_destroy(e1);
    trd_event_destroy(e0);
    trd_tuner_destroy(tuner);
    trd_buffer_free(bc);
    trd_buffer_free(bb);
    trd_buffer_free(ba);
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
    free(c);
    free(b);
    free(a);
    return bad ? 1 : 0;
}
