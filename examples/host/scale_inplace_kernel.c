/* SPDX-License-Identifier: Apache-2.0 */
/* scale_inplace_kernel: x *= alpha in place (the input/output aliasing case). */
#include <stdint.h>

#include <trident/host_kernel.h>

#define BLOCK 512

TRD_HOST_KERNEL_SIGNATURE(scale_inplace_kernel, "x:*fp32,n:i32,alpha:fp32");

TRD_HOST_KERNEL(scale_inplace_kernel)
{
    float *x = TRD_ARG(float *, 0);
    int32_t n = TRD_ARG(int32_t, 1);
    float alpha = TRD_ARG(float, 2);
    int64_t start = (int64_t)program->pid[0] * BLOCK;
    for (int64_t i = start; i < start + BLOCK && i < n; i++)
        x[i] *= alpha;
}
