/* SPDX-License-Identifier: Apache-2.0 */
/* options.c: the options API over the tables: create per backend or device,
 * set and get by name, derive defaults from the target, serialize and hash. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "base/sha256.h"
#include "base/util.h"
#include "options/options.h"
#include "options/table.h"

/* Backends without a table (a third-party driver's) get this empty one. */
static const struct trd_option_table generic_table = {
    .backend = "generic", .current = "1.0", .tested = "", .source = "none", .rows = NULL, .count = 0};

/* The current-release row, or NULL with the reason set. */
static const struct trd_option_row *current_row(const struct trd_option_table *t, const char *name)
{
    const struct trd_option_row *r = trd_row_find(t, name);
    if (!r) {
        trd_row_unknown(t, name);
        return NULL;
    }
    if (!trd_row_in_release(t, r, -1)) {
        trd_error_set(TRD_ERR_NOT_FOUND, "option %s.%s is not in %s %s (it exists in releases %s .. %s)", t->backend,
                      name, t->product ? t->product : "trident", t->current, r->since ? r->since : "?",
                      r->until ? r->until : t->current);
        return NULL;
    }
    return r;
}

/* ------------------------------------------------------------ row info */

static void fill_info(const struct trd_option_table *t, const struct trd_option_row *r, trd_option_info_t *info)
{
    trd_option_info_t full = {
        .struct_size = sizeof full,
        .type = r->type,
        .stage = r->stage,
        .flags = r->flags,
        .backend = t->backend,
        .name = r->name,
        .type_name = r->type_name,
        .default_value = r->def,
        .derived = r->derived,
        .values = r->values,
        .doc = r->doc,
        .triton_since = r->since,
        .triton_until = r->until,
        .env = r->env,
    };
    trd_struct_fill(info, &full, sizeof full);
}

TRD_API trd_status_t trd_option_count(const char *backend, uint32_t *count)
{
    const struct trd_option_table *t = trd_table_find(backend);
    if (!t)
        return TRD_ERR_NOT_FOUND;
    if (!count)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_option_count: count is NULL");
    *count = t->count;
    return TRD_OK;
}

TRD_API trd_status_t trd_option_info(const char *backend, uint32_t index, trd_option_info_t *info)
{
    const struct trd_option_table *t = trd_table_find(backend);
    if (!t)
        return TRD_ERR_NOT_FOUND;
    if (!info)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_option_info: info is NULL");
    trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_option_info_t), "trd_option_info_t");
    if (st != TRD_OK)
        return st;
    if (index >= t->count)
        return trd_error_set(TRD_ERR_NOT_FOUND, "option index %u is out of range (%u options of %s)", index, t->count,
                             t->backend);
    fill_info(t, &t->rows[index], info);
    return TRD_OK;
}

TRD_API trd_status_t trd_option_lookup(const char *backend, const char *name, trd_option_info_t *info)
{
    const struct trd_option_table *t = trd_table_find(backend);
    if (!t)
        return TRD_ERR_NOT_FOUND;
    if (!info)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_option_lookup: info is NULL");
    trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_option_info_t), "trd_option_info_t");
    if (st != TRD_OK)
        return st;
    const struct trd_option_row *r = trd_row_find(t, name);
    if (!r)
        return trd_row_unknown(t, name);
    fill_info(t, r, info);
    return TRD_OK;
}

TRD_API trd_status_t trd_option_exists(const char *backend, const char *name, const char *triton_version,
                                       int32_t *present)
{
    if (!present)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_option_exists: present is NULL");
    const struct trd_option_table *t = trd_table_lookup(backend);
    if (!t) {
        *present = 0;
        return TRD_OK;
    }
    int rel = -1;
    if (triton_version && (rel = trd_release_of_version(triton_version)) < 0)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "'%s' is not a release such as 3.6.0", triton_version);
    const struct trd_option_row *r = trd_row_find(t, name);
    *present = r && trd_row_in_release(t, r, rel) && !(r->flags & TRD_OPTION_NOT_FIELD);
    return TRD_OK;
}

TRD_API trd_status_t trd_option_default(const char *backend, const char *name, const char *triton_version,
                                        const char **value)
{
    const struct trd_option_table *t = trd_table_find(backend);
    if (!t)
        return TRD_ERR_NOT_FOUND;
    if (!name || !value)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_option_default: NULL argument");
    int rel = -1;
    if (triton_version && t->product && !trd_table_knows(t, rel = trd_release_of_version(triton_version)))
        return trd_table_unknown_release(t, triton_version);
    const struct trd_option_row *r = trd_row_find(t, name);
    if (!r)
        return trd_row_unknown(t, name);
    if (!trd_row_in_release(t, r, rel))
        return trd_error_set(TRD_ERR_NOT_FOUND, "option %s.%s is not in %s %s (it exists in releases %s .. %s)",
                             t->backend, name, t->product ? t->product : "trident",
                             triton_version ? triton_version : t->current, r->since ? r->since : "?",
                             r->until ? r->until : t->current);
    *value = trd_row_default(t, r, rel);
    return TRD_OK;
}

TRD_API trd_status_t trd_option_releases(const char *backend, trd_option_releases_t *info)
{
    const struct trd_option_table *t = trd_table_find(backend);
    if (!t)
        return TRD_ERR_NOT_FOUND;
    if (!info)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_option_releases: info is NULL");
    trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_option_releases_t), "trd_option_releases_t");
    if (st != TRD_OK)
        return st;
    trd_option_releases_t full = {
        .struct_size = sizeof full,
        .product = t->product,
        .oldest = t->oldest,
        .newest = t->current,
        .tested = t->tested ? t->tested : "",
    };
    trd_struct_fill(info, &full, sizeof full);
    return TRD_OK;
}

/* --------------------------------------------------------- the object */

/* Recomputes every default that follows the target; rows set explicitly keep
 * their value, and a row whose derivation has nothing to go on (no arch)
 * returns to its static default. */
static void derive_all(struct trd_options *o)
{
    for (uint32_t i = 0; i < o->table->count; i++) {
        const struct trd_option_row *r = &o->table->rows[i];
        if (!r->derive || o->set[i] || !trd_row_in_release(o->table, r, -1))
            continue;
        struct trd_value v;
        memset(&v, 0, sizeof v);
        if (r->derive(o, &v) || trd_value_parse(o->table, r, NULL, r->def, &v) == TRD_OK) {
            trd_value_free(&o->values[i]);
            o->values[i] = v;
        } else {
            trd_value_free(&v);
        }
    }
}

static trd_status_t options_new(const struct trd_option_table *t, struct trd_options **out)
{
    struct trd_options *o = calloc(1, sizeof *o);
    if (!o)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    o->table = t;
    o->values = calloc(t->count ? t->count : 1, sizeof *o->values);
    o->set = calloc(t->count ? t->count : 1, 1);
    if (!o->values || !o->set) {
        free(o->values);
        free(o->set);
        free(o);
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    for (uint32_t i = 0; i < t->count; i++) {
        const struct trd_option_row *r = &t->rows[i];
        if (!trd_row_in_release(t, r, -1))
            continue;
        trd_status_t st = trd_value_parse(t, r, NULL, r->def, &o->values[i]);
        if (st != TRD_OK) {
            trd_options_destroy(o);
            return trd_error_wrap(TRD_ERR_INTERNAL, "the default of %s.%s", t->backend, r->name);
        }
    }
    *out = o;
    return TRD_OK;
}

TRD_API trd_status_t trd_options_create(const char *backend, trd_options_t **out)
{
    if (!out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_create: out is NULL");
    const struct trd_option_table *t = trd_table_find(backend);
    if (!t)
        return TRD_ERR_NOT_FOUND;
    return options_new(t, out);
}

TRD_API void trd_options_destroy(trd_options_t *o)
{
    if (!o)
        return;
    for (uint32_t i = 0; i < o->table->count; i++)
        trd_value_free(&o->values[i]);
    free(o->values);
    free(o->set);
    free(o);
}

TRD_API trd_status_t trd_options_copy(const trd_options_t *src, trd_options_t **out)
{
    if (!src || !out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_copy: NULL argument");
    struct trd_options *o;
    trd_status_t st = options_new(src->table, &o);
    if (st != TRD_OK)
        return st;
    for (uint32_t i = 0; i < src->table->count; i++) {
        trd_value_free(&o->values[i]);
        if ((st = trd_value_copy(&src->values[i], &o->values[i])) != TRD_OK) {
            trd_options_destroy(o);
            return st;
        }
        o->set[i] = src->set[i];
    }
    *out = o;
    return TRD_OK;
}

TRD_API trd_status_t trd_options_backend(const trd_options_t *o, const char **backend)
{
    if (!o || !backend)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_backend: NULL argument");
    *backend = o->table->backend;
    return TRD_OK;
}

static trd_status_t set_value(trd_options_t *o, const struct trd_option_row *r, struct trd_value *v)
{
    size_t i = (size_t)(r - o->table->rows);
    trd_value_free(&o->values[i]);
    o->values[i] = *v;
    o->set[i] = 1;
    if (strcmp(r->name, "arch") == 0)
        derive_all(o);
    return TRD_OK;
}

TRD_API trd_status_t trd_options_set(trd_options_t *o, const char *name, const char *value)
{
    if (!o || !name || !value)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_set: NULL argument");
    const struct trd_option_row *r = current_row(o->table, name);
    if (!r)
        return TRD_ERR_NOT_FOUND;
    struct trd_value v;
    trd_status_t st = trd_value_parse(o->table, r, o, value, &v);
    if (st != TRD_OK)
        return st;
    return set_value(o, r, &v);
}

TRD_API trd_status_t trd_options_set_int(trd_options_t *o, const char *name, int64_t value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)value);
    if (o && name) {
        const struct trd_option_row *r = trd_row_find(o->table, name);
        if (r && r->type != TRD_OPT_INT && r->type != TRD_OPT_OPT_INT)
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "option %s.%s is %s, not an integer", o->table->backend, name,
                                 r->type_name);
    }
    return trd_options_set(o, name, buf);
}

TRD_API trd_status_t trd_options_set_bool(trd_options_t *o, const char *name, int32_t value)
{
    if (o && name) {
        const struct trd_option_row *r = trd_row_find(o->table, name);
        if (r && r->type != TRD_OPT_BOOL && r->type != TRD_OPT_OPT_BOOL)
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "option %s.%s is %s, not a bool", o->table->backend, name,
                                 r->type_name);
    }
    return trd_options_set(o, name, value ? "true" : "false");
}

static const struct trd_value *get_value(const trd_options_t *o, const char *name, const char *fn)
{
    if (!o || !name) {
        trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
        return NULL;
    }
    const struct trd_option_row *r = current_row(o->table, name);
    return r ? &o->values[r - o->table->rows] : NULL;
}

TRD_API trd_status_t trd_options_get(const trd_options_t *o, const char *name, char *buf, size_t cap, size_t *len)
{
    const struct trd_value *v = get_value(o, name, "trd_options_get");
    if (!v)
        return o && name ? TRD_ERR_NOT_FOUND : TRD_ERR_INVALID_ARGUMENT;
    char *text = trd_value_text(v);
    if (!text)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    trd_status_t st = trd_copy_out(text, buf, cap, len);
    free(text);
    return st;
}

TRD_API trd_status_t trd_options_get_int(const trd_options_t *o, const char *name, int64_t *value)
{
    const struct trd_value *v = get_value(o, name, "trd_options_get_int");
    if (!v)
        return o && name ? TRD_ERR_NOT_FOUND : TRD_ERR_INVALID_ARGUMENT;
    if (!value)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_get_int: value is NULL");
    if (v->kind == TRD_V_NONE)
        return trd_error_set(TRD_ERR_STATE, "option %s.%s is none", o->table->backend, name);
    if (v->kind != TRD_V_INT && v->kind != TRD_V_BOOL)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "option %s.%s is not an integer", o->table->backend, name);
    *value = v->i;
    return TRD_OK;
}

TRD_API trd_status_t trd_options_get_bool(const trd_options_t *o, const char *name, int32_t *value)
{
    const struct trd_value *v = get_value(o, name, "trd_options_get_bool");
    if (!v)
        return o && name ? TRD_ERR_NOT_FOUND : TRD_ERR_INVALID_ARGUMENT;
    if (!value)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_get_bool: value is NULL");
    if (v->kind == TRD_V_NONE)
        return trd_error_set(TRD_ERR_STATE, "option %s.%s is none", o->table->backend, name);
    if (v->kind != TRD_V_BOOL)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "option %s.%s is not a bool", o->table->backend, name);
    *value = (int32_t)v->i;
    return TRD_OK;
}

TRD_API trd_status_t trd_options_is_set(const trd_options_t *o, const char *name, int32_t *set)
{
    const struct trd_value *v = get_value(o, name, "trd_options_is_set");
    if (!v)
        return o && name ? TRD_ERR_NOT_FOUND : TRD_ERR_INVALID_ARGUMENT;
    if (!set)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_is_set: set is NULL");
    *set = o->set[v - o->values];
    return TRD_OK;
}

TRD_API trd_status_t trd_options_reset(trd_options_t *o, const char *name)
{
    if (!o)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_reset: options is NULL");
    for (uint32_t i = 0; i < o->table->count; i++) {
        const struct trd_option_row *r = &o->table->rows[i];
        if (name && strcmp(r->name, name) != 0)
            continue;
        if (!trd_row_in_release(o->table, r, -1))
            return name ? (current_row(o->table, name), TRD_ERR_NOT_FOUND) : TRD_OK;
        struct trd_value v;
        trd_status_t st = trd_value_parse(o->table, r, NULL, r->def, &v);
        if (st != TRD_OK)
            return st;
        trd_value_free(&o->values[i]);
        o->values[i] = v;
        o->set[i] = 0;
        if (name) {
            if (strcmp(name, "arch") == 0)
                derive_all(o);
            else if (r->derive)
                derive_all(o);
            return TRD_OK;
        }
    }
    if (name)
        return trd_row_unknown(o->table, name);
    derive_all(o);
    return TRD_OK;
}

trd_status_t trd_options_merge(trd_options_t *dst, const trd_options_t *src)
{
    if (dst->table != src->table)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "cannot merge %s options into %s options", src->table->backend,
                             dst->table->backend);
    /* arch first, so that derived defaults follow it */
    const struct trd_option_row *arch = trd_row_find(src->table, "arch");
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < src->table->count; i++) {
            const struct trd_option_row *r = &src->table->rows[i];
            if (!src->set[i] || ((r == arch) != (pass == 0)))
                continue;
            struct trd_value v;
            trd_status_t st = trd_value_copy(&src->values[i], &v);
            if (st != TRD_OK)
                return st;
            set_value(dst, r, &v);
        }
    return TRD_OK;
}

static json_t *to_json(const trd_options_t *o)
{
    json_t *root = json_object();
    for (uint32_t i = 0; root && i < o->table->count; i++) {
        const struct trd_option_row *r = &o->table->rows[i];
        if (!trd_row_in_release(o->table, r, -1))
            continue;
        json_t *v = trd_value_json(&o->values[i]);
        if (!v || json_object_set_new(root, r->name, v) != 0) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}

TRD_API trd_status_t trd_options_serialize(const trd_options_t *o, char *buf, size_t cap, size_t *len)
{
    if (!o)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_serialize: options is NULL");
    json_t *root = to_json(o);
    char *text = root ? json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(root);
    if (!text)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    trd_status_t st = trd_copy_out(text, buf, cap, len);
    free(text);
    return st;
}

TRD_API trd_status_t trd_options_hash(const trd_options_t *o, uint8_t digest[32])
{
    if (!o || !digest)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_hash: NULL argument");
    json_t *root = to_json(o);
    if (!root)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    /* extern_libs paths stand for their content, as in Triton's hash. */
    json_t *libs = json_object_get(root, "extern_libs");
    if (json_is_object(libs)) {
        const char *key;
        json_t *val;
        json_object_foreach(libs, key, val) {
            const char *path = json_string_value(val);
            char *data;
            size_t size;
            trd_status_t st = trd_file_read(path, (size_t)1 << 30, &data, &size);
            if (st != TRD_OK) {
                trd_error_wrap(st, "hashing options: extern_libs '%s'", key); /* key lives in root */
                json_decref(root);
                return st;
            }
            uint8_t d[32];
            char hex[65];
            trd_sha256(data, size, d);
            free(data);
            trd_hex(d, 32, hex);
            json_object_set_new(libs, key, json_string(hex));
        }
    }
    char *text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(root);
    if (!text)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    char *keyed = trd_asprintf("%s:%s", o->table->backend, text);
    free(text);
    if (!keyed)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    trd_sha256(keyed, strlen(keyed), digest);
    free(keyed);
    return TRD_OK;
}

/* ---------------------------------------------------- device options */

static trd_status_t apply_config(trd_options_t *o, const trd_config_t *config, const trd_device_props_t *props);

trd_status_t trd_options_for_props(const trd_device_props_t *p, const trd_config_t *config, trd_options_t **out)
{
    const struct trd_option_table *t = trd_table_lookup(p->backend);
    if (!t || t == &trd_table_runtime || t == &trd_table_driver)
        t = &generic_table;
    struct trd_options *o;
    trd_status_t st = options_new(t, &o);
    if (st != TRD_OK)
        return st;
    const struct trd_option_row *arch = trd_row_find(t, "arch");
    if (arch && p->arch && *p->arch) {
        struct trd_value v;
        if (trd_value_parse(t, arch, o, p->arch, &v) == TRD_OK) {
            size_t i = (size_t)(arch - t->rows);
            trd_value_free(&o->values[i]);
            o->values[i] = v;
            derive_all(o); /* derived from the device: not "set" by anyone */
        } else {
            trd_log(TRD_LOG_DEBUG, "%s: arch '%s' is not a %s arch; derived defaults stay static", p->uri, p->arch,
                    t->backend);
        }
    }
    /* the warp size the device reports wins over the derivation */
    const struct trd_option_row *ws = trd_row_find(t, "warp_size");
    if (ws && p->warp_size && trd_row_in_release(t, ws, -1) && (ws->flags & TRD_OPTION_DERIVED))
        trd_value_set_int(&o->values[ws - t->rows], p->warp_size);
    if (config && (st = apply_config(o, config, p)) != TRD_OK) {
        trd_options_destroy(o);
        return st;
    }
    *out = o;
    return TRD_OK;
}

/* Defined in config.c: calls fn for every configured (section, key, value)
 * that applies to these options, in precedence order. */
typedef trd_status_t (*trd_config_visit_fn)(void *ctx, const char *key, const char *value, const char *origin);
trd_status_t trd_config_visit_options(const trd_config_t *config, const char *backend, const trd_device_props_t *props,
                                      trd_config_visit_fn fn, void *ctx);

static trd_status_t apply_one(void *ctx, const char *key, const char *value, const char *origin)
{
    trd_options_t *o = ctx;
    if (!trd_row_find(o->table, key))
        return TRD_OK; /* a key for another backend in a [device] section */
    trd_status_t st = trd_options_set(o, key, value);
    return st == TRD_OK ? st : trd_error_wrap(st, "%s", origin);
}

static trd_status_t apply_config(trd_options_t *o, const trd_config_t *config, const trd_device_props_t *props)
{
    return trd_config_visit_options(config, o->table->backend, props, apply_one, o);
}
