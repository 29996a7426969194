/* SPDX-License-Identifier: Apache-2.0 */
/* scalars.c: the table of Triton's scalar types (scalars.h). */
#include <string.h>

#include "base/scalars.h"
#include "base/util.h"

struct scalar_row {
    const char *name;    /* Triton's notation */
    const char *ir;      /* MLIR spelling in .ttir */
    int32_t type;
    uint32_t size;
};

static const struct scalar_row scalars[] = {
    {"i1", "i1", TRD_T_I1, 1},
    {"i8", "i8", TRD_T_I8, 1},
    {"i16", "i16", TRD_T_I16, 2},
    {"i32", "i32", TRD_T_I32, 4},
    {"i64", "i64", TRD_T_I64, 8},
    {"u1", NULL, TRD_T_U1, 1},
    {"u8", NULL, TRD_T_U8, 1},
    {"u16", NULL, TRD_T_U16, 2},
    {"u32", NULL, TRD_T_U32, 4},
    {"u64", NULL, TRD_T_U64, 8},
    {"fp8e4nv", "f8E4M3FN", TRD_T_FP8E4NV, 1},
    {"fp8e5", "f8E5M2", TRD_T_FP8E5, 1},
    {"fp8e4b15", "f8E4M3B11FNUZ", TRD_T_FP8E4B15, 1},
    {"fp8e4b8", "f8E4M3FNUZ", TRD_T_FP8E4B8, 1},
    {"fp8e5b16", "f8E5M2FNUZ", TRD_T_FP8E5B16, 1},
    {"fp16", "f16", TRD_T_FP16, 2},
    {"bf16", "bf16", TRD_T_BF16, 2},
    {"fp32", "f32", TRD_T_FP32, 4},
    {"fp64", "f64", TRD_T_FP64, 8},
    {"constexpr", NULL, TRD_T_CONSTEXPR, 0},
    {"nvTmaDesc", NULL, TRD_T_NVTMADESC, 128},
};

const char *trd_scalar_name(int32_t type)
{
    if (type == TRD_T_PTR)
        return "*";
    for (size_t i = 0; i < TRD_ARRAY_SIZE(scalars); i++)
        if (scalars[i].type == type)
            return scalars[i].name;
    return "?";
}

int32_t trd_scalar_parse(const char *name, size_t len)
{
    for (size_t i = 0; i < TRD_ARRAY_SIZE(scalars); i++)
        if (strlen(scalars[i].name) == len && memcmp(scalars[i].name, name, len) == 0)
            return scalars[i].type;
    /* Triton's aliases */
    static const struct { const char *alias; int32_t type; } aliases[] = {
        {"B", TRD_T_I1}, {"int1", TRD_T_I1}, {"f16", TRD_T_FP16}, {"f32", TRD_T_FP32},
        {"f64", TRD_T_FP64}, {"bool", TRD_T_I1}};
    for (size_t i = 0; i < TRD_ARRAY_SIZE(aliases); i++)
        if (strlen(aliases[i].alias) == len && memcmp(aliases[i].alias, name, len) == 0)
            return aliases[i].type;
    return TRD_T_INVALID;
}

int trd_scalar_parse_ir(const char *t, size_t n, int32_t *type)
{
    for (size_t i = 0; i < TRD_ARRAY_SIZE(scalars); i++)
        if (scalars[i].ir && strlen(scalars[i].ir) == n && memcmp(scalars[i].ir, t, n) == 0) {
            *type = scalars[i].type;
            return 1;
        }
    return 0;
}

uint32_t trd_scalar_size(int32_t type)
{
    if (type == TRD_T_PTR)
        return 8;
    for (size_t i = 0; i < TRD_ARRAY_SIZE(scalars); i++)
        if (scalars[i].type == type)
            return scalars[i].size;
    return 0;
}

int trd_scalar_int_range(int32_t type, int64_t *lo, uint64_t *hi)
{
    switch (type) {
    case TRD_T_I1: *lo = 0; *hi = 1; return 1;
    case TRD_T_U1: *lo = 0; *hi = 1; return 1;
    case TRD_T_I8: *lo = INT8_MIN; *hi = INT8_MAX; return 1;
    case TRD_T_I16: *lo = INT16_MIN; *hi = INT16_MAX; return 1;
    case TRD_T_I32: *lo = INT32_MIN; *hi = INT32_MAX; return 1;
    case TRD_T_I64: *lo = INT64_MIN; *hi = INT64_MAX; return 1;
    case TRD_T_U8: *lo = 0; *hi = UINT8_MAX; return 1;
    case TRD_T_U16: *lo = 0; *hi = UINT16_MAX; return 1;
    case TRD_T_U32: *lo = 0; *hi = UINT32_MAX; return 1;
    case TRD_T_U64: *lo = 0; *hi = UINT64_MAX; return 1;
    default: return 0;
    }
}
