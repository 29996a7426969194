/* SPDX-License-Identifier: Apache-2.0 */
/* test_core.c: the core's pure parts: versions and status, thread-local
 * errors, struct sizes, the optional driver ops, signatures (text and Triton
 * IR), Triton metadata, bundles (round trip and corruption), Triton cache
 * entries, image formats, target selection, argument packing, fp16/bf16
 * conversion and SHA-256; bad input: empty and deeply nested signatures, a
 * given signature against the kernel's own, grid limits, bundle files; the
 * built-in host driver's contract (driver ABI 2's services table, the core's
 * scratch figures). */
#include <malloc.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "tests/testutil.h"

/* ----------------------------------------------------------- basics */

START_TEST(version_and_status)
{
    ck_assert_uint_eq(trd_version(), TRD_VERSION);
    ck_assert_uint_eq(trd_abi_version(), TRD_ABI_VERSION);
    ck_assert_str_eq(trd_version_string(), TRD_VERSION_STRING);
    ck_assert_str_eq(trd_status_name(TRD_OK), "TRD_OK");
    ck_assert_str_eq(trd_status_name(TRD_ERR_FORMAT), "TRD_ERR_FORMAT");
    ck_assert_str_eq(trd_status_name(TRD_ERR_INTERNAL), "TRD_ERR_INTERNAL");
    ck_assert_str_eq(trd_status_name(-1), "TRD_ERR_UNKNOWN");
    ck_assert_str_eq(trd_status_name(1000), "TRD_ERR_UNKNOWN");
}
END_TEST

static void *other_thread(void *arg)
{
    (void)arg;
    /* a fresh thread has no message, and setting one here leaves the main thread's alone */
    ck_assert_str_eq(trd_error_message(), "");
    trd_error_set(TRD_ERR_IO, "thread two's error");
    return NULL;
}

START_TEST(errors_are_thread_local)
{
    trd_error_set(TRD_ERR_NOT_FOUND, "main thread's error %d", 7);
    pthread_t t;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, NULL);
    ck_assert_str_eq(trd_error_message(), "main thread's error 7");
    trd_error_wrap(TRD_ERR_NOT_FOUND, "loading %s", "x");
    ck_assert_str_eq(trd_error_message(), "loading x: main thread's error 7");
    /* a message longer than the buffer is cut, not overflowed */
    char big[5000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    trd_error_set(TRD_ERR_IO, "%s", big);
    ck_assert_uint_eq(strlen(trd_error_message()), 2047);
    trd_error_wrap(TRD_ERR_IO, "%s", big);
    ck_assert_uint_eq(strlen(trd_error_message()), 2047);
}
END_TEST

START_TEST(struct_sizes)
{
    TU_FAILS(trd_struct_check(4, sizeof(trd_device_props_t), "trd_device_props_t"), TRD_ERR_VERSION,
             "trd_device_props_t.struct_size is 4");
    TU_OK(trd_struct_check(sizeof(trd_device_props_t) + 32, sizeof(trd_device_props_t), "x"));
    /* a newer caller's larger struct: only our part is written */
    unsigned char buf[sizeof(trd_kernel_info_t) + 16];
    memset(buf, 0xAB, sizeof buf);
    trd_kernel_info_t src = {.struct_size = sizeof src, .num_params = 3, .name = "k"};
    *(uint32_t *)buf = sizeof buf;
    trd_struct_fill(buf, &src, sizeof src);
    ck_assert_uint_eq(((trd_kernel_info_t *)buf)->num_params, 3);
    ck_assert_uint_eq(*(uint32_t *)buf, sizeof buf);
    for (size_t i = sizeof src; i < sizeof buf; i++)
        ck_assert_uint_eq(buf[i], 0xAB);
    /* an older caller's smaller struct: nothing past its size is written */
    unsigned char small[offsetof(trd_kernel_info_t, reserved) + 32];
    memset(small, 0xCD, sizeof small);
    *(uint32_t *)small = offsetof(trd_kernel_info_t, reserved);
    trd_struct_fill(small, &src, sizeof src);
    for (size_t i = offsetof(trd_kernel_info_t, reserved); i < sizeof small; i++)
        ck_assert_uint_eq(small[i], 0xCD);
}
END_TEST

/* ------------------------------------------------ the built-in host driver */

/* The built-in host driver (drivers/host, linked in with TRD_HOST_PULL) speaks driver ABI 2 as a module does:
 * its configuration and errors go through the services table it is handed, not libtrident's exports, and the
 * scratch it allocates is the core's figure in the launch struct. The spy table forwards to the core's own
 * functions, so that leaving it bound harms no later test of this process. */
const trd_driver_ops_t *trd_host_driver_ops(void);

static char spy_said[1024];
static int spy_errors;

static trd_status_t spy_error(trd_status_t status, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    vsnprintf(spy_said, sizeof spy_said, fmt, copy);
    va_end(copy);
    spy_errors++;
    return trd_error_vset(status, fmt, ap);
}

static const char *spy_config(void *ctx, const char *key)
{
    (void)ctx;
    return strcmp(key, "devices") == 0 ? "2" : strcmp(key, "threads") == 0 ? "3" : NULL;
}

static const trd_driver_services_t spy_services = {
    .struct_size = sizeof(trd_driver_services_t),
    .error = spy_error,
    .log = trd_vlog,
    .config_get = spy_config,
    .options_get = trd_options_get,
    .options_get_int = trd_options_get_int,
    .options_get_bool = trd_options_get_bool,
    .options_is_set = trd_options_is_set,
};

START_TEST(host_driver_through_services)
{
    const trd_driver_ops_t *ops = trd_host_driver_ops();
    ck_assert_uint_eq(ops->abi_version, 2);
    char note[128] = "";
    /* no version-1 config_get: the configuration comes from the services table */
    trd_driver_init_args_t args = {.struct_size = sizeof args, .abi_version = ops->abi_version, .note = note,
                                   .note_cap = sizeof note, .services = &spy_services};
    void *drv = NULL, *dev = NULL, *mod = NULL;
    TU_OK(ops->init(&args, &drv));
    uint32_t n = 0;
    TU_OK(ops->device_count(drv, &n));
    ck_assert_uint_eq(n, 2);
    trd_device_props_t props = {.struct_size = sizeof props};
    TU_OK(ops->device_props(drv, 1, &props));
    ck_assert_uint_eq(props.compute_units, 3);
    spy_errors = 0;
    TU_FAILS(ops->device_props(drv, 7, &props), TRD_ERR_NOT_FOUND, "host device 7 does not exist");
    ck_assert_int_eq(spy_errors, 1);
    ck_assert_str_eq(spy_said, "host device 7 does not exist");

    /* scratch_kernel: 16 bytes of global scratch a program; out[p] = the sum of x[4p .. 4p+3] through it */
    TU_OK(ops->device_open(drv, 0, &dev));
    char *image = NULL;
    size_t size = 0;
    TU_OK(trd_file_read(tu_host_kernel("scratch_kernel"), (size_t)1 << 24, &image, &size));
    trd_options_t *opts;
    TU_OK(trd_options_create("host", &opts));
    trd_driver_module_desc_t d = {.struct_size = sizeof d, .format = TRD_FORMAT_HOST_SO, .image = image,
                                  .image_size = size, .entry = "scratch_kernel", .arch = "",
                                  .label = "kernel 'scratch_kernel'", .num_warps = 1, .num_ctas = 1,
                                  .num_params = 2, .global_scratch_size = 16, .global_scratch_align = 16,
                                  .options = opts};
    trd_load_info_t info = {.struct_size = sizeof info};
    TU_OK(ops->module_load(dev, &d, &mod, &info));
    enum { PROGRAMS = 37 };
    float x[4 * PROGRAMS], out[PROGRAMS];
    tu_fill_f32(x, TU_LEN(x), 25);
    memset(out, 0, sizeof out);
    float *px = x, *pout = out;
    void *params[2 + TRD_DRIVER_EXTRA_PARAMS] = {&px, &pout};
    uint32_t sizes[2 + TRD_DRIVER_EXTRA_PARAMS] = {sizeof px, sizeof pout};
    /* the core's figure, not one the driver works out: far more than the host has, the launch fails naming it */
    trd_driver_launch_t l = {.struct_size = sizeof l, .num_params = 2, .grid = {PROGRAMS, 1, 1}, .params = params,
                             .param_sizes = sizes, .global_scratch_bytes = (uint64_t)1 << 62};
    spy_errors = 0;
    TU_FAILS(ops->launch(mod, NULL, NULL, &l), TRD_ERR_NO_MEMORY,
             "cannot allocate 4611686018427387904 bytes of scratch (37 programs x 16 bytes)");
    ck_assert_int_eq(spy_errors, 1);
    l.global_scratch_bytes = PROGRAMS * 16;
    TU_OK(ops->launch(mod, NULL, NULL, &l));
    for (int p = 0; p < PROGRAMS; p++)
        ck_assert_float_eq_tol(out[p], x[4 * p] + x[4 * p + 1] + x[4 * p + 2] + x[4 * p + 3], 1e-6f);
    ops->module_unload(mod);
    trd_options_destroy(opts);
    free(image);
    ops->device_close(dev);
    ops->fini(drv);
}
END_TEST

/* ------------------------------------------------------- signatures */

START_TEST(signature_text)
{
    struct trd_signature s;
    TU_OK(trd_signature_parse("*fp32, y:*fp16,n:i32 , B:constexpr,alpha:fp32,flag:i1,u:u64", "sig", &s));
    ck_assert_uint_eq(s.count, 7);
    ck_assert_uint_eq(s.num_params, 6);
    ck_assert_str_eq(s.canonical, "*fp32,y:*fp16,n:i32,B:constexpr,alpha:fp32,flag:i1,u:u64");
    ck_assert_int_eq(s.params[0].type, TRD_T_PTR);
    ck_assert_int_eq(s.params[0].elem, TRD_T_FP32);
    ck_assert_ptr_null(s.params[0].name);
    ck_assert_str_eq(s.params[1].name, "y");
    ck_assert_uint_eq(s.params[2].size, 4);
    ck_assert_uint_eq(s.params[3].size, 0);
    ck_assert_uint_eq(s.params[5].size, 1);
    ck_assert_uint_eq(s.params[6].size, 8);
    trd_signature_free(&s);
    TU_OK(trd_signature_parse("", "empty", &s));
    ck_assert_uint_eq(s.count, 0);
    trd_signature_free(&s);
    TU_OK(trd_signature_parse("*k*i8,d:nvTmaDesc,*bf16", "sig", &s));
    ck_assert_int_eq(s.params[0].elem, TRD_T_PTR);
    ck_assert_uint_eq(s.params[1].size, 128);
    trd_signature_free(&s);

    TU_FAILS(trd_signature_parse("*fp32,*fp33", "signature of k", &s), TRD_ERR_FORMAT, "entry 1 '*fp33' is not a Triton type");
    TU_FAILS(trd_signature_parse("i32,,i32", "sig", &s), TRD_ERR_FORMAT, "entry 1 is empty");
    TU_FAILS(trd_signature_parse("i32,", "sig", &s), TRD_ERR_FORMAT, "ends with ','");
    TU_FAILS(trd_signature_parse("1x:i32", "sig", &s), TRD_ERR_FORMAT, "not an identifier");
    TU_FAILS(trd_signature_parse("x y:i32", "sig", &s), TRD_ERR_FORMAT, "not an identifier");
    TU_FAILS(trd_signature_parse("*constexpr", "sig", &s), TRD_ERR_FORMAT, "not a Triton type");
    TU_FAILS(trd_signature_parse("i32\x01", "sig", &s), TRD_ERR_FORMAT, "\\x01");
    char *big = malloc(70000);
    memset(big, 'i', 69999);
    big[69999] = '\0';
    TU_FAILS(trd_signature_parse(big, "sig", &s), TRD_ERR_LIMIT, "more than 65536");
    /* 1025 entries */
    struct trd_str many;
    trd_str_init(&many);
    for (int i = 0; i < 1025; i++)
        trd_str_append(&many, i ? ",i32" : "i32");
    TU_FAILS(trd_signature_parse(many.buf, "sig", &s), TRD_ERR_LIMIT, "more than 1024 parameters");
    trd_str_free(&many);
    free(big);
}
END_TEST

START_TEST(signature_ttir)
{
    char *text;
    size_t len;
    TU_OK(trd_file_read(tu_path("%s/add_kernel.ttir", tu_fixture("cuda", "add_fp32")), 1 << 20, &text, &len));
    struct trd_signature s;
    TU_OK(trd_signature_from_ttir(text, len, "add_kernel", "ttir", &s));
    ck_assert_str_eq(s.canonical, "x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n_elements:i32");
    trd_signature_free(&s);
    TU_FAILS(trd_signature_from_ttir(text, len, "other_kernel", "ttir", &s), TRD_ERR_FORMAT, "no 'tt.func public @other_kernel'");
    free(text);
    TU_OK(trd_file_read(tu_path("%s/scalars_kernel.ttir", tu_fixture("cuda", "scalars")), 1 << 20, &text, &len));
    TU_OK(trd_signature_from_ttir(text, len, NULL, "ttir", &s));
    /* Triton IR is signless: u32/u64 appear as i32/i64 */
    ck_assert_str_eq(s.canonical, "out_ptr:*fp64,a_i8:i8,a_i16:i16,a_i32:i32,a_i64:i64,a_u32:i32,a_u64:i64,a_f16:fp16,"
                                  "a_bf16:bf16,a_f32:fp32,a_f64:fp64,a_i1:i1");
    trd_signature_free(&s);
    free(text);
    /* argN names and attributes */
    const char *ir = "tt.func public @k(%arg0: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg1: i64 loc(\"n\"(#loc)))";
    TU_OK(trd_signature_from_ttir(ir, strlen(ir), "k", "ttir", &s));
    ck_assert_str_eq(s.canonical, "*fp16,n:i64");
    trd_signature_free(&s);
    const char *bad[] = {
        "tt.func public @k(%a: !tt.ptr<f32",
        "tt.func public @k(%a: i32 {x = 1",
        "tt.func public @k(%a: !tt.tensordesc<tensor<64xf16>>)",
        "tt.func public @k(%a i32)",
        "tt.func public @k %a: i32)",
        "tt.func public @k(%a: i32 loc(\"x\"",
        "tt.func public @k(%a: i32; %b: i32)",
    };
    for (size_t i = 0; i < TRD_ARRAY_SIZE(bad); i++) {
        ck_assert_int_eq(trd_signature_from_ttir(bad[i], strlen(bad[i]), "k", "ttir", &s), TRD_ERR_FORMAT);
        ck_assert_ptr_nonnull(strstr(trd_error_message(), "ttir"));
    }
}
END_TEST

/* --------------------------------------------------------- metadata */

static const char *meta_ok =
    "{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90,\"warp_size\":32},\"num_warps\":8,\"num_ctas\":2,"
    "\"shared\":65536,\"global_scratch_size\":128,\"global_scratch_align\":128,\"profile_scratch_size\":0,"
    "\"profile_scratch_align\":1,\"launch_cooperative_grid\":true,\"launch_pdl\":false,\"triton_version\":\"3.6.0\"}";

START_TEST(metadata_good)
{
    struct trd_meta m;
    TU_OK(trd_meta_parse(meta_ok, strlen(meta_ok), "meta", &m));
    ck_assert_str_eq(m.name, "k");
    ck_assert_str_eq(m.backend, "cuda");
    ck_assert_str_eq(m.arch, "sm90");
    ck_assert_uint_eq(m.num_warps, 8);
    ck_assert_uint_eq(m.num_ctas, 2);
    ck_assert_uint_eq(m.warp_size, 32);
    ck_assert_uint_eq(m.shared, 65536);
    ck_assert_uint_eq(m.global_scratch_size, 128);
    ck_assert_uint_eq(m.global_scratch_align, 128);
    ck_assert_uint_eq(m.flags, TRD_MODULE_COOPERATIVE);
    ck_assert_str_eq(m.triton_version, "3.6.0");
    ck_assert_int_eq(m.from_json, 1);
    trd_meta_free(&m);
    /* warp specialization: Triton 3.6 compiles num_warps=4 into 12 warps (384 threads), which its launcher runs */
    const char *ws = "{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90,\"warp_size\":32},\"num_warps\":12}";
    TU_OK(trd_meta_parse(ws, strlen(ws), "meta", &m));
    ck_assert_uint_eq(m.num_warps, 12);
    trd_meta_free(&m);
    /* every fixture Triton wrote parses */
    const char *fixtures[][3] = {{"cuda", "matmul", "matmul_kernel"}, {"cuda", "scratch", "scratch_kernel"},
                                 {"cuda", "cluster", "add_kernel"},  {"hip", "add_fp32", "add_kernel"},
                                 {"cuda", "coop", "coop_kernel"}};
    for (size_t i = 0; i < TRD_ARRAY_SIZE(fixtures); i++) {
        char *text;
        size_t len;
        TU_OK(trd_file_read(tu_path("%s/%s.json", tu_fixture(fixtures[i][0], fixtures[i][1]), fixtures[i][2]), 1 << 20,
                            &text, &len));
        TU_OK(trd_meta_parse(text, len, "fixture", &m));
        if (!strcmp(fixtures[i][0], "hip")) {
            ck_assert_str_eq(m.arch, "gfx942");
            ck_assert_uint_eq(m.warp_size, 64);
        }
        if (!strcmp(fixtures[i][1], "matmul"))
            ck_assert_uint_gt(m.shared, 49152);
        if (!strcmp(fixtures[i][1], "scratch"))
            ck_assert_uint_eq(m.global_scratch_size, 128);
        if (!strcmp(fixtures[i][1], "cluster"))
            ck_assert_uint_eq(m.num_ctas, 2);
        if (!strcmp(fixtures[i][1], "coop"))
            ck_assert_uint_eq(m.flags & TRD_MODULE_COOPERATIVE, TRD_MODULE_COOPERATIVE);
        trd_meta_free(&m);
        free(text);
    }
}
END_TEST

START_TEST(metadata_bad)
{
    struct {
        const char *json, *needle;
    } cases[] = {
        {"", "not valid JSON"},
        {"{\"name\": \"k\",", "not valid JSON"},
        {"[1,2]", "an array; expected a JSON object"},
        {"{\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":4}", "key 'name'"},
        {"{\"name\":\"k k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":4}", "not a symbol name"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"metal\",\"arch\":90},\"num_warps\":4}", "'metal' is not one of"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":\"4\"}", "'num_warps' is a string"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":0}", "expected 1 .. 1024"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90}}", "'num_warps' is missing"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":4,\"shared\":-1}", "'shared' is -1"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":4,\"num_ctas\":64}", "'num_ctas' is 64"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":[1]},\"num_warps\":4}", "'target.arch' is an array"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":4,\"global_scratch_align\":3}",
         "powers of two"},
        {"{\"name\":\"k\",\"name\":\"j\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":4}", "duplicate"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":4,\"launch_pdl\":1}",
         "'launch_pdl' is an integer; expected true or false"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":1024,\"warp_size\":1024}",
         "not a block size"},
        {"{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":4,\"instrumentation_mode\":1}",
         "'instrumentation_mode' is an integer; expected a string"},
    };
    for (size_t i = 0; i < TRD_ARRAY_SIZE(cases); i++) {
        struct trd_meta m;
        trd_status_t st = trd_meta_parse(cases[i].json, strlen(cases[i].json), "meta.json", &m);
        ck_assert_msg(st == TRD_ERR_FORMAT, "case %zu: %s", i, trd_status_name(st));
        ck_assert_msg(strstr(trd_error_message(), cases[i].needle) && strstr(trd_error_message(), "meta.json"),
                      "case %zu: '%s' lacks '%s'", i, trd_error_message(), cases[i].needle);
    }
    /* Triton 3.8 and 3.9 give GSan-instrumented kernels 1 and 3 parameters of their launcher's: refused at
     * load, not launched without them */
    const char *gsan[] = {"gsan", "consan,gsan"};
    for (size_t i = 0; i < TRD_ARRAY_SIZE(gsan); i++) {
        char *json = trd_asprintf("{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":4,"
                                  "\"instrumentation_mode\":\"%s\",\"triton_version\":\"3.9.0\"}", gsan[i]);
        struct trd_meta m;
        TU_FAILS(trd_meta_parse(json, strlen(json), "meta.json", &m), TRD_ERR_UNSUPPORTED,
                 "meta.json: instrumentation_mode gsan (Triton 3.8 and newer) gives the kernel launch parameters");
        free(json);
    }
    const char *consan = "{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90},\"num_warps\":4,"
                         "\"instrumentation_mode\":\"consan\"}";
    struct trd_meta m;
    TU_OK(trd_meta_parse(consan, strlen(consan), "meta.json", &m));
    trd_meta_free(&m);
}
END_TEST

/* ----------------------------------------------------------- bundles */

static void make_bundle(void **data, uint64_t *size)
{
    static const char cubin[] = "\x7f" "ELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xbe\x00" "cubin-bytes";
    static const char ptx[] = "//\n.version 8.7\n.target sm_90a\n";
    trd_bundle_target_t t[2] = {
        {.struct_size = sizeof t[0], .format = TRD_FORMAT_CUBIN, .arch = "sm90", .image = cubin, .image_size = sizeof cubin,
         .metadata = "{\"name\":\"k\",\"target\":{\"backend\":\"cuda\",\"arch\":90,\"warp_size\":32},\"num_warps\":8,\"shared\":100}"},
        {.struct_size = sizeof t[1], .format = TRD_FORMAT_PTX, .arch = "sm90", .image = ptx, .image_size = sizeof ptx - 1},
    };
    TU_OK(trd_bundle_write("k", "x:*fp32,n:i32,B:constexpr", t, 2, data, size));
}

START_TEST(bundle_round_trip)
{
    void *data;
    uint64_t size;
    make_bundle(&data, &size);
    ck_assert(trd_bundle_is(data, size));
    struct trd_kernel_src src;
    TU_OK(trd_bundle_read(data, size, "bundle", &src));
    ck_assert_str_eq(src.name, "k");
    ck_assert_str_eq(src.sig.canonical, "x:*fp32,n:i32,B:constexpr");
    ck_assert_uint_eq(src.ntargets, 2);
    ck_assert_int_eq(src.targets[0].format, TRD_FORMAT_CUBIN);
    ck_assert_str_eq(src.targets[0].meta.arch, "sm90");
    ck_assert_uint_eq(src.targets[0].meta.num_warps, 8);
    ck_assert_uint_eq(src.targets[0].meta.shared, 100);
    ck_assert_int_eq(src.targets[1].format, TRD_FORMAT_PTX);
    ck_assert_int_eq(src.targets[1].meta.from_json, 0);
    ck_assert_uint_eq(src.targets[1].meta.num_warps, 4);
    ck_assert_mem_eq(src.targets[1].image, "//\n.version", 11);
    trd_kernel_src_free(&src);
    trd_free(data);

    /* writing refuses what it could not read back */
    trd_bundle_target_t t = {.struct_size = sizeof t, .format = TRD_FORMAT_CUBIN, .arch = "sm90", .image = "x", .image_size = 1};
    TU_FAILS(trd_bundle_write("k", "*fp32,*fp33", &t, 1, &data, &size), TRD_ERR_FORMAT, "*fp33");
    TU_FAILS(trd_bundle_write("k", "*fp32", &t, 0, &data, &size), TRD_ERR_INVALID_ARGUMENT, "1 .. 64 targets");
    t.metadata = "{\"name\": 5}";
    TU_FAILS(trd_bundle_write("k", "*fp32", &t, 1, &data, &size), TRD_ERR_FORMAT, "metadata of bundle target 0");
}
END_TEST

/* A bundle of two variants (format version 2) whose manifest has `from` replaced by `to` (as long). */
static trd_status_t variants_edited(const char *from, const char *to, struct trd_kernel_src *src)
{
    static const char a[] = "//\n.version 8.7\n.target sm_90a\n// a\n", b[] = "//\n.version 8.7\n.target sm_90a\n// b\n";
    trd_bundle_target_t t[2] = {
        {.struct_size = sizeof t[0], .format = TRD_FORMAT_PTX, .arch = "sm90", .image = a, .image_size = sizeof a - 1},
        {.struct_size = sizeof t[1], .format = TRD_FORMAT_PTX, .arch = "sm90", .image = b, .image_size = sizeof b - 1},
    };
    trd_bundle_variant_t v[2] = {{.struct_size = sizeof v[0], .num_targets = 1, .targets = &t[0], .config = "BLOCK=64"},
                                 {.struct_size = sizeof v[1], .num_targets = 1, .targets = &t[1]}};
    void *data;
    uint64_t size;
    TU_OK(trd_bundle_write_variants("k", "x:*fp32", v, 2, &data, &size));
    ck_assert_int_eq(((uint8_t *)data)[8], 2);
    char *text = (char *)data, *at = NULL;
    for (uint64_t i = 0; from && i + strlen(from) <= size && !at; i++)
        if (!memcmp(text + i, from, strlen(from)))
            at = text + i;
    ck_assert_msg(!from || at, "the manifest has no %s", from);
    if (at)
        memcpy(at, to, strlen(to));
    trd_status_t st = trd_bundle_read(data, size, "v.trdb", src);
    trd_free(data);
    return st;
}

START_TEST(bundle_variants_read)
{
    struct trd_kernel_src src;
    TU_OK(variants_edited(NULL, NULL, &src));
    ck_assert_uint_eq(src.nvariants, 2);
    ck_assert_uint_eq(src.ntargets, 2);
    ck_assert_uint_eq(src.targets[0].variant, 0);
    ck_assert_uint_eq(src.targets[1].variant, 1);
    ck_assert_str_eq(src.configs[0], "BLOCK=64");
    ck_assert_ptr_null(src.configs[1]);
    ck_assert_mem_eq(src.targets[1].image + 31, "// b", 4);
    trd_kernel_src_free(&src);
    TU_FAILS(variants_edited("\"variant\":1", "\"variant\":7", &src), TRD_ERR_FORMAT,
             "v.trdb: target 1 needs 'variant', an integer 0 .. 1");
    TU_FAILS(variants_edited("\"variant\":1", "\"variant\":0", &src), TRD_ERR_FORMAT,
             "v.trdb: variant 1 has 0 targets; expected 1 .. 64");
    TU_FAILS(variants_edited("\"variants\":", "\"variantz\":", &src), TRD_ERR_FORMAT, "needs 'variants'");
    TU_FAILS(variants_edited("{\"config\":\"BLOCK=64\"}", "[\"config\",\"BLOCK=64\"]", &src), TRD_ERR_FORMAT,
             "variant 0 must be an object");
}
END_TEST

/* Launch dimensions rules: compiled against a signature and a config, evaluated on a launch's arguments. */
START_TEST(grid_rules)
{
    struct trd_signature sig;
    TU_OK(trd_signature_parse("a:*fp32,M:i32,N:u64,B:constexpr,x:fp32", "sig", &sig));
    struct trd_grid_rule r;
    TU_OK(trd_grid_rule_compile("max(cdiv(M, BM) * 2 - 1, 1) % 7, min(N, 3) + -1, (4)", &sig, "BM=16,num_warps=4",
                                "v", &r));
    trd_arg_t args[4] = {trd_arg_ptr(NULL), trd_arg_int(100), trd_arg_uint(10), trd_arg_float(1)};
    uint32_t g[3];
    TU_OK(trd_grid_rule_eval(&r, args, 4, "k", g));
    ck_assert(g[0] == 6 && g[1] == 2 && g[2] == 4); /* cdiv(100,16)=7 -> 13 % 7 = 6; min(10,3)-1 = 2 */
    TU_OK(trd_grid_rule_compile("M", &sig, NULL, "v", &r));
    TU_OK(trd_grid_rule_eval(&r, args, 4, "k", g));
    ck_assert(g[0] == 100 && g[1] == 1 && g[2] == 1);
    TU_FAILS(trd_grid_rule_compile("cdiv(M,BN)", &sig, "BM=16", "v", &r), TRD_ERR_FORMAT, "neither an integer");
    TU_FAILS(trd_grid_rule_compile("x", &sig, NULL, "v", &r), TRD_ERR_FORMAT, "not an integer scalar");
    TU_FAILS(trd_grid_rule_compile("B", &sig, NULL, "v", &r), TRD_ERR_FORMAT, "not an integer scalar");
    TU_FAILS(trd_grid_rule_compile("M +", &sig, NULL, "v", &r), TRD_ERR_FORMAT, "expected a number");
    TU_FAILS(trd_grid_rule_compile("pow(M, 2)", &sig, NULL, "v", &r), TRD_ERR_FORMAT, "unknown function");
    TU_FAILS(trd_grid_rule_compile("cdiv(M)", &sig, NULL, "v", &r), TRD_ERR_FORMAT, "expected ','");
    TU_FAILS(trd_grid_rule_compile("1,1,1,1", &sig, NULL, "v", &r), TRD_ERR_FORMAT, "more than 3 dimensions");
    TU_FAILS(trd_grid_rule_compile("M M", &sig, NULL, "v", &r), TRD_ERR_FORMAT, "expected ',' or the end");
    TU_FAILS(trd_grid_rule_compile("", &sig, NULL, "v", &r), TRD_ERR_FORMAT, "expected a number");
    char longer[400] = "1";
    for (int i = 0; i < 70; i++)
        strcat(longer, "+1");
    TU_FAILS(trd_grid_rule_compile(longer, &sig, NULL, "v", &r), TRD_ERR_FORMAT, "longer than 64 steps");
    /* a bundle's rule nested past any real one: refused, not a stack overflow (the parser recurses) */
    size_t deep_n = 200000;
    char *deep = malloc(2 * deep_n + 2);
    memset(deep, '(', deep_n);
    deep[deep_n] = '1';
    memset(deep + deep_n + 1, ')', deep_n);
    deep[2 * deep_n + 1] = '\0';
    TU_FAILS(trd_grid_rule_compile(deep, &sig, NULL, "v", &r), TRD_ERR_FORMAT, "nested deeper than 32");
    memset(deep, '-', deep_n);
    strcpy(deep + deep_n, "1");
    TU_FAILS(trd_grid_rule_compile(deep, &sig, NULL, "v", &r), TRD_ERR_FORMAT, "nested deeper than 32");
    free(deep);
    TU_OK(trd_grid_rule_compile("((((((((((((((((((((((((((((((M))))))))))))))))))))))))))))))", &sig, NULL, "v", &r));
    /* numbers past 64 bits: refused, where strtoll would have clamped them */
    TU_FAILS(trd_grid_rule_compile("min(99999999999999999999, M)", &sig, NULL, "v", &r), TRD_ERR_FORMAT,
             "a number past 64 bits");
    TU_FAILS(trd_grid_rule_compile("cdiv(M, BM)", &sig, "BM=99999999999999999999", "v", &r), TRD_ERR_FORMAT,
             "value of a name it reads is past 64 bits");
    TU_OK(trd_grid_rule_compile("9223372036854775807 - M", &sig, NULL, "v", &r));
    /* INT64_MIN divided by -1 fails (it trapped: SIGFPE), negated fails (it wrapped), and bounds min and max */
    static const char *const past[] = {"(-9223372036854775807 - 1) / -1", "(-9223372036854775807 - 1) % -1",
                                       "cdiv(-9223372036854775807 - 1, -1)", "-(-9223372036854775807 - 1)"};
    for (size_t i = 0; i < TU_LEN(past); i++) {
        TU_OK(trd_grid_rule_compile(past[i], &sig, NULL, "v", &r));
        TU_FAILS(trd_grid_rule_eval(&r, args, 4, "k", g), TRD_ERR_INVALID_ARGUMENT, "overflows 64 bits");
    }
    TU_OK(trd_grid_rule_compile("max(min(-9223372036854775807 - 1, -1), 5), max(-9223372036854775807 - 1, -1) + 2",
                                &sig, NULL, "v", &r));
    TU_OK(trd_grid_rule_eval(&r, args, 4, "k", g));
    ck_assert(g[0] == 5 && g[1] == 1 && g[2] == 1);
    TU_OK(trd_grid_rule_compile("M / Z", &sig, "Z=0", "v", &r));
    TU_FAILS(trd_grid_rule_eval(&r, args, 4, "k", g), TRD_ERR_INVALID_ARGUMENT, "divides by zero");
    TU_OK(trd_grid_rule_compile("M * 4294967296", &sig, NULL, "v", &r));
    TU_FAILS(trd_grid_rule_eval(&r, args, 4, "k", g), TRD_ERR_INVALID_ARGUMENT, "programs along dimension 0");
    TU_OK(trd_grid_rule_compile("N * 4611686018427387904 * 4", &sig, NULL, "v", &r));
    TU_FAILS(trd_grid_rule_eval(&r, args, 4, "k", g), TRD_ERR_INVALID_ARGUMENT, "overflows 64 bits");
    TU_OK(trd_grid_rule_compile("M", &sig, NULL, "v", &r));
    TU_FAILS(trd_grid_rule_eval(&r, args, 1, "k", g), TRD_ERR_INVALID_ARGUMENT, "argument 1, which is not an integer");
    trd_signature_free(&sig);
}
END_TEST

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

START_TEST(bundle_corrupt)
{
    void *data;
    uint64_t size;
    make_bundle(&data, &size);
    uint8_t *b = malloc(size);
    struct trd_kernel_src src;
    /* one byte of an image changed: the checksum says so */
    memcpy(b, data, size);
    b[40] ^= 0x40;
    TU_FAILS(trd_bundle_read(b, size, "b.trdb", &src), TRD_ERR_FORMAT, "SHA-256 does not match");
    /* truncated */
    TU_FAILS(trd_bundle_read(data, size - 10, "b.trdb", &src), TRD_ERR_FORMAT, "b.trdb");
    TU_FAILS(trd_bundle_read(data, 20, "b.trdb", &src), TRD_ERR_FORMAT, "not a trident bundle");
    /* another version; version 2 needs its variants */
    memcpy(b, data, size);
    put32(b + 8, 3);
    TU_FAILS(trd_bundle_read(b, size, "b.trdb", &src), TRD_ERR_VERSION, "version 3 is not supported");
    put32(b + 8, 2);
    TU_FAILS(trd_bundle_read(b, size, "b.trdb", &src), TRD_ERR_FORMAT, "a version-2 bundle needs 'variants'");
    /* a manifest pointing past the end */
    memcpy(b, data, size);
    b[24] = 0xff;
    b[25] = 0xff;
    TU_FAILS(trd_bundle_read(b, size, "b.trdb", &src), TRD_ERR_FORMAT, "manifest range");
    /* random damage anywhere: an error or (rarely) a valid read, never a crash */
    uint64_t seed = 12345;
    for (int i = 0; i < 3000; i++) {
        memcpy(b, data, size);
        int flips = 1 + (int)(tu_rand(&seed) % 4);
        for (int f = 0; f < flips; f++)
            b[tu_rand(&seed) % size] = (uint8_t)tu_rand(&seed);
        uint64_t n = (tu_rand(&seed) % 8) ? size : tu_rand(&seed) % (size + 1);
        if (trd_bundle_read(b, n, "fuzz", &src) == TRD_OK)
            trd_kernel_src_free(&src);
    }
    free(b);
    trd_free(data);
}
END_TEST

/* ------------------------------------------------------ Triton cache */

START_TEST(triton_cache_entry)
{
    struct trd_kernel_src src;
    TU_OK(trd_triton_cache_read(tu_fixture("cuda", "add_fp32"), NULL, 1, &src));
    ck_assert_str_eq(src.name, "add_kernel");
    ck_assert_uint_eq(src.ntargets, 2);
    ck_assert_int_eq(src.targets[0].format, TRD_FORMAT_CUBIN);
    ck_assert_int_eq(src.targets[1].format, TRD_FORMAT_PTX);
    ck_assert_str_eq(src.targets[0].meta.arch, "sm90");
    ck_assert_str_eq(src.sig.canonical, "x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n_elements:i32");
    trd_kernel_src_free(&src);
    TU_OK(trd_triton_cache_read(tu_path("%s/scale_kernel.json", tu_fixture("cuda", "scale_ptx")), NULL, 1, &src));
    ck_assert_uint_eq(src.ntargets, 1);
    ck_assert_int_eq(src.targets[0].format, TRD_FORMAT_PTX);
    trd_kernel_src_free(&src);
    TU_OK(trd_triton_cache_read(tu_fixture("hip", "add_fp16"), "add_kernel", 1, &src));
    ck_assert_int_eq(src.targets[0].format, TRD_FORMAT_HSACO);
    ck_assert_str_eq(src.sig.canonical, "x_ptr:*fp16,y_ptr:*fp16,out_ptr:*fp16,n_elements:i32");
    trd_kernel_src_free(&src);
    TU_FAILS(trd_triton_cache_read(tu_fixture("cuda", "add_fp32"), "nope", 1, &src), TRD_ERR_NOT_FOUND, "has no nope.json");
    TU_FAILS(trd_triton_cache_read(tu_fixture("cuda", ""), NULL, 1, &src), TRD_ERR_NOT_FOUND, "holds no Triton kernel metadata");
    TU_FAILS(trd_triton_cache_read("/nonexistent/x.json", NULL, 1, &src), TRD_ERR_NOT_FOUND, "/nonexistent/x.json");
}
END_TEST

/* Copies files of the CUDA add_fp32 entry into dir. */
static void copy_fixture(const char *dir, const char *const *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *data;
        size_t len;
        TU_OK(trd_file_read(tu_path("%s/%s", tu_fixture("cuda", "add_fp32"), files[i]), 1 << 24, &data, &len));
        TU_OK(trd_file_write_atomic(tu_path("%s/%s", dir, files[i]), data, len, 0644));
        free(data);
    }
}

/* A copy of a fixture entry's metadata and one image (damaged by `damage`, NULL: as it is) in a new directory. */
static const char *entry_with(const char *backend, const char *variant, const char *image,
                              void (*damage)(char *data, size_t *len))
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/trd_damaged_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *files[] = {"add_kernel.json", image};
    for (size_t i = 0; i < TRD_ARRAY_SIZE(files); i++) {
        char *data;
        size_t len;
        TU_OK(trd_file_read(tu_path("%s/%s", tu_fixture(backend, variant), files[i]), 1 << 24, &data, &len));
        if (i == 1 && damage)
            damage(data, &len);
        TU_OK(trd_file_write_atomic(tu_path("%s/%s", dir, files[i]), data, len, 0644));
        free(data);
    }
    return dir;
}

static void entry_remove(const char *dir, const char *image)
{
    ck_assert_int_eq(unlink(tu_path("%s/add_kernel.json", dir)), 0);
    ck_assert_int_eq(unlink(tu_path("%s/%s", dir, image)), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}

static void halve(char *data, size_t *len)
{
    (void)data;
    *len /= 2;
}

static void misname(char *data, size_t *len)
{
    for (char *p = data; (p = memmem(p, *len - (size_t)(p - data), "add_kernel", 10)) != NULL; p++)
        p[0] = 'b'; /* "bdd_kernel": another kernel's image */
}

/* A damaged image in a Triton cache entry (truncated, or another kernel's) is refused naming the file and what
 * is wrong; it was taken (its ELF header, or the start of the PTX, is intact) and failed only at the device. */
START_TEST(triton_cache_damaged_images)
{
    static const struct {
        const char *backend, *variant, *image;
        void (*damage)(char *, size_t *);
        const char *why;
    } cases[] = {
        {"cuda", "add_fp32", "add_kernel.cubin", halve, "add_kernel.cubin' is damaged: truncated"},
        {"cuda", "add_fp32", "add_kernel.cubin", misname, "add_kernel.cubin' is damaged: it does not name the kernel"},
        {"cuda", "add_fp32", "add_kernel.ptx", halve, "add_kernel.ptx' is damaged: truncated: its braces"},
        {"cuda", "add_fp32", "add_kernel.ptx", misname, "add_kernel.ptx' is damaged: no .entry of the kernel"},
        {"hip", "add_fp16", "add_kernel.hsaco", halve, "add_kernel.hsaco' is damaged: truncated"},
    };
    struct trd_kernel_src src;
    for (size_t i = 0; i < TRD_ARRAY_SIZE(cases); i++) {
        const char *dir = entry_with(cases[i].backend, cases[i].variant, cases[i].image, NULL);
        TU_OK(trd_triton_cache_read(dir, NULL, 0, &src));
        trd_kernel_src_free(&src);
        entry_remove(dir, cases[i].image);
        dir = entry_with(cases[i].backend, cases[i].variant, cases[i].image, cases[i].damage);
        TU_FAILS(trd_triton_cache_read(dir, NULL, 0, &src), TRD_ERR_FORMAT, cases[i].why);
        entry_remove(dir, cases[i].image);
    }
}
END_TEST

/* A caller's explicit signature wins over the Triton IR beside the entry: the IR of a kernel taking a host tensor
 * descriptor has !tt.tensordesc parameters, which are not launch types (the launch passes an nvTmaDesc, shape and
 * strides), and is not read at all then. */
START_TEST(triton_cache_explicit_signature)
{
    char dir[] = "/tmp/trd_cache_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *files[] = {"add_kernel.json", "add_kernel.cubin"};
    copy_fixture(dir, files, TRD_ARRAY_SIZE(files));
    const char *ttir = "module {\n  tt.func public @add_kernel(%a: !tt.tensordesc<tensor<64x64xf16>> loc(\"a\"(#loc)), "
                       "%out: !tt.ptr<f16> loc(\"out\"(#loc))) attributes {noinline = false} {\n    tt.return\n  }\n}\n";
    TU_OK(trd_file_write_atomic(tu_path("%s/add_kernel.ttir", dir), ttir, strlen(ttir), 0644));
    struct trd_kernel_src src;
    TU_FAILS(trd_triton_cache_read(dir, NULL, 1, &src), TRD_ERR_FORMAT, "add_kernel.ttir");
    TU_OK(trd_triton_cache_read(dir, NULL, 0, &src));
    ck_assert_uint_eq(src.sig.count, 0);
    ck_assert_uint_eq(src.ntargets, 1);
    trd_kernel_src_free(&src);
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = dir};
    TU_FAILS(trd_kernel_create(rt, &d, &k), TRD_ERR_FORMAT, "add_kernel.ttir");
    d.signature = "a:nvTmaDesc,a_dim0:i32,a_dim1:i32,a_stride0:i64,a_stride1:i64,out:*fp16";
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_kernel_info_t info = {.struct_size = sizeof info};
    TU_OK(trd_kernel_get_info(k, &info));
    ck_assert_str_eq(info.signature, d.signature);
    ck_assert_uint_eq(info.num_params, 6);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
    for (size_t i = 0; i < TRD_ARRAY_SIZE(files); i++)
        ck_assert_int_eq(remove(tu_path("%s/%s", dir, files[i])), 0);
    ck_assert_int_eq(remove(tu_path("%s/add_kernel.ttir", dir)), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* An image file of an entry that cannot be read (a directory, a FIFO, a link loop, a character device, a dangling
 * link) is an error naming it: the entry loaded as PTX only, exit 0, instead. A FIFO is refused without waiting
 * for a writer, a device without reading it; an image that is simply absent stays optional. */
START_TEST(triton_cache_unreadable_image)
{
    const char *dir = tu_scratch_dir("cache_unreadable");
    const char *files[] = {"add_kernel.json", "add_kernel.ptx", "add_kernel.ttir"};
    copy_fixture(dir, files, TRD_ARRAY_SIZE(files));
    const char *cubin = tu_path("%s/add_kernel.cubin", dir);
    struct trd_kernel_src src;
    TU_OK(trd_triton_cache_read(dir, NULL, 1, &src)); /* no .cubin: the PTX alone */
    ck_assert_uint_eq(src.ntargets, 1);
    ck_assert_int_eq(src.targets[0].format, TRD_FORMAT_PTX);
    trd_kernel_src_free(&src);
    struct {
        const char *what, *needle;
    } cases[] = {{"directory", "is a directory"}, {"fifo", "is a FIFO"}, {"loop", "Too many levels of symbolic links"},
                 {"zero", "is a character device"}, {"dangling", "No such file"}};
    for (size_t i = 0; i < TRD_ARRAY_SIZE(cases); i++) {
        const char *w = cases[i].what;
        int made = !strcmp(w, "directory") ? mkdir(cubin, 0755)
                 : !strcmp(w, "fifo")      ? mkfifo(cubin, 0644)
                 : !strcmp(w, "loop")      ? symlink(cubin, cubin)
                 : !strcmp(w, "zero")      ? symlink("/dev/zero", cubin)
                                           : symlink(tu_path("%s/missing.cubin", dir), cubin);
        ck_assert_int_eq(made, 0);
        ck_assert_int_ne(trd_triton_cache_read(dir, NULL, 1, &src), TRD_OK);
        const char *msg = trd_error_message();
        ck_assert_msg(strstr(msg, cubin) && strstr(msg, cases[i].needle), "%s: %s", w, msg);
        ck_assert_int_eq(!strcmp(w, "directory") ? rmdir(cubin) : unlink(cubin), 0);
    }
    /* the Triton IR the signature comes from, likewise */
    const char *ttir = tu_path("%s/add_kernel.ttir", dir);
    ck_assert_int_eq(unlink(ttir), 0);
    ck_assert_int_eq(mkfifo(ttir, 0644), 0);
    ck_assert_int_ne(trd_triton_cache_read(dir, NULL, 1, &src), TRD_OK);
    ck_assert_msg(strstr(trd_error_message(), ttir) && strstr(trd_error_message(), "is a FIFO"), "%s",
                  trd_error_message());
    ck_assert_int_eq(unlink(ttir), 0);
    /* a name given whose metadata is not a file says what it is, not that there is none */
    ck_assert_int_eq(mkdir(tu_path("%s/other.json", dir), 0755), 0);
    ck_assert_int_ne(trd_triton_cache_read(dir, "other", 1, &src), TRD_OK);
    ck_assert_msg(strstr(trd_error_message(), "other.json' is a directory"), "%s", trd_error_message());
}
END_TEST

START_TEST(formats_and_targets)
{
    char *text;
    size_t len;
    TU_OK(trd_file_read(tu_path("%s/add_kernel.cubin", tu_fixture("cuda", "add_fp32")), 1 << 24, &text, &len));
    ck_assert_int_eq(trd_format_sniff(text, len, NULL), TRD_FORMAT_CUBIN);
    free(text);
    TU_OK(trd_file_read(tu_path("%s/add_kernel.ptx", tu_fixture("cuda", "add_fp32")), 1 << 24, &text, &len));
    ck_assert_int_eq(trd_format_sniff(text, len, NULL), TRD_FORMAT_PTX);
    free(text);
    TU_OK(trd_file_read(tu_path("%s/add_kernel.hsaco", tu_fixture("hip", "add_fp32")), 1 << 24, &text, &len));
    ck_assert_int_eq(trd_format_sniff(text, len, NULL), TRD_FORMAT_HSACO);
    free(text);
    TU_OK(trd_file_read(tu_host_kernel("add_kernel"), 1 << 24, &text, &len));
    ck_assert_int_eq(trd_format_sniff(text, len, NULL), TRD_FORMAT_HOST_SO);
    free(text);
    ck_assert_int_eq(trd_format_sniff("hello world", 11, NULL), TRD_FORMAT_UNKNOWN);
    ck_assert_int_eq(trd_format_sniff("\x03\x02\x23\x07xxxx", 8, NULL), TRD_FORMAT_SPIRV);

    struct trd_target t;
    memset(&t, 0, sizeof t);
    trd_device_props_t sm90 = {.backend = "cuda", .arch = "sm90"}, sm80 = {.backend = "cuda", .arch = "sm80"},
                       sm86 = {.backend = "cuda", .arch = "sm86"}, sm100 = {.backend = "cuda", .arch = "sm100"},
                       gfx = {.backend = "hip", .arch = "gfx942"};
    t.meta.backend = "cuda";
    t.meta.arch = "sm90";
    t.format = TRD_FORMAT_CUBIN;
    ck_assert_int_eq(trd_target_rank(&t, &sm90), 4);
    ck_assert_int_eq(trd_target_rank(&t, &sm80), 0);
    ck_assert_int_eq(trd_target_rank(&t, &sm100), 0); /* sm_90a code runs on sm90 only */
    ck_assert_int_eq(trd_target_rank(&t, &gfx), 0);
    t.format = TRD_FORMAT_PTX;
    ck_assert_int_eq(trd_target_rank(&t, &sm90), 2);
    ck_assert_int_eq(trd_target_rank(&t, &sm100), 0);
    t.meta.arch = "sm80";
    t.format = TRD_FORMAT_CUBIN;
    ck_assert_int_eq(trd_target_rank(&t, &sm86), 3);
    ck_assert_int_eq(trd_target_rank(&t, &sm90), 0);
    t.format = TRD_FORMAT_PTX;
    ck_assert_int_eq(trd_target_rank(&t, &sm90), 2);
    t.meta.backend = "hip";
    t.meta.arch = "gfx942";
    t.format = TRD_FORMAT_HSACO;
    ck_assert_int_eq(trd_target_rank(&t, &gfx), 4);
    t.meta.arch = "gfx90a";
    ck_assert_int_eq(trd_target_rank(&t, &gfx), 0);
}
END_TEST

/* ------------------------------------------------------ conversions */

START_TEST(half_and_bf16)
{
    /* expected bits computed with numpy.float16 and ml_dtypes.bfloat16 */
    struct {
        double v;
        uint16_t h, b;
    } cases[] = {
        {1.0, 0x3c00, 0x3f80},       {-2.5, 0xc100, 0xc020},     {0.1, 0x2e66, 0x3dcd},
        {1.0 / 3.0, 0x3555, 0x3eab}, {3.14159, 0x4248, 0x4049},   {1e-40, 0x0000, 0x0001},
        {65520.0, 0x7c00, 0x4780},   {2.9802322387695312e-08, 0x0000, 0x3300},
        {4.470348358154297e-08, 0x0001, 0x3340}, {6.109476089477539e-05, 0x0401, 0x3880},
        {65504.0, 0x7bff, 0x4780},   {0.0, 0x0000, 0x0000},      {-0.0, 0x8000, 0x8000},
    };
    for (size_t i = 0; i < TRD_ARRAY_SIZE(cases); i++) {
        ck_assert_msg(trd_float_to_half(cases[i].v) == cases[i].h, "half(%g) = 0x%04x, expected 0x%04x", cases[i].v,
                      trd_float_to_half(cases[i].v), cases[i].h);
        ck_assert_msg(trd_float_to_bf16(cases[i].v) == cases[i].b, "bf16(%g) = 0x%04x, expected 0x%04x", cases[i].v,
                      trd_float_to_bf16(cases[i].v), cases[i].b);
    }
    ck_assert_uint_eq(trd_float_to_half(1.0 / 0.0), 0x7c00);
    ck_assert_uint_eq(trd_float_to_half(0.0 / 0.0) & 0x7c00, 0x7c00);
    ck_assert_uint_ne(trd_float_to_half(0.0 / 0.0) & 0x3ff, 0);
}
END_TEST

/* The public conversions (TRIDENT_1.6) are the launch's: every fp16 and bf16 value reads back exactly and writes
 * back to its own bits, random doubles write as trd_float_to_half / _bf16 round them, fp32 and fp64 as C does. */
START_TEST(float_encode_decode)
{
    for (uint32_t bits = 0; bits <= 0xffff; bits++) {
        uint16_t in = (uint16_t)bits, back;
        double v;
        TU_OK(trd_float_decode("fp16", &in, &v));
        TU_OK(trd_float_encode("fp16", v, &back));
        ck_assert_msg(isnan(v) ? (back & 0x7c00) == 0x7c00 && (back & 0x3ff) : back == in, "fp16 0x%04x: %g, 0x%04x",
                      in, v, back);
        TU_OK(trd_float_decode("bf16", &in, &v));
        TU_OK(trd_float_encode("bf16", v, &back));
        ck_assert_msg(isnan(v) ? (back & 0x7f80) == 0x7f80 && (back & 0x7f) : back == in, "bf16 0x%04x: %g, 0x%04x",
                      in, v, back);
    }
    uint16_t h;
    double v;
    h = 0x0001;
    TU_OK(trd_float_decode("f16", &h, &v));
    ck_assert(v == ldexp(1, -24));
    h = 0x7bff;
    TU_OK(trd_float_decode("fp16", &h, &v));
    ck_assert(v == 65504.0);
    h = 0xc020;
    TU_OK(trd_float_decode("bf16", &h, &v));
    ck_assert(v == -2.5);
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < 100000; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        double d = ldexp((double)(seed >> 11), -53) * 2e5 - 1e5; /* both signs, past fp16's range */
        uint16_t hb, bb;
        float f;
        double g;
        TU_OK(trd_float_encode("fp16", d, &hb));
        TU_OK(trd_float_encode("bf16", d, &bb));
        TU_OK(trd_float_encode("fp32", d, &f));
        TU_OK(trd_float_encode("fp64", d, &g));
        ck_assert_uint_eq(hb, trd_float_to_half(d));
        ck_assert_uint_eq(bb, trd_float_to_bf16(d));
        ck_assert(f == (float)d && g == d);
    }
    TU_FAILS(trd_float_encode("i32", 1.0, &h), TRD_ERR_INVALID_ARGUMENT,
             "trd_float_encode: type 'i32' is not a float type (fp16, bf16, fp32, fp64)");
    TU_FAILS(trd_float_decode("fp8e5", &h, &v), TRD_ERR_INVALID_ARGUMENT, "type 'fp8e5' is not a float type");
    TU_FAILS(trd_float_encode(NULL, 1.0, &h), TRD_ERR_INVALID_ARGUMENT, "type NULL is not a float type");
    TU_FAILS(trd_float_encode("fp16", 1.0, NULL), TRD_ERR_INVALID_ARGUMENT, "out is NULL");
    TU_FAILS(trd_float_decode("fp16", &h, NULL), TRD_ERR_INVALID_ARGUMENT, "value is NULL");
}
END_TEST

START_TEST(sha256_vectors)
{
    struct {
        const char *in, *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    };
    for (size_t i = 0; i < TRD_ARRAY_SIZE(v); i++) {
        uint8_t d[32];
        char hex[65];
        trd_sha256(v[i].in, strlen(v[i].in), d);
        trd_hex(d, 32, hex);
        ck_assert_str_eq(hex, v[i].hex);
    }
    char *m = malloc(1000000);
    memset(m, 'a', 1000000);
    uint8_t d[32];
    char hex[65];
    trd_sha256(m, 1000000, d);
    trd_hex(d, 32, hex);
    ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(m);
}
END_TEST

/* ------------------------------------------------- argument packing */

START_TEST(args_packing)
{
    trd_kernel_t k;
    memset(&k, 0, sizeof k);
    k.src.name = "pack";
    TU_OK(trd_signature_parse("p:*fp32,a:i8,b:i16,c:i32,d:i64,e:u32,f:u64,g:fp16,h:bf16,i:fp32,j:fp64,l:i1,C:constexpr,m:fp8e5",
                              "sig", &k.src.sig));
    trd_device_t dev;
    memset(&dev, 0, sizeof dev);
    dev.uri = "test:0";
    float target;
    trd_arg_t a[13] = {trd_arg_ptr(&target), trd_arg_int(-128), trd_arg_int(-300), trd_arg_int(-70000),
                       trd_arg_int(-5000000000LL), trd_arg_uint(4000000000u), trd_arg_uint(18000000000000000000ull),
                       trd_arg_float(1.0 / 3.0), trd_arg_float(0.1), trd_arg_float(2.5), trd_arg_float(0.1),
                       trd_arg_int(1), trd_arg_bits(0x7b)};
    uint64_t storage[16];
    void *params[20];
    uint32_t sizes[20];
    TU_OK(trd_args_pack(&k, &dev, a, 13, storage, params, sizes));
    uint32_t want_sizes[13] = {8, 1, 2, 4, 8, 4, 8, 2, 2, 4, 8, 1, 1};
    for (int i = 0; i < 13; i++)
        ck_assert_uint_eq(sizes[i], want_sizes[i]);
    void *p;
    memcpy(&p, params[0], 8);
    ck_assert_ptr_eq(p, &target);
    ck_assert_int_eq(*(int8_t *)params[1], -128);
    ck_assert_int_eq(*(int16_t *)params[2], -300);
    ck_assert_int_eq(*(int32_t *)params[3], -70000);
    ck_assert_int_eq(*(int64_t *)params[4], -5000000000LL);
    ck_assert_uint_eq(*(uint32_t *)params[5], 4000000000u);
    ck_assert_uint_eq(*(uint64_t *)params[6], 18000000000000000000ull);
    ck_assert_uint_eq(*(uint16_t *)params[7], 0x3555);
    ck_assert_uint_eq(*(uint16_t *)params[8], 0x3dcd);
    ck_assert(*(float *)params[9] == 2.5f);
    ck_assert(*(double *)params[10] == 0.1);
    ck_assert_uint_eq(*(uint8_t *)params[11], 1);
    ck_assert_uint_eq(*(uint8_t *)params[12], 0x7b);

    struct {
        int index;
        trd_arg_t arg;
        const char *needle;
    } bad[] = {
        {0, {.kind = TRD_ARG_INT}, "argument 0 'p' (*fp32): expects a pointer or a buffer, got an integer"},
        {1, {.kind = TRD_ARG_INT, .value.i = 128}, "argument 1 'a' (i8): the value 128 is out of range (-128 .. 127)"},
        {3, {.kind = TRD_ARG_FLOAT, .value.f = 1.0}, "argument 3 'c' (i32): expects an integer, got a float"},
        {5, {.kind = TRD_ARG_INT, .value.i = -1}, "argument 5 'e' (u32): the value -1 is out of range (0 .. 4294967295)"},
        {7, {.kind = TRD_ARG_FLOAT, .value.f = 70000.0}, "argument 7 'g' (fp16): the value 70000 overflows fp16"},
        {7, {.kind = TRD_ARG_BITS, .value.bits = 0x10000}, "has more than 2 bytes"},
        {9, {.kind = TRD_ARG_PTR}, "argument 9 'i' (fp32): expects a float, got a pointer"},
        {11, {.kind = TRD_ARG_INT, .value.i = 2}, "argument 11 'l' (i1): the value 2 is out of range (0 .. 1)"},
        {12, {.kind = TRD_ARG_FLOAT, .value.f = 1.0}, "fp8 scalars are passed as raw bits"},
        {0, {.kind = 99}, "got an unknown kind"},
    };
    for (size_t i = 0; i < TRD_ARRAY_SIZE(bad); i++) {
        trd_arg_t copy[13];
        memcpy(copy, a, sizeof copy);
        copy[bad[i].index] = bad[i].arg;
        TU_FAILS(trd_args_pack(&k, &dev, copy, 13, storage, params, sizes), TRD_ERR_INVALID_ARGUMENT, bad[i].needle);
        ck_assert_ptr_nonnull(strstr(trd_error_message(), "kernel 'pack'"));
    }
    TU_FAILS(trd_args_pack(&k, &dev, a, 12, storage, params, sizes), TRD_ERR_INVALID_ARGUMENT,
             "kernel 'pack' takes 13 arguments");
    /* a buffer of another device */
    trd_device_t other;
    memset(&other, 0, sizeof other);
    other.uri = "test:1";
    trd_buffer_t buf = {.dev = &other, .ptr = &target, .size = 4};
    trd_arg_t copy[13];
    memcpy(copy, a, sizeof copy);
    copy[0] = trd_arg_buffer(&buf);
    TU_FAILS(trd_args_pack(&k, &dev, copy, 13, storage, params, sizes), TRD_ERR_INVALID_ARGUMENT,
             "the buffer is on test:1, the launch on test:0");
    trd_signature_free(&k.src.sig);
}
END_TEST

static trd_status_t fake_encode(void *device, const trd_tensor_map_desc_t *desc, void *out)
{
    (void)device, (void)desc, (void)out;
    return TRD_OK;
}

static trd_status_t fake_capturing(void *stream, int32_t *capturing)
{
    (void)stream, (void)capturing;
    return TRD_OK;
}

/* The optional ops in their order: a table as long as version 1's has neither, one that ends after
 * tensor_map_encode (a driver built before stream_capturing) has that one only, a whole one both. */
START_TEST(optional_driver_ops)
{
    trd_driver_ops_t ops = {.struct_size = sizeof ops, .tensor_map_encode = fake_encode,
                            .stream_capturing = fake_capturing};
    ck_assert(TRD_OPS_OPTIONAL(&ops, tensor_map_encode) == fake_encode);
    ck_assert(TRD_OPS_OPTIONAL(&ops, stream_capturing) == fake_capturing);
    ops.struct_size = offsetof(trd_driver_ops_t, stream_capturing);
    ck_assert(TRD_OPS_OPTIONAL(&ops, tensor_map_encode) == fake_encode);
    ck_assert(TRD_OPS_OPTIONAL(&ops, stream_capturing) == NULL);
    ops.struct_size = offsetof(trd_driver_ops_t, tensor_map_encode);
    ck_assert(TRD_OPS_OPTIONAL(&ops, tensor_map_encode) == NULL);
    ck_assert(TRD_OPS_OPTIONAL(&ops, stream_capturing) == NULL);
}
END_TEST

/* Writers of one path at the same time, threads of one process (two devices' autotuned calls keeping their
 * choices): each write succeeds, the file ends as one writer's whole content, no temporary is left. */
#define WRITERS 8
#define WRITE_BYTES (256u << 10)

struct writer {
    const char *path;
    unsigned char *data;
    trd_status_t st;
};

static void *write_file(void *p)
{
    struct writer *w = p;
    for (int i = 0; i < 20 && w->st == TRD_OK; i++)
        w->st = trd_file_write_atomic(w->path, w->data, WRITE_BYTES, 0600);
    return NULL;
}

/* trd_runtime_cache_dir: [runtime] cache_dir as configured, else the XDG default, also with the JIT cache off
 * (trident.jax keeps its caches there) */
START_TEST(runtime_cache_dir)
{
    const char *dir = NULL;
    trd_runtime_t *rt = tu_runtime(NULL, "[runtime]\ncache_dir = /tmp/trd-cache-test\njit_cache = false\n");
    TU_OK(trd_runtime_cache_dir(rt, &dir));
    ck_assert_str_eq(dir, "/tmp/trd-cache-test");
    TU_FAILS(trd_runtime_cache_dir(rt, NULL), TRD_ERR_INVALID_ARGUMENT, "NULL argument");
    trd_runtime_destroy(rt);
    const char *xdg = getenv("XDG_CACHE_HOME");
    char *saved = xdg ? strdup(xdg) : NULL;
    setenv("XDG_CACHE_HOME", "/tmp/trd-xdg", 1);
    rt = tu_runtime(NULL, NULL);
    TU_OK(trd_runtime_cache_dir(rt, &dir));
    ck_assert_str_eq(dir, "/tmp/trd-xdg/trident");
    trd_runtime_destroy(rt);
    if (saved)
        setenv("XDG_CACHE_HOME", saved, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    free(saved);
}
END_TEST

START_TEST(file_write_atomic_concurrent)
{
    char dir[] = "/tmp/trd_write_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char *path = trd_asprintf("%s/choice.json", dir);
    struct writer w[WRITERS];
    pthread_t th[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        w[i] = (struct writer){.path = path, .data = malloc(WRITE_BYTES)};
        ck_assert_ptr_nonnull(w[i].data);
        memset(w[i].data, 'a' + i, WRITE_BYTES);
        ck_assert_int_eq(pthread_create(&th[i], NULL, write_file, &w[i]), 0);
    }
    for (int i = 0; i < WRITERS; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        ck_assert_msg(w[i].st == TRD_OK, "writer %d: %s", i, trd_error_message());
    }
    char *data;
    size_t len;
    TU_OK(trd_file_read(path, 1 << 20, &data, &len));
    ck_assert_uint_eq(len, WRITE_BYTES);
    int whose = data[0] - 'a';
    ck_assert_int_ge(whose, 0);
    ck_assert_int_lt(whose, WRITERS);
    ck_assert_int_eq(memcmp(data, w[whose].data, WRITE_BYTES), 0);
    free(data);
    for (int i = 0; i < WRITERS; i++)
        free(w[i].data);
    ck_assert_int_eq(remove(path), 0);
    ck_assert_int_eq(rmdir(dir), 0); /* fails if a temporary was left */
    free(path);
}
END_TEST

/* ------------------------------------------- input reliability (signatures, grids, bundle files) */

/* A bundle of the host kernel examples/host/<name>.so with that signature (trd_free it). */
static void *host_bundle(const char *name, const char *signature, uint64_t *size)
{
    char *so;
    size_t len;
    TU_OK(trd_file_read(tu_host_kernel(name), 1 << 24, &so, &len));
    trd_bundle_target_t t = {.struct_size = sizeof t, .format = TRD_FORMAT_HOST_SO, .arch = "", .image = so,
                             .image_size = len};
    void *data;
    TU_OK(trd_bundle_write(name, signature, &t, 1, &data, size));
    free(so);
    return data;
}

/* A kernel without parameters: its empty signature is a terminated "" (M_PERTURB fills new heap bytes, so an
 * unterminated one shows), through parsing, a bundle and the kernel's info, and it launches on the host, every
 * program once (the kernel reports itself on stdout, read here through a pipe). */
START_TEST(signature_empty_zero_parameters)
{
    mallopt(M_PERTURB, 0x55);
    struct trd_signature s;
    const char *empties[] = {"", "  \t"};
    for (size_t i = 0; i < TU_LEN(empties); i++) {
        TU_OK(trd_signature_parse(empties[i], "empty", &s));
        ck_assert_uint_eq(s.count, 0);
        ck_assert_uint_eq(s.num_params, 0);
        ck_assert_str_eq(s.canonical, "");
        trd_signature_free(&s);
    }
    const char *ir = "tt.func public @z() attributes {noinline = false} {";
    TU_OK(trd_signature_from_ttir(ir, strlen(ir), "z", "ttir", &s));
    ck_assert_str_eq(s.canonical, "");
    trd_signature_free(&s);

    uint64_t size;
    void *data = host_bundle("noparams_kernel", "", &size);
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .data = data, .size = size};
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_free(data);
    trd_kernel_info_t info = {.struct_size = sizeof info};
    TU_OK(trd_kernel_get_info(k, &info));
    ck_assert_str_eq(info.signature, "");
    ck_assert_uint_eq(info.num_params, 0);
    mallopt(M_PERTURB, 0);

    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "host:0", &dev));
    trd_stream_t *st;
    TU_OK(trd_stream_create(dev, &st));
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(stdout);
    int saved = dup(1);
    ck_assert_int_eq(dup2(fds[1], 1), 1);
    trd_launch_t l = {.struct_size = sizeof l, .grid = {2, 3, 2}, .num_args = 0, .args = NULL, .stream = st};
    trd_status_t launched = trd_kernel_launch(k, &l);
    trd_status_t synced = trd_stream_synchronize(st);
    ck_assert_int_eq(dup2(saved, 1), 1);
    close(saved);
    close(fds[1]);
    char out[4096];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof out - 1 && (r = read(fds[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    ck_assert_msg(launched == TRD_OK && synced == TRD_OK, "%s", trd_error_message());
    for (uint32_t z = 0; z < 2; z++)
        for (uint32_t y = 0; y < 3; y++)
            for (uint32_t x = 0; x < 2; x++) {
                char line[96];
                snprintf(line, sizeof line, "noparams_kernel program %u,%u,%u of 2,3,2\n", x, y, z);
                char *at = strstr(out, line);
                ck_assert_msg(at && !strstr(at + 1, line), "program %u,%u,%u ran %s: %s", x, y, z, at ? "twice" : "never",
                              out);
            }
    ck_assert_uint_eq(n, 12 * strlen("noparams_kernel program 0,0,0 of 2,3,2\n"));
    trd_stream_destroy(st);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

/* Pointers to pointers keep their pointee (Triton's str_to_ty nests them, "*k" included), up to
 * TRD_MAX_PTR_DEPTH; deeper ones are refused with the input and the entry named, without recursion (65000
 * levels fit the 65536-character limit). */
START_TEST(signature_deep_pointers)
{
    struct trd_signature s;
    TU_OK(trd_signature_parse("pp:**fp32,*k*i8,**kbf16,n:i32", "sig", &s));
    ck_assert_str_eq(s.canonical, "pp:**fp32,**i8,**bf16,n:i32");
    ck_assert_uint_eq(s.num_params, 4);
    ck_assert_int_eq(s.params[0].type, TRD_T_PTR);
    ck_assert_int_eq(s.params[0].elem, TRD_T_PTR);
    ck_assert_int_eq(s.params[0].base, TRD_T_FP32);
    ck_assert_uint_eq(s.params[0].depth, 2);
    ck_assert_uint_eq(s.params[0].size, 8);
    ck_assert_uint_eq(s.params[3].depth, 0);
    trd_signature_free(&s);

    char *text = malloc(70000);
    ck_assert_ptr_nonnull(text);
    const size_t depths[] = {TRD_MAX_PTR_DEPTH, TRD_MAX_PTR_DEPTH + 1, 65000};
    for (size_t i = 0; i < TU_LEN(depths); i++) {
        memcpy(text, "n:i32,p:", 8);
        memset(text + 8, '*', depths[i]);
        strcpy(text + 8 + depths[i], "fp16");
        trd_status_t st = trd_signature_parse(text, "signature of kernel 'deep'", &s);
        if (depths[i] <= TRD_MAX_PTR_DEPTH) {
            ck_assert_msg(st == TRD_OK, "%s", trd_error_message());
            ck_assert_uint_eq(s.params[1].depth, depths[i]);
            ck_assert_int_eq(s.params[1].base, TRD_T_FP16);
            ck_assert_str_eq(s.canonical, text);
            trd_signature_free(&s);
        } else {
            char want[128];
            snprintf(want, sizeof want, "signature of kernel 'deep': entry 1 'p:***");
            ck_assert_int_eq(st, TRD_ERR_LIMIT);
            ck_assert_msg(strstr(trd_error_message(), want), "%s", trd_error_message());
            snprintf(want, sizeof want, "is a pointer %zu levels deep, more than %d", depths[i], TRD_MAX_PTR_DEPTH);
            ck_assert_msg(strstr(trd_error_message(), want), "%s", trd_error_message());
        }
    }
    free(text);
    TU_FAILS(trd_signature_parse("**constexpr", "sig", &s), TRD_ERR_FORMAT, "entry 0 '**constexpr' is not a Triton type");
    TU_FAILS(trd_signature_parse("*k", "sig", &s), TRD_ERR_FORMAT, "not a Triton type");

    /* Triton IR spells them nested, each level with an optional address space */
    const char *ir = "tt.func public @k(%pp: !tt.ptr<!tt.ptr<f32>> loc(\"pp\"(#loc)), %q: !tt.ptr< !tt.ptr<!tt.ptr<i8, 1> >, 1 >, "
                     "%arg2: i32 loc(\"1n\"(#loc)))";
    TU_OK(trd_signature_from_ttir(ir, strlen(ir), "k", "ttir", &s));
    ck_assert_str_eq(s.canonical, "pp:**fp32,q:***i8,i32"); /* "1n" is no identifier: not a name */
    trd_signature_free(&s);
    const char *bad[] = {"tt.func public @k(%a: !tt.ptr<!tt.ptr<f32>)", "tt.func public @k(%a: !tt.ptr<f32, >)",
                         "tt.func public @k(%a: !tt.ptr<!tt.ptr<tensor<4xf32>>>)"};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        TU_FAILS(trd_signature_from_ttir(bad[i], strlen(bad[i]), "k", "ttir", &s), TRD_ERR_FORMAT, "ttir");
    struct trd_str deep;
    trd_str_init(&deep);
    trd_str_append(&deep, "tt.func public @k(%a: ");
    for (int i = 0; i <= TRD_MAX_PTR_DEPTH; i++)
        trd_str_append(&deep, "!tt.ptr<");
    trd_str_append(&deep, "f32");
    for (int i = 0; i <= TRD_MAX_PTR_DEPTH; i++)
        trd_str_append(&deep, ">");
    trd_str_append(&deep, ")");
    TU_FAILS(trd_signature_from_ttir(deep.buf, deep.len, "k", "ttir", &s), TRD_ERR_FORMAT, "more than 1000 levels");
    trd_str_free(&deep);
}
END_TEST

/* A signature given for a kernel with its own must agree with it: another type, another count or another name is
 * an error naming both; the other signedness of an integer (the IR is signless) is taken, with the kernel's names,
 * and launches right. */
START_TEST(signature_given_contradicts)
{
    uint64_t size;
    void *data = host_bundle("add_kernel", "x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n_elements:i32", &size);
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .data = data, .size = size, .signature = "i64,i64,i64,i32"};
    TU_FAILS(trd_kernel_create(rt, &d, &k), TRD_ERR_INVALID_ARGUMENT,
             "kernel 'add_kernel': the signature given (i64,i64,i64,i32) contradicts the kernel's own "
             "(x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n_elements:i32): launch parameter 0 is i64 in the one given, *fp32");
    d.signature = "*fp32,*fp32,**fp32,i32";
    TU_FAILS(trd_kernel_create(rt, &d, &k), TRD_ERR_INVALID_ARGUMENT, "launch parameter 2 is **fp32 in the one given");
    d.signature = "*fp32,*fp32,*fp32";
    TU_FAILS(trd_kernel_create(rt, &d, &k), TRD_ERR_INVALID_ARGUMENT, "has 3 launch parameters, the kernel's own");
    d.signature = "a:*fp32,*fp32,*fp32,i32";
    TU_FAILS(trd_kernel_create(rt, &d, &k), TRD_ERR_INVALID_ARGUMENT, "is named 'a' in the one given, 'x_ptr'");
    d.signature = "*fp32,*fp32,*fp32,n_elements:u32,BLOCK:constexpr";
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_kernel_info_t info = {.struct_size = sizeof info};
    TU_OK(trd_kernel_get_info(k, &info));
    ck_assert_str_eq(info.signature, "x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n_elements:u32,BLOCK:constexpr");
    trd_free(data);

    enum { N = 3000 };
    float x[N], y[N], o[N];
    tu_fill_f32(x, N, 21);
    tu_fill_f32(y, N, 22);
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "host:0", &dev));
    trd_buffer_t *bx, *by, *bo;
    TU_OK(trd_buffer_alloc(dev, sizeof x, &bx));
    TU_OK(trd_buffer_alloc(dev, sizeof y, &by));
    TU_OK(trd_buffer_alloc(dev, sizeof o, &bo));
    TU_OK(trd_buffer_write(bx, 0, x, sizeof x, NULL));
    TU_OK(trd_buffer_write(by, 0, y, sizeof y, NULL));
    trd_arg_t args[] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_uint(N)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {3, 1, 1}, .num_args = 4, .args = args, .device = dev};
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_buffer_read(bo, 0, o, sizeof o, NULL));
    for (int i = 0; i < N; i++)
        ck_assert_msg(o[i] == x[i] + y[i], "out[%d]", i);
    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    trd_kernel_destroy(k);

    struct trd_signature own, given, merged;
    TU_OK(trd_signature_parse("a:*fp32,n:i64", "own", &own));
    TU_OK(trd_signature_parse("C:constexpr,*fp32,m:u64", "given", &given));
    TU_FAILS(trd_signature_merge(&own, &given, "kernel 'm'", &merged), TRD_ERR_INVALID_ARGUMENT,
             "launch parameter 1 is named 'm' in the one given, 'n' in the kernel's");
    trd_signature_free(&given);
    TU_OK(trd_signature_parse("C:constexpr,*fp32,u64", "given", &given));
    TU_OK(trd_signature_merge(&own, &given, "kernel 'm'", &merged));
    ck_assert_str_eq(merged.canonical, "C:constexpr,a:*fp32,n:u64");
    trd_signature_free(&merged);
    trd_signature_free(&given);
    trd_signature_free(&own);
    trd_runtime_destroy(rt);
}
END_TEST

/* trd_kernel_launch refuses a grid whose program count overflows (2^22 x 2^21 x 2^21 wraps 64 bits to 0) or that
 * Triton's i32 program ids cannot number, before loading anything; an empty grid stays a no-op. */
START_TEST(launch_grid_overflow)
{
    uint64_t size;
    void *data = host_bundle("add_kernel", "x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n_elements:i32", &size);
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .data = data, .size = size};
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_free(data);
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "host:0", &dev));
    trd_arg_t args[] = {trd_arg_ptr(NULL), trd_arg_ptr(NULL), trd_arg_ptr(NULL), trd_arg_int(0)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {4194304, 2097152, 2097152}, .num_args = 4, .args = args,
                      .device = dev};
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_INVALID_ARGUMENT,
             "kernel 'add_kernel': grid 4194304x2097152x2097152 has more than 2^63-1 programs");
    l.grid[0] = 1u << 31;
    l.grid[1] = l.grid[2] = 1;
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_INVALID_ARGUMENT, "has 2147483648 programs along x, more than 2^31-1");
    l.grid[0] = 0;
    l.grid[2] = UINT32_MAX;
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_INVALID_ARGUMENT, "along z");
    l.grid[2] = 7;
    TU_OK(trd_kernel_launch(k, &l)); /* empty: nothing runs */
    const uint32_t ok[3] = {INT32_MAX, INT32_MAX, 2};
    TU_OK(trd_grid_check(ok, "k"));
    const uint32_t over[3] = {INT32_MAX, INT32_MAX, 3};
    TU_FAILS(trd_grid_check(over, "k"), TRD_ERR_INVALID_ARGUMENT, "more than 2^63-1 programs");
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

/* trd_bundle_write_file: the bundle reads back; a write that cannot finish leaves the old file whole and no
 * temporary behind. */
START_TEST(bundle_write_file_atomic)
{
    char dir[] = "/tmp/trd_bundle_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *path = tu_path("%s/k.trdb", dir);
    trd_bundle_target_t t = {.struct_size = sizeof t, .format = TRD_FORMAT_PTX, .arch = "sm90",
                             .image = "//\n.version 8.7\n", .image_size = 16};
    uint64_t size = 0;
    TU_OK(trd_bundle_write_file(path, "k", "x:*fp32", &t, 1, &size));
    char *data;
    size_t len;
    TU_OK(trd_file_read(path, 1 << 20, &data, &len));
    ck_assert_uint_eq(len, size);
    struct trd_kernel_src src;
    TU_OK(trd_bundle_read(data, len, "k.trdb", &src));
    ck_assert_str_eq(src.sig.canonical, "x:*fp32");
    trd_kernel_src_free(&src);
    /* a refused bundle, and one the file system refuses, leave the old file as it was */
    TU_FAILS(trd_bundle_write_file(path, "k", "x:*fp33", &t, 1, NULL), TRD_ERR_FORMAT, "*fp33");
    TU_FAILS(trd_bundle_write_file(tu_path("%s/missing/k.trdb", dir), "k", "x:*fp32", &t, 1, NULL), TRD_ERR_IO,
             "missing/k.trdb");
    TU_FAILS(trd_bundle_write_file("", "k", "x:*fp32", &t, 1, NULL), TRD_ERR_INVALID_ARGUMENT, "needs a path");
    char *again;
    TU_OK(trd_file_read(path, 1 << 20, &again, &len));
    ck_assert_uint_eq(len, size);
    ck_assert_int_eq(memcmp(again, data, len), 0);
    free(again);
    free(data);
    ck_assert_int_eq(remove(path), 0);
    ck_assert_int_eq(rmdir(dir), 0); /* fails if a temporary was left */
}
END_TEST

/* A broken host image is found when the kernel is made (reading its declared signature); the error names the
 * file once. */
START_TEST(load_errors_name_the_file)
{
    char path[] = "/tmp/trd_notelf_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "\x7f" "ELF garbage", 12), 12);
    close(fd);
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = path, .format = TRD_FORMAT_HOST_SO, .source = TRD_SOURCE_IMAGE,
                           .name = "add_kernel", .signature = "*fp32"};
    char want[128];
    snprintf(want, sizeof want, "'%s': the host image of kernel 'add_kernel': not an ELF image", path);
    TU_FAILS(trd_kernel_create(rt, &d, &k), TRD_ERR_FORMAT, want);
    const char *msg = trd_error_message();
    ck_assert_msg(!strstr(strstr(msg, path) + 1, path), "the path twice: %s", msg);
    d.signature = NULL;
    TU_FAILS(trd_kernel_create(rt, &d, &k), TRD_ERR_FORMAT, want);
    ck_assert_msg(!strstr(strstr(msg, path) + 1, path), "the path twice: %s", msg);
    trd_runtime_destroy(rt);
    unlink(path);
}
END_TEST

/* trd_quote cuts a long input with "..." right after the last character written: every byte up to the end is
 * written (a gap before "..." printed a byte of the stack in error messages). */
START_TEST(quote_cuts_without_gap)
{
    char in[200], buf[96];
    memset(in, 'a', sizeof in);
    const size_t lens[] = {200, 95, 91, 90, 10};
    for (size_t i = 0; i < TU_LEN(lens); i++) {
        memset(buf, 'Z', sizeof buf);
        trd_quote(in, lens[i], buf, sizeof buf);
        size_t len = strlen(buf);
        ck_assert_msg(!memchr(buf, 'Z', len), "%zu: %s", lens[i], buf);
        int cut = len >= 3 && strcmp(buf + len - 3, "...") == 0;
        ck_assert_msg(cut == (lens[i] > 91), "%zu: %s", lens[i], buf);
        ck_assert_uint_eq(len, cut ? 94 : lens[i]);
    }
    memset(buf, 'Z', sizeof buf);
    trd_quote("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"
              "\x1b\x1c",
              28, buf, sizeof buf);
    ck_assert_msg(!memchr(buf, 'Z', strlen(buf)) && strlen(buf) < sizeof buf, "%s", buf);
    ck_assert_str_eq(buf + strlen(buf) - 3, "...");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core");
    TCase *t = tcase_create("core");
    tcase_add_test(t, version_and_status);
    tcase_add_test(t, errors_are_thread_local);
    tcase_add_test(t, struct_sizes);
    tcase_add_test(t, optional_driver_ops);
    tcase_add_test(t, runtime_cache_dir);
    tcase_add_test(t, file_write_atomic_concurrent);
    tcase_add_test(t, signature_text);
    tcase_add_test(t, signature_ttir);
    tcase_add_test(t, metadata_good);
    tcase_add_test(t, metadata_bad);
    tcase_add_test(t, bundle_round_trip);
    tcase_add_test(t, bundle_corrupt);
    tcase_add_test(t, bundle_variants_read);
    tcase_add_test(t, grid_rules);
    tcase_add_test(t, triton_cache_entry);
    tcase_add_test(t, triton_cache_explicit_signature);
    tcase_add_test(t, triton_cache_unreadable_image);
    tcase_add_test(t, triton_cache_damaged_images);
    tcase_add_test(t, formats_and_targets);
    tcase_add_test(t, half_and_bf16);
    tcase_add_test(t, float_encode_decode);
    tcase_add_test(t, sha256_vectors);
    tcase_add_test(t, args_packing);
    tcase_add_test(t, host_driver_through_services);
    suite_add_tcase(s, t);
    TCase *in = tcase_create("input");
    tcase_add_test(in, signature_empty_zero_parameters);
    tcase_add_test(in, signature_deep_pointers);
    tcase_add_test(in, signature_given_contradicts);
    tcase_add_test(in, launch_grid_overflow);
    tcase_add_test(in, bundle_write_file_atomic);
    tcase_add_test(in, load_errors_name_the_file);
    tcase_add_test(in, quote_cuts_without_gap);
    suite_add_tcase(s, in);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
