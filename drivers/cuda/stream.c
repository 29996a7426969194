/* SPDX-License-Identifier: Apache-2.0 */
/* stream.c: streams, owned or wrapping the caller's CUstream, and whether one is being captured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/cuda/cuda_driver.h"

static trd_status_t stream_new(struct cuda_device *d, CUstream native, void **out)
{
    struct cuda_stream *s = calloc(1, sizeof *s);
    if (!s)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    s->dev = d;
    trd_arena_init(&s->arena, &d->scratch_mem);
    if (native) {
        s->s = native;
        s->wrapped = 1;
    } else {
        struct cuda_ctx_scope sc;
        trd_status_t st = cuda_ctx_enter(d, &sc);
        if (st != TRD_OK) {
            free(s);
            return st;
        }
        CUresult r = d->api->cuStreamCreate(&s->s, CU_STREAM_NON_BLOCKING);
        cuda_ctx_leave(d, &sc);
        if (r != CUDA_SUCCESS) {
            trd_arena_fini(&s->arena);
            free(s);
            return cuda_error(d->api, r, "cuStreamCreate on cuda:%d", d->ordinal);
        }
    }
    *out = s;
    return TRD_OK;
}

trd_status_t cuda_stream_create(void *device, void **out)
{
    return stream_new(device, NULL, out);
}

trd_status_t cuda_stream_wrap(void *device, void *native, void **out)
{
    if (!native)
        return trd_drv_error(TRD_ERR_INVALID_ARGUMENT, "cannot wrap the NULL (legacy default) CUstream: "
                                                          "pass a stream, or launch with native_stream NULL");
    return stream_new(device, native, out);
}

void cuda_stream_destroy(void *stream)
{
    struct cuda_stream *s = stream;
    if (!s)
        return;
    struct cuda_device *d = s->dev;
    struct cuda_ctx_scope sc;
    if (cuda_ctx_enter(d, &sc) == TRD_OK) {
        /* queued work (a wrapped stream's too: trident.h's promise) may still use the scratch blocks */
        d->api->cuStreamSynchronize(s->s);
        trd_arena_fini(&s->arena);
        if (!s->wrapped)
            d->api->cuStreamDestroy(s->s);
        cuda_ctx_leave(d, &sc);
    }
    free(s);
}

trd_status_t cuda_stream_sync(void *stream)
{
    struct cuda_stream *s = stream;
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(s->dev, &sc);
    if (st != TRD_OK)
        return st;
    /* the scratch blocks only work queued so far may use go once it is done (drivers/common/scratch.h) */
    trd_scratch_block_t *retired = trd_arena_reclaim_begin(&s->arena);
    CUresult r = s->dev->api->cuStreamSynchronize(s->s);
    trd_arena_reclaim_end(&s->arena, retired, r == CUDA_SUCCESS);
    cuda_ctx_leave(s->dev, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(s->dev->api, r, "cuStreamSynchronize on cuda:%d", s->dev->ordinal);
    return TRD_OK;
}

void *cuda_stream_native(void *stream)
{
    return ((struct cuda_stream *)stream)->s;
}

trd_status_t cuda_stream_capturing(void *stream, int32_t *capturing)
{
    struct cuda_stream *s = stream;
    const struct cuda_api *api = s->dev->api;
    if (!api->cuStreamIsCapturing)
        return trd_drv_error(TRD_ERR_UNSUPPORTED, "this libcuda has no cuStreamIsCapturing");
    CUstreamCaptureStatus status;
    CUresult r = api->cuStreamIsCapturing(s->s, &status);
    if (r != CUDA_SUCCESS)
        return cuda_error(api, r, "cuStreamIsCapturing on cuda:%d", s->dev->ordinal);
    /* an invalidated capture is still a capture: waiting on the stream would fail the same way */
    *capturing = status != CU_STREAM_CAPTURE_STATUS_NONE;
    return TRD_OK;
}
