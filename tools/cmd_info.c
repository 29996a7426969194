/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_info.c: `trident info` shows what a kernel input holds. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "tools/run_tune.h"

static const char help[] =
    "usage: trident info KERNEL [--name NAME] [--signature SIG] [--json]\n\n"
    "The kernel's name, signature, launch parameters and targets (format, backend, arch, size,\n"
    "num_warps, num_ctas, warp_size, shared).\n"
    "--json prints one object with the keys name, signature, num_params, params [{index, name, type,\n"
    "pointer}], targets [{index, format, backend, arch, size, num_warps, num_ctas, warp_size, shared,\n"
    "metadata}] (metadata: the target's Triton metadata, an object, or null), and variants [{index, config,\n"
    "grid, targets}]: a bundle's compiled configurations (targets above are variant 0's, the kernel launched\n"
    "without a tuner).\n";

static json_t *targets_json(trd_kernel_t *k)
{
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    trd_kernel_get_info(k, &ki);
    json_t *ts = json_array();
    for (uint32_t i = 0; i < ki.num_targets; i++) {
        trd_target_info_t t = {.struct_size = sizeof t};
        trd_kernel_target_info(k, i, &t);
        json_t *meta = t.metadata && *t.metadata ? json_loads(t.metadata, 0, NULL) : NULL;
        json_array_append_new(ts, json_pack("{s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:o}", "index",
                                            (json_int_t)i, "format", trd_format_name(t.format), "backend", t.backend,
                                            "arch", t.arch, "size", (json_int_t)t.size, "num_warps",
                                            (json_int_t)t.num_warps, "num_ctas", (json_int_t)t.num_ctas, "warp_size",
                                            (json_int_t)t.warp_size, "shared", (json_int_t)t.shared, "metadata",
                                            meta ? meta : json_null()));
    }
    return ts;
}

static void targets_print(trd_kernel_t *k, const char *indent)
{
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    trd_kernel_get_info(k, &ki);
    for (uint32_t i = 0; i < ki.num_targets; i++) {
        trd_target_info_t t = {.struct_size = sizeof t};
        trd_kernel_target_info(k, i, &t);
        printf("%starget %u: %s %s:%s, %llu bytes, num_warps %u, num_ctas %u, warp_size %u, shared %u\n", indent, i,
               trd_format_name(t.format), t.backend, t.arch, (unsigned long long)t.size, t.num_warps, t.num_ctas,
               t.warp_size, t.shared);
    }
}

static json_t *info_json(trd_kernel_t *k, const trd_kernel_info_t *ki)
{
    uint32_t n = 0, nv = 1;
    struct param *params = param_list(k, &n);
    if (!params)
        return NULL;
    json_t *ps = json_array(), *vs = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(ps, json_pack("{s:I, s:s, s:s, s:b}", "index", (json_int_t)i, "name", params[i].name,
                                            "type", params[i].type, "pointer", params[i].pointer));
    param_free(params, n);
    trd_kernel_variant_count(k, &nv);
    for (uint32_t v = 0; v < nv; v++) {
        trd_variant_info_t vi;
        if (!run_variant_info(k, v, &vi))
            json_array_append_new(vs, json_pack("{s:I, s:s, s:s, s:o}", "index", (json_int_t)v, "config", vi.config,
                                                "grid", vi.grid, "targets", targets_json(vi.kernel)));
    }
    return json_pack("{s:s, s:s, s:I, s:o, s:o, s:o}", "name", ki->name, "signature", ki->signature, "num_params",
                     (json_int_t)ki->num_params, "params", ps, "targets", targets_json(k), "variants", vs);
}

int cmd_info(int argc, char **argv)
{
    static const struct option longs[] = {{"name", required_argument, NULL, 'n'},
                                          {"signature", required_argument, NULL, 's'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"help", no_argument, NULL, 'h'},
                                          {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    const char *name = NULL, *sig = NULL;
    int c, json = 0;
    while ((c = getopt_long(argc, argv, "n:s:jh", longs, NULL)) != -1) {
        if (c == 'n')
            name = optarg;
        else if (c == 's')
            sig = optarg;
        else if (c == 'j')
            json = 1;
        else if (c == 'h') {
            fputs(help, stdout);
            return CLI_OK;
        } else
            return cli_usage("info", "unknown option '%s'", argv[optind - 1]);
    }
    if (argc - optind != 1)
        return cli_usage("info", "expected one KERNEL");
    trd_runtime_t *rt = cli_runtime();
    if (!rt)
        return CLI_FAIL;
    trd_kernel_t *k;
    trd_kernel_desc_t desc = {.struct_size = sizeof desc, .path = argv[optind], .name = name, .signature = sig};
    if (trd_kernel_create(rt, &desc, &k) != TRD_OK) {
        int rc = cli_error();
        trd_runtime_destroy(rt);
        return rc;
    }
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    trd_kernel_get_info(k, &ki);
    int rc = CLI_OK;
    if (json) {
        rc = cli_print_json(info_json(k, &ki));
    } else {
        printf("kernel %s\nsignature %s\nparameters %u\n", ki.name, ki.signature, ki.num_params);
        uint32_t nv = 1;
        trd_kernel_variant_count(k, &nv);
        if (nv == 1)
            targets_print(k, "");
        else
            printf("variants %u\n", nv);
        for (uint32_t v = 0; v < nv && nv > 1; v++) {
            trd_variant_info_t vi;
            if (run_variant_info(k, v, &vi))
                continue;
            printf("variant %u: %s%s%s\n", v, *vi.config ? vi.config : "(no config)", *vi.grid ? "; grid " : "",
                   vi.grid);
            targets_print(vi.kernel, "  ");
        }
    }
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
    return rc;
}
