/* api.c: libcuda is dlopened at run time, so that one build runs on hosts
 * with and without NVIDIA GPUs. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "drivers/cuda/cuda_driver.h"

#define CUDA_STR_(x) #x
#define CUDA_STR(x) CUDA_STR_(x) /* the name cuda.h maps a function to */

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

/* Resolves one symbol: cuGetProcAddress at our header's API version first. */
static void *resolve(void *dl, get_proc_fn gpa, const char *base, const char *versioned)
{
    void *fn = NULL;
    if (gpa) {
        CUdriverProcAddressQueryResult q;
        if (gpa(base, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q) == CUDA_SUCCESS &&
            q == CU_GET_PROC_ADDRESS_SUCCESS && fn)
            return fn;
        fn = NULL;
    }
    fn = dlsym(dl, versioned);
    return fn;
}

static void append(char *buf, size_t cap, const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(buf);
    if (n < cap)
        snprintf(buf + n, cap - n, fmt, a, b);
}

trd_status_t cuda_api_load(struct cuda_api *api, const char *paths)
{
    memset(api, 0, sizeof *api);
    static const char default_paths[] = "libcuda.so.1:libcuda.so";
    const char *list = paths && *paths ? paths : default_paths;
    char tried[2048] = "";
    void *dl = NULL;
    const char *p = list;
    while (*p && !dl) {
        const char *c = strchr(p, ':');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        char name[1024];
        if (len > 0 && len < sizeof name) {
            memcpy(name, p, len);
            name[len] = '\0';
            dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
            if (!dl) {
                const char *e = dlerror();
                append(tried, sizeof tried, "%s: %s; ", name, e ? e : "dlopen failed");
            }
        }
        if (!c)
            break;
        p = c + 1;
    }
    size_t tl = strlen(tried);
    if (tl >= 2)
        tried[tl - 2] = '\0'; /* the last "; " */
    if (!dl)
        return trd_driver_error(TRD_ERR_UNSUPPORTED, "libcuda not found (tried %s)", tried);
    get_proc_fn gpa = (get_proc_fn)dlsym(dl, "cuGetProcAddress_v2");
    const char *missing = NULL;
#define CUDA_REQUIRED(name)                                                             \
    *(void **)&api->name = resolve(dl, gpa, #name, CUDA_STR(name));                     \
    if (!api->name && !missing)                                                         \
        missing = #name;
#define CUDA_OPTIONAL(name) *(void **)&api->name = resolve(dl, gpa, #name, CUDA_STR(name));
    CUDA_REQUIRED_SYMBOLS(CUDA_REQUIRED)
    CUDA_OPTIONAL_SYMBOLS(CUDA_OPTIONAL)
#undef CUDA_REQUIRED
#undef CUDA_OPTIONAL
    if (missing) {
        Dl_info info;
        const char *where = dladdr((void *)api->cuInit, &info) && info.dli_fname ? info.dli_fname : list;
        dlclose(dl);
        memset(api, 0, sizeof *api);
        return trd_driver_error(TRD_ERR_UNSUPPORTED,
                                "%s lacks %s (needed at CUDA API %d): the NVIDIA driver is too old", where, missing,
                                CUDA_VERSION);
    }
    api->dl = dl;
    return TRD_OK;
}

void cuda_api_unload(struct cuda_api *api)
{
    if (api->dl)
        dlclose(api->dl);
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
    return trd_driver_error(map_status(r), "%s: %s (%d): %s%s", what, name ? name : "CUDA_ERROR", (int)r,
                            text ? text : "no description", fault_hint(r));
}
