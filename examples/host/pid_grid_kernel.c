/* SPDX-License-Identifier: Apache-2.0 */
/* pid_grid_kernel: each program writes its program id and the grid size,
 * so that a test can check every program ran exactly once with the right ids.
 * out[6*p + 0..2] = pid x, y, z; out[6*p + 3..5] = num_programs x, y, z,
 * where p = pid.x + gx * (pid.y + gy * pid.z); hits[p] counts calls. */
#include <stdint.h>

#include <trident/host_kernel.h>

TRD_HOST_KERNEL_SIGNATURE(pid_grid_kernel, "out:*i32,hits:*i32");

TRD_HOST_KERNEL(pid_grid_kernel)
{
    int32_t *out = TRD_ARG(int32_t *, 0);
    int32_t *hits = TRD_ARG(int32_t *, 1);
    const uint32_t *g = program->num_programs;
    uint64_t p = program->pid[0] + (uint64_t)g[0] * (program->pid[1] + (uint64_t)g[1] * program->pid[2]);
    for (int k = 0; k < 3; k++) {
        out[6 * p + (uint64_t)k] = (int32_t)program->pid[k];
        out[6 * p + 3 + (uint64_t)k] = (int32_t)g[k];
    }
    __atomic_fetch_add(&hits[p], 1, __ATOMIC_RELAXED);
}
