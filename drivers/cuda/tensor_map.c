/* SPDX-License-Identifier: Apache-2.0 */
/* tensor_map.c: tensor maps (CUtensorMap) for kernels that Triton lowered to
 * the TMA unit. The caller describes the tensor row-major in elements, as
 * Triton does; cuTensorMapEncodeTiled wants it innermost first, with strides
 * in bytes and the innermost stride implied. Everything CUDA documents as a
 * requirement is checked first, by the rule libtrident answers callers with
 * (base/tensor_map.c, linked in), so that a bad descriptor gets an error that
 * names the value, not CUDA_ERROR_INVALID_VALUE. */
#include <stdio.h>
#include <string.h>

#include "base/tensor_map.h"
#include "drivers/cuda/cuda_driver.h"

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
    return trd_drv_error(st, "%s: %s", trd_tensor_map_describe(d, what, sizeof what), msg);
}

trd_status_t cuda_tensor_map_encode(void *device, const trd_tensor_map_desc_t *d, void *out)
{
    struct cuda_device *dev = device;
    char msg[512];
    if (!d || !out)
        return trd_drv_error(TRD_ERR_INVALID_ARGUMENT, "tensor_map_encode: %s is NULL", d ? "out" : "desc");
    trd_status_t st = trd_tensor_map_verify(d, msg, sizeof msg);
    if (st == TRD_ERR_VERSION)
        return trd_drv_error(st, "%s", msg);
    if (!dev->api->cuTensorMapEncodeTiled)
        return fail(TRD_ERR_UNSUPPORTED, d,
                    "this libcuda lacks cuTensorMapEncodeTiled (drivers for CUDA 12.0 and newer have it): cannot "
                    "encode the tensor map");
    if (dev->cc < 90)
        return fail(TRD_ERR_UNSUPPORTED, d, "cuda:%d (sm%d) has no TMA unit (sm90 and newer)", dev->ordinal, dev->cc);
    if (st != TRD_OK)
        return fail(st, d, "%s", msg);
    if (!d->base)
        return fail(TRD_ERR_INVALID_ARGUMENT, d, "the base address is NULL");
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
                          trd_tensor_map_describe(d, what, sizeof what), d->base, d->swizzle, dev->ordinal);
    }
    memcpy(out, &map, sizeof map);
    return TRD_OK;
}
