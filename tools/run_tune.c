/* SPDX-License-Identifier: Apache-2.0 */
/* run_tune.c: `trident run --tune` and `--variant N` over a kernel's variants. The timing is run_launches's (a
 * pair of events around each launch), so that the table's medians are the figures `trident run` reports. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/run_tune.h"

#define MAX_VARIANTS 64

int run_variant_info(trd_kernel_t *k, uint32_t i, trd_variant_info_t *info)
{
    *info = (trd_variant_info_t){.struct_size = sizeof *info};
    return trd_kernel_variant(k, i, info) == TRD_OK ? 0 : cli_error();
}

int run_variant_options(int *argc, char **argv, struct run_variant_opts *v)
{
    v->tune = 0;
    v->variant = -1;
    v->grid_given = 0;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (strcmp(a, "--") == 0) { /* the rest are the kernel's arguments */
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (strcmp(a, "--tune") == 0) {
            v->tune = 1;
            continue;
        }
        if (strcmp(a, "--variant") == 0) {
            if (i + 1 == *argc)
                return cli_usage("run", "--variant needs a variant's index");
            val = argv[++i];
        } else if (strncmp(a, "--variant=", 10) == 0) {
            val = a + 10;
        } else {
            if (!strcmp(a, "-g") || !strcmp(a, "--grid") || !strncmp(a, "--grid=", 7) || !strncmp(a, "-g", 2))
                v->grid_given = 1;
            argv[out++] = argv[i];
            continue;
        }
        char *end;
        long long n = strtoll(val, &end, 10);
        if (!*val || *end || n < 0 || n >= MAX_VARIANTS)
            return cli_usage("run", "--variant '%s': expected a variant's index, 0 .. %d", val, MAX_VARIANTS - 1);
        v->variant = n;
    }
    argv[out] = NULL;
    *argc = out;
    if (v->tune && v->variant >= 0)
        return cli_usage("run", "--tune and --variant exclude each other");
    return 0;
}

int run_variant_pick(trd_kernel_t *k, const struct run_variant_opts *v, trd_kernel_t **out)
{
    uint32_t n = 1;
    trd_kernel_variant_count(k, &n);
    if (v->variant >= (int64_t)n)
        return cli_usage("run", "--variant %lld: the kernel has %u variant%s (see 'trident info')",
                         (long long)v->variant, n, n == 1 ? "" : "s");
    trd_variant_info_t vi;
    int r = run_variant_info(k, v->variant < 0 ? 0 : (uint32_t)v->variant, &vi);
    if (!r)
        *out = vi.kernel;
    return r;
}

/* The buffers as the command line gave them. */
static int restore(const struct run_buffers *b, void *const *initial)
{
    for (uint32_t i = 0; i < b->n; i++)
        if (b->bufs[i] && trd_buffer_write(b->bufs[i], 0, initial[i], b->bytes[i], NULL) != TRD_OK)
            return cli_fail("restoring argument %u", i);
    return 0;
}

int run_variant_grid(trd_kernel_t *k, trd_kernel_t *vk, const struct run_variant_opts *v, trd_launch_t *launch)
{
    uint32_t n = 1, g[3];
    trd_kernel_variant_count(k, &n);
    for (uint32_t i = 0; i < n && !v->grid_given; i++) {
        trd_variant_info_t vi;
        if (run_variant_info(k, i, &vi) || vi.kernel != vk)
            continue;
        trd_status_t st = trd_kernel_variant_grid(k, i, launch->args, launch->num_args, g);
        if (st == TRD_OK)
            memcpy(launch->grid, g, sizeof g);
        else if (st != TRD_ERR_NOT_FOUND)
            return cli_fail("variant %u's grid rule", i);
    }
    return 0;
}

int run_tune(trd_kernel_t *k, trd_device_t *dev, const trd_launch_t *launch, const struct run_opts *o,
             const struct run_variant_opts *vo, const struct run_buffers *b, void *const *initial,
             trd_kernel_t **chosen)
{
    uint32_t n = 1;
    trd_kernel_variant_count(k, &n);
    double median[MAX_VARIANTS], *times = calloc(o->repeat ? o->repeat : 1, sizeof *times);
    char why[MAX_VARIANTS][160];
    if (!times) {
        fprintf(stderr, "trident: out of memory\n");
        return CLI_FAIL;
    }
    uint32_t best = 0;
    for (uint32_t v = 0; v < n; v++) {
        trd_variant_info_t vi;
        median[v] = INFINITY;
        why[v][0] = '\0';
        if (run_variant_info(k, v, &vi) || restore(b, initial))
            break;
        trd_kernel_t *vk = vi.kernel;
        trd_launch_t l = *launch;
        if (trd_kernel_load(vk, dev, NULL) != TRD_OK) {
            snprintf(why[v], sizeof why[v], "%s", trd_error_message());
        } else if (run_variant_grid(k, vk, vo, &l) != 0) {
            snprintf(why[v], sizeof why[v], "its grid rule failed (above)");
        } else if (run_launches(vk, dev, &l, o->warmup, o->repeat, 0, b, times) != 0) {
            snprintf(why[v], sizeof why[v], "its launch failed (above)");
        } else {
            struct run_stats s;
            run_stats_of(times, o->repeat, &s);
            median[v] = s.median;
        }
        if (median[v] < median[best] || !isfinite(median[best]))
            best = v;
    }
    free(times);
    FILE *out = o->json ? stderr : stdout;
    fprintf(out, "%-8s %-40s %12s %8s  %s\n", "variant", "config", "median_ms", "ratio", "chosen");
    for (uint32_t v = 0; v < n; v++) {
        trd_variant_info_t vi;
        const char *config = run_variant_info(k, v, &vi) ? "" : vi.config;
        if (isfinite(median[v]))
            fprintf(out, "%-8u %-40s %12.4f %8.3f  %s\n", v, *config ? config : "-", median[v],
                    median[best] > 0 ? median[v] / median[best] : 1.0, v == best ? "*" : "");
        else
            fprintf(out, "%-8u %-40s %12s %8s  failed: %s\n", v, *config ? config : "-", "-", "-", why[v]);
    }
    fflush(out);
    if (!isfinite(median[best])) {
        fprintf(stderr, "trident: no variant of the kernel can run on the device\n");
        return CLI_FAIL;
    }
    trd_variant_info_t vi;
    if (restore(b, initial) || run_variant_info(k, best, &vi))
        return CLI_FAIL;
    *chosen = vi.kernel;
    return 0;
}
