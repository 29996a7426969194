/* SPDX-License-Identifier: Apache-2.0 */
/* variant.c: a kernel of several compiled configurations (a bundle's variants, docs/bundle.md). The kernel is
 * its variant 0, so that a caller that knows nothing of variants launches that one; each other variant is a
 * kernel of its own, made with the same description, that the first owns. A tuner (core/tune.c) chooses among
 * them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

trd_status_t trd_kernel_src_take_variant(struct trd_kernel_src *src, uint32_t v, struct trd_kernel_src *out)
{
    struct trd_kernel_src dst;
    memset(&dst, 0, sizeof dst);
    uint32_t n = 0;
    for (uint32_t i = 0; i < src->ntargets; i++)
        n += src->targets[i].variant == v;
    if (!n)
        return trd_error_set(TRD_ERR_FORMAT, "kernel '%s': variant %u has no image", src->name, v);
    dst.name = trd_strdup(src->name);
    dst.origin = src->origin ? trd_strdup(src->origin) : NULL;
    dst.targets = calloc(n, sizeof *dst.targets);
    char *config = src->configs && src->configs[v] ? trd_strdup(src->configs[v]) : NULL;
    char *grid = src->grids && src->grids[v] ? trd_strdup(src->grids[v]) : NULL;
    dst.configs = calloc(1, sizeof *dst.configs);
    dst.grids = calloc(1, sizeof *dst.grids);
    trd_status_t st = TRD_OK;
    if (!dst.name || (src->origin && !dst.origin) || !dst.targets || !dst.configs || !dst.grids ||
        (src->configs && src->configs[v] && !config) || (src->grids && src->grids[v] && !grid))
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    else if (src->sig.canonical)
        st = trd_signature_copy(&src->sig, &dst.sig);
    if (st != TRD_OK) {
        free(config);
        free(grid);
        trd_kernel_src_free(&dst);
        return st;
    }
    dst.nvariants = 1;
    dst.configs[0] = config;
    dst.grids[0] = grid;
    /* move the variant's targets; the rest close up in src */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < src->ntargets; i++) {
        if (src->targets[i].variant == v) {
            dst.targets[dst.ntargets] = src->targets[i];
            dst.targets[dst.ntargets++].variant = 0;
        } else {
            src->targets[kept++] = src->targets[i];
        }
    }
    src->ntargets = kept;
    *out = dst;
    return TRD_OK;
}

/* Takes a variant's config and grid rule texts out of its (one-variant) source. */
static void take_texts(trd_kernel_t *k, uint32_t v)
{
    struct trd_kernel_src *src = &k->src;
    k->config = src->configs ? src->configs[v] : NULL;
    k->grid_text = src->grids ? src->grids[v] : NULL;
    for (uint32_t i = 0; i < src->nvariants; i++) {
        if (src->configs && i != v)
            free(src->configs[i]);
        if (src->grids && i != v)
            free(src->grids[i]);
    }
    free(src->configs);
    free(src->grids);
    src->configs = src->grids = NULL;
    src->nvariants = 1;
}

trd_status_t trd_kernel_variant_rule(trd_kernel_t *k, uint32_t v)
{
    if (!k->grid_text)
        return TRD_OK;
    char what[320];
    snprintf(what, sizeof what, "kernel '%s' variant %u", k->src.name, v);
    struct trd_grid_rule rule;
    trd_status_t st = trd_grid_rule_compile(k->grid_text, &k->src.sig, k->config, what, &rule);
    if (st != TRD_OK)
        return st;
    if (!(k->grid_rule = malloc(sizeof rule)))
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    *k->grid_rule = rule;
    return TRD_OK;
}

trd_status_t trd_kernel_variants_make(trd_kernel_t *k, const trd_kernel_desc_t *desc)
{
    uint32_t n = k->src.nvariants;
    k->variants = calloc(n, sizeof *k->variants);
    if (!k->variants)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    k->variants[0] = k;
    k->nvariants = n;
    trd_status_t st = TRD_OK;
    for (uint32_t v = n; v-- > 1 && st == TRD_OK;) {
        trd_kernel_t *vk = trd_kernel_new(k->rt);
        if (!vk) {
            st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
            break;
        }
        k->variants[v] = vk;
        if ((st = trd_kernel_src_take_variant(&k->src, v, &vk->src)) == TRD_OK) {
            take_texts(vk, 0);
            if ((st = trd_kernel_finish(vk, desc)) == TRD_OK)
                st = trd_kernel_variant_rule(vk, v);
        }
        if (st != TRD_OK)
            st = trd_error_wrap(st, "variant %u", v);
    }
    if (st != TRD_OK)
        return st;
    take_texts(k, 0); /* what is left is variant 0 (its rule compiled once its signature is final) */
    return TRD_OK;
}

TRD_API trd_status_t trd_kernel_variant_count(const trd_kernel_t *k, uint32_t *count)
{
    if (!k || !count)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_variant_count: NULL argument");
    *count = k->nvariants;
    return TRD_OK;
}

/* Variant `index` of k (0 is k itself). */
static trd_status_t variant_at(const trd_kernel_t *k, uint32_t index, trd_kernel_t **out)
{
    if (index >= k->nvariants)
        return trd_error_set(TRD_ERR_NOT_FOUND, "kernel '%s' has %u variant%s: no variant %u", k->src.name,
                             k->nvariants, k->nvariants == 1 ? "" : "s", index);
    *out = index ? k->variants[index] : (trd_kernel_t *)k;
    return TRD_OK;
}

TRD_API trd_status_t trd_kernel_variant_grid(const trd_kernel_t *k, uint32_t index, const trd_arg_t *args,
                                             uint32_t num_args, uint32_t grid[3])
{
    if (!k || !grid)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_variant_grid: NULL argument");
    trd_kernel_t *vk = NULL;
    trd_status_t st = variant_at(k, index, &vk);
    if (st != TRD_OK)
        return st;
    if (!vk->grid_rule)
        return trd_error_set(TRD_ERR_NOT_FOUND, "kernel '%s': variant %u has no launch dimensions rule", k->src.name,
                             index);
    return trd_grid_rule_eval(vk->grid_rule, args, num_args, k->src.name, grid);
}

TRD_API trd_status_t trd_kernel_variant(trd_kernel_t *k, uint32_t index, trd_variant_info_t *info)
{
    if (!k || !info)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_variant: NULL argument");
    trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_variant_info_t), "trd_variant_info_t");
    if (st != TRD_OK)
        return st;
    trd_kernel_t *vk = NULL;
    if ((st = variant_at(k, index, &vk)) != TRD_OK)
        return st;
    trd_variant_info_t v = {.struct_size = sizeof v, .index = index, .kernel = vk,
                            .config = vk->config ? vk->config : "", .grid = vk->grid_text ? vk->grid_text : ""};
    trd_struct_fill(info, &v, sizeof v);
    return TRD_OK;
}
