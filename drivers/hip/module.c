/* SPDX-License-Identifier: Apache-2.0 */
/* module.c: HSACO code objects. An HSACO is final machine code: the options
 * that shape code (debug, extern_libs, waves_per_eu, ...) took effect when
 * Triton compiled it, and the launch values (num_warps, warp_size, num_ctas,
 * shared) come with its metadata through the module desc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/hip/hip.h"

#define JIT_LOG_BYTES 8192

/* A top-level boolean of the canonical (compact) metadata JSON: 1, 0, or -1
 * when absent. */
static int hip_meta_bool(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = json ? strstr(json, pat) : NULL;
    if (!p)
        return -1;
    p += strlen(pat);
    return strncmp(p, "true", 4) == 0 ? 1 : strncmp(p, "false", 5) == 0 ? 0 : -1;
}

/* The options cannot change a compiled image: one that asks for something
 * the image was not compiled with is an error, not silently ignored. */
static trd_status_t hip_check_options(const trd_driver_module_desc_t *d)
{
    int32_t set = 0, debug = 0;
    if (trd_drv_options_is_set(d->options, "debug", &set) == TRD_OK && set &&
        trd_drv_options_get_bool(d->options, "debug", &debug) == TRD_OK) {
        int built = hip_meta_bool(d->metadata, "debug");
        if (built >= 0 && built != !!debug)
            return trd_drv_error(TRD_ERR_INVALID_ARGUMENT,
                                    "option debug=%s, but the HSACO was compiled with debug=%s (a compiled "
                                    "image cannot change: recompile it)",
                                    debug ? "true" : "false", built ? "true" : "false");
        if (built < 0)
            trd_drv_log(TRD_LOG_WARN, "hip: %s: option debug=%s cannot be checked (no 'debug' in the metadata)",
                           d->label, debug ? "true" : "false");
    }
    if (trd_drv_options_is_set(d->options, "extern_libs", &set) == TRD_OK && set)
        trd_drv_log(TRD_LOG_WARN, "hip: %s: extern_libs are linked when Triton compiles; a loaded HSACO ignores them",
                       d->label);
    return TRD_OK;
}

/* What the device and the library must offer for the module's launches. */
static trd_status_t hip_check_launch(const struct hip_device *dev, const trd_driver_module_desc_t *d, uint64_t block)
{
    const struct hip_api *api = &dev->drv->api;
    const struct hip_device_info *info = dev->info;
    if (block == 0 || block > info->props.max_threads_per_block)
        return trd_drv_error(TRD_ERR_LIMIT,
                                "num_warps %u x warp_size %u = %llu threads per block; the device allows 1 "
                                "to %u",
                                d->num_warps, d->warp_size, (unsigned long long)block,
                                info->props.max_threads_per_block);
    if (d->shared > info->props.max_shared_per_block_optin)
        return trd_drv_error(TRD_ERR_LIMIT, "%u bytes of shared memory per block; the device has %u",
                                d->shared, info->props.max_shared_per_block_optin);
    if (d->flags & TRD_MODULE_COOPERATIVE) {
        if (!info->cooperative)
            return trd_drv_error(TRD_ERR_UNSUPPORTED,
                                    "launch_cooperative_grid, but the device does not support cooperative "
                                    "launch (hipDeviceAttributeCooperativeLaunch is 0)");
        if (d->num_ctas <= 1 && !api->hipModuleLaunchCooperativeKernel)
            return trd_drv_error(TRD_ERR_UNSUPPORTED,
                                    "launch_cooperative_grid needs hipModuleLaunchCooperativeKernel, which %s "
                                    "does not export (ROCm 6 does)",
                                    dev->drv->lib.path);
    }
    if (d->num_ctas > 1) {
        if (!api->hipDrvLaunchKernelEx)
            return trd_drv_error(TRD_ERR_UNSUPPORTED,
                                    "num_ctas=%u needs a cluster launch through hipDrvLaunchKernelEx, which %s "
                                    "does not export",
                                    d->num_ctas, dev->drv->lib.path);
        if (info->cluster == 0)
            return trd_drv_error(TRD_ERR_UNSUPPORTED,
                                    "num_ctas=%u, but the device (%s) does not support cluster launch",
                                    d->num_ctas, info->arch);
    }
    if (d->flags & TRD_MODULE_PDL)
        trd_drv_log(TRD_LOG_DEBUG, "hip: %s: launch_pdl has no HIP equivalent: launches stay fully ordered",
                       d->label);
    return TRD_OK;
}

static trd_status_t hip_func_attr(const struct hip_api *api, hipFunction_t f, int attr, const char *name,
                                  const trd_driver_module_desc_t *d, int *value)
{
    hipError_t e = api->hipFuncGetAttribute(value, attr, f);
    if (e != HIP_SUCCESS)
        return hip_fail(api, e, "hipFuncGetAttribute(%s) of '%s' failed", name, d->entry);
    return TRD_OK;
}

trd_status_t hip_module_load(void *device, const trd_driver_module_desc_t *d, void **out, trd_load_info_t *info)
{
    struct hip_device *dev = device;
    const struct hip_api *api = &dev->drv->api;
    if (d->format != TRD_FORMAT_HSACO)
        return trd_drv_error(TRD_ERR_UNSUPPORTED,
                                "the hip driver loads HSACO code objects only, not image format %d",
                                d->format);
    uint64_t block = (uint64_t)d->num_warps * d->warp_size;
    trd_status_t st;
    if ((st = hip_check_options(d)) != TRD_OK || (st = hip_check_launch(dev, d, block)) != TRD_OK)
        return st;
    struct hip_module *m = calloc(1, sizeof *m);
    if (!m)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    int prev;
    if ((st = hip_device_enter(dev, &prev)) != TRD_OK) {
        free(m);
        return st;
    }
    /* The log buffers: AMD's runtime may leave them untouched, hence zeroed. */
    char *log = calloc(2, JIT_LOG_BYTES);
    if (!log) {
        hip_device_leave(dev, prev);
        free(m);
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    }
    char *errlog = log, *infolog = log + JIT_LOG_BYTES;
    int opts[] = {HIP_JIT_ERROR_LOG_BUFFER, HIP_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, HIP_JIT_INFO_LOG_BUFFER,
                  HIP_JIT_INFO_LOG_BUFFER_SIZE_BYTES, HIP_JIT_LOG_VERBOSE};
    void *vals[] = {errlog, (void *)(uintptr_t)(JIT_LOG_BYTES - 1), infolog, (void *)(uintptr_t)(JIT_LOG_BYTES - 1),
                    (void *)(uintptr_t)1};
    hipError_t e = api->hipModuleLoadDataEx(&m->module, d->image, 5, opts, vals);
    errlog[JIT_LOG_BYTES - 1] = infolog[JIT_LOG_BYTES - 1] = '\0';
    if (e != HIP_SUCCESS) {
        const char *jit = *errlog ? errlog : infolog;
        char why[512];
        hip_describe(api, e, why, sizeof why);
        st = trd_drv_error(hip_status(e), "hipModuleLoadDataEx (%llu bytes) failed: %s%s%.1000s",
                              (unsigned long long)d->image_size, why, *jit ? "; JIT log: " : "", jit);
        goto fail_log;
    }
    if (*infolog)
        trd_drv_log(TRD_LOG_DEBUG, "hip: loading %s on %s: %s", d->label, dev->uri, infolog);
    free(log);
    log = NULL;
    if ((e = api->hipModuleGetFunction(&m->function, m->module, d->entry)) != HIP_SUCCESS) {
        st = hip_fail(api, e, "hipModuleGetFunction('%s') failed", d->entry);
        goto fail_module;
    }
    int regs, local, max_threads;
    if ((st = hip_func_attr(api, m->function, HIP_FUNC_ATTR_NUM_REGS, "NUM_REGS", d, &regs)) != TRD_OK ||
        (st = hip_func_attr(api, m->function, HIP_FUNC_ATTR_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES", d, &local)) !=
            TRD_OK ||
        (st = hip_func_attr(api, m->function, HIP_FUNC_ATTR_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK", d,
                            &max_threads)) != TRD_OK)
        goto fail_module;
    if (max_threads <= 0 || block > (uint64_t)max_threads) {
        st = trd_drv_error(TRD_ERR_LIMIT,
                              "num_warps %u x warp_size %u = %llu threads per block, more than the %d the compiled "
                              "function allows (hipFuncGetAttribute MAX_THREADS_PER_BLOCK)",
                              d->num_warps, d->warp_size, (unsigned long long)block, max_threads);
        goto fail_module;
    }
    hip_device_leave(dev, prev);
    m->dev = dev;
    m->block_x = (uint32_t)block;
    m->num_ctas = d->num_ctas ? d->num_ctas : 1;
    m->shared = d->shared;
    m->cooperative = (d->flags & TRD_MODULE_COOPERATIVE) != 0;
    m->mode = m->num_ctas > 1 ? HIP_LAUNCH_CLUSTER : m->cooperative ? HIP_LAUNCH_COOPERATIVE : HIP_LAUNCH_PLAIN;
    snprintf(m->label, sizeof m->label, "%s on %s", d->label, dev->uri);
    trd_scratch_spec_from(&m->scratch, d, m->label);
    info->registers = regs > 0 ? (uint32_t)regs : 0;
    info->spills = local > 0 ? (uint32_t)local / 4 : 0;
    info->max_threads_per_block = (uint32_t)max_threads;
    info->from_cache = 0;
    *out = m;
    return TRD_OK;

fail_module:
    if ((e = api->hipModuleUnload(m->module)) != HIP_SUCCESS)
        trd_drv_log(TRD_LOG_WARN, "hip: hipModuleUnload after a failed load of %s returned %d", d->label, (int)e);
fail_log:
    free(log);
    hip_device_leave(dev, prev);
    free(m);
    return st;
}

void hip_module_unload(void *module)
{
    struct hip_module *m = module;
    if (!m)
        return;
    const struct hip_api *api = &m->dev->drv->api;
    int prev;
    if (hip_device_enter(m->dev, &prev) == TRD_OK) {
        /* launches of it may still be queued, on any stream of the device: HIP does not wait for them */
        hipError_t e = api->hipDeviceSynchronize();
        if (e != HIP_SUCCESS)
            hip_log_failure(m->dev, e, "hipDeviceSynchronize before unloading a module");
        if ((e = api->hipModuleUnload(m->module)) != HIP_SUCCESS)
            hip_log_failure(m->dev, e, "hipModuleUnload");
        hip_device_leave(m->dev, prev);
    }
    free(m);
}
