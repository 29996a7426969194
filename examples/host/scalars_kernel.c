/* scalars_kernel: one program writes back every scalar type it receives, so
 * that tests can check argument packing: out[0..] as doubles/int64s. */
#include <stdint.h>
#include <string.h>

#include <trident/host_kernel.h>

TRD_HOST_KERNEL(scalars_kernel)
{
    (void)program;
    int64_t *out = TRD_ARG(int64_t *, 0);
    out[0] = TRD_ARG(int8_t, 1);
    out[1] = TRD_ARG(int16_t, 2);
    out[2] = TRD_ARG(int32_t, 3);
    out[3] = TRD_ARG(int64_t, 4);
    out[4] = (int64_t)TRD_ARG(uint32_t, 5);
    out[5] = (int64_t)TRD_ARG(uint64_t, 6);
    out[6] = TRD_ARG(uint16_t, 7);  /* fp16 bits */
    out[7] = TRD_ARG(uint16_t, 8);  /* bf16 bits */
    float f = TRD_ARG(float, 9);
    double d = TRD_ARG(double, 10);
    memcpy(&out[8], &d, 8);
    double fd = f;
    memcpy(&out[9], &fd, 8);
    out[10] = TRD_ARG(uint8_t, 11);  /* i1 */
}
