/* SPDX-License-Identifier: Apache-2.0 */
/* config.c: trident.ini files (parsed by inih), TRIDENT_* environment
 * variables and API values, each checked against the option tables and
 * remembered with where it came from. Later sources override earlier ones:
 * system file < user file < $TRIDENT_CONFIG < environment < API. */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/log.h"
#include "base/selector.h"
#include "base/util.h"
#include "options/options.h"
#include "options/table.h"

#ifndef TRD_SYSCONFDIR
#define TRD_SYSCONFDIR "/usr/local/etc"
#endif

/* The longest section name inih keeps whole: libinih is built with INI_MAX_SECTION 50 (name and NUL), and cuts longer
 * names without saying so. */
#define TRD_INI_SECTION_MAX 50

/* A trident.ini is a few kilobytes; anything near this is not one (or is /dev/zero behind a link). */
#define TRD_CONFIG_FILE_MAX ((size_t)1 << 20)

extern char **environ;

struct item {
    char *section;
    char *key;
    char *value;
    char *origin;   /* "FILE:LINE", "env NAME", "api" */
    int32_t kind;   /* enum trd_config_origin */
    uint32_t load;  /* which file load stored it: duplicates are per load */
    uint32_t line;
};

struct trd_config {
    uint32_t flags;
    struct item *items;
    uint32_t n, cap;
    trd_diag_fn diag;
    void *diag_user;
    uint32_t errors;
    uint32_t load;  /* counts file loads */
    char first_error[512];
};

TRD_API trd_status_t trd_config_create(uint32_t flags, trd_config_t **out)
{
    if (!out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_create: out is NULL");
    if (flags & ~(uint32_t)TRD_CONFIG_STRICT)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_create: unknown flags 0x%x", flags);
    trd_config_t *c = calloc(1, sizeof *c);
    if (!c)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    c->flags = flags;
    *out = c;
    return TRD_OK;
}

static void item_free(struct item *it)
{
    free(it->section);
    free(it->key);
    free(it->value);
    free(it->origin);
}

TRD_API void trd_config_destroy(trd_config_t *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++)
        item_free(&c->items[i]);
    free(c->items);
    free(c);
}

TRD_API trd_status_t trd_config_set_diag(trd_config_t *c, trd_diag_fn fn, void *user)
{
    if (!c)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_set_diag: config is NULL");
    c->diag = fn;
    c->diag_user = user;
    return TRD_OK;
}

static struct item *find_item(const trd_config_t *c, const char *section, const char *key)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (strcmp(c->items[i].section, section) == 0 && strcmp(c->items[i].key, key) == 0)
            return &c->items[i];
    return NULL;
}

static int strict(const trd_config_t *c)
{
    if (c->flags & TRD_CONFIG_STRICT)
        return 1;
    struct item *it = find_item(c, "runtime", "strict");
    return it && strcmp(it->value, "true") == 0;
}

/* Reports one problem; warnings become errors in strict mode. */
static void report(trd_config_t *c, int32_t level, const char *file, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void report(trd_config_t *c, int32_t level, const char *file, uint32_t line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (level == TRD_LOG_WARN && strict(c))
        level = TRD_LOG_ERROR;
    char full[1024];
    if (file && line)
        snprintf(full, sizeof full, "%s:%u: %s", file, line, msg);
    else if (file)
        snprintf(full, sizeof full, "%s: %s", file, msg);
    else
        snprintf(full, sizeof full, "%s", msg);
    if (level == TRD_LOG_ERROR) {
        if (c->errors == 0)
            trd_fmt(c->first_error, sizeof c->first_error, "%s", full);
        c->errors++;
    }
    if (c->diag)
        c->diag(c->diag_user, level, file, line, msg);
    else
        trd_log(level, "%s", full);
}

/* Stores a value; a higher-precedence one already there stays. */
static trd_status_t store(trd_config_t *c, const char *section, const char *key, const char *value, const char *origin,
                          int32_t kind, uint32_t line)
{
    struct item *it = find_item(c, section, key);
    if (it && it->kind > kind)
        return TRD_OK;
    char *v = trd_strdup(value), *o = trd_strdup(origin);
    if (!v || !o) {
        free(v);
        free(o);
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    if (it) {
        free(it->value);
        free(it->origin);
    } else {
        if (c->n == c->cap) {
            uint32_t ncap = c->cap ? c->cap * 2 : 16;
            struct item *p = realloc(c->items, ncap * sizeof *p);
            if (!p) {
                free(v);
                free(o);
                return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
            }
            c->items = p;
            c->cap = ncap;
        }
        it = &c->items[c->n];
        memset(it, 0, sizeof *it);
        it->section = trd_strdup(section);
        it->key = trd_strdup(key);
        if (!it->section || !it->key) {
            free(it->section);
            free(it->key);
            free(v);
            free(o);
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        }
        c->n++;
    }
    it->value = v;
    it->origin = o;
    it->kind = kind;
    it->load = kind == TRD_ORIGIN_FILE ? c->load : 0;
    it->line = line;
    return TRD_OK;
}

/* ------------------------------------------------------------ sections */

enum section_kind { SEC_UNKNOWN, SEC_RUNTIME, SEC_DRIVER, SEC_BACKEND, SEC_DEVICE };

struct section {
    int kind;
    const struct trd_option_table *table; /* runtime, driver, backend */
    char selector[256];                   /* device */
    char canonical[300];                  /* what items are stored under */
};

static int valid_ident(const char *s)
{
    if (!*s || strlen(s) > 32)
        return 0;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

/* Classifies a section name. Returns 0 and sets why when malformed. */
static int parse_section(const char *name, struct section *sec, char *why, size_t cap)
{
    memset(sec, 0, sizeof *sec);
    snprintf(sec->canonical, sizeof sec->canonical, "%s", name);
    if (strcmp(name, "runtime") == 0) {
        sec->kind = SEC_RUNTIME;
        sec->table = &trd_table_runtime;
        return 1;
    }
    if (strncmp(name, "driver.", 7) == 0) {
        if (!valid_ident(name + 7)) {
            snprintf(why, cap, "[%.64s]: a driver name is [a-z0-9_]{1,32}", name);
            return 0;
        }
        sec->kind = SEC_DRIVER;
        sec->table = &trd_table_driver;
        return 1;
    }
    if (strncmp(name, "backend.", 8) == 0) {
        const char *b = name + 8;
        if (strcmp(b, "runtime") == 0 || strcmp(b, "driver") == 0 || !(sec->table = trd_table_find(b))) {
            snprintf(why, cap, "[%.64s]: '%.32s' is not a backend (cuda, hip, xpu, host)", name, b);
            return 0;
        }
        sec->kind = SEC_BACKEND;
        snprintf(sec->canonical, sizeof sec->canonical, "backend.%s", sec->table->backend);
        return 1;
    }
    if (strncmp(name, "device", 6) == 0 && (name[6] == ' ' || name[6] == '\t')) {
        const char *s = name + 6;
        while (*s == ' ' || *s == '\t')
            s++;
        size_t n = strlen(s);
        if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
            s++;
            n -= 2;
        } else if (n && (s[0] == '"' || s[n - 1] == '"')) {
            snprintf(why, cap, "[%.64s]: unbalanced quote (expected [device \"<selector>\"])", name);
            return 0;
        }
        if (n == 0 || n >= sizeof sec->selector) {
            snprintf(why, cap, "[%.64s]: expected [device \"<selector>\"] with a URI, PCI id, UUID or key=value match",
                     name);
            return 0;
        }
        memcpy(sec->selector, s, n);
        sec->selector[n] = '\0';
        sec->kind = SEC_DEVICE;
        snprintf(sec->canonical, sizeof sec->canonical, "device \"%s\"", sec->selector);
        /* check the selector's syntax on a device that matches nothing */
        trd_device_props_t none;
        memset(&none, 0, sizeof none);
        none.uri = none.driver = none.backend = none.name = none.vendor = none.arch = "";
        if (trd_props_match(&none, sec->selector) < 0) {
            snprintf(why, cap, "[%.64s]: %s", name, trd_error_message());
            return 0;
        }
        return 1;
    }
    sec->kind = SEC_UNKNOWN;
    return 1;
}

/* The backend a device selector names, when it does. */
static const struct trd_option_table *selector_table(const char *sel)
{
    static const struct { const char *prefix; const char *backend; } hints[] = {
        {"cuda:", "cuda"}, {"hip:", "hip"}, {"levelzero:", "xpu"}, {"host:", "host"},
        {"arch=sm", "cuda"}, {"arch=gfx", "hip"}, {"backend=cuda", "cuda"}, {"backend=hip", "hip"},
        {"backend=xpu", "xpu"}, {"backend=host", "host"}, {"driver=cuda", "cuda"}, {"driver=hip", "hip"},
        {"driver=levelzero", "xpu"}, {"driver=host", "host"}};
    for (size_t i = 0; i < TRD_ARRAY_SIZE(hints); i++)
        if (strstr(sel, hints[i].prefix) == sel || (strchr(hints[i].prefix, '=') && strstr(sel, hints[i].prefix)))
            return trd_table_find(hints[i].backend);
    return NULL;
}

/* Checks a value against a row: returns 0 and fills why when invalid. */
static int check_value(const struct trd_option_table *t, const struct trd_option_row *r, const char *value, char *why,
                       size_t cap)
{
    trd_options_t *o = NULL;
    if (trd_options_create(t->backend, &o) != TRD_OK) {
        snprintf(why, cap, "%s", trd_error_message());
        return 0;
    }
    struct trd_value v;
    trd_status_t st = trd_value_parse(t, r, o, value, &v);
    trd_options_destroy(o);
    if (st != TRD_OK) {
        snprintf(why, cap, "%s", trd_error_message());
        return 0;
    }
    trd_value_free(&v);
    return 1;
}

static void unknown_key(trd_config_t *c, const char *file, uint32_t line, const char *section,
                        const struct trd_option_table *t, const char *key)
{
    trd_row_unknown(t, key);
    report(c, TRD_LOG_WARN, file, line, "[%s] %s", section, trd_error_message());
}

/* Validates and stores one key of a section. */
static void accept_key(trd_config_t *c, const struct section *sec, const char *key, const char *value,
                       const char *origin, int32_t kind, const char *file, uint32_t line)
{
    char why[600];
    if (!file && kind == TRD_ORIGIN_ENV)
        file = origin; /* "env TRIDENT_X" names the input in every message */
    const char *section = sec->canonical;
    if (sec->kind == SEC_UNKNOWN) {
        report(c, TRD_LOG_WARN, file, line,
               "unknown section [%s] (expected runtime, driver.<name>, backend.<name> or device \"<selector>\")",
               section);
        return;
    }
    const struct trd_option_table *t = sec->table;
    const struct trd_option_row *r = NULL;
    if (sec->kind == SEC_DEVICE) {
        if (strcmp(key, "driver") == 0) {
            if (!valid_ident(value)) {
                report(c, TRD_LOG_ERROR, file, line, "[%s] driver = '%s': a driver name is [a-z0-9_]{1,32}", section,
                       value);
                return;
            }
        } else if (strcmp(key, "enabled") == 0) {
            r = trd_row_find(&trd_table_driver, "enabled");
            t = &trd_table_driver;
        } else {
            t = selector_table(sec->selector);
            if (t) {
                r = trd_row_find(t, key);
                if (!r || !trd_row_in_release(t, r, -1)) {
                    unknown_key(c, file, line, section, t, key);
                    return;
                }
            } else {
                static const struct trd_option_table *const all[] = {&trd_table_cuda, &trd_table_hip, &trd_table_xpu,
                                                                      &trd_table_host};
                for (size_t i = 0; i < TRD_ARRAY_SIZE(all) && !r; i++) {
                    r = trd_row_find(all[i], key);
                    t = all[i];
                }
                if (!r) {
                    report(c, TRD_LOG_WARN, file, line,
                           "[%s] '%s' is not driver, enabled or an option of any backend", section, key);
                    return;
                }
            }
        }
    } else {
        r = trd_row_find(t, key);
        if (!r || !trd_row_in_release(t, r, -1)) {
            unknown_key(c, file, line, section, t, key);
            return;
        }
    }
    if (r && !check_value(t, r, value, why, sizeof why)) {
        report(c, TRD_LOG_ERROR, file, line, "[%s] %s", section, why);
        return;
    }
    /* Canonical text for what the runtime reads back (true/false, ...). */
    char *canon = NULL;
    if (r && r->type == TRD_OPT_BOOL) {
        struct trd_value v;
        if (trd_value_parse(t, r, NULL, value, &v) == TRD_OK) {
            canon = trd_value_text(&v);
            trd_value_free(&v);
        }
    }
    if (file && kind == TRD_ORIGIN_FILE) {
        struct item *prev = find_item(c, section, key);
        if (prev && prev->kind == TRD_ORIGIN_FILE && prev->load == c->load) {
            report(c, TRD_LOG_ERROR, file, line, "[%s] duplicate key '%s' (first set at line %u)", section, key,
                   prev->line);
            free(canon);
            return;
        }
    }
    if (store(c, section, key, canon ? canon : value, origin, kind, line) != TRD_OK)
        report(c, TRD_LOG_ERROR, file, line, "%s", trd_error_message());
    free(canon);
}

/* ------------------------------------------------------------- files */

struct parse_ctx {
    trd_config_t *c;
    const char *file;
    const char *text;  /* the whole input (a file is read first) */
    size_t pos, len;
    uint32_t line;
    char cur_section[300];
    char long_section[512]; /* the name of the last section header too long for inih */
    unsigned long_id;       /* its stand-in is "\x02<long_id>" */
    struct section sec;
    int sec_ok;
};

/* inih's reader: one line per call, line numbers counted here, and lines inih
 * would misread (too long, binary, broken headers) reported and blanked. */
static char *reader(char *buf, int num, void *stream)
{
    struct parse_ctx *p = stream;
    if (p->pos >= p->len)
        return NULL;
    const char *start = p->text + p->pos;
    const char *nl = memchr(start, '\n', p->len - p->pos);
    size_t n = nl ? (size_t)(nl - start) + 1 : p->len - p->pos;
    char *line = trd_strndup(start, n);
    p->pos += n;
    if (!line)
        return NULL;
    p->line++;
    size_t body = n;
    while (body > 0 && (line[body - 1] == '\n' || line[body - 1] == '\r'))
        body--;
    const char *problem = NULL;
    char why[160];
    if (memchr(line, '\0', n) || !trd_utf8_valid(line, body)) {
        problem = "the line is not valid UTF-8 text (binary data?)";
    } else if (body + 2 > (size_t)num) {
        snprintf(why, sizeof why, "the line is %zu characters long, more than the %d accepted", body, num - 2);
        problem = why;
    } else {
        size_t s = 0;
        while (s < body && (line[s] == ' ' || line[s] == '\t'))
            s++;
        const char *close = s < body && line[s] == '[' ? memchr(line + s, ']', body - s) : NULL;
        if (s < body && line[s] == '[' && !close)
            problem = "unterminated section header (expected [name])";
        else if (close && (size_t)(close - (line + s)) >= TRD_INI_SECTION_MAX) {
            /* inih (built with its default INI_MAX_SECTION) would cut a longer name silently, and a device
             * selector would then match other devices than the one written: inih gets a short stand-in, and the
             * handler the whole name */
            size_t len = (size_t)(close - (line + s)) - 1;
            snprintf(p->long_section, sizeof p->long_section, "%.*s", (int)len, line + s + 1);
            snprintf(why, sizeof why, "[\x02%u]", ++p->long_id);
            memcpy(line + s, why, strlen(why));
            memmove(line + s + strlen(why), close + 1, (size_t)(line + n - close - 1));
            size_t cut = (size_t)(close + 1 - (line + s)) - strlen(why);
            n -= cut;
            body -= cut;
        } else if (s < body && line[s] != '[' && line[s] != ';' && line[s] != '#' &&
                 !memchr(line + s, '=', body - s) && !memchr(line + s, ':', body - s))
            problem = "expected 'key = value', '[section]' or a comment";
        if (!problem) {
            /* hand inih the line without leading blanks: no continuation lines */
            memmove(line, line + s, n - s);
            n -= s;
            body -= s;
        }
    }
    if (problem) {
        report(p->c, TRD_LOG_ERROR, p->file, p->line, "%s", problem);
        snprintf(buf, (size_t)num, ";\n");
    } else {
        memcpy(buf, line, body);
        buf[body] = '\n';
        buf[body + 1] = '\0';
    }
    free(line);
    return buf;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct parse_ctx *p = user;
    if (strcmp(section, p->cur_section) != 0 || !p->sec_ok) {
        snprintf(p->cur_section, sizeof p->cur_section, "%s", section);
        char why[300];
        p->sec_ok = parse_section(section[0] == '\x02' ? p->long_section : section, &p->sec, why, sizeof why);
        if (!p->sec_ok) {
            report(p->c, TRD_LOG_ERROR, p->file, p->line, "%s", why);
            p->sec_ok = -1; /* reported once per section */
        }
    }
    if (p->sec_ok < 0)
        return 1;
    if (!*section) {
        report(p->c, TRD_LOG_ERROR, p->file, p->line, "'%s' is outside any section", name);
        return 1;
    }
    char origin[600];
    snprintf(origin, sizeof origin, "%s:%u", p->file, p->line);
    accept_key(p->c, &p->sec, name, value, origin, TRD_ORIGIN_FILE, p->file, p->line);
    return 1;
}

static trd_status_t finish(trd_config_t *c, uint32_t errors_before)
{
    if (c->errors > errors_before)
        return trd_error_set(TRD_ERR_FORMAT, "%s%s", c->first_error,
                             c->errors - errors_before > 1 ? " (and more errors)" : "");
    return TRD_OK;
}

static trd_status_t parse(trd_config_t *c, struct parse_ctx *p)
{
    uint32_t before = c->errors;
    c->load++;
    int r = ini_parse_stream(reader, p, handler, p);
    if (r > 0)
        report(c, TRD_LOG_ERROR, p->file, (uint32_t)r, "syntax error");
    else if (r == -2)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory parsing %s", p->file);
    return finish(c, before);
}

TRD_API trd_status_t trd_config_load_file(trd_config_t *c, const char *path)
{
    if (!c || !path)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_load_file: NULL argument");
    /* the whole file first: a FIFO, a device or a directory is refused before a byte is read, a read error is
     * an error (not the end of the file), and the size is bounded */
    char *text;
    size_t len;
    trd_status_t st = trd_file_read(path, TRD_CONFIG_FILE_MAX, &text, &len);
    if (st != TRD_OK)
        return trd_error_wrap(st, "cannot read configuration");
    struct parse_ctx p = {.c = c, .file = path, .text = text, .len = len};
    p.cur_section[0] = '\x01'; /* no section seen yet */
    st = parse(c, &p);
    free(text);
    return st;
}

TRD_API trd_status_t trd_config_load_string(trd_config_t *c, const char *text, const char *name)
{
    if (!c || !text)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_load_string: NULL argument");
    struct parse_ctx p = {.c = c, .file = name ? name : "<string>", .text = text, .len = strlen(text)};
    p.cur_section[0] = '\x01';
    return parse(c, &p);
}

/* ------------------------------------------------------- environment */

static void upper(char *dst, const char *src, size_t cap)
{
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++)
        dst[i] = (char)toupper((unsigned char)src[i]);
    dst[i] = '\0';
}

static void env_nearest(const char *name, char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t best = 4;
    static const struct trd_option_table *const backends[] = {&trd_table_cuda, &trd_table_hip, &trd_table_xpu,
                                                              &trd_table_host};
    char cand[128];
    for (uint32_t i = 0; i < trd_table_runtime.count; i++) {
        const char *e = trd_table_runtime.rows[i].env;
        size_t d = trd_edit_distance(name, e);
        if (d < best) {
            best = d;
            snprintf(buf, cap, "%s", e);
        }
    }
    for (size_t b = 0; b < TRD_ARRAY_SIZE(backends); b++)
        for (uint32_t i = 0; i < backends[b]->count; i++) {
            char u1[32], u2[64];
            upper(u1, backends[b]->backend, sizeof u1);
            upper(u2, backends[b]->rows[i].name, sizeof u2);
            snprintf(cand, sizeof cand, "TRIDENT_%s_%s", u1, u2);
            size_t d = trd_edit_distance(name, cand);
            if (d < best) {
                best = d;
                snprintf(buf, cap, "%s", cand);
            }
        }
}

/* Applies one TRIDENT_* variable; returns 0 when it is not one trident reads. */
static int env_one(trd_config_t *c, const char *name, const char *value)
{
    char origin[300];
    snprintf(origin, sizeof origin, "env %s", name);
    static const char *const others[] = {"TRIDENT_CONFIG", "TRIDENT_LIBRARY"};
    for (size_t i = 0; i < TRD_ARRAY_SIZE(others); i++)
        if (strcmp(name, others[i]) == 0)
            return 1;
    struct section sec;
    char why[300];
    for (uint32_t i = 0; i < trd_table_runtime.count; i++)
        if (strcmp(trd_table_runtime.rows[i].env, name) == 0) {
            /* a bad TRIDENT_LOG must never stop a program: log.c warns once about it and logs at warn */
            if (strcmp(name, "TRIDENT_LOG") == 0 && trd_log_parse_level(value) < 0 && !strict(c))
                return 1;
            parse_section("runtime", &sec, why, sizeof why);
            accept_key(c, &sec, trd_table_runtime.rows[i].name, value, origin, TRD_ORIGIN_ENV, NULL, 0);
            return 1;
        }
    static const struct trd_option_table *const backends[] = {&trd_table_cuda, &trd_table_hip, &trd_table_xpu,
                                                              &trd_table_host};
    for (size_t b = 0; b < TRD_ARRAY_SIZE(backends); b++) {
        char prefix[48];
        upper(prefix, backends[b]->backend, sizeof prefix);
        size_t pl = strlen(prefix);
        if (strncmp(name + 8, prefix, pl) != 0 || name[8 + pl] != '_')
            continue;
        const char *opt = name + 9 + pl;
        char lower[128];
        size_t k = 0;
        for (; opt[k] && k + 1 < sizeof lower; k++)
            lower[k] = (char)tolower((unsigned char)opt[k]);
        lower[k] = '\0';
        const struct trd_option_row *r = trd_row_find(backends[b], lower);
        if (!r || !trd_row_in_release(backends[b], r, -1))
            return 0;
        char section[64];
        snprintf(section, sizeof section, "backend.%s", backends[b]->backend);
        parse_section(section, &sec, why, sizeof why);
        accept_key(c, &sec, lower, value, origin, TRD_ORIGIN_ENV, NULL, 0);
        return 1;
    }
    if (strncmp(name, "TRIDENT_DRIVER_", 15) == 0) {
        const char *rest = name + 15;
        const char *us = strrchr(rest, '_');
        if (!us || us == rest)
            return 0;
        char drv[64], key[64];
        size_t dn = (size_t)(us - rest);
        if (dn >= sizeof drv || strlen(us + 1) >= sizeof key)
            return 0;
        for (size_t i = 0; i < dn; i++)
            drv[i] = (char)tolower((unsigned char)rest[i]);
        drv[dn] = '\0';
        size_t kn = 0;
        for (const char *s = us + 1; *s; s++)
            key[kn++] = (char)tolower((unsigned char)*s);
        key[kn] = '\0';
        if (!trd_row_find(&trd_table_driver, key))
            return 0;
        char section[128];
        snprintf(section, sizeof section, "driver.%s", drv);
        if (!parse_section(section, &sec, why, sizeof why))
            return 0;
        accept_key(c, &sec, key, value, origin, TRD_ORIGIN_ENV, NULL, 0);
        return 1;
    }
    return 0;
}

TRD_API trd_status_t trd_config_load_env(trd_config_t *c)
{
    if (!c)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_load_env: config is NULL");
    if (trd_secure_process())
        return TRD_OK; /* setuid: the environment is not trusted */
    uint32_t before = c->errors;
    /* strict first, so that it governs the rest */
    const char *s = trd_getenv("TRIDENT_STRICT");
    if (s)
        env_one(c, "TRIDENT_STRICT", s);
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "TRIDENT_", 8) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq || (size_t)(eq - *e) >= 200)
            continue;
        char name[200];
        memcpy(name, *e, (size_t)(eq - *e));
        name[eq - *e] = '\0';
        if (strcmp(name, "TRIDENT_STRICT") == 0)
            continue;
        if (!env_one(c, name, eq + 1)) {
            char near[128];
            env_nearest(name, near, sizeof near);
            report(c, TRD_LOG_WARN, NULL, 0, "environment variable %s is not one trident reads%s%s%s", name,
                   near[0] ? " (did you mean " : "", near, near[0] ? "?)" : "");
        }
    }
    return finish(c, before);
}

TRD_API trd_status_t trd_config_load_defaults(trd_config_t *c)
{
    if (!c)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_load_defaults: config is NULL");
    uint32_t before = c->errors;
    char *sys = trd_asprintf("%s/trident/trident.ini", TRD_SYSCONFDIR);
    char *user = NULL;
    const char *xdg = trd_getenv("XDG_CONFIG_HOME");
    const char *home = trd_getenv("HOME");
    if (xdg && *xdg == '/')
        user = trd_asprintf("%s/trident/trident.ini", xdg);
    else if (home && *home == '/')
        user = trd_asprintf("%s/.config/trident/trident.ini", home);
    const char *paths[2] = {sys, user};
    trd_status_t st = TRD_OK;
    for (size_t i = 0; i < 2; i++) {
        if (!paths[i])
            continue;
        trd_status_t r = trd_config_load_file(c, paths[i]);
        if (r != TRD_OK && r != TRD_ERR_NOT_FOUND && st == TRD_OK)
            st = r;
    }
    free(sys);
    free(user);
    const char *named = trd_getenv("TRIDENT_CONFIG");
    if (named && *named) {
        /* a file the user named explicitly: any failure to read it is an error, never silently skipped */
        trd_status_t r = trd_config_load_file(c, named);
        if (r == TRD_ERR_NOT_FOUND)
            report(c, TRD_LOG_ERROR, named, 0, "TRIDENT_CONFIG names a file that does not exist");
        else if (r != TRD_OK && r != TRD_ERR_FORMAT)
            report(c, TRD_LOG_ERROR, NULL, 0, "TRIDENT_CONFIG: %s", trd_error_message());
    }
    trd_config_load_env(c);
    if (c->errors > before)
        return finish(c, before);
    return st;
}

TRD_API trd_status_t trd_config_set(trd_config_t *c, const char *section, const char *key, const char *value)
{
    if (!c || !section || !key || !value)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_set: NULL argument");
    struct section sec;
    char why[300];
    if (!parse_section(section, &sec, why, sizeof why))
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s", why);
    if (sec.kind == SEC_UNKNOWN)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                             "unknown section [%s] (expected runtime, driver.<name>, backend.<name> or device \"<selector>\")",
                             section);
    uint32_t before = c->errors;
    trd_diag_fn saved = c->diag;
    /* API errors go to the caller, not the diagnostic sink */
    c->diag = NULL;
    accept_key(c, &sec, key, value, "api", TRD_ORIGIN_API, NULL, 0);
    c->diag = saved;
    if (c->errors > before) {
        c->errors = before;
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s", c->first_error);
    }
    if (!find_item(c, sec.canonical, key))
        return trd_error_set(TRD_ERR_NOT_FOUND, "[%s] has no key '%s'", section, key);
    return TRD_OK;
}

TRD_API trd_status_t trd_config_get(const trd_config_t *c, const char *section, const char *key, const char **value,
                                    const char **origin)
{
    if (!c || !section || !key)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_get: NULL argument");
    const struct item *it = find_item(c, section, key);
    if (!it)
        return trd_error_set(TRD_ERR_NOT_FOUND, "[%s] %s is not set", section, key);
    if (value)
        *value = it->value;
    if (origin)
        *origin = it->origin;
    return TRD_OK;
}

const char *trd_config_value(const trd_config_t *c, const char *section, const char *key)
{
    if (!c)
        return NULL;
    const struct item *it = find_item(c, section, key);
    return it ? it->value : NULL;
}

TRD_API trd_status_t trd_config_entry_count(const trd_config_t *c, uint32_t *count)
{
    if (!c || !count)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_entry_count: NULL argument");
    *count = c->n;
    return TRD_OK;
}

TRD_API trd_status_t trd_config_entry_get(const trd_config_t *c, uint32_t index, trd_config_entry_t *e)
{
    if (!c || !e)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_config_entry_get: NULL argument");
    trd_status_t st = trd_struct_check(e->struct_size, sizeof(trd_config_entry_t), "trd_config_entry_t");
    if (st != TRD_OK)
        return st;
    if (index >= c->n)
        return trd_error_set(TRD_ERR_NOT_FOUND, "configuration entry %u is out of range (%u entries)", index, c->n);
    const struct item *it = &c->items[index];
    trd_config_entry_t full = {
        .struct_size = sizeof full,
        .kind = it->kind,
        .section = it->section,
        .key = it->key,
        .value = it->value,
        .origin = it->origin,
    };
    trd_struct_fill(e, &full, sizeof full);
    return TRD_OK;
}

TRD_API trd_status_t trd_config_check_file(const char *path, uint32_t flags, trd_diag_fn fn, void *user,
                                           uint32_t *errors)
{
    trd_config_t *c;
    trd_status_t st = trd_config_create(flags, &c);
    if (st != TRD_OK)
        return st;
    c->diag = fn;
    c->diag_user = user;
    st = trd_config_load_file(c, path);
    if (errors)
        *errors = st == TRD_OK || st == TRD_ERR_FORMAT ? c->errors : 1;
    trd_config_destroy(c);
    return st;
}

/* ----------------------------------------------- what options.c reads */

/* 1 when section is a [device "<selector>"] section (stored canonical, the quotes kept) whose selector matches
 * the device. */
static int device_section_matches(const char *section, const trd_device_props_t *props)
{
    if (strncmp(section, "device \"", 8) != 0)
        return 0;
    char sel[256];
    size_t n = strlen(section + 8);
    if (n == 0 || n - 1 >= sizeof sel)
        return 0;
    memcpy(sel, section + 8, n - 1); /* drop the closing quote */
    sel[n - 1] = '\0';
    return trd_props_match(props, sel) == 1;
}

const char *trd_config_device_value(const trd_config_t *c, const trd_device_props_t *props, const char *key,
                                    const char **origin)
{
    if (!c)
        return NULL;
    const char *found = NULL;
    for (uint32_t i = 0; i < c->n; i++) {
        const struct item *it = &c->items[i];
        if (strcmp(it->key, key) == 0 && device_section_matches(it->section, props)) {
            found = it->value;
            if (origin)
                *origin = it->origin;
        }
    }
    return found;
}

typedef trd_status_t (*trd_config_visit_fn)(void *ctx, const char *key, const char *value, const char *origin);
trd_status_t trd_config_visit_options(const trd_config_t *c, const char *backend, const trd_device_props_t *props,
                                      trd_config_visit_fn fn, void *ctx);

trd_status_t trd_config_visit_options(const trd_config_t *c, const char *backend, const trd_device_props_t *props,
                                      trd_config_visit_fn fn, void *ctx)
{
    char section[64];
    snprintf(section, sizeof section, "backend.%s", backend);
    /* [backend.X] first, then matching [device] sections, which override it */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < c->n; i++) {
            const struct item *it = &c->items[i];
            if (pass == 0 && strcmp(it->section, section) != 0)
                continue;
            if (pass == 1) {
                if (!props || strcmp(it->key, "driver") == 0 || strcmp(it->key, "enabled") == 0 ||
                    !device_section_matches(it->section, props))
                    continue;
            }
            trd_status_t st = fn(ctx, it->key, it->value, it->origin);
            if (st != TRD_OK)
                return st;
        }
    return TRD_OK;
}
