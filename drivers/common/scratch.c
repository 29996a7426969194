/* SPDX-License-Identifier: Apache-2.0 */
/* scratch.c: the per-stream scratch arenas (scratch.h). */
#include <stdlib.h>

#include "drivers/common/arith.h"
#include "drivers/common/scratch.h"
#include "drivers/common/services.h"

/* A version-2 core always fills the byte counts (the module refuses older cores). */
trd_status_t trd_scratch_bytes_given(const trd_driver_launch_t *l, const char *label)
{
    if (l->struct_size >= offsetof(trd_driver_launch_t, profile_scratch_bytes) + sizeof(uint64_t))
        return TRD_OK;
    return trd_drv_error(TRD_ERR_VERSION,
                         "%s: the core's launch struct (%u bytes) has no scratch byte counts: a driver of ABI "
                         "version %d needs a core of that version",
                         label, l->struct_size, TRD_DRV_ABI_VERSION);
}

void trd_scratch_spec_from(trd_scratch_spec_t *s, const trd_driver_module_desc_t *d, const char *label)
{
    s->size[0] = d->global_scratch_size;
    s->size[1] = d->profile_scratch_size;
    s->align[0] = d->global_scratch_align ? d->global_scratch_align : 1;
    s->align[1] = d->profile_scratch_align ? d->profile_scratch_align : 1;
    s->label = label;
}

void trd_arena_init(trd_arena_t *a, const trd_scratch_mem_t *mem)
{
    atomic_init(&a->current, NULL);
    atomic_init(&a->users, 0);
    pthread_mutex_init(&a->lock, NULL);
    a->retired = NULL;
    a->mem = mem;
}

static void blocks_free(const trd_scratch_mem_t *mem, trd_scratch_block_t *b)
{
    while (b) {
        trd_scratch_block_t *older = b->older;
        mem->free(mem->device, (void *)(uintptr_t)b->addr);
        free(b);
        b = older;
    }
}

/* Appends list (oldest last) to the retired ones; the caller holds the lock. */
static void retire_locked(trd_arena_t *a, trd_scratch_block_t *list)
{
    if (!list)
        return;
    trd_scratch_block_t *tail = list;
    while (tail->older)
        tail = tail->older;
    tail->older = a->retired;
    a->retired = list;
}

/* The slow path: a block of at least need bytes becomes current (another
 * thread may have grown the arena meanwhile: then its block). */
static trd_status_t arena_grow(trd_arena_t *a, uint64_t need, trd_scratch_block_t **out)
{
    trd_status_t st = TRD_OK;
    pthread_mutex_lock(&a->lock);
    trd_scratch_block_t *b = atomic_load(&a->current);
    if (!b || b->size < need) {
        /* need <= TRD_SCRATCH_MAX, every block < 2 x that: none of this overflows */
        uint64_t size = b && 2 * b->size > need ? 2 * b->size : need;
        (void)trd_align_up_u64(size, TRD_SCRATCH_GRAIN, &size);
        trd_scratch_block_t *nb = malloc(sizeof *nb);
        void *p = NULL;
        if (!nb)
            st = trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
        else if ((st = a->mem->alloc(a->mem->device, size, &p)) != TRD_OK)
            free(nb);
        if (st == TRD_OK) {
            nb->addr = (uint64_t)(uintptr_t)p;
            nb->size = size;
            nb->older = NULL;
            if (b) /* kernels queued earlier may still use it (a current block has no older) */
                retire_locked(a, b);
            atomic_store(&a->current, nb);
            b = nb;
        }
    }
    pthread_mutex_unlock(&a->lock);
    if (st == TRD_OK)
        *out = b;
    return st;
}

trd_status_t trd_scratch_get(trd_arena_t *a, const trd_scratch_spec_t *s, const trd_driver_launch_t *l,
                             uint64_t ptr[2], trd_arena_t **held)
{
    uint64_t p[2] = {s->size[0] ? (uint64_t)(uintptr_t)l->global_scratch : 0,
                     s->size[1] ? (uint64_t)(uintptr_t)l->profile_scratch : 0};
    int want[2] = {s->size[0] && !p[0], s->size[1] && !p[1]};
    if (!want[0] && !want[1]) {
        ptr[0] = p[0];
        ptr[1] = p[1];
        *held = NULL;
        return TRD_OK;
    }
    trd_status_t given = trd_scratch_bytes_given(l, s->label);
    if (given != TRD_OK)
        return given;
    if (!a)
        return trd_drv_error(TRD_ERR_LIMIT,
                             "%s: no scratch arena for this native stream (trident keeps one for each of %d native "
                             "streams and none for a per-thread default stream, which is another stream on each "
                             "thread): pass the launch's global_scratch/profile_scratch, or launch on a trident "
                             "stream (trd_stream_wrap)",
                             s->label, TRD_SLOT_MAP_SLOTS);
    uint64_t bytes[2] = {want[0] ? l->global_scratch_bytes : 0, want[1] ? l->profile_scratch_bytes : 0};
    uint64_t align = 1;
    for (int i = 0; i < 2; i++)
        if (want[i] && s->align[i] > align)
            align = s->align[i];
    /* global at 0, profile after it at its alignment; room to align the base past what allocators give */
    uint64_t poff = bytes[0], need;
    int ok = (!bytes[1] || trd_align_up_u64(bytes[0], s->align[1], &poff)) && trd_add_u64(poff, bytes[1], &need) &&
             (align <= TRD_SCRATCH_BASE_ALIGN || trd_add_u64(need, align - 1, &need)) && need <= TRD_SCRATCH_MAX;
    if (!ok)
        return trd_drv_error(TRD_ERR_LIMIT,
                             "%s: grid %ux%ux%u needs %llu global + %llu profile bytes of scratch, more than the "
                             "%llu bytes trident allocates for one launch",
                             s->label, l->grid[0], l->grid[1], l->grid[2], (unsigned long long)bytes[0],
                             (unsigned long long)bytes[1], (unsigned long long)TRD_SCRATCH_MAX);
    /* users first: a reclaim that sees none knows no launch can be reading a retired block */
    atomic_fetch_add(&a->users, 1);
    trd_scratch_block_t *b = atomic_load(&a->current);
    if (!b || b->size < need) {
        trd_status_t st = arena_grow(a, need, &b);
        if (st != TRD_OK) {
            atomic_fetch_sub(&a->users, 1);
            return st;
        }
    }
    uint64_t base = b->addr;
    (void)trd_align_up_u64(base, align, &base); /* inside the block: need left room */
    if (want[0])
        p[0] = base;
    if (want[1])
        p[1] = base + poff;
    ptr[0] = p[0];
    ptr[1] = p[1];
    *held = a;
    return TRD_OK;
}

trd_scratch_block_t *trd_arena_reclaim_begin(trd_arena_t *a)
{
    pthread_mutex_lock(&a->lock);
    trd_scratch_block_t *list = a->retired;
    /* Under the lock no block is retired meanwhile; a launch that read one
     * before it was retired still counts in users. */
    if (list && atomic_load(&a->users) == 0)
        a->retired = NULL;
    else
        list = NULL;
    pthread_mutex_unlock(&a->lock);
    return list;
}

void trd_arena_reclaim_end(trd_arena_t *a, trd_scratch_block_t *blocks, int synced)
{
    if (!blocks)
        return;
    if (synced) {
        blocks_free(a->mem, blocks);
        return;
    }
    pthread_mutex_lock(&a->lock);
    retire_locked(a, blocks);
    pthread_mutex_unlock(&a->lock);
}

void trd_arena_fini(trd_arena_t *a)
{
    trd_scratch_block_t *cur = atomic_exchange(&a->current, NULL);
    blocks_free(a->mem, cur);
    blocks_free(a->mem, a->retired);
    a->retired = NULL;
    pthread_mutex_destroy(&a->lock);
}

void trd_arena_set_init(trd_arena_set_t *s, const trd_scratch_mem_t *mem)
{
    trd_slot_map_init(&s->map);
    for (int i = 0; i < TRD_SLOT_MAP_SLOTS; i++)
        trd_arena_init(&s->arena[i], mem);
}

trd_arena_t *trd_arena_set_find(trd_arena_set_t *s, const void *h)
{
    int i = trd_slot_map_find(&s->map, h);
    return i < 0 ? NULL : &s->arena[i];
}

void trd_arena_set_fini(trd_arena_set_t *s)
{
    for (int i = 0; i < TRD_SLOT_MAP_SLOTS; i++)
        trd_arena_fini(&s->arena[i]);
}
