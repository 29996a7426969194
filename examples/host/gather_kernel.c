/* SPDX-License-Identifier: Apache-2.0 */
/* gather_kernel: out[i] = x[idx[i]], BLOCK elements a program. An index
 * outside x (or a null x) makes it read memory it does not own: the host
 * driver's fault handling is tested with it. */
#include <stdint.h>

#include <trident/host_kernel.h>

#define BLOCK 256

/* Not instrumented in sanitized builds, as a kernel Triton compiles is not: the sanitizers would report its
 * deliberate faults before the host driver sees them. */
__attribute__((no_sanitize("address", "undefined"))) TRD_HOST_KERNEL(gather_kernel)
{
    const float *x = TRD_ARG(const float *, 0);
    const int64_t *idx = TRD_ARG(const int64_t *, 1);
    float *out = TRD_ARG(float *, 2);
    int32_t n = TRD_ARG(int32_t, 3);
    int64_t start = (int64_t)program->pid[0] * BLOCK;
    int64_t end = start + BLOCK < n ? start + BLOCK : n;
    for (int64_t i = start; i < end; i++)
        out[i] = x[idx[i]];
}
