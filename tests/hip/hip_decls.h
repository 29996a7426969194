/* SPDX-License-Identifier: Apache-2.0 */
/* hip_decls.h: the HIP declarations the test double needs beyond what the
 * build's HIP headers give. With ROCm 5.x's hip_runtime_api.h (Debian 12's
 * libamdhip64-dev) most come from there; without headers, or with others,
 * everything comes from here. Layouts are those of ROCm 5.2 (R0000) and 6.x
 * (R0600, hipDrvLaunchKernelEx); the sizes are asserted below. */
#ifndef TRD_TESTS_HIP_DECLS_H
#define TRD_TESTS_HIP_DECLS_H

#include <stddef.h>

#ifdef HIPDOUBLE_WITH_HEADERS
#include <hip/hip_version.h>
#if HIP_VERSION_MAJOR == 5
#define HD_REAL_HEADERS 1
#endif
#endif

#if HD_REAL_HEADERS
#include <hip/hip_runtime_api.h>
typedef hipDeviceProp_t hd_props_r0000;
#else
typedef enum hipError_t {
    hipSuccess = 0,
    hipErrorInvalidValue = 1,
    hipErrorOutOfMemory = 2,
    hipErrorNotInitialized = 3,
    hipErrorInvalidConfiguration = 9,
    hipErrorInvalidMemcpyDirection = 21,
    hipErrorNoDevice = 100,
    hipErrorInvalidDevice = 101,
    hipErrorInvalidImage = 200,
    hipErrorInvalidContext = 201,
    hipErrorNoBinaryForGpu = 209,
    hipErrorInvalidKernelFile = 218,
    hipErrorInvalidHandle = 400,
    hipErrorInvalidResourceHandle = 400,
    hipErrorNotFound = 500,
    hipErrorNotReady = 600,
    hipErrorLaunchOutOfResources = 701,
    hipErrorCooperativeLaunchTooLarge = 720,
    hipErrorNotSupported = 801,
    hipErrorStreamCaptureUnsupported = 900,
    hipErrorUnknown = 999
} hipError_t;
typedef int hipDevice_t;
typedef int hipDeviceAttribute_t;
typedef int hipJitOption;
typedef int hipFunction_attribute;
typedef int hipMemcpyKind;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct hipUUID_t {
    char bytes[16];
} hipUUID;
typedef enum hipStreamCaptureStatus {
    hipStreamCaptureStatusNone = 0,
    hipStreamCaptureStatusActive = 1,
    hipStreamCaptureStatusInvalidated = 2
} hipStreamCaptureStatus;
typedef int hipStreamCaptureMode;
typedef struct ihipGraph *hipGraph_t;
#define hipDeviceAttributeCooperativeLaunch 10
#define hipDeviceAttributeComputeCapabilityMajor 23
#define hipDeviceAttributeMaxThreadsPerBlock 56
#define hipDeviceAttributeComputeCapabilityMinor 61
#define hipDeviceAttributeMultiprocessorCount 63
#define hipDeviceAttributePciBusId 67
#define hipDeviceAttributePciDeviceId 68
#define hipDeviceAttributePciDomainID 69
#define hipDeviceAttributeMaxSharedMemoryPerBlock 74
#define hipDeviceAttributeSharedMemPerBlockOptin 75
#define hipDeviceAttributeWarpSize 87
#define HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 1
#define HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES 3
#define HIP_FUNC_ATTRIBUTE_NUM_REGS 4
#define HIP_FUNC_ATTRIBUTE_MAX 10
#define hipJitOptionInfoLogBuffer 3
#define hipJitOptionInfoLogBufferSizeBytes 4
#define hipJitOptionErrorLogBuffer 5
#define hipJitOptionErrorLogBufferSizeBytes 6
#define hipJitOptionNumOptions 17
#define hipMemcpyHostToHost 0
#define hipMemcpyHostToDevice 1
#define hipMemcpyDeviceToHost 2
#define hipMemcpyDeviceToDevice 3
#define hipMemcpyDefault 4
#define hipStreamNonBlocking 0x1
#define hipEventDisableTiming 0x2

/* ROCm 5.2's hipDeviceProp_t (the R0000 layout). */
typedef struct hd_props_r0000 {
    char name[256];
    size_t totalGlobalMem, sharedMemPerBlock;
    int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate, memoryClockRate,
        memoryBusWidth;
    size_t totalConstMem;
    int major, minor, multiProcessorCount, l2CacheSize, maxThreadsPerMultiProcessor, computeMode,
        clockInstructionRate;
    unsigned arch; /* hipDeviceArch_t: bit-fields in 4 bytes */
    int concurrentKernels, pciDomainID, pciBusID, pciDeviceID;
    size_t maxSharedMemoryPerMultiProcessor;
    int isMultiGpuBoard, canMapHostMemory, gcnArch;
    char gcnArchName[256];
    int integrated, cooperativeLaunch, cooperativeMultiDeviceLaunch, maxTexture1DLinear, maxTexture1D,
        maxTexture2D[2], maxTexture3D[3];
    unsigned int *hdpMemFlushCntl, *hdpRegFlushCntl;
    size_t memPitch, textureAlignment, texturePitchAlignment;
    int kernelExecTimeoutEnabled, ECCEnabled, tccDriver, cooperativeMultiDeviceUnmatchedFunc,
        cooperativeMultiDeviceUnmatchedGridDim, cooperativeMultiDeviceUnmatchedBlockDim,
        cooperativeMultiDeviceUnmatchedSharedMem, isLargeBar, asicRevision, managedMemory,
        directManagedMemAccessFromHost, concurrentManagedAccess, pageableMemoryAccess,
        pageableMemoryAccessUsesHostPageTables;
} hd_props_r0000;

hipError_t hipInit(unsigned int flags);
hipError_t hipRuntimeGetVersion(int *version);
hipError_t hipGetDeviceCount(int *count);
hipError_t hipDeviceGet(hipDevice_t *device, int ordinal);
hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device);
hipError_t hipDeviceGetAttribute(int *pi, hipDeviceAttribute_t attr, int deviceId);
hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device);
hipError_t hipDeviceGetPCIBusId(char *pciBusId, int len, int device);
hipError_t hipDeviceGetUuid(hipUUID *uuid, hipDevice_t device);
hipError_t hipGetDeviceProperties(hd_props_r0000 *prop, int deviceId);
hipError_t hipSetDevice(int deviceId);
hipError_t hipGetDevice(int *deviceId);
hipError_t hipDeviceSynchronize(void);
const char *hipGetErrorName(hipError_t hip_error);
const char *hipGetErrorString(hipError_t hipError);
hipError_t hipModuleLoadDataEx(hipModule_t *module, const void *image, unsigned int numOptions,
                               hipJitOption *options, void **optionValues);
hipError_t hipModuleUnload(hipModule_t module);
hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname);
hipError_t hipFuncGetAttribute(int *value, hipFunction_attribute attrib, hipFunction_t hfunc);
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                 unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                 unsigned int blockDimZ, unsigned int sharedMemBytes, hipStream_t stream,
                                 void **kernelParams, void **extra);
hipError_t hipMalloc(void **ptr, size_t size);
hipError_t hipFree(void *ptr);
hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind);
hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemset(void *dst, int value, size_t sizeBytes);
hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, hipStream_t stream);
hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags);
hipError_t hipStreamDestroy(hipStream_t stream);
hipError_t hipStreamSynchronize(hipStream_t stream);
hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags);
hipError_t hipEventDestroy(hipEvent_t event);
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
hipError_t hipEventSynchronize(hipEvent_t event);
hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop);
hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode);
hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph);
hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus);
#endif /* HD_REAL_HEADERS */

/* hipErrorInvalidClusterSize: in the headers from ROCm 6.x on. */
#define HD_ERROR_INVALID_CLUSTER_SIZE ((hipError_t)1054)

/* ROCm 6.0's hipDeviceProp_t (the R0600 layout). */
typedef struct hd_props_r0600 {
    char name[256];
    hipUUID uuid;
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem, sharedMemPerBlock;
    int regsPerBlock, warpSize;
    size_t memPitch;
    int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
    size_t totalConstMem;
    int major, minor;
    size_t textureAlignment, texturePitchAlignment;
    int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated, canMapHostMemory, computeMode,
        maxTexture1D, maxTexture1DMipmap, maxTexture1DLinear, maxTexture2D[2], maxTexture2DMipmap[2],
        maxTexture2DLinear[3], maxTexture2DGather[2], maxTexture3D[3], maxTexture3DAlt[3], maxTextureCubemap,
        maxTexture1DLayered[2], maxTexture2DLayered[3], maxTextureCubemapLayered[2], maxSurface1D, maxSurface2D[2],
        maxSurface3D[3], maxSurface1DLayered[2], maxSurface2DLayered[3], maxSurfaceCubemap,
        maxSurfaceCubemapLayered[2];
    size_t surfaceAlignment;
    int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver, asyncEngineCount,
        unifiedAddressing, memoryClockRate, memoryBusWidth, l2CacheSize, persistingL2CacheMaxSize,
        maxThreadsPerMultiProcessor, streamPrioritiesSupported, globalL1CacheSupported, localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID, hostNativeAtomicSupported,
        singleToDoublePrecisionPerfRatio, pageableMemoryAccess, concurrentManagedAccess, computePreemptionSupported,
        canUseHostPointerForRegisteredMem, cooperativeLaunch, cooperativeMultiDeviceLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost, maxBlocksPerMultiProcessor,
        accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported, sparseHipArraySupported, hostRegisterReadOnlySupported,
        timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported;
    unsigned int gpuDirectRDMAFlushWritesOptions;
    int gpuDirectRDMAWritesOrdering;
    unsigned int memoryPoolSupportedHandleTypes;
    int deferredMappingHipArraySupported, ipcEventSupported, clusterLaunch, unifiedFunctionPointers, reserved[63],
        hipReserved[32];
    char gcnArchName[256];
    size_t maxSharedMemoryPerMultiProcessor;
    int clockInstructionRate;
    unsigned arch;
    unsigned int *hdpMemFlushCntl, *hdpRegFlushCntl;
    int cooperativeMultiDeviceUnmatchedFunc, cooperativeMultiDeviceUnmatchedGridDim,
        cooperativeMultiDeviceUnmatchedBlockDim, cooperativeMultiDeviceUnmatchedSharedMem, isLargeBar, asicRevision;
} hd_props_r0600;

/* hipDrvLaunchKernelEx's configuration (ROCm 6.x headers). */
typedef enum hd_launch_attribute_id {
    hdLaunchAttributeCooperative = 2,
    hdLaunchAttributeClusterDimension = 4
} hd_launch_attribute_id;

typedef union hd_launch_attribute_value {
    char pad[64];
    void *align;
    int cooperative;
    struct {
        unsigned int x, y, z;
    } clusterDim;
} hd_launch_attribute_value;

typedef struct hd_launch_attribute {
    hd_launch_attribute_id id;
    char pad[8 - sizeof(hd_launch_attribute_id)];
    union {
        hd_launch_attribute_value val;
        hd_launch_attribute_value value;
    };
} hd_launch_attribute;

typedef struct hd_launch_config {
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    hipStream_t hStream;
    hd_launch_attribute *attrs;
    unsigned int numAttrs;
} hd_launch_config;

/* The sizes and offsets of the ROCm headers (measured there). */
_Static_assert(sizeof(hd_props_r0000) == 792 && offsetof(hd_props_r0000, warpSize) == 276 &&
                   offsetof(hd_props_r0000, gcnArchName) == 396,
               "R0000 layout");
_Static_assert(sizeof(hd_props_r0600) == 1472 && offsetof(hd_props_r0600, warpSize) == 308 &&
                   offsetof(hd_props_r0600, clusterLaunch) == 772 && offsetof(hd_props_r0600, gcnArchName) == 1160,
               "R0600 layout");
_Static_assert(sizeof(hd_launch_attribute) == 72 && offsetof(hd_launch_config, attrs) == 40 &&
                   sizeof(hd_launch_config) == 56,
               "hipDrvLaunchKernelEx layouts");

#endif
