/* SPDX-License-Identifier: Apache-2.0 */
/* hip.c: Triton 3.9's HIPOptions (triton/backends/amd/compiler.py), in
 * dataclass order, plus the derived warp_size the launcher uses and fields of
 * earlier releases marked by since/until (compared with the installed Triton
 * by python/tests/test_triton_release.py). */
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "options/checks.h"

#define FP8_TYPES "fp8e4nv|fp8e5|fp8e5b16|fp8e4b8|fp8e4b15"
#define DOT_PRECISIONS "ieee|bf16x3|bf16x6|tf32|tf32x3"

static int derive_warp_size(const struct trd_options *o, struct trd_value *out)
{
    int major;
    if (!trd_options_gfx(o, &major))
        return 0;
    return trd_value_set_int(out, major >= 10 ? 32 : 64); /* RDNA is wave32, CDNA wave64 */
}

static int derive_fp8(const struct trd_options *o, struct trd_value *out)
{
    int major;
    if (!trd_options_gfx(o, &major))
        return 0;
    const char *items[4] = {"fp8e4nv", "fp8e5", "fp8e5b16", "fp8e4b8"};
    return trd_value_set_sorted(out, items, 4);
}

static int derive_deprecated_fp8(const struct trd_options *o, struct trd_value *out)
{
    const char *a = trd_options_arch(o);
    if (!a)
        return 0;
    const char *items[2] = {"fp8e4b8", "fp8e5b16"};
    return trd_value_set_list(out, items, strcmp(a, "gfx950") == 0 ? 2 : 0);
}

static int derive_dot_precisions(const struct trd_options *o, struct trd_value *out)
{
    const char *a = trd_options_arch(o);
    if (!a)
        return 0;
    if (strcmp(a, "gfx942") == 0) {
        const char *items[4] = {"ieee", "bf16x3", "bf16x6", "tf32"};
        return trd_value_set_sorted(out, items, 4);
    }
    const char *items[3] = {"ieee", "bf16x3", "bf16x6"};
    return trd_value_set_list(out, items, 3);
}

static const char *check_num_warps(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    return trd_check_pow2(o, v, buf, cap);
}

static const char *check_num_ctas(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    const char *a = trd_options_arch(o);
    if (v->i > 1 && a && strcmp(a, "gfx950") != 0 && strncmp(a, "gfx12", 5) != 0) {
        snprintf(buf, cap, "num_ctas > 1 needs an arch with cluster launch (gfx950, gfx12xx); the target is %.32s", a);
        return buf;
    }
    return NULL;
}

static const char *check_kpack(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    (void)buf;
    (void)cap;
    const char *a = trd_options_arch(o);
    if (v->i == 2 && a && strcmp(a, "gfx950") == 0)
        return "gfx950 supports only kpack=1";
    return NULL;
}

static const char *check_arch(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    (void)o;
    (void)buf;
    (void)cap;
    if (v->kind == TRD_V_STR && (strncmp(v->s, "gfx", 3) != 0 || strlen(v->s) < 6))
        return "expected a gfx architecture such as gfx942 or gfx1100";
    return NULL;
}

static const char *check_schedule_hint(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    (void)o;
    if (v->kind != TRD_V_STR || !*v->s)
        return NULL; /* '' (3.8's default): no hint */
    static const char *const hints[] = {"none", "attention", "memory-bound-attention", "local-prefetch"};
    const char *p = v->s;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        int ok = 0;
        for (size_t i = 0; i < TRD_ARRAY_SIZE(hints); i++)
            ok |= strlen(hints[i]) == n && strncmp(hints[i], p, n) == 0;
        if (!ok) {
            snprintf(buf, cap, "'%.*s' is not a hint: expected a comma list of none, attention, "
                               "memory-bound-attention, local-prefetch", (int)TRD_MIN(n, (size_t)40), p);
            return buf;
        }
        if (!c)
            return NULL;
        p = c + 1;
    }
}

static const char *check_llvm_fn_attrs(const struct trd_options *o, const struct trd_value *v, char *buf,
                                       size_t cap)
{
    const char *e = trd_check_no_control(o, v, buf, cap);
    if (e || v->kind != TRD_V_STR)
        return e;
    /* Triton splits at ',' and '=' and drops empty names: a value without a name is a typo */
    for (const char *p = v->s;;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        while (n && *p == ' ') {
            p++;
            n--;
        }
        if (n && *p == '=') {
            snprintf(buf, cap, "'%.*s' has a value but no attribute name (expected name or name=value, comma "
                               "separated)", (int)TRD_MIN(n, (size_t)40), p);
            return buf;
        }
        if (!c)
            return NULL;
        p = c + 1;
    }
}

static const struct trd_option_row rows[] = {
    {.name = "num_warps", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "4",
     .min = 1, .max = 32, .check = check_num_warps, .since = "3.0",
     .doc = "Warps (wavefronts) per program; the block is warp_size * num_warps threads."},
    {.name = "waves_per_eu", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int", .def = "0",
     .min = 0, .max = 16, .since = "3.0", .old_def = "1", .old_until = "3.5",
     .doc = "Occupancy hint: waves per execution unit (0: the compiler decides)."},
    {.name = "num_stages", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int", .def = "2",
     .min = 0, .max = 64, .since = "3.0", .old_def = "0", .old_until = "3.1", .doc = "Software pipelining depth of loops."},
    {.name = "num_ctas", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "1",
     .min = 1, .max = 16, .check = check_num_ctas, .since = "3.0",
     .doc = "CTAs per program; > 1 only where the arch supports cluster launch."},
    {.name = "extern_libs", .type = TRD_OPT_PATH_MAP, .stage = TRD_STAGE_LOAD, .type_name = "dict",
     .def = "none", .check = trd_check_extern_libs, .since = "3.0",
     .doc = "name=path device libraries; Triton always sets the ocml and ockl bitcode."},
    {.name = "debug", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LOAD, .type_name = "bool", .def = "false",
     .since = "3.0", .env = "TRITON_DEBUG", .doc = "Device asserts and bounds checks."},
    {.name = "sanitize_overflow", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "true", .since = "3.2", .doc = "Check integer overflow in debug mode."},
    {.name = "arch", .type = TRD_OPT_OPT_STRING, .stage = TRD_STAGE_COMPILE, .type_name = "str", .def = "none",
     .flags = TRD_OPTION_DERIVED, .derived = "gcnArchName of the device without features (gfx942)",
     .check = check_arch, .since = "3.0", .env = "TRITON_OVERRIDE_ARCH", .doc = "Target architecture."},
    {.name = "supported_fp8_dtypes", .type = TRD_OPT_STRING_LIST, .stage = TRD_STAGE_COMPILE,
     .type_name = "Tuple[str]", .def = "fp8e4nv,fp8e5,fp8e5b16,fp8e4b8", .values = FP8_TYPES,
     .flags = TRD_OPTION_DERIVED, .derived = "sorted", .derive = derive_fp8, .since = "3.2", .old_def = "fp8e5",
     .old_until = "3.4",
     .doc = "fp8 types the target supports."},
    {.name = "deprecated_fp8_dot_operand_dtypes", .type = TRD_OPT_STRING_LIST, .stage = TRD_STAGE_COMPILE,
     .type_name = "Tuple[str]", .def = "", .values = FP8_TYPES, .flags = TRD_OPTION_DERIVED,
     .derived = "fp8e4b8,fp8e5b16 on gfx950", .derive = derive_deprecated_fp8, .since = "3.4",
     .doc = "fp8 types deprecated as dot operands on the target."},
    {.name = "default_dot_input_precision", .type = TRD_OPT_ENUM, .stage = TRD_STAGE_COMPILE, .type_name = "str",
     .def = "ieee", .values = DOT_PRECISIONS, .since = "3.0", .doc = "tl.dot's input_precision when none is given."},
    {.name = "allowed_dot_input_precisions", .type = TRD_OPT_STRING_LIST, .stage = TRD_STAGE_COMPILE,
     .type_name = "Tuple[str]", .def = "ieee,bf16x3,bf16x6", .values = DOT_PRECISIONS, .flags = TRD_OPTION_DERIVED,
     .derived = "gfx942 adds tf32 (sorted)", .derive = derive_dot_precisions, .since = "3.0", .old_def = "ieee",
     .old_until = "3.5",
     .doc = "input_precision values tl.dot accepts."},
    {.name = "enable_fp_fusion", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "true", .since = "3.0", .env = "TRITON_DEFAULT_FP_FUSION",
     .derived = "when not passed, parse_options takes TRITON_DEFAULT_FP_FUSION (unset: true; Triton 3.9 warns "
                "that 3.10 makes it false, and its dataclass default is already false)",
     .doc = "Fuse multiply and add into FMA."},
    {.name = "launch_cooperative_grid", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LAUNCH, .type_name = "bool",
     .def = "false", .since = "3.3",
     .doc = "Cooperative launch (hipModuleLaunchCooperativeKernel); needs the device's cooperativeLaunch."},
    {.name = "matrix_instr_nonkdim", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int",
     .def = "0", .min = 0, .max = 64, .since = "3.0", .doc = "MFMA instruction non-K size (0: the compiler picks; 16, 32)."},
    {.name = "kpack", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int", .def = "1", .min = 1,
     .max = 2, .check = check_kpack, .since = "3.0", .doc = "K elements packed per MFMA operand load (1 or 2; gfx950: 1)."},
    {.name = "allow_flush_denorm", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "false", .since = "3.0", .doc = "Allow flushing fp32 denormals to zero."},
    {.name = "max_num_imprecise_acc_default", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int",
     .def = "0", .min = 0, .max = INT64_C(1) << 40, .since = "3.0",
     .doc = "Default max_num_imprecise_acc of fp8 dots."},
    {.name = "backend_name", .type = TRD_OPT_ENUM, .stage = TRD_STAGE_COMPILE, .type_name = "str", .def = "hip",
     .values = "hip", .since = "3.0", .doc = "The backend's name."},
    {.name = "instrumentation_mode", .type = TRD_OPT_STRING, .stage = TRD_STAGE_COMPILE, .type_name = "str",
     .def = "", .check = trd_check_instrumentation, .since = "3.5",
     .doc = "Compiler instrumentation mode (a comma list from 3.9: consan, fpsan)."},
    {.name = "fpsan_homomorphic_casts", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_COMPILE, .type_name = "bool",
     .def = "false", .since = "3.9", .env = "TRITON_FPSAN_HOMOMORPHIC_CASTS",
     .doc = "With instrumentation_mode fpsan: the floating-point sanitizer treats casts as homomorphic."},
    {.name = "schedule_hint", .type = TRD_OPT_STRING, .stage = TRD_STAGE_COMPILE, .type_name = "str",
     .def = "", .old_def = "none", .old_until = "3.7", .check = check_schedule_hint, .since = "3.4",
     .doc = "Instruction scheduling hints, a comma list (attention, memory-bound-attention); no effect from 3.8."},
    {.name = "llvm_fn_attrs", .type = TRD_OPT_STRING, .stage = TRD_STAGE_COMPILE,
     .type_name = "Union[str, Tuple[Tuple[str, str], ...]]", .def = "", .check = check_llvm_fn_attrs,
     .since = "3.8",
     .doc = "LLVM function attributes of the kernel, name or name=value, comma separated (experimental)."},
    {.name = "wgp_cu_mode", .type = TRD_OPT_ENUM, .stage = TRD_STAGE_COMPILE, .type_name = "str", .def = "wgp",
     .values = "wgp|cu", .since = "3.9",
     .doc = "Work-group processor or compute-unit mode on gfx10, gfx11 and gfx120x (ignored elsewhere)."},
    {.name = "warp_size", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .flags = TRD_OPTION_DERIVED | TRD_OPTION_NOT_FIELD,
     .type_name = "int", .def = "64", .min = 32, .max = 64, .derived = "32 for gfx10 and newer (RDNA), else 64",
     .derive = derive_warp_size,
     .doc = "Threads per wavefront; not a dataclass field, but in the metadata and used by the launcher."},
    /* Fields of earlier releases. */
    {.name = "cluster_dims", .type = TRD_OPT_INT_TRIPLE, .stage = TRD_STAGE_LAUNCH, .type_name = "tuple",
     .def = "1,1,1", .since = "3.0", .until = "3.5", .doc = "Cluster shape (removed in 3.6)."},
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
    {.name = "instruction_sched_variant", .type = TRD_OPT_STRING, .stage = TRD_STAGE_COMPILE, .type_name = "str",
     .def = "none", .old_def = "default", .old_until = "3.2", .since = "3.2", .until = "3.3",
     .check = trd_check_no_control, .doc = "Instruction scheduling variant (3.2 and 3.3; now schedule_hint)."},
};

const struct trd_option_table trd_table_hip = {
    .backend = "hip",
    .product = "Triton",
    .oldest = "3.0",
    .current = "3.9",
    .tested = "3.6 3.7 3.8 3.9",
    .source = "Triton 3.9 HIPOptions (triton/backends/amd/compiler.py); since/until from the 3.0.0 .. 3.9.0 releases",
    .rows = rows,
    .count = TRD_ARRAY_SIZE(rows),
};
