/* SPDX-License-Identifier: Apache-2.0 */
/* tensor_map.c: the requirements cuda.h documents for cuTensorMapEncodeTiled, for the tiled maps Triton encodes
 * (no interleave, every element stride 1), checked in the descriptor's own terms (row-major, strides in
 * elements) so that a bad one gets an error naming the value rather than CUDA_ERROR_INVALID_VALUE. */
#include <stdarg.h>
#include <stdio.h>

#include "base/tensor_map.h"

/* CUtensorMapDataType values with rules of their own, and the swizzles (CUtensorMapSwizzle) */
enum { T_16U4_ALIGN8B = 13, T_16U4_ALIGN16B = 14, T_16U6_ALIGN16B = 15 };
enum { SW_NONE = 0, SW_128B = 3, SW_128B_ATOM_32B = 4, SW_128B_ATOM_64B = 6, SW_LAST = 6 };

static const struct {
    const char *name;
    uint32_t bytes; /* 0: packed sub-byte values, whose base array is bytes */
    int is_float;   /* NaN padding is for these */
} types[] = {
    {"UINT8", 1, 0},        {"UINT16", 2, 0},       {"UINT32", 4, 0},        {"INT32", 4, 0},
    {"UINT64", 8, 0},       {"INT64", 8, 0},        {"FLOAT16", 2, 1},       {"FLOAT32", 4, 1},
    {"FLOAT64", 8, 1},      {"BFLOAT16", 2, 1},     {"FLOAT32_FTZ", 4, 1},   {"TFLOAT32", 4, 1},
    {"TFLOAT32_FTZ", 4, 1}, {"16U4_ALIGN8B", 0, 0}, {"16U4_ALIGN16B", 0, 0}, {"16U6_ALIGN16B", 0, 0},
};
#define NTYPES ((int32_t)(sizeof types / sizeof types[0]))

static const char *type_name(int32_t t)
{
    return t >= 0 && t < NTYPES ? types[t].name : "an unknown type";
}

static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    if (*len >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len += (size_t)n;
}

const char *trd_tensor_map_describe(const trd_tensor_map_desc_t *d, char *buf, size_t cap)
{
    size_t len = 0;
    uint32_t rank = d->rank <= TRD_TENSOR_MAP_MAX_RANK ? d->rank : TRD_TENSOR_MAP_MAX_RANK;
    if (cap)
        buf[0] = '\0';
    append(buf, cap, &len, "%s (shape [", d->label ? d->label : "a tensor map");
    for (uint32_t i = 0; i < rank; i++)
        append(buf, cap, &len, "%s%llu", i ? ", " : "", (unsigned long long)d->shape[i]);
    append(buf, cap, &len, "], strides [");
    for (uint32_t i = 0; i < rank; i++)
        append(buf, cap, &len, "%s%llu", i ? ", " : "", (unsigned long long)d->strides[i]);
    append(buf, cap, &len, "], block [");
    for (uint32_t i = 0; i < rank; i++)
        append(buf, cap, &len, "%s%u", i ? ", " : "", d->box[i]);
    append(buf, cap, &len, "], %s)", type_name(d->elem_type));
    return buf;
}

static trd_status_t bad(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static trd_status_t bad(char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (cap)
        vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    return TRD_ERR_INVALID_ARGUMENT;
}

#define BAD(...) bad(msg, cap, __VA_ARGS__)

/* The enumerated fields: the type and its element size, swizzle, L2 promotion, fill. */
static trd_status_t check_enums(const trd_tensor_map_desc_t *d, char *msg, size_t cap)
{
    if (d->rank < 1 || d->rank > TRD_TENSOR_MAP_MAX_RANK)
        return BAD("rank %u is outside 1 .. %d", d->rank, TRD_TENSOR_MAP_MAX_RANK);
    if (d->elem_type < 0 || d->elem_type >= NTYPES)
        return BAD("element type %d is not a CUtensorMapDataType (0 .. %d)", d->elem_type, NTYPES - 1);
    uint32_t tbytes = types[d->elem_type].bytes;
    if (tbytes ? d->elem_size != tbytes : d->elem_size != 1)
        return BAD("element size %u bytes does not fit %s (%u bytes%s)", d->elem_size, type_name(d->elem_type),
                   tbytes ? tbytes : 1, tbytes ? "" : ": its base array is bytes");
    if (d->swizzle < SW_NONE || d->swizzle > SW_LAST)
        return BAD("swizzle %d is not a CUtensorMapSwizzle (0 .. %d)", d->swizzle, SW_LAST);
    /* the 16-byte aligned packed types: none, 128B and 128B_ATOM_32B (16U6 stores also 128B_ATOM_64B) */
    if ((d->elem_type == T_16U4_ALIGN16B || d->elem_type == T_16U6_ALIGN16B) && d->swizzle != SW_NONE &&
        d->swizzle != SW_128B && d->swizzle != SW_128B_ATOM_32B &&
        !(d->elem_type == T_16U6_ALIGN16B && d->swizzle == SW_128B_ATOM_64B))
        return BAD("%s takes swizzle 0, 3 or 4%s, not %d", type_name(d->elem_type),
                   d->elem_type == T_16U6_ALIGN16B ? " (6 to store)" : "", d->swizzle);
    if (d->l2_promotion < 0 || d->l2_promotion > 3)
        return BAD("L2 promotion %d is not a CUtensorMapL2promotion (0 .. 3)", d->l2_promotion);
    if (d->oob_fill != 0 && d->oob_fill != 1)
        return BAD("out-of-bounds fill %d is neither 0 (zero) nor 1 (NaN)", d->oob_fill);
    if (d->oob_fill == 1 && !types[d->elem_type].is_float)
        return BAD("NaN padding needs a floating-point element type, not %s", type_name(d->elem_type));
    return TRD_OK;
}

/* The dimensions: shape, box and strides, then what the packed types and the swizzle add. */
static trd_status_t check_dims(const trd_tensor_map_desc_t *d, char *msg, size_t cap)
{
    int32_t t = d->elem_type;
    int align16b = t == T_16U4_ALIGN16B || t == T_16U6_ALIGN16B;
    uint32_t inner = d->rank - 1;
    for (uint32_t i = 0; i < d->rank; i++) {
        if (d->shape[i] == 0 || d->shape[i] > (UINT64_C(1) << 32))
            return BAD("shape[%u] = %llu is outside 1 .. 2^32", i, (unsigned long long)d->shape[i]);
        if (d->box[i] == 0 || d->box[i] > 256)
            return BAD("block[%u] = %u is outside 1 .. 256 (the most one TMA copy moves along a dimension)", i,
                       d->box[i]);
    }
    if (d->strides[inner] != 1)
        return BAD("the innermost stride (strides[%u]) is %llu; TMA needs the last dimension contiguous (1)", inner,
                   (unsigned long long)d->strides[inner]);
    uint64_t stride_align = align16b ? 32 : 16;
    for (uint32_t i = 0; i < inner; i++) {
        if (d->strides[i] == 0 || d->strides[i] >= (UINT64_C(1) << 40) / d->elem_size)
            return BAD("strides[%u] = %llu elements is outside 1 .. 2^40 bytes", i, (unsigned long long)d->strides[i]);
        uint64_t bytes = d->strides[i] * d->elem_size;
        if (bytes % stride_align)
            return BAD("strides[%u] is %llu bytes, not a multiple of %llu%s", i, (unsigned long long)bytes,
                       (unsigned long long)stride_align, align16b ? " (32 for the 16-byte aligned packed types)" : "");
    }
    if (align16b && d->shape[inner] % 128)
        return BAD("%s needs the innermost dimension a multiple of 128, not %llu", type_name(t),
                   (unsigned long long)d->shape[inner]);
    if (t == T_16U4_ALIGN8B && d->shape[inner] % 2)
        return BAD("16U4_ALIGN8B needs an even innermost dimension, not %llu", (unsigned long long)d->shape[inner]);
    if (align16b && d->box[inner] != 128)
        return BAD("%s needs an innermost block of 128, not %u", type_name(t), d->box[inner]);
    /* bytes of one box row: an ALIGN16B value takes a byte in shared memory, two ALIGN8B values share one */
    uint32_t tbytes = types[t].bytes;
    if (t == T_16U4_ALIGN8B && d->box[inner] % 32)
        return BAD("the innermost block is %u 4-bit values, not a multiple of 32 (16 bytes)", d->box[inner]);
    uint64_t row = tbytes ? (uint64_t)d->box[inner] * tbytes : align16b ? d->box[inner] : d->box[inner] / 2;
    if (row % 16)
        return BAD("the innermost block is %llu bytes, not a multiple of 16 (%u elements of %u bytes)",
                   (unsigned long long)row, d->box[inner], tbytes);
    static const uint64_t span[] = {0, 32, 64, 128, 128, 128, 128};
    if (d->swizzle != SW_NONE && row > span[d->swizzle])
        return BAD("the innermost block is %llu bytes, more than the %llu bytes swizzle %d spans",
                   (unsigned long long)row, (unsigned long long)span[d->swizzle], d->swizzle);
    return TRD_OK;
}

trd_status_t trd_tensor_map_verify(const trd_tensor_map_desc_t *d, char *msg, size_t cap)
{
    if (!d)
        return BAD("the tensor map's descriptor is NULL");
    if (d->struct_size < sizeof *d) {
        bad(msg, cap, "trd_tensor_map_desc_t.struct_size is %u; %zu bytes are read", d->struct_size, sizeof *d);
        return TRD_ERR_VERSION;
    }
    trd_status_t st = check_enums(d, msg, cap);
    if (st == TRD_OK)
        st = check_dims(d, msg, cap);
    if (st != TRD_OK)
        return st;
    uint64_t base_align = d->elem_type == T_16U4_ALIGN16B || d->elem_type == T_16U6_ALIGN16B ? 32 : 16;
    if (d->base && (uintptr_t)d->base % base_align)
        return BAD("the base address %p is not %llu-byte aligned", d->base, (unsigned long long)base_align);
    return TRD_OK;
}
