/* SPDX-License-Identifier: Apache-2.0 */
/* scratch.c: the scratch a launch needs, computed once for every driver (the
 * drivers read it from trd_driver_launch_t instead of each multiplying its own). */
#include "core/internal.h"

static uint64_t per_program(uint64_t size, uint64_t align)
{
    if (!size)
        return 0;
    uint64_t a = align ? align : 1, up;
    if (__builtin_add_overflow(size, a - 1, &up))
        return UINT64_MAX; /* unreachable: metadata caps a size at 2^40 and an alignment at 4096 */
    return up / a * a;
}

void trd_scratch_per_program(const struct trd_meta *m, uint64_t per[2])
{
    per[0] = per_program(m->global_scratch_size, m->global_scratch_align);
    per[1] = per_program(m->profile_scratch_size, m->profile_scratch_align);
}

/* grid is checked (fewer than 2^63 programs): programs x num_ctas x per program. */
trd_status_t trd_scratch_need(const uint64_t per[2], uint32_t num_ctas, const uint32_t grid[3], const char *kernel,
                              const char *uri, uint64_t need[2])
{
    uint64_t programs = (uint64_t)grid[0] * grid[1] * grid[2], units;
    for (int i = 0; i < 2; i++) {
        if (!per[i] || !programs) {
            need[i] = 0;
            continue;
        }
        if (__builtin_mul_overflow(programs, (uint64_t)num_ctas, &units) ||
            __builtin_mul_overflow(units, per[i], &need[i]))
            return trd_error_set(TRD_ERR_LIMIT,
                                 "kernel '%s' on %s: grid %ux%ux%u x %u CTAs x %llu bytes of %s scratch a program "
                                 "is more than 2^64 bytes",
                                 kernel, uri, grid[0], grid[1], grid[2], num_ctas, (unsigned long long)per[i],
                                 i ? "profile" : "global");
    }
    return TRD_OK;
}

trd_status_t trd_scratch_of(const struct trd_meta *m, const uint32_t grid[3], const char *kernel, const char *where,
                            uint64_t need[2])
{
    uint64_t per[2];
    trd_scratch_per_program(m, per);
    return trd_scratch_need(per, m->num_ctas ? m->num_ctas : 1, grid, kernel, where, need);
}
