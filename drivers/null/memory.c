/* SPDX-License-Identifier: Apache-2.0 */
/* memory.c: device memory and copies. The null device's memory is host
 * memory, so that buffers work; a real driver calls its vendor's allocator
 * and copies (stream NULL: synchronous; else queued on the stream). */
#include <stdlib.h>
#include <string.h>

#include "drivers/null/null.h"

trd_status_t null_mem_alloc(void *device, uint64_t size, void **ptr)
{
    (void)device;
    void *p = malloc(size ? (size_t)size : 1);
    if (!p)
        return null_fail(NULL_ERROR_OUT_OF_MEMORY, "null: cannot allocate %llu bytes", (unsigned long long)size);
    *ptr = p;
    return TRD_OK;
}

void null_mem_free(void *device, void *ptr)
{
    (void)device;
    free(ptr);
}

trd_status_t null_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream)
{
    (void)device;
    (void)kind;
    (void)stream;
    memmove(dst, src, (size_t)size);
    return TRD_OK;
}

trd_status_t null_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream)
{
    (void)device;
    (void)stream;
    memset(dst, value, (size_t)size);
    return TRD_OK;
}
