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

/* The record's values that go into the descriptor, and the most each field of it holds: what does not fit is
 * refused here, everything else by libtrident's rule (trd_tensor_map_check), the CUDA driver's. */
static const struct {
    int at, count;
    const char *name;
    int64_t max;
} desc_fields[] = {
    {TRD_XLA_TMA_ELEM_TYPE, 1, "element type", INT32_MAX},
    {TRD_XLA_TMA_ELEM_SIZE, 1, "element size", UINT32_MAX},
    {TRD_XLA_TMA_SWIZZLE, 1, "swizzle", INT32_MAX},
    {TRD_XLA_TMA_OOB_FILL, 1, "oob_fill", INT32_MAX},
    {TRD_XLA_TMA_L2_PROMOTION, 1, "L2 promotion", INT32_MAX},
    {TRD_XLA_TMA_SHAPE, TRD_TENSOR_MAP_MAX_RANK, "shape", INT64_MAX},
    {TRD_XLA_TMA_STRIDES, TRD_TENSOR_MAP_MAX_RANK, "strides", INT64_MAX},
    {TRD_XLA_TMA_BLOCK, TRD_TENSOR_MAP_MAX_RANK, "block", UINT32_MAX},
};

/* What only the record says: its base buffer, the fp4 packing, the reserved and unused fields, and values that
 * fit the descriptor. */
static trd_status_t check_record(const struct xla_tma *t, const int64_t *r, int64_t index)
{
    int64_t base = r[TRD_XLA_TMA_BASE], rank = r[TRD_XLA_TMA_RANK], fp4 = r[TRD_XLA_TMA_FP4_PADDED];
    if (base != 0 && base != 1)
        return bad(t, "base %lld is neither 0 (an operand) nor 1 (a result)", (long long)base);
    if (index < 0 || index > 65535)
        return bad(t, "the base buffer's index %lld is out of range", (long long)index);
    /* the record's arrays hold rank values each: read no further (the rule says the same of the descriptor) */
    if (rank < 1 || rank > TRD_TENSOR_MAP_MAX_RANK)
        return bad(t, "rank %lld is outside 1 .. %d", (long long)rank, TRD_TENSOR_MAP_MAX_RANK);
    if (fp4 != 0 && fp4 != 1)
        return bad(t, "fp4_padded %lld is neither 0 nor 1", (long long)fp4);
    if (fp4 && r[TRD_XLA_TMA_ELEM_TYPE] != 14)
        return bad(t, "fp4_padded needs element type 14 (16U4_ALIGN16B), not %lld", (long long)r[TRD_XLA_TMA_ELEM_TYPE]);
    for (int i = TRD_XLA_TMA_FIELDS - 1; i >= TRD_XLA_TMA_RESERVED; i--)
        if (r[i] != 0)
            return bad(t, "field %d is %lld; this libtrident knows it as reserved (0): update trident", i,
                       (long long)r[i]);
    const int64_t *shape = r + TRD_XLA_TMA_SHAPE, *strides = r + TRD_XLA_TMA_STRIDES, *block = r + TRD_XLA_TMA_BLOCK;
    for (int64_t i = rank; i < TRD_TENSOR_MAP_MAX_RANK; i++)
        if (shape[i] || strides[i] || block[i])
            return bad(t, "dimension %lld is beyond rank %lld, yet its shape, stride or block is not 0", (long long)i,
                       (long long)rank);
    for (size_t f = 0; f < XLA_ARRAY_SIZE(desc_fields); f++)
        for (int k = 0; k < (desc_fields[f].count > 1 ? rank : 1); k++) {
            int64_t v = r[desc_fields[f].at + k];
            if (v < 0 || v > desc_fields[f].max) {
                char at[16] = "";
                if (desc_fields[f].count > 1)
                    snprintf(at, sizeof at, "[%d]", k);
                return bad(t, "%s%s = %lld is outside 0 .. %lld", desc_fields[f].name, at, (long long)v,
                           (long long)desc_fields[f].max);
            }
        }
    return TRD_OK;
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
    trd_status_t st = check_record(t, r, index);
    if (st != TRD_OK)
        return st;
    t->base_kind = (int32_t)r[TRD_XLA_TMA_BASE];
    t->fp4_padded = (int)r[TRD_XLA_TMA_FP4_PADDED];
    trd_tensor_map_desc_t *d = &t->desc;
    d->struct_size = sizeof *d;
    d->rank = (uint32_t)r[TRD_XLA_TMA_RANK];
    d->elem_type = (int32_t)r[TRD_XLA_TMA_ELEM_TYPE];
    d->elem_size = (uint32_t)r[TRD_XLA_TMA_ELEM_SIZE];
    d->swizzle = (int32_t)r[TRD_XLA_TMA_SWIZZLE];
    d->oob_fill = (int32_t)r[TRD_XLA_TMA_OOB_FILL];
    d->l2_promotion = (int32_t)r[TRD_XLA_TMA_L2_PROMOTION];
    for (uint32_t i = 0; i < d->rank; i++) {
        d->shape[i] = (uint64_t)r[TRD_XLA_TMA_SHAPE + i];
        d->strides[i] = (uint64_t)r[TRD_XLA_TMA_STRIDES + i];
        d->box[i] = (uint32_t)r[TRD_XLA_TMA_BLOCK + i];
    }
    /* fp4 values packed two to a byte: the map counts values, the array's shape bytes */
    if (t->fp4_padded)
        d->shape[d->rank - 1] *= 2;
    d->label = t->label;
    /* the base address comes at each EXECUTE: the rest is checked now, as the driver will encode it */
    if ((st = trd_tensor_map_check(d)) != TRD_OK)
        return st;
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
