/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c: the hot path.
 *
 * A Level Zero kernel handle carries its arguments: zeKernelSetArgumentValue
 * mutates it, and zeCommandListAppendLaunchKernel captures the arguments set
 * at that moment. Two threads launching one kernel must therefore never
 * interleave their argument setting and append on one handle. Each module
 * keeps ZDRV_KSLOTS handles, each with its own lock: a launch takes the first
 * free slot starting from the one its thread used last (trylock), so
 * concurrent launches spread over handles instead of queueing on one lock,
 * and a thread that launches alone keeps reusing one handle. Extra handles
 * are created on first contention only. No lock is shared by all streams:
 * the stream's own lock (Level Zero forbids concurrent appends to one
 * command list) and one slot's lock are held, always in that order.
 *
 * Arguments, in Triton's Intel launcher order: the kernel's parameters
 * (params[i], param_sizes[i] bytes), then the global and profile scratch
 * pointers (8 bytes each), then, for kernels that declare it, the
 * shared-local-memory argument (set once per handle: size = shared, value
 * NULL). Triton's Intel launcher passes NULL scratch pointers, and its
 * kernels report zero scratch sizes; trident passes NULL when a size is 0
 * and otherwise the caller's pointer or the stream's arena, as the CUDA and
 * HIP drivers do (drivers/common/scratch.h). */
#include <stdlib.h>
#include <string.h>

#include "drivers/common/scratch.h"
#include "drivers/levelzero/levelzero.h"

static _Thread_local unsigned zdrv_slot_hint;

static struct zdrv_kslot *zdrv_slot_acquire(struct zdrv_module *m, trd_status_t *st)
{
    unsigned start = zdrv_slot_hint % ZDRV_KSLOTS;
    struct zdrv_kslot *slot = NULL;
    unsigned index = start;
    for (unsigned i = 0; i < ZDRV_KSLOTS && !slot; i++) {
        index = (start + i) % ZDRV_KSLOTS;
        if (pthread_mutex_trylock(&m->slots[index].lock) == 0)
            slot = &m->slots[index];
    }
    if (!slot) {
        index = start;
        slot = &m->slots[index];
        pthread_mutex_lock(&slot->lock);
    }
    if (!slot->kernel && (*st = zdrv_kernel_new(m, &slot->kernel)) != TRD_OK) {
        slot->kernel = NULL;
        pthread_mutex_unlock(&slot->lock);
        return NULL;
    }
    zdrv_slot_hint = index;
    return slot;
}

/* The scratch pointers of one launch (drivers/common/scratch.h): the
 * caller's, else the stream's arena (a bare command list's: the device's
 * for that list). */
static trd_status_t zdrv_scratch_for(struct zdrv_module *m, struct zdrv_stream *s, ze_command_list_handle_t list,
                                     const trd_driver_launch_t *l, void **gs, void **ps, trd_arena_t **held)
{
    trd_arena_t *a = NULL;
    if (trd_scratch_wanted(&m->scratch, l))
        a = s ? &s->arena : trd_arena_set_find(&m->dev->foreign, list);
    uint64_t ptr[2];
    trd_status_t st = trd_scratch_get(a, &m->scratch, l, ptr, held);
    if (st == TRD_OK) {
        *gs = (void *)(uintptr_t)ptr[0];
        *ps = (void *)(uintptr_t)ptr[1];
    }
    return st;
}

/* Sets the arguments on the slot's kernel and appends it; the caller holds
 * the stream's lock (when there is a stream object). */
static trd_status_t zdrv_set_and_append(struct zdrv_module *m, ze_command_list_handle_t list,
                                        const trd_driver_launch_t *l, void *gs, void *ps)
{
    const struct zdrv_api *api = m->dev->api;
    trd_status_t st = TRD_OK;
    struct zdrv_kslot *slot = zdrv_slot_acquire(m, &st);
    if (!slot)
        return st;
    ze_kernel_handle_t k = slot->kernel;
    ze_result_t r = ZE_RESULT_SUCCESS;
    uint32_t i;
    for (i = 0; i < l->num_params && r == ZE_RESULT_SUCCESS; i++)
        r = api->zeKernelSetArgumentValue(k, i, l->param_sizes[i], l->params[i]);
    if (r == ZE_RESULT_SUCCESS && (r = api->zeKernelSetArgumentValue(k, i++, sizeof gs, &gs)) == ZE_RESULT_SUCCESS)
        r = api->zeKernelSetArgumentValue(k, i++, sizeof ps, &ps);
    if (r != ZE_RESULT_SUCCESS) {
        st = zdrv_fail(r, "zeKernelSetArgumentValue", "setting argument %u", i - 1);
        goto out;
    }
    ze_group_count_t count = {l->grid[0], l->grid[1], l->grid[2]};
    if ((r = api->zeCommandListAppendLaunchKernel(list, k, &count, NULL, 0, NULL)) != ZE_RESULT_SUCCESS)
        st = zdrv_fail(r, "zeCommandListAppendLaunchKernel", "appending (%u, %u, %u) groups of %u work-items",
                       l->grid[0], l->grid[1], l->grid[2], m->group_size);
out:
    pthread_mutex_unlock(&slot->lock);
    return st;
}

trd_status_t zdrv_launch(void *module, void *stream, void *native, const trd_driver_launch_t *l)
{
    struct zdrv_module *m = module;
    struct zdrv_device *dev = m->dev;
    struct zdrv_stream *s = stream;
    if (l->grid[0] == 0 || l->grid[1] == 0 || l->grid[2] == 0)
        return TRD_OK;
    if (l->num_params != m->num_params)
        return trd_drv_error(TRD_ERR_INVALID_ARGUMENT, "the kernel takes %u parameters, the launch passes %u",
                                m->num_params, l->num_params);
    const ze_device_compute_properties_t *c = &dev->info->compute;
    /* a maximum of 0 means the driver did not say */
    if ((c->maxGroupCountX && l->grid[0] > c->maxGroupCountX) ||
        (c->maxGroupCountY && l->grid[1] > c->maxGroupCountY) ||
        (c->maxGroupCountZ && l->grid[2] > c->maxGroupCountZ))
        return trd_drv_error(TRD_ERR_LIMIT,
                                "grid (%u, %u, %u) exceeds the group counts levelzero:%u allows (%u, %u, %u)",
                                l->grid[0], l->grid[1], l->grid[2], dev->ordinal, c->maxGroupCountX,
                                c->maxGroupCountY, c->maxGroupCountZ);
    if (!s && !native)
        s = dev->defstream;
    void *gs, *ps;
    trd_arena_t *held;
    trd_status_t st;
    if (!s) {
        /* A caller's command list passed per launch: order after its earlier
         * commands; the caller keeps it from other threads meanwhile. */
        ze_command_list_handle_t list = native;
        if ((st = zdrv_scratch_for(m, NULL, list, l, &gs, &ps, &held)) != TRD_OK)
            return st;
        ze_result_t r = dev->api->zeCommandListAppendBarrier(list, NULL, 0, NULL);
        st = r == ZE_RESULT_SUCCESS ? zdrv_set_and_append(m, list, l, gs, ps)
                                    : zdrv_fail(r, "zeCommandListAppendBarrier", "ordering the launch on a native "
                                                                                 "command list");
        trd_arena_release(held);
        return st;
    }
    pthread_mutex_lock(&s->lock);
    if ((st = zdrv_scratch_for(m, s, s->list, l, &gs, &ps, &held)) == TRD_OK) {
        if ((st = zdrv_stream_order(s)) == TRD_OK && (st = zdrv_set_and_append(m, s->list, l, gs, ps)) == TRD_OK)
            s->busy = 1;
        trd_arena_release(held);
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}
