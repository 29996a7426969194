/* hipdouble.h: what the HIP test double (hipdouble.c) lets a test read back.
 * A test dlopens the same library the driver was pointed at and resolves these
 * functions by name (the typedefs below), so it sees the double's own state. */
#ifndef TRD_TESTS_HIPDOUBLE_H
#define TRD_TESTS_HIPDOUBLE_H

#include <stdint.h>

#define HIPDOUBLE_MAX_ARGS 32
#define HIPDOUBLE_KERNARG_BYTES 512

/* Defaults of a device spec (TRDTEST_HIP_DEVICES) without key=value overrides. */
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

typedef void hipdouble_reset_fn(void);
typedef unsigned hipdouble_calls_fn(const char *function);
typedef unsigned hipdouble_launch_count_fn(void);
typedef int hipdouble_launch_get_fn(unsigned index, struct hipdouble_launch *out);
typedef unsigned hipdouble_violation_count_fn(void);
typedef const char *hipdouble_violation_fn(unsigned index);
typedef int hipdouble_current_device_fn(void);
/* "allocations", "streams", "events", "modules": how many are alive. */
typedef unsigned hipdouble_live_fn(const char *what);
/* The allocation holding ptr: 1 with its base, size and device, else 0. */
typedef int hipdouble_allocation_fn(const void *ptr, void **base, uint64_t *size, int *device);
/* A stream's device and creation flags: 1, or 0 when it is not a live stream. */
typedef int hipdouble_stream_info_fn(const void *stream, int *device, unsigned *flags);

#endif
