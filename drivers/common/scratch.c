/* SPDX-License-Identifier: Apache-2.0 */
/* scratch.c: trd_launch_scratch (scratch.h). */
#include "drivers/common/scratch.h"
#include "drivers/common/services.h"

#include "drivers/common/arith.h"

#define LAUNCH_HAS_SCRATCH_BYTES(l)                                                                           \
    ((l)->struct_size >= offsetof(trd_driver_launch_t, profile_scratch_bytes) + sizeof(uint64_t))

trd_status_t trd_launch_scratch(const trd_driver_launch_t *l, const trd_scratch_spec_t *s, uint64_t need[2])
{
    if (LAUNCH_HAS_SCRATCH_BYTES(l)) {
        need[0] = s->size[0] ? l->global_scratch_bytes : 0;
        need[1] = s->size[1] ? l->profile_scratch_bytes : 0;
        return TRD_OK;
    }
    uint64_t programs, r[2] = {0, 0};
    int ok = trd_mul_u64((uint64_t)l->grid[0] * l->grid[1], l->grid[2], &programs) &&
             trd_mul_u64(programs, s->num_ctas ? s->num_ctas : 1, &programs);
    for (int i = 0; ok && i < 2; i++) {
        uint64_t per;
        ok = !s->size[i] || (trd_align_up_u64(s->size[i], s->align[i], &per) && trd_mul_u64(programs, per, &r[i]));
    }
    if (!ok)
        return trd_drv_error(TRD_ERR_LIMIT,
                                "grid %ux%ux%u x %u CTAs x %llu global + %llu profile bytes of scratch a program is "
                                "more than 2^64 bytes",
                                l->grid[0], l->grid[1], l->grid[2], s->num_ctas ? s->num_ctas : 1,
                                (unsigned long long)s->size[0], (unsigned long long)s->size[1]);
    need[0] = r[0];
    need[1] = r[1];
    return TRD_OK;
}

int trd_scratch_layout(uint64_t global_bytes, uint64_t profile_bytes, uint64_t palign, uint64_t *profile_offset,
                       uint64_t *total)
{
    uint64_t off = global_bytes, sum;
    if ((profile_bytes && !trd_align_up_u64(global_bytes, palign ? palign : 1, &off)) ||
        !trd_add_u64(off, profile_bytes, &sum))
        return 0;
    *profile_offset = off;
    *total = sum;
    return 1;
}
