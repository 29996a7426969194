/* SPDX-License-Identifier: Apache-2.0 */
/* transpose_kernel: out[N][M] = in[M][N]^T over a 2-D grid of 32x32 tiles
 * (pid x walks columns, pid y rows), with a scale: out = alpha * in^T. */
#include <stdint.h>

#include <trident/host_kernel.h>

#define TILE 32

TRD_HOST_KERNEL_SIGNATURE(transpose_kernel, "in:*fp32,out:*fp32,M:i32,N:i32,alpha:fp32");

TRD_HOST_KERNEL(transpose_kernel)
{
    const float *in = TRD_ARG(const float *, 0);
    float *out = TRD_ARG(float *, 1);
    int32_t m = TRD_ARG(int32_t, 2);
    int32_t n = TRD_ARG(int32_t, 3);
    float alpha = TRD_ARG(float, 4);
    int32_t c0 = (int32_t)program->pid[0] * TILE, r0 = (int32_t)program->pid[1] * TILE;
    for (int32_t r = r0; r < r0 + TILE && r < m; r++)
        for (int32_t c = c0; c < c0 + TILE && c < n; c++)
            out[(int64_t)c * m + r] = alpha * in[(int64_t)r * n + c];
}
