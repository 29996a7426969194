/* SPDX-License-Identifier: Apache-2.0 */
/* scratch.h: the memory behind Triton's two scratch pointers, for every GPU
 * driver: one arena per stream, with one lifetime policy.
 *
 * How many bytes a launch needs is the core's figure (trd_driver_launch_t's
 * global/profile_scratch_bytes, computed once and overflow-checked). Where
 * the caller passed no scratch, the launch takes it from the arena of its
 * stream: a trident stream (its own or a wrapped native one) has its own; a
 * native stream launched on unwrapped gets one of the device's
 * trd_arena_set_t (claimed by its handle on first use, kept until the device
 * closes, after its queued work: a handle may name another stream later, so
 * nothing of it is freed before). A per-thread default stream, another
 * stream on each thread, gets none.
 *
 * Lifetime policy:
 *   - An arena keeps one current block. Launches that fit reuse it: one
 *     atomic load, no lock, no allocation. A launch that needs more replaces
 *     it (at least twice as large, a multiple of 64 KiB, under the arena's
 *     lock) and the old block is retired: kernels queued earlier may still
 *     use it.
 *   - Retired blocks are freed after trident synchronizes the stream
 *     (trd_arena_reclaim_begin before the vendor's synchronize, _end after)
 *     unless a launch was between trd_scratch_get and trd_arena_release at
 *     that moment (it may have read a retired block); they wait then for the
 *     next synchronize. Growth doubles, so what waits is less than what is
 *     current.
 *   - Everything goes at trd_arena_fini, once the stream's work is done
 *     (stream destroy after its synchronize, wrapped streams too; device
 *     close for the set, after draining the device's work).
 *
 * Layout of one launch's scratch: global at the block's base, profile after
 * it at its alignment (never the same memory: a kernel with both would
 * overwrite its own scratch); the base aligned to both alignments. */
#ifndef TRD_DRIVERS_COMMON_SCRATCH_H
#define TRD_DRIVERS_COMMON_SCRATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <trident/driver.h>

#include "drivers/common/slot_map.h"

/* What vendor allocators guarantee (cuMemAlloc, hipMalloc; Level Zero is asked for it). */
#define TRD_SCRATCH_BASE_ALIGN 256
/* Blocks are multiples of this. */
#define TRD_SCRATCH_GRAIN ((uint64_t)1 << 16)
/* More than this for one launch is surely a wrong size: refused with the figures. */
#define TRD_SCRATCH_MAX ((uint64_t)1 << 44)

/* The driver's two vendor calls for an arena's device memory, shaped as its
 * ops' mem_alloc and mem_free. alloc: size bytes aligned to
 * TRD_SCRATCH_BASE_ALIGN, a failure described with trd_drv_error. free: at
 * once, without waiting for queued work (the policy above has), and safe
 * under a stream's lock. */
typedef struct trd_scratch_mem {
    trd_status_t (*alloc)(void *device, uint64_t size, void **ptr);
    void (*free)(void *device, void *ptr);
    void *device;
} trd_scratch_mem_t;

/* A kernel's scratch as its descriptor gave it (trd_scratch_spec_from). */
typedef struct trd_scratch_spec {
    uint64_t size[2];   /* per program: [0] global, [1] profile; 0 where unused */
    uint64_t align[2];  /* at least 1 */
    const char *label;  /* the module's, for messages: "kernel 'add' on cuda:0" */
} trd_scratch_spec_t;

typedef struct trd_scratch_block {
    uint64_t addr, size;
    struct trd_scratch_block *older;
} trd_scratch_block_t;

typedef struct trd_arena {
    _Atomic(trd_scratch_block_t *) current;
    atomic_uint users;       /* launches between trd_scratch_get and trd_arena_release */
    pthread_mutex_t lock;    /* growth and reclaim only */
    trd_scratch_block_t *retired;
    const trd_scratch_mem_t *mem;
} trd_arena_t;

/* The arenas of native streams launched on unwrapped, keyed by the vendor's handle. */
typedef struct trd_arena_set {
    trd_slot_map_t map;
    trd_arena_t arena[TRD_SLOT_MAP_SLOTS];
} trd_arena_set_t;

void trd_scratch_spec_from(trd_scratch_spec_t *s, const trd_driver_module_desc_t *d, const char *label);

/* Whether launch l needs arena memory: the kernel uses a scratch the caller did not pass. */
static inline int trd_scratch_wanted(const trd_scratch_spec_t *s, const trd_driver_launch_t *l)
{
    return (s->size[0] && !l->global_scratch) || (s->size[1] && !l->profile_scratch);
}

/* TRD_OK when the core's launch struct carries the scratch byte counts (a
 * version-2 core's always does); else TRD_ERR_VERSION, naming label. */
trd_status_t trd_scratch_bytes_given(const trd_driver_launch_t *l, const char *label);

/* The launch path. ptr[0] global, ptr[1] profile: the caller's pointer where
 * given, else arena memory (a grown where too small), 0 where the kernel uses
 * none. a NULL: the stream has no arena (every slot of the set is taken, or
 * a per-thread default stream), an error naming the way out. On TRD_OK the
 * caller calls trd_arena_release(*held) once the kernel is queued or has
 * failed to be (NULL when no arena was used). Outputs are written only on
 * success. */
trd_status_t trd_scratch_get(trd_arena_t *a, const trd_scratch_spec_t *s, const trd_driver_launch_t *l,
                             uint64_t ptr[2], trd_arena_t **held);
static inline void trd_arena_release(trd_arena_t *held)
{
    if (held)
        atomic_fetch_sub(&held->users, 1);
}

void trd_arena_init(trd_arena_t *a, const trd_scratch_mem_t *mem);
/* Before the stream's synchronize: the retired blocks that only work queued
 * so far may use, detached (NULL when a launch may hold one). */
trd_scratch_block_t *trd_arena_reclaim_begin(trd_arena_t *a);
/* After it: synced, they are freed; else they are retired again. */
void trd_arena_reclaim_end(trd_arena_t *a, trd_scratch_block_t *blocks, int synced);
/* The stream's work is done: every block freed. */
void trd_arena_fini(trd_arena_t *a);

void trd_arena_set_init(trd_arena_set_t *s, const trd_scratch_mem_t *mem);
/* The arena of native handle h (NULL, a default stream, is a handle too), claimed on first use; NULL when full. */
trd_arena_t *trd_arena_set_find(trd_arena_set_t *s, const void *h);
void trd_arena_set_fini(trd_arena_set_t *s);

#endif /* TRD_DRIVERS_COMMON_SCRATCH_H */
