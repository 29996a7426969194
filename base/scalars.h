/* SPDX-License-Identifier: Apache-2.0 */
/* scalars.h: the scalar types of Triton's signatures: each one's name in Triton's notation and in Triton IR, its
 * size, and the values each integer type takes. The one statement of them: libtrident parses and checks signatures
 * and arguments by it (core/), and the CLI links its own copy (libtrident_pure) to read and range-check the values
 * it is given, so both refuse the same values alike. */
#ifndef TRD_BASE_SCALARS_H
#define TRD_BASE_SCALARS_H

#include <stddef.h>
#include <stdint.h>

enum trd_scalar {
    TRD_T_INVALID = 0,
    TRD_T_I1, TRD_T_I8, TRD_T_I16, TRD_T_I32, TRD_T_I64,
    TRD_T_U1, TRD_T_U8, TRD_T_U16, TRD_T_U32, TRD_T_U64,
    TRD_T_FP8E4NV, TRD_T_FP8E5, TRD_T_FP8E4B15, TRD_T_FP8E4B8, TRD_T_FP8E5B16,
    TRD_T_FP16, TRD_T_BF16, TRD_T_FP32, TRD_T_FP64,
    TRD_T_PTR,        /* a pointer; elem says to what */
    TRD_T_CONSTEXPR,  /* compiled in: not passed */
    TRD_T_NVTMADESC   /* a 128-byte CUtensorMap passed by value */
};

/* A scalar's name in Triton's notation ("fp32"); "*" for a pointer, "?" for no scalar. */
const char *trd_scalar_name(int32_t type);
/* The scalar name[0 .. len) names in Triton's notation (or one of Triton's aliases: "bool", "f32" ...), or
 * TRD_T_INVALID. */
int32_t trd_scalar_parse(const char *name, size_t len);
/* A scalar by its MLIR spelling in Triton IR ("f32", "f8E5M2"): 1 and *type, or 0. */
int trd_scalar_parse_ir(const char *t, size_t n, int32_t *type);
/* A scalar's size in bytes (8 for a pointer; 0 for constexpr or an unknown type). */
uint32_t trd_scalar_size(int32_t type);
/* The values an integer type takes: 1 with *lo and *hi, or 0 for a type that is no integer (floats, fp8, ...). */
int trd_scalar_int_range(int32_t type, int64_t *lo, uint64_t *hi);

#endif
