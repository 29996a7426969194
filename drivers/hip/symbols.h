/* SPDX-License-Identifier: Apache-2.0 */
/* symbols.h: every HIP entry point the driver resolves, as an X-macro list:
 * REQUIRED(ret, name, params) must be exported by a library for the driver
 * to use it; OPTIONAL(ret, name, params) is NULL when absent, and the
 * feature that needs it is reported unsupported.
 *
 * Enum parameters (hipDeviceAttribute_t, hipJitOption, hipMemcpyKind,
 * hipFunction_attribute) are int-sized in every release and declared int. */
#ifndef TRD_DRIVER_HIP_SYMBOLS_H
#define TRD_DRIVER_HIP_SYMBOLS_H

#include "drivers/hip/hip_abi.h"

#define HIP_SYMBOLS(REQUIRED, OPTIONAL)                                                                   \
    REQUIRED(hipError_t, hipInit, (unsigned int flags))                                                   \
    REQUIRED(hipError_t, hipGetDeviceCount, (int *count))                                                 \
    REQUIRED(hipError_t, hipDeviceGet, (hipDevice_t * device, int ordinal))                               \
    REQUIRED(hipError_t, hipDeviceGetName, (char *name, int len, hipDevice_t device))                     \
    REQUIRED(hipError_t, hipDeviceGetAttribute, (int *value, int attr, int device))                       \
    REQUIRED(hipError_t, hipDeviceTotalMem, (size_t * bytes, hipDevice_t device))                         \
    REQUIRED(hipError_t, hipDeviceGetPCIBusId, (char *bus_id, int len, int device))                       \
    REQUIRED(hipError_t, hipSetDevice, (int device))                                                      \
    REQUIRED(hipError_t, hipGetDevice, (int *device))                                                     \
    REQUIRED(hipError_t, hipDeviceSynchronize, (void))                                                    \
    REQUIRED(hipError_t, hipModuleLoadDataEx,                                                             \
             (hipModule_t * module, const void *image, unsigned int num_options, int *options,           \
              void **values))                                                                             \
    REQUIRED(hipError_t, hipModuleUnload, (hipModule_t module))                                           \
    REQUIRED(hipError_t, hipModuleGetFunction, (hipFunction_t * function, hipModule_t module,            \
                                                const char *name))                                        \
    REQUIRED(hipError_t, hipFuncGetAttribute, (int *value, int attr, hipFunction_t function))             \
    REQUIRED(hipError_t, hipModuleLaunchKernel,                                                           \
             (hipFunction_t function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,      \
              unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared,      \
              hipStream_t stream, void **params, void **extra))                                           \
    REQUIRED(hipError_t, hipStreamCreateWithFlags, (hipStream_t * stream, unsigned int flags))            \
    REQUIRED(hipError_t, hipStreamDestroy, (hipStream_t stream))                                          \
    REQUIRED(hipError_t, hipStreamSynchronize, (hipStream_t stream))                                      \
    REQUIRED(hipError_t, hipEventCreateWithFlags, (hipEvent_t * event, unsigned int flags))               \
    REQUIRED(hipError_t, hipEventDestroy, (hipEvent_t event))                                             \
    REQUIRED(hipError_t, hipEventRecord, (hipEvent_t event, hipStream_t stream))                          \
    REQUIRED(hipError_t, hipEventSynchronize, (hipEvent_t event))                                         \
    REQUIRED(hipError_t, hipEventElapsedTime, (float *ms, hipEvent_t start, hipEvent_t end))              \
    REQUIRED(hipError_t, hipMalloc, (void **ptr, size_t size))                                            \
    REQUIRED(hipError_t, hipFree, (void *ptr))                                                            \
    REQUIRED(hipError_t, hipMemcpy, (void *dst, const void *src, size_t size, int kind))                  \
    REQUIRED(hipError_t, hipMemcpyAsync,                                                                  \
             (void *dst, const void *src, size_t size, int kind, hipStream_t stream))                    \
    REQUIRED(hipError_t, hipMemset, (void *dst, int value, size_t size))                                  \
    REQUIRED(hipError_t, hipMemsetAsync, (void *dst, int value, size_t size, hipStream_t stream))         \
    /* Names and text of errors (every release has them; optional all the same). */                     \
    OPTIONAL(const char *, hipGetErrorName, (hipError_t error))                                           \
    OPTIONAL(const char *, hipGetErrorString, (hipError_t error))                                         \
    OPTIONAL(hipError_t, hipRuntimeGetVersion, (int *version))                                            \
    /* ROCm 5.1 and later. */                                                                             \
    OPTIONAL(hipError_t, hipDeviceGetUuid, (hipUUID * uuid, hipDevice_t device))                          \
    /* The R0000 props layout (5.x; kept in 6.x for old binaries); R0600 from 6.0. */                     \
    OPTIONAL(hipError_t, hipGetDeviceProperties, (void *props, int device))                               \
    OPTIONAL(hipError_t, hipGetDevicePropertiesR0600, (void *props, int device))                          \
    /* Not exported by ROCm 5.2; exported by 6.x. */                                                        \
    OPTIONAL(hipError_t, hipModuleLaunchCooperativeKernel,                                                \
             (hipFunction_t function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,      \
              unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared,      \
              hipStream_t stream, void **params))                                                         \
    /* ROCm 5.3 and later: tells whether a stream is being captured into a graph. */                     \
    OPTIONAL(hipError_t, hipStreamIsCapturing, (hipStream_t stream, int *status))                         \
    /* Recent runtimes only: launches with attributes (cluster dimensions). */                           \
    OPTIONAL(hipError_t, hipDrvLaunchKernelEx,                                                            \
             (const HIP_LAUNCH_CONFIG *config, hipFunction_t function, void **params, void **extra))

#endif /* TRD_DRIVER_HIP_SYMBOLS_H */
