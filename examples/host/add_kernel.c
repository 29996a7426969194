/* SPDX-License-Identifier: Apache-2.0 */
/* add_kernel: out = x + y, BLOCK elements a program. The host twin of the
 * Triton kernel in examples/triton/add.py: same name, same parameters. */
#include <stdint.h>

#include <trident/host_kernel.h>

#define BLOCK 1024

TRD_HOST_KERNEL_SIGNATURE(add_kernel, "x:*fp32,y:*fp32,out:*fp32,n:i32");

TRD_HOST_KERNEL(add_kernel)
{
    const float *x = TRD_ARG(const float *, 0);
    const float *y = TRD_ARG(const float *, 1);
    float *out = TRD_ARG(float *, 2);
    int32_t n = TRD_ARG(int32_t, 3);
    int64_t start = (int64_t)program->pid[0] * BLOCK;
    int64_t end = start + BLOCK < n ? start + BLOCK : n;
    for (int64_t i = start; i < end; i++)
        out[i] = x[i] + y[i];
}
