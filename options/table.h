/* SPDX-License-Identifier: Apache-2.0 */
/* table.h: the declarative option tables. Everything trident knows about an
 * option lives in its row: type, default, derivation from the target,
 * validation, the stage where it takes effect, the Triton releases that have
 * it, its environment variable and its doc. Parsing, validation, the
 * documentation dump, the ini checks and the hashing are all driven by rows. */
#ifndef TRD_OPTIONS_TABLE_H
#define TRD_OPTIONS_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <trident/trident.h>

enum trd_value_kind {
    TRD_V_NONE = 0,
    TRD_V_BOOL,
    TRD_V_INT,
    TRD_V_STR,
    TRD_V_LIST,   /* items[n] */
    TRD_V_MAP,    /* items[2n]: name, path, name, path ... */
    TRD_V_TRIPLE  /* t[3] */
};

struct trd_value {
    int32_t kind;
    int64_t i;      /* BOOL (0/1) and INT */
    char *s;        /* STR */
    uint32_t n;     /* LIST items, MAP pairs */
    char **items;
    int64_t t[3];
};

struct trd_options;

/* Derives a default from the options' target (their "arch" value). Returns 1
 * and fills *out when it derived one, 0 to keep the static default. */
typedef int (*trd_derive_fn)(const struct trd_options *o, struct trd_value *out);
/* Extra validation beyond type and range: NULL when valid, else the reason
 * (written into buf). */
typedef const char *(*trd_check_fn)(const struct trd_options *o, const struct trd_value *v, char *buf,
                                    size_t cap);

struct trd_option_row {
    const char *name;
    int32_t type;           /* enum trd_option_type */
    int32_t stage;          /* enum trd_option_stage */
    uint32_t flags;         /* enum trd_option_flags */
    const char *type_name;  /* as Triton's dataclass annotates it */
    const char *def;        /* canonical text of the static default */
    const char *values;     /* "a|b|c": accepted strings (enum, list items) */
    int64_t min, max;       /* inclusive range of ints; min > max: unbounded */
    const char *derived;    /* doc of the derivation (NULL: not derived) */
    trd_derive_fn derive;
    trd_check_fn check;
    const char *since;      /* first release with the field */
    const char *until;      /* last release with it (NULL: current) */
    const char *old_def;    /* default up to old_until, when it changed */
    const char *old_until;
    const char *env;        /* Triton's own environment variable, for the doc */
    const char *doc;
};

struct trd_option_table {
    const char *backend;
    const char *product;    /* whose releases since/until count: "Triton", the Intel fork; NULL: trident's */
    const char *oldest;     /* the oldest release the rows know */
    const char *current;    /* the newest: the release whose dataclass the table mirrors, which
                             * trident's options objects follow */
    const char *tested;     /* the releases CI compares the rows with, installed ("3.6 3.7"), or "" */
    const char *source;     /* where the rows come from */
    const struct trd_option_row *rows;
    uint32_t count;
};

struct trd_options {
    const struct trd_option_table *table;
    struct trd_value *values;
    uint8_t *set;           /* explicitly set */
};

extern const struct trd_option_table trd_table_cuda;
extern const struct trd_option_table trd_table_hip;
extern const struct trd_option_table trd_table_xpu;
extern const struct trd_option_table trd_table_host;
extern const struct trd_option_table trd_table_runtime;
extern const struct trd_option_table trd_table_driver;

/* The table of a backend ("intel" names xpu's), or NULL without a message: a third-party backend has none. */
const struct trd_option_table *trd_table_lookup(const char *backend);
/* The table of a backend, or NULL (message set, with the nearest name). */
const struct trd_option_table *trd_table_find(const char *backend);
/* A row by name, or NULL. */
const struct trd_option_row *trd_row_find(const struct trd_option_table *t, const char *name);
/* NOT_FOUND naming the table and the nearest name. */
trd_status_t trd_row_unknown(const struct trd_option_table *t, const char *name);
/* "3.6" -> 30600, "3.5.1" -> 30501; -1 when malformed. */
int trd_release_parse(const char *text);
/* Like trd_release_parse, for an installed package's version: "3.6.0+git1a2b" and "3.9.0rc1" name 3.6.0
 * and 3.9.0. */
int trd_release_of_version(const char *version);
/* 1 when the table's rows know the release (oldest <= its major.minor <= current's). */
int trd_table_knows(const struct trd_option_table *t, int release);
/* UNSUPPORTED naming the release and the ones the table knows (and tested). */
trd_status_t trd_table_unknown_release(const struct trd_option_table *t, const char *text);
/* 1 when the row exists in the release (-1: the table's current one). */
int trd_row_in_release(const struct trd_option_table *t, const struct trd_option_row *r, int release);
/* The static default's text for a release. */
const char *trd_row_default(const struct trd_option_table *t, const struct trd_option_row *r, int release);

/* Values. */
void trd_value_free(struct trd_value *v);
trd_status_t trd_value_copy(const struct trd_value *src, struct trd_value *dst);
/* Parses text as the row's type and validates it; errors name the option,
 * the value and what is accepted. o may be NULL (no target-dependent checks). */
trd_status_t trd_value_parse(const struct trd_option_table *t, const struct trd_option_row *r,
                             const struct trd_options *o, const char *text, struct trd_value *out);
/* Canonical text (malloc'ed). */
char *trd_value_text(const struct trd_value *v);
/* The value as JSON (a new jansson reference, as void * to keep jansson out of the header). */
void *trd_value_json(const struct trd_value *v);
int trd_value_equal(const struct trd_value *a, const struct trd_value *b);
/* Fills a value of the given kind (helpers for derive functions). */
int trd_value_set_int(struct trd_value *v, int64_t i);
int trd_value_set_str(struct trd_value *v, const char *s);
int trd_value_set_list(struct trd_value *v, const char *const *items, uint32_t n);

/* Helpers for rows: the target's CUDA capability / gfx version from "arch". */
int trd_options_cuda_cc(const struct trd_options *o);      /* 90, or -1 */
const char *trd_options_arch(const struct trd_options *o); /* or NULL */

#endif
