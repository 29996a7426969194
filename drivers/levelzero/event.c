/* SPDX-License-Identifier: Apache-2.0 */
/* event.c: events for synchronisation and timing.
 *
 * Recording appends zeCommandListAppendWriteGlobalTimestamp, which writes the
 * device's global timestamp into host memory and signals the event; elapsed
 * time is the difference of two such stamps, masked to timestampValidBits
 * and scaled by timerResolution. The specification leaves the duration of a
 * KERNEL_TIMESTAMP event signalled by zeCommandListAppendSignalEvent
 * undefined, so the event's own kernel timestamps are not used for this. */
#include <stdlib.h>

#include "drivers/levelzero/levelzero.h"

trd_status_t zdrv_event_create(void *device, void **out)
{
    struct zdrv_device *dev = device;
    const struct zdrv_api *api = dev->api;
    struct zdrv_event *e = calloc(1, sizeof *e);
    if (!e)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    e->dev = dev;
    ze_result_t r;
    trd_status_t st;
    ze_event_pool_desc_t pd = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
        .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
        .count = 1,
    };
    ze_device_handle_t devh = dev->info->device;
    if ((r = api->zeEventPoolCreate(dev->ctx, &pd, 1, &devh, &e->pool)) != ZE_RESULT_SUCCESS) {
        st = zdrv_fail(r, "zeEventPoolCreate", "creating an event on levelzero:%u", dev->ordinal);
        goto fail_pool;
    }
    ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 0, .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                          .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    if ((r = api->zeEventCreate(e->pool, &ed, &e->event)) != ZE_RESULT_SUCCESS) {
        st = zdrv_fail(r, "zeEventCreate", "creating an event on levelzero:%u", dev->ordinal);
        goto fail_event;
    }
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    if ((r = api->zeMemAllocHost(dev->ctx, &hd, sizeof *e->stamp, sizeof *e->stamp, (void **)&e->stamp)) !=
        ZE_RESULT_SUCCESS) {
        st = zdrv_fail(r, "zeMemAllocHost", "allocating an event's timestamp on levelzero:%u", dev->ordinal);
        goto fail_stamp;
    }
    *out = e;
    return TRD_OK;
fail_stamp:
    api->zeEventDestroy(e->event);
fail_event:
    api->zeEventPoolDestroy(e->pool);
fail_pool:
    free(e);
    return st;
}

void zdrv_event_destroy(void *event)
{
    struct zdrv_event *e = event;
    if (!e)
        return;
    const struct zdrv_api *api = e->dev->api;
    /* A pending timestamp write still targets the stamp. */
    if (e->recorded && api->zeEventQueryStatus(e->event) == ZE_RESULT_NOT_READY)
        api->zeEventHostSynchronize(e->event, UINT64_MAX);
    api->zeMemFree(e->dev->ctx, e->stamp);
    api->zeEventDestroy(e->event);
    api->zeEventPoolDestroy(e->pool);
    free(e);
}

trd_status_t zdrv_event_record(void *event, void *stream)
{
    struct zdrv_event *e = event;
    struct zdrv_stream *s = stream;
    const struct zdrv_api *api = e->dev->api;
    pthread_mutex_lock(&s->lock);
    trd_status_t st = TRD_OK;
    ze_result_t r;
    /* Re-recording: wait for the previous write before resetting its event. */
    if (e->recorded && (r = api->zeEventHostSynchronize(e->event, UINT64_MAX)) != ZE_RESULT_SUCCESS) {
        st = zdrv_fail(r, "zeEventHostSynchronize", "recording an event on levelzero:%u", e->dev->ordinal);
        goto out;
    }
    if ((r = api->zeEventHostReset(e->event)) != ZE_RESULT_SUCCESS) {
        st = zdrv_fail(r, "zeEventHostReset", "recording an event on levelzero:%u", e->dev->ordinal);
        goto out;
    }
    if ((st = zdrv_stream_order(s)) != TRD_OK)
        goto out;
    r = api->zeCommandListAppendWriteGlobalTimestamp(s->list, e->stamp, e->event, 0, NULL);
    if (r != ZE_RESULT_SUCCESS) {
        st = zdrv_fail(r, "zeCommandListAppendWriteGlobalTimestamp", "recording an event on levelzero:%u",
                       e->dev->ordinal);
        goto out;
    }
    s->busy = 1;
    e->recorded = 1;
out:
    pthread_mutex_unlock(&s->lock);
    return st;
}

trd_status_t zdrv_event_sync(void *event)
{
    struct zdrv_event *e = event;
    if (!e->recorded)
        return TRD_OK; /* nothing to wait for */
    ze_result_t r = e->dev->api->zeEventHostSynchronize(e->event, UINT64_MAX);
    if (r != ZE_RESULT_SUCCESS)
        return zdrv_fail(r, "zeEventHostSynchronize", "synchronizing an event of levelzero:%u", e->dev->ordinal);
    return TRD_OK;
}

static trd_status_t zdrv_stamp_of(const struct zdrv_event *e, uint64_t *stamp)
{
    if (!e->recorded)
        return trd_drv_error(TRD_ERR_STATE, "an event was never recorded");
    ze_result_t r = e->dev->api->zeEventQueryStatus(e->event);
    if (r == ZE_RESULT_NOT_READY)
        return trd_drv_error(TRD_ERR_STATE, "an event has not completed yet: synchronize it first");
    if (r != ZE_RESULT_SUCCESS)
        return zdrv_fail(r, "zeEventQueryStatus", "reading an event of levelzero:%u", e->dev->ordinal);
    *stamp = *(volatile uint64_t *)e->stamp;
    return TRD_OK;
}

trd_status_t zdrv_event_elapsed(void *start, void *end, double *ms)
{
    struct zdrv_event *a = start, *b = end;
    uint64_t ta, tb;
    trd_status_t st;
    if ((st = zdrv_stamp_of(a, &ta)) != TRD_OK || (st = zdrv_stamp_of(b, &tb)) != TRD_OK)
        return st;
    const struct zdrv_devinfo *i = a->dev->info;
    if (i->ns_per_tick <= 0.0)
        return trd_drv_error(TRD_ERR_UNSUPPORTED, "levelzero:%u reports no timer resolution", a->dev->ordinal);
    /* The counter has ts_mask's bits and wraps: the difference is modular. */
    uint64_t ticks = (tb - ta) & i->ts_mask;
    *ms = (double)ticks * i->ns_per_tick / 1e6;
    return TRD_OK;
}
