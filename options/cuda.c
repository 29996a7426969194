/* SPDX-License-Identifier: Apache-2.0 */
/* cuda.c: Triton 3.9's CUDAOptions (triton/backends/nvidia/compiler.py), in
 * dataclass order, plus fields of earlier releases marked by since/until.
 * python/tests/test_triton_release.py compares the rows with the installed
 * Triton's dataclass (fields, order, types, defaults) under each tested release. */
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "options/checks.h"

static int derive_fp8(const struct trd_options *o, struct trd_value *out)
{
    int cc = trd_options_cuda_cc(o);
    if (cc < 0)
        return 0;
    const char *items[3] = {"fp8e5", "fp8e4b15", "fp8e4nv"};
    return trd_value_set_sorted(out, items, cc >= 89 ? 3 : 2);
}

static int derive_deprecated_fp8(const struct trd_options *o, struct trd_value *out)
{
    int cc = trd_options_cuda_cc(o);
    if (cc < 0)
        return 0;
    const char *items[1] = {"fp8e4b15"};
    return trd_value_set_list(out, items, cc >= 90 ? 1 : 0);
}

static int derive_imprecise(const struct trd_options *o, struct trd_value *out)
{
    int cc = trd_options_cuda_cc(o);
    if (cc < 0)
        return 0;
    return trd_value_set_int(out, cc == 90 ? (INT64_C(1) << 30) : 0);
}

static const char *check_num_warps(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    const char *e = trd_check_pow2(o, v, buf, cap);
    if (e)
        return e;
    if (v->i > 32)
        return "at most 32 warps (1024 threads) fit in a CUDA block";
    return NULL;
}

static const char *check_num_ctas(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    int cc = trd_options_cuda_cc(o);
    if (v->i > 1 && cc >= 0 && cc < 90) {
        snprintf(buf, cap, "num_ctas > 1 (a thread block cluster) needs compute capability 9.0 or newer, "
                           "the target is sm%d", cc);
        return buf;
    }
    return NULL;
}

static const char *check_clc(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    int cc = trd_options_cuda_cc(o);
    if (v->kind == TRD_V_BOOL && v->i && cc >= 0 && cc < 100) {
        snprintf(buf, cap, "clc (cluster launch control) needs compute capability 10.0 or newer, the target is sm%d",
                 cc);
        return buf;
    }
    return NULL;
}

static const char *check_arch(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    (void)o;
    (void)buf;
    (void)cap;
    if (v->kind != TRD_V_STR)
        return NULL;
    const char *s = v->s;
    if (strncmp(s, "sm", 2) != 0 || !s[2])
        return "expected sm<capability> such as sm90 (^sm(\\d+)$)";
    for (const char *c = s + 2; *c; c++)
        if (*c < '0' || *c > '9')
            return "expected sm<capability> such as sm90 (^sm(\\d+)$)";
    return NULL;
}

#define FP8_TYPES "fp8e5|fp8e4b15|fp8e4nv|fp8e5b16|fp8e4b8"
#define DOT_PRECISIONS "tf32|tf32x3|ieee|bf16x3|bf16x6"

static const struct trd_option_row rows[] = {
    {.name = "num_warps", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "4",
     .min = 1, .max = 32, .check = check_num_warps, .since = "3.0",
     .doc = "Warps per program; the block is warp_size * num_warps threads (a power of two)."},
    {.name = "num_ctas", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "1",
     .min = 1, .max = 16, .check = check_num_ctas, .since = "3.0",
     .doc = "CTAs per program; > 1 launches a (num_ctas,1,1) cluster, sm90 and newer."},
    {.name = "num_stages", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int", .def = "3",
     .min = 0, .max = 64, .since = "3.0", .doc = "Software pipelining depth of loops."},
    {.name = "warp_size", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "32",
     .min = 32, .max = 32, .since = "3.5", .doc = "Threads per warp (always 32 on NVIDIA GPUs)."},
    {.name = "maxnreg", .type = TRD_OPT_OPT_INT, .stage = TRD_STAGE_LOAD, .type_name = "Optional[int]",
     .def = "none", .min = 16, .max = 255, .since = "3.0",
     .doc = "Register cap per thread: a module attribute, and the JIT's max registers for PTX."},
    {.name = "ptx_version", .type = TRD_OPT_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int",
     .def = "none", .min = 10, .max = 999, .derived = "from the ptxas version when none", .since = "3.0",
     .doc = "PTX ISA version to emit (e.g. 87 for 8.7)."},
    {.name = "ptx_options", .type = TRD_OPT_OPT_STRING, .stage = TRD_STAGE_LOAD, .type_name = "Optional[str]",
     .def = "none", .check = trd_check_no_control, .since = "3.4", .env = "PTXAS_OPTIONS",
     .doc = "Extra ptxas options, space separated; trident maps those the driver JIT accepts."},
    {.name = "ir_override", .type = TRD_OPT_OPT_STRING, .stage = TRD_STAGE_COMPILE,
     .type_name = "Optional[str]", .def = "none", .check = trd_check_no_control, .since = "3.4",
     .doc = "Path of a .ttir/.ttgir/.llir/.ptx file replacing that compilation stage."},
    {.name = "enable_fp_fusion", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LOAD, .type_name = "bool",
     .def = "true", .since = "3.0", .env = "TRITON_DEFAULT_FP_FUSION",
     .derived = "when not passed, parse_options takes TRITON_DEFAULT_FP_FUSION (unset: true; Triton 3.9 warns "
                "that 3.10 makes it false, and its dataclass default is already false)",
     .doc = "Fuse multiply and add into FMA; false adds ptxas --fmad=false (JIT: CU_JIT_FMA=0)."},
    {.name = "sched4reg", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool", .def = "false",
     .since = "3.9", .doc = "LLVM instruction scheduling for register pressure when emitting PTX."},
    {.name = "enable_reflect_ftz", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "true", .since = "3.6", .doc = "libdevice __nvvm_reflect flush-to-zero for denormals."},
    {.name = "launch_cooperative_grid", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LAUNCH, .type_name = "bool",
     .def = "false", .since = "3.3",
     .doc = "Launch with the cooperative attribute (grid-wide sync); every program must be co-resident."},
    {.name = "launch_pdl", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LAUNCH, .type_name = "bool", .def = "false",
     .since = "3.4", .doc = "Programmatic dependent launch: the stream-serialization attribute, sm90 and newer."},
    {.name = "clc", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool", .def = "false",
     .check = check_clc, .since = "3.9",
     .doc = "Cluster launch control (persistent programs fetch work), compute capability 10.0 and newer."},
    {.name = "supported_fp8_dtypes", .type = TRD_OPT_STRING_LIST, .stage = TRD_STAGE_COMPILE,
     .type_name = "Tuple[str]", .def = "fp8e5,fp8e4b15", .values = FP8_TYPES, .flags = TRD_OPTION_DERIVED,
     .derived = "sorted; adds fp8e4nv from compute capability 8.9", .derive = derive_fp8, .since = "3.2",
     .doc = "fp8 types the target supports."},
    {.name = "deprecated_fp8_dot_operand_dtypes", .type = TRD_OPT_STRING_LIST, .stage = TRD_STAGE_COMPILE,
     .type_name = "Tuple[str]", .def = "", .values = FP8_TYPES, .flags = TRD_OPTION_DERIVED,
     .derived = "fp8e4b15 from compute capability 9.0", .derive = derive_deprecated_fp8, .since = "3.4",
     .doc = "fp8 types deprecated as dot operands on the target."},
    {.name = "default_dot_input_precision", .type = TRD_OPT_ENUM, .stage = TRD_STAGE_COMPILE, .type_name = "str",
     .def = "tf32", .values = DOT_PRECISIONS, .since = "3.0", .doc = "tl.dot's input_precision when none is given."},
    {.name = "allowed_dot_input_precisions", .type = TRD_OPT_STRING_LIST, .stage = TRD_STAGE_COMPILE,
     .type_name = "Tuple[str]", .def = "tf32,tf32x3,ieee,bf16x3,bf16x6", .values = DOT_PRECISIONS,
     .since = "3.0", .old_def = "tf32,tf32x3,ieee", .old_until = "3.5", .doc = "input_precision values tl.dot accepts."},
    {.name = "max_num_imprecise_acc_default", .type = TRD_OPT_OPT_INT, .stage = TRD_STAGE_COMPILE,
     .type_name = "bool (holds an int)", .def = "none", .min = 0, .max = INT64_C(1) << 40,
     .flags = TRD_OPTION_DERIVED, .derived = "2**30 for compute capability 9.0, else 0", .derive = derive_imprecise,
     .since = "3.0", .doc = "Default max_num_imprecise_acc of fp8 dots (accumulation steps in low precision)."},
    {.name = "extern_libs", .type = TRD_OPT_PATH_MAP, .stage = TRD_STAGE_LOAD, .type_name = "dict",
     .def = "none", .check = trd_check_extern_libs, .since = "3.0", .env = "TRITON_LIBDEVICE_PATH",
     .doc = "name=path device libraries; Triton always adds libdevice. Linked into PTX modules at load."},
    {.name = "debug", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LOAD, .type_name = "bool", .def = "false",
     .since = "3.0", .env = "TRITON_DEBUG",
     .doc = "Device asserts and bounds checks; for PTX also JIT debug and line info."},
    {.name = "backend_name", .type = TRD_OPT_ENUM, .stage = TRD_STAGE_COMPILE, .type_name = "str", .def = "cuda",
     .values = "cuda", .since = "3.0", .doc = "The backend's name."},
    {.name = "sanitize_overflow", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "true", .since = "3.2", .doc = "Check integer overflow in debug mode."},
    {.name = "arch", .type = TRD_OPT_OPT_STRING, .stage = TRD_STAGE_COMPILE, .type_name = "str", .def = "none",
     .flags = TRD_OPTION_DERIVED, .derived = "sm<compute capability> of the device",
     .check = check_arch, .since = "3.3", .env = "TRITON_OVERRIDE_ARCH",
     .doc = "Target architecture, sm<capability> (^sm(\\d+)$)."},
    {.name = "instrumentation_mode", .type = TRD_OPT_STRING, .stage = TRD_STAGE_COMPILE, .type_name = "str",
     .def = "", .check = trd_check_instrumentation, .since = "3.5",
     .doc = "Compiler instrumentation, a comma list from 3.9: consan (forces debug=True), iisan, fpsan; gsan "
            "(3.8+) adds launch parameters trident does not pass."},
    {.name = "fpsan_homomorphic_casts", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "false", .since = "3.9", .env = "TRITON_FPSAN_HOMOMORPHIC_CASTS",
     .doc = "With instrumentation_mode fpsan: the floating-point sanitizer treats casts as homomorphic."},
    {.name = "min_shared_mem", .type = TRD_OPT_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "Optional[int]",
     .def = "none", .min = 0, .max = INT64_C(1) << 31, .since = "3.9",
     .doc = "Shared memory (bytes) the kernel reserves at least, whatever it uses (none: what it needs)."},
    /* Fields of earlier releases. */
    {.name = "cluster_dims", .type = TRD_OPT_INT_TRIPLE, .stage = TRD_STAGE_LAUNCH, .type_name = "tuple",
     .def = "1,1,1", .since = "3.0", .until = "3.5", .doc = "Cluster shape (removed in 3.6: num_ctas sets it)."},
    {.name = "allow_fp8e4nv", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool", .def = "false",
     .since = "3.0", .until = "3.1", .doc = "Allow fp8e4nv (replaced by supported_fp8_dtypes in 3.2)."},
    {.name = "allow_fp8e4b15", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool", .def = "false",
     .since = "3.0", .until = "3.1", .doc = "Allow fp8e4b15 (replaced by supported_fp8_dtypes in 3.2)."},
    {.name = "num_buffers_warp_spec", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int", .def = "0",
     .min = 0, .max = 64, .since = "3.2", .until = "3.3", .doc = "Warp specialization buffers (3.2 and 3.3)."},
    {.name = "num_consumer_groups", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int", .def = "0",
     .min = 0, .max = 64, .since = "3.2", .until = "3.3", .doc = "Warp specialization consumer groups (3.2 and 3.3)."},
    {.name = "reg_dec_producer", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int", .def = "0",
     .min = 0, .max = 255, .since = "3.2", .until = "3.3", .doc = "Producer register decrease (3.2 and 3.3)."},
    {.name = "reg_inc_consumer", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int", .def = "0",
     .min = 0, .max = 255, .since = "3.2", .until = "3.3", .doc = "Consumer register increase (3.2 and 3.3)."},
    {.name = "deprecated_fp8_dtypes", .type = TRD_OPT_STRING_LIST, .stage = TRD_STAGE_COMPILE,
     .type_name = "Tuple[str]", .def = "", .values = FP8_TYPES, .since = "3.2", .until = "3.3",
     .doc = "The name of deprecated_fp8_dot_operand_dtypes in 3.2 and 3.3."},
};

const struct trd_option_table trd_table_cuda = {
    .backend = "cuda",
    .product = "Triton",
    .oldest = "3.0",
    .current = "3.9",
    .tested = "3.6 3.7 3.8 3.9",
    .source = "Triton 3.9 CUDAOptions (triton/backends/nvidia/compiler.py); since/until from the 3.0.0 .. 3.9.0 releases",
    .rows = rows,
    .count = TRD_ARRAY_SIZE(rows),
};
