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

struct param *param_list(const trd_kernel_t *k, uint32_t *count)
{
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    if (trd_kernel_get_info(k, &ki) != TRD_OK)
        return NULL;
    struct param *out = calloc(ki.num_params + 1, sizeof *out);
    if (!out)
        return NULL;
    for (uint32_t i = 0; i < ki.num_params; i++) {
        trd_param_info_t pi = {.struct_size = sizeof pi};
        struct param *p = &out[i];
        if (trd_kernel_param_info(k, i, &pi) != TRD_OK) {
            param_free(out, i);
            return NULL;
        }
        /* a pointer's pointee: the scalar at the end of its chain, behind depth - 1 more '*' */
        uint32_t stars = pi.pointer_depth ? pi.pointer_depth - 1 : 0;
        size_t len = stars + strlen(pi.scalar);
        p->pointer = pi.kind == TRD_PARAM_POINTER;
        p->name = strdup(pi.name ? pi.name : "");
        p->type = malloc(len + 1);
        if (!p->name || !p->type) {
            param_free(out, i + 1);
            return NULL;
        }
        memset(p->type, '*', stars);
        memcpy(p->type + stars, pi.scalar, len - stars + 1);
        p->elem = type_size(p->type);
    }
    *count = ki.num_params;
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

int type_int_range(const char *t, int64_t *lo, uint64_t *hi)
{
    return trd_scalar_int_range(trd_scalar_parse(t, strlen(t)), lo, hi); /* libtrident's ranges */
}

void elem_put(void *base, size_t i, const char *t, double v)
{
    char *p = (char *)base;
    size_t n = type_size(t);
    if (type_is_float(t)) {
        trd_float_encode(t, v, p + n * i); /* libtrident's rounding, a launch's */
    } else {
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
    size_t n = type_size(t);
    if (type_is_float(t)) {
        double v = 0;
        trd_float_decode(t, p + n * i, &v);
        return trd_arg_float(v);
    }
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
