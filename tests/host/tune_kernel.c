/* SPDX-License-Identifier: Apache-2.0 */
/* tune_kernel: x = x * alpha + 1 in place, one block of BLOCK elements a program, with TUNE_SPIN rounds of idle
 * work an element. Built twice (tune_fast, tune_slow) as variants of one kernel whose speeds differ by far more
 * than a timer's noise; the result is the same, and applying it twice is visibly wrong (an in-place kernel). */
#include <stdint.h>

#include <trident/host_kernel.h>

#define BLOCK 256

TRD_HOST_KERNEL_SIGNATURE(tune_kernel, "x:*fp32,n:i32,alpha:fp32");

TRD_HOST_KERNEL(tune_kernel)
{
    float *x = TRD_ARG(float *, 0);
    int32_t n = TRD_ARG(int32_t, 1);
    float alpha = TRD_ARG(float, 2);
    int64_t start = (int64_t)program->pid[0] * BLOCK;
    for (int64_t i = start; i < start + BLOCK && i < n; i++) {
        volatile uint32_t spin = 0;
        for (uint32_t r = 0; r < TUNE_SPIN; r++)
            spin = spin + r;
        x[i] = x[i] * alpha + 1.0f;
    }
}
