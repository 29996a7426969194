/* SPDX-License-Identifier: Apache-2.0 */
/* sum_diff_kernel: two outputs at once, BLOCK elements a program:
 * s = x + y, d = x - y. */
#include <stdint.h>

#include <trident/host_kernel.h>

#define BLOCK 256

TRD_HOST_KERNEL_SIGNATURE(sum_diff_kernel, "x:*fp32,y:*fp32,n:i32,s:*fp32,d:*fp32");

TRD_HOST_KERNEL(sum_diff_kernel)
{
    const float *x = TRD_ARG(const float *, 0);
    const float *y = TRD_ARG(const float *, 1);
    int32_t n = TRD_ARG(int32_t, 2);
    float *s = TRD_ARG(float *, 3);
    float *d = TRD_ARG(float *, 4);
    int64_t start = (int64_t)program->pid[0] * BLOCK;
    for (int64_t i = start; i < start + BLOCK && i < n; i++) {
        s[i] = x[i] + y[i];
        d[i] = x[i] - y[i];
    }
}
