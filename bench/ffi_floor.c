/* SPDX-License-Identifier: Apache-2.0 */
/* ffi_floor.c: the least an XLA FFI handler can do to launch a kernel, for bench_xla's `floor` path.
 *
 * One handler, ffi_floor_add: no attributes, no state, no checks; it takes XLA's stream and the three buffers'
 * addresses and calls cuLaunchKernel on a function loaded beforehand (ffi_floor_load, from Python through ctypes,
 * with XLA's device context current). Whatever a call of it costs inside jax.jit beyond XLA's own kernel is what
 * XLA does for any custom call; trident's handler costs at least that. Not a part of trident: a benchmark's
 * yardstick, built as a module next to bench_xla. */
#include <cuda.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "xla/ffi/api/c_api.h"

#define FLOOR_API __attribute__((visibility("default")))
FLOOR_API int ffi_floor_load(const char *path, const char *name, int n, int warps, int shared_bytes);
FLOOR_API XLA_FFI_Error *ffi_floor_add(XLA_FFI_CallFrame *f);

static CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                          void **, void **);
static CUfunction fn;
static unsigned threads, shared;
static int count;

/* Loads `name` from the cubin at `path` into device 0's primary context (XLA's). 0 on success, else a CUresult or
 * -1 (no libcuda, unreadable file). */
FLOOR_API int ffi_floor_load(const char *path, const char *name, int n, int warps, int shared_bytes)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        return -1;
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set)(CUcontext);
    CUresult (*load)(CUmodule *, const void *);
    CUresult (*get)(CUfunction *, CUmodule, const char *);
    *(void **)&retain = dlsym(h, "cuDevicePrimaryCtxRetain");
    *(void **)&set = dlsym(h, "cuCtxSetCurrent");
    *(void **)&load = dlsym(h, "cuModuleLoadData");
    *(void **)&get = dlsym(h, "cuModuleGetFunction");
    *(void **)&launch = dlsym(h, "cuLaunchKernel");
    if (!retain || !set || !load || !get || !launch)
        return -1;
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *image = size > 0 ? malloc((size_t)size) : NULL;
    int ok = image && fread(image, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok) {
        free(image);
        return -1;
    }
    CUcontext ctx;
    CUmodule mod;
    CUresult r;
    if ((r = retain(&ctx, 0)) != CUDA_SUCCESS || (r = set(ctx)) != CUDA_SUCCESS ||
        (r = load(&mod, image)) != CUDA_SUCCESS || (r = get(&fn, mod, name)) != CUDA_SUCCESS) {
        free(image);
        return (int)r;
    }
    free(image);
    count = n;
    threads = (unsigned)warps * 32u;
    shared = (unsigned)shared_bytes;
    return 0;
}

/* the 0.4 header's name of the metadata extension's base; the version a runtime hears: the older of its own and
 * the header's (as libtrident_xla's handlers, xla/ffi.c) */
#if XLA_FFI_API_MINOR >= 4
typedef XLA_FFI_InternalExtension floor_ext;
#else
typedef XLA_FFI_Extension_Base floor_ext;
#endif

static XLA_FFI_Error *fail(const XLA_FFI_Api *api, const char *msg)
{
    XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg, XLA_FFI_Error_Code_INTERNAL};
    return api->XLA_FFI_Error_Create(&a);
}

/* out = x + y over `count` elements: (x, y) -> out; the kernel takes (x, y, n, out) and two scratch pointers (null). */
FLOOR_API XLA_FFI_Error *ffi_floor_add(XLA_FFI_CallFrame *f)
{
    for (floor_ext *e = f->extension_start; e; e = e->next) {
        if (e->type == XLA_FFI_Extension_Metadata) {
            XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)e)->metadata;
            int minor = f->api->api_version.minor_version;
            m->api_version = (XLA_FFI_Api_Version){XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR,
                                                   minor < XLA_FFI_API_MINOR ? minor : XLA_FFI_API_MINOR};
            m->traits = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE;
            return NULL;
        }
    }
    if (f->stage != XLA_FFI_ExecutionStage_EXECUTE)
        return NULL;
    if (!fn || f->args.size != 2 || f->rets.size != 1 || f->args.types[0] != XLA_FFI_ArgType_BUFFER ||
        f->args.types[1] != XLA_FFI_ArgType_BUFFER || f->rets.types[0] != XLA_FFI_RetType_BUFFER)
        return fail(f->api, "ffi_floor_add: call ffi_floor_load first; takes buffers (x, y) -> out");
    XLA_FFI_Stream_Get_Args sa = {XLA_FFI_Stream_Get_Args_STRUCT_SIZE, NULL, f->ctx, NULL};
    XLA_FFI_Error *err = f->api->XLA_FFI_Stream_Get(&sa);
    if (err)
        return err;
    void *x = ((XLA_FFI_Buffer *)f->args.args[0])->data, *y = ((XLA_FFI_Buffer *)f->args.args[1])->data;
    void *out = ((XLA_FFI_Buffer *)f->rets.rets[0])->data, *null = NULL;
    int n = count;
    void *params[6] = {&x, &y, &n, &out, &null, &null}; /* add_out_kernel(x, y, n, out) + scratch */
    if (launch(fn, 1, 1, 1, threads, 1, 1, shared, (CUstream)sa.stream, params, NULL) != CUDA_SUCCESS)
        return fail(f->api, "ffi_floor_add: cuLaunchKernel failed");
    return NULL;
}
