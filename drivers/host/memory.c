/* SPDX-License-Identifier: Apache-2.0 */
/* memory.c: the host device's memory: buffers between guard regions
 * (memory.h), and the driver's allocation, copies and fills over them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "drivers/common/arith.h"
#include "drivers/host/host.h"

/* The share of the process's memory-map entries guarded buffers may take (each takes up to three). */
#define MAP_SHARE 8

static size_t map_count_limit(void)
{
    long n = 65530; /* Linux's default */
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%ld", &n) != 1 || n <= 0)
            n = 65530;
        fclose(f);
    }
    return (size_t)n;
}

void host_memory_init(struct host_memory *mem, int64_t limit)
{
    memset(mem, 0, sizeof *mem);
    pthread_mutex_init(&mem->lock, NULL);
    long page = sysconf(_SC_PAGESIZE);
    mem->page = page > 0 ? (size_t)page : 4096;
    mem->limit = limit < 0 ? map_count_limit() / MAP_SHARE : (size_t)limit;
}

void host_memory_fini(struct host_memory *mem)
{
    for (size_t i = 0; i < mem->count; i++)
        munmap((void *)mem->bufs[i].map, mem->bufs[i].map_len);
    free(mem->bufs);
    pthread_mutex_destroy(&mem->lock);
}

/* The index of the last buffer whose mapping starts at or below addr, or count when none does. */
static size_t find_below(const struct host_memory *mem, uintptr_t addr)
{
    size_t lo = 0, hi = mem->count; /* answer in [lo - 1, hi) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mem->bufs[mid].map <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? mem->count : lo - 1;
}

/* Maps a guarded buffer of size bytes into *b; 0 with errno set on failure. The caller holds the lock. */
static int map_guarded(const struct host_memory *mem, uint64_t size, struct host_buffer *b)
{
    uint64_t aligned, pages, len;
    if (!trd_align_up_u64(size, HOST_BUFFER_ALIGN, &aligned) || !trd_align_up_u64(aligned, mem->page, &pages) ||
        !trd_add_u64(pages, 2 * (uint64_t)HOST_GUARD_BYTES, &len) || len > SIZE_MAX) {
        errno = ENOMEM;
        return 0;
    }
    /* the guards cost no commit charge (an inaccessible private mapping has none); making the pages writable
     * charges them, so memory the system cannot back fails here, as malloc would, not at first touch */
    char *map = mmap(NULL, (size_t)len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return 0;
    if (mprotect(map + HOST_GUARD_BYTES, (size_t)pages, PROT_READ | PROT_WRITE) != 0) {
        int e = errno;
        munmap(map, (size_t)len);
        errno = e;
        return 0;
    }
    b->map = (uintptr_t)map;
    b->map_len = (size_t)len;
    b->ptr = (uintptr_t)map + HOST_GUARD_BYTES + (size_t)(pages - aligned);
    b->size = size;
    return 1;
}

/* Adds a guarded buffer of size bytes to the registry: 1; 0 at the limit (the heap's turn); -1 when it cannot be
 * mapped (errno says why). */
static int alloc_guarded(struct host_memory *mem, uint64_t size, void **ptr)
{
    if (mem->count >= mem->limit)
        return 0;
    if (mem->count == mem->cap) {
        size_t cap = mem->cap ? 2 * mem->cap : 16;
        struct host_buffer *bufs = realloc(mem->bufs, cap * sizeof *bufs);
        if (!bufs)
            return -1;
        mem->bufs = bufs;
        mem->cap = cap;
    }
    struct host_buffer b;
    if (!map_guarded(mem, size, &b))
        return -1;
    size_t at = find_below(mem, b.map);
    at = at == mem->count ? 0 : at + 1;
    memmove(&mem->bufs[at + 1], &mem->bufs[at], (mem->count - at) * sizeof *mem->bufs);
    mem->bufs[at] = b;
    mem->count++;
    *ptr = (void *)b.ptr;
    return 1;
}

/* Says once that buffers now come from the heap, where they fit but could not be guarded. */
static void warn_unguarded(struct host_memory *mem, int guarded, int why, uint64_t size)
{
    pthread_mutex_lock(&mem->lock);
    if (!mem->warned && guarded == 0)
        trd_drv_log(TRD_LOG_WARN,
                    "host: %zu buffers between guard pages exist, the most at once ([driver.host] "
                    "guarded_buffers): more come from the heap, where a kernel's overrun is not caught",
                    mem->count);
    else if (!mem->warned)
        trd_drv_log(TRD_LOG_WARN,
                    "host: a buffer of %llu bytes between guard pages cannot be mapped (%s; %zu such buffers "
                    "exist): it comes from the heap, where a kernel's overrun is not caught",
                    (unsigned long long)size, strerror(why), mem->count);
    mem->warned = 1;
    pthread_mutex_unlock(&mem->lock);
}

trd_status_t host_memory_alloc(struct host_memory *mem, uint64_t size, void **ptr)
{
    pthread_mutex_lock(&mem->lock);
    int guarded = alloc_guarded(mem, size, ptr), why = errno;
    pthread_mutex_unlock(&mem->lock);
    if (guarded == 1)
        return TRD_OK;
    void *p = NULL;
    if (size > SIZE_MAX || posix_memalign(&p, HOST_BUFFER_ALIGN, (size_t)size) != 0)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "cannot allocate %llu bytes of host memory",
                             (unsigned long long)size);
    if (mem->limit)
        warn_unguarded(mem, guarded, why, size);
    *ptr = p;
    return TRD_OK;
}

void host_memory_free(struct host_memory *mem, void *ptr)
{
    pthread_mutex_lock(&mem->lock);
    size_t at = find_below(mem, (uintptr_t)ptr);
    struct host_buffer b = {0};
    if (at < mem->count && mem->bufs[at].ptr == (uintptr_t)ptr) {
        b = mem->bufs[at];
        memmove(&mem->bufs[at], &mem->bufs[at + 1], (mem->count - at - 1) * sizeof *mem->bufs);
        mem->count--;
    }
    pthread_mutex_unlock(&mem->lock);
    if (b.map)
        munmap((void *)b.map, b.map_len);
    else
        free(ptr);
}

/* Appends the pointer parameters whose value points into b ('x', 'out', or "parameter 2" when unnamed);
 * returns how many. */
static int name_params(const struct host_buffer *b, const struct host_pointer_param *params, uint32_t nparams,
                       void *const *args, char *out, size_t cap)
{
    int named = 0;
    for (uint32_t i = 0; i < nparams; i++) {
        uintptr_t v;
        memcpy(&v, args[params[i].index], sizeof v);
        if (v < b->ptr || v - b->ptr > b->size)
            continue;
        size_t n = strlen(out);
        if (params[i].name)
            snprintf(out + n, cap - n, "%s'%s'", named ? " and " : "", params[i].name);
        else
            snprintf(out + n, cap - n, "%sparameter %u", named ? " and " : "", params[i].index);
        named++;
    }
    return named;
}

void host_memory_describe(struct host_memory *mem, uintptr_t addr, const struct host_pointer_param *params,
                          uint32_t nparams, void *const *args, char *out, size_t cap)
{
    out[0] = '\0';
    pthread_mutex_lock(&mem->lock);
    size_t at = find_below(mem, addr);
    struct host_buffer b = {0};
    if (at < mem->count && addr - mem->bufs[at].map < mem->bufs[at].map_len)
        b = mem->bufs[at];
    pthread_mutex_unlock(&mem->lock);
    if (!b.map)
        return;
    char names[256] = "";
    int named = name_params(&b, params, nparams, args, names, sizeof names);
    char where[64];
    if (addr < b.ptr)
        snprintf(where, sizeof where, "%llu bytes before the start of", (unsigned long long)(b.ptr - addr));
    else if (addr - b.ptr >= b.size)
        snprintf(where, sizeof where, "%llu bytes past the end of", (unsigned long long)(addr - b.ptr - b.size));
    else
        snprintf(where, sizeof where, "inside");
    if (named)
        snprintf(out, cap, "%s buffer %s (%llu bytes at 0x%llx)", where, names, (unsigned long long)b.size,
                 (unsigned long long)b.ptr);
    else
        snprintf(out, cap, "%s a host buffer of %llu bytes at 0x%llx that no pointer argument of the launch points "
                 "into", where, (unsigned long long)b.size, (unsigned long long)b.ptr);
}

trd_status_t host_mem_alloc(void *device, uint64_t size, void **ptr)
{
    return host_memory_alloc(&((struct host_device *)device)->drv->mem, size, ptr);
}

/* Queued copies and launches may still use the memory: wait for them first,
 * as cudaFree and hipFree do. */
void host_mem_free(void *device, void *ptr)
{
    struct host_device *dev = device;
    host_device_drain(dev);
    host_memory_free(&dev->drv->mem, ptr);
}

trd_status_t host_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream)
{
    (void)device;
    (void)kind;
    if (!stream) {
        memmove(dst, src, (size_t)size);
        return TRD_OK;
    }
    struct host_task t = {.kind = TASK_COPY, .dst = dst, .src = src, .size = size};
    return host_stream_push(stream, &t);
}

trd_status_t host_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream)
{
    (void)device;
    if (!stream) {
        memset(dst, value, (size_t)size);
        return TRD_OK;
    }
    struct host_task t = {.kind = TASK_SET, .dst = dst, .value = value, .size = size};
    return host_stream_push(stream, &t);
}
