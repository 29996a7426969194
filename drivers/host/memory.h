/* SPDX-License-Identifier: Apache-2.0 */
/* memory.h: the host device's buffers, each between guard regions.
 *
 * Host kernels share the process's memory: a kernel writing past a buffer
 * taken from the heap overwrites whatever the heap holds next (another
 * buffer, malloc's own records, a stream's lock) and the process dies later,
 * elsewhere, or hangs. So a buffer trident allocates for the host device is
 * its own mapping: HOST_GUARD_BYTES of PROT_NONE address space on either
 * side of its pages, its end against the guard after it. A read or write past
 * either end faults at once, and fault.h turns the fault into the launch's
 * error, which names the buffer (host_memory_describe).
 *
 * The start is HOST_BUFFER_ALIGN-byte aligned, what Triton assumes of a
 * pointer argument; alignment wins over the end, so a size that is not a
 * multiple of it leaves up to HOST_BUFFER_ALIGN - 1 bytes of the buffer's own
 * page between its end and the guard (an access there is not caught, and
 * harms nothing else). The guards are address space only: a buffer costs its
 * size rounded up to whole pages, and up to three entries of the process's
 * memory map (vm.max_map_count). Beyond `limit` buffers at once (by default
 * an eighth of that count, leaving the rest of the process its mappings), or
 * where the mapping fails, buffers come from the heap without guards (logged
 * once). Allocation and freeing take the registry's lock; launches do not. */
#ifndef TRD_DRIVER_HOST_MEMORY_H
#define TRD_DRIVER_HOST_MEMORY_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <trident/trident.h>

#define HOST_BUFFER_ALIGN 16
#define HOST_GUARD_BYTES ((size_t)1 << 20)

struct host_buffer {
    uintptr_t map;      /* the mapping: guard, pages, guard */
    size_t map_len;
    uintptr_t ptr;      /* what the caller gets */
    uint64_t size;
};

struct host_memory {
    pthread_mutex_t lock;
    struct host_buffer *bufs;   /* the guarded buffers, by address */
    size_t count, cap;
    size_t page;
    size_t limit;               /* guarded buffers at once */
    int warned;                 /* the fallback to the heap was logged */
};

/* A launch parameter that takes a pointer, for naming a buffer. */
struct host_pointer_param {
    uint32_t index;             /* among the launch parameters */
    char *name;                 /* NULL: the signature names none */
};

/* limit < 0: an eighth of vm.max_map_count; 0: no guards. */
void host_memory_init(struct host_memory *mem, int64_t limit);
/* Unmaps the buffers still allocated. */
void host_memory_fini(struct host_memory *mem);
trd_status_t host_memory_alloc(struct host_memory *mem, uint64_t size, void **ptr);
void host_memory_free(struct host_memory *mem, void *ptr);

/* Where addr lies when a guarded buffer's mapping holds it: "N bytes past the end of buffer 'out' (parameter 2:
 * 16 bytes at 0x...)", naming the pointer parameters of the launch (args) that point into the buffer. Writes ""
 * when no guarded buffer holds addr. Not for the launch path: it takes the registry's lock. */
void host_memory_describe(struct host_memory *mem, uintptr_t addr, const struct host_pointer_param *params,
                          uint32_t nparams, void *const *args, char *out, size_t cap);

#endif
