/* test_cli.c: the trident command line, run as a program, its output parsed
 * (JSON through jansson): devices, drivers, options (whose output is a valid
 * trident.ini), config check/show, run, info, bundle, exit codes. */
#include <jansson.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testutil.h"

static char out[1 << 20];

/* Runs `trident ARGS` (stderr joined to stdout); returns the exit status. */
static int trident(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int trident(const char *fmt, ...)
{
    char args[8192], cmd[9000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s/tools/trident %s 2>&1", tu_builddir(), args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static json_t *parse(void)
{
    json_error_t err;
    json_t *j = json_loads(out, 0, &err);
    ck_assert_msg(j != NULL, "not JSON (%s): %s", err.text, out);
    return j;
}

START_TEST(version_and_usage)
{
    ck_assert_int_eq(trident("--version"), 0);
    ck_assert_ptr_nonnull(strstr(out, "trident " TRD_VERSION_STRING));
    ck_assert_int_eq(trident("--help"), 0);
    ck_assert_ptr_nonnull(strstr(out, "devices"));
    ck_assert_int_eq(trident("frobnicate"), 2);
    ck_assert_ptr_nonnull(strstr(out, "'frobnicate' is not a command"));
    ck_assert_int_eq(trident("devices --bogus"), 2);
    ck_assert_int_eq(trident("run"), 2);
    ck_assert_int_eq(trident("options cudda"), 2);
    ck_assert_ptr_nonnull(strstr(out, "did you mean 'cuda'"));
    const char *cmds[] = {"devices", "drivers", "run", "info", "bundle", "options", "config"};
    for (size_t i = 0; i < TU_LEN(cmds); i++) {
        ck_assert_int_eq(trident("%s --help", cmds[i]), 0);
        ck_assert_ptr_nonnull(strstr(out, "usage: trident"));
    }
}
END_TEST

START_TEST(devices_and_drivers)
{
    ck_assert_int_eq(trident("devices --json"), 0);
    json_t *j = parse();
    ck_assert(json_is_array(j));
    ck_assert_uint_ge(json_array_size(j), 1);
    int host = 0;
    for (size_t i = 0; i < json_array_size(j); i++) {
        json_t *d = json_array_get(j, i);
        const char *keys[] = {"uri", "driver", "backend", "name", "arch", "warp_size", "memory_bytes", "compute_units",
                              "pci_bus_id"};
        for (size_t k = 0; k < TU_LEN(keys); k++)
            ck_assert_msg(json_object_get(d, keys[k]) != NULL, "device %zu lacks %s", i, keys[k]);
        if (!strcmp(json_string_value(json_object_get(d, "uri")), "host:0")) {
            host = 1;
            ck_assert(json_is_null(json_object_get(d, "pci_bus_id")));
            ck_assert_int_gt(json_integer_value(json_object_get(d, "memory_bytes")), 0);
        }
    }
    ck_assert(host);
    json_decref(j);
    ck_assert_int_eq(trident("devices"), 0);
    ck_assert_ptr_nonnull(strstr(out, "host:0"));
    ck_assert_int_eq(trident("drivers --json"), 0);
    j = parse();
    int found = 0;
    for (size_t i = 0; i < json_array_size(j); i++) {
        json_t *d = json_array_get(j, i);
        const char *keys[] = {"name", "path", "status", "reason", "devices"};
        for (size_t k = 0; k < TU_LEN(keys); k++)
            ck_assert(json_object_get(d, keys[k]) != NULL);
        if (!strcmp(json_string_value(json_object_get(d, "name")), "host")) {
            found = 1;
            ck_assert_str_eq(json_string_value(json_object_get(d, "status")), "loaded");
        }
    }
    ck_assert(found);
    json_decref(j);
}
END_TEST

/* `trident options ARGS` succeeds and its output passes config check --strict. */
static void options_are_valid_ini(const char *args)
{
    char path[64] = "/tmp/trd_opts_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    ck_assert_int_eq(trident("options %s > %s", args, path), 0);
    ck_assert_msg(trident("config check --strict %s", path) == 0, "options %s: %s", args, out);
    ck_assert_ptr_nonnull(strstr(out, "valid"));
    unlink(path);
}

START_TEST(options_output_is_config)
{
    const char *backends[] = {"cuda", "hip", "xpu", "host", "runtime", ""};
    for (size_t i = 0; i < TU_LEN(backends); i++)
        options_are_valid_ini(backends[i]);
    ck_assert_int_eq(trident("options cuda --json"), 0);
    json_t *j = parse();
    ck_assert_uint_eq(json_array_size(j), 27); /* CUDAOptions of Triton 3.9 */
    json_t *first = json_array_get(j, 0);
    const char *keys[] = {"name", "backend", "type", "default", "stage", "doc"};
    for (size_t k = 0; k < TU_LEN(keys); k++)
        ck_assert(json_object_get(first, keys[k]) != NULL);
    ck_assert_str_eq(json_string_value(json_object_get(first, "name")), "num_warps");
    json_decref(j);
    ck_assert_int_eq(trident("options cuda --json --triton 3.5"), 0);
    j = parse();
    int cluster = 0;
    for (size_t i = 0; i < json_array_size(j); i++)
        cluster |= !strcmp(json_string_value(json_object_get(json_array_get(j, i), "name")), "cluster_dims");
    ck_assert(cluster);
    json_decref(j);
    ck_assert_int_eq(trident("options hip"), 0);
    ck_assert_ptr_nonnull(strstr(out, "[backend.hip]\n"));
    ck_assert_ptr_nonnull(strstr(out, "\nwaves_per_eu = 0\n"));
    ck_assert_int_eq(trident("options cuda --triton x.y"), 2);
    /* each release lists exactly its fields (23 CUDA ones in 3.6 .. 3.8, 27 in 3.9; HIP 21, 21, 22, 24), with
     * its defaults, and its output is a valid trident.ini, also for 3.0 and 3.5 (their dropped fields commented) */
    const struct {
        const char *release;
        size_t cuda, hip;
    } rel[] = {{"3.6", 23, 21}, {"3.7.1", 23, 21}, {"3.8", 23, 22}, {"3.9.0", 27, 24}};
    for (size_t i = 0; i < TU_LEN(rel); i++) {
        ck_assert_int_eq(trident("options cuda --json --triton %s", rel[i].release), 0);
        j = parse();
        ck_assert_uint_eq(json_array_size(j), rel[i].cuda);
        json_decref(j);
        ck_assert_int_eq(trident("options hip --json --triton %s", rel[i].release), 0);
        j = parse();
        size_t fields = 0;
        for (size_t k = 0; k < json_array_size(j); k++)
            fields += json_is_true(json_object_get(json_array_get(j, k), "triton_field"));
        ck_assert_uint_eq(fields, rel[i].hip);
        json_decref(j);
    }
    const char *releases[] = {"--triton 3.0", "--triton 3.5", "--triton 3.6", "--triton 3.7", "--triton 3.8",
                              "--triton 3.9", "hip --triton 3.5.1", "xpu --triton 3.6"};
    for (size_t i = 0; i < TU_LEN(releases); i++)
        options_are_valid_ini(releases[i]);
    ck_assert_int_eq(trident("options hip --triton 3.7"), 0);
    ck_assert_ptr_nonnull(strstr(out, "\nschedule_hint = none\n"));
    ck_assert_ptr_null(strstr(out, "llvm_fn_attrs"));
    ck_assert_int_eq(trident("options hip --triton 3.9"), 0);
    ck_assert_ptr_nonnull(strstr(out, "\nschedule_hint = \n"));
    ck_assert_ptr_nonnull(strstr(out, "\nwgp_cu_mode = wgp\n"));
    ck_assert_ptr_nonnull(strstr(out, "CI tests it against 3.6 3.7 3.8 3.9"));
    ck_assert_int_eq(trident("options cuda --triton 3.5"), 0);
    ck_assert_ptr_nonnull(strstr(out, "\n# cluster_dims = 1,1,1\n"));
    /* a release the tables do not know is a usage error naming the ones they know */
    ck_assert_int_eq(trident("options --triton 3.10"), 2);
    ck_assert_ptr_nonnull(strstr(out, "Triton 3.10 is newer than trident's tables: the cuda table knows releases 3.0 .. 3.9"));
    ck_assert_int_eq(trident("options cuda --triton 2.3"), 2);
    ck_assert_ptr_nonnull(strstr(out, "Triton 2.3 is not supported"));
    ck_assert_int_eq(trident("options xpu --triton 3.9"), 2);
    ck_assert_ptr_nonnull(strstr(out, "intel-xpu-backend-for-triton 3.9 is newer than trident's tables"));
    ck_assert_int_eq(trident("options --triton 3.9"), 0); /* the xpu section says why it lists nothing */
    ck_assert_ptr_nonnull(strstr(out, "[backend.xpu]\n# intel-xpu-backend-for-triton 3.9 is newer"));
}
END_TEST

START_TEST(config_check_and_show)
{
    char path[64] = "/tmp/trd_cfg_XXXXXX";
    int fd = mkstemp(path);
    const char *bad = "[backend.cuda]\nnum_warps = 6\n[runtime]\nlog_level = chatty\n";
    ck_assert(write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad));
    close(fd);
    ck_assert_int_eq(trident("config check %s", path), 1);
    ck_assert_ptr_nonnull(strstr(out, tu_path("%s:2: [backend.cuda] option cuda.num_warps: '6' is not valid", path)));
    ck_assert_ptr_nonnull(strstr(out, tu_path("%s:4: [runtime]", path)));
    ck_assert_int_eq(trident("config check /nonexistent.ini"), 1);
    ck_assert_int_eq(trident("config check"), 2);
    unlink(path);
    ck_assert_int_eq(trident("config show --json"), 0);
    json_t *j = parse();
    int warps = 0;
    for (size_t i = 0; i < json_array_size(j); i++) {
        json_t *e = json_array_get(j, i);
        if (!strcmp(json_string_value(json_object_get(e, "section")), "backend.cuda") &&
            !strcmp(json_string_value(json_object_get(e, "key")), "num_warps")) {
            warps = 1;
            ck_assert_str_eq(json_string_value(json_object_get(e, "origin")), "default");
        }
    }
    ck_assert(warps);
    json_decref(j);
    ck_assert_int_eq(trident("config show"), 0);
    ck_assert_ptr_nonnull(strstr(out, "num_warps = 4  ; default"));
    /* with a value from the environment */
    setenv("TRIDENT_CUDA_NUM_WARPS", "16", 1);
    ck_assert_int_eq(trident("config show"), 0);
    ck_assert_ptr_nonnull(strstr(out, "num_warps = 16  ; env TRIDENT_CUDA_NUM_WARPS"));
    unsetenv("TRIDENT_CUDA_NUM_WARPS");
}
END_TEST

static void write_floats(const char *path, const float *v, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert(fwrite(v, 4, n, f) == n);
    fclose(f);
}

START_TEST(run_and_dump)
{
    const size_t n = 3000;
    float x[3000], y[3000], o[3000];
    tu_fill_f32(x, n, 5);
    tu_fill_f32(y, n, 6);
    char dir[] = "/tmp/trd_run_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_floats(tu_path("%s/x.bin", dir), x, n);
    write_floats(tu_path("%s/y.bin", dir), y, n);
    const char *bundle = tu_path("%s/examples/add_kernel.trdb", tu_builddir());
    ck_assert_int_eq(trident("run %s --grid 3 buf:file:%s/x.bin buf:file:%s/y.bin buf:3000 3000 --dump %s --json -r 3", bundle,
                             dir, dir, dir),
                     0);
    json_t *j = parse();
    ck_assert_str_eq(json_string_value(json_object_get(j, "kernel")), "add_kernel");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "repeat")), 3);
    ck_assert(json_real_value(json_object_get(j, "launch_ms_median")) >= 0);
    json_decref(j);
    FILE *f = fopen(tu_path("%s/arg2.bin", dir), "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert(fread(o, 4, n, f) == n);
    fclose(f);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(o[i] == x[i] + y[i], "out[%zu]", i);
    /* a host shared object with a signature given on the command line; negative scalars */
    ck_assert_int_eq(trident("run %s --name transpose_kernel --signature '*fp32,*fp32,i32,i32,fp32' -g 1,1 "
                             "buf:4:seq buf:4 2 2 -2.5 -p 4",
                             tu_host_kernel("transpose_kernel")),
                     0);
    ck_assert_msg(strstr(out, "arg 1 (*fp32): -0 -5 -2.5 -7.5"), "%s", out);
    /* usage errors are exit 2, failures exit 1, with messages */
    ck_assert_int_eq(trident("run %s buf:10 buf:10 buf:10", bundle), 2);
    ck_assert_ptr_nonnull(strstr(out, "takes 4 arguments"));
    ck_assert_int_eq(trident("run %s buf:10 buf:10 buf:10 1.5", bundle), 2);
    ck_assert_ptr_nonnull(strstr(out, "'1.5' is not an integer"));
    ck_assert_int_eq(trident("run %s buf:10 7 buf:10 10", bundle), 2);
    ck_assert_ptr_nonnull(strstr(out, "is a pointer"));
    ck_assert_int_eq(trident("run %s buf:0 buf:1 buf:1 1", bundle), 2);
    ck_assert_int_eq(trident("run %s --grid 1,x buf:1 buf:1 buf:1 1", bundle), 2);
    ck_assert_int_eq(trident("run %s --device cuda:7 buf:1 buf:1 buf:1 1", bundle), 1);
    ck_assert_ptr_nonnull(strstr(out, "no device matches 'cuda:7'"));
    ck_assert_int_eq(trident("run /nonexistent.trdb"), 1);
    ck_assert_int_eq(trident("run %s buf:file:/nonexistent buf:1 buf:1 1", bundle), 1);
    ck_assert_int_eq(trident("run %s --option num_warps=3 buf:1 buf:1 buf:1 1", bundle), 2);
    ck_assert_ptr_nonnull(strstr(out, "power of two"));
    unlink(tu_path("%s/x.bin", dir));
    unlink(tu_path("%s/y.bin", dir));
    for (int i = 0; i < 3; i++)
        unlink(tu_path("%s/arg%d.bin", dir, i));
    rmdir(dir);
}
END_TEST

START_TEST(info_and_bundle)
{
    ck_assert_int_eq(trident("info %s", tu_fixture("cuda", "matmul")), 0);
    ck_assert_ptr_nonnull(strstr(out, "kernel matmul_kernel"));
    ck_assert_ptr_nonnull(strstr(out, "shared 65536"));
    char path[64] = "/tmp/trd_bundle_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    ck_assert_int_eq(trident("bundle -o %s %s %s %s", path, tu_fixture("cuda", "scalars"), tu_fixture("hip", "scalars"),
                             tu_host_kernel("scalars_kernel")),
                     0);
    ck_assert_ptr_nonnull(strstr(out, "4 targets"));
    ck_assert_int_eq(trident("info %s", path), 0);
    ck_assert_ptr_nonnull(strstr(out, "target 3: so host:"));
    ck_assert_int_eq(trident("bundle -o %s %s", path, tu_host_kernel("add_kernel")), 2);
    ck_assert_ptr_nonnull(strstr(out, "give --signature"));
    ck_assert_int_eq(trident("bundle %s", tu_host_kernel("add_kernel")), 2);
    unlink(path);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cli");
    TCase *t = tcase_create("cli");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, version_and_usage);
    tcase_add_test(t, devices_and_drivers);
    tcase_add_test(t, options_output_is_config);
    tcase_add_test(t, config_check_and_show);
    tcase_add_test(t, run_and_dump);
    tcase_add_test(t, info_and_bundle);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
