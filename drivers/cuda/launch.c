/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c: the hot path. One cuLaunchKernelEx with the attributes computed
 * at load; Triton's two scratch pointers from the caller or from the
 * stream's arena (drivers/common/scratch.h), so a steady-state launch
 * allocates nothing and takes no lock shared by streams. */
#include "drivers/common/scratch.h"
#include "drivers/cuda/cuda_driver.h"

trd_arena_t *cuda_stream_arena(struct cuda_device *d, struct cuda_stream *cs, CUstream s)
{
    if (s == CU_STREAM_PER_THREAD) /* another stream on each thread: no one arena can serve it */
        return NULL;
    return cs ? &cs->arena : trd_arena_set_find(&d->foreign, s);
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
    /* the caller's scratch, else the stream's arena (drivers/common/scratch.h) */
    uint64_t ptr[2];
    trd_arena_t *held;
    trd_status_t st = trd_scratch_get(trd_scratch_wanted(&m->scratch, l) ? cuda_stream_arena(d, cs, s) : NULL,
                                      &m->scratch, l, ptr, &held);
    if (st != TRD_OK)
        return st;
    CUdeviceptr gs = ptr[0], ps = ptr[1];
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
    if ((st = cuda_ctx_enter(d, &sc)) != TRD_OK) {
        trd_arena_release(held);
        return st;
    }
    CUresult r = d->api->cuLaunchKernelEx(&cfg, m->fn, l->params, NULL);
    cuda_ctx_leave(d, &sc);
    trd_arena_release(held);
    if (r != CUDA_SUCCESS)
        return cuda_error(d->api, r, "cuLaunchKernelEx of %s (grid %llux%ux%u, block %u, shared %u)", m->label,
                          (unsigned long long)gx, l->grid[1], l->grid[2], m->block, m->shared);
    return TRD_OK;
}
