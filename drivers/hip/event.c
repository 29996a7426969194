/* SPDX-License-Identifier: Apache-2.0 */
/* event.c: timing events: record, synchronize, elapsed time. */
#include <stdlib.h>

#include "drivers/hip/hip.h"

trd_status_t hip_event_create(void *device, void **out)
{
    struct hip_device *dev = device;
    const struct hip_api *api = &dev->drv->api;
    struct hip_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    int prev;
    trd_status_t st = hip_device_enter(dev, &prev);
    if (st != TRD_OK) {
        free(ev);
        return st;
    }
    hipError_t e = api->hipEventCreateWithFlags(&ev->handle, HIP_EVENT_DEFAULT);
    hip_device_leave(dev, prev);
    if (e != HIP_SUCCESS) {
        free(ev);
        return hip_fail(api, e, "hipEventCreateWithFlags(hipEventDefault) failed");
    }
    ev->dev = dev;
    *out = ev;
    return TRD_OK;
}

void hip_event_destroy(void *event)
{
    struct hip_event *ev = event;
    if (!ev)
        return;
    hipError_t e = ev->dev->drv->api.hipEventDestroy(ev->handle);
    if (e != HIP_SUCCESS)
        hip_log_failure(ev->dev, e, "hipEventDestroy");
    free(ev);
}

trd_status_t hip_event_record(void *event, void *stream)
{
    struct hip_event *ev = event;
    const struct hip_stream *s = stream;
    const struct hip_api *api = &ev->dev->drv->api;
    int prev = -1;
    trd_status_t st;
    if (!s->handle && (st = hip_device_enter(ev->dev, &prev)) != TRD_OK)
        return st;
    hipError_t e = api->hipEventRecord(ev->handle, s->handle);
    if (!s->handle)
        hip_device_leave(ev->dev, prev);
    if (e != HIP_SUCCESS)
        return hip_fail(api, e, "hipEventRecord on %s failed", ev->dev->uri);
    return TRD_OK;
}

trd_status_t hip_event_sync(void *event)
{
    struct hip_event *ev = event;
    hipError_t e = ev->dev->drv->api.hipEventSynchronize(ev->handle);
    if (e != HIP_SUCCESS)
        return hip_fail(&ev->dev->drv->api, e, "hipEventSynchronize on %s failed", ev->dev->uri);
    return TRD_OK;
}

trd_status_t hip_event_elapsed(void *start, void *end, double *ms)
{
    struct hip_event *a = start, *b = end;
    float v = 0.0f;
    hipError_t e = a->dev->drv->api.hipEventElapsedTime(&v, a->handle, b->handle);
    if (e != HIP_SUCCESS)
        return hip_fail(&a->dev->drv->api, e,
                        "hipEventElapsedTime on %s failed (both events recorded and completed? synchronize the "
                        "end event first)",
                        a->dev->uri);
    *ms = v;
    return TRD_OK;
}
