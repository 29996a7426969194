/*
 * host_kernel.h: the ABI of kernels the host CPU driver runs.
 *
 * A host kernel is a function in a shared object, compiled to native code,
 * written in Triton's programming model: the driver calls it once per program
 * instance (pid x, y, z) of the launch grid, spreading the calls over a pool
 * of worker threads. Programs of one launch may run in any order and in
 * parallel; the launch completes when every program has returned.
 *
 *     TRD_HOST_KERNEL(vadd)
 *     {
 *         const float *x = TRD_ARG(const float *, 0);
 *         ...
 *         int32_t n = TRD_ARG(int32_t, 3);
 *         uint32_t pid = program->pid[0];
 *     }
 *
 * args[i] points at the value of the kernel's i-th non-constexpr parameter,
 * laid out as the signature says (pointers as void *, i32 as int32_t, fp16
 * as its 16-bit pattern, ...), exactly as CUDA's kernelParams.
 */
#ifndef TRIDENT_HOST_KERNEL_H
#define TRIDENT_HOST_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRD_HOST_KERNEL_ABI_VERSION 1

typedef struct trd_host_program {
    uint32_t struct_size;
    uint32_t abi_version;      /* TRD_HOST_KERNEL_ABI_VERSION */
    uint32_t pid[3];           /* this program's id along x, y, z */
    uint32_t num_programs[3];  /* the grid */
    void *global_scratch;      /* this program's slice of global scratch, or NULL */
    void *profile_scratch;     /* this program's slice of profile scratch, or NULL */
} trd_host_program_t;

typedef void trd_host_kernel_fn(void *const *args, const trd_host_program_t *program);

#if defined(__GNUC__)
#define TRD_HOST_KERNEL_EXPORT __attribute__((visibility("default")))
#else
#define TRD_HOST_KERNEL_EXPORT
#endif

#define TRD_HOST_KERNEL(name)                                                                \
    TRD_HOST_KERNEL_EXPORT void name(void *const *args, const trd_host_program_t *program); \
    TRD_HOST_KERNEL_EXPORT void name(void *const *args, const trd_host_program_t *program)

/* The i-th argument's value as type T. */
#define TRD_ARG(T, i) (*(T const *)args[(i)])

#ifdef __cplusplus
}
#endif

#endif /* TRIDENT_HOST_KERNEL_H */
