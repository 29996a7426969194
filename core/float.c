/* SPDX-License-Identifier: Apache-2.0 */
/* float.c: the float scalars of Triton's signatures to and from binary64: fp16 and bf16 rounded to nearest even
 * (an infinity beyond their range), fp32 as C converts, fp64 as it is. How a launch packs a float argument
 * (args.c), and, public (trd_float_encode, trd_float_decode), how a caller such as the CLI writes and reads the
 * elements of such arrays, so that both round alike. */
#include <math.h>
#include <string.h>

#include "core/internal.h"

static uint64_t rne_shift(uint64_t m, int shift)
{
    if (shift <= 0)
        return m << -shift;
    if (shift >= 64)
        return 0;
    uint64_t q = m >> shift;
    uint64_t rem = m & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    return q;
}

/* IEEE binary64 -> a narrower binary float with ebits/mbits, round to nearest even. */
static uint16_t narrow(double v, int ebits, int mbits)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    uint16_t sign = (uint16_t)((b >> 63) << (ebits + mbits));
    int e = (int)((b >> 52) & 0x7ff);
    uint64_t m = b & ((UINT64_C(1) << 52) - 1);
    int bias = (1 << (ebits - 1)) - 1, maxe = (1 << ebits) - 1;
    if (e == 0x7ff) /* inf or NaN */
        return (uint16_t)(sign | (maxe << mbits) | (m ? 1 << (mbits - 1) : 0));
    if (e == 0)
        return sign; /* zero or a double subnormal: far below any target */
    int E = e - 1023;
    int ue = E + bias;
    uint64_t M = m | (UINT64_C(1) << 52);
    if (ue <= 0) {
        uint64_t q = rne_shift(M, (52 - mbits) + (1 - ue));
        return (uint16_t)(sign | q); /* q == 1 << mbits becomes the smallest normal */
    }
    uint64_t q = rne_shift(M, 52 - mbits);
    if (q >> (mbits + 1)) {
        q >>= 1;
        ue++;
    }
    if (ue >= maxe)
        return (uint16_t)(sign | (maxe << mbits));
    return (uint16_t)(sign | (ue << mbits) | (q & ((UINT64_C(1) << mbits) - 1)));
}

uint16_t trd_float_to_half(double v)
{
    return narrow(v, 5, 10);
}

uint16_t trd_float_to_bf16(double v)
{
    return narrow(v, 8, 7);
}

/* The bits of a narrower binary float with ebits/mbits -> binary64, exactly. */
static double widen(uint16_t h, int ebits, int mbits)
{
    int e = (h >> mbits) & ((1 << ebits) - 1), m = h & ((1 << mbits) - 1);
    int bias = (1 << (ebits - 1)) - 1, maxe = (1 << ebits) - 1;
    double v = e == 0      ? ldexp(m, 1 - bias - mbits)
             : e == maxe ? (m ? NAN : INFINITY)
                           : ldexp(m + (1 << mbits), e - bias - mbits);
    return (h >> (ebits + mbits)) & 1 ? -v : v;
}

void trd_float_store(int32_t type, double v, void *out)
{
    if (type == TRD_T_FP64) {
        memcpy(out, &v, 8);
    } else if (type == TRD_T_FP32) {
        float f = (float)v;
        memcpy(out, &f, 4);
    } else {
        uint16_t h = type == TRD_T_FP16 ? trd_float_to_half(v) : trd_float_to_bf16(v);
        memcpy(out, &h, 2);
    }
}

double trd_float_load(int32_t type, const void *in)
{
    if (type == TRD_T_FP64) {
        double d;
        memcpy(&d, in, 8);
        return d;
    }
    if (type == TRD_T_FP32) {
        float f;
        memcpy(&f, in, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, in, 2);
    return type == TRD_T_FP16 ? widen(h, 5, 10) : widen(h, 8, 7);
}

/* The float type a name means ("fp16", "f16", ...), or TRD_T_INVALID with the error set. */
static int32_t float_type(const char *fn, const char *name)
{
    int32_t t = name ? trd_scalar_parse(name, strlen(name)) : TRD_T_INVALID;
    if (t == TRD_T_FP16 || t == TRD_T_BF16 || t == TRD_T_FP32 || t == TRD_T_FP64)
        return t;
    trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: type %s%s%s is not a float type (fp16, bf16, fp32, fp64)", fn,
                  name ? "'" : "", name ? name : "NULL", name ? "'" : "");
    return TRD_T_INVALID;
}

TRD_API trd_status_t trd_float_encode(const char *type, double value, void *out)
{
    int32_t t = float_type("trd_float_encode", type);
    if (t == TRD_T_INVALID)
        return TRD_ERR_INVALID_ARGUMENT;
    if (!out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_float_encode: out is NULL");
    trd_float_store(t, value, out);
    return TRD_OK;
}

TRD_API trd_status_t trd_float_decode(const char *type, const void *in, double *value)
{
    int32_t t = float_type("trd_float_decode", type);
    if (t == TRD_T_INVALID)
        return TRD_ERR_INVALID_ARGUMENT;
    if (!in || !value)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_float_decode: %s is NULL", in ? "value" : "in");
    *value = trd_float_load(t, in);
    return TRD_OK;
}
