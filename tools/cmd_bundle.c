/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_bundle.c: `trident bundle` packs the images of one kernel for several
 * targets (Triton cache entries, raw images) into one bundle file. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli.h"

#define MAX_TARGETS 64

static const char help[] =
    "usage: trident bundle -o OUT [--name NAME] [--signature SIG] [--variants [--config TEXT]... [--grid RULE]...]\n"
    "       INPUT...\n\n"
    "INPUT is a Triton cache entry (<name>.json or its directory: every image beside it, with its\n"
    "metadata and the signature read from <name>.ttir), or a raw image IMAGE[@ARCH[@METADATA.json]]\n"
    "(a host shared object, cubin, PTX, HSACO, SPIR-V or zebin; ARCH such as sm90, gfx942, x86_64).\n"
    "--variants: each INPUT is one compiled configuration of the kernel (a variant, in that order), all of\n"
    "one signature, chosen among at run time by a tuner (trident run --tune); --config gives the variants'\n"
    "configuration texts in order (default: num_warps and num_stages from the metadata); --grid their launch\n"
    "dimensions rules in order: 1 to 3 comma-separated integer expressions of the kernel's integer parameters\n"
    "and the config's NAME=integer pairs ('cdiv(M,BLOCK_M),cdiv(N,BLOCK_N)'; + - * / %, cdiv, min, max).\n"
    "The bundle format is described in docs/bundle.md.\n";

/* "num_warps=4,num_stages=3" from a target's Triton metadata; NULL when it says neither. */
static char *config_of(const char *metadata)
{
    json_t *m = metadata ? json_loads(metadata, 0, NULL) : NULL;
    char buf[128] = "";
    size_t n = 0;
    static const char *const keys[] = {"num_warps", "num_stages", "num_ctas", "maxnreg"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        json_t *v = json_object_get(m, keys[i]);
        if (json_is_integer(v) && n < sizeof buf)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s=%lld", n ? "," : "", keys[i],
                                  (long long)json_integer_value(v));
    }
    json_decref(m);
    return buf[0] ? strdup(buf) : NULL;
}

int cmd_bundle(int argc, char **argv)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'}, {"name", required_argument, NULL, 'n'},
                                          {"signature", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
                                          {"variants", no_argument, NULL, 'V'}, {"config", required_argument, NULL, 'c'},
                                          {"grid", required_argument, NULL, 'g'},
                                          {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    const char *out = NULL, *name = NULL, *sig = NULL, *configs[MAX_TARGETS], *grids[MAX_TARGETS];
    int c, variants = 0, nconfigs = 0, ngrids = 0;
    while ((c = getopt_long(argc, argv, "o:n:s:h", longs, NULL)) != -1) {
        switch (c) {
        case 'V': variants = 1; break;
        case 'c':
            if (nconfigs == MAX_TARGETS)
                return cli_usage("bundle", "more than %d --config", MAX_TARGETS);
            configs[nconfigs++] = optarg;
            break;
        case 'g':
            if (ngrids == MAX_TARGETS)
                return cli_usage("bundle", "more than %d --grid", MAX_TARGETS);
            grids[ngrids++] = optarg;
            break;
        case 'o': out = optarg; break;
        case 'n': name = optarg; break;
        case 's': sig = optarg; break;
        case 'h': fputs(help, stdout); return CLI_OK;
        default: return cli_usage("bundle", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!out)
        return cli_usage("bundle", "-o OUT is required");
    int ninputs = argc - optind;
    if (ninputs <= 0 || ninputs > MAX_TARGETS)
        return cli_usage("bundle", "expected 1 .. %d inputs", MAX_TARGETS);
    if ((nconfigs || ngrids) && (!variants || nconfigs > ninputs || ngrids > ninputs))
        return cli_usage("bundle", "--config and --grid give the configurations and grid rules of --variants, at "
                                   "most one an input");
    trd_runtime_t *rt = cli_runtime();
    if (!rt)
        return CLI_FAIL;
    int rc = CLI_FAIL;
    trd_kernel_t *kernels[MAX_TARGETS] = {0};
    char *metas[MAX_TARGETS] = {0};
    trd_bundle_target_t targets[MAX_TARGETS];
    trd_bundle_variant_t vars[MAX_TARGETS];
    char *vconfigs[MAX_TARGETS] = {0};
    const char *first_input = NULL;
    uint32_t nt = 0, nv = 0;
    char *sigbuf = sig ? strdup(sig) : NULL, *namebuf = name ? strdup(name) : NULL;
    /* Two passes: cache entries first, so that their signature serves the raw images. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < ninputs; i++) {
            const char *in = argv[optind + i];
            size_t len = strlen(in);
            /* A cache entry is a directory or its metadata file; anything else is an image (IMAGE@ARCH@META.json
             * too: it ends in .json, but names no file as a whole) */
            struct stat st;
            int json = len > 5 && strcmp(in + len - 5, ".json") == 0, whole = stat(in, &st) == 0;
            int is_cache = (whole && S_ISDIR(st.st_mode)) || (json && (whole || !strchr(in, '@')));
            /* --variants: the inputs' order is the variants' */
            if (variants ? pass == 1 : is_cache != (pass == 0))
                continue;
            /* IMAGE[@ARCH[@METADATA.json]], each part whole (a long one was cut) */
            char path[4096], arch[64] = "", meta_path[4096] = "";
            const char *at = is_cache ? NULL : strchr(in, '@'), *at2 = at ? strchr(at + 1, '@') : NULL;
            size_t plen = at ? (size_t)(at - in) : len, alen = at ? (at2 ? (size_t)(at2 - at - 1) : strlen(at + 1)) : 0;
            const char *part = plen >= sizeof path ? "the image's path" : alen >= sizeof arch ? "ARCH"
                             : at2 && strlen(at2 + 1) >= sizeof meta_path ? "METADATA's path" : NULL;
            if (part) {
                rc = cli_usage("bundle", "'%.64s...': %s is longer than %zu characters", in, part,
                               (part[0] == 'A' ? sizeof arch : sizeof path) - 1);
                goto done;
            }
            snprintf(path, sizeof path, "%.*s", (int)plen, in);
            if (at)
                snprintf(arch, sizeof arch, "%.*s", (int)alen, at + 1);
            if (at2)
                snprintf(meta_path, sizeof meta_path, "%s", at2 + 1);
            char *meta = NULL;
            if (meta_path[0] && cli_read_file(meta_path, 0, &meta, NULL, "metadata"))
                goto done;
            metas[i] = meta;
            char target[128] = "";
            if (!is_cache && access(path, R_OK) != 0) {
                fprintf(stderr, "trident: cannot open '%s': %s\n", path, strerror(errno));
                goto done;
            }
            /* a variant's cache entry keeps its own signature, compared with the first's below */
            trd_kernel_desc_t d = {.struct_size = sizeof d, .path = path, .name = namebuf,
                                   .signature = variants && is_cache ? sig : sigbuf, .metadata = meta};
            if (!is_cache) {
                d.source = TRD_SOURCE_IMAGE;
                if (arch[0]) {
                    /* the backend follows from the image format: let the core sniff it, then name the arch */
                    trd_kernel_desc_t probe = d;
                    probe.signature = sigbuf ? sigbuf : "";
                    trd_kernel_t *k0;
                    if (trd_kernel_create(rt, &probe, &k0) != TRD_OK) {
                        rc = cli_error();
                        goto done;
                    }
                    trd_target_info_t t0 = {.struct_size = sizeof t0};
                    trd_kernel_target_info(k0, 0, &t0);
                    snprintf(target, sizeof target, "%s:%s", t0.backend, arch);
                    trd_kernel_destroy(k0);
                    d.target = target;
                }
            }
            if (!d.signature && !is_cache) {
                rc = cli_usage("bundle", "'%s' is a raw image: give --signature (or a Triton cache entry first)", in);
                goto done;
            }
            if (trd_kernel_create(rt, &d, &kernels[i]) != TRD_OK) {
                rc = cli_error();
                goto done;
            }
            trd_kernel_info_t ki = {.struct_size = sizeof ki};
            trd_kernel_get_info(kernels[i], &ki);
            if (!namebuf)
                namebuf = strdup(ki.name);
            if (!sigbuf)
                sigbuf = strdup(ki.signature);
            if (!namebuf || !sigbuf) {
                fprintf(stderr, "trident: out of memory\n");
                goto done;
            }
            if (strcmp(namebuf, ki.name) != 0) {
                fprintf(stderr, "trident: '%s' holds kernel '%s', the bundle is for '%s'\n", in, ki.name, namebuf);
                goto done;
            }
            if (variants && strcmp(sigbuf, ki.signature) != 0) {
                fprintf(stderr, "trident: '%s' has signature '%s', '%s' has '%s': variants must share one signature\n",
                        in, ki.signature, first_input ? first_input : "--signature", sigbuf);
                goto done;
            }
            if (!first_input)
                first_input = in;
            uint32_t first_target = nt;
            for (uint32_t t = 0; t < ki.num_targets; t++) {
                if (nt == MAX_TARGETS) {
                    rc = cli_usage("bundle", "more than %d targets", MAX_TARGETS);
                    goto done;
                }
                trd_target_info_t ti = {.struct_size = sizeof ti};
                trd_kernel_target_info(kernels[i], t, &ti);
                targets[nt] = (trd_bundle_target_t){.struct_size = sizeof(trd_bundle_target_t), .format = ti.format,
                                                    .backend = ti.backend, .arch = ti.arch, .image = ti.image,
                                                    .image_size = ti.size,
                                                    .metadata = is_cache || meta ? ti.metadata : NULL};
                nt++;
            }
            if (variants) {
                const char *given = (int)nv < nconfigs ? configs[nv] : NULL;
                vconfigs[nv] = given ? strdup(given) : config_of(targets[first_target].metadata);
                vars[nv] = (trd_bundle_variant_t){.struct_size = sizeof vars[nv], .num_targets = nt - first_target,
                                                  .targets = &targets[first_target], .config = vconfigs[nv],
                                                  .grid = (int)nv < ngrids ? grids[nv] : NULL};
                nv++;
            }
        }
    }
    uint64_t size;
    trd_status_t wst = variants ? trd_bundle_write_variants_file(out, namebuf, sigbuf, vars, nv, &size)
                                : trd_bundle_write_file(out, namebuf, sigbuf, targets, nt, &size);
    if (wst != TRD_OK) {
        rc = cli_fail("writing '%s'", out);
        goto done;
    }
    if (variants)
        printf("%s: kernel %s (%s), %u variant%s, %u target%s, %llu bytes\n", out, namebuf, sigbuf, nv,
               nv == 1 ? "" : "s", nt, nt == 1 ? "" : "s", (unsigned long long)size);
    else
        printf("%s: kernel %s (%s), %u target%s, %llu bytes\n", out, namebuf, sigbuf, nt, nt == 1 ? "" : "s",
               (unsigned long long)size);
    rc = CLI_OK;
done:
    for (int i = 0; i < MAX_TARGETS; i++) {
        trd_kernel_destroy(kernels[i]);
        free(metas[i]);
        free(vconfigs[i]);
    }
    free(sigbuf);
    free(namebuf);
    trd_runtime_destroy(rt);
    return rc;
}
