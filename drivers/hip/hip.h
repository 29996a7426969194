/* SPDX-License-Identifier: Apache-2.0 */
/* hip.h: the HIP driver's parts.
 *
 *   entry.c   the ops table
 *   device.c  init, enumeration and properties, the current device
 *   memory.c  allocations and copies
 *   stream.c  streams
 *   event.c   timing events
 *   module.c  HSACO code objects
 *   launch.c  kernel launches and their scratch arenas
 *   status.c  HIP errors as trident statuses and messages
 *   loader.c  the HIP runtime through drivers/common's loader (symbols.h)
 *
 * HIP keeps a current device per thread and binds modules, streams, events
 * and allocations to the device current when they are made. The driver makes
 * its device current around such calls and restores the caller's afterwards
 * (hip_device_enter/leave); a launch on a stream needs no current device, as
 * the stream carries its own.
 */
#ifndef TRD_DRIVER_HIP_H
#define TRD_DRIVER_HIP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <trident/driver.h>

#include "drivers/common/scratch.h"
#include "drivers/common/services.h"
#include "drivers/common/vendor_lib.h"
#include "drivers/hip/hip_abi.h"
#include "drivers/hip/symbols.h"

struct hip_api {
#define HIP_API_FIELD(ret, name, params) ret(*name) params;
    HIP_SYMBOLS(HIP_API_FIELD, HIP_API_FIELD)
#undef HIP_API_FIELD
};

/* What init learned of one device. */
struct hip_device_info {
    trd_status_t status;      /* TRD_OK, or why the device is not usable */
    char error[512];
    hipDevice_t handle;
    char name[256];
    char arch[64];            /* gcnArchName without its features */
    char pci_bus_id[32];
    trd_device_props_t props; /* the strings above are set by device_props */
    int cooperative;          /* hipDeviceAttributeCooperativeLaunch */
    int cluster;              /* R0600 clusterLaunch; -1 when unknown */
};

struct hip_driver {
    trd_vlib_t lib;
    struct hip_api api;
    uint32_t ndevices;
    struct hip_device_info *devices;
};

struct hip_device {
    struct hip_driver *drv;
    const struct hip_device_info *info;
    int ordinal;
    char uri[24];                 /* "hip:0", for messages */
    trd_scratch_mem_t scratch_mem; /* hip_mem_alloc/free on this device */
    trd_arena_set_t native;        /* scratch of native streams launched on unwrapped (the NULL stream too) */
};

enum hip_launch_mode { HIP_LAUNCH_PLAIN, HIP_LAUNCH_COOPERATIVE, HIP_LAUNCH_CLUSTER };

struct hip_module {
    struct hip_device *dev;
    hipModule_t module;
    hipFunction_t function;
    enum hip_launch_mode mode;
    uint32_t block_x;   /* num_warps * warp_size */
    uint32_t num_ctas;
    uint32_t shared;
    uint32_t cooperative; /* with a cluster launch */
    trd_scratch_spec_t scratch;
    char label[96];
};

struct hip_stream {
    struct hip_device *dev;
    hipStream_t handle;
    int owned;               /* created here (else wrapped: the caller's) */
    trd_arena_t arena;       /* its scratch */
};

struct hip_event {
    struct hip_device *dev;
    hipEvent_t handle;
};

/* loader.c */
trd_status_t hip_library_open(struct hip_driver *d, const char *configured);
void hip_library_close(struct hip_driver *d);

/* status.c */
trd_status_t hip_status(hipError_t e);
/* "hipErrorNoDevice"; "hipError" when the runtime cannot name it. */
const char *hip_error_name(const struct hip_api *api, hipError_t e);
/* "hipErrorOutOfMemory (2): out of memory" into buf. */
void hip_describe(const struct hip_api *api, hipError_t e, char *buf, size_t cap);
/* Sets the thread's message to "<what>: <hip_describe>" and returns the
 * mapped status. */
trd_status_t hip_fail(const struct hip_api *api, hipError_t e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Logs "<what> on <device> failed: <hip_describe>" for a failure a void op
 * cannot return; the thread's message stays as it was. */
void hip_log_failure(const struct hip_device *dev, hipError_t e, const char *what);

/* device.c */
trd_status_t hip_device_enter(const struct hip_device *dev, int *prev);
void hip_device_leave(const struct hip_device *dev, int prev);

/* The ops, by file. */
trd_status_t hip_init(const trd_driver_init_args_t *args, void **driver);
void hip_fini(void *driver);
trd_status_t hip_device_count(void *driver, uint32_t *count);
trd_status_t hip_device_props(void *driver, uint32_t ordinal, trd_device_props_t *props);
trd_status_t hip_device_open(void *driver, uint32_t ordinal, void **device);
void hip_device_close(void *device);
trd_status_t hip_module_load(void *device, const trd_driver_module_desc_t *desc, void **module,
                             trd_load_info_t *info);
void hip_module_unload(void *module);
trd_status_t hip_launch(void *module, void *stream, void *native, const trd_driver_launch_t *launch);
trd_status_t hip_mem_alloc(void *device, uint64_t size, void **ptr);
void hip_mem_free(void *device, void *ptr);
trd_status_t hip_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream);
trd_status_t hip_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream);
trd_status_t hip_stream_create(void *device, void **stream);
trd_status_t hip_stream_wrap(void *device, void *native, void **stream);
void hip_stream_destroy(void *stream);
trd_status_t hip_stream_sync(void *stream);
void *hip_stream_native(void *stream);
trd_status_t hip_stream_capturing(void *stream, int32_t *capturing);
trd_status_t hip_event_create(void *device, void **event);
void hip_event_destroy(void *event);
trd_status_t hip_event_record(void *event, void *stream);
trd_status_t hip_event_sync(void *event);
trd_status_t hip_event_elapsed(void *start, void *end, double *ms);

#endif /* TRD_DRIVER_HIP_H */
