/* SPDX-License-Identifier: Apache-2.0 */
/* device.c: device properties, selection by URI / index / property, and the
 * driver's per-device state, opened once on first use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

int trd_device_is_gpu(const trd_device_t *dev)
{
    return dev->props.kind == TRD_DEVICE_GPU;
}

trd_status_t trd_device_handle(trd_device_t *dev, void **handle)
{
    void *h = atomic_load_explicit(&dev->handle, memory_order_acquire);
    if (h) {
        *handle = h;
        return TRD_OK;
    }
    pthread_mutex_lock(&dev->open_lock);
    h = atomic_load_explicit(&dev->handle, memory_order_relaxed);
    trd_status_t st = TRD_OK;
    if (!h) {
        if (dev->open_status != TRD_OK) {
            st = trd_error_set(dev->open_status, "%s", dev->open_error ? dev->open_error : "device failed to open");
        } else {
            st = dev->drv->ops->device_open(dev->drv->ctx, dev->ordinal, &h);
            if (st != TRD_OK) {
                trd_error_wrap(st, "opening %s", dev->uri);
                dev->open_status = st;
                dev->open_error = trd_strdup(trd_error_message());
            } else {
                atomic_store_explicit(&dev->handle, h, memory_order_release);
            }
        }
    }
    pthread_mutex_unlock(&dev->open_lock);
    if (st == TRD_OK)
        *handle = h;
    return st;
}

trd_status_t trd_options_for_device_config(const trd_device_t *dev, const trd_config_t *config, trd_options_t **out)
{
    return trd_options_for_props(&dev->props, config, out);
}

TRD_API trd_status_t trd_options_create_for_device(const trd_device_t *dev, trd_options_t **out)
{
    if (!dev || !out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_options_create_for_device: NULL argument");
    return trd_options_for_device_config(dev, dev->rt->config, out);
}

TRD_API trd_status_t trd_device_get_props(const trd_device_t *dev, trd_device_props_t *props)
{
    if (!dev || !props)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_device_get_props: NULL argument");
    trd_status_t st = trd_struct_check(props->struct_size, sizeof(trd_device_props_t), "trd_device_props_t");
    if (st != TRD_OK)
        return st;
    trd_struct_fill(props, &dev->props, sizeof dev->props);
    return TRD_OK;
}

TRD_API trd_status_t trd_runtime_device_count(trd_runtime_t *rt, uint32_t *count)
{
    if (!rt || !count)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_device_count: NULL argument");
    *count = rt->ndevices;
    return TRD_OK;
}

TRD_API trd_status_t trd_runtime_device_get(trd_runtime_t *rt, uint32_t index, trd_device_t **device)
{
    if (!rt || !device)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_device_get: NULL argument");
    if (index >= rt->ndevices)
        return trd_error_set(TRD_ERR_NOT_FOUND, "device index %u is out of range (%u devices)", index,
                             rt->ndevices);
    *device = rt->devices[index];
    return TRD_OK;
}

TRD_API trd_status_t trd_device_matches(const trd_device_t *dev, const char *selector, int32_t *match)
{
    if (!dev || !match)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_device_matches: NULL argument");
    int m = trd_props_match(&dev->props, selector);
    if (m < 0)
        return TRD_ERR_INVALID_ARGUMENT;
    *match = m;
    return TRD_OK;
}

/* Higher is better: a GPU before the host, then more memory, then more units. */
static int better(const trd_device_t *a, const trd_device_t *b)
{
    int ga = a->props.kind == TRD_DEVICE_GPU, gb = b->props.kind == TRD_DEVICE_GPU;
    if (ga != gb)
        return ga > gb;
    if (a->props.memory_bytes != b->props.memory_bytes)
        return a->props.memory_bytes > b->props.memory_bytes;
    if (a->props.compute_units != b->props.compute_units)
        return a->props.compute_units > b->props.compute_units;
    return a->index < b->index;
}

TRD_API trd_status_t trd_runtime_device_find(trd_runtime_t *rt, const char *selector, trd_device_t **device)
{
    if (!rt || !device)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_device_find: NULL argument");
    int best = !selector || !*selector || strcmp(selector, "best") == 0;
    trd_device_t *found = NULL;
    for (uint32_t i = 0; i < rt->ndevices; i++) {
        int m = trd_props_match(&rt->devices[i]->props, selector);
        if (m < 0)
            return TRD_ERR_INVALID_ARGUMENT;
        if (!m)
            continue;
        if (!best) {
            found = rt->devices[i];
            break;
        }
        if (!found || better(rt->devices[i], found))
            found = rt->devices[i];
    }
    if (!found) {
        struct trd_str s;
        trd_str_init(&s);
        for (uint32_t i = 0; i < rt->ndevices; i++)
            trd_str_appendf(&s, "%s%s (%s)", i ? ", " : "", rt->devices[i]->uri, rt->devices[i]->arch);
        trd_status_t st = trd_error_set(TRD_ERR_NO_DEVICE, "no device matches '%s' (devices: %s)",
                                        selector ? selector : "best", s.buf ? s.buf : "none");
        trd_str_free(&s);
        return st;
    }
    *device = found;
    return TRD_OK;
}
