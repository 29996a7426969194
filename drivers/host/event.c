/* SPDX-License-Identifier: Apache-2.0 */
/* event.c: events: a recording completes when its stream's executor passes
 * it (at once on the NULL stream, whose work is synchronous), stamped with
 * the time and carrying the stream's failure. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "drivers/host/host.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void host_event_complete(struct host_event *e, trd_status_t failed, const char *failure)
{
    pthread_mutex_lock(&e->lock);
    e->stamp_ms = now_ms();
    e->completed++;
    e->failed = failed;
    snprintf(e->failure, sizeof e->failure, "%s", failure ? failure : "");
    pthread_cond_broadcast(&e->changed);
    pthread_mutex_unlock(&e->lock);
}

void host_event_release(struct host_event *e)
{
    if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
        return;
    pthread_cond_destroy(&e->changed);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

trd_status_t host_event_create(void *device, void **out)
{
    struct host_event *e = calloc(1, sizeof *e);
    if (!e)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    e->dev = device;
    atomic_init(&e->refs, 1);
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->changed, NULL);
    *out = e;
    return TRD_OK;
}

/* Records still queued keep the event alive (host_event_release). */
void host_event_destroy(void *event)
{
    if (event)
        host_event_release(event);
}

trd_status_t host_event_record(void *event, void *stream)
{
    struct host_event *e = event;
    pthread_mutex_lock(&e->lock);
    e->recorded++;
    pthread_mutex_unlock(&e->lock);
    if (!stream) {
        /* NULL-stream work has run by now (launches, copies and sets without a stream are synchronous):
         * the event completes here, which is how XLA's CPU handlers time launches */
        host_event_complete(e, TRD_OK, NULL);
        return TRD_OK;
    }
    struct host_task t = {.kind = TASK_EVENT, .event = e};
    return host_stream_push(stream, &t);
}

trd_status_t host_event_sync(void *event)
{
    struct host_event *e = event;
    pthread_mutex_lock(&e->lock);
    while (e->completed < e->recorded)
        pthread_cond_wait(&e->changed, &e->lock);
    trd_status_t st = e->failed;
    if (st != TRD_OK)
        trd_drv_error(st, "%s", e->failure);
    pthread_mutex_unlock(&e->lock);
    return st;
}

trd_status_t host_event_elapsed(void *start, void *end, double *ms)
{
    struct host_event *a = start, *b = end;
    double ta, tb;
    uint64_t ra, ca, rb, cb;
    pthread_mutex_lock(&a->lock);
    ta = a->stamp_ms;
    ra = a->recorded;
    ca = a->completed;
    pthread_mutex_unlock(&a->lock);
    pthread_mutex_lock(&b->lock);
    tb = b->stamp_ms;
    rb = b->recorded;
    cb = b->completed;
    pthread_mutex_unlock(&b->lock);
    if (ra == 0 || rb == 0)
        return trd_drv_error(TRD_ERR_STATE, "an event was never recorded");
    if (ca < ra || cb < rb)
        return trd_drv_error(TRD_ERR_STATE, "an event has not completed yet: synchronize it first");
    *ms = tb - ta;
    return TRD_OK;
}
