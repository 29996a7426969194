/* SPDX-License-Identifier: Apache-2.0 */
/* scalars_kernel: one program writes back every scalar it receives, widened
 * to fp64, as its Triton twin (tests/fixtures/kernels.py) does; tests check
 * the argument packing of every Triton scalar type with it. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <trident/host_kernel.h>

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double bf16_to_double(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

TRD_HOST_KERNEL_SIGNATURE(scalars_kernel, "out:*fp64,a_i8:i8,a_i16:i16,a_i32:i32,a_i64:i64,a_u32:u32,a_u64:u64,a_f16:fp16,a_bf16:bf16,a_f32:fp32,a_f64:fp64,a_i1:i1");

TRD_HOST_KERNEL(scalars_kernel)
{
    (void)program;
    double *out = TRD_ARG(double *, 0);
    out[0] = TRD_ARG(int8_t, 1);
    out[1] = TRD_ARG(int16_t, 2);
    out[2] = TRD_ARG(int32_t, 3);
    out[3] = (double)TRD_ARG(int64_t, 4);
    out[4] = TRD_ARG(uint32_t, 5);
    out[5] = (double)TRD_ARG(uint64_t, 6);
    out[6] = half_to_double(TRD_ARG(uint16_t, 7));
    out[7] = bf16_to_double(TRD_ARG(uint16_t, 8));
    out[8] = TRD_ARG(float, 9);
    out[9] = TRD_ARG(double, 10);
    out[10] = TRD_ARG(uint8_t, 11);
}
