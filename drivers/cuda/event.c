/* SPDX-License-Identifier: Apache-2.0 */
/* event.c: events: record, synchronize, elapsed time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/cuda/cuda_driver.h"

struct cuda_event {
    struct cuda_device *dev;
    CUevent e;
};

trd_status_t cuda_event_create(void *device, void **out)
{
    struct cuda_device *d = device;
    struct cuda_event *e = calloc(1, sizeof *e);
    if (!e)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(d, &sc);
    if (st != TRD_OK) {
        free(e);
        return st;
    }
    CUresult r = d->api->cuEventCreate(&e->e, CU_EVENT_DEFAULT);
    cuda_ctx_leave(d, &sc);
    if (r != CUDA_SUCCESS) {
        free(e);
        return cuda_error(d->api, r, "cuEventCreate on cuda:%d", d->ordinal);
    }
    e->dev = d;
    *out = e;
    return TRD_OK;
}

void cuda_event_destroy(void *event)
{
    struct cuda_event *e = event;
    if (!e)
        return;
    struct cuda_ctx_scope sc;
    if (cuda_ctx_enter(e->dev, &sc) == TRD_OK) {
        e->dev->api->cuEventDestroy(e->e);
        cuda_ctx_leave(e->dev, &sc);
    }
    free(e);
}

trd_status_t cuda_event_record(void *event, void *stream)
{
    struct cuda_event *e = event;
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(e->dev, &sc);
    if (st != TRD_OK)
        return st;
    CUresult r = e->dev->api->cuEventRecord(e->e, cuda_stream_of(stream));
    cuda_ctx_leave(e->dev, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(e->dev->api, r, "cuEventRecord on cuda:%d", e->dev->ordinal);
    return TRD_OK;
}

trd_status_t cuda_event_sync(void *event)
{
    struct cuda_event *e = event;
    CUresult r = e->dev->api->cuEventSynchronize(e->e);
    if (r != CUDA_SUCCESS)
        return cuda_error(e->dev->api, r, "cuEventSynchronize on cuda:%d", e->dev->ordinal);
    return TRD_OK;
}

trd_status_t cuda_event_elapsed(void *start, void *end, double *ms)
{
    struct cuda_event *a = start, *b = end;
    float v = 0;
    CUresult r = a->dev->api->cuEventElapsedTime(&v, a->e, b->e);
    if (r != CUDA_SUCCESS)
        return cuda_error(a->dev->api, r, "cuEventElapsedTime on cuda:%d", a->dev->ordinal);
    *ms = v;
    return TRD_OK;
}
