/* SPDX-License-Identifier: Apache-2.0 */
/* types.c: kernel parameters and their element types, as the CLI reads and
 * writes them (little-endian, as every device trident runs on). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/run.h"

size_t type_size(const char *t)
{
    if (t[0] == '*') /* a pointer to pointers */
        return 8;
    if (!strcmp(t, "i1") || !strcmp(t, "i8") || !strcmp(t, "u8") || !strcmp(t, "u1") || type_is_fp8(t))
        return 1;
    if (!strcmp(t, "i16") || !strcmp(t, "u16") || !strcmp(t, "fp16") || !strcmp(t, "bf16"))
        return 2;
    if (!strcmp(t, "i32") || !strcmp(t, "u32") || !strcmp(t, "fp32"))
        return 4;
    if (!strcmp(t, "i64") || !strcmp(t, "u64") || !strcmp(t, "fp64"))
        return 8;
    return 0;
}

int type_is_float(const char *t)
{
    return !strcmp(t, "fp16") || !strcmp(t, "bf16") || !strcmp(t, "fp32") || !strcmp(t, "fp64");
}

int type_is_fp8(const char *t)
{
    return !strncmp(t, "fp8", 3);
}

struct param *param_parse(const char *sig, uint32_t *count)
{
    uint32_t cap = 1, n = 0;
    for (const char *s = sig; *s; s++)
        cap += *s == ',';
    struct param *out = calloc(cap, sizeof *out);
    if (!out)
        return NULL;
    for (const char *s = sig; *s;) {
        size_t len = strcspn(s, ",");
        const char *colon = memchr(s, ':', len);
        const char *t = colon ? colon + 1 : s;
        size_t tlen = (size_t)(s + len - t);
        if (!(tlen == 9 && !memcmp(t, "constexpr", 9))) {
            struct param *p = &out[n++];
            p->pointer = t[0] == '*';
            p->name = strndup(s, colon ? (size_t)(colon - s) : 0);
            p->type = strndup(t + p->pointer, tlen - (size_t)p->pointer);
            if (!p->name || !p->type) {
                param_free(out, n);
                return NULL;
            }
            p->elem = type_size(p->type);
        }
        s += len;
        if (*s == ',')
            s++;
    }
    *count = n;
    return out;
}

void param_free(struct param *params, uint32_t n)
{
    for (uint32_t i = 0; params && i < n; i++) {
        free(params[i].name);
        free(params[i].type);
    }
    free(params);
}

const char *param_label(uint32_t index, const struct param *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "argument %u%s%s", index, p->name[0] ? " " : "", p->name);
    return buf;
}

/* The integer types and the values each takes (the library's ranges). */
static const struct {
    const char *name;
    int64_t lo;
    uint64_t hi;
} int_types[] = {
    {"i1", 0, 1},
    {"u1", 0, 1},
    {"i8", INT8_MIN, INT8_MAX},
    {"u8", 0, UINT8_MAX},
    {"i16", INT16_MIN, INT16_MAX},
    {"u16", 0, UINT16_MAX},
    {"i32", INT32_MIN, INT32_MAX},
    {"u32", 0, UINT32_MAX},
    {"i64", INT64_MIN, INT64_MAX},
    {"u64", 0, UINT64_MAX},
};

int type_int_range(const char *t, int64_t *lo, uint64_t *hi)
{
    for (size_t k = 0; k < sizeof int_types / sizeof int_types[0]; k++)
        if (!strcmp(int_types[k].name, t)) {
            *lo = int_types[k].lo;
            *hi = int_types[k].hi;
            return 1;
        }
    return 0;
}

/* float -> half, rounding to nearest even */
static uint16_t half_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff)
        return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        m |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), halfv = 1u << (shift - 1);
        if (rem > halfv || (rem == halfv && (q & 1)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t q = m >> 13, rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (q & 1)))
        q++;
    uint32_t v = ((uint32_t)e << 10) + q; /* a carry bumps the exponent */
    if (v >= 0x7c00)
        return (uint16_t)(sign | 0x7c00);
    return (uint16_t)(sign | v);
}

static double half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double bf16_value(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

void elem_put(void *base, size_t i, const char *t, double v)
{
    char *p = (char *)base;
    if (!strcmp(t, "fp32")) {
        float f = (float)v;
        memcpy(p + 4 * i, &f, 4);
    } else if (!strcmp(t, "fp64")) {
        memcpy(p + 8 * i, &v, 8);
    } else if (!strcmp(t, "fp16")) {
        uint16_t h = half_bits((float)v);
        memcpy(p + 2 * i, &h, 2);
    } else if (!strcmp(t, "bf16")) {
        float f = (float)v;
        uint32_t x;
        memcpy(&x, &f, 4);
        uint16_t b = (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
        memcpy(p + 2 * i, &b, 2);
    } else {
        size_t n = type_size(t);
        /* in range for the conversion (the callers' values fit the type; this keeps NaN and huge ones defined) */
        uint64_t bits = v != v ? 0
                      : v >= 18446744073709551615.0 ? UINT64_MAX
                      : v >= 9223372036854775807.0 ? (uint64_t)v
                      : v <= -9223372036854775808.0 ? (uint64_t)INT64_MIN
                                                     : (uint64_t)(int64_t)v;
        memcpy(p + n * i, &bits, n); /* little-endian: the low bytes */
    }
}

trd_arg_t elem_read(const void *base, size_t i, const char *t)
{
    const char *p = base;
    if (type_is_float(t)) {
        if (!strcmp(t, "fp32")) {
            float f;
            memcpy(&f, p + 4 * i, 4);
            return trd_arg_float(f);
        }
        if (!strcmp(t, "fp64")) {
            double d;
            memcpy(&d, p + 8 * i, 8);
            return trd_arg_float(d);
        }
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return trd_arg_float(!strcmp(t, "fp16") ? half_value(h) : bf16_value(h));
    }
    size_t n = type_size(t);
    uint64_t bits = 0;
    memcpy(&bits, p + n * i, n); /* little-endian: the low bytes */
    if (t[0] == 'i' && n < 8) {  /* sign-extend */
        int shift = (int)(64 - 8 * n);
        return trd_arg_int((int64_t)(bits << shift) >> shift);
    }
    if (t[0] == 'i')
        return trd_arg_int((int64_t)bits);
    return t[0] == 'u' ? trd_arg_uint(bits) : trd_arg_bits(bits);
}

void elem_write(void *base, size_t i, const char *t, trd_arg_t v)
{
    if (v.kind == TRD_ARG_FLOAT) {
        elem_put(base, i, t, v.value.f);
        return;
    }
    size_t n = type_size(t);
    memcpy((char *)base + n * i, &v.value.bits, n); /* two's complement: the low bytes */
}

double value_double(trd_arg_t v)
{
    switch (v.kind) {
    case TRD_ARG_INT: return (double)v.value.i;
    case TRD_ARG_UINT: return (double)v.value.u;
    case TRD_ARG_FLOAT: return v.value.f;
    default: return (double)v.value.bits;
    }
}

double elem_get(const void *base, size_t i, const char *t)
{
    return value_double(elem_read(base, i, t));
}

int value_of(const char *t, double v, trd_arg_t *out)
{
    int64_t lo;
    uint64_t hi;
    if (!type_int_range(t, &lo, &hi)) {
        uint64_t cell = 0;
        elem_put(&cell, 0, t, v);
        *out = elem_read(&cell, 0, t);
        return 1;
    }
    double w = trunc(v);
    /* (double)hi + 1 is 2^63 or 2^64 for the 64-bit types, exact below them */
    if (!(w >= (double)lo && w < (double)hi + 1.0))
        return 0;
    *out = lo < 0 ? trd_arg_int((int64_t)w) : trd_arg_uint((uint64_t)w);
    return 1;
}

void value_text(trd_arg_t v, const char *t, char *buf, size_t cap)
{
    switch (v.kind) {
    case TRD_ARG_INT: snprintf(buf, cap, "%lld", (long long)v.value.i); return;
    case TRD_ARG_UINT: snprintf(buf, cap, "%llu", (unsigned long long)v.value.u); return;
    case TRD_ARG_FLOAT: break;
    default: snprintf(buf, cap, "%llu", (unsigned long long)v.value.bits); return;
    }
    const char *ft = type_is_float(t) ? t : "fp64";
    if (isnan(v.value.f) || isinf(v.value.f)) {
        snprintf(buf, cap, "%s", isnan(v.value.f) ? "nan" : v.value.f > 0 ? "inf" : "-inf");
        return;
    }
    /* the fewest digits that read back as the same element of the type; a whole number below 10^17 in full
     * (4000, not 4e+03: %g goes to an exponent once it has more digits than it was asked for) */
    uint64_t want = 0;
    elem_put(&want, 0, ft, v.value.f);
    int digits = 1;
    for (; digits < 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, v.value.f);
        uint64_t back = 0;
        elem_put(&back, 0, ft, strtod(buf, NULL));
        if (back == want)
            break;
    }
    snprintf(buf, cap, "%.*e", digits - 1, v.value.f);
    int exponent = atoi(strchr(buf, 'e') + 1);
    if (exponent >= digits && exponent < 17)
        snprintf(buf, cap, "%.0f", v.value.f);
    else
        snprintf(buf, cap, "%.*g", digits, v.value.f);
}

const char *format_name(int32_t f)
{
    static const char *const names[] = {"unknown", "cubin", "ptx", "fatbin", "hsaco", "spirv", "zebin", "so"};
    return f >= 0 && f <= 7 ? names[f] : "?";
}
