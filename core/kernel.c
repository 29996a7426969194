/* SPDX-License-Identifier: Apache-2.0 */
/* kernel.c: a kernel is an image per target plus a signature; it is loaded
 * per device on first use and launched without locks or allocation after. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/internal.h"

#define MAX_INPUT ((size_t)1 << 30)
/* Launch arrays live on the stack: the signature parser caps parameters. */
#define MAX_LAUNCH_PARAMS TRD_MAX_LAUNCH_PARAMS

static int path_is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* "cuda:sm90" -> backend, arch. */
static trd_status_t split_target(const char *target, int32_t format, char **backend, char **arch)
{
    const char *colon = target ? strchr(target, ':') : NULL;
    if (target && !colon) {
        *backend = trd_strdup(target);
        *arch = trd_strdup("");
    } else if (target) {
        *backend = trd_strndup(target, (size_t)(colon - target));
        *arch = trd_strdup(colon + 1);
    } else {
        *backend = trd_strdup(trd_format_backend(format));
        *arch = trd_strdup("");
    }
    if (!*backend || !*arch) {
        free(*backend);
        free(*arch);
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    return TRD_OK;
}

static trd_status_t read_raw_image(const trd_kernel_desc_t *d, const void *data, size_t size, const char *what,
                                   struct trd_kernel_src *out)
{
    int32_t format = d->format ? d->format : trd_format_sniff(data, size, d->path);
    if (format == TRD_FORMAT_UNKNOWN || strcmp(trd_format_name(format), "unknown") == 0)
        return trd_error_set(TRD_ERR_FORMAT,
                             "%s: not a kernel image trident knows (cubin, PTX, fatbin, HSACO, SPIR-V, zebin, "
                             "host shared object, trident bundle) and no format was given",
                             what);
    struct trd_kernel_src src;
    memset(&src, 0, sizeof src);
    struct trd_meta meta;
    memset(&meta, 0, sizeof meta);
    trd_status_t st;
    char *backend = NULL, *arch = NULL;
    if ((st = split_target(d->target, format, &backend, &arch)) != TRD_OK)
        return st;
    if (strcmp(backend, trd_format_backend(format)) != 0) {
        st = trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: a %s image cannot target backend '%s'", what,
                           trd_format_name(format), backend);
        goto fail;
    }
    if (d->metadata) {
        char mwhat[600];
        trd_fmt(mwhat, sizeof mwhat, "metadata of %s", what);
        if ((st = trd_meta_parse(d->metadata, strlen(d->metadata), mwhat, &meta)) != TRD_OK)
            goto fail;
        if (d->name && strcmp(d->name, meta.name) != 0) {
            st = trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: the name '%s' differs from the metadata's '%s'", what,
                               d->name, meta.name);
            goto fail;
        }
        if (*arch) {
            free(meta.arch);
            meta.arch = arch;
            arch = NULL;
        }
    } else {
        if (!d->name || !*d->name) {
            st = trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: a raw image needs the kernel's name (its entry symbol)",
                               what);
            goto fail;
        }
        if ((st = trd_meta_default(d->name, backend, arch, &meta)) != TRD_OK)
            goto fail;
    }
    src.name = trd_strdup(meta.name);
    src.targets = calloc(1, sizeof *src.targets);
    uint8_t *img = malloc(size ? size : 1);
    if (!src.name || !src.targets || !img) {
        free(img);
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    memcpy(img, data, size);
    src.targets[0].format = format;
    src.targets[0].image = img;
    src.targets[0].size = size;
    trd_sha256(img, size, src.targets[0].sha256);
    src.targets[0].meta = meta;
    memset(&meta, 0, sizeof meta);
    src.ntargets = 1;
    free(backend);
    free(arch);
    *out = src;
    return TRD_OK;
fail:
    free(backend);
    free(arch);
    trd_meta_free(&meta);
    trd_kernel_src_free(&src);
    return st;
}

static trd_status_t read_source(const trd_kernel_desc_t *d, struct trd_kernel_src *src)
{
    int32_t source = d->source;
    if (source < TRD_SOURCE_AUTO || source > TRD_SOURCE_IMAGE)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_desc_t.source %d is not a trd_kernel_source", source);
    if (!d->path && !d->data)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_desc_t needs a path or data");
    if (d->path && (source == TRD_SOURCE_TRITON_CACHE ||
                    (source == TRD_SOURCE_AUTO && (path_is_dir(d->path) || ends_with(d->path, ".json")))))
        return trd_triton_cache_read(d->path, d->name, d->signature == NULL, src);
    if (source == TRD_SOURCE_TRITON_CACHE)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "a Triton cache entry is read from a path, not bytes");
    const void *data = d->data;
    size_t size = (size_t)d->size;
    char *owned = NULL;
    char what[600];
    if (d->path) {
        trd_status_t st = trd_file_read(d->path, MAX_INPUT, &owned, &size);
        if (st != TRD_OK)
            return st;
        data = owned;
        snprintf(what, sizeof what, "'%s'", d->path);
    } else {
        if (d->size == 0 || d->size > MAX_INPUT)
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel bytes: size %llu is outside 1 .. %zu",
                                 (unsigned long long)d->size, MAX_INPUT);
        snprintf(what, sizeof what, "kernel bytes (%zu)", size);
    }
    trd_status_t st;
    if (source == TRD_SOURCE_BUNDLE || (source == TRD_SOURCE_AUTO && trd_bundle_is(data, size)))
        st = trd_bundle_read(data, size, what, src);
    else
        st = read_raw_image(d, data, size, what, src);
    free(owned);
    return st;
}

/* Launch-stage values a caller's options set explicitly must agree with
 * what the image was compiled for; raw images without metadata take them. */
static trd_status_t apply_launch_options(struct trd_kernel_src *src, const trd_options_t *o)
{
    static const char *const names[] = {"num_warps", "num_ctas", "warp_size"};
    for (uint32_t t = 0; t < src->ntargets; t++) {
        struct trd_meta *m = &src->targets[t].meta;
        int raw = !m->from_json;
        const char *ob = NULL;
        trd_options_backend(o, &ob);
        if (!ob || strcmp(ob, m->backend) != 0)
            continue;
        uint32_t *fields[] = {&m->num_warps, &m->num_ctas, &m->warp_size};
        for (size_t i = 0; i < TRD_ARRAY_SIZE(names); i++) {
            int32_t set = 0;
            int64_t v;
            if (trd_options_is_set(o, names[i], &set) != TRD_OK || !set ||
                trd_options_get_int(o, names[i], &v) != TRD_OK)
                continue;
            if (raw) {
                *fields[i] = (uint32_t)v;
            } else if ((uint64_t)v != *fields[i]) {
                return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                                     "kernel '%s': option %s=%lld conflicts with the %s image, compiled for %s=%u",
                                     src->name, names[i], (long long)v, trd_format_name(src->targets[t].format),
                                     names[i], *fields[i]);
            }
        }
        static const char *const flags[] = {"launch_cooperative_grid", "launch_pdl"};
        static const uint32_t bits[] = {TRD_MODULE_COOPERATIVE, TRD_MODULE_PDL};
        for (size_t i = 0; i < TRD_ARRAY_SIZE(flags); i++) {
            int32_t set = 0, v = 0;
            if (trd_option_exists(ob, flags[i], NULL, &set) != TRD_OK || !set)
                continue;
            if (trd_options_is_set(o, flags[i], &set) != TRD_OK || !set ||
                trd_options_get_bool(o, flags[i], &v) != TRD_OK)
                continue;
            if (raw || !(m->flags & bits[i]) != !v)
                m->flags = v ? (m->flags | bits[i]) : (m->flags & ~bits[i]);
        }
    }
    return TRD_OK;
}

trd_kernel_t *trd_kernel_new(trd_runtime_t *rt)
{
    trd_kernel_t *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->rt = rt;
    k->nvariants = 1;
    pthread_mutex_init(&k->load_lock, NULL);
    return k;
}

trd_status_t trd_kernel_finish(trd_kernel_t *k, const trd_kernel_desc_t *desc)
{
    trd_status_t st;
    trd_runtime_t *rt = k->rt;
    if (desc->signature) {
        struct trd_signature given;
        char what[300];
        snprintf(what, sizeof what, "signature of kernel '%s'", k->src.name);
        if ((st = trd_signature_parse(desc->signature, what, &given)) != TRD_OK)
            return st;
        if (k->src.sig.canonical) {
            struct trd_signature merged;
            snprintf(what, sizeof what, "kernel '%s'", k->src.name);
            st = trd_signature_merge(&k->src.sig, &given, what, &merged);
            trd_signature_free(&given);
            if (st != TRD_OK)
                return st;
            given = merged;
        }
        trd_signature_free(&k->src.sig);
        k->src.sig = given;
    }
    /* a host image declaring its signature: checked against the kernel's, or taken as it */
    if ((st = trd_host_signatures_check(&k->src)) != TRD_OK)
        return st;
    if (!k->src.sig.canonical)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                             "kernel '%s': its signature is unknown (no Triton IR beside it): pass one, e.g. "
                             "\"*fp32,*fp32,i32\"",
                             k->src.name);
    if (k->src.sig.num_params > MAX_LAUNCH_PARAMS)
        return trd_error_set(TRD_ERR_LIMIT, "kernel '%s' has %u parameters, more than %d", k->src.name,
                             k->src.sig.num_params, MAX_LAUNCH_PARAMS);
    if (desc->options) {
        if ((st = trd_options_copy(desc->options, &k->options)) != TRD_OK)
            return st;
        if ((st = apply_launch_options(&k->src, k->options)) != TRD_OK)
            return st;
    }
    if (!(k->iname = trd_name_intern(k->src.name)))
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    k->ndev = rt->ndevices;
    k->slots = calloc(k->ndev ? k->ndev : 1, sizeof *k->slots);
    k->load_status = calloc(k->ndev ? k->ndev : 1, sizeof *k->load_status);
    k->load_error = calloc(k->ndev ? k->ndev : 1, sizeof *k->load_error);
    if (!k->slots || !k->load_status || !k->load_error)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    return TRD_OK;
}

TRD_API trd_status_t trd_kernel_create(trd_runtime_t *rt, const trd_kernel_desc_t *desc, trd_kernel_t **out)
{
    if (!rt || !desc || !out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_create: NULL argument");
    trd_status_t st = trd_struct_check(desc->struct_size, sizeof(trd_kernel_desc_t), "trd_kernel_desc_t");
    if (st != TRD_OK)
        return st;
    trd_kernel_t *k = trd_kernel_new(rt);
    if (!k)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    if ((st = read_source(desc, &k->src)) != TRD_OK)
        goto fail;
    if (desc->path && !(k->src.origin = trd_strdup(desc->path))) {
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    if (k->src.nvariants >= 1 && (st = trd_kernel_variants_make(k, desc)) != TRD_OK)
        goto fail;
    if ((st = trd_kernel_finish(k, desc)) != TRD_OK || (st = trd_kernel_variant_rule(k, 0)) != TRD_OK)
        goto fail;
    *out = k;
    return TRD_OK;
fail:
    if (k->src.origin)
        st = trd_error_wrap(st, "'%s'", k->src.origin);
    trd_kernel_destroy(k);
    return st;
}

TRD_API void trd_kernel_destroy(trd_kernel_t *k)
{
    if (!k)
        return;
    for (uint32_t i = 0; i < k->ndev; i++) {
        struct trd_loaded *l = atomic_load(&k->slots[i]);
        if (l) {
            l->dev->drv->ops->module_unload(l->module);
            free(l);
        }
        if (k->load_error)
            free(k->load_error[i]);
    }
    free(k->slots);
    free(k->load_status);
    free(k->load_error);
    for (uint32_t v = 1; v < k->nvariants && k->variants; v++)
        trd_kernel_destroy(k->variants[v]);
    free(k->variants);
    free(k->config);
    free(k->grid_text);
    free(k->grid_rule);
    trd_options_destroy(k->options);
    trd_kernel_src_free(&k->src);
    pthread_mutex_destroy(&k->load_lock);
    free(k);
}

TRD_API trd_status_t trd_kernel_get_info(const trd_kernel_t *k, trd_kernel_info_t *info)
{
    if (!k || !info)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_get_info: NULL argument");
    trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_kernel_info_t), "trd_kernel_info_t");
    if (st != TRD_OK)
        return st;
    trd_kernel_info_t full = {
        .struct_size = sizeof full,
        .num_params = k->src.sig.num_params,
        .num_targets = k->src.ntargets,
        .name = k->src.name,
        .signature = k->src.sig.canonical,
    };
    trd_struct_fill(info, &full, sizeof full);
    return TRD_OK;
}

/* The index-th image, for every call that takes an image's index (a kernel has at least one). */
static trd_status_t target_at(const trd_kernel_t *k, uint32_t index, const struct trd_target **out)
{
    if (index >= k->src.ntargets)
        return trd_error_set(TRD_ERR_NOT_FOUND, "kernel '%s' has %u targets, 0 .. %u: no target %u", k->src.name,
                             k->src.ntargets, k->src.ntargets - 1, index);
    *out = &k->src.targets[index];
    return TRD_OK;
}

TRD_API trd_status_t trd_kernel_target_info(const trd_kernel_t *k, uint32_t index, trd_target_info_t *info)
{
    if (!k || !info)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_target_info: NULL argument");
    trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_target_info_t), "trd_target_info_t");
    const struct trd_target *t = NULL;
    if (st != TRD_OK || (st = target_at(k, index, &t)) != TRD_OK)
        return st;
    trd_target_info_t full = {
        .struct_size = sizeof full,
        .format = t->format,
        .size = t->size,
        .image = t->image,
        .backend = t->meta.backend,
        .arch = t->meta.arch,
        .metadata = t->meta.json,
        .num_warps = t->meta.num_warps,
        .num_ctas = t->meta.num_ctas,
        .shared = t->meta.shared,
        .warp_size = t->meta.warp_size,
    };
    trd_struct_fill(info, &full, sizeof full);
    return TRD_OK;
}

/* No device: the rule of trd_prepared_scratch and trd_kernel_launch (core/scratch.c) for one image. */
TRD_API trd_status_t trd_kernel_scratch(const trd_kernel_t *k, uint32_t target, const uint32_t grid[3],
                                        uint64_t *global_bytes, uint64_t *profile_bytes)
{
    if (!k || !grid)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_scratch: NULL argument");
    const struct trd_target *t = NULL;
    trd_status_t st = target_at(k, target, &t);
    if (st != TRD_OK || (st = trd_grid_check(grid, k->src.name)) != TRD_OK)
        return st;
    char where[160];
    trd_fmt(where, sizeof where, "target %u (%s%s%s)", target, t->meta.backend, *t->meta.arch ? ":" : "",
            t->meta.arch);
    uint64_t need[2];
    if ((st = trd_scratch_of(&t->meta, grid, k->src.name, where, need)) != TRD_OK)
        return st;
    if (global_bytes)
        *global_bytes = need[0];
    if (profile_bytes)
        *profile_bytes = need[1];
    return TRD_OK;
}

static const struct trd_target *pick_target(const trd_kernel_t *k, const trd_device_t *dev)
{
    const struct trd_target *best = NULL;
    int best_rank = 0;
    for (uint32_t i = 0; i < k->src.ntargets; i++) {
        int r = trd_target_rank(&k->src.targets[i], &dev->props);
        if (r > best_rank) {
            best = &k->src.targets[i];
            best_rank = r;
        }
    }
    return best;
}

TRD_API trd_status_t trd_kernel_supports(const trd_kernel_t *k, const trd_device_t *dev, int32_t *supported)
{
    if (!k || !dev || !supported)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_supports: NULL argument");
    *supported = pick_target(k, dev) != NULL;
    return TRD_OK;
}

/* " from '<path>'" for messages about a kernel read from a file, else "". */
static const char *from_origin(const trd_kernel_t *k, char *buf, size_t cap)
{
    if (!k->src.origin)
        return "";
    snprintf(buf, cap, " from '%s'", k->src.origin);
    return buf;
}

static trd_status_t no_target(const trd_kernel_t *k, const trd_device_t *dev)
{
    struct trd_str s;
    trd_str_init(&s);
    for (uint32_t i = 0; i < k->src.ntargets; i++)
        trd_str_appendf(&s, "%s%s for %s:%s", i ? ", " : "", trd_format_name(k->src.targets[i].format),
                        k->src.targets[i].meta.backend, k->src.targets[i].meta.arch);
    char from[1024];
    trd_status_t st = trd_error_set(TRD_ERR_UNSUPPORTED, "kernel '%s'%s has no image %s (%s %s) can run: it has %s",
                                    k->src.name, from_origin(k, from, sizeof from), dev->uri, dev->props.backend,
                                    dev->props.arch, s.buf ? s.buf : "none");
    trd_str_free(&s);
    return st;
}

static trd_status_t load_for(trd_kernel_t *k, trd_device_t *dev, struct trd_loaded **out)
{
    const struct trd_target *t = pick_target(k, dev);
    if (!t)
        return no_target(k, dev);
    void *h;
    trd_status_t st = trd_device_handle(dev, &h);
    if (st != TRD_OK)
        return st;
    trd_options_t *opts = NULL;
    if ((st = trd_options_for_device_config(dev, dev->rt->config, &opts)) != TRD_OK)
        return st;
    if (k->options) {
        const char *ob = NULL;
        trd_options_backend(k->options, &ob);
        if (ob && strcmp(ob, dev->props.backend) == 0 && (st = trd_options_merge(opts, k->options)) != TRD_OK) {
            trd_options_destroy(opts);
            return st;
        }
    }
    char label[320];
    snprintf(label, sizeof label, "kernel '%s'", k->src.name);
    trd_driver_module_desc_t md = {
        .struct_size = sizeof md,
        .format = t->format,
        .image = t->image,
        .image_size = t->size,
        .entry = k->src.name,
        .arch = t->meta.arch,
        .label = label,
        .num_warps = t->meta.num_warps,
        .warp_size = t->meta.warp_size,
        .num_ctas = t->meta.num_ctas,
        .shared = t->meta.shared,
        .flags = t->meta.flags,
        .num_params = k->src.sig.num_params,
        .global_scratch_size = t->meta.global_scratch_size,
        .global_scratch_align = t->meta.global_scratch_align,
        .profile_scratch_size = t->meta.profile_scratch_size,
        .profile_scratch_align = t->meta.profile_scratch_align,
        .options = opts,
        .cache_dir = dev->rt->cache_dir,
        .image_hash = t->sha256,
        .metadata = t->meta.json,
    };
    struct trd_loaded *l = calloc(1, sizeof *l);
    trd_param_info_t *params = calloc(k->src.sig.num_params + 1, sizeof *params);
    if (!l || !params) {
        free(l);
        free(params);
        trd_options_destroy(opts);
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    for (uint32_t i = 0, j = 0; i < k->src.sig.count; i++)
        if (k->src.sig.params[i].type != TRD_T_CONSTEXPR)
            trd_param_info_of(&k->src.sig.params[i], &params[j++]);
    md.params = params;
    l->info.struct_size = sizeof l->info;
    st = dev->drv->ops->module_load(h, &md, &l->module, &l->info);
    free(params);
    trd_options_destroy(opts);
    if (st != TRD_OK) {
        free(l);
        char from[1024];
        return trd_error_wrap(st, "loading %s%s (%s for %s) on %s", label, from_origin(k, from, sizeof from),
                              trd_format_name(t->format), *t->meta.arch ? t->meta.arch : t->meta.backend, dev->uri);
    }
    l->info.struct_size = sizeof l->info;
    l->info.format = t->format;
    l->info.block_size = t->meta.num_warps * t->meta.warp_size;
    l->info.shared = t->meta.shared;
    if (l->info.max_threads_per_block && l->info.block_size > l->info.max_threads_per_block) {
        uint32_t bs = l->info.block_size, mt = l->info.max_threads_per_block;
        dev->drv->ops->module_unload(l->module);
        free(l);
        return trd_error_set(TRD_ERR_LIMIT,
                             "%s on %s: num_warps %u x warp_size %u = %u threads per block, more than the %u "
                             "the compiled function allows (registers %s)",
                             label, dev->uri, t->meta.num_warps, t->meta.warp_size, bs, mt,
                             "per thread limit the block size");
    }
    l->dev = dev;
    l->target = t;
    trd_log(TRD_LOG_INFO, "loaded %s on %s: %s for %s:%s, block %u, shared %u, registers %u, spills %u%s", label,
            dev->uri, trd_format_name(t->format), t->meta.backend, t->meta.arch, l->info.block_size, l->info.shared,
            l->info.registers, l->info.spills, l->info.from_cache ? " (JIT cache)" : "");
    *out = l;
    return TRD_OK;
}

trd_status_t trd_kernel_loaded(trd_kernel_t *k, trd_device_t *dev, struct trd_loaded **out)
{
    if (dev->rt != k->rt || dev->index >= k->ndev)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s' and device %s belong to different runtimes",
                             k->src.name, dev->uri);
    struct trd_loaded *l = atomic_load_explicit(&k->slots[dev->index], memory_order_acquire);
    if (l) {
        *out = l;
        return TRD_OK;
    }
    pthread_mutex_lock(&k->load_lock);
    trd_status_t st = TRD_OK;
    l = atomic_load_explicit(&k->slots[dev->index], memory_order_relaxed);
    if (!l) {
        if (k->load_status[dev->index] != TRD_OK) {
            st = trd_error_set(k->load_status[dev->index], "%s", k->load_error[dev->index]);
        } else if ((st = load_for(k, dev, &l)) == TRD_OK) {
            atomic_store_explicit(&k->slots[dev->index], l, memory_order_release);
        } else if (st != TRD_ERR_NO_MEMORY) {
            /* Remember the failure: a launch loop must not retry a failing JIT. */
            k->load_status[dev->index] = st;
            k->load_error[dev->index] = trd_strdup(trd_error_message());
            if (!k->load_error[dev->index])
                k->load_status[dev->index] = TRD_OK;
        }
    }
    pthread_mutex_unlock(&k->load_lock);
    if (st == TRD_OK)
        *out = l;
    return st;
}

TRD_API trd_status_t trd_kernel_load(trd_kernel_t *k, trd_device_t *dev, trd_load_info_t *info)
{
    if (!k || !dev)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_load: NULL argument");
    if (info) {
        trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_load_info_t), "trd_load_info_t");
        if (st != TRD_OK)
            return st;
    }
    struct trd_loaded *l;
    trd_status_t st = trd_kernel_loaded(k, dev, &l);
    if (st != TRD_OK)
        return st;
    if (info)
        trd_struct_fill(info, &l->info, sizeof l->info);
    return TRD_OK;
}

/* The launch path: no lock and no allocation once loaded. */
TRD_API trd_status_t trd_kernel_launch(trd_kernel_t *k, const trd_launch_t *launch)
{
    if (!k || !launch)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_launch: NULL argument");
    if (launch->struct_size < sizeof(trd_launch_t))
        return trd_struct_check(launch->struct_size, sizeof(trd_launch_t), "trd_launch_t");
    trd_device_t *dev;
    void *stream = NULL, *native = NULL;
    if (launch->stream) {
        dev = launch->stream->dev;
        stream = launch->stream->h;
    } else {
        dev = launch->device;
        native = launch->native_stream;
        if (!dev)
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': the launch names neither a stream nor a device",
                                 k->src.name);
    }
    if (dev->rt != k->rt)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s' and device %s belong to different runtimes",
                             k->src.name, dev->uri);
    trd_status_t st = trd_grid_check(launch->grid, k->src.name);
    if (st != TRD_OK)
        return st;
    struct trd_loaded *l = atomic_load_explicit(&k->slots[dev->index], memory_order_acquire);
    if (!l && (st = trd_kernel_loaded(k, dev, &l)) != TRD_OK)
        return st;
    uint64_t storage[MAX_LAUNCH_PARAMS];
    void *params[MAX_LAUNCH_PARAMS + TRD_DRIVER_EXTRA_PARAMS];
    uint32_t sizes[MAX_LAUNCH_PARAMS + TRD_DRIVER_EXTRA_PARAMS];
    if ((st = trd_args_pack(k, dev, launch->args, launch->num_args, storage, params, sizes)) != TRD_OK)
        return st;
    if (launch->grid[0] == 0 || launch->grid[1] == 0 || launch->grid[2] == 0)
        return TRD_OK;
    uint64_t need[2];
    if ((st = trd_scratch_of(&l->target->meta, launch->grid, k->src.name, dev->uri, need)) != TRD_OK)
        return st;
    trd_driver_launch_t dl = {
        .struct_size = sizeof dl,
        .num_params = k->src.sig.num_params,
        .grid = {launch->grid[0], launch->grid[1], launch->grid[2]},
        .params = params,
        .param_sizes = sizes,
        .global_scratch = launch->global_scratch,
        .profile_scratch = launch->profile_scratch,
        .global_scratch_bytes = need[0],
        .profile_scratch_bytes = need[1],
    };
    st = dev->drv->ops->launch(l->module, stream, native, &dl);
    if (st != TRD_OK)
        return trd_error_wrap(st, "launching kernel '%s' on %s", k->src.name, dev->uri);
    /* named by a failed synchronize; written only when it changes, to keep the line shared */
    if (stream && atomic_load_explicit(&launch->stream->last_kernel, memory_order_relaxed) != k->iname)
        atomic_store_explicit(&launch->stream->last_kernel, k->iname, memory_order_relaxed);
    return TRD_OK;
}
