/* SPDX-License-Identifier: Apache-2.0 */
/* run_time.c: `trident run`'s launches: warm-ups, then timed launches, each
 * between two events of its stream (the device's own clock), the stream
 * synchronized after each so that one launch's time is not another's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/run.h"

/* The outputs as they are now, into the host copies. */
static int read_back(const struct run_buffers *b)
{
    for (uint32_t i = 0; i < b->n; i++)
        if (b->bufs[i] && trd_buffer_read(b->bufs[i], 0, b->result[i], b->bytes[i], NULL) != TRD_OK)
            return cli_fail("reading argument %u back", i);
    return 0;
}

int run_launches(trd_kernel_t *k, trd_device_t *dev, const trd_launch_t *launch, uint64_t warmup, uint64_t repeat,
                 int after_last, const struct run_buffers *b, double *times)
{
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    trd_device_props_t dp = {.struct_size = sizeof dp};
    trd_kernel_get_info(k, &ki);
    trd_device_get_props(dev, &dp);
    trd_stream_t *s = NULL;
    trd_event_t *e0 = NULL, *e1 = NULL;
    int rc = CLI_FAIL;
    if (trd_stream_create(dev, &s) != TRD_OK || trd_event_create(dev, &e0) != TRD_OK ||
        trd_event_create(dev, &e1) != TRD_OK) {
        cli_fail("a stream and events on %s", dp.uri);
        goto done;
    }
    trd_launch_t l = *launch;
    l.stream = s;
    l.device = NULL;
    l.native_stream = NULL;
    for (uint64_t r = 0; r < warmup + repeat; r++) {
        int timed = r >= warmup;
        if ((timed && trd_event_record(e0, s) != TRD_OK) || trd_kernel_launch(k, &l) != TRD_OK ||
            (timed && trd_event_record(e1, s) != TRD_OK)) {
            cli_error();
            goto done;
        }
        /* a failure of the queued launch (a kernel's fault) is reported here, naming the kernel */
        if (trd_stream_synchronize(s) != TRD_OK) {
            cli_fail("running '%s' on %s", ki.name, dp.uri);
            goto done;
        }
        if (timed && trd_event_elapsed(e0, e1, &times[r - warmup]) != TRD_OK) {
            cli_fail("timing '%s' on %s", ki.name, dp.uri);
            goto done;
        }
        if (r == (after_last ? warmup + repeat - 1 : 0) && read_back(b))
            goto done;
    }
    rc = 0;
done:
    trd_event_destroy(e0);
    trd_event_destroy(e1);
    trd_stream_destroy(s);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void run_stats_of(double *times, uint64_t n, struct run_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (n == 0)
        return;
    double sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += times[i];
    s->mean = sum / (double)n;
    double sq = 0;
    for (uint64_t i = 0; i < n; i++)
        sq += (times[i] - s->mean) * (times[i] - s->mean);
    s->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
    qsort(times, n, sizeof *times, cmp_double);
    s->min = times[0];
    s->max = times[n - 1];
    s->median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
}
