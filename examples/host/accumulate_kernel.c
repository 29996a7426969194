/* SPDX-License-Identifier: Apache-2.0 */
/* accumulate_kernel: every program adds its block's sum into out[0] and its
 * element count into count[0] with atomics, so the outputs must start at zero
 * (the zeroed_outputs case). x is int32 to keep the sum exact. */
#include <stdint.h>

#include <trident/host_kernel.h>

#define BLOCK 128

TRD_HOST_KERNEL_SIGNATURE(accumulate_kernel, "x:*i32,n:i32,out:*i64,count:*i32");

TRD_HOST_KERNEL(accumulate_kernel)
{
    const int32_t *x = TRD_ARG(const int32_t *, 0);
    int32_t n = TRD_ARG(int32_t, 1);
    int64_t *out = TRD_ARG(int64_t *, 2);
    int32_t *count = TRD_ARG(int32_t *, 3);
    int64_t start = (int64_t)program->pid[0] * BLOCK, sum = 0;
    int32_t c = 0;
    for (int64_t i = start; i < start + BLOCK && i < n; i++) {
        sum += x[i];
        c++;
    }
    __atomic_fetch_add(out, sum, __ATOMIC_RELAXED);
    __atomic_fetch_add(count, c, __ATOMIC_RELAXED);
}
