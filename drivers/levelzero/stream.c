/* SPDX-License-Identifier: Apache-2.0 */
/* stream.c: a trident stream is an immediate command list on a compute
 * queue group (or a caller's immediate command list, wrapped). */
#include <stdlib.h>

#include "drivers/levelzero/levelzero.h"

trd_status_t zdrv_stream_new(struct zdrv_device *dev, ze_command_list_handle_t list, int owned,
                             struct zdrv_stream **out)
{
    const struct zdrv_api *api = dev->api;
    struct zdrv_stream *s = calloc(1, sizeof *s);
    if (!s)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    s->dev = dev;
    s->owned = owned;
    atomic_init(&s->shared, !owned);
    ze_result_t r;
    trd_status_t st;
    if (owned) {
        ze_command_queue_desc_t qd = {
            .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
            .ordinal = dev->info->compute_ordinal,
            .index = 0,
            .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
        };
        if ((r = api->zeCommandListCreateImmediate(dev->ctx, dev->info->device, &qd, &s->list)) != ZE_RESULT_SUCCESS) {
            st = zdrv_fail(r, "zeCommandListCreateImmediate", "creating a stream on levelzero:%u", dev->ordinal);
            goto fail_list;
        }
    } else {
        s->list = list;
    }
    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                               .count = 1};
    ze_device_handle_t devh = dev->info->device;
    if ((r = api->zeEventPoolCreate(dev->ctx, &pd, 1, &devh, &s->pool)) != ZE_RESULT_SUCCESS) {
        st = zdrv_fail(r, "zeEventPoolCreate", "creating a stream's event on levelzero:%u", dev->ordinal);
        goto fail_pool;
    }
    /* Host scope: the host waits on it and then reads what the stream wrote. */
    ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 0, .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                          .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    if ((r = api->zeEventCreate(s->pool, &ed, &s->done)) != ZE_RESULT_SUCCESS) {
        st = zdrv_fail(r, "zeEventCreate", "creating a stream's event on levelzero:%u", dev->ordinal);
        goto fail_event;
    }
    pthread_mutex_init(&s->lock, NULL);
    trd_arena_init(&s->arena, &dev->scratch_mem);
    pthread_mutex_lock(&dev->streams_lock);
    s->next = dev->streams;
    dev->streams = s;
    pthread_mutex_unlock(&dev->streams_lock);
    *out = s;
    return TRD_OK;
fail_event:
    api->zeEventPoolDestroy(s->pool);
fail_pool:
    if (owned)
        api->zeCommandListDestroy(s->list);
fail_list:
    free(s);
    return st;
}

/* 1 when an earlier command of the list may still run. */
static int zdrv_stream_busy(struct zdrv_stream *s)
{
    return s->busy || atomic_load_explicit(&s->shared, memory_order_relaxed);
}

trd_status_t zdrv_stream_order(struct zdrv_stream *s)
{
    if (!zdrv_stream_busy(s))
        return TRD_OK;
    ze_result_t r = s->dev->api->zeCommandListAppendBarrier(s->list, NULL, 0, NULL);
    if (r != ZE_RESULT_SUCCESS)
        return zdrv_fail(r, "zeCommandListAppendBarrier", "ordering a stream of levelzero:%u", s->dev->ordinal);
    return TRD_OK;
}

trd_status_t zdrv_stream_wait(struct zdrv_stream *s)
{
    if (!zdrv_stream_busy(s))
        return TRD_OK;
    const struct zdrv_api *api = s->dev->api;
    ze_result_t r = api->zeEventHostReset(s->done);
    if (r != ZE_RESULT_SUCCESS)
        return zdrv_fail(r, "zeEventHostReset", "synchronizing a stream of levelzero:%u", s->dev->ordinal);
    /* No wait events: the barrier runs after every earlier command. */
    if ((r = api->zeCommandListAppendBarrier(s->list, s->done, 0, NULL)) != ZE_RESULT_SUCCESS)
        return zdrv_fail(r, "zeCommandListAppendBarrier", "synchronizing a stream of levelzero:%u", s->dev->ordinal);
    if ((r = api->zeEventHostSynchronize(s->done, UINT64_MAX)) != ZE_RESULT_SUCCESS)
        return zdrv_fail(r, "zeEventHostSynchronize", "synchronizing a stream of levelzero:%u", s->dev->ordinal);
    s->busy = 0;
    return TRD_OK;
}

void zdrv_device_drain(struct zdrv_device *dev, const char *why)
{
    pthread_mutex_lock(&dev->streams_lock);
    for (struct zdrv_stream *s = dev->streams; s; s = s->next) {
        pthread_mutex_lock(&s->lock);
        trd_status_t st = zdrv_stream_wait(s);
        pthread_mutex_unlock(&s->lock);
        if (st != TRD_OK)
            trd_drv_log(TRD_LOG_WARN, "levelzero:%u: a stream failed to synchronize %s", dev->ordinal, why);
    }
    pthread_mutex_unlock(&dev->streams_lock);
}

void zdrv_stream_free(struct zdrv_stream *s)
{
    if (!s)
        return;
    struct zdrv_device *dev = s->dev;
    const struct zdrv_api *api = dev->api;
    pthread_mutex_lock(&dev->streams_lock);
    for (struct zdrv_stream **p = &dev->streams; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    pthread_mutex_unlock(&dev->streams_lock);
    /* The device must be done with the list and the scratch before they go. */
    pthread_mutex_lock(&s->lock);
    if (zdrv_stream_wait(s) != TRD_OK)
        trd_drv_log(TRD_LOG_WARN, "levelzero: destroying a stream that failed to synchronize");
    pthread_mutex_unlock(&s->lock);
    trd_arena_fini(&s->arena);
    api->zeEventDestroy(s->done);
    api->zeEventPoolDestroy(s->pool);
    if (s->owned)
        api->zeCommandListDestroy(s->list);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

trd_status_t zdrv_stream_create(void *device, void **out)
{
    struct zdrv_stream *s;
    trd_status_t st = zdrv_stream_new(device, NULL, 1, &s);
    if (st == TRD_OK)
        *out = s;
    return st;
}

/* A caller's ze_command_list_handle_t: it must be an immediate command list
 * of this device (trident appends to it and never executes it). */
trd_status_t zdrv_stream_wrap(void *device, void *native, void **out)
{
    if (!native)
        return trd_drv_error(TRD_ERR_INVALID_ARGUMENT,
                                "wrapping a stream: the native handle (an immediate ze_command_list_handle_t) is NULL");
    struct zdrv_stream *s;
    trd_status_t st = zdrv_stream_new(device, (ze_command_list_handle_t)native, 0, &s);
    if (st != TRD_OK)
        return st;
    *out = s;
    return TRD_OK;
}

void zdrv_stream_destroy(void *stream)
{
    zdrv_stream_free(stream);
}

trd_status_t zdrv_stream_sync(void *stream)
{
    struct zdrv_stream *s = stream;
    pthread_mutex_lock(&s->lock);
    /* the scratch blocks only work queued so far may use go once it is done (drivers/common/scratch.h) */
    trd_scratch_block_t *retired = trd_arena_reclaim_begin(&s->arena);
    trd_status_t st = zdrv_stream_wait(s);
    trd_arena_reclaim_end(&s->arena, retired, st == TRD_OK);
    pthread_mutex_unlock(&s->lock);
    return st;
}

void *zdrv_stream_native(void *stream)
{
    struct zdrv_stream *s = stream;
    atomic_store_explicit(&s->shared, 1, memory_order_relaxed); /* the caller may append to it from now on */
    return s->list;
}
