/* SPDX-License-Identifier: Apache-2.0 */
/* native.c: what a caller that launches prepared kernels needs on memory and streams it owns: set and copy native
 * pointers, check and encode tensor maps, ask whether a stream is being captured. Thin over the device's driver: the device
 * is opened once (then one atomic load), and none of these takes a lock or allocates. */
#include "base/tensor_map.h"
#include "core/internal.h"

static trd_status_t device_of(trd_device_t *dev, trd_stream_t *s, const char *fn, void **h)
{
    if (!dev)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: device is NULL", fn);
    if (s && s->dev != dev)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: the stream is on %s, not %s", fn, s->dev->uri, dev->uri);
    return trd_device_handle(dev, h);
}

TRD_API trd_status_t trd_device_memset(trd_device_t *dev, void *dst, uint8_t value, uint64_t size, trd_stream_t *s)
{
    void *h;
    trd_status_t st = device_of(dev, s, "trd_device_memset", &h);
    if (st != TRD_OK || size == 0)
        return st;
    if (!dst)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_device_memset: dst is NULL (%llu bytes on %s)",
                             (unsigned long long)size, dev->uri);
    st = dev->drv->ops->mem_set(h, dst, value, size, s ? s->h : NULL);
    return st == TRD_OK ? st : trd_error_wrap(st, "setting %llu bytes on %s", (unsigned long long)size, dev->uri);
}

TRD_API trd_status_t trd_device_memcpy(trd_device_t *dev, void *dst, const void *src, uint64_t size, int32_t kind,
                                       trd_stream_t *s)
{
    void *h;
    trd_status_t st = device_of(dev, s, "trd_device_memcpy", &h);
    if (st != TRD_OK)
        return st;
    if (kind < TRD_COPY_HOST_TO_DEVICE || kind > TRD_COPY_DEVICE_TO_DEVICE)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                             "trd_device_memcpy: kind %d is not a trd_copy_kind (1 host to device, 2 device to host, "
                             "3 device to device)",
                             kind);
    if (size == 0)
        return TRD_OK;
    if (!dst || !src)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_device_memcpy: %s is NULL (%llu bytes on %s)",
                             dst ? "src" : "dst", (unsigned long long)size, dev->uri);
    st = dev->drv->ops->mem_copy(h, dst, src, size, kind, s ? s->h : NULL);
    return st == TRD_OK ? st : trd_error_wrap(st, "copying %llu bytes on %s", (unsigned long long)size, dev->uri);
}

TRD_API trd_status_t trd_device_tensor_map_encode(trd_device_t *dev, const trd_tensor_map_desc_t *desc, void *out)
{
    void *h;
    trd_status_t st = device_of(dev, NULL, "trd_device_tensor_map_encode", &h);
    if (st != TRD_OK)
        return st;
    if (!desc || !out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_device_tensor_map_encode: NULL argument");
    if ((st = trd_struct_check(desc->struct_size, sizeof(trd_tensor_map_desc_t), "trd_tensor_map_desc_t")) != TRD_OK)
        return st;
    trd_status_t (*encode)(void *, const trd_tensor_map_desc_t *, void *) =
        TRD_OPS_OPTIONAL(dev->drv->ops, tensor_map_encode);
    if (!encode)
        return trd_error_set(TRD_ERR_UNSUPPORTED, "%s%s%s's driver '%s' cannot encode tensor maps (TMA)",
                             desc->label ? desc->label : "", desc->label ? ": " : "", dev->uri, dev->drv->name);
    return encode(h, desc, out);
}

TRD_API trd_status_t trd_tensor_map_check(const trd_tensor_map_desc_t *desc)
{
    trd_status_t st;
    if (!desc)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tensor_map_check: desc is NULL");
    if ((st = trd_struct_check(desc->struct_size, sizeof(trd_tensor_map_desc_t), "trd_tensor_map_desc_t")) != TRD_OK)
        return st;
    char msg[512], what[768];
    if ((st = trd_tensor_map_verify(desc, msg, sizeof msg)) != TRD_OK)
        return trd_error_set(st, "%s: %s", trd_tensor_map_describe(desc, what, sizeof what), msg);
    return TRD_OK;
}

TRD_API trd_status_t trd_stream_capturing(const trd_stream_t *s, int32_t *capturing)
{
    if (!s || !capturing)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_stream_capturing: NULL argument");
    trd_status_t (*op)(void *, int32_t *) = TRD_OPS_OPTIONAL(s->dev->drv->ops, stream_capturing);
    int32_t c = 0;
    trd_status_t st = op ? op(s->h, &c) : TRD_OK;
    if (st != TRD_OK)
        return trd_error_wrap(st, "asking whether a stream of %s is captured", s->dev->uri);
    *capturing = c != 0;
    return TRD_OK;
}
