/* SPDX-License-Identifier: Apache-2.0 */
/* loader.c: the HIP runtime library and its entry points (symbols.h),
 * through drivers/common's loader. */
#include <dlfcn.h>

#include "drivers/hip/hip.h"

static const trd_vlib_symbol_t hip_symbols[] = {
#define HIP_REQ(ret, name, params) TRD_VLIB_REQUIRED(struct hip_api, name, #name)
#define HIP_OPT(ret, name, params) TRD_VLIB_OPTIONAL(struct hip_api, name, #name)
    HIP_SYMBOLS(HIP_REQ, HIP_OPT)
#undef HIP_REQ
#undef HIP_OPT
};

/* ROCm 6, ROCm 5 (Debian 12's libamdhip64-5), then the development link. */
static const char *const hip_defaults[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", NULL};

static const trd_vlib_spec_t hip_spec = {
    .what = "HIP runtime",
    .config_key = "[driver.hip] library",
    .defaults = hip_defaults,
    .symbols = hip_symbols,
    .num_symbols = sizeof hip_symbols / sizeof *hip_symbols,
    .api_size = sizeof(struct hip_api),
    .missing_hint = "(not a usable HIP runtime)",
};

trd_status_t hip_library_open(struct hip_driver *d, const char *configured)
{
    trd_status_t st = trd_vlib_open(&d->lib, &hip_spec, configured, &d->api);
    if (st != TRD_OK)
        return st;
    /* HIP cannot be unloaded once initialized (its runtime keeps threads and
     * state, and has no deinit): pin it in the process. */
    void *pin = dlopen(d->lib.path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
    if (pin)
        dlclose(pin);
    if (d->lib.tried[0])
        trd_drv_log(TRD_LOG_INFO, "hip: using %s after %s", d->lib.path, d->lib.tried);
    else
        trd_drv_log(TRD_LOG_INFO, "hip: using %s", d->lib.path);
    return TRD_OK;
}

void hip_library_close(struct hip_driver *d)
{
    trd_vlib_close(&d->lib);
}
