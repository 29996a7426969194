/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xla.h: XLA custom-call handlers (typed FFI), exported by libtrident_xla: a library of its own over
 * libtrident's public API (link -ltrident_xla -ltrident), installed with this header only where configure
 * built it (--enable-xla, jaxlib's FFI header found).
 *
 * Register them from Python with jax.ffi (python/trident/jax/protocol.py does):
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
 *   arg_kind   s32[n]  per kernel parameter: 0 operand, 1 result, 2 scalar, 3 null, 4 tensor map
 *   arg_index  s64[n]  operand or result index (kinds 0, 1; kind 4: of the tensor map's base)
 *   scalars    string  the scalar parameters' bytes, in order, at their signature sizes
 *   zero       s64[]   results to zero before the launch
 *   scratch    s64[2]  results holding the global and profile scratch (-1: none)
 *   options    string  load-stage backend options, JSON {"cuda": {"maxnreg": "64"}, ...}
 *   version    s32     1
 *   tma        s64[]   optional (absent: no kind-4 parameter): TRD_XLA_TMA_FIELDS values per kind-4
 *                      parameter, in parameter order (enum trd_xla_tma_field)
 *
 * Version 2, an autotuned call: N candidate kernels launched with the same
 * arguments (arg_kind, arg_index, scalars, scratch, options as above); the
 * first execution on a device benchmarks them on the call's own buffers and
 * keeps the fastest through libtrident's tuner (in memory and in
 * <cache_dir>/tune/<kernel>-<sha256 of key>-<arch>.json):
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
 *   tma             s64[]     optional: the candidates' records concatenated, each candidate's in
 *                             parameter order; with T kind-4 parameters, candidate i's record for
 *                             the t-th is at (i * T + t) * TRD_XLA_TMA_FIELDS. A map's box comes from
 *                             the candidate's compilation, so each candidate launches its own
 *                             encoding; the tensor (base, element size, shape, strides) is the same
 *   version         s32       2
 *
 * A kind-4 parameter is a host tensor descriptor that Triton lowered to the TMA
 * unit (signature type nvTmaDesc): a 128-byte CUtensorMap passed by value,
 * which the handler encodes at each execution from the base buffer's address
 * (the driver's tensor_map_encode; CUDA only). Its shape (i32) and strides
 * (i64) parameters that follow it are scalars (kind 2) as usual.
 */
#ifndef TRIDENT_XLA_H
#define TRIDENT_XLA_H

#include <trident/trident.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The call protocol: the custom-call target and state type, the attribute versions, the argument kinds and
 * the tma record's layout. trident.jax reads these from python/trident/jax/protocol.py, which a test checks
 * against this header. */
#define TRD_XLA_TARGET "trident_kernel_call"
#define TRD_XLA_STATE_TYPE "trident.call"
/* The CUDA target whose bundle has the record handler too (trd_xla_cuda_record_register registers it). */
#define TRD_XLA_TARGET_RECORD "trident_kernel_call_record"
#define TRD_XLA_VERSION_CALL 1      /* attributes of a call of one kernel */
#define TRD_XLA_VERSION_AUTOTUNE 2  /* attributes of an autotuned call */
/* The newest attribute version these handlers read (they read every older one). */
#define TRD_XLA_CALL_VERSION TRD_XLA_VERSION_AUTOTUNE

/* arg_kind: where each launch parameter's value comes from. */
enum trd_xla_arg_kind {
    TRD_XLA_ARG_OPERAND = 0,    /* operand arg_index's address */
    TRD_XLA_ARG_RESULT = 1,     /* result arg_index's address */
    TRD_XLA_ARG_SCALAR = 2,     /* the next bytes of `scalars` */
    TRD_XLA_ARG_NULL = 3,       /* a NULL pointer */
    TRD_XLA_ARG_TENSOR_MAP = 4  /* a tensor map encoded from operand arg_index (a `tma` record) */
};

/* One record of the `tma` attribute: where each value sits. Dimensions are row-major (0 outermost, as Triton
 * and NumPy order them); entries beyond the rank are 0. Enumerated values are CUDA's (cuda.h). */
enum trd_xla_tma_field {
    TRD_XLA_TMA_BASE = 0,          /* 0: arg_index names an operand, 1: a result */
    TRD_XLA_TMA_ELEM_TYPE = 1,     /* CUtensorMapDataType (Triton's tensordesc_meta elem_type is PTX's
                                      numbering: 8 f32.ftz, 9 f64, 10 bf16 are CUDA's 10, 8, 9) */
    TRD_XLA_TMA_ELEM_SIZE = 2,     /* bytes per element of the base array: the unit of strides */
    TRD_XLA_TMA_RANK = 3,          /* 1 .. 5 */
    TRD_XLA_TMA_SWIZZLE = 4,       /* CUtensorMapSwizzle (tensordesc_meta swizzle) */
    TRD_XLA_TMA_OOB_FILL = 5,      /* 0: out-of-bounds reads give zeros, 1: NaN (padding="nan") */
    TRD_XLA_TMA_FP4_PADDED = 6,    /* 1: fp4 values two to a byte (16U4_ALIGN16B); shape counts bytes, the map
                                      values (the innermost dimension doubled) */
    TRD_XLA_TMA_L2_PROMOTION = 7,  /* CUtensorMapL2promotion; Triton uses 2 (128 bytes) */
    TRD_XLA_TMA_SHAPE = 8,         /* 5 values: elements along each dimension */
    TRD_XLA_TMA_STRIDES = 13,      /* 5 values, in elements; the innermost is 1 */
    TRD_XLA_TMA_BLOCK = 18,        /* 5 values: the box one TMA copy moves (tensordesc_meta block_size) */
    TRD_XLA_TMA_RESERVED = 23,     /* 0 */
    TRD_XLA_TMA_FIELDS = 24
};

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

/* The RECORD stage (XLA FFI API 0.4 and newer, jaxlib 0.11.2 and newer; since TRIDENT_XLA_1.1): XLA calls it when
 * it records the call into a CUDA graph (command buffer), and it makes the launch a kernel node of XLA's graph, or
 * asks XLA to capture EXECUTE where it cannot (docs/xla.md). jax.ffi.register_ffi_target drops a bundle's record
 * handler, so trd_xla_cuda_record_register registers the target TRD_XLA_TARGET_RECORD (instantiate, execute and
 * record) through the API table of the XLA that registered the CUDA handlers (call it after registering them, and
 * before compiling programs that use it). It returns NULL on success, else why not (a message of the calling
 * thread): an XLA older than FFI API 0.4 or newer than the header the library was built against, a library built
 * against a header without the RECORD stage (whose trd_xla_cuda_record refuses every call). */
TRD_API void *trd_xla_cuda_record(void *call_frame);
TRD_API const char *trd_xla_cuda_record_register(void);
/* The XLA FFI API the library was built against, major * 1000 + minor (5 for 0.5); it reports to each runtime the
 * older of its own and this. */
TRD_API int32_t trd_xla_ffi_version(void);

/* Always 1: libtrident_xla exists only where the handlers were built, so that having the library (or this
 * symbol) is the answer; kept for callers that probe for it. */
TRD_API int32_t trd_xla_available(void);

#ifdef __cplusplus
}
#endif

#endif /* TRIDENT_XLA_H */
