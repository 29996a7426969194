/* SPDX-License-Identifier: Apache-2.0 */
/* matmul_kernel: c[M][N] = a[M][K] b[K][N], fp32 row-major, one 32 x 32 tile of c a program (pid x walks row
 * blocks, pid y column blocks). The host twin of bench/bench_cpu.py's Triton kernel (BM = BN = 32). */
#include <stdint.h>

#include <trident/host_kernel.h>

#ifndef TILE /* examples/tune_matmul's variants build it at 16 and 64 too */
#define TILE 32
#endif

TRD_HOST_KERNEL_SIGNATURE(matmul_kernel, "a:*fp32,b:*fp32,c:*fp32,M:i32,N:i32,K:i32");

TRD_HOST_KERNEL(matmul_kernel)
{
    const float *a = TRD_ARG(const float *, 0);
    const float *b = TRD_ARG(const float *, 1);
    float *c = TRD_ARG(float *, 2);
    int32_t m = TRD_ARG(int32_t, 3), n = TRD_ARG(int32_t, 4), k = TRD_ARG(int32_t, 5);
    int32_t r0 = (int32_t)program->pid[0] * TILE, c0 = (int32_t)program->pid[1] * TILE;
    int32_t r1 = r0 + TILE < m ? r0 + TILE : m, c1 = c0 + TILE < n ? c0 + TILE : n;
    for (int32_t r = r0; r < r1; r++) {
        float acc[TILE] = {0};
        for (int32_t i = 0; i < k; i++) {
            float av = a[(int64_t)r * k + i];
            const float *brow = b + (int64_t)i * n;
            for (int32_t col = c0; col < c1; col++)
                acc[col - c0] += av * brow[col];
        }
        for (int32_t col = c0; col < c1; col++)
            c[(int64_t)r * n + col] = acc[col - c0];
    }
}
