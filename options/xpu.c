/* SPDX-License-Identifier: Apache-2.0 */
/* xpu.c: the Intel backend's XPUOptions (intel-xpu-backend-for-triton
 * v3.7.2, third_party/intel/backend/compiler.py), in dataclass order, plus
 * fields of earlier releases of that fork marked by since/until. */
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "options/checks.h"

#define FP8_TYPES "fp8e5|fp8e4nv|fp8e4b15|fp8e5b16|fp8e4b8"
#define DOT_PRECISIONS "tf32|tf32x3|ieee|bf16x3|bf16x6"

static const char *check_num_warps(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    const char *e = trd_check_pow2(o, v, buf, cap);
    if (e || !o)
        return e;
    const struct trd_option_row *r = trd_row_find(o->table, "grf_mode");
    const struct trd_value *g = r ? &o->values[r - o->table->rows] : NULL;
    if (g && g->kind == TRD_V_STR && (strcmp(g->s, "256") == 0 || strcmp(g->s, "512") == 0) && v->i > 32)
        return "grf_mode 256 and 512 allow at most 32 warps";
    return NULL;
}

static const char *check_grf_mode(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    (void)buf;
    (void)cap;
    if (!o || v->kind != TRD_V_STR || (strcmp(v->s, "256") != 0 && strcmp(v->s, "512") != 0))
        return NULL;
    const struct trd_option_row *r = trd_row_find(o->table, "num_warps");
    const struct trd_value *w = r ? &o->values[r - o->table->rows] : NULL;
    if (w && w->kind == TRD_V_INT && w->i > 32)
        return "grf_mode 256 and 512 allow at most 32 warps (num_warps is larger)";
    return NULL;
}

static const struct trd_option_row rows[] = {
    {.name = "num_warps", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "4",
     .min = 1, .max = 64, .check = check_num_warps,
     .doc = "Warps (sub-groups) per program, a power of two at most the device's sub-group count."},
    {.name = "num_ctas", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "1", .min = 1,
     .max = 1, .doc = "CTAs per program (1 on Intel GPUs)."},
    {.name = "num_stages", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int", .def = "2",
     .min = 0, .max = 64, .doc = "Software pipelining depth of loops."},
    {.name = "cluster_dims", .type = TRD_OPT_INT_TRIPLE, .stage = TRD_STAGE_LAUNCH, .type_name = "tuple",
     .def = "1,1,1", .doc = "Cluster shape (always 1,1,1 on Intel GPUs)."},
    {.name = "warp_size", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "32",
     .min = 8, .max = 64, .check = trd_check_pow2, .since = "3.6",
     .doc = "Threads per warp: one of the device's sub-group sizes (16 or 32)."},
    {.name = "threads_per_warp", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "32",
     .min = 8, .max = 64, .check = trd_check_pow2, .until = "3.5",
     .doc = "The name of warp_size up to v3.5.0."},
    {.name = "optimize_epilogue", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "false", .doc = "Optimize the epilogue of dot kernels."},
    {.name = "enable_fp_fusion", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LOAD, .type_name = "bool", .def = "true",
     .doc = "Fuse multiply and add into FMA."},
    {.name = "launch_cooperative_grid", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LAUNCH, .type_name = "bool",
     .def = "false", .doc = "Cooperative launch."},
    {.name = "reduce_variable_liveness", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "true", .doc = "Reduce live ranges to lower register pressure."},
    {.name = "supported_fp8_dtypes", .type = TRD_OPT_STRING_LIST, .stage = TRD_STAGE_COMPILE,
     .type_name = "Tuple[str]", .def = "fp8e5,fp8e4nv,fp8e4b15", .values = FP8_TYPES,
     .doc = "fp8 types the target supports."},
    {.name = "deprecated_fp8_dot_operand_dtypes", .type = TRD_OPT_STRING_LIST, .stage = TRD_STAGE_COMPILE,
     .type_name = "Tuple[str]", .def = "", .values = FP8_TYPES,
     .doc = "fp8 types deprecated as dot operands."},
    {.name = "default_dot_input_precision", .type = TRD_OPT_ENUM, .stage = TRD_STAGE_COMPILE, .type_name = "str",
     .def = "tf32", .values = DOT_PRECISIONS, .doc = "tl.dot's input_precision when none is given."},
    {.name = "allowed_dot_input_precisions", .type = TRD_OPT_STRING_LIST, .stage = TRD_STAGE_COMPILE,
     .type_name = "Tuple[str]", .def = "tf32,tf32x3,ieee,bf16x3,bf16x6", .values = DOT_PRECISIONS,
     .doc = "input_precision values tl.dot accepts."},
    {.name = "allow_fp8e4nv", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "false", .doc = "Allow fp8e4nv (the compiler forces True)."},
    {.name = "allow_fp8e4b15", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "true", .doc = "Allow fp8e4b15."},
    {.name = "grf_mode", .type = TRD_OPT_ENUM, .stage = TRD_STAGE_LOAD, .type_name = "str", .def = "default",
     .values = "default|128|256|512|auto", .check = check_grf_mode,
     .doc = "Registers per thread: 128/256/512 -> -cl-intel-<n>-GRF-per-thread, auto -> "
            "-cl-intel-enable-auto-large-GRF-mode (256/512 allow at most 32 warps)."},
    {.name = "use_barrier", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool", .def = "false",
     .since = "3.7", .doc = "Use barriers for synchronisation."},
    {.name = "split_barriers_scope", .type = TRD_OPT_STRING, .stage = TRD_STAGE_COMPILE, .type_name = "str",
     .def = "None", .check = trd_check_no_control, .until = "3.6",
     .doc = "Split-barrier scope (v3.6.0 and earlier; replaced by use_barrier)."},
    {.name = "max_num_imprecise_acc_default", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int",
     .def = "0", .min = 0, .max = INT64_C(1) << 40, .doc = "Default max_num_imprecise_acc of fp8 dots."},
    {.name = "extern_libs", .type = TRD_OPT_PATH_MAP, .stage = TRD_STAGE_LOAD, .type_name = "dict", .def = "none",
     .check = trd_check_extern_libs,
     .doc = "name=path device libraries (libdevice is the SYCL bitcode); linked with zeModuleDynamicLink."},
    {.name = "debug", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LOAD, .type_name = "bool", .def = "false",
     .env = "TRITON_DEBUG", .doc = "Device asserts; the module is built with -g."},
    {.name = "backend_name", .type = TRD_OPT_ENUM, .stage = TRD_STAGE_COMPILE, .type_name = "str",
     .def = "intel", .values = "intel", .doc = "The backend's name."},
    {.name = "sanitize_overflow", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "true", .old_def = "false", .old_until = "3.7.0",
     .doc = "Check integer overflow in debug mode (default false in v3.5.0 .. v3.7.0)."},
    {.name = "generate_native_code", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LOAD, .type_name = "bool",
     .def = "false", .doc = "Also build a native zebin (loaded instead of SPIR-V)."},
    {.name = "arch", .type = TRD_OPT_OPT_STRING, .stage = TRD_STAGE_COMPILE, .type_name = "str", .def = "none",
     .flags = TRD_OPTION_DERIVED, .derived = "the device's architecture name", .check = trd_check_no_control,
     .doc = "Target architecture."},
    {.name = "instrumentation_mode", .type = TRD_OPT_STRING, .stage = TRD_STAGE_COMPILE, .type_name = "str",
     .def = "", .check = trd_check_no_control, .doc = "Compiler instrumentation mode."},
};

const struct trd_option_table trd_table_xpu = {
    .backend = "xpu",
    .product = "intel-xpu-backend-for-triton",
    .oldest = "3.5",
    .current = "3.7.2",
    .tested = "",
    .source = "intel-xpu-backend-for-triton v3.7.2 XPUOptions (third_party/intel/backend/compiler.py)",
    .rows = rows,
    .count = TRD_ARRAY_SIZE(rows),
};
