/*
 * xla.h: XLA custom-call handlers exported by libtrident (typed FFI).
 *
 * Register them from Python with jax.ffi (python/trident/jax/_ffi.py does):
 *
 *   jax.ffi.register_ffi_type("trident.call", {"type_id": capsule(trd_xla_<platform>_type_id()),
 *                                             "type_info": capsule(trd_xla_type_info())}, platform)
 *   jax.ffi.register_ffi_target("trident_kernel_call",
 *       {"instantiate": capsule(trd_xla_<platform>_instantiate),
 *        "execute": capsule(trd_xla_<platform>_execute)}, platform=...)
 *
 * for platform cuda ("CUDA"), rocm ("ROCM") or cpu ("cpu"). The handlers take
 * an XLA_FFI_CallFrame * and return an XLA_FFI_Error * (NULL on success); they
 * are declared with void * here so that this header needs no XLA header.
 *
 * The call's attributes (docs/xla.md describes them), version 1:
 *   kernel     string  a trident kernel bundle (every target the call may run on)
 *   grid       s64[3]  programs along x, y, z
 *   arg_kind   s32[n]  per kernel parameter: 0 operand, 1 result, 2 scalar, 3 null
 *   arg_index  s64[n]  operand or result index (kinds 0, 1)
 *   scalars    string  the scalar parameters' bytes, in order, at their signature sizes
 *   zero       s64[]   results to zero before the launch
 *   scratch    s64[2]  results holding the global and profile scratch (-1: none)
 *   options    string  load-stage backend options, JSON {"cuda": {"maxnreg": "64"}, ...}
 *   version    s32     1
 *
 * Version 2, an autotuned call: N candidate kernels launched with the same
 * arguments (arg_kind, arg_index, scalars, scratch, options as above); the
 * first execution on a device benchmarks them on the call's own buffers and
 * keeps the fastest (in memory and in <cache_dir>/autotune/<key>-<arch>.json):
 *   kernel          string    the N candidates' bundles, concatenated
 *   kernel_offsets  s64[N+1]  candidate i is kernel[off[i] .. off[i+1])
 *   grid            s64[3N]   candidate i's grid at 3i
 *   zero            s64[]     the candidates' zeroed results, concatenated
 *   zero_offsets    s64[N+1]  candidate i's are zero[off[i] .. off[i+1])
 *   aliased         s64[]     operands the kernels write (aliased to a result):
 *                             saved before the benchmark, restored after each candidate
 *   autotune_key    string    names the choice ([A-Za-z0-9._-], at most 128)
 *   cache_dir       string    where the choice is kept ("": this process's memory only)
 *   options         string    as in version 1, or a JSON array of one such object per candidate
 *   version         s32       2
 */
#ifndef TRIDENT_XLA_H
#define TRIDENT_XLA_H

#include <trident/trident.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The newest attribute version this libtrident reads (it reads every older one). */
#define TRD_XLA_CALL_VERSION 2
#define TRD_XLA_TARGET "trident_kernel_call"

/* The state type the handlers keep between INSTANTIATE and EXECUTE: an XLA_FFI_TypeId * per platform (each
 * XLA FFI instance, jaxlib's CPU client and each GPU plugin, numbers types in its own registry) and one
 * XLA_FFI_TypeInfo *. */
TRD_API void *trd_xla_cuda_type_id(void);
TRD_API void *trd_xla_rocm_type_id(void);
TRD_API void *trd_xla_cpu_type_id(void);
TRD_API void *trd_xla_type_info(void);

TRD_API void *trd_xla_cuda_instantiate(void *call_frame);
TRD_API void *trd_xla_cuda_execute(void *call_frame);
TRD_API void *trd_xla_rocm_instantiate(void *call_frame);
TRD_API void *trd_xla_rocm_execute(void *call_frame);
TRD_API void *trd_xla_cpu_instantiate(void *call_frame);
TRD_API void *trd_xla_cpu_execute(void *call_frame);

/* 1 when this libtrident was built with the handlers. */
TRD_API int32_t trd_xla_available(void);

#ifdef __cplusplus
}
#endif

#endif /* TRIDENT_XLA_H */
