/* SPDX-License-Identifier: Apache-2.0 */
/* util.c: strings, files and small helpers. */
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"

void trd_str_init(struct trd_str *s)
{
    s->buf = NULL;
    s->len = 0;
    s->cap = 0;
    s->failed = 0;
}

void trd_str_free(struct trd_str *s)
{
    free(s->buf);
    trd_str_init(s);
}

static int str_reserve(struct trd_str *s, size_t extra)
{
    if (s->failed)
        return 0;
    if (s->len + extra + 1 <= s->cap)
        return 1;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < s->len + extra + 1) {
        if (cap > SIZE_MAX / 2) {
            s->failed = 1;
            return 0;
        }
        cap *= 2;
    }
    char *p = realloc(s->buf, cap);
    if (!p) {
        s->failed = 1;
        return 0;
    }
    s->buf = p;
    s->cap = cap;
    return 1;
}

void trd_str_appendn(struct trd_str *s, const char *text, size_t n)
{
    if (!str_reserve(s, n))
        return;
    memcpy(s->buf + s->len, text, n);
    s->len += n;
    s->buf[s->len] = '\0';
}

void trd_str_append(struct trd_str *s, const char *text)
{
    trd_str_appendn(s, text, strlen(text));
}

void trd_str_appendf(struct trd_str *s, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !str_reserve(s, (size_t)n)) {
        if (n < 0)
            s->failed = 1;
        va_end(ap2);
        return;
    }
    vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    s->len += (size_t)n;
}

char *trd_str_take(struct trd_str *s)
{
    if (s->failed) {
        trd_str_free(s);
        return NULL;
    }
    if (!s->buf) { /* nothing appended: an empty string, terminated */
        if (!str_reserve(s, 0))
            return NULL;
        s->buf[0] = '\0';
    }
    char *p = s->buf;
    trd_str_init(s);
    return p;
}

int trd_fmt(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

char *trd_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

char *trd_strndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *trd_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = NULL;
    int n = vasprintf(&p, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : p;
}

trd_status_t trd_file_read(const char *path, size_t max, char **data, size_t *size)
{
    char msg[1024];
    trd_status_t st = trd_file_load(path, max, data, size, msg, sizeof msg);
    return st == TRD_OK ? TRD_OK : trd_error_set(st, "%s", msg);
}

trd_status_t trd_file_write_atomic(const char *path, const void *data, size_t size, int mode)
{
    char msg[1024];
    trd_status_t st = trd_file_store(path, data, size, mode, msg, sizeof msg);
    return st == TRD_OK ? TRD_OK : trd_error_set(st, "%s", msg);
}

trd_status_t trd_mkdirs(const char *path, int mode)
{
    char msg[1024];
    trd_status_t st = trd_file_mkdirs(path, mode, msg, sizeof msg);
    return st == TRD_OK ? TRD_OK : trd_error_set(st, "%s", msg);
}

trd_status_t trd_copy_out(const char *text, char *buf, size_t cap, size_t *len)
{
    size_t n = strlen(text);
    if (!buf || cap < n + 1) {
        if (len)
            *len = n;
        return trd_error_set(TRD_ERR_BUFFER_TOO_SMALL, "buffer of %zu bytes is too small: %zu needed",
                             cap, n + 1);
    }
    memcpy(buf, text, n + 1);
    if (len)
        *len = n;
    return TRD_OK;
}

trd_status_t trd_struct_check(uint32_t caller_size, size_t min_size, const char *what)
{
    if (caller_size < min_size)
        return trd_error_set(TRD_ERR_VERSION,
                             "%s.struct_size is %u, smaller than the first version of the struct "
                             "(%zu bytes): set it to sizeof(%s)",
                             what, caller_size, min_size, what);
    return TRD_OK;
}

void trd_struct_fill(void *dst, const void *src, size_t ours)
{
    uint32_t caller = *(const uint32_t *)dst;
    size_t n = TRD_MIN((size_t)caller, ours);
    memcpy((char *)dst + sizeof(uint32_t), (const char *)src + sizeof(uint32_t), n - sizeof(uint32_t));
}

size_t trd_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t v = prev + cost;
            if (row[j] + 1 < v)
                v = row[j] + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            prev = cur;
        }
    }
    return row[lb];
}

int trd_secure_process(void)
{
    return getauxval(AT_SECURE) != 0;
}

const char *trd_getenv(const char *name)
{
    return secure_getenv(name);
}

int trd_utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c == 0)
            return 0;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        unsigned min;
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            min = 0x80;
            c &= 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            min = 0x800;
            c &= 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            min = 0x10000;
            c &= 0x07;
        } else {
            return 0;
        }
        if (i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            c = (c << 6) | (s[i + k] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

int trd_parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || *end != '\0' || end == s || s[0] == ' ' || s[0] == '\t')
        return 0;
    *out = v;
    return 1;
}

int trd_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || s[0] == '-' || s[0] == ' ')
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end != '\0' || end == s)
        return 0;
    *out = v;
    return 1;
}

void trd_quote(const char *s, size_t n, char *out, size_t outcap)
{
    size_t o = 0, i = 0;
    if (outcap == 0)
        return;
    for (; i < n && o + 5 < outcap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char)c;
        } else {
            o += (size_t)snprintf(out + o, outcap - o, "\\x%02x", c);
        }
    }
    if (i < n && outcap > 4) { /* cut: "..." right after what was written */
        o = TRD_MIN(o, outcap - 4);
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}
