/* SPDX-License-Identifier: Apache-2.0 */
/* event.c: events. Work on the null device completes at once, so an event
 * records when it was recorded (CLOCK_MONOTONIC); a real driver records its
 * vendor's event on the stream. */
#include <stdlib.h>
#include <time.h>

#include "drivers/null/null.h"

struct null_event {
    double ms;
};

trd_status_t null_event_create(void *device, void **out)
{
    (void)device;
    struct null_event *e = calloc(1, sizeof *e);
    if (!e)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "null: out of memory");
    *out = e;
    return TRD_OK;
}

void null_event_destroy(void *event)
{
    free(event);
}

trd_status_t null_event_record(void *event, void *stream)
{
    (void)stream;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    ((struct null_event *)event)->ms = (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
    return TRD_OK;
}

trd_status_t null_event_sync(void *event)
{
    (void)event;
    return TRD_OK;
}

trd_status_t null_event_elapsed(void *start, void *end, double *ms)
{
    *ms = ((struct null_event *)end)->ms - ((struct null_event *)start)->ms;
    return TRD_OK;
}
