/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c: kernel launches, as Triton's HIP launcher makes them, and the
 * scratch arenas behind Triton's two trailing pointer parameters.
 *
 * The launch is the hot path, called from many threads: once a stream's
 * arena is large enough it takes no lock and allocates nothing. */
#include <stdlib.h>
#include <string.h>

#include "drivers/common/arith.h"
#include "drivers/common/scratch.h"
#include "drivers/hip/hip.h"

/* Scratch beyond this is surely a wrong size: refuse it before overflowing. */
#define HIP_SCRATCH_MAX ((uint64_t)1 << 44)
#define HIP_ARENA_GRAIN ((uint64_t)1 << 16)

void hip_arena_init(struct hip_arena *a)
{
    atomic_init(&a->current, NULL);
    atomic_init(&a->users, 0);
    pthread_mutex_init(&a->lock, NULL);
    a->retired = NULL;
}

void hip_blocks_free(const struct hip_device *dev, struct hip_block *b)
{
    if (!b)
        return;
    const struct hip_api *api = &dev->drv->api;
    int prev = -1;
    int entered = hip_device_enter(dev, &prev) == TRD_OK;
    while (b) {
        struct hip_block *older = b->older;
        hipError_t e = api->hipFree(b->base);
        if (e != HIP_SUCCESS) {
            char why[256];
            hip_describe(api, e, why, sizeof why);
            trd_drv_log(TRD_LOG_WARN, "hip: freeing %llu bytes of scratch on %s failed: %s",
                           (unsigned long long)b->size, dev->uri, why);
        }
        free(b);
        b = older;
    }
    if (entered)
        hip_device_leave(dev, prev);
}

void hip_arena_destroy(const struct hip_device *dev, struct hip_arena *a)
{
    struct hip_block *cur = atomic_load(&a->current);
    if (cur) {
        cur->older = a->retired;
        a->retired = cur;
    }
    hip_blocks_free(dev, a->retired);
    a->retired = NULL;
    atomic_store(&a->current, NULL);
    pthread_mutex_destroy(&a->lock);
}

void hip_arena_take_retired(struct hip_arena *a, struct hip_block **blocks)
{
    pthread_mutex_lock(&a->lock);
    struct hip_block *list = a->retired;
    a->retired = NULL;
    pthread_mutex_unlock(&a->lock);
    /* A launch that read `current` before a block was retired holds a users
     * reference until its kernel is queued: wait for a quieter moment. After
     * this check, any such kernel is queued before the caller synchronizes. */
    if (list && atomic_load(&a->users) != 0) {
        hip_arena_put_back(a, list);
        list = NULL;
    }
    *blocks = list;
}

void hip_arena_put_back(struct hip_arena *a, struct hip_block *blocks)
{
    if (!blocks)
        return;
    struct hip_block *tail = blocks;
    while (tail->older)
        tail = tail->older;
    pthread_mutex_lock(&a->lock);
    tail->older = a->retired;
    a->retired = blocks;
    pthread_mutex_unlock(&a->lock);
}

/* Replaces the arena's block by one of at least `need` bytes (the slow path:
 * first use, or a launch needing more than before). */
static trd_status_t hip_arena_grow(struct hip_device *dev, struct hip_arena *a, uint64_t need, struct hip_block **out)
{
    const struct hip_api *api = &dev->drv->api;
    pthread_mutex_lock(&a->lock);
    struct hip_block *b = atomic_load(&a->current);
    if (b && b->size >= need) {
        pthread_mutex_unlock(&a->lock);
        *out = b;
        return TRD_OK;
    }
    uint64_t size = b ? 2 * b->size : 0;
    /* need <= HIP_SCRATCH_MAX, and so is a block: this cannot overflow */
    (void)trd_align_up_u64(size > need ? size : need, HIP_ARENA_GRAIN, &size);
    struct hip_block *nb = malloc(sizeof *nb);
    if (!nb) {
        pthread_mutex_unlock(&a->lock);
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    }
    /* hipMalloc allocates on the current device: the one place a launch on a
     * caller's stream sets it (and restores it), when it is not already. */
    int prev;
    trd_status_t st = hip_device_enter(dev, &prev);
    if (st == TRD_OK) {
        hipError_t e = api->hipMalloc(&nb->base, (size_t)size);
        hip_device_leave(dev, prev);
        if (e != HIP_SUCCESS)
            st = hip_fail(api, e, "hipMalloc of %llu bytes of scratch on %s failed", (unsigned long long)size,
                          dev->uri);
    }
    if (st != TRD_OK) {
        pthread_mutex_unlock(&a->lock);
        free(nb);
        return st;
    }
    nb->size = size;
    nb->older = NULL;
    if (b) { /* a kernel queued earlier may still read it */
        b->older = a->retired;
        a->retired = b;
    }
    atomic_store(&a->current, nb);
    pthread_mutex_unlock(&a->lock);
    *out = nb;
    return TRD_OK;
}

/* Scratch for one launch: the core's checked bytes (drivers/common/scratch.h),
 * global then profile, at their alignments. The caller holds a users
 * reference on the arena. */
static trd_status_t hip_arena_scratch(struct hip_device *dev, struct hip_arena *a, const struct hip_module *m,
                                      const trd_driver_launch_t *l, int want_g, int want_p, void **gs, void **ps)
{
    const trd_scratch_spec_t sp = {m->num_ctas, {m->gs_size, m->ps_size}, {m->gs_align, m->ps_align}};
    uint64_t bytes[2];
    trd_status_t st = trd_launch_scratch(l, &sp, bytes);
    if (st != TRD_OK)
        return st;
    uint64_t gbytes = want_g ? bytes[0] : 0, pbytes = want_p ? bytes[1] : 0;
    uint64_t align = 1;
    if (want_g)
        align = m->gs_align;
    if (want_p && m->ps_align > align)
        align = m->ps_align;
    uint64_t poff, need;
    /* need: profile after global at its alignment, and room to align the block's base */
    if (!trd_scratch_layout(gbytes, pbytes, m->ps_align, &poff, &need) || !trd_add_u64(need, align - 1, &need) ||
        need > HIP_SCRATCH_MAX)
        return trd_drv_error(TRD_ERR_LIMIT,
                                "grid %ux%ux%u x num_ctas %u needs more than %llu bytes of scratch on %s "
                                "(%llu global, %llu profile bytes a program)",
                                l->grid[0], l->grid[1], l->grid[2], m->num_ctas, (unsigned long long)HIP_SCRATCH_MAX,
                                dev->uri, (unsigned long long)m->gs_size, (unsigned long long)m->ps_size);
    struct hip_block *b = atomic_load(&a->current);
    if (!b || b->size < need) {
        st = hip_arena_grow(dev, a, need, &b);
        if (st != TRD_OK)
            return st;
    }
    uint64_t at = (uintptr_t)b->base;
    (void)trd_align_up_u64(at, align, &at); /* inside the block: need left room */
    char *base = (char *)(uintptr_t)at;
    *gs = want_g ? base : NULL;
    *ps = want_p ? base + poff : NULL;
    return TRD_OK;
}

/* The arena of a stream trident does not own: the device's slot for that
 * handle, claimed on first use. NULL when every slot is taken. */
static struct hip_arena *hip_native_arena(struct hip_device *dev, hipStream_t s)
{
    if (!s)
        return &dev->null_arena;
    int i = trd_slot_map_find(&dev->native, s);
    return i < 0 ? NULL : &dev->native_arena[i];
}

trd_status_t hip_launch(void *module, void *stream, void *native, const trd_driver_launch_t *l)
{
    struct hip_module *m = module;
    struct hip_device *dev = m->dev;
    const struct hip_api *api = &dev->drv->api;
    struct hip_stream *s = stream;
    hipStream_t hs = s ? s->handle : (hipStream_t)native;
    /* Triton's launcher: grid x counts CTAs, block = warp_size * num_warps. */
    uint64_t grid_x = (uint64_t)l->grid[0] * m->num_ctas;
    if (grid_x > UINT32_MAX)
        return trd_drv_error(TRD_ERR_LIMIT, "grid x %u x num_ctas %u = %llu blocks: more than HIP's 2^32-1",
                                l->grid[0], m->num_ctas, (unsigned long long)grid_x);
    /* Triton 3.x kernels take two trailing pointers, NULL when the metadata
     * asks for no scratch; the caller's when given, else the stream arena's. */
    void *gs = m->gs_size ? l->global_scratch : NULL;
    void *ps = m->ps_size ? l->profile_scratch : NULL;
    int want_g = m->gs_size && !gs, want_p = m->ps_size && !ps;
    struct hip_arena *arena = NULL;
    trd_status_t st;
    if (want_g || want_p) {
        arena = s && s->owned ? &s->arena : hip_native_arena(dev, hs);
        if (!arena)
            return trd_drv_error(TRD_ERR_LIMIT,
                                    "scratch for a launch on %s: trident already keeps scratch for %d foreign "
                                    "streams of the device; pass trd_launch_t.global_scratch",
                                    dev->uri, HIP_NATIVE_ARENAS);
        atomic_fetch_add(&arena->users, 1);
        void *g = NULL, *p = NULL;
        if ((st = hip_arena_scratch(dev, arena, m, l, want_g, want_p, &g, &p)) != TRD_OK) {
            atomic_fetch_sub(&arena->users, 1);
            return st;
        }
        if (want_g)
            gs = g;
        if (want_p)
            ps = p;
    }
    l->params[l->num_params] = &gs;
    l->params[l->num_params + 1] = &ps;

    /* The NULL stream is the current device's: only then is the device set. */
    int prev = -1;
    if (!hs && (st = hip_device_enter(dev, &prev)) != TRD_OK) {
        if (arena)
            atomic_fetch_sub(&arena->users, 1);
        return st;
    }
    hipError_t e;
    const char *fn;
    unsigned gx = (unsigned)grid_x, gy = l->grid[1], gz = l->grid[2];
    switch (m->mode) {
    case HIP_LAUNCH_COOPERATIVE:
        fn = "hipModuleLaunchCooperativeKernel";
        e = api->hipModuleLaunchCooperativeKernel(m->function, gx, gy, gz, m->block_x, 1, 1, m->shared, hs,
                                                  l->params);
        break;
    case HIP_LAUNCH_CLUSTER: {
        hipLaunchAttribute attrs[2];
        memset(attrs, 0, sizeof attrs);
        attrs[0].id = HIP_LAUNCH_ATTR_CLUSTER_DIMENSION;
        attrs[0].value.clusterDim.x = m->num_ctas;
        attrs[0].value.clusterDim.y = 1;
        attrs[0].value.clusterDim.z = 1;
        attrs[1].id = HIP_LAUNCH_ATTR_COOPERATIVE;
        attrs[1].value.cooperative = 1;
        HIP_LAUNCH_CONFIG config = {
            .gridDimX = gx, .gridDimY = gy, .gridDimZ = gz,
            .blockDimX = m->block_x, .blockDimY = 1, .blockDimZ = 1,
            .sharedMemBytes = m->shared, .hStream = hs,
            .attrs = attrs, .numAttrs = m->cooperative ? 2 : 1,
        };
        fn = "hipDrvLaunchKernelEx";
        e = api->hipDrvLaunchKernelEx(&config, m->function, l->params, NULL);
        break;
    }
    default:
        fn = "hipModuleLaunchKernel";
        e = api->hipModuleLaunchKernel(m->function, gx, gy, gz, m->block_x, 1, 1, m->shared, hs, l->params, NULL);
        break;
    }
    if (!hs)
        hip_device_leave(dev, prev);
    if (arena)
        atomic_fetch_sub(&arena->users, 1);
    if (e != HIP_SUCCESS)
        return hip_fail(api, e, "%s (grid %ux%ux%u, block %ux1x1, %u bytes of shared memory) failed", fn, gx, gy, gz,
                        m->block_x, m->shared);
    return TRD_OK;
}
