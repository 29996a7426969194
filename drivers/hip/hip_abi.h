/* SPDX-License-Identifier: Apache-2.0 */
/* hip_abi.h: the small subset of the HIP C ABI this driver uses, declared
 * here so that the driver builds without ROCm headers and depends on no one
 * release's headers.
 *
 * Everything below holds unchanged from ROCm 5.0 to 7.x unless a line says
 * otherwise: the values were checked against the hip_runtime_api.h of ROCm
 * 5.2.3 (Debian 12), 6.3 and the 2025 development tree. Numbers the HIP
 * headers give by enum position are written out, so that a reader can check
 * them against any release.
 */
#ifndef TRD_DRIVER_HIP_ABI_H
#define TRD_DRIVER_HIP_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Handles are opaque pointers, except hipDevice_t (an int). */
typedef int hipError_t;
typedef int hipDevice_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;

/* hipError_t values the driver tells apart (the rest are reported by number
 * and name). */
enum {
    HIP_SUCCESS = 0,
    HIP_ERROR_INVALID_VALUE = 1,
    HIP_ERROR_OUT_OF_MEMORY = 2,
    HIP_ERROR_NOT_INITIALIZED = 3,
    HIP_ERROR_INVALID_CONFIGURATION = 9,
    HIP_ERROR_INVALID_DEVICE_POINTER = 17,
    HIP_ERROR_INSUFFICIENT_DRIVER = 35,
    HIP_ERROR_INVALID_DEVICE_FUNCTION = 98,
    HIP_ERROR_NO_DEVICE = 100,
    HIP_ERROR_INVALID_DEVICE = 101,
    HIP_ERROR_INVALID_IMAGE = 200,
    HIP_ERROR_NO_BINARY_FOR_GPU = 209,
    HIP_ERROR_INVALID_KERNEL_FILE = 218,
    HIP_ERROR_SHARED_OBJECT_INIT_FAILED = 303,
    HIP_ERROR_INVALID_HANDLE = 400,
    HIP_ERROR_NOT_FOUND = 500,
    HIP_ERROR_NOT_READY = 600,
    HIP_ERROR_ILLEGAL_ADDRESS = 700,
    HIP_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    HIP_ERROR_ASSERT = 710,
    HIP_ERROR_LAUNCH_FAILURE = 719,
    HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
    HIP_ERROR_NOT_SUPPORTED = 801,
    HIP_ERROR_INVALID_CLUSTER_SIZE = 1054 /* ROCm 6.x and later */
};

/* hipDeviceAttribute_t (the CUDA-compatible range, same numbers in 5.x and 6.x). */
enum {
    HIP_ATTR_COOPERATIVE_LAUNCH = 10,
    HIP_ATTR_MAX_THREADS_PER_BLOCK = 56,
    HIP_ATTR_MULTIPROCESSOR_COUNT = 63,
    HIP_ATTR_PCI_BUS_ID = 67,
    HIP_ATTR_PCI_DEVICE_ID = 68,
    HIP_ATTR_PCI_DOMAIN_ID = 69,
    HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 74,
    HIP_ATTR_SHARED_MEM_PER_BLOCK_OPTIN = 75,
    HIP_ATTR_WARP_SIZE = 87
};

/* hipFunction_attribute (HIP_FUNC_ATTRIBUTE_*). */
enum {
    HIP_FUNC_ATTR_MAX_THREADS_PER_BLOCK = 0,
    HIP_FUNC_ATTR_LOCAL_SIZE_BYTES = 3,
    HIP_FUNC_ATTR_NUM_REGS = 4
};

/* hipJitOption: the log buffers of hipModuleLoadDataEx. The HIP headers call
 * them "CUDA only": AMD's runtime may leave the buffers untouched. */
enum {
    HIP_JIT_INFO_LOG_BUFFER = 3,
    HIP_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    HIP_JIT_ERROR_LOG_BUFFER = 5,
    HIP_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    HIP_JIT_LOG_VERBOSE = 12
};

/* hipMemcpyKind */
enum {
    HIP_MEMCPY_HOST_TO_DEVICE = 1,
    HIP_MEMCPY_DEVICE_TO_HOST = 2,
    HIP_MEMCPY_DEVICE_TO_DEVICE = 3
};

#define HIP_STREAM_NON_BLOCKING 0x1u /* hipStreamNonBlocking */
/* hipStreamPerThread: the calling thread's default stream, another stream on each thread */
#define HIP_STREAM_PER_THREAD ((hipStream_t)2)
#define HIP_EVENT_DEFAULT 0x0u       /* hipEventDefault: timing enabled */
#define HIP_STREAM_CAPTURE_NONE 0     /* hipStreamCaptureStatusNone (Active 1, Invalidated 2) */

typedef struct hipUUID_t {
    char bytes[16];
} hipUUID;

/* hipDeviceProp_t: only gcnArchName (the "gfx942:sramecc+:xnack-" target
 * name) has no hipDeviceGetAttribute equivalent, so the driver reads that
 * struct, as raw bytes at known offsets. Two layouts exist:
 *  - R0000: ROCm 5.x's hipDeviceProp_t (792 bytes), filled by the exported
 *    symbol hipGetDeviceProperties in 5.x and, for old binaries, in 6.x;
 *  - R0600: ROCm 6.0's new hipDeviceProp_t (1472 bytes), filled by
 *    hipGetDevicePropertiesR0600 (6.0 and later; the headers turn
 *    hipGetDeviceProperties into a macro for it).
 * warpSize is read too, to check the layout against hipDeviceAttributeWarpSize
 * before trusting the name. */
#define HIP_PROPS_R0000_SIZE 792
#define HIP_PROPS_R0000_WARP_SIZE 276
#define HIP_PROPS_R0000_GCN_ARCH_NAME 396
#define HIP_PROPS_R0600_SIZE 1472
#define HIP_PROPS_R0600_WARP_SIZE 308
#define HIP_PROPS_R0600_CLUSTER_LAUNCH 772 /* int clusterLaunch: R0600 only */
#define HIP_PROPS_R0600_GCN_ARCH_NAME 1160
#define HIP_PROPS_GCN_ARCH_NAME_LEN 256

/* hipDrvLaunchKernelEx (exported only by recent runtimes: absent from 5.x and
 * early 6.x): the launch configuration and its attributes, laid out as CUDA's
 * CUlaunchConfig. */
enum {
    HIP_LAUNCH_ATTR_COOPERATIVE = 2,       /* value.cooperative (int) */
    HIP_LAUNCH_ATTR_CLUSTER_DIMENSION = 4  /* value.clusterDim {x, y, z} */
};

typedef struct hipLaunchAttribute_st {
    int id;         /* hipLaunchAttributeID */
    char pad[4];    /* the value starts at offset 8 */
    union {
        char raw[64];
        uint64_t align; /* the HIP union holds pointers */
        int cooperative;
        struct {
            unsigned int x, y, z;
        } clusterDim;
    } value;
} hipLaunchAttribute;

typedef struct HIP_LAUNCH_CONFIG_st {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    hipStream_t hStream;
    hipLaunchAttribute *attrs;
    unsigned int numAttrs;
} HIP_LAUNCH_CONFIG;

_Static_assert(sizeof(hipLaunchAttribute) == 72 && offsetof(hipLaunchAttribute, value) == 8, "hipLaunchAttribute layout");
_Static_assert(offsetof(HIP_LAUNCH_CONFIG, hStream) == 32 && offsetof(HIP_LAUNCH_CONFIG, attrs) == 40 &&
                   offsetof(HIP_LAUNCH_CONFIG, numAttrs) == 48 && sizeof(HIP_LAUNCH_CONFIG) == 56,
               "HIP_LAUNCH_CONFIG layout");

#endif /* TRD_DRIVER_HIP_ABI_H */
