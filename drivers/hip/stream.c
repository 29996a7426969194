/* SPDX-License-Identifier: Apache-2.0 */
/* stream.c: streams (trident's own, non-blocking, or a caller's wrapped). */
#include <stdlib.h>

#include "drivers/hip/hip.h"

trd_status_t hip_stream_create(void *device, void **out)
{
    struct hip_device *dev = device;
    const struct hip_api *api = &dev->drv->api;
    struct hip_stream *s = calloc(1, sizeof *s);
    if (!s)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    int prev;
    trd_status_t st = hip_device_enter(dev, &prev);
    if (st != TRD_OK) {
        free(s);
        return st;
    }
    /* Non-blocking: no implicit ordering with the default stream. */
    hipError_t e = api->hipStreamCreateWithFlags(&s->handle, HIP_STREAM_NON_BLOCKING);
    hip_device_leave(dev, prev);
    if (e != HIP_SUCCESS) {
        free(s);
        return hip_fail(api, e, "hipStreamCreateWithFlags(hipStreamNonBlocking) failed");
    }
    s->dev = dev;
    s->owned = 1;
    trd_arena_init(&s->arena, &dev->scratch_mem);
    *out = s;
    return TRD_OK;
}

trd_status_t hip_stream_wrap(void *device, void *native, void **out)
{
    struct hip_stream *s = calloc(1, sizeof *s);
    if (!s)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    s->dev = device;
    s->handle = native;
    s->owned = 0;
    trd_arena_init(&s->arena, &s->dev->scratch_mem);
    *out = s;
    return TRD_OK;
}

/* hipStreamSynchronize; a wrapped NULL stream is the current device's default stream. */
static trd_status_t hip_stream_wait(struct hip_stream *s, hipError_t *e)
{
    int prev = -1;
    trd_status_t st = s->handle ? TRD_OK : hip_device_enter(s->dev, &prev);
    *e = st == TRD_OK ? s->dev->drv->api.hipStreamSynchronize(s->handle) : HIP_SUCCESS;
    if (!s->handle && st == TRD_OK)
        hip_device_leave(s->dev, prev);
    return st;
}

void hip_stream_destroy(void *stream)
{
    struct hip_stream *s = stream;
    if (!s)
        return;
    const struct hip_api *api = &s->dev->drv->api;
    /* queued work (a wrapped stream's too: trident.h's promise) may still use the arena's blocks */
    hipError_t e;
    if (hip_stream_wait(s, &e) == TRD_OK && e != HIP_SUCCESS)
        hip_log_failure(s->dev, e, "hipStreamSynchronize before destroying a stream");
    trd_arena_fini(&s->arena);
    if (s->owned && (e = api->hipStreamDestroy(s->handle)) != HIP_SUCCESS)
        hip_log_failure(s->dev, e, "hipStreamDestroy");
    free(s);
}

trd_status_t hip_stream_sync(void *stream)
{
    struct hip_stream *s = stream;
    /* the scratch blocks only work queued so far may use go once it is done (drivers/common/scratch.h) */
    trd_scratch_block_t *retired = trd_arena_reclaim_begin(&s->arena);
    hipError_t e;
    trd_status_t st = hip_stream_wait(s, &e);
    if (st == TRD_OK && e != HIP_SUCCESS)
        st = hip_fail(&s->dev->drv->api, e, "hipStreamSynchronize on %s failed", s->dev->uri);
    trd_arena_reclaim_end(&s->arena, retired, st == TRD_OK);
    return st;
}

void *hip_stream_native(void *stream)
{
    return ((struct hip_stream *)stream)->handle;
}

trd_status_t hip_stream_capturing(void *stream, int32_t *capturing)
{
    struct hip_stream *s = stream;
    const struct hip_api *api = &s->dev->drv->api;
    if (!api->hipStreamIsCapturing)
        return trd_drv_error(TRD_ERR_UNSUPPORTED, "this HIP runtime has no hipStreamIsCapturing");
    int status = HIP_STREAM_CAPTURE_NONE;
    hipError_t e = api->hipStreamIsCapturing(s->handle, &status);
    if (e != HIP_SUCCESS)
        return hip_fail(api, e, "hipStreamIsCapturing on %s failed", s->dev->uri);
    /* an invalidated capture is still a capture: waiting on the stream would fail the same way */
    *capturing = status != HIP_STREAM_CAPTURE_NONE;
    return TRD_OK;
}
