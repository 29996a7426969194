/* SPDX-License-Identifier: Apache-2.0 */
/* cudadouble.h: the state of the libcuda test double (cudadouble.c), which a
 * test reaches through the harness (tests/doubles/double.h): it dlopens the
 * library the driver was pointed at (the same object) and calls its
 * trd_double_state(). */
#ifndef TRD_TESTS_CUDADOUBLE_H
#define TRD_TESTS_CUDADOUBLE_H

#include <stdint.h>

#include "tests/doubles/double.h"

#define CUDADOUBLE_MAX_PARAMS 64
#define CUDADOUBLE_PARAM_BYTES 2048
/* The first qword of every tensor map the double encodes. */
#define CUDADOUBLE_TMAP_MAGIC UINT64_C(0x54524454454e534d)

/* One cuTensorMapEncodeTiled call, its arguments as received (CUDA's order:
 * innermost dimension first, rank-1 byte strides). */
struct cudadouble_tmap {
    int result;             /* the CUresult it returned */
    uintptr_t map;          /* the tensorMap address written to */
    int dtype;
    unsigned rank;
    uintptr_t address;
    uint64_t dims[5], strides[5];   /* strides: rank-1 entries */
    unsigned box[5], estrides[5];
    int interleave, swizzle, l2, oob;
};

/* The 128 bytes the double writes for a successful call: the magic, then
 * the arguments, so that a test finding a map in a launch's parameters can
 * tell which call made it. */
struct cudadouble_tmap_bytes {
    uint64_t magic;
    uint64_t address;
    uint64_t dims[5];
    uint64_t strides[4];
    uint32_t box[5];
    uint8_t dtype, rank, swizzle, oob, l2, interleave;
    uint8_t pad[2];
};

/* One cuLaunchKernelEx call. */
struct cudadouble_launch {
    unsigned grid[3], block[3], shared;
    void *stream;
    unsigned nparams;                       /* as many as the test declared (cudadouble_param_sizes) */
    uintptr_t param_ptr[CUDADOUBLE_MAX_PARAMS];   /* kernelParams[i] as passed */
    unsigned param_off[CUDADOUBLE_MAX_PARAMS], param_size[CUDADOUBLE_MAX_PARAMS];
    unsigned char bytes[CUDADOUBLE_PARAM_BYTES];  /* each parameter's bytes, copied at param_off */
};

#define CUDADOUBLE_MAX_TMAPS 256
#define CUDADOUBLE_MAX_LAUNCHES 64
#define CUDADOUBLE_MAX_COSTS 8

/* The double's state (tests/doubles/double.h): the test sets the configuration
 * and reads the record through trd_double_state(), holding common.lock. */
struct cudadouble_state {
    struct trd_double common;   /* calls, faults, violations of the CUDA Driver API's rules */
    /* Configuration, set by the test (trd_double_reset: the defaults). */
    int cc;                     /* the device's compute capability (90) */
    int capturing;              /* cuStreamIsCapturing reports every stream captured (1) or not (0) */
    unsigned nsizes;            /* the launched kernel's parameter sizes: the double cannot read them from a cubin */
    unsigned sizes[CUDADOUBLE_MAX_PARAMS];
    /* Launches with gridDimX grid_x take ms on the double's clock (others none); events record that clock, so
     * cuEventElapsedTime gives what the launches between two events cost: a benchmark's figures. */
    struct {
        unsigned grid_x;
        double ms;
    } costs[CUDADOUBLE_MAX_COSTS];
    unsigned ncosts;
    /* The record. */
    struct cudadouble_tmap tmaps[CUDADOUBLE_MAX_TMAPS];
    unsigned ntmaps;
    struct cudadouble_launch launches[CUDADOUBLE_MAX_LAUNCHES];
    unsigned nlaunches;
};

#endif
