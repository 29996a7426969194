/* SPDX-License-Identifier: Apache-2.0 */
/* run_tune.h: `trident run` on a kernel of several variants (a bundle's compiled configurations): --variant N
 * runs one, --tune times every one and runs the fastest (run_tune.c). */
#ifndef TRD_TOOLS_RUN_TUNE_H
#define TRD_TOOLS_RUN_TUNE_H

#include "tools/run.h"

struct run_variant_opts {
    int tune;         /* --tune */
    int64_t variant;  /* --variant N; -1: none */
    int grid_given;   /* -g/--grid on the command line: it serves every variant, their rules unused */
};

/* Variant i of k (info.kernel, info.config, info.grid); 0 or CLI_FAIL (message printed). */
int run_variant_info(trd_kernel_t *k, uint32_t i, trd_variant_info_t *info);
/* Takes --tune and --variant N (--variant=N) out of argv (the rest is run_parse_options's); 0 or CLI_USAGE. */
int run_variant_options(int *argc, char **argv, struct run_variant_opts *v);
/* The variant --variant names (k itself without it): 0, or CLI_USAGE past the last. */
int run_variant_pick(trd_kernel_t *k, const struct run_variant_opts *v, trd_kernel_t **out);
/* --tune: every variant of k launched warmup + repeat times on the buffers as given (put back before each), a
 * table of their medians printed (to stderr with --json, whose stdout is one object), the fastest in *chosen;
 * a variant that cannot load or launch here is shown failed. 0, or CLI_FAIL when none can run. */
int run_tune(trd_kernel_t *k, trd_device_t *dev, const trd_launch_t *launch, const struct run_opts *o,
             const struct run_variant_opts *v, const struct run_buffers *b, void *const *initial,
             trd_kernel_t **chosen);
/* The grid variant vk of k launches with: its launch dimensions rule's for these arguments where it has one and
 * no -g was given, else -g's. 0 or CLI_FAIL (message printed). */
int run_variant_grid(trd_kernel_t *k, trd_kernel_t *vk, const struct run_variant_opts *v, trd_launch_t *launch);

#endif
