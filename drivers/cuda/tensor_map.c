/* SPDX-License-Identifier: Apache-2.0 */
/* tensor_map.c: tensor maps (CUtensorMap) for kernels that Triton lowered to
 * the TMA unit. The caller describes the tensor row-major in elements, as
 * Triton does; cuTensorMapEncodeTiled wants it innermost first, with strides
 * in bytes and the innermost stride implied. Everything CUDA documents as a
 * requirement is checked first, so that a bad descriptor gets an error that
 * names the value, not CUDA_ERROR_INVALID_VALUE. */
#include <stdio.h>
#include <string.h>

#include "drivers/cuda/cuda_driver.h"

enum { T_16U4_ALIGN8B = 13, T_16U4_ALIGN16B = 14, T_16U6_ALIGN16B = 15 };

static const struct {
    const char *name;
    uint32_t bytes;  /* 0: packed sub-byte values */
    int is_float;
} types[] = {
    {"UINT8", 1, 0},     {"UINT16", 2, 0},       {"UINT32", 4, 0},       {"INT32", 4, 0},
    {"UINT64", 8, 0},    {"INT64", 8, 0},        {"FLOAT16", 2, 1},      {"FLOAT32", 4, 1},
    {"FLOAT64", 8, 1},   {"BFLOAT16", 2, 1},     {"FLOAT32_FTZ", 4, 1},  {"TFLOAT32", 4, 1},
    {"TFLOAT32_FTZ", 4, 1}, {"16U4_ALIGN8B", 0, 0}, {"16U4_ALIGN16B", 0, 0}, {"16U6_ALIGN16B", 0, 0},
};
#define NTYPES (sizeof types / sizeof types[0])

static const char *type_name(int32_t t)
{
    return t >= 0 && (size_t)t < NTYPES ? types[t].name : "an unknown type";
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

/* "kernel 'k' argument 0 'a' (shape [64, 16], strides [16, 1], block [16, 16], FLOAT32)" */
static const char *describe(const trd_tensor_map_desc_t *d, char *buf, size_t cap)
{
    size_t len = 0;
    uint32_t rank = d->rank <= TRD_TENSOR_MAP_MAX_RANK ? d->rank : TRD_TENSOR_MAP_MAX_RANK;
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

/* An error naming what was encoded; the description is built only here, off the success path. */
static trd_status_t fail(trd_status_t st, const trd_tensor_map_desc_t *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static trd_status_t fail(trd_status_t st, const trd_tensor_map_desc_t *d, const char *fmt, ...)
{
    char what[768], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return trd_drv_error(st, "%s: %s", describe(d, what, sizeof what), msg);
}

#define BAD(...) fail(TRD_ERR_INVALID_ARGUMENT, d, __VA_ARGS__)

/* CUDA's documented requirements of cuTensorMapEncodeTiled, for the tiled, non-interleaved maps Triton uses. */
static trd_status_t check(const trd_tensor_map_desc_t *d)
{
    if (d->rank < 1 || d->rank > TRD_TENSOR_MAP_MAX_RANK)
        return BAD("rank %u is outside 1 .. %d", d->rank, TRD_TENSOR_MAP_MAX_RANK);
    if (d->elem_type < 0 || (size_t)d->elem_type >= NTYPES)
        return BAD("element type %d is not a CUtensorMapDataType (0 .. %zu)", d->elem_type,
                   NTYPES - 1);
    uint32_t tbytes = types[d->elem_type].bytes;
    int packed = tbytes == 0;
    int align16b = d->elem_type == T_16U4_ALIGN16B || d->elem_type == T_16U6_ALIGN16B;
    if (packed ? d->elem_size != 1 : d->elem_size != tbytes)
        return BAD("element size %u bytes does not fit %s (%u bytes%s)", d->elem_size,
                   type_name(d->elem_type), packed ? 1 : tbytes, packed ? ": its base array is bytes" : "");
    if (d->swizzle < CU_TENSOR_MAP_SWIZZLE_NONE || d->swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
        return BAD("swizzle %d is not a CUtensorMapSwizzle (0 .. 6)", d->swizzle);
    if (d->l2_promotion < CU_TENSOR_MAP_L2_PROMOTION_NONE || d->l2_promotion > CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
        return BAD("L2 promotion %d is not a CUtensorMapL2promotion (0 .. 3)", d->l2_promotion);
    if (d->oob_fill != 0 && d->oob_fill != 1)
        return BAD("out-of-bounds fill %d is neither 0 (zero) nor 1 (NaN)", d->oob_fill);
    if (d->oob_fill == 1 && !types[d->elem_type].is_float)
        return BAD("NaN padding needs a floating-point element type, not %s", type_name(d->elem_type));
    uint64_t base_align = align16b ? 32 : 16;
    if (!d->base || (uintptr_t)d->base % base_align)
        return BAD("the base address %p is not %llu-byte aligned", d->base,
                   (unsigned long long)base_align);
    uint32_t inner = d->rank - 1;
    for (uint32_t i = 0; i < d->rank; i++) {
        if (d->shape[i] == 0 || d->shape[i] > (UINT64_C(1) << 32))
            return BAD("shape[%u] = %llu is outside 1 .. 2^32", i, (unsigned long long)d->shape[i]);
        if (d->box[i] == 0 || d->box[i] > 256)
            return BAD("block[%u] = %u is outside 1 .. 256 (the most one TMA copy moves along a dimension)",
                       i, d->box[i]);
    }
    if (d->strides[inner] != 1)
        return BAD("the innermost stride (strides[%u]) is %llu; TMA needs the last dimension contiguous (1)",
                   inner, (unsigned long long)d->strides[inner]);
    uint64_t stride_align = align16b ? 32 : 16;
    for (uint32_t i = 0; i < inner; i++) {
        if (d->strides[i] == 0 || d->strides[i] >= (UINT64_C(1) << 40) / d->elem_size)
            return BAD("strides[%u] = %llu elements is outside 1 .. 2^40 bytes", i,
                       (unsigned long long)d->strides[i]);
        uint64_t bytes = d->strides[i] * d->elem_size;
        if (bytes % stride_align)
            return BAD("strides[%u] is %llu bytes, not a multiple of %llu", i, (unsigned long long)bytes,
                       (unsigned long long)stride_align);
    }
    if (align16b && d->shape[inner] % 128)
        return BAD("%s needs the innermost dimension a multiple of 128, not %llu", type_name(d->elem_type),
                   (unsigned long long)d->shape[inner]);
    if (d->elem_type == T_16U4_ALIGN8B && d->shape[inner] % 2)
        return BAD("16U4_ALIGN8B needs an even innermost dimension, not %llu",
                   (unsigned long long)d->shape[inner]);
    if (align16b && d->box[inner] != 128)
        return BAD("%s needs an innermost block of 128, not %u", type_name(d->elem_type), d->box[inner]);
    /* bytes of one box row in shared memory: packed ALIGN16B values take a byte each there, ALIGN8B half */
    uint64_t row = packed ? (align16b ? d->box[inner] : d->box[inner] / 2) : (uint64_t)d->box[inner] * tbytes;
    if (!align16b && row % 16)
        return BAD("the innermost block is %llu bytes, not a multiple of 16", (unsigned long long)row);
    static const uint64_t span[] = {0, 32, 64, 128, 128, 128, 128};
    if (d->swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && row > span[d->swizzle])
        return BAD("the innermost block is %llu bytes, more than the %llu bytes swizzle %d spans",
                   (unsigned long long)row, (unsigned long long)span[d->swizzle], d->swizzle);
    return TRD_OK;
}

trd_status_t cuda_tensor_map_encode(void *device, const trd_tensor_map_desc_t *d, void *out)
{
    struct cuda_device *dev = device;
    if (!d || !out)
        return trd_drv_error(TRD_ERR_INVALID_ARGUMENT, "tensor_map_encode: %s is NULL", d ? "out" : "desc");
    if (d->struct_size < sizeof(trd_tensor_map_desc_t))
        return trd_drv_error(TRD_ERR_VERSION, "trd_tensor_map_desc_t.struct_size is %u; this driver reads %zu bytes",
                                d->struct_size, sizeof(trd_tensor_map_desc_t));
    if (!dev->api->cuTensorMapEncodeTiled)
        return fail(TRD_ERR_UNSUPPORTED, d,
                    "this libcuda lacks cuTensorMapEncodeTiled (drivers for CUDA 12.0 and newer have it): cannot "
                    "encode the tensor map");
    if (dev->cc < 90)
        return fail(TRD_ERR_UNSUPPORTED, d, "cuda:%d (sm%d) has no TMA unit (sm90 and newer)", dev->ordinal, dev->cc);
    trd_status_t st = check(d);
    if (st != TRD_OK)
        return st;
    /* CUDA's order: innermost dimension first; strides in bytes for all but the innermost */
    cuuint64_t dims[TRD_TENSOR_MAP_MAX_RANK] = {0}, strides[TRD_TENSOR_MAP_MAX_RANK] = {0};
    cuuint32_t box[TRD_TENSOR_MAP_MAX_RANK] = {0}, estrides[TRD_TENSOR_MAP_MAX_RANK] = {0};
    uint32_t rank = d->rank;
    for (uint32_t k = 0; k < rank; k++) {
        dims[k] = d->shape[rank - 1 - k];
        box[k] = d->box[rank - 1 - k];
        estrides[k] = 1;
        if (k + 1 < rank)
            strides[k] = d->strides[rank - 2 - k] * d->elem_size;
    }
    /* host work, but CUDA documents CUDA_ERROR_INVALID_CONTEXT: the device's context, current already under XLA */
    struct cuda_ctx_scope sc;
    if ((st = cuda_ctx_enter(dev, &sc)) != TRD_OK)
        return st;
    CUtensorMap map; /* 64-byte aligned as CUDA needs; copied out on success only */
    CUresult r = dev->api->cuTensorMapEncodeTiled(
        &map, (CUtensorMapDataType)d->elem_type, rank, d->base, dims, strides, box, estrides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, (CUtensorMapSwizzle)d->swizzle, (CUtensorMapL2promotion)d->l2_promotion,
        d->oob_fill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    cuda_ctx_leave(dev, &sc);
    if (r != CUDA_SUCCESS) {
        char what[768];
        return cuda_error(dev->api, r, "cuTensorMapEncodeTiled of %s at %p, swizzle %d, on cuda:%d",
                          describe(d, what, sizeof what), d->base, d->swizzle, dev->ordinal);
    }
    memcpy(out, &map, sizeof map);
    return TRD_OK;
}
