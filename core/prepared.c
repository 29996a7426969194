/* SPDX-License-Identifier: Apache-2.0 */
/* prepared.c: a kernel loaded for one device and launched from the caller's packed parameters (native pointers,
 * a native stream): what the XLA handlers do at every execution, and any C caller that packs its own. The
 * parameter sizes and the scratch each program needs are computed once, at trd_kernel_prepare; a launch checks
 * the grid, the parameter count and the scratch sizes (overflow-checked), copies the parameter pointers to the
 * stack (the driver appends Triton's scratch pointers after them) and calls the driver: no lock, no allocation. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"


struct trd_prepared {
    trd_kernel_t *kernel;
    trd_device_t *dev;
    struct trd_loaded *loaded;
    uint32_t num_ctas;
    uint64_t scratch[2];   /* global and profile scratch bytes per program, aligned; 0: none */
    uint32_t num_params;
    uint32_t sizes[];      /* num_params + TRD_DRIVER_EXTRA_PARAMS */
};

static const struct trd_param *launch_param(const trd_kernel_t *k, uint32_t index)
{
    for (uint32_t i = 0, j = 0; i < k->src.sig.count; i++)
        if (k->src.sig.params[i].type != TRD_T_CONSTEXPR && j++ == index)
            return &k->src.sig.params[i];
    return NULL;
}

TRD_API trd_status_t trd_kernel_param_info(const trd_kernel_t *k, uint32_t index, trd_param_info_t *info)
{
    if (!k || !info)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_param_info: NULL argument");
    trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_param_info_t), "trd_param_info_t");
    if (st != TRD_OK)
        return st;
    const struct trd_param *p = launch_param(k, index);
    if (!p)
        return trd_error_set(TRD_ERR_NOT_FOUND, "kernel '%s' has %u launch parameters (%s), not %u", k->src.name,
                             k->src.sig.num_params, k->src.sig.canonical, index + 1);
    trd_param_info_t full;
    trd_param_info_of(p, &full);
    trd_struct_fill(info, &full, sizeof full);
    return TRD_OK;
}

void trd_param_info_of(const struct trd_param *p, trd_param_info_t *info)
{
    int ptr = p->type == TRD_T_PTR;
    *info = (trd_param_info_t){
        .struct_size = sizeof *info,
        .kind = ptr ? TRD_PARAM_POINTER : p->type == TRD_T_NVTMADESC ? TRD_PARAM_TENSOR_MAP : TRD_PARAM_SCALAR,
        .size = p->size,
        .pointer_depth = ptr ? (p->depth ? p->depth : 1) : 0,
        .name = p->name,
        .scalar = trd_scalar_name(!ptr ? p->type : p->depth ? p->base : p->elem),
    };
}

TRD_API trd_status_t trd_kernel_prepare(trd_kernel_t *k, trd_device_t *dev, trd_prepared_t **out)
{
    if (!k || !dev || !out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_kernel_prepare: NULL argument");
    struct trd_loaded *l;
    trd_status_t st = trd_kernel_loaded(k, dev, &l);
    if (st != TRD_OK)
        return st;
    uint32_t n = k->src.sig.num_params;
    struct trd_prepared *p = calloc(1, sizeof *p + (n + TRD_DRIVER_EXTRA_PARAMS) * sizeof(uint32_t));
    if (!p)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    p->kernel = k;
    p->dev = dev;
    p->loaded = l;
    p->num_params = n;
    for (uint32_t i = 0; i < n; i++)
        p->sizes[i] = launch_param(k, i)->size;
    const struct trd_meta *m = &l->target->meta;
    p->num_ctas = m->num_ctas ? m->num_ctas : 1;
    trd_scratch_per_program(m, p->scratch);
    *out = p;
    return TRD_OK;
}

TRD_API void trd_prepared_destroy(trd_prepared_t *p)
{
    free(p);
}

TRD_API trd_status_t trd_prepared_native(const trd_prepared_t *p, trd_prepared_native_t *info)
{
    if (!p || !info)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_prepared_native: NULL argument");
    trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_prepared_native_t), "trd_prepared_native_t");
    if (st != TRD_OK)
        return st;
    const struct trd_target *t = p->loaded->target;
    const struct trd_meta *m = &t->meta;
    trd_prepared_native_t full = {
        .struct_size = sizeof full,
        .format = t->format,
        .image = t->image,
        .image_size = t->size,
        .entry = p->kernel->src.name, /* the symbol every driver loads (trd_kernel_loaded's module entry) */
        .block = {m->num_warps * m->warp_size, 1, 1},
        .cluster = {p->num_ctas > 1 ? p->num_ctas : 0, p->num_ctas > 1, p->num_ctas > 1},
        .shared = m->shared,
        .flags = (m->flags & TRD_MODULE_PDL ? TRD_NATIVE_PDL : 0u) |
                 (m->flags & TRD_MODULE_COOPERATIVE ? TRD_NATIVE_COOPERATIVE : 0u),
        .extra_params = 2,
    };
    trd_struct_fill(info, &full, sizeof full);
    return TRD_OK;
}

static trd_status_t scratch_need(const struct trd_prepared *p, const uint32_t grid[3], uint64_t need[2])
{
    return trd_scratch_need(p->scratch, p->num_ctas, grid, p->kernel->src.name, p->dev->uri, need);
}

TRD_API trd_status_t trd_prepared_scratch(const trd_prepared_t *p, const uint32_t grid[3], uint64_t *global_bytes,
                                          uint64_t *profile_bytes)
{
    if (!p || !grid)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_prepared_scratch: NULL argument");
    trd_status_t st = trd_grid_check(grid, p->kernel->src.name);
    uint64_t need[2];
    if (st != TRD_OK || (st = scratch_need(p, grid, need)) != TRD_OK)
        return st;
    if (global_bytes)
        *global_bytes = need[0];
    if (profile_bytes)
        *profile_bytes = need[1];
    return TRD_OK;
}

/* The launch path: no lock, no allocation. */
TRD_API trd_status_t trd_prepared_launch(const trd_prepared_t *p, const trd_native_launch_t *l)
{
    if (!p || !l)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_prepared_launch: NULL argument");
    if (l->struct_size < sizeof(trd_native_launch_t))
        return trd_struct_check(l->struct_size, sizeof(trd_native_launch_t), "trd_native_launch_t");
    const char *name = p->kernel->src.name;
    if (l->flags)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': trd_native_launch_t.flags is 0x%x; it is reserved (0)",
                             name, l->flags);
    if (l->num_params != p->num_params || (l->num_params && !l->params))
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s' takes %u parameters (%s), the launch passes %u%s",
                             name, p->num_params, p->kernel->src.sig.canonical, l->num_params,
                             l->num_params && !l->params ? " and no params array" : "");
    if (l->stream && l->stream->dev != p->dev)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s' is prepared for %s, the stream is on %s", name,
                             p->dev->uri, l->stream->dev->uri);
    trd_status_t st = trd_grid_check(l->grid, name);
    uint64_t need[2];
    if (st != TRD_OK || (st = scratch_need(p, l->grid, need)) != TRD_OK)
        return st;
    void *const given[2] = {l->global_scratch, l->profile_scratch};
    const uint64_t have[2] = {l->global_scratch_size, l->profile_scratch_size};
    for (int i = 0; i < 2; i++)
        if (given[i] && have[i] < need[i])
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                                 "kernel '%s' on %s: grid %ux%ux%u needs %llu bytes of %s scratch, the launch gives %llu",
                                 name, p->dev->uri, l->grid[0], l->grid[1], l->grid[2], (unsigned long long)need[i],
                                 i ? "profile" : "global", (unsigned long long)have[i]);
    if (l->grid[0] == 0 || l->grid[1] == 0 || l->grid[2] == 0)
        return TRD_OK;
    void *params[TRD_MAX_LAUNCH_PARAMS + TRD_DRIVER_EXTRA_PARAMS];
    if (p->num_params)
        memcpy(params, l->params, p->num_params * sizeof *params);
    trd_driver_launch_t dl = {
        .struct_size = sizeof dl,
        .num_params = p->num_params,
        .grid = {l->grid[0], l->grid[1], l->grid[2]},
        .params = params,
        .param_sizes = (uint32_t *)p->sizes,
        .global_scratch = need[0] ? l->global_scratch : NULL,
        .profile_scratch = need[1] ? l->profile_scratch : NULL,
        .global_scratch_bytes = need[0],
        .profile_scratch_bytes = need[1],
    };
    st = p->dev->drv->ops->launch(p->loaded->module, l->stream ? l->stream->h : NULL,
                                  l->stream ? NULL : l->native_stream, &dl);
    if (st != TRD_OK)
        return trd_error_wrap(st, "launching kernel '%s' on %s", name, p->dev->uri);
    /* named by a failed synchronize, as trd_kernel_launch does */
    if (l->stream && atomic_load_explicit(&l->stream->last_kernel, memory_order_relaxed) != p->kernel->iname)
        atomic_store_explicit(&l->stream->last_kernel, p->kernel->iname, memory_order_relaxed);
    return TRD_OK;
}
