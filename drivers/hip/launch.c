/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c: kernel launches, as Triton's HIP launcher makes them, with the
 * stream's scratch arena (drivers/common/scratch.h) behind Triton's two
 * trailing pointer parameters.
 *
 * The launch is the hot path, called from many threads: once a stream's
 * arena is large enough it takes no lock and allocates nothing. */
#include <string.h>

#include "drivers/common/scratch.h"
#include "drivers/hip/hip.h"

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
     * asks for no scratch; the caller's when given, else the stream arena's
     * (drivers/common/scratch.h). */
    uint64_t ptr[2];
    trd_arena_t *held;
    trd_arena_t *arena = NULL; /* none for the per-thread stream: another stream on each thread */
    if (trd_scratch_wanted(&m->scratch, l) && hs != HIP_STREAM_PER_THREAD)
        arena = s ? &s->arena : trd_arena_set_find(&dev->native, hs);
    trd_status_t st = trd_scratch_get(arena, &m->scratch, l, ptr, &held);
    if (st != TRD_OK)
        return st;
    void *gs = (void *)(uintptr_t)ptr[0], *ps = (void *)(uintptr_t)ptr[1];
    l->params[l->num_params] = &gs;
    l->params[l->num_params + 1] = &ps;

    /* The NULL stream is the current device's: only then is the device set. */
    int prev = -1;
    if (!hs && (st = hip_device_enter(dev, &prev)) != TRD_OK) {
        trd_arena_release(held);
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
    trd_arena_release(held);
    if (e != HIP_SUCCESS)
        return hip_fail(api, e, "%s (grid %ux%ux%u, block %ux1x1, %u bytes of shared memory) failed", fn, gx, gy, gz,
                        m->block_x, m->shared);
    return TRD_OK;
}
