/* SPDX-License-Identifier: Apache-2.0 */
/* symbols.h: the Level Zero functions the driver takes from the loader
 * library, as an X-macro list. REQUIRED ones must all resolve or the library
 * is refused; OPTIONAL ones may be missing (the feature is then off).
 *
 * Every name here is exported by loader 1.8.12 (Debian 12's libze1).
 * zeInitDrivers is deliberately absent: it exists only from loader 1.18 and
 * must not be mixed with zeInit/zeDriverGet. */
#ifndef TRD_DRIVER_LEVELZERO_SYMBOLS_H
#define TRD_DRIVER_LEVELZERO_SYMBOLS_H

#define ZDRV_SYMBOLS(REQUIRED, OPTIONAL)                                                              \
    REQUIRED(zeInit)                                                                                  \
    REQUIRED(zeDriverGet)                                                                             \
    REQUIRED(zeDriverGetApiVersion)                                                                   \
    REQUIRED(zeDriverGetProperties)                                                                   \
    REQUIRED(zeDriverGetExtensionProperties)                                                          \
    REQUIRED(zeDeviceGet)                                                                             \
    REQUIRED(zeDeviceGetProperties)                                                                   \
    REQUIRED(zeDeviceGetComputeProperties)                                                            \
    REQUIRED(zeDeviceGetMemoryProperties)                                                             \
    REQUIRED(zeDeviceGetCommandQueueGroupProperties)                                                  \
    REQUIRED(zeContextCreate)                                                                         \
    REQUIRED(zeContextDestroy)                                                                        \
    REQUIRED(zeCommandListCreateImmediate)                                                            \
    REQUIRED(zeCommandListDestroy)                                                                    \
    REQUIRED(zeCommandListAppendLaunchKernel)                                                         \
    REQUIRED(zeCommandListAppendBarrier)                                                              \
    REQUIRED(zeCommandListAppendMemoryCopy)                                                           \
    REQUIRED(zeCommandListAppendMemoryFill)                                                           \
    REQUIRED(zeCommandListAppendWriteGlobalTimestamp)                                                 \
    REQUIRED(zeEventPoolCreate)                                                                       \
    REQUIRED(zeEventPoolDestroy)                                                                      \
    REQUIRED(zeEventCreate)                                                                           \
    REQUIRED(zeEventDestroy)                                                                          \
    REQUIRED(zeEventHostSynchronize)                                                                  \
    REQUIRED(zeEventHostReset)                                                                        \
    REQUIRED(zeEventQueryStatus)                                                                      \
    REQUIRED(zeModuleCreate)                                                                          \
    REQUIRED(zeModuleDestroy)                                                                         \
    REQUIRED(zeModuleBuildLogGetString)                                                               \
    REQUIRED(zeModuleBuildLogDestroy)                                                                 \
    REQUIRED(zeKernelCreate)                                                                          \
    REQUIRED(zeKernelDestroy)                                                                         \
    REQUIRED(zeKernelGetProperties)                                                                   \
    REQUIRED(zeKernelSetGroupSize)                                                                    \
    REQUIRED(zeKernelSetArgumentValue)                                                                \
    REQUIRED(zeMemAllocDevice)                                                                        \
    REQUIRED(zeMemAllocHost)                                                                          \
    REQUIRED(zeMemFree)                                                                               \
    OPTIONAL(zeDevicePciGetPropertiesExt) /* ZE_extension_pci_properties */                           \
    OPTIONAL(zeMemFreeExt)                /* ZE_extension_memory_free_policies */                     \
    OPTIONAL(zeModuleDynamicLink)         /* extern_libs */

#endif
