/* cudadouble.h: what the libcuda test double (cudadouble.c) lets a test read
 * back. A test dlopens the library the driver was pointed at and resolves these
 * functions by name (the typedefs below), so it sees the double's own state. */
#ifndef TRD_TESTS_CUDADOUBLE_H
#define TRD_TESTS_CUDADOUBLE_H

#include <stdint.h>

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

typedef void cudadouble_reset_fn(void);
typedef unsigned cudadouble_calls_fn(const char *function);
typedef unsigned cudadouble_tmap_count_fn(void);
typedef int cudadouble_tmap_get_fn(unsigned index, struct cudadouble_tmap *out);
/* The sizes of the launched kernel's parameters (the double cannot read them from a cubin). */
typedef void cudadouble_param_sizes_fn(unsigned n, const unsigned *sizes);
typedef unsigned cudadouble_launch_count_fn(void);
typedef int cudadouble_launch_get_fn(unsigned index, struct cudadouble_launch *out);
/* Launches with gridDimX grid_x take ms on the double's clock (others none); events record that clock, so
 * cuEventElapsedTime gives what the launches between two events cost: a benchmark's figures. */
typedef void cudadouble_launch_ms_fn(unsigned grid_x, float ms);
/* cuStreamIsCapturing reports every stream as being captured (1) or not (0). */
typedef void cudadouble_capturing_fn(int capturing);
/* Calls that broke a documented rule of the CUDA Driver API. */
typedef unsigned cudadouble_violation_count_fn(void);
typedef const char *cudadouble_violation_fn(unsigned index);

#endif
