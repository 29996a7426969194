/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c: the hot path. One cuLaunchKernelEx with the attributes computed
 * at load; Triton's two scratch pointers from the caller or from an arena
 * that is reused, so a steady-state launch allocates nothing and takes no
 * lock shared by streams. */
#include <stdlib.h>
#include <string.h>

#include "drivers/common/arith.h"
#include "drivers/common/scratch.h"
#include "drivers/cuda/cuda_driver.h"

void cuda_arena_init(struct cuda_arena *a)
{
    atomic_init(&a->current, NULL);
    pthread_mutex_init(&a->grow, NULL);
}

void cuda_arena_free(const struct cuda_api *api, struct cuda_arena *a)
{
    struct cuda_block *b = atomic_exchange(&a->current, NULL);
    while (b) {
        struct cuda_block *older = b->older;
        api->cuMemFree(b->ptr);
        free(b);
        b = older;
    }
    pthread_mutex_destroy(&a->grow);
}

trd_status_t cuda_arena_get(struct cuda_device *d, struct cuda_arena *a, uint64_t size, CUdeviceptr *out)
{
    struct cuda_block *b = atomic_load_explicit(&a->current, memory_order_acquire);
    if (b && b->size >= size) {
        *out = b->ptr;
        return TRD_OK;
    }
    trd_status_t st = TRD_OK;
    pthread_mutex_lock(&a->grow);
    b = atomic_load_explicit(&a->current, memory_order_relaxed);
    if (!b || b->size < size) {
        uint64_t twice, n = b && trd_mul_u64(b->size, 2, &twice) && twice > size ? twice : size;
        struct cuda_block *nb = calloc(1, sizeof *nb);
        struct cuda_ctx_scope sc;
        if (!nb) {
            st = trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
        } else if ((st = cuda_ctx_enter(d, &sc)) == TRD_OK) {
            CUresult r = d->api->cuMemAlloc(&nb->ptr, (size_t)n);
            cuda_ctx_leave(d, &sc);
            if (r != CUDA_SUCCESS)
                st = cuda_error(d->api, r, "allocating %llu bytes of kernel scratch on cuda:%d", (unsigned long long)n,
                                d->ordinal);
        }
        if (st == TRD_OK) {
            nb->size = n;
            nb->older = b; /* kept: kernels queued earlier may still use it */
            atomic_store_explicit(&a->current, nb, memory_order_release);
            b = nb;
        } else {
            free(nb);
        }
    }
    pthread_mutex_unlock(&a->grow);
    if (st == TRD_OK)
        *out = b->ptr;
    return st;
}

/* The arena of a stream trident does not own, found or claimed without a lock. */
struct cuda_arena *cuda_foreign_arena(struct cuda_device *d, CUstream s)
{
    int i = trd_slot_map_find(&d->foreign, s);
    return i < 0 ? NULL : &d->foreign_arena[i];
}

static trd_status_t scratch(struct cuda_module *m, struct cuda_stream *cs, CUstream s, uint64_t bytes,
                            CUdeviceptr *out)
{
    struct cuda_device *d = m->dev;
    struct cuda_arena *a = cs ? &cs->arena : cuda_foreign_arena(d, s);
    if (!a)
        return trd_drv_error(TRD_ERR_LIMIT,
                                "%s: more than %d foreign streams of cuda:%d need kernel scratch: pass "
                                "trd_launch_t.global_scratch, or use trident streams",
                                m->label, CUDA_FOREIGN_STREAMS, d->ordinal);
    return cuda_arena_get(d, a, bytes, out);
}

trd_status_t cuda_launch(void *module, void *stream, void *native, const trd_driver_launch_t *l)
{
    struct cuda_module *m = module;
    struct cuda_device *d = m->dev;
    struct cuda_stream *cs = stream;
    CUstream s = cs ? cs->s : (CUstream)native;
    uint64_t gx = (uint64_t)l->grid[0] * m->num_ctas;
    if (gx > 0x7fffffffu || l->grid[1] > 65535 || l->grid[2] > 65535)
        return trd_drv_error(TRD_ERR_LIMIT, "%s: grid %ux%ux%u (x%u CTAs) exceeds CUDA's 2^31-1 x 65535 x 65535",
                                m->label, l->grid[0], l->grid[1], l->grid[2], m->num_ctas);
    uint64_t blocks = gx * l->grid[1] * l->grid[2];
    if (m->coop_limit && blocks > m->coop_limit)
        return trd_drv_error(TRD_ERR_LIMIT,
                                "%s: a cooperative launch of %llu blocks, but only %llu can be resident at once on "
                                "cuda:%d",
                                m->label, (unsigned long long)blocks, (unsigned long long)m->coop_limit, d->ordinal);
    CUdeviceptr gs = (CUdeviceptr)(uintptr_t)l->global_scratch, ps = (CUdeviceptr)(uintptr_t)l->profile_scratch;
    trd_status_t st;
    if ((m->gs_size && !gs) || (m->ps_size && !ps)) {
        /* the core's checked figures (drivers/common/scratch.h) */
        const trd_scratch_spec_t sp = {m->num_ctas, {m->gs_size, m->ps_size}, {m->gs_align, m->ps_align}};
        uint64_t need[2];
        if ((st = trd_launch_scratch(l, &sp, need)) != TRD_OK)
            return st;
        /* one block: global first, profile after it (never the same memory) */
        uint64_t want_g = m->gs_size && !gs ? need[0] : 0, want_p = m->ps_size && !ps ? need[1] : 0, poff, total;
        if (!trd_scratch_layout(want_g, want_p, m->ps_align, &poff, &total))
            return trd_drv_error(TRD_ERR_LIMIT, "%s: %llu global + %llu profile bytes of scratch overflow 64 bits",
                                 m->label, (unsigned long long)want_g, (unsigned long long)want_p);
        CUdeviceptr base;
        if ((st = scratch(m, cs, s, total, &base)) != TRD_OK)
            return st;
        if (want_g)
            gs = base;
        if (want_p)
            ps = base + poff;
    }
    /* Triton 3.x kernels end with the global and profile scratch pointers */
    l->params[l->num_params] = &gs;
    l->params[l->num_params + 1] = &ps;
    CUlaunchConfig cfg;
    cfg.gridDimX = (unsigned)gx;
    cfg.gridDimY = l->grid[1];
    cfg.gridDimZ = l->grid[2];
    cfg.blockDimX = m->block;
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.sharedMemBytes = m->shared;
    cfg.hStream = s;
    cfg.attrs = m->nattrs ? m->attrs : NULL;
    cfg.numAttrs = m->nattrs;
    /* The function lives in the device's primary context. When it is current
     * (XLA, PyTorch: the usual case) nothing is pushed; otherwise it is pushed
     * for this call and popped, leaving the caller's context as it was. */
    struct cuda_ctx_scope sc = {0};
    if ((st = cuda_ctx_enter(d, &sc)) != TRD_OK)
        return st;
    CUresult r = d->api->cuLaunchKernelEx(&cfg, m->fn, l->params, NULL);
    cuda_ctx_leave(d, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(d->api, r, "cuLaunchKernelEx of %s (grid %llux%ux%u, block %u, shared %u)", m->label,
                          (unsigned long long)gx, l->grid[1], l->grid[2], m->block, m->shared);
    return TRD_OK;
}
