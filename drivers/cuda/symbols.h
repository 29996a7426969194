/* SPDX-License-Identifier: Apache-2.0 */
/* symbols.h: the CUDA Driver API functions the driver uses. REQUIRED ones
 * must all resolve or the driver reports itself skipped; OPTIONAL ones may
 * be NULL and are checked before use. Each is taken through
 * cuGetProcAddress at the API version of the cuda.h we build with (pinned),
 * else through dlsym of the name cuda.h maps it to (cuMemAlloc ->
 * cuMemAlloc_v2), so the pointer always matches the prototype we call. */
#define CUDA_REQUIRED_SYMBOLS(X)            \
    X(cuInit)                               \
    X(cuDriverGetVersion)                   \
    X(cuDeviceGetCount)                     \
    X(cuDeviceGet)                          \
    X(cuDeviceGetName)                      \
    X(cuDeviceGetAttribute)                 \
    X(cuDeviceTotalMem)                     \
    X(cuDevicePrimaryCtxRetain)             \
    X(cuDevicePrimaryCtxRelease)            \
    X(cuCtxGetCurrent)                      \
    X(cuCtxPushCurrent)                     \
    X(cuCtxPopCurrent)                      \
    X(cuCtxSynchronize)                     \
    X(cuModuleLoadDataEx)                   \
    X(cuModuleUnload)                       \
    X(cuModuleGetFunction)                  \
    X(cuFuncGetAttribute)                   \
    X(cuFuncSetAttribute)                   \
    X(cuFuncSetCacheConfig)                 \
    X(cuLaunchKernelEx)                     \
    X(cuMemAlloc)                           \
    X(cuMemFree)                            \
    X(cuMemcpyHtoD)                         \
    X(cuMemcpyDtoH)                         \
    X(cuMemcpyDtoD)                         \
    X(cuMemcpyHtoDAsync)                    \
    X(cuMemcpyDtoHAsync)                    \
    X(cuMemcpyDtoDAsync)                    \
    X(cuMemsetD8)                           \
    X(cuMemsetD8Async)                      \
    X(cuStreamCreate)                       \
    X(cuStreamDestroy)                      \
    X(cuStreamSynchronize)                  \
    X(cuEventCreate)                        \
    X(cuEventDestroy)                       \
    X(cuEventRecord)                        \
    X(cuEventSynchronize)                   \
    X(cuEventElapsedTime)                   \
    X(cuLinkCreate)                         \
    X(cuLinkAddData)                        \
    X(cuLinkComplete)                       \
    X(cuLinkDestroy)                        \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

#define CUDA_OPTIONAL_SYMBOLS(X)            \
    X(cuGetErrorName)                       \
    X(cuGetErrorString)                     \
    X(cuDeviceGetUuid)                      \
    X(cuDeviceGetPCIBusId)                  \
    X(cuStreamGetCtx)                       \
    X(cuStreamIsCapturing)                  \
    X(cuTensorMapEncodeTiled)
