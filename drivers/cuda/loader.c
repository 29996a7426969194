/* SPDX-License-Identifier: Apache-2.0 */
/* loader.c: libcuda is dlopened at run time, so that one build runs on hosts
 * with and without NVIDIA GPUs: drivers/common's loader with CUDA's table. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "drivers/cuda/cuda_driver.h"

#define CUDA_STR_(x) #x
#define CUDA_STR(x) CUDA_STR_(x) /* the name cuda.h maps a function to */

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

/* cuGetProcAddress at our header's API version first, so the pointer always
 * matches the prototype we call; else dlsym of the name cuda.h maps it to. */
static void *cuda_resolve(void *dl, const trd_vlib_symbol_t *sym)
{
    get_proc_fn gpa = (get_proc_fn)dlsym(dl, "cuGetProcAddress_v2");
    if (gpa) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult q;
        if (gpa(sym->name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q) == CUDA_SUCCESS &&
            q == CU_GET_PROC_ADDRESS_SUCCESS && fn)
            return fn;
    }
    return dlsym(dl, sym->link_name);
}

static const trd_vlib_symbol_t cuda_symbols[] = {
/* written out, not through TRD_VLIB_*: there `name` would reach #field already expanded by cuda.h
 * (cuMemAlloc -> cuMemAlloc_v2), and cuGetProcAddress takes the API's name */
#define CUDA_REQ(name) {#name, CUDA_STR(name), offsetof(struct cuda_api, name), 1},
#define CUDA_OPT(name) {#name, CUDA_STR(name), offsetof(struct cuda_api, name), 0},
    CUDA_REQUIRED_SYMBOLS(CUDA_REQ)
    CUDA_OPTIONAL_SYMBOLS(CUDA_OPT)
#undef CUDA_REQ
#undef CUDA_OPT
};

static const char *const cuda_defaults[] = {"libcuda.so.1", "libcuda.so", NULL};

#define CUDA_XSTR(x) CUDA_STR(x)
static const trd_vlib_spec_t cuda_spec = {
    .what = "CUDA driver library",
    .config_key = "[driver.cuda] library",
    .defaults = cuda_defaults,
    .symbols = cuda_symbols,
    .num_symbols = sizeof cuda_symbols / sizeof *cuda_symbols,
    .api_size = sizeof(struct cuda_api),
    .missing_hint = "(needed at CUDA API " CUDA_XSTR(CUDA_VERSION) ": the NVIDIA driver is too old)",
    .resolve = cuda_resolve,
};

trd_status_t cuda_api_load(trd_vlib_t *lib, struct cuda_api *api, const char *paths)
{
    return trd_vlib_open(lib, &cuda_spec, paths, api);
}

void cuda_api_unload(trd_vlib_t *lib, struct cuda_api *api)
{
    trd_vlib_close(lib);
    memset(api, 0, sizeof *api);
}
