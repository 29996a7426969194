/* SPDX-License-Identifier: Apache-2.0 */
/* test_options.c: the option tables against Triton 3.6's and 3.9's dataclasses
 * (field names, order and defaults dumped from installed triton 3.6.0 and
 * 3.9.0; python/tests/test_triton_release.py compares every tested release
 * with the installed one),
 * derived defaults for sm80, sm90, gfx942, gfx950 and gfx1100 (values
 * Triton's parse_options produced), parsing and validation of every type,
 * serialization round trip and hash stability. */
#include <jansson.h>
#include <unistd.h>
#include <fcntl.h>

#include "tests/testutil.h"

struct field {
    const char *name, *def;
};

/* dataclasses.fields(CUDAOptions) of triton 3.6.0, in order, with defaults as trident prints them */
static const struct field cuda36[] = {
    {"num_warps", "4"}, {"num_ctas", "1"}, {"num_stages", "3"}, {"warp_size", "32"}, {"maxnreg", "none"},
    {"ptx_version", "none"}, {"ptx_options", "none"}, {"ir_override", "none"}, {"enable_fp_fusion", "true"},
    {"enable_reflect_ftz", "true"}, {"launch_cooperative_grid", "false"}, {"launch_pdl", "false"},
    {"supported_fp8_dtypes", "fp8e5,fp8e4b15"}, {"deprecated_fp8_dot_operand_dtypes", ""},
    {"default_dot_input_precision", "tf32"}, {"allowed_dot_input_precisions", "tf32,tf32x3,ieee,bf16x3,bf16x6"},
    {"max_num_imprecise_acc_default", "none"}, {"extern_libs", "none"}, {"debug", "false"}, {"backend_name", "cuda"},
    {"sanitize_overflow", "true"}, {"arch", "none"}, {"instrumentation_mode", ""},
};

/* dataclasses.fields(CUDAOptions) of triton 3.9.0: enable_fp_fusion as parse_options resolves it when it is
 * not passed (the dataclass default became False; TRITON_DEFAULT_FP_FUSION unset still means True in 3.9) */
static const struct field cuda39[] = {
    {"num_warps", "4"}, {"num_ctas", "1"}, {"num_stages", "3"}, {"warp_size", "32"}, {"maxnreg", "none"},
    {"ptx_version", "none"}, {"ptx_options", "none"}, {"ir_override", "none"}, {"enable_fp_fusion", "true"},
    {"sched4reg", "false"}, {"enable_reflect_ftz", "true"}, {"launch_cooperative_grid", "false"},
    {"launch_pdl", "false"}, {"clc", "false"}, {"supported_fp8_dtypes", "fp8e5,fp8e4b15"},
    {"deprecated_fp8_dot_operand_dtypes", ""}, {"default_dot_input_precision", "tf32"},
    {"allowed_dot_input_precisions", "tf32,tf32x3,ieee,bf16x3,bf16x6"}, {"max_num_imprecise_acc_default", "none"},
    {"extern_libs", "none"}, {"debug", "false"}, {"backend_name", "cuda"}, {"sanitize_overflow", "true"},
    {"arch", "none"}, {"instrumentation_mode", ""}, {"fpsan_homomorphic_casts", "false"}, {"min_shared_mem", "none"},
};

/* dataclasses.fields(HIPOptions) of triton 3.6.0, in order */
static const struct field hip36[] = {
    {"num_warps", "4"}, {"waves_per_eu", "0"}, {"num_stages", "2"}, {"num_ctas", "1"}, {"extern_libs", "none"},
    {"debug", "false"}, {"sanitize_overflow", "true"}, {"arch", "none"},
    {"supported_fp8_dtypes", "fp8e4nv,fp8e5,fp8e5b16,fp8e4b8"}, {"deprecated_fp8_dot_operand_dtypes", ""},
    {"default_dot_input_precision", "ieee"}, {"allowed_dot_input_precisions", "ieee,bf16x3,bf16x6"},
    {"enable_fp_fusion", "true"}, {"launch_cooperative_grid", "false"}, {"matrix_instr_nonkdim", "0"}, {"kpack", "1"},
    {"allow_flush_denorm", "false"}, {"max_num_imprecise_acc_default", "0"}, {"backend_name", "hip"},
    {"instrumentation_mode", ""}, {"schedule_hint", "none"},
};

/* HIPOptions of triton 3.8.0 (schedule_hint's default became '', llvm_fn_attrs is new) and 3.9.0 */
static const struct field hip38[] = {
    {"num_warps", "4"}, {"waves_per_eu", "0"}, {"num_stages", "2"}, {"num_ctas", "1"}, {"extern_libs", "none"},
    {"debug", "false"}, {"sanitize_overflow", "true"}, {"arch", "none"},
    {"supported_fp8_dtypes", "fp8e4nv,fp8e5,fp8e5b16,fp8e4b8"}, {"deprecated_fp8_dot_operand_dtypes", ""},
    {"default_dot_input_precision", "ieee"}, {"allowed_dot_input_precisions", "ieee,bf16x3,bf16x6"},
    {"enable_fp_fusion", "true"}, {"launch_cooperative_grid", "false"}, {"matrix_instr_nonkdim", "0"}, {"kpack", "1"},
    {"allow_flush_denorm", "false"}, {"max_num_imprecise_acc_default", "0"}, {"backend_name", "hip"},
    {"instrumentation_mode", ""}, {"schedule_hint", ""}, {"llvm_fn_attrs", ""},
};
static const struct field hip39[] = {
    {"num_warps", "4"}, {"waves_per_eu", "0"}, {"num_stages", "2"}, {"num_ctas", "1"}, {"extern_libs", "none"},
    {"debug", "false"}, {"sanitize_overflow", "true"}, {"arch", "none"},
    {"supported_fp8_dtypes", "fp8e4nv,fp8e5,fp8e5b16,fp8e4b8"}, {"deprecated_fp8_dot_operand_dtypes", ""},
    {"default_dot_input_precision", "ieee"}, {"allowed_dot_input_precisions", "ieee,bf16x3,bf16x6"},
    {"enable_fp_fusion", "true"}, {"launch_cooperative_grid", "false"}, {"matrix_instr_nonkdim", "0"}, {"kpack", "1"},
    {"allow_flush_denorm", "false"}, {"max_num_imprecise_acc_default", "0"}, {"backend_name", "hip"},
    {"instrumentation_mode", ""}, {"fpsan_homomorphic_casts", "false"}, {"schedule_hint", ""}, {"llvm_fn_attrs", ""},
    {"wgp_cu_mode", "wgp"},
};

/* XPUOptions of intel-xpu-backend-for-triton v3.7.2 (shared/reference/triton-options.md) */
static const struct field xpu372[] = {
    {"num_warps", "4"}, {"num_ctas", "1"}, {"num_stages", "2"}, {"cluster_dims", "1,1,1"}, {"warp_size", "32"},
    {"optimize_epilogue", "false"}, {"enable_fp_fusion", "true"}, {"launch_cooperative_grid", "false"},
    {"reduce_variable_liveness", "true"}, {"supported_fp8_dtypes", "fp8e5,fp8e4nv,fp8e4b15"},
    {"deprecated_fp8_dot_operand_dtypes", ""}, {"default_dot_input_precision", "tf32"},
    {"allowed_dot_input_precisions", "tf32,tf32x3,ieee,bf16x3,bf16x6"}, {"allow_fp8e4nv", "false"},
    {"allow_fp8e4b15", "true"}, {"grf_mode", "default"}, {"use_barrier", "false"}, {"max_num_imprecise_acc_default", "0"},
    {"extern_libs", "none"}, {"debug", "false"}, {"backend_name", "intel"}, {"sanitize_overflow", "true"},
    {"generate_native_code", "false"}, {"arch", "none"}, {"instrumentation_mode", ""},
};

/* The table's fields of a release (NULL: the current one, whose values an options object also holds), in
 * dataclass order, with that release's defaults. */
static void check_table(const char *backend, const char *release, const struct field *f, size_t n)
{
    trd_options_t *o;
    TU_OK(trd_options_create(backend, &o));
    uint32_t count;
    TU_OK(trd_option_count(backend, &count));
    size_t k = 0;
    for (uint32_t i = 0; i < count; i++) {
        trd_option_info_t info = {.struct_size = sizeof info};
        TU_OK(trd_option_info(backend, i, &info));
        int32_t present;
        TU_OK(trd_option_exists(backend, info.name, release, &present));
        if (!present)
            continue;
        ck_assert_msg(k < n, "%s %s: field %s is not Triton's", backend, release ? release : "current", info.name);
        ck_assert_msg(!strcmp(info.name, f[k].name), "%s %s field %zu is %s, Triton's is %s", backend,
                      release ? release : "current", k, info.name, f[k].name);
        const char *def;
        TU_OK(trd_option_default(backend, info.name, release, &def));
        ck_assert_msg(!strcmp(def, f[k].def), "%s.%s default in %s '%s', expected '%s'", backend, info.name,
                      release ? release : "current", def, f[k].def);
        ck_assert_ptr_nonnull(info.doc);
        ck_assert(info.stage >= TRD_STAGE_COMPILE && info.stage <= TRD_STAGE_RUNTIME);
        if (!release) {
            ck_assert_str_eq(info.default_value, def);
            char buf[256];
            size_t len;
            TU_OK(trd_options_get(o, info.name, buf, sizeof buf, &len));
            ck_assert_msg(!strcmp(buf, f[k].def), "%s.%s value '%s'", backend, info.name, buf);
        }
        k++;
    }
    ck_assert_msg(k == n, "%s %s: %zu fields found, Triton has %zu", backend, release ? release : "current", k, n);
    trd_options_destroy(o);
}

START_TEST(tables_match_triton)
{
    check_table("cuda", NULL, cuda39, TU_LEN(cuda39));
    check_table("cuda", "3.9.0", cuda39, TU_LEN(cuda39));
    check_table("cuda", "3.6", cuda36, TU_LEN(cuda36));
    check_table("cuda", "3.8.0", cuda36, TU_LEN(cuda36)); /* 3.7 and 3.8 have 3.6's CUDA fields */
    check_table("hip", NULL, hip39, TU_LEN(hip39));
    check_table("hip", "3.6.0", hip36, TU_LEN(hip36));
    check_table("hip", "3.7.1", hip36, TU_LEN(hip36));
    check_table("hip", "3.8", hip38, TU_LEN(hip38));
    check_table("xpu", NULL, xpu372, TU_LEN(xpu372));
    /* releases: cluster_dims is in 3.5, not 3.6; enable_reflect_ftz from 3.6 on */
    int32_t p;
    TU_OK(trd_option_exists("cuda", "cluster_dims", "3.5.1", &p));
    ck_assert_int_eq(p, 1);
    TU_OK(trd_option_exists("cuda", "cluster_dims", "3.6.0", &p));
    ck_assert_int_eq(p, 0);
    TU_OK(trd_option_exists("cuda", "enable_reflect_ftz", "3.5.0", &p));
    ck_assert_int_eq(p, 0);
    TU_OK(trd_option_exists("cuda", "launch_pdl", "3.6.0+git1234", &p));
    ck_assert_int_eq(p, 1);
    TU_OK(trd_option_exists("hip", "warp_size", NULL, &p)); /* derived, not a dataclass field */
    ck_assert_int_eq(p, 0);
    TU_OK(trd_option_exists("cuda", "BLOCK_SIZE", NULL, &p));
    ck_assert_int_eq(p, 0);
    TU_OK(trd_option_exists("nope", "num_warps", NULL, &p));
    ck_assert_int_eq(p, 0);
    TU_FAILS(trd_option_exists("cuda", "num_warps", "three", &p), TRD_ERR_INVALID_ARGUMENT, "'three' is not a release");
    trd_options_t *o;
    TU_OK(trd_options_create("cuda", &o));
    TU_FAILS(trd_options_set(o, "cluster_dims", "1,1,1"), TRD_ERR_NOT_FOUND, "not in Triton 3.9 (it exists in releases 3.0 .. 3.5)");
    trd_options_destroy(o);
    /* defaults that changed, by release */
    const char *def;
    TU_OK(trd_option_default("hip", "waves_per_eu", "3.5.1", &def));
    ck_assert_str_eq(def, "1");
    TU_OK(trd_option_default("hip", "schedule_hint", "3.7", &def));
    ck_assert_str_eq(def, "none");
    TU_OK(trd_option_default("hip", "schedule_hint", "3.8.0", &def));
    ck_assert_str_eq(def, "");
    TU_FAILS(trd_option_default("cuda", "sched4reg", "3.8.0", &def), TRD_ERR_NOT_FOUND,
             "cuda.sched4reg is not in Triton 3.8.0 (it exists in releases 3.9 .. 3.9)");
    TU_FAILS(trd_option_default("cuda", "num_warps", "3.10", &def), TRD_ERR_UNSUPPORTED,
             "Triton 3.10 is newer than trident's tables: the cuda table knows releases 3.0 .. 3.9 (CI tests it "
             "against 3.6 3.7 3.8 3.9)");
    TU_FAILS(trd_option_default("cuda", "num_warps", "2.3.1", &def), TRD_ERR_UNSUPPORTED, "Triton 2.3.1 is not supported");
    TU_FAILS(trd_option_default("cuda", "num_warps", "3.", &def), TRD_ERR_UNSUPPORTED, "is not a release such as 3.9");
    TU_FAILS(trd_option_default("xpu", "num_warps", "3.8", &def), TRD_ERR_UNSUPPORTED,
             "intel-xpu-backend-for-triton 3.8 is newer than trident's tables");
    TU_FAILS(trd_option_default("cuda", "nope", NULL, &def), TRD_ERR_NOT_FOUND, "'nope' is not an option of cuda");
    TU_OK(trd_option_default("host", "arch", "3.9", &def)); /* trident's own tables have no releases */
    trd_option_releases_t r = {.struct_size = sizeof r};
    TU_OK(trd_option_releases("hip", &r));
    ck_assert_str_eq(r.product, "Triton");
    ck_assert_str_eq(r.oldest, "3.0");
    ck_assert_str_eq(r.newest, "3.9");
    ck_assert_str_eq(r.tested, "3.6 3.7 3.8 3.9");
    TU_OK(trd_option_releases("runtime", &r));
    ck_assert_ptr_null(r.product);
    ck_assert_str_eq(r.tested, "");
    r.struct_size = 8;
    TU_FAILS(trd_option_releases("cuda", &r), TRD_ERR_VERSION, "trd_option_releases_t");
    /* every backend is enumerable */
    uint32_t nb;
    TU_OK(trd_backend_count(&nb));
    ck_assert_uint_eq(nb, 6);
    const char *name;
    TU_OK(trd_backend_name(5, &name));
    ck_assert_str_eq(name, "driver");
}
END_TEST

static char *get(trd_options_t *o, const char *name)
{
    static char buf[512];
    size_t len;
    TU_OK(trd_options_get(o, name, buf, sizeof buf, &len));
    return buf;
}

START_TEST(derived_defaults)
{
    /* what Triton 3.6's parse_options gives for each target */
    struct {
        const char *backend, *arch, *name, *value;
    } cases[] = {
        {"cuda", "sm80", "supported_fp8_dtypes", "fp8e4b15,fp8e5"},
        {"cuda", "sm80", "deprecated_fp8_dot_operand_dtypes", ""},
        {"cuda", "sm80", "max_num_imprecise_acc_default", "0"},
        {"cuda", "sm89", "supported_fp8_dtypes", "fp8e4b15,fp8e4nv,fp8e5"},
        {"cuda", "sm90", "supported_fp8_dtypes", "fp8e4b15,fp8e4nv,fp8e5"},
        {"cuda", "sm90", "deprecated_fp8_dot_operand_dtypes", "fp8e4b15"},
        {"cuda", "sm90", "max_num_imprecise_acc_default", "1073741824"},
        {"cuda", "sm100", "max_num_imprecise_acc_default", "0"},
        {"hip", "gfx942", "supported_fp8_dtypes", "fp8e4b8,fp8e4nv,fp8e5,fp8e5b16"},
        {"hip", "gfx942", "allowed_dot_input_precisions", "bf16x3,bf16x6,ieee,tf32"},
        {"hip", "gfx942", "warp_size", "64"},
        {"hip", "gfx942", "deprecated_fp8_dot_operand_dtypes", ""},
        {"hip", "gfx950", "deprecated_fp8_dot_operand_dtypes", "fp8e4b8,fp8e5b16"},
        {"hip", "gfx950", "allowed_dot_input_precisions", "ieee,bf16x3,bf16x6"},
        {"hip", "gfx1100", "warp_size", "32"},
        {"hip", "gfx1100", "allowed_dot_input_precisions", "ieee,bf16x3,bf16x6"},
        {"hip", "gfx90a", "warp_size", "64"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        trd_options_t *o;
        TU_OK(trd_options_create(cases[i].backend, &o));
        TU_OK(trd_options_set(o, "arch", cases[i].arch));
        ck_assert_msg(!strcmp(get(o, cases[i].name), cases[i].value), "%s %s: %s = '%s', Triton derives '%s'",
                      cases[i].backend, cases[i].arch, cases[i].name, get(o, cases[i].name), cases[i].value);
        int32_t set;
        TU_OK(trd_options_is_set(o, cases[i].name, &set));
        ck_assert_int_eq(set, 0);
        trd_options_destroy(o);
    }
    /* an explicit value is kept when the arch changes */
    trd_options_t *o;
    TU_OK(trd_options_create("cuda", &o));
    TU_OK(trd_options_set(o, "max_num_imprecise_acc_default", "7"));
    TU_OK(trd_options_set(o, "arch", "sm90"));
    ck_assert_str_eq(get(o, "max_num_imprecise_acc_default"), "7");
    ck_assert_str_eq(get(o, "deprecated_fp8_dot_operand_dtypes"), "fp8e4b15");
    TU_OK(trd_options_reset(o, "arch"));
    ck_assert_str_eq(get(o, "arch"), "none");
    ck_assert_str_eq(get(o, "deprecated_fp8_dot_operand_dtypes"), "");
    trd_options_destroy(o);
}
END_TEST

START_TEST(parse_each_type)
{
    trd_options_t *o;
    TU_OK(trd_options_create("cuda", &o));
    struct {
        const char *name, *value, *canon;
    } good[] = {
        {"num_warps", "8", "8"},
        {"num_warps", "0x10", "16"},
        {"maxnreg", "128", "128"},
        {"maxnreg", "None", "none"},
        {"enable_fp_fusion", "False", "false"},
        {"enable_fp_fusion", "1", "true"},
        {"launch_pdl", "yes", "true"},
        {"ptx_options", "-O3 -lineinfo", "-O3 -lineinfo"},
        {"default_dot_input_precision", "ieee", "ieee"},
        {"supported_fp8_dtypes", "('fp8e5', 'fp8e4nv')", "fp8e5,fp8e4nv"},
        {"supported_fp8_dtypes", "[fp8e5]", "fp8e5"},
        {"supported_fp8_dtypes", "", ""},
        {"supported_fp8_dtypes", "(\"fp8e5\",)", "fp8e5"},
        {"extern_libs", "libdevice=/opt/libdevice.10.bc, mylib = /x/y.a", "libdevice=/opt/libdevice.10.bc,mylib=/x/y.a"},
        {"extern_libs", "none", "none"},
        {"arch", "sm120", "sm120"},
        {"instrumentation_mode", "consan", "consan"},
        {"instrumentation_mode", "consan,fpsan", "consan,fpsan"},
        {"sched4reg", "true", "true"},
        {"min_shared_mem", "65536", "65536"},
        {"fpsan_homomorphic_casts", "1", "true"},
    };
    for (size_t i = 0; i < TU_LEN(good); i++) {
        TU_OK(trd_options_set(o, good[i].name, good[i].value));
        ck_assert_msg(!strcmp(get(o, good[i].name), good[i].canon), "%s = %s gave '%s'", good[i].name, good[i].value,
                      get(o, good[i].name));
    }
    TU_OK(trd_options_reset(o, NULL));
    struct {
        const char *name, *value, *needle;
    } bad[] = {
        {"num_warps", "3", "option cuda.num_warps: '3' is not valid: expected a power of two"},
        {"num_warps", "64", "expected 1 .. 32"},
        {"num_warps", "four", "expected an integer"},
        {"num_warps", "4 ", "expected an integer"},
        {"num_warps", "99999999999999999999", "expected an integer"},
        {"maxnreg", "8", "expected 16 .. 255"},
        {"enable_fp_fusion", "maybe", "expected true or false"},
        {"default_dot_input_precision", "ieeee", "expected one of tf32|tf32x3|ieee|bf16x3|bf16x6 (did you mean 'ieee'?)"},
        {"supported_fp8_dtypes", "fp8e5,fp9", "item 'fp9' is not one of"},
        {"supported_fp8_dtypes", "fp8e5,,fp8e4nv", "an item of the list is empty"},
        {"extern_libs", "libdevice", "expected name=path items"},
        {"extern_libs", "libdevice=relative.bc", "must be absolute"},
        {"extern_libs", "a=/x,a=/y", "library name 'a' appears twice"},
        {"arch", "gfx942", "expected sm<capability>"},
        {"warp_size", "64", "expected 32 .. 32"},
        {"ptx_options", "-O3\n-g", "control characters"},
        {"instrumentation_mode", "gsan", "instrumentation_mode gsan (Triton 3.8 and newer) gives the kernel launch "
                                         "parameters for GSan's state that only Triton's own launcher passes"},
        {"instrumentation_mode", "consan,gsan", "trident cannot launch it"},
        {"min_shared_mem", "-1", "expected 0 .. "},
        {"num_warps", "\xff\xfe", "not valid UTF-8"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        TU_FAILS(trd_options_set(o, bad[i].name, bad[i].value), TRD_ERR_INVALID_ARGUMENT, bad[i].needle);
        ck_assert_ptr_nonnull(strstr(trd_error_message(), bad[i].name));
    }
    /* unknown names suggest the nearest */
    TU_FAILS(trd_options_set(o, "num_warp", "4"), TRD_ERR_NOT_FOUND, "'num_warp' is not an option of cuda; did you mean 'num_warps'?");
    TU_FAILS(trd_options_set(o, "maxnregs", "4"), TRD_ERR_NOT_FOUND, "did you mean 'maxnreg'?");
    TU_FAILS(trd_options_set(o, "totally_unrelated", "4"), TRD_ERR_NOT_FOUND, "'totally_unrelated' is not an option of cuda");
    trd_options_t *before = o;
    TU_FAILS(trd_options_create("cudda", &o), TRD_ERR_NOT_FOUND, "did you mean 'cuda'?");
    ck_assert_ptr_eq(o, before); /* out-parameters are written only on success */
    trd_options_destroy(o);
    /* num_ctas > 1 needs sm90: checked against the target */
    trd_options_t *c;
    TU_OK(trd_options_create("cuda", &c));
    TU_OK(trd_options_set(c, "num_ctas", "2"));
    TU_OK(trd_options_set(c, "arch", "sm80"));
    TU_FAILS(trd_options_set(c, "num_ctas", "4"), TRD_ERR_INVALID_ARGUMENT, "needs compute capability 9.0");
    /* 3.9's clc needs sm100 (Triton's parse_options raises for older targets) */
    TU_OK(trd_options_set(c, "clc", "false"));
    TU_OK(trd_options_set(c, "arch", "sm90"));
    TU_FAILS(trd_options_set(c, "clc", "true"), TRD_ERR_INVALID_ARGUMENT,
             "clc (cluster launch control) needs compute capability 10.0 or newer, the target is sm90");
    TU_OK(trd_options_set(c, "arch", "sm100"));
    TU_OK(trd_options_set(c, "clc", "true"));
    trd_options_destroy(c);
    /* HIP's 3.8 and 3.9 fields */
    TU_OK(trd_options_create("hip", &c));
    TU_OK(trd_options_set(c, "schedule_hint", ""));
    TU_OK(trd_options_set(c, "schedule_hint", "attention,memory-bound-attention"));
    TU_FAILS(trd_options_set(c, "schedule_hint", "attention,fast"), TRD_ERR_INVALID_ARGUMENT, "'fast' is not a hint");
    TU_OK(trd_options_set(c, "llvm_fn_attrs", "amdgpu-sched-strategy=iterative-ilp, noinline"));
    ck_assert_str_eq(get(c, "llvm_fn_attrs"), "amdgpu-sched-strategy=iterative-ilp, noinline");
    TU_FAILS(trd_options_set(c, "llvm_fn_attrs", "noinline, =x"), TRD_ERR_INVALID_ARGUMENT,
             "'=x' has a value but no attribute name");
    TU_OK(trd_options_set(c, "wgp_cu_mode", "cu"));
    TU_FAILS(trd_options_set(c, "wgp_cu_mode", "wgb"), TRD_ERR_INVALID_ARGUMENT, "did you mean 'wgp'?");
    trd_options_destroy(c);
    /* typed setters and getters */
    TU_OK(trd_options_create("hip", &c));
    TU_OK(trd_options_set_int(c, "waves_per_eu", 2));
    TU_OK(trd_options_set_bool(c, "debug", 1));
    int64_t iv;
    int32_t bv;
    TU_OK(trd_options_get_int(c, "waves_per_eu", &iv));
    ck_assert_int_eq(iv, 2);
    TU_OK(trd_options_get_bool(c, "debug", &bv));
    ck_assert_int_eq(bv, 1);
    TU_FAILS(trd_options_set_int(c, "debug", 1), TRD_ERR_INVALID_ARGUMENT, "not an integer");
    TU_FAILS(trd_options_set_bool(c, "kpack", 1), TRD_ERR_INVALID_ARGUMENT, "not a bool");
    TU_FAILS(trd_options_set(c, "schedule_hint", "attention,fast"), TRD_ERR_INVALID_ARGUMENT, "'fast' is not a hint");
    TU_OK(trd_options_set(c, "schedule_hint", "attention,memory-bound-attention"));
    TU_OK(trd_options_set(c, "arch", "gfx950"));
    TU_FAILS(trd_options_set(c, "kpack", "2"), TRD_ERR_INVALID_ARGUMENT, "gfx950 supports only kpack=1");
    trd_options_destroy(c);
    TU_OK(trd_options_create("xpu", &c));
    TU_OK(trd_options_set(c, "num_warps", "64"));
    TU_FAILS(trd_options_set(c, "grf_mode", "256"), TRD_ERR_INVALID_ARGUMENT, "at most 32 warps");
    TU_FAILS(trd_options_set(c, "cluster_dims", "1,1"), TRD_ERR_INVALID_ARGUMENT, "expected three integers");
    TU_OK(trd_options_set(c, "cluster_dims", "(2, 1, 1)"));
    ck_assert_str_eq(get(c, "cluster_dims"), "2,1,1");
    trd_options_destroy(c);
    char small[4];
    size_t need;
    TU_OK(trd_options_create("cuda", &c));
    TU_FAILS(trd_options_get(c, "allowed_dot_input_precisions", small, sizeof small, &need), TRD_ERR_BUFFER_TOO_SMALL,
             "too small");
    ck_assert_uint_eq(need, strlen("tf32,tf32x3,ieee,bf16x3,bf16x6"));
    TU_FAILS(trd_options_get_int(c, "maxnreg", &iv), TRD_ERR_STATE, "is none");
    trd_options_destroy(c);
}
END_TEST

START_TEST(serialize_and_hash)
{
    trd_options_t *a, *b;
    TU_OK(trd_options_create("cuda", &a));
    TU_OK(trd_options_create("cuda", &b));
    /* the same values set in another order: byte-identical text, same hash */
    TU_OK(trd_options_set(a, "num_warps", "8"));
    TU_OK(trd_options_set(a, "debug", "true"));
    TU_OK(trd_options_set(a, "arch", "sm90"));
    TU_OK(trd_options_set(b, "arch", "sm90"));
    TU_OK(trd_options_set(b, "debug", "1"));
    TU_OK(trd_options_set(b, "num_warps", "8"));
    char ta[8192], tb[8192];
    size_t la, lb;
    TU_OK(trd_options_serialize(a, ta, sizeof ta, &la));
    TU_OK(trd_options_serialize(b, tb, sizeof tb, &lb));
    ck_assert_str_eq(ta, tb);
    uint8_t ha[32], hb[32];
    TU_OK(trd_options_hash(a, ha));
    TU_OK(trd_options_hash(b, hb));
    ck_assert_mem_eq(ha, hb, 32);
    /* round trip: every value of the text set on fresh options gives the same text */
    json_error_t err;
    json_t *j = json_loads(ta, 0, &err);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "num_warps")), 8);
    ck_assert(json_is_null(json_object_get(j, "maxnreg")));
    ck_assert(json_is_array(json_object_get(j, "supported_fp8_dtypes")));
    trd_options_t *c;
    TU_OK(trd_options_create("cuda", &c));
    const char *key;
    json_t *val;
    json_object_foreach(j, key, val) {
        char text[512];
        if (json_is_string(val))
            snprintf(text, sizeof text, "%s", json_string_value(val));
        else if (json_is_array(val)) {
            text[0] = '\0';
            for (size_t i = 0; i < json_array_size(val); i++)
                snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i ? "," : "",
                         json_string_value(json_array_get(val, i)));
        } else if (json_is_null(val))
            snprintf(text, sizeof text, "none");
        else if (json_is_boolean(val))
            snprintf(text, sizeof text, "%s", json_is_true(val) ? "true" : "false");
        else
            snprintf(text, sizeof text, "%lld", (long long)json_integer_value(val));
        TU_OK(trd_options_set(c, key, text));
    }
    json_decref(j);
    char tc[8192];
    size_t lc;
    TU_OK(trd_options_serialize(c, tc, sizeof tc, &lc));
    ck_assert_str_eq(tc, ta);
    /* a changed value changes the hash; so does the backend */
    TU_OK(trd_options_set(b, "num_warps", "4"));
    TU_OK(trd_options_hash(b, hb));
    ck_assert(memcmp(ha, hb, 32) != 0);
    /* extern_libs: the library's content, not its path, is hashed */
    char p1[] = "/tmp/trd_lib_XXXXXX", p2[] = "/tmp/trd_lib_XXXXXX";
    int f1 = mkstemp(p1), f2 = mkstemp(p2);
    ck_assert(write(f1, "same bytes", 10) == 10 && write(f2, "same bytes", 10) == 10);
    close(f1);
    close(f2);
    char v1[128], v2[128];
    snprintf(v1, sizeof v1, "lib=%s", p1);
    snprintf(v2, sizeof v2, "lib=%s", p2);
    TU_OK(trd_options_set(a, "extern_libs", v1));
    TU_OK(trd_options_set(c, "extern_libs", v2));
    uint8_t h1[32], h2[32];
    TU_OK(trd_options_hash(a, h1));
    TU_OK(trd_options_hash(c, h2));
    ck_assert_mem_eq(h1, h2, 32);
    f2 = open(p2, O_WRONLY | O_APPEND);
    ck_assert(write(f2, "!", 1) == 1);
    close(f2);
    TU_OK(trd_options_hash(c, h2));
    ck_assert(memcmp(h1, h2, 32) != 0);
    unlink(p1);
    unlink(p2);
    TU_FAILS(trd_options_hash(a, h1), TRD_ERR_NOT_FOUND, "extern_libs 'lib'");
    /* copy keeps values and what was set */
    trd_options_t *d;
    TU_OK(trd_options_copy(b, &d));
    int32_t set;
    TU_OK(trd_options_is_set(d, "num_warps", &set));
    ck_assert_int_eq(set, 1);
    TU_OK(trd_options_is_set(d, "num_stages", &set));
    ck_assert_int_eq(set, 0);
    trd_options_destroy(a);
    trd_options_destroy(b);
    trd_options_destroy(c);
    trd_options_destroy(d);
    /* a fixed options object hashes the same in every run and on every machine */
    TU_OK(trd_options_create("hip", &a));
    TU_OK(trd_options_hash(a, ha));
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", ha[i]);
    char text[8192];
    size_t len;
    TU_OK(trd_options_serialize(a, text, sizeof text, &len));
    ck_assert_str_eq(text,
                     "{\"allow_flush_denorm\":false,\"allowed_dot_input_precisions\":[\"ieee\",\"bf16x3\",\"bf16x6\"],"
                     "\"arch\":null,\"backend_name\":\"hip\",\"debug\":false,\"default_dot_input_precision\":\"ieee\","
                     "\"deprecated_fp8_dot_operand_dtypes\":[],\"enable_fp_fusion\":true,\"extern_libs\":null,"
                     "\"fpsan_homomorphic_casts\":false,\"instrumentation_mode\":\"\",\"kpack\":1,"
                     "\"launch_cooperative_grid\":false,\"llvm_fn_attrs\":\"\",\"matrix_instr_nonkdim\":0,"
                     "\"max_num_imprecise_acc_default\":0,\"num_ctas\":1,\"num_stages\":2,\"num_warps\":4,"
                     "\"sanitize_overflow\":true,\"schedule_hint\":\"\",\"supported_fp8_dtypes\":"
                     "[\"fp8e4nv\",\"fp8e5\",\"fp8e5b16\",\"fp8e4b8\"],\"warp_size\":64,\"waves_per_eu\":0,"
                     "\"wgp_cu_mode\":\"wgp\"}");
    trd_options_destroy(a);
}
END_TEST

START_TEST(option_rows)
{
    trd_option_info_t info = {.struct_size = sizeof info};
    TU_OK(trd_option_lookup("cuda", "maxnreg", &info));
    ck_assert_int_eq(info.type, TRD_OPT_OPT_INT);
    ck_assert_int_eq(info.stage, TRD_STAGE_LOAD);
    ck_assert_str_eq(info.type_name, "Optional[int]");
    TU_OK(trd_option_lookup("cuda", "supported_fp8_dtypes", &info));
    ck_assert_uint_eq(info.flags & TRD_OPTION_DERIVED, TRD_OPTION_DERIVED);
    ck_assert_ptr_nonnull(info.derived);
    TU_OK(trd_option_lookup("hip", "warp_size", &info));
    ck_assert_uint_eq(info.flags & TRD_OPTION_NOT_FIELD, TRD_OPTION_NOT_FIELD);
    TU_OK(trd_option_lookup("cuda", "num_warps", &info));
    ck_assert_int_eq(info.stage, TRD_STAGE_LAUNCH);
    TU_OK(trd_option_lookup("cuda", "debug", &info));
    ck_assert_str_eq(info.env, "TRITON_DEBUG");
    TU_OK(trd_option_lookup("xpu", "grf_mode", &info));
    ck_assert_int_eq(info.type, TRD_OPT_ENUM);
    ck_assert_str_eq(info.values, "default|128|256|512|auto");
    TU_OK(trd_option_lookup("runtime", "log_level", &info));
    ck_assert_str_eq(info.env, "TRIDENT_LOG");
    TU_FAILS(trd_option_lookup("cuda", "nm_warps", &info), TRD_ERR_NOT_FOUND, "did you mean 'num_warps'?");
    info.struct_size = 3;
    TU_FAILS(trd_option_lookup("cuda", "num_warps", &info), TRD_ERR_VERSION, "trd_option_info_t.struct_size is 3");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("options");
    TCase *t = tcase_create("options");
    tcase_add_test(t, tables_match_triton);
    tcase_add_test(t, derived_defaults);
    tcase_add_test(t, parse_each_type);
    tcase_add_test(t, serialize_and_hash);
    tcase_add_test(t, option_rows);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
