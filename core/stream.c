/* SPDX-License-Identifier: Apache-2.0 */
/* stream.c: streams and events, thin over the device's driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

static trd_status_t open_dev(trd_device_t *dev, void **h, const char *fn)
{
    if (!dev)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: device is NULL", fn);
    return trd_device_handle(dev, h);
}

static trd_status_t stream_new(trd_device_t *dev, void *native, int wrap, trd_stream_t **out)
{
    const char *fn = wrap ? "trd_stream_wrap" : "trd_stream_create";
    if (!out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    void *h;
    trd_status_t st = open_dev(dev, &h, fn);
    if (st != TRD_OK)
        return st;
    if (wrap && !dev->drv->ops->stream_wrap)
        return trd_error_set(TRD_ERR_UNSUPPORTED, "driver %s cannot wrap foreign streams", dev->drv->name);
    trd_stream_t *s = calloc(1, sizeof *s);
    if (!s)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    st = wrap ? dev->drv->ops->stream_wrap(h, native, &s->h) : dev->drv->ops->stream_create(h, &s->h);
    if (st != TRD_OK) {
        free(s);
        return trd_error_wrap(st, "%s on %s", wrap ? "wrapping a stream" : "creating a stream", dev->uri);
    }
    s->dev = dev;
    s->wrapped = wrap;
    atomic_init(&s->last_kernel, NULL);
    *out = s;
    return TRD_OK;
}

TRD_API trd_status_t trd_stream_create(trd_device_t *dev, trd_stream_t **out)
{
    return stream_new(dev, NULL, 0, out);
}

TRD_API trd_status_t trd_stream_wrap(trd_device_t *dev, void *native, trd_stream_t **out)
{
    return stream_new(dev, native, 1, out);
}

TRD_API void trd_stream_destroy(trd_stream_t *s)
{
    if (!s)
        return;
    s->dev->drv->ops->stream_destroy(s->h);
    free(s);
}

/* A failed synchronize reports a failure of queued work: name the kernel that
 * ran last on the stream unless the driver's message names one already. */
static trd_status_t sync_failed(trd_status_t st, const char *what, const trd_device_t *dev, const char *kernel,
                                const char *relation)
{
    if (kernel) {
        char needle[320];
        snprintf(needle, sizeof needle, "kernel '%s'", kernel);
        if (!strstr(trd_error_message(), needle))
            return trd_error_wrap(st, "%s of %s (%s kernel '%s')", what, dev->uri, relation, kernel);
    }
    return trd_error_wrap(st, "%s of %s", what, dev->uri);
}

TRD_API trd_status_t trd_stream_synchronize(trd_stream_t *s)
{
    if (!s)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_stream_synchronize: stream is NULL");
    trd_status_t st = s->dev->drv->ops->stream_sync(s->h);
    if (st == TRD_OK)
        return st;
    return sync_failed(st, "synchronizing a stream", s->dev,
                       atomic_load_explicit(&s->last_kernel, memory_order_relaxed), "its last launch:");
}

TRD_API trd_status_t trd_stream_native(const trd_stream_t *s, void **native)
{
    if (!s || !native)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_stream_native: NULL argument");
    *native = s->dev->drv->ops->stream_native(s->h);
    return TRD_OK;
}

TRD_API trd_status_t trd_stream_device(const trd_stream_t *s, trd_device_t **device)
{
    if (!s || !device)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_stream_device: NULL argument");
    *device = s->dev;
    return TRD_OK;
}

TRD_API trd_status_t trd_event_create(trd_device_t *dev, trd_event_t **out)
{
    if (!out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_event_create: out is NULL");
    void *h;
    trd_status_t st = open_dev(dev, &h, "trd_event_create");
    if (st != TRD_OK)
        return st;
    trd_event_t *e = calloc(1, sizeof *e);
    if (!e)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    if ((st = dev->drv->ops->event_create(h, &e->h)) != TRD_OK) {
        free(e);
        return trd_error_wrap(st, "creating an event on %s", dev->uri);
    }
    e->dev = dev;
    atomic_init(&e->after_kernel, NULL);
    *out = e;
    return TRD_OK;
}

TRD_API void trd_event_destroy(trd_event_t *e)
{
    if (!e)
        return;
    e->dev->drv->ops->event_destroy(e->h);
    free(e);
}

TRD_API trd_status_t trd_event_record(trd_event_t *e, trd_stream_t *s)
{
    if (!e)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_event_record: event is NULL");
    if (s && e->dev != s->dev)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_event_record: the event belongs to %s, the stream to %s",
                             e->dev->uri, s->dev->uri);
    /* s NULL: the device's default stream, which no kernel of a trident stream names */
    trd_status_t st = e->dev->drv->ops->event_record(e->h, s ? s->h : NULL);
    if (st == TRD_OK)
        atomic_store_explicit(&e->after_kernel, s ? atomic_load_explicit(&s->last_kernel, memory_order_relaxed) : NULL,
                              memory_order_relaxed);
    return st;
}

TRD_API trd_status_t trd_event_synchronize(trd_event_t *e)
{
    if (!e)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_event_synchronize: event is NULL");
    trd_status_t st = e->dev->drv->ops->event_sync(e->h);
    if (st == TRD_OK)
        return st;
    return sync_failed(st, "synchronizing an event", e->dev,
                       atomic_load_explicit(&e->after_kernel, memory_order_relaxed), "recorded after");
}

TRD_API trd_status_t trd_event_elapsed(trd_event_t *a, trd_event_t *b, double *ms)
{
    if (!a || !b || !ms)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_event_elapsed: NULL argument");
    if (a->dev != b->dev)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_event_elapsed: events of two devices (%s, %s)",
                             a->dev->uri, b->dev->uri);
    double v;
    trd_status_t st = a->dev->drv->ops->event_elapsed(a->h, b->h, &v);
    if (st == TRD_OK)
        *ms = v;
    return st;
}
