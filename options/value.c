/* SPDX-License-Identifier: Apache-2.0 */
/* value.c: option values: parse from text by the row's type, validate,
 * print canonically, and convert to JSON. */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/util.h"
#include "options/table.h"

void trd_value_free(struct trd_value *v)
{
    if (!v)
        return;
    free(v->s);
    uint32_t n = v->kind == TRD_V_MAP ? 2 * v->n : v->n;
    if (v->items)
        for (uint32_t i = 0; i < n; i++)
            free(v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

trd_status_t trd_value_copy(const struct trd_value *src, struct trd_value *dst)
{
    struct trd_value v = *src;
    v.s = NULL;
    v.items = NULL;
    if (src->s && !(v.s = trd_strdup(src->s)))
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    uint32_t n = src->kind == TRD_V_MAP ? 2 * src->n : src->n;
    if (src->items) {
        v.items = calloc(n ? n : 1, sizeof *v.items);
        if (!v.items) {
            free(v.s);
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        }
        for (uint32_t i = 0; i < n; i++)
            if (!(v.items[i] = trd_strdup(src->items[i]))) {
                v.n = i;
                v.kind = TRD_V_LIST;
                trd_value_free(&v);
                return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
            }
    }
    *dst = v;
    return TRD_OK;
}

int trd_value_set_int(struct trd_value *v, int64_t i)
{
    trd_value_free(v);
    v->kind = TRD_V_INT;
    v->i = i;
    return 1;
}

int trd_value_set_str(struct trd_value *v, const char *s)
{
    trd_value_free(v);
    v->kind = TRD_V_STR;
    v->s = trd_strdup(s);
    return v->s != NULL;
}

int trd_value_set_list(struct trd_value *v, const char *const *items, uint32_t n)
{
    trd_value_free(v);
    v->kind = TRD_V_LIST;
    v->items = calloc(n ? n : 1, sizeof *v->items);
    if (!v->items)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!(v->items[i] = trd_strdup(items[i]))) {
            v->n = i;
            trd_value_free(v);
            return 0;
        }
    }
    v->n = n;
    return 1;
}

int trd_value_equal(const struct trd_value *a, const struct trd_value *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case TRD_V_NONE: return 1;
    case TRD_V_BOOL:
    case TRD_V_INT: return a->i == b->i;
    case TRD_V_STR: return strcmp(a->s, b->s) == 0;
    case TRD_V_TRIPLE: return memcmp(a->t, b->t, sizeof a->t) == 0;
    case TRD_V_LIST:
    case TRD_V_MAP: {
        if (a->n != b->n)
            return 0;
        uint32_t n = a->kind == TRD_V_MAP ? 2 * a->n : a->n;
        for (uint32_t i = 0; i < n; i++)
            if (strcmp(a->items[i], b->items[i]) != 0)
                return 0;
        return 1;
    }
    }
    return 0;
}

char *trd_value_text(const struct trd_value *v)
{
    switch (v->kind) {
    case TRD_V_NONE: return trd_strdup("none");
    case TRD_V_BOOL: return trd_strdup(v->i ? "true" : "false");
    case TRD_V_INT: return trd_asprintf("%lld", (long long)v->i);
    case TRD_V_STR: return trd_strdup(v->s);
    case TRD_V_TRIPLE:
        return trd_asprintf("%lld,%lld,%lld", (long long)v->t[0], (long long)v->t[1], (long long)v->t[2]);
    case TRD_V_LIST:
    case TRD_V_MAP: {
        struct trd_str s;
        trd_str_init(&s);
        trd_str_append(&s, "");
        for (uint32_t i = 0; i < v->n; i++) {
            if (i)
                trd_str_append(&s, ",");
            if (v->kind == TRD_V_MAP)
                trd_str_appendf(&s, "%s=%s", v->items[2 * i], v->items[2 * i + 1]);
            else
                trd_str_append(&s, v->items[i]);
        }
        return trd_str_take(&s);
    }
    }
    return NULL;
}

void *trd_value_json(const struct trd_value *v)
{
    switch (v->kind) {
    case TRD_V_NONE: return json_null();
    case TRD_V_BOOL: return json_boolean(v->i);
    case TRD_V_INT: return json_integer(v->i);
    case TRD_V_STR: return json_string(v->s);
    case TRD_V_TRIPLE: return json_pack("[III]", (json_int_t)v->t[0], (json_int_t)v->t[1], (json_int_t)v->t[2]);
    case TRD_V_LIST: {
        json_t *a = json_array();
        for (uint32_t i = 0; a && i < v->n; i++)
            json_array_append_new(a, json_string(v->items[i]));
        return a;
    }
    case TRD_V_MAP: {
        json_t *o = json_object();
        for (uint32_t i = 0; o && i < v->n; i++)
            json_object_set_new(o, v->items[2 * i], json_string(v->items[2 * i + 1]));
        return o;
    }
    }
    return NULL;
}

/* ------------------------------------------------------------- parsing */

static int in_values(const char *values, const char *s, size_t n)
{
    if (!values)
        return 1;
    const char *p = values;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0)
            return 1;
        if (!bar)
            return 0;
        p = bar + 1;
    }
}

static const char *nearest_value(const char *values, const char *s, char *buf, size_t cap)
{
    size_t best = (size_t)-1;
    buf[0] = '\0';
    const char *p = values;
    while (p && *p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        char item[64];
        if (len < sizeof item) {
            memcpy(item, p, len);
            item[len] = '\0';
            size_t d = trd_edit_distance(item, s);
            if (d < best && d <= 2) {
                best = d;
                snprintf(buf, cap, "%s", item);
            }
        }
        p = bar ? bar + 1 : NULL;
    }
    return buf[0] ? buf : NULL;
}

static trd_status_t bad(const struct trd_option_table *t, const struct trd_option_row *r, const char *text,
                        const char *why)
{
    char shown[160];
    trd_quote(text, strlen(text), shown, sizeof shown);
    return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "option %s.%s: '%s' is not valid: %s", t->backend, r->name, shown,
                         why);
}

static int parse_bool(const char *s, int64_t *out)
{
    static const char *const yes[] = {"true", "1", "yes", "on"};
    static const char *const no[] = {"false", "0", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 1;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 1;
        }
    }
    return 0;
}

static int is_none(const char *s)
{
    return strcasecmp(s, "none") == 0 || strcasecmp(s, "null") == 0;
}

/* Splits a list "a, b" (optionally in () or [] and with quotes) into items. */
static trd_status_t split_list(const struct trd_option_table *t, const struct trd_option_row *r, const char *text,
                               int map, struct trd_value *out)
{
    size_t n = strlen(text);
    const char *s = text, *e = text + n;
    while (s < e && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    if (e - s >= 2 && ((*s == '(' && e[-1] == ')') || (*s == '[' && e[-1] == ']'))) {
        s++;
        e--;
    }
    struct trd_value v;
    memset(&v, 0, sizeof v);
    v.kind = map ? TRD_V_MAP : TRD_V_LIST;
    uint32_t cap = 0, count = 0;
    while (s < e) {
        const char *c = memchr(s, ',', (size_t)(e - s));
        const char *ie = c ? c : e;
        const char *is = s;
        while (is < ie && isspace((unsigned char)*is))
            is++;
        while (ie > is && isspace((unsigned char)ie[-1]))
            ie--;
        if (ie - is >= 2 && (*is == '\'' || *is == '"') && ie[-1] == *is) {
            is++;
            ie--;
        }
        if (is == ie) {
            if (!c)
                break; /* trailing comma, as in ("a",) */
            trd_value_free(&v);
            return bad(t, r, text, "an item of the list is empty");
        }
        uint32_t need = map ? 2 : 1;
        if (count + need > cap) {
            uint32_t ncap = cap ? cap * 2 : 8;
            char **p = realloc(v.items, ncap * sizeof *p);
            if (!p) {
                trd_value_free(&v);
                return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
            }
            v.items = p;
            cap = ncap;
        }
        if (map) {
            const char *eq = memchr(is, '=', (size_t)(ie - is));
            if (!eq || eq == is || eq + 1 == ie) {
                trd_value_free(&v);
                return bad(t, r, text, "expected name=path items separated by ',' (or none)");
            }
            const char *ne = eq, *ps = eq + 1;
            while (ne > is && isspace((unsigned char)ne[-1]))
                ne--;
            while (ps < ie && isspace((unsigned char)*ps))
                ps++;
            v.items[count] = trd_strndup(is, (size_t)(ne - is));
            v.items[count + 1] = trd_strndup(ps, (size_t)(ie - ps));
            if (!v.items[count] || !v.items[count + 1]) {
                free(v.items[count]);
                v.n = count / 2;
                trd_value_free(&v);
                return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
            }
            for (uint32_t k = 0; k < count; k += 2)
                if (strcmp(v.items[k], v.items[count]) == 0) {
                    char why[128];
                    snprintf(why, sizeof why, "library name '%.64s' appears twice", v.items[count]);
                    count += 2;
                    v.n = count / 2;
                    trd_value_free(&v);
                    return bad(t, r, text, why);
                }
            count += 2;
            v.n = count / 2;
        } else {
            if (!in_values(r->values, is, (size_t)(ie - is))) {
                char item[64], why[256], near[64];
                trd_quote(is, (size_t)(ie - is), item, sizeof item);
                const char *nv = nearest_value(r->values, item, near, sizeof near);
                snprintf(why, sizeof why, "item '%s' is not one of %s%s%s%s", item, r->values, nv ? " (did you mean '" : "",
                         nv ? nv : "", nv ? "'?)" : "");
                trd_value_free(&v);
                return bad(t, r, text, why);
            }
            if (!(v.items[count] = trd_strndup(is, (size_t)(ie - is)))) {
                v.n = count;
                trd_value_free(&v);
                return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
            }
            count++;
            v.n = count;
        }
        if (!c)
            break;
        s = c + 1;
    }
    *out = v;
    return TRD_OK;
}

trd_status_t trd_value_parse(const struct trd_option_table *t, const struct trd_option_row *r,
                             const struct trd_options *o, const char *text, struct trd_value *out)
{
    if (!text)
        return bad(t, r, "", "no value");
    size_t len = strlen(text);
    if (len > 4096)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "option %s.%s: the value is %zu characters long, more than 4096",
                             t->backend, r->name, len);
    if (!trd_utf8_valid(text, len))
        return bad(t, r, text, "not valid UTF-8 text");
    struct trd_value v;
    memset(&v, 0, sizeof v);
    char why[256];
    switch (r->type) {
    case TRD_OPT_OPT_BOOL:
        if (is_none(text))
            break;
        /* fall through */
    case TRD_OPT_BOOL:
        v.kind = TRD_V_BOOL;
        if (!parse_bool(text, &v.i))
            return bad(t, r, text, r->type == TRD_OPT_BOOL ? "expected true or false" : "expected true, false or none");
        break;
    case TRD_OPT_OPT_INT:
        if (is_none(text) || !*text)
            break;
        /* fall through */
    case TRD_OPT_INT: {
        v.kind = TRD_V_INT;
        if (!trd_parse_i64(text, &v.i))
            return bad(t, r, text, r->type == TRD_OPT_INT ? "expected an integer" : "expected an integer or none");
        if (r->min <= r->max && (v.i < r->min || v.i > r->max)) {
            snprintf(why, sizeof why, "expected %lld .. %lld", (long long)r->min, (long long)r->max);
            return bad(t, r, text, why);
        }
        break;
    }
    case TRD_OPT_OPT_STRING:
        if (is_none(text))
            break;
        /* fall through */
    case TRD_OPT_STRING:
    case TRD_OPT_ENUM:
        if (r->values && !in_values(r->values, text, len)) {
            char near[64];
            const char *nv = nearest_value(r->values, text, near, sizeof near);
            snprintf(why, sizeof why, "expected one of %s%s%s%s", r->values, nv ? " (did you mean '" : "",
                     nv ? nv : "", nv ? "'?)" : "");
            return bad(t, r, text, why);
        }
        v.kind = TRD_V_STR;
        if (!(v.s = trd_strdup(text)))
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        break;
    case TRD_OPT_STRING_LIST: {
        trd_status_t st = split_list(t, r, text, 0, &v);
        if (st != TRD_OK)
            return st;
        break;
    }
    case TRD_OPT_PATH_MAP: {
        if (is_none(text))
            break;
        trd_status_t st = split_list(t, r, text, 1, &v);
        if (st != TRD_OK)
            return st;
        break;
    }
    case TRD_OPT_INT_TRIPLE: {
        v.kind = TRD_V_TRIPLE;
        const char *p = text;
        while (isspace((unsigned char)*p) || *p == '(' || *p == '[')
            p++;
        for (int k = 0; k < 3; k++) {
            char *end;
            long long x = strtoll(p, &end, 10);
            if (end == p || x < 1 || x > 65535)
                return bad(t, r, text, "expected three integers 1 .. 65535 such as 1,1,1");
            v.t[k] = x;
            p = end;
            while (isspace((unsigned char)*p))
                p++;
            if (k < 2) {
                if (*p != ',')
                    return bad(t, r, text, "expected three integers separated by ','");
                p++;
            }
        }
        while (isspace((unsigned char)*p) || *p == ')' || *p == ']')
            p++;
        if (*p)
            return bad(t, r, text, "expected exactly three integers");
        break;
    }
    default:
        return trd_error_set(TRD_ERR_INTERNAL, "option %s.%s has an unknown type", t->backend, r->name);
    }
    if (r->check) {
        char buf[256];
        const char *msg = r->check(o, &v, buf, sizeof buf);
        if (msg) {
            trd_status_t st = bad(t, r, text, msg);
            trd_value_free(&v);
            return st;
        }
    }
    *out = v;
    return TRD_OK;
}
