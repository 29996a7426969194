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
    "usage: trident bundle -o OUT [--name NAME] [--signature SIG] INPUT...\n\n"
    "INPUT is a Triton cache entry (<name>.json or its directory: every image beside it, with its\n"
    "metadata and the signature read from <name>.ttir), or a raw image IMAGE[@ARCH[@METADATA.json]]\n"
    "(a host shared object, cubin, PTX, HSACO, SPIR-V or zebin; ARCH such as sm90, gfx942, x86_64).\n"
    "The bundle format is described in docs/bundle.md.\n";

int cmd_bundle(int argc, char **argv)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'}, {"name", required_argument, NULL, 'n'},
                                          {"signature", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
                                          {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    const char *out = NULL, *name = NULL, *sig = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "o:n:s:h", longs, NULL)) != -1) {
        switch (c) {
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
    trd_runtime_t *rt = cli_runtime();
    if (!rt)
        return CLI_FAIL;
    int rc = CLI_FAIL;
    trd_kernel_t *kernels[MAX_TARGETS] = {0};
    char *metas[MAX_TARGETS] = {0};
    trd_bundle_target_t targets[MAX_TARGETS];
    uint32_t nt = 0;
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
            if (is_cache != (pass == 0))
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
            trd_kernel_desc_t d = {.struct_size = sizeof d, .path = path, .name = namebuf, .signature = sigbuf,
                                   .metadata = meta};
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
        }
    }
    uint64_t size;
    if (trd_bundle_write_file(out, namebuf, sigbuf, targets, nt, &size) != TRD_OK) {
        rc = cli_fail("writing '%s'", out);
        goto done;
    }
    printf("%s: kernel %s (%s), %u target%s, %llu bytes\n", out, namebuf, sigbuf, nt, nt == 1 ? "" : "s",
           (unsigned long long)size);
    rc = CLI_OK;
done:
    for (int i = 0; i < MAX_TARGETS; i++) {
        trd_kernel_destroy(kernels[i]);
        free(metas[i]);
    }
    free(sigbuf);
    free(namebuf);
    trd_runtime_destroy(rt);
    return rc;
}
