/* SPDX-License-Identifier: Apache-2.0 */
/* table.c: the option tables as a set (find one by backend, list them) and
 * their rows (find, what a Triton release has, its default then). */
#include <string.h>

#include "base/error.h"
#include "base/util.h"
#include "options/table.h"

static const struct trd_option_table *const tables[] = {
    &trd_table_cuda, &trd_table_hip, &trd_table_xpu, &trd_table_host, &trd_table_runtime, &trd_table_driver,
};

const struct trd_option_table *trd_table_lookup(const char *backend)
{
    if (!backend)
        return NULL;
    for (size_t i = 0; i < TRD_ARRAY_SIZE(tables); i++)
        if (strcmp(tables[i]->backend, backend) == 0)
            return tables[i];
    if (strcmp(backend, "intel") == 0)
        return &trd_table_xpu;
    return NULL;
}

const struct trd_option_table *trd_table_find(const char *backend)
{
    const struct trd_option_table *t = trd_table_lookup(backend);
    if (t)
        return t;
    const char *near = NULL;
    size_t best = 3;
    for (size_t i = 0; backend && i < TRD_ARRAY_SIZE(tables); i++) {
        size_t d = trd_edit_distance(backend, tables[i]->backend);
        if (d < best) {
            best = d;
            near = tables[i]->backend;
        }
    }
    char shown[64];
    trd_quote(backend ? backend : "(null)", backend ? strlen(backend) : 6, shown, sizeof shown);
    trd_error_set(TRD_ERR_NOT_FOUND, "'%s' is not a backend with options (cuda, hip, xpu, host, runtime, driver)%s%s%s",
                  shown, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    return NULL;
}

int trd_release_parse(const char *text)
{
    if (!text)
        return -1;
    int parts[3] = {0, 0, 0}, n = 0;
    const char *p = text;
    while (n < 3) {
        if (*p < '0' || *p > '9')
            return -1;
        int v = 0;
        while (*p >= '0' && *p <= '9' && v < 1000)
            v = v * 10 + (*p++ - '0');
        if (v >= 100)
            return -1;
        parts[n++] = v;
        if (*p == '\0')
            break;
        if (*p != '.')
            return -1;
        p++;
    }
    if (*p != '\0')
        return -1;
    return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

int trd_release_of_version(const char *version)
{
    if (!version)
        return -1;
    /* "3.6.0+git..." and "3.9.0rc1" both name the release before the suffix */
    char buf[16];
    size_t n = 0;
    while (version[n] && (version[n] == '.' || (version[n] >= '0' && version[n] <= '9')) && n < sizeof buf - 1) {
        buf[n] = version[n];
        n++;
    }
    buf[n] = '\0';
    if (n && buf[n - 1] == '.')
        return -1;
    return trd_release_parse(buf);
}

int trd_table_knows(const struct trd_option_table *t, int release)
{
    if (release < 0 || !t->oldest)
        return 0;
    int minor = release / 100 * 100;
    return minor >= trd_release_parse(t->oldest) / 100 * 100 && minor <= trd_release_parse(t->current) / 100 * 100;
}

trd_status_t trd_table_unknown_release(const struct trd_option_table *t, const char *text)
{
    char shown[40];
    trd_quote(text ? text : "(null)", text ? strlen(text) : 6, shown, sizeof shown);
    if (!t->product)
        return trd_error_set(TRD_ERR_UNSUPPORTED, "the %s options are trident's own: they have no %s release",
                             t->backend, shown);
    int rel = trd_release_of_version(text);
    return trd_error_set(TRD_ERR_UNSUPPORTED, "%s %s is %s: the %s table knows releases %s .. %s%s%s%s", t->product,
                         shown, rel < 0 ? "not a release such as 3.9 or 3.7.1"
                                : rel > trd_release_parse(t->current) ? "newer than trident's tables" : "not supported",
                         t->backend, t->oldest, t->current, *t->tested ? " (CI tests it against " : "",
                         t->tested, *t->tested ? ")" : "");
}

static int release_of(const struct trd_option_table *t, int release)
{
    return release >= 0 ? release : trd_release_parse(t->current);
}

int trd_row_in_release(const struct trd_option_table *t, const struct trd_option_row *r, int release)
{
    int rel = release_of(t, release);
    /* "3.5" as an upper bound covers every 3.5.x */
    if (r->since && rel < trd_release_parse(r->since))
        return 0;
    if (r->until) {
        int u = trd_release_parse(r->until);
        if (strchr(r->until, '.') == strrchr(r->until, '.'))
            u += 99;
        if (rel > u)
            return 0;
    }
    return 1;
}

const char *trd_row_default(const struct trd_option_table *t, const struct trd_option_row *r, int release)
{
    if (r->old_def && r->old_until) {
        int u = trd_release_parse(r->old_until);
        if (strchr(r->old_until, '.') == strrchr(r->old_until, '.'))
            u += 99;
        if (release_of(t, release) <= u)
            return r->old_def;
    }
    return r->def;
}

const struct trd_option_row *trd_row_find(const struct trd_option_table *t, const char *name)
{
    if (!t || !name)
        return NULL;
    for (uint32_t i = 0; i < t->count; i++)
        if (strcmp(t->rows[i].name, name) == 0)
            return &t->rows[i];
    return NULL;
}

trd_status_t trd_row_unknown(const struct trd_option_table *t, const char *name)
{
    const char *near = NULL;
    size_t best = 4;
    for (uint32_t i = 0; name && i < t->count; i++) {
        if (!trd_row_in_release(t, &t->rows[i], -1))
            continue;
        size_t d = trd_edit_distance(name, t->rows[i].name);
        if (d < best) {
            best = d;
            near = t->rows[i].name;
        }
    }
    char shown[96];
    trd_quote(name ? name : "(null)", name ? strlen(name) : 6, shown, sizeof shown);
    return trd_error_set(TRD_ERR_NOT_FOUND, "'%s' is not an option of %s%s%s%s", shown, t->backend,
                         near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
}

TRD_API trd_status_t trd_backend_count(uint32_t *count)
{
    if (!count)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_backend_count: count is NULL");
    *count = TRD_ARRAY_SIZE(tables);
    return TRD_OK;
}

TRD_API trd_status_t trd_backend_name(uint32_t index, const char **name)
{
    if (!name)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_backend_name: name is NULL");
    if (index >= TRD_ARRAY_SIZE(tables))
        return trd_error_set(TRD_ERR_NOT_FOUND, "backend index %u is out of range (%zu backends)", index,
                             TRD_ARRAY_SIZE(tables));
    *name = tables[index]->backend;
    return TRD_OK;
}
