/* SPDX-License-Identifier: Apache-2.0 */
/* util.h: small helpers every part of trident uses. */
#ifndef TRD_BASE_UTIL_H
#define TRD_BASE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <trident/trident.h>

#define TRD_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TRD_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TRD_MAX(a, b) ((a) > (b) ? (a) : (b))

/* A growable NUL-terminated string. A failed allocation sets `failed` and
 * later appends do nothing, so callers check once at the end. */
struct trd_str {
    char *buf;
    size_t len;
    size_t cap;
    int failed;
};

void trd_str_init(struct trd_str *s);
void trd_str_free(struct trd_str *s);
void trd_str_append(struct trd_str *s, const char *text);
void trd_str_appendn(struct trd_str *s, const char *text, size_t n);
void trd_str_appendf(struct trd_str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the buffer over (NULL when an allocation failed). */
char *trd_str_take(struct trd_str *s);

/* snprintf for messages, where truncating a long value is intended. */
int trd_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

char *trd_strdup(const char *s);           /* NULL-safe */
char *trd_strndup(const char *s, size_t n);
char *trd_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reads a whole regular file (at most max bytes) into a malloc'ed buffer with
 * a NUL after the data. Errors name the path. */
trd_status_t trd_file_read(const char *path, size_t max, char **data, size_t *size);
/* Writes a file atomically: a temporary of its own beside it, then rename; safe for concurrent writers. */
trd_status_t trd_file_write_atomic(const char *path, const void *data, size_t size, int mode);
/* mkdir -p with the given mode for created directories. */
trd_status_t trd_mkdirs(const char *path, int mode);

/* Copies `text` into buf (cap bytes) as the API's string getters do. */
trd_status_t trd_copy_out(const char *text, char *buf, size_t cap, size_t *len);

/* The size a caller's struct must have at least; fills a size-prefixed
 * struct from a full internal copy, writing min(caller, ours) bytes. */
trd_status_t trd_struct_check(uint32_t caller_size, size_t min_size, const char *what);
void trd_struct_fill(void *dst, const void *src, size_t ours);

/* Levenshtein distance, capped (for "did you mean"). */
size_t trd_edit_distance(const char *a, const char *b);

/* getenv that returns NULL in secure-execution (setuid) processes. */
const char *trd_getenv(const char *name);
int trd_secure_process(void);

/* 1 when s is valid UTF-8 without NUL bytes among its n bytes. */
int trd_utf8_valid(const char *s, size_t n);

/* Strict integer parse of the whole string (base 10, or 0x hex). */
int trd_parse_i64(const char *s, int64_t *out);
int trd_parse_u64(const char *s, uint64_t *out);

/* Text fit for an error message: at most max chars, control bytes escaped. */
void trd_quote(const char *s, size_t n, char *out, size_t outcap);

#endif
