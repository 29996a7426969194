/* SPDX-License-Identifier: Apache-2.0 */
/* scratch.h: the scratch bytes a launch needs, for every driver: the core's
 * figures (trd_driver_launch_t.global_scratch_bytes, computed once and
 * overflow-checked) where the launch struct is large enough to have them;
 * from a core older than those fields, the same rule computed here with
 * checked arithmetic. */
#ifndef TRD_DRIVERS_COMMON_SCRATCH_H
#define TRD_DRIVERS_COMMON_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#include <trident/driver.h>

/* The module's scratch as its descriptor gave it. */
typedef struct trd_scratch_spec {
    uint32_t num_ctas;   /* 0 counts as 1 */
    uint64_t size[2];    /* per program: [0] global, [1] profile */
    uint64_t align[2];
} trd_scratch_spec_t;

/* need[0] global, need[1] profile bytes; TRD_ERR_LIMIT naming the grid where
 * they do not fit in 64 bits (need untouched). */
trd_status_t trd_launch_scratch(const trd_driver_launch_t *l, const trd_scratch_spec_t *s, uint64_t need[2]);

/* One block for both scratch areas of a launch: global at offset 0, profile after it at palign
 * (*profile_offset), *total bytes in all. 0 when that does not fit in 64 bits (outputs untouched).
 * Two areas never share memory: a kernel with both would overwrite its own scratch. */
int trd_scratch_layout(uint64_t global_bytes, uint64_t profile_bytes, uint64_t palign, uint64_t *profile_offset,
                       uint64_t *total);

#endif /* TRD_DRIVERS_COMMON_SCRATCH_H */
