/* SPDX-License-Identifier: Apache-2.0 */
/* arith.h: the checked size arithmetic every driver uses for scratch, grids
 * and copies. Each returns 1 and writes *out when the result fits in 64 bits,
 * else 0 and leaves *out alone, so an overflow is an error the caller names
 * instead of a small wrapped size. */
#ifndef TRD_DRIVERS_COMMON_ARITH_H
#define TRD_DRIVERS_COMMON_ARITH_H

#include <stdint.h>

static inline int trd_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return 0;
    *out = r;
    return 1;
}

static inline int trd_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return 0;
    *out = r;
    return 1;
}

/* v rounded up to a multiple of align (0 or 1: v itself). */
static inline int trd_align_up_u64(uint64_t v, uint64_t align, uint64_t *out)
{
    if (align <= 1) {
        *out = v;
        return 1;
    }
    uint64_t r;
    if (!trd_add_u64(v, align - 1, &r))
        return 0;
    *out = r / align * align;
    return 1;
}

#endif /* TRD_DRIVERS_COMMON_ARITH_H */
