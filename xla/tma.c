/* SPDX-License-Identifier: Apache-2.0 */
/* tma.c: tensor-map parameters of the XLA call (arg_kind 4).
 *
 * Triton passes a host tensor descriptor that it lowered to the TMA unit as a
 * 128-byte CUtensorMap by value, encoded from the base buffer's device address,
 * which XLA gives only at EXECUTE. INSTANTIATE decodes and checks the `tma`
 * attribute (one record per kind-4 parameter, per candidate of an autotuned
 * call: a map's box comes from the compilation) into templates; the first
 * EXECUTE of a candidate on a device checks the base buffers against them;
 * every EXECUTE encodes each map of the launched candidate from its template
 * and the buffer's address into the caller's stack, with
 * trd_device_tensor_map_encode: host work, no lock, no allocation, so a CUDA
 * graph capture records the encoded bytes as kernel parameters. */
#include <stdio.h>
#include <string.h>

#include "xla/ffi.h"

/* Bytes per element of each CUtensorMapDataType; 0 for the packed 4- and 6-bit types (a byte array). */
static const uint8_t type_bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4, 0, 0, 0};
/* FLOAT16 .. TFLOAT32_FTZ: the types NaN padding is for */
static int type_is_float(int64_t t)
{
    return t >= 6 && t <= 12;
}

static trd_status_t bad(const struct xla_tma *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static trd_status_t bad(const struct xla_tma *t, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return xla_fail(TRD_ERR_INVALID_ARGUMENT, "%s: tensor map: %s", t->label, msg);
}

trd_status_t xla_tma_decode(const int64_t *r, const char *kernel, int64_t cand, uint32_t param, const char *pname,
                            int64_t index, struct xla_tma *out)
{
    struct xla_tma tmp, *t = &tmp; /* *out is written on success only */
    memset(t, 0, sizeof *t);
    char which[32] = "";
    if (cand >= 0) /* each autotune candidate has its own map */
        snprintf(which, sizeof which, " candidate %lld", (long long)cand);
    snprintf(t->label, sizeof t->label, "kernel '%s'%s argument %u%s%s%s", kernel, which, param, pname ? " '" : "",
             pname ? pname : "", pname ? "'" : "");
    t->param = param;
    t->index = index;
    int64_t base = r[TRD_XLA_TMA_BASE], type = r[TRD_XLA_TMA_ELEM_TYPE], size = r[TRD_XLA_TMA_ELEM_SIZE];
    int64_t rank = r[TRD_XLA_TMA_RANK], swizzle = r[TRD_XLA_TMA_SWIZZLE], fill = r[TRD_XLA_TMA_OOB_FILL];
    int64_t fp4 = r[TRD_XLA_TMA_FP4_PADDED], l2 = r[TRD_XLA_TMA_L2_PROMOTION];
    const int64_t *shape = r + TRD_XLA_TMA_SHAPE, *strides = r + TRD_XLA_TMA_STRIDES, *block = r + TRD_XLA_TMA_BLOCK;
    if (base != 0 && base != 1)
        return bad(t, "base %lld is neither 0 (an operand) nor 1 (a result)", (long long)base);
    if (index < 0 || index > 65535)
        return bad(t, "the base buffer's index %lld is out of range", (long long)index);
    if (type < 0 || type >= (int64_t)XLA_ARRAY_SIZE(type_bytes))
        return bad(t, "element type %lld is not a CUtensorMapDataType (0 .. 15)", (long long)type);
    int packed = type_bytes[type] == 0;
    if (packed ? size != 1 : size != type_bytes[type])
        return bad(t, "element size %lld bytes does not fit element type %lld (%u bytes)", (long long)size,
                   (long long)type, packed ? 1u : type_bytes[type]);
    if (rank < 1 || rank > TRD_TENSOR_MAP_MAX_RANK)
        return bad(t, "rank %lld is outside 1 .. %d", (long long)rank, TRD_TENSOR_MAP_MAX_RANK);
    if (swizzle < 0 || swizzle > 6)
        return bad(t, "swizzle %lld is not a CUtensorMapSwizzle (0 .. 6)", (long long)swizzle);
    if (fill != 0 && fill != 1)
        return bad(t, "oob_fill %lld is neither 0 (zero) nor 1 (NaN)", (long long)fill);
    if (fill == 1 && !type_is_float(type))
        return bad(t, "NaN padding needs a floating-point element type, not CUtensorMapDataType %lld", (long long)type);
    if (fp4 != 0 && fp4 != 1)
        return bad(t, "fp4_padded %lld is neither 0 nor 1", (long long)fp4);
    if (fp4 && type != 14)
        return bad(t, "fp4_padded needs element type 14 (16U4_ALIGN16B), not %lld", (long long)type);
    if (l2 < 0 || l2 > 3)
        return bad(t, "L2 promotion %lld is not a CUtensorMapL2promotion (0 .. 3)", (long long)l2);
    for (int i = TRD_XLA_TMA_FIELDS - 1; i >= TRD_XLA_TMA_RESERVED; i--)
        if (r[i] != 0)
            return bad(t, "field %d is %lld; this libtrident knows it as reserved (0): update trident", i,
                       (long long)r[i]);
    for (int64_t i = rank; i < TRD_TENSOR_MAP_MAX_RANK; i++)
        if (shape[i] || strides[i] || block[i])
            return bad(t, "dimension %lld is beyond rank %lld, yet its shape, stride or block is not 0", (long long)i,
                       (long long)rank);
    for (int64_t i = 0; i < rank; i++) {
        if (shape[i] < 1 || shape[i] > (INT64_C(1) << 32))
            return bad(t, "shape[%lld] = %lld is outside 1 .. 2^32", (long long)i, (long long)shape[i]);
        if (block[i] < 1 || block[i] > 256)
            return bad(t, "block[%lld] = %lld is outside 1 .. 256", (long long)i, (long long)block[i]);
        if (i == rank - 1 ? strides[i] != 1 : strides[i] < 1 || strides[i] >= (INT64_C(1) << 40) / size)
            return bad(t, i == rank - 1 ? "strides[%lld] = %lld: the innermost dimension must be contiguous (1)"
                                        : "strides[%lld] = %lld elements is outside 1 .. 2^40 bytes",
                       (long long)i, (long long)strides[i]);
        if (i < rank - 1 && strides[i] * size % 16)
            return bad(t, "strides[%lld] is %lld bytes, not a multiple of 16", (long long)i,
                       (long long)(strides[i] * size));
    }
    int64_t inner = rank - 1;
    int64_t row = packed ? block[inner] : block[inner] * size;
    if (!packed && row % 16)
        return bad(t, "the innermost block is %lld bytes, not a multiple of 16", (long long)row);
    static const int64_t span[] = {0, 32, 64, 128, 128, 128, 128};
    if (swizzle && row > span[swizzle])
        return bad(t, "the innermost block is %lld bytes, more than the %lld bytes swizzle %lld spans",
                   (long long)row, (long long)span[swizzle], (long long)swizzle);
    t->base_kind = (int32_t)base;
    t->fp4_padded = (int)fp4;
    trd_tensor_map_desc_t *d = &t->desc;
    d->struct_size = sizeof *d;
    d->rank = (uint32_t)rank;
    d->elem_type = (int32_t)type;
    d->elem_size = (uint32_t)size;
    d->swizzle = (int32_t)swizzle;
    d->oob_fill = (int32_t)fill;
    d->l2_promotion = (int32_t)l2;
    for (int64_t i = 0; i < rank; i++) {
        d->shape[i] = (uint64_t)shape[i];
        d->strides[i] = (uint64_t)strides[i];
        d->box[i] = (uint32_t)block[i];
    }
    /* fp4 values packed two to a byte: the map counts values, the array's shape bytes */
    if (fp4)
        d->shape[inner] *= 2;
    *out = tmp;
    out->desc.label = out->label;
    return TRD_OK;
}

static const XLA_FFI_Buffer *base_buffer(XLA_FFI_CallFrame *f, const struct xla_tma *t)
{
    if (t->base_kind == 0)
        return t->index < f->args.size ? f->args.args[t->index] : NULL;
    return t->index < f->rets.size ? f->rets.rets[t->index] : NULL;
}

trd_status_t xla_tma_check(XLA_FFI_CallFrame *f, const struct xla_tma *t)
{
    const char *what = t->base_kind ? "result" : "operand";
    const XLA_FFI_Buffer *b = base_buffer(f, t);
    if (!b)
        return bad(t, "its base, %s %lld, does not exist (the call has %lld)", what, (long long)t->index,
                   (long long)(t->base_kind ? f->rets.size : f->args.size));
    size_t esize = xla_dtype_bytes(b->dtype);
    if (esize != t->desc.elem_size)
        return bad(t, "its base, %s %lld, is an array of %s (%zu-byte elements); the map has %u-byte elements", what,
                   (long long)t->index, xla_dtype_name(b->dtype), esize, t->desc.elem_size);
    uint64_t have = esize;
    for (int64_t i = 0; i < b->rank; i++)
        have *= (uint64_t)b->dims[i];
    /* the last element the map can reach, in the array's elements (bytes for packed fp4) */
    const trd_tensor_map_desc_t *d = &t->desc;
    uint64_t last = 0;
    for (uint32_t i = 0; i < d->rank; i++) {
        uint64_t n = i + 1 == d->rank && t->fp4_padded ? d->shape[i] / 2 : d->shape[i];
        last += (n - 1) * d->strides[i];
    }
    if (last >= have / esize)
        return bad(t, "it reaches element %llu of its base, %s %lld, which has %llu elements", (unsigned long long)last,
                   what, (long long)t->index, (unsigned long long)(have / esize));
    return TRD_OK;
}

trd_status_t xla_tma_encode(XLA_FFI_CallFrame *f, const struct xla_tma *maps, uint32_t n, trd_device_t *dev,
                            xla_tma_bytes *out, void **params)
{
    for (uint32_t i = 0; i < n; i++) {
        trd_tensor_map_desc_t d = maps[i].desc;
        d.base = base_buffer(f, &maps[i])->data;
        trd_status_t st = trd_device_tensor_map_encode(dev, &d, out[i].bytes);
        if (st != TRD_OK)
            return st;
        params[maps[i].param] = out[i].bytes;
    }
    return TRD_OK;
}
