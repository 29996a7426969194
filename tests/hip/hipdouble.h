/* SPDX-License-Identifier: Apache-2.0 */
/* hipdouble.h: the state of the HIP test double (hipdouble.c), which a test
 * reaches through the harness (tests/doubles/double.h): it dlopens the library
 * the driver was pointed at (the same object) and calls its trd_double_state(). */
#ifndef TRD_TESTS_HIPDOUBLE_H
#define TRD_TESTS_HIPDOUBLE_H

#include <stdint.h>

#include "tests/doubles/double.h"

#define HIPDOUBLE_MAX_ARGS 32
#define HIPDOUBLE_KERNARG_BYTES 512

/* Defaults of a device spec (hipdouble_state.devices) without key=value overrides. */
#define HIPDOUBLE_MEMORY(i) ((uint64_t)(192 + (i)) << 30)
#define HIPDOUBLE_SHARED 65536
#define HIPDOUBLE_THREADS 1024
#define HIPDOUBLE_PCI_BUS(i) (0x10 + 8 * (i))
/* hipDevice_t handles differ from ordinals, so that mixing them up fails. */
#define HIPDOUBLE_HANDLE(i) (0x100 + (i))
/* Byte k of device i's UUID. */
#define HIPDOUBLE_UUID_BYTE(i, k) ((uint8_t)(0xd0 + 0x10 * (i) + (k)))

/* One launch, as the runtime saw it. */
struct hipdouble_launch {
    char api[40];          /* "hipModuleLaunchKernel", "hipModuleLaunchCooperativeKernel", "hipDrvLaunchKernelEx" */
    char kernel[128];
    int module_device;     /* the device the kernel's module was loaded on */
    int device;            /* the device it ran on: the stream's, or the current one for NULL */
    int current_device;    /* the calling thread's current device during the call */
    void *stream;          /* as passed */
    unsigned grid[3], block[3], shared;
    unsigned cluster[3];   /* hipDrvLaunchKernelEx's cluster attribute; 0 without */
    int cooperative;
    unsigned nargs;        /* explicit arguments, from the code object's metadata */
    unsigned arg_offset[HIPDOUBLE_MAX_ARGS], arg_size[HIPDOUBLE_MAX_ARGS];
    unsigned kernarg_size;
    /* The kernel argument segment the runtime builds: argument i copied from
     * *kernelParams[i] to arg_offset[i], everything else zero. */
    unsigned char kernarg[HIPDOUBLE_KERNARG_BYTES];
};

typedef int hipdouble_launch_get_fn(unsigned index, struct hipdouble_launch *out);
/* The calling thread's current device. */
typedef int hipdouble_current_device_fn(void);
/* "allocations", "streams", "events", "modules": how many are alive. */
typedef unsigned hipdouble_live_fn(const char *what);
/* The allocation holding ptr: 1 with its base, size and device, else 0. */
typedef int hipdouble_allocation_fn(const void *ptr, void **base, uint64_t *size, int *device);
/* A stream's device and creation flags: 1, or 0 when it is not a live stream. */
typedef int hipdouble_stream_info_fn(const void *stream, int *device, unsigned *flags);

/* The double's state: the test sets the configuration (holding common.lock), reads the record through the
 * functions below (which take the lock). trd_double_reset restores the defaults and empties the record; what is
 * alive stays alive. */
struct hipdouble_state {
    struct trd_double common;   /* calls, faults, violations of HIP's documented rules */
    /* Read by hipInit: a comma list of devices ARCH/WARP/CUS[/OPTION]..., ARCH the gcnArchName
     * ("gfx942:sramecc+:xnack-"), OPTION one of coop, cluster, nouuid, mem=BYTES, shared=BYTES, optin=BYTES,
     * threads=N, pci=TEXT. Empty (the default): no GPU, as ROCm without one (hipInit returns
     * hipErrorInvalidDevice, hipGetDeviceCount hipErrorNoDevice). */
    char devices[1024];
    /* Read by hipModuleLoadDataEx: text written into the error log buffer when a load fails. NULL (the default):
     * the log buffers are left untouched, as AMD's runtime does. */
    const char *jit_log;
    hipdouble_launch_get_fn *launch_get;
    unsigned nlaunches;
    hipdouble_current_device_fn *current_device;
    hipdouble_live_fn *live;
    hipdouble_allocation_fn *allocation;
    hipdouble_stream_info_fn *stream_info;
};

#endif
