/* SPDX-License-Identifier: Apache-2.0 */
/* types.c: kernel parameters and their element types, as the CLI reads and
 * writes them (little-endian, as every device trident runs on). */
#include <math.h>
#include <stdio.h>
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

uint32_t param_parse(const char *sig, struct param *out, uint32_t cap)
{
    uint32_t n = 0;
    for (const char *s = sig; *s && n < cap;) {
        size_t len = strcspn(s, ",");
        const char *colon = memchr(s, ':', len);
        const char *t = colon ? colon + 1 : s;
        int tlen = (int)(s + len - t);
        if (!(tlen == 9 && !memcmp(t, "constexpr", 9))) {
            struct param *p = &out[n++];
            memset(p, 0, sizeof *p);
            if (colon)
                snprintf(p->name, sizeof p->name, "%.*s", (int)(colon - s), s);
            p->pointer = t[0] == '*';
            snprintf(p->type, sizeof p->type, "%.*s", tlen - p->pointer, t + p->pointer);
            p->elem = type_size(p->type);
        }
        s += len;
        if (*s == ',')
            s++;
    }
    return n;
}

const char *param_label(uint32_t index, const struct param *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "argument %u%s%s", index, p->name[0] ? " " : "", p->name);
    return buf;
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

double elem_get(const void *base, size_t i, const char *t)
{
    const char *p = base;
    if (!strcmp(t, "fp32")) {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    if (!strcmp(t, "fp64")) {
        double d;
        memcpy(&d, p + 8 * i, 8);
        return d;
    }
    if (!strcmp(t, "fp16") || !strcmp(t, "bf16")) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return !strcmp(t, "fp16") ? half_value(h) : bf16_value(h);
    }
    size_t n = type_size(t);
    if (t[0] == 'u' && n == 8) {
        uint64_t u;
        memcpy(&u, p + 8 * i, 8);
        return (double)u;
    }
    int64_t v = 0;
    memcpy(&v, p + n * i, n);
    if (t[0] == 'i' && n < 8) { /* sign-extend */
        int shift = (int)(64 - 8 * n);
        v = (int64_t)((uint64_t)v << shift) >> shift;
    }
    return (double)v;
}

const char *format_name(int32_t f)
{
    static const char *const names[] = {"unknown", "cubin", "ptx", "fatbin", "hsaco", "spirv", "zebin", "so"};
    return f >= 0 && f <= 7 ? names[f] : "?";
}
