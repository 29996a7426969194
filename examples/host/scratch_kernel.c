/* SPDX-License-Identifier: Apache-2.0 */
/* scratch_kernel: uses its slice of global scratch as Triton kernels with
 * global_scratch_size > 0 do: out[p] = sum of x[p*4 .. p*4+3] staged
 * through scratch. Declares 16 bytes of scratch per program in its metadata. */
#include <stdint.h>
#include <string.h>

#include <trident/host_kernel.h>

TRD_HOST_KERNEL_SIGNATURE(scratch_kernel, "x:*fp32,out:*fp32");

TRD_HOST_KERNEL(scratch_kernel)
{
    const float *x = TRD_ARG(const float *, 0);
    float *out = TRD_ARG(float *, 1);
    float *s = program->global_scratch;
    uint32_t p = program->pid[0];
    if (!s) {
        out[p] = -1.0f; /* no scratch: make the test fail loudly */
        return;
    }
    memcpy(s, x + 4 * (uint64_t)p, 4 * sizeof(float));
    out[p] = s[0] + s[1] + s[2] + s[3];
}
