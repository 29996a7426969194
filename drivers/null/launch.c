/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c: the hot path. A real driver takes Triton's two scratch pointers
 * with trd_scratch_get from the stream's arena (drivers/common/scratch.h),
 * appends them after l->params[l->num_params - 1], calls its vendor's launch
 * and then trd_arena_release: no lock shared by all streams, no allocation
 * once warm. The null device runs nothing: every launch fails, saying so. */
#include "drivers/null/null.h"

trd_status_t null_launch(void *module, void *stream, void *native, const trd_driver_launch_t *l)
{
    (void)stream;
    (void)native;
    const struct null_module *m = module;
    return null_fail(NULL_ERROR_NO_KERNELS, "%s (grid %ux%ux%u) on null:%u", m->label, l->grid[0], l->grid[1],
                     l->grid[2], m->dev->ordinal);
}
