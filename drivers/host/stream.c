/* SPDX-License-Identifier: Apache-2.0 */
/* stream.c: in-order queues: a ring of preallocated tasks run by one
 * executor thread per stream, so enqueueing allocates nothing.
 *
 * A queued task holds a reference on the kernel or event it uses, so that
 * either may be destroyed while the task waits (trident.h's lifetime rules).
 * A task that fails makes the stream skip what follows until the failure is
 * reported by host_stream_sync (trident.h's rule for errors of queued work). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/host/host.h"

/* Runs one task; on failure records why in the stream (the first failure
 * wins). The stream's lock is not held; only the executor writes `failed`
 * while work is queued, and host_stream_sync reads it after the work ran. */
static void run_task(struct host_stream *s, struct host_task *t, trd_status_t failed)
{
    switch (t->kind) {
    case TASK_LAUNCH:
        if (failed == TRD_OK) {
            char why[HOST_MESSAGE_BYTES];
            trd_status_t st =
                host_execute(t->mod, t->grid, t->params, t->gscratch, t->pscratch, t->gbytes, t->pbytes, why);
            if (st != TRD_OK) {
                pthread_mutex_lock(&s->lock);
                s->failed = st;
                host_fail(s->failure, sizeof s->failure, st, "a queued launch of %s on host:%u failed: %s",
                          t->mod->label, s->dev->ordinal, why);
                pthread_mutex_unlock(&s->lock);
            }
        }
        host_module_release(t->mod);
        break;
    case TASK_COPY:
        if (failed == TRD_OK)
            memmove(t->dst, t->src, (size_t)t->size);
        break;
    case TASK_SET:
        if (failed == TRD_OK)
            memset(t->dst, t->value, (size_t)t->size);
        break;
    case TASK_EVENT:
        pthread_mutex_lock(&s->lock);
        host_event_complete(t->event, s->failed, s->failed == TRD_OK ? NULL : s->failure);
        pthread_mutex_unlock(&s->lock);
        host_event_release(t->event);
        break;
    default:
        break;
    }
}

static void *executor(void *arg)
{
    struct host_stream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->stop && s->tail == s->head)
            pthread_cond_wait(&s->changed, &s->lock);
        if (s->tail == s->head && s->stop)
            break;
        struct host_task *t = &s->ring[s->tail % HOST_RING];
        trd_status_t failed = s->failed;
        pthread_mutex_unlock(&s->lock);
        run_task(s, t, failed);
        pthread_mutex_lock(&s->lock);
        s->tail++;
        pthread_cond_broadcast(&s->changed);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

trd_status_t host_stream_create(void *device, void **out)
{
    struct host_device *dev = device;
    struct host_stream *s = calloc(1, sizeof *s);
    if (!s)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    s->ring = calloc(HOST_RING, sizeof *s->ring);
    if (!s->ring) {
        free(s);
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory for a host stream");
    }
    s->dev = dev;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
    if (pthread_create(&s->thread, NULL, executor, s) != 0) {
        pthread_cond_destroy(&s->changed);
        pthread_mutex_destroy(&s->lock);
        free(s->ring);
        free(s);
        return trd_drv_error(TRD_ERR_DEVICE, "cannot start a host stream's thread");
    }
    pthread_mutex_lock(&dev->streams_lock);
    s->next = dev->streams;
    dev->streams = s;
    pthread_mutex_unlock(&dev->streams_lock);
    *out = s;
    return TRD_OK;
}

void host_stream_destroy(void *stream)
{
    struct host_stream *s = stream;
    if (!s)
        return;
    struct host_device *dev = s->dev;
    pthread_mutex_lock(&dev->streams_lock);
    for (struct host_stream **p = &dev->streams; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    pthread_mutex_unlock(&dev->streams_lock);
    pthread_mutex_lock(&s->lock);
    s->stop = 1; /* the executor drains what is queued first */
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->changed);
    pthread_mutex_destroy(&s->lock);
    free(s->ring);
    free(s);
}

/* Waits until the executor has passed what was queued when called (work
 * other threads queue meanwhile is not waited for); the caller holds s->lock. */
static void drain_locked(struct host_stream *s)
{
    uint64_t target = s->head;
    while (s->tail < target)
        pthread_cond_wait(&s->changed, &s->lock);
}

trd_status_t host_stream_sync(void *stream)
{
    struct host_stream *s = stream;
    pthread_mutex_lock(&s->lock);
    drain_locked(s);
    trd_status_t st = s->failed;
    if (st != TRD_OK) {
        /* reported once: work queued from now on runs again */
        trd_drv_error(st, "%s", s->failure);
        s->failed = TRD_OK;
        s->failure[0] = '\0';
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

void host_device_drain(struct host_device *dev)
{
    pthread_mutex_lock(&dev->streams_lock);
    for (struct host_stream *s = dev->streams; s; s = s->next) {
        pthread_mutex_lock(&s->lock);
        drain_locked(s);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&dev->streams_lock);
}

trd_status_t host_stream_wrap(void *device, void *native, void **out)
{
    (void)device;
    (void)native;
    (void)out;
    return trd_drv_error(TRD_ERR_UNSUPPORTED, "host streams are trident's own: there is no foreign one to wrap");
}

void *host_stream_native(void *stream)
{
    return stream;
}

/* Reserves the next slot (waiting while the ring is full) and fills it. */
static struct host_task *reserve(struct host_stream *s)
{
    pthread_mutex_lock(&s->lock);
    while (s->head - s->tail >= HOST_RING)
        pthread_cond_wait(&s->changed, &s->lock);
    return &s->ring[s->head % HOST_RING];
}

static void commit(struct host_stream *s)
{
    s->head++;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}

trd_status_t host_stream_push(struct host_stream *s, const struct host_task *t)
{
    struct host_task *slot = reserve(s);
    slot->kind = t->kind;
    slot->dst = t->dst;
    slot->src = t->src;
    slot->size = t->size;
    slot->value = t->value;
    slot->event = t->event;
    if (t->kind == TASK_EVENT)
        atomic_fetch_add_explicit(&t->event->refs, 1, memory_order_relaxed);
    commit(s);
    return TRD_OK;
}

trd_status_t host_stream_launch(struct host_stream *s, struct host_module *m, const trd_driver_launch_t *l,
                                const uint64_t scratch[2])
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < l->num_params; i++)
        bytes += (l->param_sizes[i] + 7u) & ~7u;
    if (l->num_params > HOST_TASK_PARAMS || bytes > HOST_TASK_BYTES) {
        /* too large for a ring slot: run it in order, synchronously (skipped, as queued work is, while the
         * stream has a failure to report) */
        pthread_mutex_lock(&s->lock);
        drain_locked(s);
        trd_status_t failed = s->failed;
        pthread_mutex_unlock(&s->lock);
        return failed != TRD_OK ? TRD_OK : host_launch_now(m, l, scratch);
    }
    struct host_task *t = reserve(s);
    t->kind = TASK_LAUNCH;
    t->mod = m;
    memcpy(t->grid, l->grid, sizeof t->grid);
    t->nparams = l->num_params;
    uint64_t off = 0;
    for (uint32_t i = 0; i < l->num_params; i++) {
        memcpy(t->storage + off, l->params[i], l->param_sizes[i]);
        t->params[i] = t->storage + off;
        off += (l->param_sizes[i] + 7u) & ~7u;
    }
    t->gscratch = l->global_scratch;
    t->pscratch = l->profile_scratch;
    t->gbytes = scratch[0];
    t->pbytes = scratch[1];
    atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    commit(s);
    return TRD_OK;
}
