/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_run.c: `trident run` loads a kernel, launches it (warm-ups, then timed
 * launches), checks its outputs and reports; the parts are in run_*.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/run_tune.h"

static const char run_help[] =
    "usage: trident run KERNEL [options] ARG...\n\n"
    "Loads KERNEL, launches it --warmup times, then --repeat times timed each on the device's own clock\n"
    "(a pair of events), and reports the min, median, mean, max and standard deviation of the timed\n"
    "launches and the bandwidth. The outputs are printed, dumped and checked as the FIRST launch left\n"
    "them (on the inputs as given); --outputs last takes them after the last launch (a kernel that\n"
    "accumulates into an output then shows every launch's sum).\n\n"
    "KERNEL: a Triton cache entry (<name>.json or its directory), a trident bundle, or a raw image\n"
    "(a host shared object, cubin, PTX, HSACO ...; give --name and --signature).\n\n"
    "ARG, one per kernel parameter (constexpr ones excluded), typed by the signature:\n"
    "  NUMBER                  a scalar in its type's range (integers in decimal or 0x hex, fp8 as its\n"
    "                          bits; floats within the largest finite value, or inf, nan)\n"
    "  buf:COUNT[:FILL]        a device buffer of COUNT elements of the pointee type; FILL is zero\n"
    "                          (default), seq (0, 1, 2 ..., every one exact in the type), const:V (V\n"
    "                          checked as a scalar of the pointee type is), file:PATH or rand[:SEED]:\n"
    "                          floats uniform in [-1, 1), integers in [-100, 100] ([0, 200] unsigned),\n"
    "                          from xoshiro256** with a stream of its own per argument and SEED (default 0)\n"
    "  buf:file:PATH           a buffer holding the file's bytes\n"
    "  null                    a NULL pointer\n\n"
    "options:\n"
    "  -d, --device SEL        device URI, index or property match (default: the best device the\n"
    "                          kernel has an image for, a GPU before the host)\n"
    "  -g, --grid X[,Y[,Z]]    programs along x, y, z (default 1), decimal, 1 .. 2^31-1 each\n"
    "  -s, --signature SIG     the kernel's signature, e.g. '*fp32,*fp32,i32' ('' for none); a kernel\n"
    "                          that knows its own takes only one that agrees with it\n"
    "  -n, --name NAME         the kernel's name (entry symbol of a raw image)\n"
    "  -o, --option NAME=VALUE a backend option for loading (repeatable)\n"
    "  -w, --warmup N          untimed launches first (default 1)\n"
    "  -r, --repeat N          timed launches after them (default 1)\n"
    "      --bytes N           bytes one launch moves, for GB/s (default: the buffers' sizes summed,\n"
    "                          each read or written once; 0: no bandwidth)\n"
    "      --outputs first|last  the launch whose outputs are printed, dumped and checked (default first)\n"
    "      --variant N         run variant N of a kernel of several (a bundle's compiled configurations,\n"
    "                          'trident info' lists them; default 0); a variant with a grid rule launches\n"
    "                          with the grid its rule gives for the arguments, unless -g is given\n"
    "      --tune              launch every variant --warmup + --repeat times on the arguments as given,\n"
    "                          print a table (variant, config, median_ms, ratio to the fastest, chosen;\n"
    "                          on stderr with --json) and run the fastest; a variant that cannot load or\n"
    "                          launch on the device is shown failed\n"
    "  -p, --print N           print the first N elements of every buffer: integers exactly, floats in\n"
    "                          the fewest digits that read back as the same element\n"
    "      --dump DIR          write every buffer to DIR/arg<i>.bin (DIR must exist)\n"
    "      --check ARG=FILE[:RTOL][:nan]\n"
    "                          compare output ARG (an index or a parameter's name) element by element\n"
    "                          with FILE (raw elements of its type); repeatable\n"
    "      --check 'ARG==EXPR[:RTOL][:nan]'\n"
    "                          ... with an expression of the arguments' initial values: names (x_ptr,\n"
    "                          arg0; a buffer gives its element i), i, numbers, + - * / ( ), abs sqrt\n"
    "                          exp log sin cos tanh floor ceil min max pow, sum(BUFFER); at most 4095\n"
    "                          characters and 256 numbers, names and operations; evaluated in\n"
    "                          double and stored in the output's type. An element passes when\n"
    "                          |got - expected| <= RTOL * max(|expected|, 1); default RTOL: 0 (exact)\n"
    "                          for integers, 1e-5 fp32, 1e-12 fp64, 4e-3 fp16, 1.6e-2 bf16. Integers\n"
    "                          compare as integers; an infinity equals only the infinity of its sign,\n"
    "                          NaN nothing (with :nan, NaN equals NaN); an expected value an integer\n"
    "                          output cannot hold (inf, nan, out of its range) never matches\n"
    "      --json              one JSON object: kernel, signature, device, format, grid, load_ms,\n"
    "                          registers, spills, timing {clock, warmup, launches, min_ms, median_ms,\n"
    "                          mean_ms, max_ms, stddev_ms}, bytes, gbps, outputs_after, buffers [{arg,\n"
    "                          name, type, count, bytes, fill, file, values}], checks [{arg, name,\n"
    "                          reference, kind, rtol, nan_equal, elements, mismatches, max_abs_error,\n"
    "                          max_rel_error, ok, first_mismatches [{index, got, expected}]}]; values\n"
    "                          as numbers (integers exact; a u64 above 2^63-1 as a decimal string), nan,\n"
    "                          inf and -inf as the strings \"nan\", \"inf\", \"-inf\"\n\n"
    "Before anything runs, every argument is checked against the signature, --dump must be a writable\n"
    "directory (any DIR/arg<i>.bin there a regular file) and every --check file a readable regular file\n"
    "of its output's size.\n"
    "Exit status: 0 success; 1 failure (a kernel that faulted, a check that found mismatches: the first\n"
    "ones are named on stderr, after the report); 2 usage error.\n";

/* The best device the kernel can run on: a GPU before the host. */
static trd_device_t *pick_device(trd_runtime_t *rt, trd_kernel_t *k)
{
    uint32_t n = 0;
    trd_runtime_device_count(rt, &n);
    trd_device_t *best = NULL;
    trd_device_props_t bp = {.struct_size = sizeof bp};
    for (uint32_t i = 0; i < n; i++) {
        trd_device_t *d;
        int32_t ok = 0;
        trd_runtime_device_get(rt, i, &d);
        trd_kernel_supports(k, d, &ok);
        if (!ok)
            continue;
        trd_device_props_t p = {.struct_size = sizeof p};
        trd_device_get_props(d, &p);
        if (!best || (p.kind == TRD_DEVICE_GPU && bp.kind != TRD_DEVICE_GPU) ||
            (p.kind == bp.kind && p.memory_bytes > bp.memory_bytes)) {
            best = d;
            bp = p;
        }
    }
    return best;
}

/* The kernel again, with the --option values applied on the device's options. */
static int apply_options(trd_runtime_t *rt, trd_device_t *dev, const struct run_opts *o, trd_kernel_desc_t *desc,
                         trd_options_t **options, trd_kernel_t **k)
{
    if (trd_options_create_for_device(dev, options) != TRD_OK)
        return cli_fail("options");
    for (uint32_t i = 0; i < o->noptions; i++) {
        const char *eq = strchr(o->options[i], '=');
        char *nm = strndup(o->options[i], (size_t)(eq - o->options[i]));
        trd_status_t st = nm ? trd_options_set(*options, nm, eq + 1) : TRD_ERR_NO_MEMORY;
        free(nm);
        if (st != TRD_OK)
            return cli_usage("run", "--option %s: %s", o->options[i], trd_error_message());
    }
    trd_kernel_destroy(*k);
    *k = NULL;
    desc->options = *options;
    return trd_kernel_create(rt, desc, k) != TRD_OK ? cli_error() : 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* What one run holds, released in reverse order. */
struct run_state {
    trd_runtime_t *rt;
    trd_kernel_t *k;
    trd_options_t *options;
    struct param *params;
    uint32_t nparams;
    struct arg_spec specs[RUN_MAX_ARGS];
    trd_arg_t args[RUN_MAX_ARGS];
    trd_buffer_t *bufs[RUN_MAX_ARGS];
    void *initial[RUN_MAX_ARGS], *result[RUN_MAX_ARGS];
    uint64_t counts[RUN_MAX_ARGS], bytes[RUN_MAX_ARGS];
    struct check_result checks[RUN_MAX_CHECKS];
    double *times;
};

static void run_state_free(struct run_state *st)
{
    free(st->times);
    for (uint32_t i = 0; i < RUN_MAX_ARGS; i++) {
        trd_buffer_free(st->bufs[i]);
        free(st->result[i]);
        free(st->initial[i]);
    }
    param_free(st->params, st->nparams);
    trd_kernel_destroy(st->k);
    trd_options_destroy(st->options);
    trd_runtime_destroy(st->rt);
    free(st);
}

/* The buffers: their initial contents, a device copy of them, and room for the outputs. */
static int make_buffers(struct run_state *st, const struct run_opts *o, trd_device_t *dev, uint64_t *moved)
{
    *moved = 0;
    for (uint32_t i = 0; i < o->nargs; i++) {
        if (st->specs[i].kind == ARG_SCALAR) {
            st->args[i] = st->specs[i].scalar;
            continue;
        }
        if (st->specs[i].kind == ARG_NULL) {
            st->args[i] = trd_arg_ptr(NULL);
            continue;
        }
        int r = run_fill(&st->specs[i], i, &st->params[i], &st->initial[i], &st->counts[i]);
        if (r)
            return r;
        st->bytes[i] = st->counts[i] * (st->params[i].elem ? st->params[i].elem : 1);
        *moved += st->bytes[i];
        if (!(st->result[i] = malloc((size_t)st->bytes[i]))) {
            fprintf(stderr, "trident: argument %u: out of memory for %llu bytes\n", i,
                    (unsigned long long)st->bytes[i]);
            return CLI_FAIL;
        }
        if (trd_buffer_alloc(dev, st->bytes[i], &st->bufs[i]) != TRD_OK ||
            trd_buffer_write(st->bufs[i], 0, st->initial[i], st->bytes[i], NULL) != TRD_OK)
            return cli_fail("argument %u: device buffer of %llu bytes", i, (unsigned long long)st->bytes[i]);
        st->args[i] = trd_arg_buffer(st->bufs[i]);
    }
    return 0;
}

static int run(struct run_state *st, struct run_opts *o, const struct run_variant_opts *vo)
{
    if (!(st->rt = cli_runtime()))
        return CLI_FAIL;
    trd_kernel_desc_t desc = {.struct_size = sizeof desc, .path = o->kernel, .name = o->name,
                              .signature = o->signature};
    if (trd_kernel_create(st->rt, &desc, &st->k) != TRD_OK)
        return cli_error();
    /* every argument against the signature, the checks and the paths, before any device work */
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    trd_kernel_get_info(st->k, &ki);
    if (!(st->params = param_list(st->k, &st->nparams))) {
        fprintf(stderr, "trident: out of memory\n");
        return CLI_FAIL;
    }
    uint32_t nparams = st->nparams;
    if (o->nargs != nparams)
        return cli_usage("run", "kernel '%s' takes %u arguments (%s), %u given", ki.name, nparams, ki.signature,
                         o->nargs);
    int r;
    for (uint32_t i = 0; i < o->nargs; i++)
        if ((r = run_parse_arg(o->args[i], i, &st->params[i], &st->specs[i])) != 0)
            return r;
    if ((r = run_resolve_checks(o, st->params, nparams, st->specs)) != 0 ||
        (r = run_check_paths(o, st->params, st->specs)) != 0)
        return r;
    trd_kernel_t *rk; /* the variant that runs */
    if ((r = run_variant_pick(st->k, vo, &rk)) != 0)
        return r;
    trd_device_t *dev = NULL;
    if (o->device) {
        if (trd_runtime_device_find(st->rt, o->device, &dev) != TRD_OK)
            return cli_fail("--device %s", o->device);
    } else if (!(dev = pick_device(st->rt, rk))) {
        fprintf(stderr, "trident: no device can run '%s' (see 'trident info %s' and 'trident devices')\n", o->kernel,
                o->kernel);
        return CLI_FAIL;
    }
    if (o->noptions && ((r = apply_options(st->rt, dev, o, &desc, &st->options, &st->k)) != 0 ||
                        (r = run_variant_pick(st->k, vo, &rk)) != 0))
        return r;
    uint64_t moved;
    if ((r = make_buffers(st, o, dev, &moved)) != 0)
        return r;
    trd_launch_t launch = {.struct_size = sizeof launch, .grid = {o->grid[0], o->grid[1], o->grid[2]},
                           .num_args = o->nargs, .args = st->args};
    struct run_buffers rb = {.bufs = st->bufs, .result = st->result, .bytes = st->bytes, .n = o->nargs};
    if (vo->tune && (r = run_tune(st->k, dev, &launch, o, vo, &rb, st->initial, &rk)) != 0)
        return r;
    if ((r = run_variant_grid(st->k, rk, vo, &launch)) != 0)
        return r;
    trd_kernel_get_info(rk, &ki);
    memcpy(o->grid, launch.grid, sizeof o->grid); /* the report's */
    uint32_t nv = 1;
    trd_kernel_variant_count(st->k, &nv);
    for (uint32_t i = 0; i < nv && nv > 1 && !o->json; i++) {
        trd_variant_info_t vi;
        if (!run_variant_info(st->k, i, &vi) && vi.kernel == rk)
            printf("variant %u of %u%s%s\n", i, nv, *vi.config ? ": " : "", vi.config);
    }
    trd_device_props_t dp = {.struct_size = sizeof dp};
    trd_device_get_props(dev, &dp);
    trd_load_info_t li = {.struct_size = sizeof li};
    double t0 = now_ms();
    if (trd_kernel_load(rk, dev, &li) != TRD_OK)
        return cli_error();
    double load_ms = now_ms() - t0;
    if (!(st->times = calloc(o->repeat, sizeof *st->times))) {
        fprintf(stderr, "trident: out of memory\n");
        return CLI_FAIL;
    }
    if ((r = run_launches(rk, dev, &launch, o->warmup, o->repeat, o->after_last, &rb, st->times)) != 0)
        return r;
    struct run_stats stats;
    run_stats_of(st->times, o->repeat, &stats);
    struct expr_env env = {.params = st->params, .specs = st->specs, .data = st->initial, .counts = st->counts,
                           .nparams = nparams};
    for (uint32_t c = 0; c < o->nchecks; c++) {
        uint32_t a = o->checks[c].arg;
        if ((r = run_check(&o->checks[c], &st->params[a], st->result[a], st->counts[a], &env, &st->checks[c])) != 0)
            return r;
    }
    struct run_report rep = {.o = o, .ki = &ki, .dp = &dp, .li = &li, .load_ms = load_ms, .stats = &stats,
                             .bytes = o->bytes_given ? o->bytes : moved, .params = st->params, .specs = st->specs,
                             .result = st->result, .counts = st->counts, .checks = st->checks};
    if ((r = run_report(&rep)) != 0)
        return r;
    fflush(stdout);
    return run_report_mismatches(&rep) ? CLI_FAIL : CLI_OK;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts *o = calloc(1, sizeof *o);
    struct run_state *st = calloc(1, sizeof *st);
    int rc = CLI_FAIL;
    if (!o || !st) {
        fprintf(stderr, "trident: out of memory\n");
    } else {
        struct run_variant_opts vo;
        rc = run_variant_options(&argc, argv, &vo);
        if (!rc)
            rc = run_parse_options(argc, argv, o, run_help);
        rc = rc < 0 ? CLI_OK : rc ? rc : run(st, o, &vo);
    }
    if (st)
        run_state_free(st);
    if (o)
        run_opts_free(o);
    free(o);
    return rc;
}
