/* SPDX-License-Identifier: Apache-2.0 */
/* ffi_floor.c: the least an XLA FFI handler can do to launch a kernel, for bench_xla's `floor` and
 * `floor+record` paths.
 *
 * ffi_floor_add: no attributes, no state, no checks; it takes XLA's stream and the three buffers' addresses and
 * calls cuLaunchKernel on a function loaded beforehand (ffi_floor_load, from Python through ctypes, with XLA's
 * device context current). Whatever a call of it costs inside jax.jit beyond XLA's own kernel is what XLA does for
 * any custom call; trident's handler costs at least that. Under XLA's command buffers XLA stream-captures it (a
 * child graph, traced again when the buffers move).
 *
 * ffi_floor_record: the least a RECORD-stage handler can do (FFI API 0.4 with record_c_api.h): on Create one
 * create_launch of the same cubin (the image ffi_floor_load read, kept alive: XLA caches loaded kernels by name and
 * pointer), on Update one update_launch with the new addresses. ffi_floor_record_register registers it as the
 * target bench_ffi_floor_add_record through XLA's API table (jax's register_ffi_target drops a bundle's record
 * handler; the table is the one ffi_floor_add's metadata query saw). What moving inputs cost a call on that path
 * is XLA's own per-custom-call update work: trident's record handler (xla/record.c) costs at least that.
 *
 * ffi_floor_load_pdl loads a second image of the add, made for programmatic dependent launch (its entry waits with
 * griddepcontrol.wait before it reads, as trident.jax compiles sm90 kernels by default: python/trident/jax/pdl.py);
 * ffi_floor_record_register(1) registers bench_ffi_floor_add_record_pdl, whose record handler creates its node with
 * uses_pdl: the floor of a record handler whose kernel XLA joins with PDL edges, the yardstick of trident.jax's.
 *
 * ffi_floor_record_register(2) registers bench_ffi_floor_add_record_state: the same record handler over a state of
 * one cache line made at INSTANTIATE (the add's count, read from it), fetched with XLA_FFI_State_Get on each record:
 * the least a record handler that serves more than one kernel (and so keeps its facts per call) can do.
 *
 * Not a part of trident: a benchmark's yardstick, built as a module next to bench_xla. */
#include <cuda.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xla/ffi/api/c_api.h"
/* the RECORD stage (API 0.4) with its record extension (record_c_api.h): as libtrident_xla's xla/ffi.h */
#if XLA_FFI_API_MINOR >= 4 && defined(__has_include)
#if __has_include(<xla/ffi/api/record_c_api.h>)
#include <xla/ffi/api/record_c_api.h>
#define FLOOR_HAVE_RECORD 1
#endif
#endif
#ifndef FLOOR_HAVE_RECORD
#define FLOOR_HAVE_RECORD 0
#endif

#define FLOOR_API __attribute__((visibility("default")))
FLOOR_API int ffi_floor_load(const char *path, const char *name, int n, int warps, int shared_bytes);
FLOOR_API int ffi_floor_load_pdl(const char *path, const char *name);
FLOOR_API XLA_FFI_Error *ffi_floor_add(XLA_FFI_CallFrame *f);
FLOOR_API XLA_FFI_Error *ffi_floor_add_pdl(XLA_FFI_CallFrame *f);
FLOOR_API const char *ffi_floor_record_register(int which);
FLOOR_API void *ffi_floor_state_type_id(void);
FLOOR_API void *ffi_floor_state_type_info(void);

static CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                          void **, void **);
static unsigned threads, shared;
static int count;
/* The add's two images: [0] as Triton compiled it, [1] made for PDL. The cubin and the kernel's name are kept for
 * the record handler's create_launch. */
static struct floor_kernel {
    CUfunction fn;
    char *image, *entry;
    size_t image_size;
} kernels[2];
/* XLA's API table, from ffi_floor_add's metadata query at its registration: ffi_floor_record_register's */
static _Atomic(const XLA_FFI_Api *) table;

/* Loads `name` from the cubin at `path` into device 0's primary context (XLA's) as kernels[k], once a process. 0 on
 * success, else a CUresult, -1 (no libcuda, unreadable file, no memory) or -2 (loaded already). */
static int load_kernel(int k, const char *path, const char *name)
{
    struct floor_kernel *K = &kernels[k];
    if (K->image)
        return -2;
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
    char *bytes = size > 0 ? malloc((size_t)size) : NULL;
    size_t len = strlen(name) + 1;
    char *copy = malloc(len);
    int ok = bytes && copy && fread(bytes, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok) {
        free(copy);
        free(bytes);
        return -1;
    }
    CUcontext ctx;
    CUmodule mod;
    CUresult r;
    if ((r = retain(&ctx, 0)) != CUDA_SUCCESS || (r = set(ctx)) != CUDA_SUCCESS ||
        (r = load(&mod, bytes)) != CUDA_SUCCESS || (r = get(&K->fn, mod, name)) != CUDA_SUCCESS) {
        free(copy);
        free(bytes);
        return (int)r;
    }
    K->entry = memcpy(copy, name, len);
    K->image = bytes;
    K->image_size = (size_t)size;
    return 0;
}

/* The add (x, y, n, out) with n = `n`, launched with `warps` warps and `shared_bytes` of shared memory. */
FLOOR_API int ffi_floor_load(const char *path, const char *name, int n, int warps, int shared_bytes)
{
    int rc = load_kernel(0, path, name);
    if (rc)
        return rc;
    count = n;
    threads = (unsigned)warps * 32u;
    shared = (unsigned)shared_bytes;
    return 0;
}

/* The same add made for PDL (launched with ffi_floor_load's n, warps and shared memory): after ffi_floor_load, -3
 * before it. */
FLOOR_API int ffi_floor_load_pdl(const char *path, const char *name)
{
    return kernels[0].image ? load_kernel(1, path, name) : -3;
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

/* The state type of the record_state target (registered by jax.ffi.register_ffi_type, which numbers it) and its
 * state: one cache line, the add's count. */
static XLA_FFI_TypeId state_id;
static XLA_FFI_TypeInfo state_info = {XLA_FFI_TypeInfo_STRUCT_SIZE, NULL, free};
struct floor_state {
    _Alignas(64) int count;
};

FLOOR_API void *ffi_floor_state_type_id(void)
{
    return &state_id;
}

FLOOR_API void *ffi_floor_state_type_info(void)
{
    return &state_info;
}

/* 1 when `f` is XLA's metadata query (at registration): answers it (with the state type where `with_state`) and
 * keeps XLA's API table. */
static int metadata_query_of(XLA_FFI_CallFrame *f, int with_state)
{
    for (floor_ext *e = f->extension_start; e; e = e->next) {
        if (e->type == XLA_FFI_Extension_Metadata) {
            XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)e)->metadata;
            int minor = f->api->api_version.minor_version;
            m->api_version = (XLA_FFI_Api_Version){XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR,
                                                   minor < XLA_FFI_API_MINOR ? minor : XLA_FFI_API_MINOR};
            m->traits = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE;
            if (with_state && m->struct_size >= offsetof(XLA_FFI_Metadata, state_type_id) + sizeof(XLA_FFI_TypeId))
                m->state_type_id = state_id;
            atomic_store(&table, f->api);
            return 1;
        }
    }
    return 0;
}

static int metadata_query(XLA_FFI_CallFrame *f)
{
    return metadata_query_of(f, 0);
}

/* out = x + y over `count` elements with kernels[k]: (x, y) -> out; the kernel takes (x, y, n, out) and two scratch
 * pointers (null). */
static inline XLA_FFI_Error *add_with(XLA_FFI_CallFrame *f, int k)
{
    if (metadata_query(f))
        return NULL;
    if (f->stage != XLA_FFI_ExecutionStage_EXECUTE)
        return NULL;
    CUfunction fn = kernels[k].fn;
    if (!fn || f->args.size != 2 || f->rets.size != 1 || f->args.types[0] != XLA_FFI_ArgType_BUFFER ||
        f->args.types[1] != XLA_FFI_ArgType_BUFFER || f->rets.types[0] != XLA_FFI_RetType_BUFFER)
        return fail(f->api, "ffi_floor_add: call ffi_floor_load (and ffi_floor_load_pdl) first; takes buffers (x, "
                            "y) -> out");
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

FLOOR_API XLA_FFI_Error *ffi_floor_add(XLA_FFI_CallFrame *f)
{
    return add_with(f, 0);
}

/* The PDL image launched as any kernel (its griddepcontrol instructions do nothing without PDL): EXECUTE of the
 * record_pdl target, which XLA runs outside command buffers. */
FLOOR_API XLA_FFI_Error *ffi_floor_add_pdl(XLA_FFI_CallFrame *f)
{
    return add_with(f, 1);
}

/* ffi_floor_record_register's message (XLA's refusal copied before its error is destroyed) */
static char refusal[512];

/* 1 when the API table covers `field` (one added after 0.1) and has it (as xla/ffi.h's XLA_API_HAS) */
#define API_HAS(api, field) \
    ((api)->struct_size >= offsetof(XLA_FFI_Api, field) + sizeof(void *) && (api)->field != NULL)

#if FLOOR_HAVE_RECORD

/* RECORD: the launch of kernels[k] becomes one kernel node of XLA's graph (Create; with uses_pdl for the PDL image)
 * or gets the buffers' new addresses (Update). The argument list as xla/record.c's record_args builds it: buffers
 * and the two null scratch pointers as device pointers, n by value (XLA copies a host value into an allocation of
 * its own at each create and update). */
static inline XLA_FFI_Error *record_with(XLA_FFI_CallFrame *f, int k, int with_state)
{
    if (metadata_query_of(f, with_state))
        return NULL;
    const int *n = &count;
    if (with_state) { /* the call's facts from its state, as a handler serving many kernels keeps them */
        XLA_FFI_State_Get_Args ga = {XLA_FFI_State_Get_Args_STRUCT_SIZE, NULL, f->ctx,
                                     XLA_FFI_ExecutionStage_INSTANTIATE, &state_id, NULL};
        XLA_FFI_Error *e = f->api->XLA_FFI_State_Get(&ga);
        if (e)
            return e;
        if (!ga.state)
            return fail(f->api, "ffi_floor_record: no state (INSTANTIATE did not run)");
        n = &((const struct floor_state *)ga.state)->count;
    }
    XLA_FFI_InvokeContext_FindExtension_Args fa = {XLA_FFI_InvokeContext_FindExtension_Args_STRUCT_SIZE, NULL,
                                                   f->ctx, XLA_FFI_Extension_Record, NULL};
    XLA_FFI_Error *err = f->api->XLA_FFI_InvokeContext_FindExtension(&fa);
    if (err)
        return err;
    if (!fa.extension || fa.extension->id.major_version != XLA_FFI_Extension_Record_MajorVersion)
        return fail(f->api, "ffi_floor_record: no record extension of the major version this header has");
    const XLA_FFI_RecordFrame *rf = ((const XLA_FFI_Record_Extension *)fa.extension)->record_frame;
    if (!kernels[k].fn || f->args.size != 2 || f->rets.size != 1)
        return fail(f->api, "ffi_floor_record: call ffi_floor_load (and ffi_floor_load_pdl) first; takes buffers "
                            "(x, y) -> out");
    const XLA_FFI_KernelArg args[6] = {
        {((XLA_FFI_Buffer *)f->args.args[0])->data, 0, XLA_FFI_KernelArgType_DevicePtr},
        {((XLA_FFI_Buffer *)f->args.args[1])->data, 0, XLA_FFI_KernelArgType_DevicePtr},
        {(void *)n, sizeof *n, XLA_FFI_KernelArgType_HostValue},
        {((XLA_FFI_Buffer *)f->rets.rets[0])->data, 0, XLA_FFI_KernelArgType_DevicePtr},
        {NULL, 0, XLA_FFI_KernelArgType_DevicePtr},
        {NULL, 0, XLA_FFI_KernelArgType_DevicePtr},
    };
    const XLA_FFI_KernelArgs list = {args, 6};
    if (rf->action == XLA_FFI_RecordAction_Update)
        return rf->api->update_launch(rf->record_ctx, rf->commands[0], &list);
    if (*rf->num_commands >= rf->max_commands)
        return fail(f->api, "ffi_floor_record: XLA's record frame has no room for the launch");
    XLA_FFI_LaunchDims dims = {{1, 1, 1}, {(int32_t)threads, 1, 1}, {0, 0, 0}};
    const XLA_FFI_Command *cmd = NULL;
    const struct floor_kernel *K = &kernels[k];
    if ((err = rf->api->create_launch(rf->record_ctx, K->entry, K->image, (int64_t)K->image_size,
                                      XLA_FFI_SourceFormat_CUBIN, dims, shared, k == 1, &list, NULL, 0, &cmd)) != NULL)
        return err;
    rf->commands[(*rf->num_commands)++] = cmd;
    return NULL;
}

static XLA_FFI_Error *ffi_floor_record(XLA_FFI_CallFrame *f)
{
    return record_with(f, 0, 0);
}

static XLA_FFI_Error *ffi_floor_record_pdl(XLA_FFI_CallFrame *f)
{
    return record_with(f, 1, 0);
}

static XLA_FFI_Error *ffi_floor_record_state(XLA_FFI_CallFrame *f)
{
    return record_with(f, 0, 1);
}

/* INSTANTIATE of the record_state target: the call's state (the add's count). */
static XLA_FFI_Error *ffi_floor_instantiate(XLA_FFI_CallFrame *f)
{
    if (metadata_query_of(f, 1))
        return NULL;
    struct floor_state *st = aligned_alloc(64, sizeof *st);
    if (!st)
        return fail(f->api, "ffi_floor_instantiate: out of memory");
    st->count = count;
    XLA_FFI_State_Set_Args sa = {XLA_FFI_State_Set_Args_STRUCT_SIZE, NULL, f->ctx, XLA_FFI_ExecutionStage_INSTANTIATE,
                                 &state_id, st};
    XLA_FFI_Error *e = f->api->XLA_FFI_State_Set(&sa);
    if (e)
        free(st);
    return e;
}

/* Registers, through XLA's API table, on CUDA: which 0, bench_ffi_floor_add_record (execute ffi_floor_add, record
 * ffi_floor_record); 1, bench_ffi_floor_add_record_pdl (the PDL image: ffi_floor_load_pdl first); 2,
 * bench_ffi_floor_add_record_state (a state per call: its type registered with jax.ffi.register_ffi_type first).
 * NULL on success, else why not. After jax.ffi.register_ffi_target of ffi_floor_add (which gives the table) and
 * before the programs that name the target compile. */
FLOOR_API const char *ffi_floor_record_register(int which)
{
    static const char *const names[] = {"bench_ffi_floor_add_record", "bench_ffi_floor_add_record_pdl",
                                        "bench_ffi_floor_add_record_state"};
    if (which < 0 || which > 2)
        return "which: 0 (record), 1 (record_pdl) or 2 (record_state)";
    const char *name = names[which];
    int pdl = which == 1;
    const XLA_FFI_Api *api = atomic_load(&table);
    if (!api)
        return "no API table yet: register ffi_floor_add with jax.ffi.register_ffi_target on CUDA first (its "
               "metadata query gives XLA's table)";
    if (api->api_version.minor_version < 4) {
        snprintf(refusal, sizeof refusal, "this XLA speaks FFI API %d.%d, which has no RECORD stage (0.4: jaxlib "
                 "0.11.1 and newer)", api->api_version.major_version, api->api_version.minor_version);
        return refusal;
    }
    if (!API_HAS(api, XLA_FFI_Handler_Register) || !API_HAS(api, XLA_FFI_InvokeContext_FindExtension))
        return "this XLA's API table lacks XLA_FFI_Handler_Register or XLA_FFI_InvokeContext_FindExtension";
    if (pdl && !kernels[1].fn)
        return "no PDL image loaded: call ffi_floor_load_pdl first";
    if (which == 2 && !state_id.type_id)
        return "the state type is not registered: jax.ffi.register_ffi_type with ffi_floor_state_type_id first";
    XLA_FFI_Handler_Register_Args a = {
        .struct_size = XLA_FFI_Handler_Register_Args_STRUCT_SIZE,
        .name = {name, strlen(name)},
        .platform = {"CUDA", 4},
        .bundle = {.instantiate = which == 2 ? ffi_floor_instantiate : NULL,
                   .execute = pdl ? ffi_floor_add_pdl : ffi_floor_add,
                   .record = which == 2 ? ffi_floor_record_state : pdl ? ffi_floor_record_pdl : ffi_floor_record},
        .traits = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE,
    };
    XLA_FFI_Error *e = api->XLA_FFI_Handler_Register(&a);
    if (!e)
        return NULL;
    XLA_FFI_Error_GetDetails_Args d = {XLA_FFI_Error_GetDetails_Args_STRUCT_SIZE, NULL, e, NULL, 0};
    if (API_HAS(api, XLA_FFI_Error_GetDetails))
        api->XLA_FFI_Error_GetDetails(&d);
    snprintf(refusal, sizeof refusal, "XLA refused the registration of %s: %s", name,
             d.message ? d.message : "(no message)");
    XLA_FFI_Error_Destroy_Args da = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
    api->XLA_FFI_Error_Destroy(&da);
    return refusal;
}

#else /* a header without the RECORD stage: the register function refuses */

FLOOR_API const char *ffi_floor_record_register(int which)
{
    (void)which;
    snprintf(refusal, sizeof refusal, "ffi_floor.c was built against XLA FFI API %d.%d headers, which have no RECORD "
             "stage with its record extension (build against jaxlib 0.11.2's or newer: scripts/xla-ffi-headers.sh)",
             XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
    return refusal;
}

#endif
