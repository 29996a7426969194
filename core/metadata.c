/* SPDX-License-Identifier: Apache-2.0 */
/* metadata.c: Triton's kernel metadata (<name>.json), read defensively. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

void trd_meta_free(struct trd_meta *m)
{
    if (!m)
        return;
    free(m->name);
    free(m->backend);
    free(m->arch);
    free(m->triton_version);
    free(m->json);
    memset(m, 0, sizeof *m);
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* Reads an optional unsigned integer key within [lo, hi]. */
static trd_status_t get_uint(const json_t *root, const char *key, uint64_t lo, uint64_t hi,
                             uint64_t def, int required, const char *what, uint64_t *out)
{
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) {
        if (required)
            return trd_error_set(TRD_ERR_FORMAT, "%s: key '%s' is missing (expected an integer)", what, key);
        *out = def;
        return TRD_OK;
    }
    if (!json_is_integer(v))
        return trd_error_set(TRD_ERR_FORMAT, "%s: key '%s' is %s; expected an integer", what, key,
                             json_kind(v));
    json_int_t i = json_integer_value(v);
    if (i < 0 || (uint64_t)i < lo || (uint64_t)i > hi)
        return trd_error_set(TRD_ERR_FORMAT, "%s: key '%s' is %lld; expected %llu .. %llu", what, key,
                             (long long)i, (unsigned long long)lo, (unsigned long long)hi);
    *out = (uint64_t)i;
    return TRD_OK;
}

static trd_status_t get_bool(const json_t *root, const char *key, const char *what, int *out)
{
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) {
        *out = 0;
        return TRD_OK;
    }
    if (!json_is_boolean(v))
        return trd_error_set(TRD_ERR_FORMAT, "%s: key '%s' is %s; expected true or false", what, key,
                             json_kind(v));
    *out = json_is_true(v);
    return TRD_OK;
}

static int is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

/* Canonical arch text: CUDA's integer capability 90 becomes "sm90". */
static char *arch_text(const json_t *arch, const char *backend)
{
    if (json_is_integer(arch)) {
        json_int_t cc = json_integer_value(arch);
        if (cc <= 0 || cc > 10000)
            return NULL;
        return trd_asprintf("%s%lld", strcmp(backend, "cuda") == 0 ? "sm" : "", (long long)cc);
    }
    if (json_is_string(arch)) {
        const char *s = json_string_value(arch);
        size_t n = strlen(s);
        if (n > 64 || !trd_utf8_valid(s, n))
            return NULL; /* "" is a generic target (host kernels) */
        /* "gfx90a:sramecc+:xnack-" names features after the arch */
        const char *colon = strchr(s, ':');
        return trd_strndup(s, colon ? (size_t)(colon - s) : n);
    }
    if (json_is_object(arch)) { /* Intel: a dict of device properties */
        json_t *n = json_object_get(arch, "name");
        if (json_is_string(n))
            return trd_strdup(json_string_value(n));
        return trd_strdup("");
    }
    return NULL;
}

trd_status_t trd_meta_parse(const char *text, size_t len, const char *what, struct trd_meta *out)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return trd_error_set(TRD_ERR_FORMAT, "%s: not valid JSON: %s at line %d, column %d", what,
                             jerr.text, jerr.line, jerr.column);
    struct trd_meta m;
    memset(&m, 0, sizeof m);
    trd_status_t st = TRD_OK;
    if (!json_is_object(root)) {
        st = trd_error_set(TRD_ERR_FORMAT, "%s: the metadata is %s; expected a JSON object", what,
                           json_kind(root));
        goto done;
    }
    json_t *name = json_object_get(root, "name");
    if (!json_is_string(name) || json_string_length(name) == 0 || json_string_length(name) > 255) {
        st = trd_error_set(TRD_ERR_FORMAT, "%s: key 'name' must be the kernel's name (a string of 1 to 255 characters)",
                           what);
        goto done;
    }
    const char *nm = json_string_value(name);
    for (const char *c = nm; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '$' || *c == '.')) {
            char shown[80];
            trd_quote(nm, strlen(nm), shown, sizeof shown);
            st = trd_error_set(TRD_ERR_FORMAT, "%s: kernel name '%s' is not a symbol name", what, shown);
            goto done;
        }
    m.name = trd_strdup(nm);

    json_t *target = json_object_get(root, "target");
    const char *backend = NULL;
    json_t *arch = NULL;
    uint64_t target_warp = 0;
    if (target) {
        if (!json_is_object(target)) {
            st = trd_error_set(TRD_ERR_FORMAT, "%s: key 'target' is %s; expected an object {backend, arch, warp_size}",
                               what, json_kind(target));
            goto done;
        }
        json_t *b = json_object_get(target, "backend");
        if (!json_is_string(b)) {
            st = trd_error_set(TRD_ERR_FORMAT, "%s: key 'target.backend' must be a string such as \"cuda\"", what);
            goto done;
        }
        backend = json_string_value(b);
        arch = json_object_get(target, "arch");
        if ((st = get_uint(target, "warp_size", 1, 1024, 0, 0, what, &target_warp)) != TRD_OK)
            goto done;
    } else {
        json_t *b = json_object_get(root, "backend_name");
        if (!json_is_string(b)) {
            st = trd_error_set(TRD_ERR_FORMAT, "%s: key 'target' is missing (and no 'backend_name')", what);
            goto done;
        }
        backend = json_string_value(b);
        arch = json_object_get(root, "arch");
    }
    static const char *const backends[] = {"cuda", "hip", "xpu", "intel", "host", "cpu"};
    int known = 0;
    for (size_t i = 0; i < TRD_ARRAY_SIZE(backends); i++)
        known |= strcmp(backend, backends[i]) == 0;
    if (!known) {
        char shown[64];
        trd_quote(backend, strlen(backend), shown, sizeof shown);
        st = trd_error_set(TRD_ERR_FORMAT, "%s: backend '%s' is not one of cuda, hip, xpu, host", what, shown);
        goto done;
    }
    if (strcmp(backend, "intel") == 0)
        backend = "xpu";
    else if (strcmp(backend, "cpu") == 0)
        backend = "host";
    m.backend = trd_strdup(backend);
    if (arch && !json_is_null(arch)) {
        m.arch = arch_text(arch, backend);
        if (!m.arch) {
            st = trd_error_set(TRD_ERR_FORMAT, "%s: key 'target.arch' is %s, not an architecture such as 90 or \"gfx942\"",
                               what, json_kind(arch));
            goto done;
        }
    } else {
        m.arch = trd_strdup("");
    }

    uint64_t v;
    /* any count of warps: a warp-specialized kernel's is the sum of its partitions' (num_warps=4 compiles to 12);
     * the block it makes is checked against the device where it is loaded, as Triton's launcher leaves it to the
     * driver */
    if ((st = get_uint(root, "num_warps", 1, 1024, 4, 1, what, &v)) != TRD_OK)
        goto done;
    m.num_warps = (uint32_t)v;
    if ((st = get_uint(root, "num_ctas", 1, 16, 1, 0, what, &v)) != TRD_OK)
        goto done;
    m.num_ctas = (uint32_t)v;
    uint64_t dflt_warp = target_warp ? target_warp : (strcmp(backend, "host") == 0 ? 1 : 32);
    const char *wkey = json_object_get(root, "threads_per_warp") ? "threads_per_warp" : "warp_size";
    if ((st = get_uint(root, wkey, 1, 1024, dflt_warp, 0, what, &v)) != TRD_OK)
        goto done;
    m.warp_size = (uint32_t)v;
    if ((uint64_t)m.num_warps * m.warp_size > 65536) {
        st = trd_error_set(TRD_ERR_FORMAT, "%s: num_warps %u x warp_size %u is not a block size", what,
                           m.num_warps, m.warp_size);
        goto done;
    }
    if ((st = get_uint(root, "shared", 0, 0x7fffffff, 0, 0, what, &v)) != TRD_OK)
        goto done;
    m.shared = (uint32_t)v;
    const uint64_t max_scratch = (uint64_t)1 << 40;
    if ((st = get_uint(root, "global_scratch_size", 0, max_scratch, 0, 0, what, &m.global_scratch_size)) ||
        (st = get_uint(root, "global_scratch_align", 1, 4096, 1, 0, what, &m.global_scratch_align)) ||
        (st = get_uint(root, "profile_scratch_size", 0, max_scratch, 0, 0, what, &m.profile_scratch_size)) ||
        (st = get_uint(root, "profile_scratch_align", 1, 4096, 1, 0, what, &m.profile_scratch_align)))
        goto done;
    if (!is_pow2(m.global_scratch_align) || !is_pow2(m.profile_scratch_align)) {
        st = trd_error_set(TRD_ERR_FORMAT, "%s: scratch alignments must be powers of two (global %llu, profile %llu)",
                           what, (unsigned long long)m.global_scratch_align,
                           (unsigned long long)m.profile_scratch_align);
        goto done;
    }
    int coop, pdl;
    if ((st = get_bool(root, "launch_cooperative_grid", what, &coop)) != TRD_OK ||
        (st = get_bool(root, "launch_pdl", what, &pdl)) != TRD_OK)
        goto done;
    m.flags = (coop ? TRD_MODULE_COOPERATIVE : 0) | (pdl ? TRD_MODULE_PDL : 0);
    /* a release may give instrumented kernels parameters of its own launcher's: refuse them here, not with
     * a launch that reads garbage */
    json_t *im = json_object_get(root, "instrumentation_mode");
    if (im && !json_is_null(im) && !json_is_string(im)) {
        st = trd_error_set(TRD_ERR_FORMAT, "%s: key 'instrumentation_mode' is %s; expected a string", what,
                           json_kind(im));
        goto done;
    }
    const char *why = trd_instrumentation_unsupported(json_string_value(im));
    if (why) {
        st = trd_error_set(TRD_ERR_UNSUPPORTED, "%s: %s", what, why);
        goto done;
    }
    json_t *tv = json_object_get(root, "triton_version");
    if (json_is_string(tv))
        m.triton_version = trd_strdup(json_string_value(tv));
    m.json = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    m.from_json = 1;
    if (!m.name || !m.backend || !m.arch || !m.json || (tv && json_is_string(tv) && !m.triton_version)) {
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory reading %s", what);
        goto done;
    }
done:
    json_decref(root);
    if (st != TRD_OK) {
        trd_meta_free(&m);
        return st;
    }
    *out = m;
    return TRD_OK;
}

trd_status_t trd_meta_default(const char *name, const char *backend, const char *arch,
                              struct trd_meta *out)
{
    struct trd_meta m;
    memset(&m, 0, sizeof m);
    m.name = trd_strdup(name);
    m.backend = trd_strdup(backend);
    m.arch = trd_strdup(arch ? arch : "");
    m.num_warps = strcmp(backend, "host") == 0 ? 1 : 4;
    m.num_ctas = 1;
    m.warp_size = strcmp(backend, "host") == 0 ? 1 : strcmp(backend, "hip") == 0 ? 64 : 32;
    m.global_scratch_align = 1;
    m.profile_scratch_align = 1;
    json_t *o = json_pack("{s:s, s:{s:s, s:s, s:i}, s:i, s:i, s:i}", "name", name, "target", "backend",
                          backend, "arch", m.arch ? m.arch : "", "warp_size", (int)m.warp_size,
                          "num_warps", (int)m.num_warps, "num_ctas", 1, "shared", 0);
    if (o) {
        m.json = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(o);
    }
    if (!m.name || !m.backend || !m.arch || !m.json) {
        trd_meta_free(&m);
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    *out = m;
    return TRD_OK;
}

trd_status_t trd_meta_copy(const struct trd_meta *src, struct trd_meta *dst)
{
    struct trd_meta m = *src;
    m.name = trd_strdup(src->name);
    m.backend = trd_strdup(src->backend);
    m.arch = trd_strdup(src->arch);
    m.triton_version = trd_strdup(src->triton_version);
    m.json = trd_strdup(src->json);
    if (!m.name || !m.backend || !m.arch || !m.json || (src->triton_version && !m.triton_version)) {
        trd_meta_free(&m);
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    *dst = m;
    return TRD_OK;
}
