/* SPDX-License-Identifier: Apache-2.0 */
/* bundle.c: the trident kernel bundle, one kernel for several targets in one
 * file (docs/bundle.md). Every length and offset is checked before use. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define BUNDLE_MAGIC "TRDBUNDL"
#define BUNDLE_VERSION 1u          /* one configuration: what trident wrote before variants */
#define BUNDLE_VERSION_VARIANTS 2u /* "variants" and a "variant" per target */
#define BUNDLE_MAX_VARIANTS 64u
#define BUNDLE_MAX_ALL_TARGETS (BUNDLE_MAX_TARGETS * 16u)
#define BUNDLE_HEADER 32u
#define BUNDLE_MAX_TARGETS 64u
#define BUNDLE_MAX_MANIFEST (16u << 20)

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

int trd_bundle_is(const void *data, size_t size)
{
    return size >= 8 && memcmp(data, BUNDLE_MAGIC, 8) == 0;
}

void trd_kernel_src_free(struct trd_kernel_src *src)
{
    if (!src)
        return;
    free(src->name);
    free(src->origin);
    trd_signature_free(&src->sig);
    for (uint32_t i = 0; i < src->ntargets; i++)
        trd_target_free(&src->targets[i]);
    free(src->targets);
    for (uint32_t v = 0; v < src->nvariants; v++) {
        if (src->configs)
            free(src->configs[v]);
        if (src->grids)
            free(src->grids[v]);
    }
    free(src->configs);
    free(src->grids);
    memset(src, 0, sizeof *src);
}

static int hex_digest(const char *s, uint8_t out[32])
{
    if (!s || strlen(s) != 64)
        return 0;
    for (int i = 0; i < 32; i++) {
        unsigned v = 0;
        for (int k = 0; k < 2; k++) {
            char c = s[2 * i + k];
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= (unsigned)(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= (unsigned)(c - 'a' + 10);
            else
                return 0;
        }
        out[i] = (uint8_t)v;
    }
    return 1;
}

static trd_status_t read_target(const uint8_t *bytes, size_t size, uint64_t reserved_end,
                                json_t *t, uint32_t index, const char *name, const char *what,
                                struct trd_target *out)
{
    char where[256];
    snprintf(where, sizeof where, "%s: target %u", what, index);
    if (!json_is_object(t))
        return trd_error_set(TRD_ERR_FORMAT, "%s is not a JSON object", where);
    json_t *jf = json_object_get(t, "format"), *jb = json_object_get(t, "backend"),
           *ja = json_object_get(t, "arch"), *jo = json_object_get(t, "offset"),
           *js = json_object_get(t, "size"), *jh = json_object_get(t, "sha256"),
           *jm = json_object_get(t, "metadata");
    if (!json_is_string(jf) || !json_is_string(jb) || !json_is_string(ja) || !json_is_integer(jo) ||
        !json_is_integer(js) || !json_is_string(jh))
        return trd_error_set(TRD_ERR_FORMAT,
                             "%s needs string keys format, backend, arch, sha256 and integer keys offset, size",
                             where);
    int32_t format = trd_format_parse(json_string_value(jf));
    if (format == TRD_FORMAT_UNKNOWN) {
        char shown[64];
        trd_quote(json_string_value(jf), json_string_length(jf), shown, sizeof shown);
        return trd_error_set(TRD_ERR_FORMAT,
                             "%s: format '%s' is not one of cubin, ptx, fatbin, hsaco, spirv, zebin, so",
                             where, shown);
    }
    const char *backend = json_string_value(jb);
    if (strcmp(backend, trd_format_backend(format)) != 0) {
        char shown[64];
        trd_quote(backend, strlen(backend), shown, sizeof shown);
        return trd_error_set(TRD_ERR_FORMAT, "%s: a %s image belongs to backend '%s', not '%s'", where,
                             trd_format_name(format), trd_format_backend(format), shown);
    }
    json_int_t off = json_integer_value(jo), len = json_integer_value(js);
    if (off < 0 || len <= 0 || (uint64_t)off < reserved_end || (uint64_t)off > size ||
        (uint64_t)len > size - (uint64_t)off)
        return trd_error_set(TRD_ERR_FORMAT,
                             "%s: image range offset %lld size %lld is outside the bundle's %zu bytes "
                             "(or overlaps its header)",
                             where, (long long)off, (long long)len, size);
    uint8_t want[32];
    if (!hex_digest(json_string_value(jh), want))
        return trd_error_set(TRD_ERR_FORMAT, "%s: sha256 must be 64 lowercase hex digits", where);
    struct trd_target tg;
    memset(&tg, 0, sizeof tg);
    tg.format = format;
    tg.size = (uint64_t)len;
    trd_sha256(bytes + off, (size_t)len, tg.sha256);
    if (memcmp(tg.sha256, want, 32) != 0)
        return trd_error_set(TRD_ERR_FORMAT, "%s: the image's SHA-256 does not match the manifest (corrupted bundle)",
                             where);
    const char *arch = json_string_value(ja);
    trd_status_t st;
    if (jm && !json_is_null(jm)) {
        if (!json_is_object(jm))
            return trd_error_set(TRD_ERR_FORMAT, "%s: metadata must be an object", where);
        char *text = json_dumps(jm, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text)
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        char mwhat[300];
        snprintf(mwhat, sizeof mwhat, "%s metadata", where);
        st = trd_meta_parse(text, strlen(text), mwhat, &tg.meta);
        free(text);
        if (st != TRD_OK)
            return st;
        if (strcmp(tg.meta.backend, backend) != 0 || strcmp(tg.meta.name, name) != 0) {
            trd_status_t e = trd_error_set(TRD_ERR_FORMAT,
                                           "%s: metadata says kernel '%s' for backend '%s', the bundle '%s' for '%s'",
                                           where, tg.meta.name, tg.meta.backend, name, backend);
            trd_meta_free(&tg.meta);
            return e;
        }
        /* The manifest's arch is authoritative (Triton writes CUDA's as 90). */
        char *a = trd_strdup(arch);
        if (!a) {
            trd_meta_free(&tg.meta);
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        }
        free(tg.meta.arch);
        tg.meta.arch = a;
    } else if ((st = trd_meta_default(name, backend, arch, &tg.meta)) != TRD_OK) {
        return st;
    }
    tg.image = malloc((size_t)len);
    if (!tg.image) {
        trd_meta_free(&tg.meta);
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory for %s (%lld bytes)", where, (long long)len);
    }
    memcpy(tg.image, bytes + off, (size_t)len);
    *out = tg;
    return TRD_OK;
}

/* Version 2's "variants": an array of objects, each with an optional "config" string. */
static trd_status_t read_variants(json_t *m, const char *what, struct trd_kernel_src *src)
{
    json_t *jv = json_object_get(m, "variants");
    size_t nv = json_array_size(jv);
    if (!json_is_array(jv) || nv == 0 || nv > BUNDLE_MAX_VARIANTS)
        return trd_error_set(TRD_ERR_FORMAT, "%s: a version-%u bundle needs 'variants', an array of 1 .. %u objects",
                             what, BUNDLE_VERSION_VARIANTS, BUNDLE_MAX_VARIANTS);
    src->configs = calloc(nv, sizeof *src->configs);
    src->grids = calloc(nv, sizeof *src->grids);
    if (!src->configs || !src->grids)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    src->nvariants = (uint32_t)nv;
    for (size_t v = 0; v < nv; v++) {
        json_t *o = json_array_get(jv, v), *jc = json_object_get(o, "config"), *jg = json_object_get(o, "grid");
        if (!json_is_object(o) || (jc && !json_is_string(jc)) || (jg && !json_is_string(jg)))
            return trd_error_set(TRD_ERR_FORMAT, "%s: variant %zu must be an object whose 'config' and 'grid' are "
                                                 "strings",
                                 what, v);
        if ((jc && !(src->configs[v] = trd_strdup(json_string_value(jc)))) ||
            (jg && !(src->grids[v] = trd_strdup(json_string_value(jg)))))
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    return TRD_OK;
}

/* A version-2 target's "variant": an index into "variants". */
static trd_status_t target_variant(json_t *t, uint32_t index, const char *what, struct trd_kernel_src *src)
{
    json_t *jv = json_object_get(t, "variant");
    if (!json_is_integer(jv) || json_integer_value(jv) < 0 || json_integer_value(jv) >= (json_int_t)src->nvariants)
        return trd_error_set(TRD_ERR_FORMAT, "%s: target %u needs 'variant', an integer 0 .. %u", what, index,
                             src->nvariants - 1);
    src->targets[index].variant = (uint32_t)json_integer_value(jv);
    return TRD_OK;
}

trd_status_t trd_bundle_read(const void *data, size_t size, const char *what,
                             struct trd_kernel_src *out)
{
    const uint8_t *b = data;
    if (size < BUNDLE_HEADER || !trd_bundle_is(data, size))
        return trd_error_set(TRD_ERR_FORMAT, "%s: not a trident bundle (%zu bytes, expected the magic '%s' and a %u-byte header)",
                             what, size, BUNDLE_MAGIC, BUNDLE_HEADER);
    uint32_t version = rd32(b + 8), header = rd32(b + 12);
    uint64_t moff = rd64(b + 16), msize = rd64(b + 24);
    if (version != BUNDLE_VERSION && version != BUNDLE_VERSION_VARIANTS)
        return trd_error_set(TRD_ERR_VERSION,
                             "%s: bundle format version %u is not supported (this trident reads versions %u and %u)",
                             what, version, BUNDLE_VERSION, BUNDLE_VERSION_VARIANTS);
    if (header < BUNDLE_HEADER || header > size)
        return trd_error_set(TRD_ERR_FORMAT, "%s: header size %u is outside 32 .. %zu", what, header, size);
    if (moff < header || moff > size || msize == 0 || msize > size - moff || msize > BUNDLE_MAX_MANIFEST)
        return trd_error_set(TRD_ERR_FORMAT,
                             "%s: manifest range offset %llu size %llu is outside the bundle's %zu bytes",
                             what, (unsigned long long)moff, (unsigned long long)msize, size);
    json_error_t jerr;
    json_t *m = json_loadb((const char *)b + moff, (size_t)msize, JSON_REJECT_DUPLICATES, &jerr);
    if (!m)
        return trd_error_set(TRD_ERR_FORMAT, "%s: the manifest is not valid JSON: %s at line %d, column %d",
                             what, jerr.text, jerr.line, jerr.column);
    struct trd_kernel_src src;
    memset(&src, 0, sizeof src);
    trd_status_t st = TRD_OK;
    json_t *jname = json_object_get(m, "name"), *jsig = json_object_get(m, "signature"),
           *jt = json_object_get(m, "targets");
    if (!json_is_object(m) || !json_is_string(jname) || !json_is_string(jsig) || !json_is_array(jt)) {
        st = trd_error_set(TRD_ERR_FORMAT, "%s: the manifest needs keys name (string), signature (string) and targets (array)",
                           what);
        goto fail;
    }
    size_t nt = json_array_size(jt), max_targets = version == BUNDLE_VERSION ? BUNDLE_MAX_TARGETS : BUNDLE_MAX_ALL_TARGETS;
    if (nt == 0 || nt > max_targets) {
        st = trd_error_set(TRD_ERR_FORMAT, "%s: %zu targets; expected 1 .. %zu", what, nt, max_targets);
        goto fail;
    }
    if (json_string_length(jname) == 0 || json_string_length(jname) > 255) {
        st = trd_error_set(TRD_ERR_FORMAT, "%s: the kernel name must have 1 to 255 characters", what);
        goto fail;
    }
    src.name = trd_strdup(json_string_value(jname));
    char swhat[300];
    snprintf(swhat, sizeof swhat, "signature in %s", what);
    if (!src.name) {
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    if ((st = trd_signature_parse(json_string_value(jsig), swhat, &src.sig)) != TRD_OK)
        goto fail;
    src.targets = calloc(nt, sizeof *src.targets);
    if (!src.targets) {
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    if (version == BUNDLE_VERSION_VARIANTS && (st = read_variants(m, what, &src)) != TRD_OK)
        goto fail;
    for (size_t i = 0; i < nt; i++) {
        json_t *t = json_array_get(jt, i);
        st = read_target(b, size, header, t, (uint32_t)i, src.name, what, &src.targets[i]);
        if (st != TRD_OK)
            goto fail;
        src.ntargets++;
        if (version == BUNDLE_VERSION_VARIANTS && (st = target_variant(t, (uint32_t)i, what, &src)) != TRD_OK)
            goto fail;
    }
    for (uint32_t v = 0; v < src.nvariants; v++) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < src.ntargets; i++)
            n += src.targets[i].variant == v;
        if (n == 0 || n > BUNDLE_MAX_TARGETS) {
            st = trd_error_set(TRD_ERR_FORMAT, "%s: variant %u has %u targets; expected 1 .. %u", what, v, n,
                               BUNDLE_MAX_TARGETS);
            goto fail;
        }
    }
    json_decref(m);
    *out = src;
    return TRD_OK;
fail:
    json_decref(m);
    trd_kernel_src_free(&src);
    return st;
}

/* The bundle of variants (version 1 when there is one, without a configuration: as trident wrote before
 * variants, so that an older trident reads it). `fn` names the public function in errors. */
static trd_status_t write_bundle(const char *fn, const char *name, const char *signature,
                                 const trd_bundle_variant_t *variants, uint32_t num_variants, void **data,
                                 uint64_t *size)
{
    if (!name || !*name || !signature || !variants || !data || !size)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s needs a name, a signature, targets and out pointers", fn);
    if (num_variants == 0 || num_variants > BUNDLE_MAX_VARIANTS)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "a bundle holds 1 .. %u variants, not %u", BUNDLE_MAX_VARIANTS,
                             num_variants);
    trd_status_t st;
    for (uint32_t v = 0; v < num_variants; v++)
        if ((st = trd_struct_check(variants[v].struct_size, sizeof(trd_bundle_variant_t), "trd_bundle_variant_t")) !=
            TRD_OK)
            return st;
    int versioned = num_variants > 1 || variants[0].config || variants[0].grid;
    struct trd_signature sig;
    if ((st = trd_signature_parse(signature, "bundle signature", &sig)) != TRD_OK)
        return st;
    /* every grid rule as a reader compiles it */
    for (uint32_t v = 0; v < num_variants && versioned; v++) {
        const trd_bundle_variant_t *var = &variants[v];
        struct trd_grid_rule rule;
        char what[64];
        snprintf(what, sizeof what, "bundle variant %u", v);
        if (var->grid && (st = trd_grid_rule_compile(var->grid, &sig, var->config, what, &rule)) != TRD_OK) {
            trd_signature_free(&sig);
            return st;
        }
    }
    trd_signature_free(&sig);
    json_t *m = json_pack("{s:s, s:i, s:s, s:s, s:[]}", "format", "trident-bundle", "version",
                          (int)(versioned ? BUNDLE_VERSION_VARIANTS : BUNDLE_VERSION), "name", name, "signature",
                          signature, "targets");
    if (!m)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "name and signature must be UTF-8 text");
    json_t *arr = json_object_get(m, "targets"), *varr = versioned ? json_array() : NULL;
    if (versioned && (!varr || json_object_set_new(m, "variants", varr) != 0)) {
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    uint64_t off = BUNDLE_HEADER;
    uint32_t index = 0; /* of the target, across variants */
    for (uint32_t v = 0; v < num_variants; v++) {
        const trd_bundle_variant_t *var = &variants[v];
        if (var->num_targets == 0 || var->num_targets > BUNDLE_MAX_TARGETS || !var->targets) {
            if (versioned)
                st = trd_error_set(TRD_ERR_INVALID_ARGUMENT, "bundle variant %u holds 1 .. %u targets, not %u", v,
                                   BUNDLE_MAX_TARGETS, var->num_targets);
            else
                st = trd_error_set(TRD_ERR_INVALID_ARGUMENT, "a bundle holds 1 .. %u targets, not %u",
                                   BUNDLE_MAX_TARGETS, var->num_targets);
            goto fail;
        }
        if (versioned) {
            const char *grid = var->grid;
            json_t *jv = json_object();
            if (!jv || json_array_append_new(varr, jv) != 0 ||
                (var->config && json_object_set_new(jv, "config", json_string(var->config)) != 0) ||
                (grid && json_object_set_new(jv, "grid", json_string(grid)) != 0)) {
                st = trd_error_set(TRD_ERR_INVALID_ARGUMENT, "bundle variant %u: its config and grid must be UTF-8 text",
                                   v);
                goto fail;
            }
        }
        for (uint32_t i = 0; i < var->num_targets; i++, index++) {
            const trd_bundle_target_t *t = &var->targets[i];
            if ((st = trd_struct_check(t->struct_size, sizeof(trd_bundle_target_t), "trd_bundle_target_t")) != TRD_OK)
                goto fail;
            const char *fname = trd_format_name(t->format);
            if (t->format == TRD_FORMAT_UNKNOWN || strcmp(fname, "unknown") == 0 || !t->image || !t->image_size ||
                !t->arch) {
                st = trd_error_set(TRD_ERR_INVALID_ARGUMENT, "bundle target %u needs a known format, an arch and image bytes",
                                   index);
                goto fail;
            }
            const char *backend = t->backend ? t->backend : trd_format_backend(t->format);
            json_t *meta = json_null();
            if (t->metadata) {
                struct trd_meta parsed;
                char what[64];
                snprintf(what, sizeof what, "metadata of bundle target %u", index);
                if ((st = trd_meta_parse(t->metadata, strlen(t->metadata), what, &parsed)) != TRD_OK)
                    goto fail;
                trd_meta_free(&parsed);
                meta = json_loads(t->metadata, 0, NULL);
            }
            uint8_t digest[32];
            char hex[65];
            trd_sha256(t->image, (size_t)t->image_size, digest);
            trd_hex(digest, 32, hex);
            json_t *jt = json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:o}", "format", fname, "backend", backend,
                                   "arch", t->arch, "offset", (json_int_t)off, "size",
                                   (json_int_t)t->image_size, "sha256", hex, "metadata", meta);
            if (jt && versioned && json_object_set_new(jt, "variant", json_integer(v)) != 0) {
                json_decref(jt);
                jt = NULL;
            }
            if (!jt || json_array_append_new(arr, jt) != 0) {
                st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
                goto fail;
            }
            off += (t->image_size + 15) & ~(uint64_t)15;
        }
    }
    char *text = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text) {
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    size_t mlen = strlen(text);
    uint64_t total = off + mlen;
    uint8_t *buf = calloc(1, (size_t)total);
    if (!buf) {
        free(text);
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory for a %llu-byte bundle", (unsigned long long)total);
        goto fail;
    }
    memcpy(buf, BUNDLE_MAGIC, 8);
    wr32(buf + 8, versioned ? BUNDLE_VERSION_VARIANTS : BUNDLE_VERSION);
    wr32(buf + 12, BUNDLE_HEADER);
    wr64(buf + 16, off);
    wr64(buf + 24, mlen);
    uint64_t pos = BUNDLE_HEADER;
    for (uint32_t v = 0; v < num_variants; v++)
        for (uint32_t i = 0; i < variants[v].num_targets; i++) {
            const trd_bundle_target_t *t = &variants[v].targets[i];
            memcpy(buf + pos, t->image, (size_t)t->image_size);
            pos += (t->image_size + 15) & ~(uint64_t)15;
        }
    memcpy(buf + off, text, mlen);
    free(text);
    json_decref(m);
    *data = buf;
    *size = total;
    return TRD_OK;
fail:
    json_decref(m);
    return st;
}

TRD_API trd_status_t trd_bundle_write(const char *name, const char *signature,
                                      const trd_bundle_target_t *targets, uint32_t num_targets,
                                      void **data, uint64_t *size)
{
    trd_bundle_variant_t one = {.struct_size = sizeof one, .num_targets = num_targets, .targets = targets};
    return write_bundle("trd_bundle_write", name, signature, targets ? &one : NULL, 1, data, size);
}

TRD_API trd_status_t trd_bundle_write_variants(const char *name, const char *signature,
                                               const trd_bundle_variant_t *variants, uint32_t num_variants,
                                               void **data, uint64_t *size)
{
    return write_bundle("trd_bundle_write_variants", name, signature, variants, num_variants, data, size);
}

static trd_status_t write_file(const char *path, const char *name, const char *signature,
                               const trd_bundle_variant_t *variants, uint32_t num_variants, const char *fn,
                               uint64_t *size)
{
    if (!path || !*path)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s needs a path", fn);
    void *data;
    uint64_t n;
    trd_status_t st = write_bundle(fn, name, signature, variants, num_variants, &data, &n);
    if (st != TRD_OK)
        return st;
    st = trd_file_write_atomic(path, data, (size_t)n, 0644);
    free(data);
    if (st == TRD_OK && size)
        *size = n;
    return st;
}

TRD_API trd_status_t trd_bundle_write_file(const char *path, const char *name, const char *signature,
                                           const trd_bundle_target_t *targets, uint32_t num_targets,
                                           uint64_t *size)
{
    trd_bundle_variant_t one = {.struct_size = sizeof one, .num_targets = num_targets, .targets = targets};
    return write_file(path, name, signature, targets ? &one : NULL, 1, "trd_bundle_write_file", size);
}

TRD_API trd_status_t trd_bundle_write_variants_file(const char *path, const char *name, const char *signature,
                                                    const trd_bundle_variant_t *variants, uint32_t num_variants,
                                                    uint64_t *size)
{
    return write_file(path, name, signature, variants, num_variants, "trd_bundle_write_variants_file", size);
}
