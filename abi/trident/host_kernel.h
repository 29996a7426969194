/* SPDX-License-Identifier: Apache-2.0 */
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
 *
 * A kernel declares its signature beside it, in Triton's notation:
 *
 *     TRD_HOST_KERNEL_SIGNATURE(vadd, "x:*fp32,y:*fp32,out:*fp32,n:i32");
 *
 * The declaration is an ELF note (owner "trident", type
 * TRD_HOST_NOTE_SIGNATURE, description "vadd\0<signature>\0") that trident
 * reads without loading the image: a kernel made from the image alone takes
 * it as its signature, and one given another signature (a Triton kernel's,
 * when the image is its host twin) is refused with both named. Parameter
 * names may differ; the types, in order, must not.
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

/* The note type of a signature declaration (owner "trident"). */
#define TRD_HOST_NOTE_SIGNATURE 1

#define TRD_HOST_NOTE_PAD_(n) (((n) + 3u) & ~3u)
#define TRD_HOST_KERNEL_SIGNATURE(name, signature)                                                        \
    __attribute__((section(".note.trident"), used, aligned(4))) static const struct {                  \
        uint32_t namesz, descsz, type;                                                                   \
        char owner[8];                                                                                   \
        char desc[TRD_HOST_NOTE_PAD_(sizeof(#name "\0" signature))];                                     \
    } trd_host_signature_##name = {8, sizeof(#name "\0" signature), TRD_HOST_NOTE_SIGNATURE, "trident", \
                                   #name "\0" signature}

/* The i-th argument's value as type T. */
#define TRD_ARG(T, i) (*(T const *)args[(i)])

#ifdef __cplusplus
}
#endif

#endif /* TRIDENT_HOST_KERNEL_H */
