/* SPDX-License-Identifier: Apache-2.0 */
/* stream.c: streams. Work on a null stream runs at once, so a stream is only
 * a handle; a real driver creates, wraps (the caller's native stream) and
 * synchronizes its vendor's queue, and keeps a per-stream scratch arena. */
#include <stdlib.h>

#include "drivers/null/null.h"

struct null_stream {
    struct null_device *dev;
    void *native; /* the caller's own, for stream_wrap; else NULL */
};

trd_status_t null_stream_create(void *device, void **out)
{
    return null_stream_wrap(device, NULL, out);
}

trd_status_t null_stream_wrap(void *device, void *native, void **out)
{
    struct null_stream *s = calloc(1, sizeof *s);
    if (!s)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "null: out of memory");
    s->dev = device;
    s->native = native;
    *out = s;
    return TRD_OK;
}

void null_stream_destroy(void *stream)
{
    free(stream);
}

trd_status_t null_stream_sync(void *stream)
{
    (void)stream;
    return TRD_OK;
}

void *null_stream_native(void *stream)
{
    struct null_stream *s = stream;
    return s->native ? s->native : s;
}
