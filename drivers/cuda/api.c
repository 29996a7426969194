/* api.c: libcuda is dlopened at run time, so that one build runs on hosts
 * with and without NVIDIA GPUs. */
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
#define CUDA_REQ(name) TRD_VLIB_REQUIRED(struct cuda_api, name, CUDA_STR(name))
#define CUDA_OPT(name) TRD_VLIB_OPTIONAL(struct cuda_api, name, CUDA_STR(name))
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

static trd_status_t map_status(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY: return TRD_ERR_NO_MEMORY;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE: return TRD_ERR_INVALID_ARGUMENT;
    case CUDA_ERROR_NO_DEVICE: return TRD_ERR_NO_DEVICE;
    case CUDA_ERROR_NOT_FOUND: return TRD_ERR_NOT_FOUND;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_SOURCE: return TRD_ERR_FORMAT;
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NOT_SUPPORTED: return TRD_ERR_UNSUPPORTED;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: return TRD_ERR_LIMIT;
    default: return TRD_ERR_DEVICE;
    }
}

/* What a kernel's fault on the device means, after CUDA's own words: the
 * error is sticky (every later call in the context fails with it). */
static const char *fault_hint(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
        return "; " TRD_DRIVER_FAULT_HINT "; CUDA keeps this error: every later call on the device fails with it "
               "(run in a new process)";
    case CUDA_ERROR_ASSERT:
        return "; a device-side assertion of the kernel failed; CUDA keeps this error: every later call on the "
               "device fails with it (run in a new process)";
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
        return "; the kernel faulted on the device; CUDA keeps this error: every later call on the device fails "
               "with it (run in a new process)";
    default:
        return "";
    }
}

trd_status_t cuda_error(const struct cuda_api *api, CUresult r, const char *fmt, ...)
{
    char what[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *name = NULL, *text = NULL;
    if (api->cuGetErrorName)
        api->cuGetErrorName(r, &name);
    if (api->cuGetErrorString)
        api->cuGetErrorString(r, &text);
    return trd_drv_error(map_status(r), "%s: %s (%d): %s%s", what, name ? name : "CUDA_ERROR", (int)r,
                            text ? text : "no description", fault_hint(r));
}
