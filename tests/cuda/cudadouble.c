/* SPDX-License-Identifier: Apache-2.0 */
/* cudadouble.c: a test double of libcuda, for testing drivers/cuda's tensor
 * maps and the XLA handler's CUDA path without an NVIDIA GPU. The driver is
 * pointed at it through [driver.cuda] library.
 *
 * It exports the Driver API functions the driver resolves, defined with
 * cuda.h's own prototypes (and so under the names cuda.h maps them to,
 * cuMemAlloc_v2 ...), and behaves as the API documents them where the tests
 * look: one device, a current context per thread, device memory that is host
 * memory, modules that load any image, launches that run nothing but record
 * their configuration and parameters (and advance a clock by what the test
 * says each grid costs, which events read, so that a benchmark measures what
 * the test decided). A launch stays queued until a synchronize covers it
 * (cuStreamSynchronize of its stream, cuEventSynchronize of an event recorded
 * after it there, cuCtxSynchronize): unloading a module with a launch of it
 * still queued is a violation (the API lets streams and events go with work
 * queued, not the code that work runs), and so is freeing memory a queued
 * launch's pointer parameters point into (its parameter sizes declared). cuTensorMapEncodeTiled checks every
 * requirement cuda.h documents and records what it received; a call that
 * breaks one returns CUDA_ERROR_INVALID_VALUE and is recorded as a violation
 * (the driver must never make one: it checks first). A successful call writes
 * its arguments into the map (struct cudadouble_tmap_bytes), so a test can
 * recognise the map in a launch's parameters.
 *
 * Configuration, faults, call counts and violations: struct cudadouble_state
 * (cudadouble.h), set by the test in-process through tests/doubles/double.h.
 *
 * Built twice: cudadouble exports cuTensorMapEncodeTiled, cudadouble_notma
 * (CUDADOUBLE_NO_TMA) does not, as libcuda before CUDA 12. */
#include <cuda.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuda/cudadouble.h"

/* Everything defined here is the library's interface (the build hides symbols by default). */
#pragma GCC visibility push(default)

#define CD_MAX_PENDING 1024

struct cd_module;

#define CD_PENDING_PTRS 8
#define CD_MAX_ALLOCS 1024

/* A launch not yet covered by a synchronize, and the values of its first
 * 8-byte parameters (as the test declared the sizes): the addresses it may use. */
struct cd_pending {
    const struct cd_module *module;
    CUstream stream;
    uint64_t seq;
    uint64_t ptrs[CD_PENDING_PTRS];
    unsigned nptrs;
};

/* An event: the clock and the launches queued before it when recorded. */
struct cd_event {
    double clock_ms;
    uint64_t seq;
    CUstream stream;
};

/* What tests see (st, its common.lock guarding everything here) and what they do not (cd). */
static struct cudadouble_state st;
static struct {
    double clock_ms;      /* advanced by launches, read by events */
    struct cd_pending pending[CD_MAX_PENDING];
    unsigned npending;
    uint64_t seq;         /* launches so far */
    struct {
        uint64_t base, size;  /* base 0: a free entry */
    } allocs[CD_MAX_ALLOCS];  /* live cuMemAlloc blocks (past CD_MAX_ALLOCS: not tracked) */
} cd;

/* Completes the queued launches of `stream` (all: of every stream) up to seq; the caller holds st.common.lock. */
static void pending_done(CUstream stream, int all, uint64_t upto)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < cd.npending; i++)
        if (!((all || cd.pending[i].stream == stream) && cd.pending[i].seq <= upto))
            cd.pending[kept++] = cd.pending[i];
    cd.npending = kept;
}

static int primary_ctx;             /* the primary context's identity */
static _Thread_local CUcontext current;
static _Thread_local CUcontext stack[8];
static _Thread_local int depth;

/* Counts the call; returns the code a fault injects for it, or CUDA_SUCCESS. */
static CUresult enter(const char *fn)
{
    return (CUresult)trd_double_enter(&st.common, fn);
}

#define ENTER(fn)                                                                                    \
    do {                                                                                             \
        CUresult injected_ = enter(fn);                                                              \
        if (injected_ != CUDA_SUCCESS)                                                               \
            return injected_;                                                                        \
    } while (0)

#define violation(...) trd_double_violation(&st.common, __VA_ARGS__)

static int compute_capability(void)
{
    return st.cc;
}

/* ------------------------------------------------------------ test hooks */

static void defaults(void)
{
    st.cc = 90;
    st.capturing = 0;
    st.nsizes = st.ncosts = st.ntmaps = st.nlaunches = 0;
    cd.npending = 0;
    cd.clock_ms = 0;
}

TRD_DOUBLE_DEFINE(st, "cudadouble", defaults)

/* ------------------------------------------------------ errors, devices */

static const char *const error_names[][2] = {
    {"0", "CUDA_SUCCESS"}, {"1", "CUDA_ERROR_INVALID_VALUE"}, {"2", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"3", "CUDA_ERROR_NOT_INITIALIZED"}, {"100", "CUDA_ERROR_NO_DEVICE"}, {"201", "CUDA_ERROR_INVALID_CONTEXT"},
    {"400", "CUDA_ERROR_INVALID_HANDLE"}, {"700", "CUDA_ERROR_ILLEGAL_ADDRESS"}, {"710", "CUDA_ERROR_ASSERT"},
    {"719", "CUDA_ERROR_LAUNCH_FAILED"}, {"801", "CUDA_ERROR_NOT_SUPPORTED"},
};

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    char code[16];
    snprintf(code, sizeof code, "%d", (int)error);
    for (size_t i = 0; i < sizeof error_names / sizeof error_names[0]; i++)
        if (!strcmp(error_names[i][0], code)) {
            *pStr = error_names[i][1];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    *pStr = error == CUDA_ERROR_INVALID_VALUE     ? "invalid argument"
          : error == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered" /* libcuda's words */
                                                : "an error of the CUDA test double";
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
    ENTER("cuInit");
    return Flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    ENTER("cuDriverGetVersion");
    *driverVersion = CUDA_VERSION;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    ENTER("cuDeviceGetCount");
    *count = 1;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    ENTER("cuDeviceGet");
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    ENTER("cuDeviceGetName");
    if (dev != 0 || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "CUDA test double");
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
    ENTER("cuDeviceTotalMem");
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    ENTER("cuDeviceGetAttribute");
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = compute_capability() / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = compute_capability() % 10; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *pi = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = 232448; break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: *pi = 1; break;
    default: *pi = 0; break;
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------- contexts */

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    ENTER("cuDevicePrimaryCtxRetain");
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *pctx = (CUcontext)&primary_ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    ENTER("cuDevicePrimaryCtxRelease");
    return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    ENTER("cuCtxGetCurrent");
    *pctx = current;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
    ENTER("cuCtxPushCurrent");
    if (ctx != (CUcontext)&primary_ctx || depth == (int)(sizeof stack / sizeof stack[0]))
        return CUDA_ERROR_INVALID_CONTEXT;
    stack[depth++] = current;
    current = ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
    ENTER("cuCtxPopCurrent");
    if (depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx)
        *pctx = current;
    current = stack[--depth];
    return CUDA_SUCCESS;
}

/* The calls below need a current context, as the real API does. */
#define NEED_CONTEXT(fn)                                                                             \
    do {                                                                                             \
        ENTER(fn);                                                                                   \
        if (current != (CUcontext)&primary_ctx)                                                      \
            return CUDA_ERROR_INVALID_CONTEXT;                                                       \
    } while (0)

/* -------------------------------------------------------------- modules */

struct cd_module {
    int function;   /* the one function's identity */
};

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues)
{
    NEED_CONTEXT("cuModuleLoadDataEx");
    (void)numOptions;
    (void)options;
    (void)optionValues;
    if (!image)
        return CUDA_ERROR_INVALID_VALUE;
    struct cd_module *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *module = (CUmodule)m;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    ENTER("cuModuleUnload");
    unsigned queued = 0, kept = 0;
    pthread_mutex_lock(&st.common.lock);
    for (unsigned i = 0; i < cd.npending; i++) {
        if (cd.pending[i].module == (const struct cd_module *)hmod)
            queued++;
        else
            cd.pending[kept++] = cd.pending[i];
    }
    cd.npending = kept;
    pthread_mutex_unlock(&st.common.lock);
    if (queued)
        violation("cuModuleUnload: %u launches of the module are still queued (not yet synchronized)", queued);
    free(hmod);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    NEED_CONTEXT("cuModuleGetFunction");
    if (!hmod || !name || !*name)
        return CUDA_ERROR_INVALID_VALUE;
    *hfunc = (CUfunction) & ((struct cd_module *)hmod)->function;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    ENTER("cuFuncGetAttribute");
    if (!hfunc)
        return CUDA_ERROR_INVALID_HANDLE;
    *pi = attrib == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : attrib == CU_FUNC_ATTRIBUTE_NUM_REGS ? 32 : 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    ENTER("cuFuncSetAttribute");
    (void)attrib;
    (void)value;
    return hfunc ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    ENTER("cuFuncSetCacheConfig");
    (void)config;
    return hfunc ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                             size_t dynamicSMemSize)
{
    ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessor");
    (void)blockSize;
    (void)dynamicSMemSize;
    if (!func)
        return CUDA_ERROR_INVALID_HANDLE;
    *numBlocks = 1;
    return CUDA_SUCCESS;
}

/* The JIT linker: PTX is not compiled here. */
CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                              CUlinkState *stateOut)
{
    ENTER("cuLinkCreate");
    (void)numOptions;
    (void)options;
    (void)optionValues;
    (void)stateOut;
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                               unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    (void)state, (void)type, (void)data, (void)size, (void)name, (void)numOptions, (void)options, (void)optionValues;
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    (void)state, (void)cubinOut, (void)sizeOut;
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state)
{
    (void)state;
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ------------------------------------------------------------ launches */

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    NEED_CONTEXT("cuLaunchKernelEx");
    if (!config || !f || extra)
        return CUDA_ERROR_INVALID_VALUE;
    int missing = -1;
    pthread_mutex_lock(&st.common.lock);
    for (unsigned i = 0; i < st.ncosts; i++)
        if (st.costs[i].grid_x == config->gridDimX)
            cd.clock_ms += st.costs[i].ms;
    cd.seq++;
    struct cd_pending *pend = NULL;
    if (cd.npending < CD_MAX_PENDING) {
        pend = &cd.pending[cd.npending++];
        *pend = (struct cd_pending){(const struct cd_module *)f, config->hStream, cd.seq, {0}, 0};
        for (unsigned i = 0; i < st.nsizes && kernelParams && pend->nptrs < CD_PENDING_PTRS; i++)
            if (st.sizes[i] == 8 && kernelParams[i])
                memcpy(&pend->ptrs[pend->nptrs++], kernelParams[i], 8);
    }
    if (st.nlaunches < CUDADOUBLE_MAX_LAUNCHES) {
        struct cudadouble_launch *l = &st.launches[st.nlaunches++];
        memset(l, 0, sizeof *l);
        l->grid[0] = config->gridDimX, l->grid[1] = config->gridDimY, l->grid[2] = config->gridDimZ;
        l->block[0] = config->blockDimX, l->block[1] = config->blockDimY, l->block[2] = config->blockDimZ;
        l->shared = config->sharedMemBytes;
        l->stream = config->hStream;
        unsigned off = 0;
        for (unsigned i = 0; i < st.nsizes && kernelParams; i++) {
            unsigned align = st.sizes[i] < 8 && st.sizes[i] ? st.sizes[i] : 8;
            off = (off + align - 1) / align * align;
            if (off + st.sizes[i] > sizeof l->bytes)
                break;
            l->param_ptr[i] = (uintptr_t)kernelParams[i];
            l->param_off[i] = off;
            l->param_size[i] = st.sizes[i];
            if (kernelParams[i])
                memcpy(l->bytes + off, kernelParams[i], st.sizes[i]);
            else
                missing = i;
            off += st.sizes[i];
            l->nparams = i + 1;
        }
    }
    pthread_mutex_unlock(&st.common.lock);
    if (missing >= 0) {
        violation("cuLaunchKernelEx: kernelParams[%d] is NULL", missing);
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* --------------------------------------------------------------- memory */

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
    NEED_CONTEXT("cuMemAlloc");
    if (bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    void *p = aligned_alloc(256, (bytesize + 255) / 256 * 256);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&st.common.lock);
    for (unsigned i = 0; i < CD_MAX_ALLOCS; i++)
        if (!cd.allocs[i].base) {
            cd.allocs[i].base = (uint64_t)(uintptr_t)p;
            cd.allocs[i].size = bytesize;
            break;
        }
    pthread_mutex_unlock(&st.common.lock);
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

/* Memory a queued launch may still use must not be freed (the driver waits
 * for that work first): a violation naming the launch. */
CUresult CUDAAPI cuMemFree(CUdeviceptr dptr)
{
    NEED_CONTEXT("cuMemFree");
    pthread_mutex_lock(&st.common.lock);
    for (unsigned i = 0; i < CD_MAX_ALLOCS; i++) {
        if (cd.allocs[i].base != dptr)
            continue;
        uint64_t end = dptr + cd.allocs[i].size;
        for (unsigned q = 0; q < cd.npending; q++)
            for (unsigned k = 0; k < cd.pending[q].nptrs; k++)
                if (cd.pending[q].ptrs[k] >= dptr && cd.pending[q].ptrs[k] < end)
                    trd_double_violation_locked(&st.common,
                                                "cuMemFree(0x%llx): launch %llu, not yet covered by a synchronize, "
                                                "uses the memory",
                                                (unsigned long long)dptr, (unsigned long long)cd.pending[q].seq);
        cd.allocs[i].base = 0;
        break;
    }
    pthread_mutex_unlock(&st.common.lock);
    free((void *)(uintptr_t)dptr);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    NEED_CONTEXT("cuMemcpyHtoD");
    memcpy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    NEED_CONTEXT("cuMemcpyDtoH");
    memcpy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    NEED_CONTEXT("cuMemcpyDtoD");
    memmove((void *)(uintptr_t)dstDevice, (const void *)(uintptr_t)srcDevice, ByteCount);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{
    (void)hStream;
    return cuMemcpyHtoD(dstDevice, srcHost, ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    (void)hStream;
    return cuMemcpyDtoH(dstHost, srcDevice, ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    (void)hStream;
    return cuMemcpyDtoD(dstDevice, srcDevice, ByteCount);
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    NEED_CONTEXT("cuMemsetD8");
    memset((void *)(uintptr_t)dstDevice, uc, N);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    (void)hStream;
    return cuMemsetD8(dstDevice, uc, N);
}

/* ------------------------------------------------------ streams, events */

/* Streams and events are opaque handles: a small allocation each (an event's is a struct cd_event). */
static CUresult handle_new(void **out)
{
    void *h = calloc(1, sizeof(struct cd_event));
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = h;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    NEED_CONTEXT("cuStreamCreate");
    (void)Flags;
    return handle_new((void **)phStream);
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    ENTER("cuStreamDestroy");
    free(hStream);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    ENTER("cuStreamSynchronize");
    pthread_mutex_lock(&st.common.lock);
    pending_done(hStream, 0, UINT64_MAX);
    pthread_mutex_unlock(&st.common.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    NEED_CONTEXT("cuCtxSynchronize");
    pthread_mutex_lock(&st.common.lock);
    pending_done(NULL, 1, UINT64_MAX);
    pthread_mutex_unlock(&st.common.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    ENTER("cuStreamIsCapturing");
    (void)hStream;
    if (!captureStatus)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&st.common.lock);
    *captureStatus = st.capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    pthread_mutex_unlock(&st.common.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    NEED_CONTEXT("cuEventCreate");
    (void)Flags;
    return handle_new((void **)phEvent);
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent)
{
    ENTER("cuEventDestroy");
    free(hEvent);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
    ENTER("cuEventRecord");
    if (!hEvent)
        return CUDA_ERROR_INVALID_HANDLE;
    struct cd_event *e = (struct cd_event *)hEvent;
    pthread_mutex_lock(&st.common.lock);
    e->clock_ms = cd.clock_ms;
    e->seq = cd.seq;
    e->stream = hStream;
    pthread_mutex_unlock(&st.common.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    ENTER("cuEventSynchronize");
    if (!hEvent)
        return CUDA_ERROR_INVALID_HANDLE;
    const struct cd_event *e = (const struct cd_event *)hEvent;
    pthread_mutex_lock(&st.common.lock);
    pending_done(e->stream, 0, e->seq);
    pthread_mutex_unlock(&st.common.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    ENTER("cuEventElapsedTime");
    if (!hStart || !hEnd)
        return CUDA_ERROR_INVALID_HANDLE;
    double a = ((const struct cd_event *)hStart)->clock_ms, b = ((const struct cd_event *)hEnd)->clock_ms;
    *pMilliseconds = (float)(b - a);
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------- tensor maps */

#ifndef CUDADOUBLE_NO_TMA
/* Bytes per element of each CUtensorMapDataType; 0 for the packed 4- and 6-bit types. */
static const unsigned tmap_bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4, 0, 0, 0};

/* The first requirement cuda.h documents for cuTensorMapEncodeTiled that the call breaks, or NULL. */
static const char *tmap_rule(const struct cudadouble_tmap *t)
{
    static _Thread_local char why[160];
    if (t->map % 64)
        return "tensorMap is not 64-byte aligned";
    if (t->dtype < 0 || t->dtype > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B)
        return "tensorDataType is not a CUtensorMapDataType";
    if (t->rank < 1 || t->rank > 5)
        return "tensorRank is outside 1 .. 5";
    int align16b = t->dtype == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B || t->dtype == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
    if (t->address % (align16b || t->interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16))
        return "globalAddress is not aligned";
    for (unsigned i = 0; i < t->rank; i++) {
        if (t->dims[i] == 0 || t->dims[i] > (UINT64_C(1) << 32))
            return "a globalDim is outside 1 .. 2^32";
        if (t->box[i] == 0 || t->box[i] > 256)
            return "a boxDim is outside 1 .. 256";
        if (t->estrides[i] == 0 || t->estrides[i] > 8)
            return "an elementStride is outside 1 .. 8";
        if (i + 1 < t->rank && (t->strides[i] % (align16b ? 32 : 16) || t->strides[i] >= (UINT64_C(1) << 40)))
            return "a globalStride is not a multiple of 16 (32) below 2^40";
    }
    if (t->interleave < 0 || t->interleave > CU_TENSOR_MAP_INTERLEAVE_32B || t->swizzle < 0 ||
        t->swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B || t->l2 < 0 || t->l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B ||
        t->oob < 0 || t->oob > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
        return "an enum is out of range";
    if (t->interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && t->rank < 3)
        return "interleave needs tensorRank >= 3";
    if (align16b && (t->dims[0] % 128 || t->box[0] != 128))
        return "a 16-byte aligned packed type needs globalDim[0] a multiple of 128 and boxDim[0] 128";
    unsigned bytes = tmap_bytes[t->dtype];
    if (t->oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA &&
        (t->dtype < CU_TENSOR_MAP_DATA_TYPE_FLOAT16 || t->dtype > CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ ||
         t->dtype == CU_TENSOR_MAP_DATA_TYPE_UINT64 || t->dtype == CU_TENSOR_MAP_DATA_TYPE_INT64))
        return "NaN fill with a type that is not floating point";
    if (t->interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && bytes) {
        uint64_t row = (uint64_t)t->box[0] * bytes;
        static const uint64_t span[] = {0, 32, 64, 128, 128, 128, 128};
        if (row % 16)
            return "boxDim[0] * element size is not a multiple of 16";
        if (t->swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && row > span[t->swizzle]) {
            snprintf(why, sizeof why, "the inner box (%llu bytes) is wider than swizzle %d allows",
                     (unsigned long long)row, t->swizzle);
            return why;
        }
    }
    return NULL;
}

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                        cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
                                        const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
                                        const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                        CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                        CUtensorMapFloatOOBfill oobFill)
{
    NEED_CONTEXT("cuTensorMapEncodeTiled");
    if (!tensorMap || !globalDim || !boxDim || !elementStrides || (tensorRank > 1 && !globalStrides))
        return CUDA_ERROR_INVALID_VALUE;
    struct cudadouble_tmap t = {.map = (uintptr_t)tensorMap, .dtype = (int)tensorDataType, .rank = tensorRank,
                                .address = (uintptr_t)globalAddress, .interleave = (int)interleave,
                                .swizzle = (int)swizzle, .l2 = (int)l2Promotion, .oob = (int)oobFill};
    for (unsigned i = 0; i < tensorRank && i < 5; i++) {
        t.dims[i] = globalDim[i];
        t.box[i] = boxDim[i];
        t.estrides[i] = elementStrides[i];
        if (i + 1 < tensorRank)
            t.strides[i] = globalStrides[i];
    }
    const char *why = tmap_rule(&t);
    t.result = why ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (why)
        violation("cuTensorMapEncodeTiled: %s", why);
    pthread_mutex_lock(&st.common.lock);
    if (st.ntmaps < CUDADOUBLE_MAX_TMAPS)
        st.tmaps[st.ntmaps++] = t;
    pthread_mutex_unlock(&st.common.lock);
    if (why)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudadouble_tmap_bytes b = {.magic = CUDADOUBLE_TMAP_MAGIC, .address = t.address, .dtype = (uint8_t)t.dtype,
                                      .rank = (uint8_t)t.rank, .swizzle = (uint8_t)t.swizzle, .oob = (uint8_t)t.oob,
                                      .l2 = (uint8_t)t.l2, .interleave = (uint8_t)t.interleave};
    memcpy(b.dims, t.dims, sizeof b.dims);
    memcpy(b.strides, t.strides, sizeof b.strides);
    memcpy(b.box, t.box, sizeof b.box);
    _Static_assert(sizeof b <= sizeof(CUtensorMap), "the map holds the record");
    memset(tensorMap, 0, sizeof *tensorMap);
    memcpy(tensorMap, &b, sizeof b);
    return CUDA_SUCCESS;
}
#endif

#pragma GCC visibility pop
