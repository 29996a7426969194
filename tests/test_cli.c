/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli.c: the trident command line, run as a program, its output parsed
 * (JSON through jansson): devices, drivers, options (whose output is a valid
 * trident.ini), config check/show, run, info, bundle, exit codes, and bad
 * input (signatures, grids, scalars and fills, files, special files, long arguments, checks against
 * non-finite values, a full disk under bundle -o). */
#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <jansson.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testutil.h"

static char out[1 << 20];

/* Runs a shell command line, its output into `out`; returns the exit status. */
static int capture(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs `trident ARGS` (stderr joined to stdout); returns the exit status. */
static int trident(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int trident(const char *fmt, ...)
{
    char args[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    return tu_cli(NULL, out, sizeof out, "%s", args);
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
        /* every property of trd_device_props_t, as Python's trident.devices() has them (index and ordinal were
         * missing) */
        const char *keys[] = {"index", "uri", "driver", "backend", "name", "vendor", "arch", "kind", "ordinal",
                              "warp_size", "compute_units", "max_threads_per_block", "memory_bytes",
                              "max_shared_per_block", "max_shared_per_block_optin", "pci_bus_id", "uuid",
                              "cooperative_launch", "cluster_launch"};
        ck_assert_uint_eq(json_object_size(d), TU_LEN(keys));
        ck_assert_int_eq(json_integer_value(json_object_get(d, "index")), (json_int_t)i);
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

/* devices SEL: the devices it matches (exit 1 naming the selector when none, 2 when malformed); -v shows every
 * property, one a line. */
START_TEST(devices_selector_and_detail)
{
    /* Only the host driver, so that an index, "best" and the device list mean the same on a GPU machine. */
    const char *host_only = "TRIDENT_DRIVER_CUDA_ENABLED=false TRIDENT_DRIVER_HIP_ENABLED=false "
                            "TRIDENT_DRIVER_LEVELZERO_ENABLED=false";
    const char *sels[] = {"host:0", "0", "host", "kind=cpu", "best", "backend=host,kind=cpu"};
    for (size_t i = 0; i < TU_LEN(sels); i++) {
        ck_assert_msg(tu_cli(host_only, out, sizeof out, "devices '%s' --json", sels[i]) == 0, "%s: %s", sels[i], out);
        json_t *j = parse();
        ck_assert_msg(json_array_size(j) == 1, "%s: %s", sels[i], out);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(j, 0), "uri")), "host:0");
        json_decref(j);
    }
    ck_assert_int_eq(tu_cli(host_only, out, sizeof out, "devices cuda:7"), 1);
    ck_assert_msg(strstr(out, "no device matches 'cuda:7' (devices: host:0") && !strstr(out, "URI"), "%s", out);
    ck_assert_int_eq(trident("devices 'bogus=1'"), 2);
    ck_assert_msg(strstr(out, "device selector key 'bogus'"), "%s", out);
    ck_assert_int_eq(trident("devices host:0 host:1"), 2);
    ck_assert_int_eq(trident("devices -v host:0"), 0);
    const char *lines[] = {"host:0\n", "  index ", "  vendor ", "  driver ", "  ordinal ", "  arch ", "  memory ",
                           "  compute units ", "  warp size ", "  max threads per block ", "  shared memory per block ",
                           "  shared memory per block, opt-in ", "  PCI bus id ", "  UUID ", "  cooperative launch ",
                           "  cluster launch "};
    for (size_t i = 0; i < TU_LEN(lines); i++)
        ck_assert_msg(strstr(out, lines[i]), "'%s' missing: %s", lines[i], out);
}
END_TEST

/* drivers -v: every place searched, in order, with its origin and what it held, then every module tried. */
START_TEST(drivers_verbose)
{
    const char *dir = tu_scratch_dir("drivers_v");
    ck_assert_int_eq(tu_cli(tu_path("TRIDENT_DRIVER_PATH=%s:/nonexistent/drivers:relative", dir), out, sizeof out,
                            "drivers -v --json"), 0);
    json_t *j = parse();
    json_t *searched = json_object_get(j, "searched");
    ck_assert_uint_ge(json_array_size(searched), 3);
    json_t *first = json_array_get(searched, 0), *second = json_array_get(searched, 1),
           *third = json_array_get(searched, 2);
    ck_assert_str_eq(json_string_value(json_object_get(first, "path")), dir);
    ck_assert_str_eq(json_string_value(json_object_get(first, "origin")),
                     "[runtime] driver_path (env TRIDENT_DRIVER_PATH)");
    ck_assert_int_eq(json_integer_value(json_object_get(first, "modules")), 0);
    ck_assert(json_is_null(json_object_get(first, "problem")));
    ck_assert_str_eq(json_string_value(json_object_get(second, "problem")), "No such file or directory");
    ck_assert_str_eq(json_string_value(json_object_get(third, "problem")), "not an absolute path: ignored");
    /* a driver module's directory of the build tree holds it (the host driver is built in by default) */
    int build_tree = 0;
    for (size_t i = 0; i < json_array_size(searched); i++) {
        json_t *e = json_array_get(searched, i);
        if (!strcmp(json_string_value(json_object_get(e, "origin")), "the build tree of the libtrident in use") &&
            strstr(json_string_value(json_object_get(e, "path")), "/drivers/"))
            build_tree |= json_integer_value(json_object_get(e, "modules")) == 1;
    }
    ck_assert(build_tree);
    ck_assert(json_array_size(json_object_get(j, "drivers")) >= 1);
    json_decref(j);
    ck_assert_int_eq(trident("drivers -v"), 0);
    ck_assert_msg(strstr(out, "searched, in order:\n") && strstr(out, "the build tree of the libtrident in use: 1 module")
                      && strstr(out, "\nmodules tried:\nNAME "), "%s", out);
}
END_TEST

/* info --json: name, signature, parameters and every target with its metadata. */
START_TEST(info_json)
{
    ck_assert_int_eq(trident("info %s/examples/add_kernel.trdb --json", tu_builddir()), 0);
    json_t *j = parse();
    ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "add_kernel");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "num_params")), 4);
    json_t *p = json_object_get(j, "params");
    ck_assert_uint_eq(json_array_size(p), 4);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(p, 2), "name")), "out_ptr");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(p, 2), "type")), "fp32");
    ck_assert(json_is_true(json_object_get(json_array_get(p, 2), "pointer")));
    ck_assert(json_is_false(json_object_get(json_array_get(p, 3), "pointer")));
    json_t *t = json_object_get(j, "targets");
    ck_assert_uint_eq(json_array_size(t), 4);
    const char *formats[] = {"cubin", "ptx", "hsaco", "so"};
    for (size_t i = 0; i < 4; i++)
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(t, i), "format")), formats[i]);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(t, 0), "arch")), "sm90");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_array_get(t, 0), "metadata"), "num_warps")),
                     4);
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
    const char *backends[] = {"cuda", "hip", "xpu", "host", "runtime", "driver", ""};
    for (size_t i = 0; i < TU_LEN(backends); i++)
        options_are_valid_ini(backends[i]);
    /* the driver keys apply to every driver's section (only [driver.host] was shown); host-only ones to its own */
    ck_assert_int_eq(trident("options driver"), 0);
    const char *drivers[] = {"cuda", "hip", "levelzero", "host"};
    for (size_t i = 0; i < TU_LEN(drivers); i++) {
        const char *sec = strstr(out, tu_path("[driver.%s]\n", drivers[i]));
        ck_assert_msg(sec, "no [driver.%s]: %s", drivers[i], out);
        const char *next = strstr(sec + 1, "\n[");
        size_t len = next ? (size_t)(next - sec) : strlen(sec);
        ck_assert_msg(memmem(sec, len, "\nenabled = true\n", 16) && memmem(sec, len, "\npriority = 0\n", 14), "%s", sec);
        ck_assert_int_eq(memmem(sec, len, "\nthreads = 0\n", 13) != NULL, i == 3);
    }
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
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "timing"), "launches")), 3);
    ck_assert(json_real_value(json_object_get(json_object_get(j, "timing"), "median_ms")) >= 0);
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

/* bundle --variants: one variant an input, their signatures compared (both named when they differ); info lists the
 * variants with their configurations and targets. */
START_TEST(bundle_variants)
{
    char path[64] = "/tmp/trd_bundle_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    ck_assert_int_eq(trident("bundle -o %s --variants %s %s", path, tu_fixture("cuda", "add_fp32"),
                             tu_fixture("cuda", "add_fp16")),
                     1);
    ck_assert_msg(strstr(out, "add_fp16' has signature 'x_ptr:*fp16") && strstr(out, "add_fp32' has 'x_ptr:*fp32"),
                  "%s", out);
    ck_assert_int_eq(trident("bundle -o %s --variants --config A=1 %s %s", path, tu_fixture("cuda", "add_fp32"),
                             tu_fixture("hip", "add_fp32")),
                     0);
    ck_assert_msg(strstr(out, "2 variants, 3 targets") != NULL, "%s", out);
    ck_assert_int_eq(trident("info %s", path), 0);
    ck_assert_msg(strstr(out, "variants 2\nvariant 0: A=1\n  target 0: cubin cuda:sm90") &&
                      strstr(out, "variant 1: num_warps=4,num_stages=2,num_ctas=1\n  target 0: hsaco hip:gfx942"),
                  "%s", out);
    ck_assert_int_eq(trident("info --json %s", path), 0);
    json_t *j = parse();
    json_t *vs = json_object_get(j, "variants");
    ck_assert_int_eq(json_array_size(vs), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(vs, 0), "config")), "A=1");
    ck_assert_int_eq(json_array_size(json_object_get(json_array_get(vs, 0), "targets")), 2);
    ck_assert_int_eq(json_array_size(json_object_get(j, "targets")), 2); /* variant 0's */
    json_decref(j);
    ck_assert_int_eq(trident("bundle -o %s --config A=1 %s", path, tu_fixture("cuda", "add_fp32")), 2);
    unlink(path);
}
END_TEST

/* run --tune over a slow, a broken and a fast variant: a table with the broken one failed and the fast one chosen,
 * then the fast one's run, its in-place output checked; --variant runs one (a broken one fails, exit 1). */
START_TEST(run_tune_table)
{
    char path[64] = "/tmp/trd_bundle_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    const char *so = tu_path("%s/tests/host/.libs", tu_builddir());
    ck_assert_int_eq(trident("bundle -o %s --variants -n tune_kernel -s 'x:*fp32,n:i32,alpha:fp32' --config slow "
                             "--config broken --config fast %s/tune_slow.so %s %s/tune_fast.so",
                             path, so, tu_undeclared_kernel(), so),
                     0);
    const char *args = "-d host:0 -g 12 buf:3000:rand:7 3000 1.5 -r 5";
    ck_assert_int_eq(trident("run %s --tune %s --check 'x==x*1.5+1'", path, args), 0);
    ck_assert_msg(strstr(out, "variant  config") && strstr(out, "median_ms") && strstr(out, "ratio"), "%s", out);
    char *row0 = strstr(out, "\n0 "), *row1 = strstr(out, "\n1 "), *row2 = strstr(out, "\n2 ");
    ck_assert_msg(row0 && row1 && row2, "%s", out);
    ck_assert_msg(strstr(row1, "broken") && strstr(row1, "failed: ") < row2 && strstr(row1, "failed: "), "%s", out);
    ck_assert_msg(strstr(row2, "fast") && strstr(row2, "1.000  *"), "%s", out);
    ck_assert_msg(strstr(out, "variant 2 of 3: fast") && strstr(out, "check x==x*1.5+1: 0 of 3000 elements differ"), "%s", out);
    ck_assert_int_eq(trident("run %s --variant 0 %s --check 'x==x*1.5+1'", path, args), 0);
    ck_assert_msg(strstr(out, "variant 0 of 3: slow") != NULL, "%s", out);
    ck_assert_int_eq(trident("run %s --variant 1 %s", path, args), 1);
    ck_assert_int_eq(trident("run %s --variant 3 %s", path, args), 2);
    ck_assert_msg(strstr(out, "the kernel has 3 variants") != NULL, "%s", out);
    ck_assert_int_eq(trident("run %s --tune --variant 0 %s", path, args), 2);
    /* variants with grid rules: without -g each launches with its rule's grid */
    ck_assert_int_eq(trident("bundle -o %s --variants -n tune_kernel -s 'x:*fp32,n:i32,alpha:fp32' --config BLOCK=256 "
                             "--config BLOCK=256 --grid 'cdiv(n,BLOCK)' --grid 'cdiv(n,BLOCK)' %s/tune_slow.so "
                             "%s/tune_fast.so",
                             path, so, so),
                     0);
    ck_assert_int_eq(trident("info %s", path), 0);
    ck_assert_msg(strstr(out, "variant 1: BLOCK=256; grid cdiv(n,BLOCK)") != NULL, "%s", out);
    ck_assert_int_eq(trident("run %s --tune -d host:0 buf:3000:rand:7 3000 1.5 -r 3 --check 'x==x*1.5+1'", path), 0);
    ck_assert_msg(strstr(out, "grid 12x1x1") && strstr(out, "0 of 3000 elements differ"), "%s", out);
    ck_assert_int_eq(trident("bundle -o %s --variants -n tune_kernel -s 'x:*fp32,n:i32,alpha:fp32' --grid 'cdiv(n,B)' "
                             "%s/tune_fast.so",
                             path, so),
                     1);
    ck_assert_msg(strstr(out, "grid rule 'cdiv(n,B)': a name that is neither") != NULL, "%s", out);
    ck_assert_int_eq(trident("run %s --variant x %s", path, args), 2);
    unlink(path);
}
END_TEST

/* ------------------------------------------------------ input reliability */

/* Runs a shell command line (stderr joined to stdout) into `out`; returns the exit status. */
static int shell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int shell(const char *fmt, ...)
{
    char cmd[9000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[9100];
    snprintf(full, sizeof full, "(%s) 2>&1", cmd);
    return capture(full);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* A kernel without parameters, end to end: info shows an empty signature (MALLOC_PERTURB_ fills new heap bytes,
 * so an unterminated one shows), run launches every program once, bundle keeps it. */
START_TEST(cli_zero_parameters)
{
    const char *so = tu_host_kernel("noparams_kernel");
    ck_assert_int_eq(shell("MALLOC_PERTURB_=85 %s/tools/trident info %s -n noparams_kernel -s ''", tu_builddir(), so), 0);
    ck_assert_msg(strstr(out, "kernel noparams_kernel\nsignature \nparameters 0\n"), "%s", out);
    ck_assert_int_eq(trident("run %s -n noparams_kernel -s '' -g 3,2 --warmup 0", so), 0);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++) {
            char line[80];
            snprintf(line, sizeof line, "noparams_kernel program %d,%d,0 of 3,2,1\n", x, y);
            ck_assert_msg(count(out, line) == 1, "%s: %s", line, out);
        }
    ck_assert_int_eq(count(out, "noparams_kernel program"), 6);
    ck_assert_int_eq(trident("run %s -n noparams_kernel -s '' 1", so), 2);
    ck_assert_ptr_nonnull(strstr(out, "takes 0 arguments (), 1 given"));
    char path[64] = "/tmp/trd_bundle_XXXXXX";
    close(mkstemp(path));
    ck_assert_int_eq(trident("bundle -o %s -n noparams_kernel -s '' %s", path, so), 0);
    ck_assert_int_eq(shell("MALLOC_PERTURB_=85 %s/tools/trident info %s", tu_builddir(), path), 0);
    ck_assert_msg(strstr(out, "signature \nparameters 0\n"), "%s", out);
    ck_assert_int_eq(trident("run %s -g 2 --json -w 0", path), 0);
    ck_assert_int_eq(count(out, "noparams_kernel program"), 2);
    /* a warm-up launch, then the timed one, by default */
    ck_assert_int_eq(trident("run %s -g 2", path), 0);
    ck_assert_int_eq(count(out, "noparams_kernel program"), 4);
    unlink(path);
}
END_TEST

/* Pointers to pointers keep their type; one nested deeper than Triton compiles is an error naming the entry,
 * never a crash (65000 '*' fit the 65536-character limit). */
START_TEST(cli_deep_pointers)
{
    const char *so = tu_undeclared_kernel();
    ck_assert_int_eq(trident("info %s -n undeclared_kernel -s 'pp:**fp32,*k*i8'", so), 0);
    ck_assert_msg(strstr(out, "signature pp:**fp32,**i8\nparameters 2"), "%s", out);
    ck_assert_int_eq(shell("S=$(printf '%%65000s' '' | tr ' ' '*'); %s/tools/trident info %s -n undeclared_kernel "
                           "-s \"p:${S}i32\"",
                           tu_builddir(), so),
                     1);
    ck_assert_msg(strstr(out, "signature of kernel 'undeclared_kernel': entry 0 'p:****"), "%s", out);
    ck_assert_msg(strstr(out, "is a pointer 65000 levels deep, more than 1000"), "%s", out);
}
END_TEST

/* -s for a kernel that knows its signature: a contradiction is an error naming both (it used to launch the
 * bundle's kernel with integers for pointers); the other signedness of an integer runs. */
START_TEST(cli_signature_contradiction)
{
    const char *bundle = tu_path("%s/examples/add_kernel.trdb", tu_builddir());
    ck_assert_int_eq(trident("run %s -s i64,i64,i64,i32 1 2 3 4", bundle), 1);
    ck_assert_msg(strstr(out, "the signature given (i64,i64,i64,i32) contradicts the kernel's own "
                              "(x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n_elements:i32)"),
                  "%s", out);
    ck_assert_int_eq(trident("run %s -s '*fp32,*fp32,*fp32,u32' buf:8:seq buf:8:const:0.5 buf:8 8 -p 8", bundle), 0);
    ck_assert_msg(strstr(out, "(x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n_elements:u32)"), "%s", out);
    ck_assert_msg(strstr(out, "arg 2 out_ptr (*fp32): 0.5 1.5 2.5 3.5 4.5 5.5 6.5 7.5\n"), "%s", out);
}
END_TEST

/* Grids and numbers: decimal (or 0x hex for scalars) only, in range, else a usage error before anything runs. */
START_TEST(cli_grid_and_scalars)
{
    const char *bundle = tu_path("%s/examples/add_kernel.trdb", tu_builddir());
    const char *grids[] = {"4194304,2097152,2097152", "0x4", "0", "4,0", "2147483648", "1,,1", "1,2,3,4", "+4", "4 ",
                           "-4", "1e3"};
    for (size_t i = 0; i < TU_LEN(grids); i++) {
        ck_assert_msg(trident("run %s -g '%s' buf:4 buf:4 buf:4 4", bundle, grids[i]) == 2, "-g %s: %s", grids[i], out);
        ck_assert_msg(strstr(out, "--grid"), "%s", out);
    }
    ck_assert_int_eq(trident("run %s -g 4194304,2097152,2097152 buf:4 buf:4 buf:4 4", bundle), 2);
    ck_assert_ptr_nonnull(strstr(out, "more than 2^63-1 programs"));
    ck_assert_int_eq(trident("run %s -g 2x1 buf:2048:seq buf:2048:seq buf:2048 2048 -p 2048", bundle), 0);
    ck_assert_ptr_nonnull(strstr(out, "grid 2x1x1"));
    ck_assert_msg(strstr(out, " 4094\n"), "%s", out); /* the second program ran */

    /* 010 is ten (not octal eight): every element of ten is added */
    ck_assert_int_eq(trident("run %s buf:10:seq buf:10:seq buf:10 010 -p 10", bundle), 0);
    ck_assert_msg(strstr(out, "arg 2 out_ptr (*fp32): 0 2 4 6 8 10 12 14 16 18\n"), "%s", out);
    ck_assert_int_eq(trident("run %s buf:10:seq buf:10:seq buf:10 0xa -p 10", bundle), 0);
    ck_assert_msg(strstr(out, " 16 18\n"), "%s", out);

    /* one scalar type at a time: an image without a declared signature takes each signature given */
    const char *so = tu_undeclared_kernel();
    struct {
        const char *sig, *args, *needle;
    } bad[] = {
        {"*fp64,i8", "300", "argument 1 (i8): '300' is out of range for i8 (-128 .. 127)"},
        {"*fp64,i8", "-129", "out of range for i8"},
        {"*fp64,i32", "1099511627776", "'1099511627776' is out of range for i32"},
        {"*fp64,u32", "-1", "'-1' is out of range for u32 (0 .. 4294967295)"},
        {"*fp64,u32", "4294967296", "out of range for u32"},
        {"*fp64,i64", "9223372036854775808", "out of range for i64"},
        {"*fp64,u64", "18446744073709551616", "out of range for u64"},
        {"*fp64,i1", "2", "out of range for i1 (0 .. 1)"},
        {"*fp64,i32", "1.5", "'1.5' is not an integer"},
        {"*fp64,i32", "0x", "is not an integer"},
        {"*fp64,i32", "1-", "is not an integer"},
        {"*fp64,fp16", "65536", "'65536' is out of range (the largest finite fp16 is 65504)"},
        {"*fp64,fp32", "1e39", "out of range"},
        {"*fp64,fp64", "1e999", "out of range"},
        {"*fp64,fp8e5", "0x100", "is not an fp8 scalar"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        ck_assert_msg(trident("run %s -n undeclared_kernel -s '%s' buf:1 %s", so, bad[i].sig, bad[i].args) == 2,
                      "%s %s: %s", bad[i].sig, bad[i].args, out);
        ck_assert_msg(strstr(out, bad[i].needle), "%s %s: %s", bad[i].sig, bad[i].args, out);
        ck_assert_msg(!strstr(out, "kernel undeclared_kernel ("), "it ran: %s", out);
    }
    so = tu_host_kernel("scalars_kernel");
    /* the ends of every range pass, exactly */
    ck_assert_int_eq(trident("run %s -n scalars_kernel -s '*fp64,i8,i16,i32,i64,u32,u64,fp16,bf16,fp32,fp64,i1' buf:11 "
                             "-128 -32768 -2147483648 -9223372036854775808 4294967295 0xffffffffffffffff 65504 -1 1.5 "
                             "2.5 1 -p 11",
                             so),
                     0);
    ck_assert_msg(strstr(out, ": -128 -32768 -2147483648 -9.223372036854776e+18 4294967295 1.8446744073709552e+19 65504 -1 "
                              "1.5 2.5 1\n"),
                  "%s", out);
}
END_TEST

/* Messages name the input once and say what is wrong. */
START_TEST(cli_messages)
{
    const char *so = tu_host_kernel("add_kernel");
    ck_assert_int_eq(trident("run %s buf:1 buf:1 buf:1 1", so), 1);
    ck_assert_msg(count(out, so) == 1 && strstr(out, "a raw image needs the kernel's name"), "%s", out);
    char path[64] = "/tmp/trd_notelf_XXXXXX.so";
    int fd = mkstemps(path, 3);
    ck_assert_int_eq(write(fd, "\x7f" "ELF garbage", 12), 12);
    close(fd);
    ck_assert_int_eq(trident("run %s -n add_kernel -s '*fp32,*fp32,*fp32,i32' buf:1 buf:1 buf:1 1", path), 1);
    ck_assert_msg(count(out, path) == 1 && strstr(out, "not an ELF image"), "%s", out);
    ck_assert_int_eq(trident("info %s", path), 1);
    ck_assert_msg(count(out, path) == 1, "%s", out);
    /* buf:file: sizes */
    const char *bundle = tu_path("%s/examples/add_kernel.trdb", tu_builddir());
    ck_assert_int_eq(write(fd = open(path, O_WRONLY | O_TRUNC), "abc", 3), 3);
    close(fd);
    ck_assert_int_eq(trident("run %s buf:file:%s buf:1 buf:1 1", bundle, path), 1);
    ck_assert_msg(strstr(out, "has 3 bytes, not a whole, positive number of elements of 4 bytes") &&
                      !strstr(out, "0 elements"), "%s", out);
    ck_assert_int_eq(trident("run %s buf:2:file:%s buf:1 buf:1 1", bundle, path), 1);
    ck_assert_msg(strstr(out, "has 3 bytes, not the COUNT elements given of 4 bytes (8 bytes)"), "%s", out);
    ck_assert_int_eq(trident("run %s buf:file:/dev/zero buf:1 buf:1 1", bundle), 1);
    ck_assert_msg(strstr(out, "'/dev/zero' is a character device, not a regular file"), "%s", out);
    unlink(path);
    /* bundle: a missing input cannot be opened, whatever else is missing */
    ck_assert_int_eq(trident("bundle -o %s /nonexistent/missing.so", path), 1);
    ck_assert_msg(strstr(out, "cannot open '/nonexistent/missing.so'") && !strstr(out, "--signature"), "%s", out);
}
END_TEST

/* bundle -o replaces the output whole or not at all: with the file size limited (a full disk), the write fails,
 * the old bundle stays intact and no temporary is left. */
START_TEST(cli_bundle_atomic)
{
    char dir[] = "/tmp/trd_bundle_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *path = tu_path("%s/k.trdb", dir);
    char inputs[1024];
    snprintf(inputs, sizeof inputs, "%s %s %s", tu_fixture("cuda", "scalars"), tu_fixture("hip", "scalars"),
             tu_host_kernel("scalars_kernel"));
    ck_assert_int_eq(trident("bundle -o %s %s", path, inputs), 0);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char before[1 << 20], after[1 << 20];
    size_t n = fread(before, 1, sizeof before, f);
    fclose(f);
    ck_assert_uint_gt(n, 4096);
    ck_assert_int_eq(shell("trap '' XFSZ; ulimit -f 2; exec %s/tools/trident bundle -o %s -n scalars_kernel %s %s",
                           tu_builddir(), path, tu_fixture("cuda", "scalars"), tu_fixture("hip", "scalars")),
                     1);
    ck_assert_msg(strstr(out, "File too large"), "%s", out);
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t m = fread(after, 1, sizeof after, f);
    fclose(f);
    ck_assert_uint_eq(m, n);
    ck_assert_int_eq(memcmp(before, after, n), 0);
    ck_assert_int_eq(remove(path), 0);
    ck_assert_int_eq(rmdir(dir), 0); /* fails if a temporary was left */
}
END_TEST

/* ------------------------------------------------------------- trident run */

static json_t *jget(json_t *o, const char *path)
{
    char key[64];
    while (o && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        o = isdigit((unsigned char)key[0]) ? json_array_get(o, strtoul(key, NULL, 10)) : json_object_get(o, key);
        path += n + (path[n] == '.');
    }
    ck_assert_msg(o != NULL, "no %s in %.3000s", path, out);
    return o;
}

static double jnum(json_t *o, const char *path)
{
    return json_number_value(jget(o, path));
}

/* The JSON object that `trident run --json` printed (after what a host kernel printed; a failed check's lines
 * follow it on stderr). */
static json_t *parse_report(void)
{
    json_error_t err;
    const char *start = out[0] == '{' ? out : strstr(out, "\n{");
    ck_assert_msg(start != NULL, "no JSON object in %.3000s", out);
    json_t *j = json_loads(start, JSON_DISABLE_EOF_CHECK, &err);
    ck_assert_msg(j != NULL, "not JSON (%s): %.3000s", err.text, start);
    return j;
}

/* Warm-ups, then timed launches on the device's events: min <= median <= max, the mean among them, the spread,
 * the bytes moved and the bandwidth; the text says the same. */
START_TEST(run_timing)
{
    const char *bundle = tu_path("%s/examples/add_kernel.trdb", tu_builddir());
    ck_assert_int_eq(trident("run %s -g 4 buf:4096:rand buf:4096:rand buf:4096 4096 --warmup 2 --repeat 50 --json",
                             bundle), 0);
    json_t *j = parse_report();
    ck_assert_str_eq(json_string_value(jget(j, "timing.clock")), "device events");
    ck_assert_int_eq(jnum(j, "timing.warmup"), 2);
    ck_assert_int_eq(jnum(j, "timing.launches"), 50);
    double mn = jnum(j, "timing.min_ms"), med = jnum(j, "timing.median_ms"), mean = jnum(j, "timing.mean_ms"),
           mx = jnum(j, "timing.max_ms"), sd = jnum(j, "timing.stddev_ms");
    ck_assert_msg(mn > 0 && mn <= med && med <= mx && mn <= mean && mean <= mx && sd >= 0 && sd <= mx - mn,
                  "min %g median %g mean %g max %g stddev %g", mn, med, mean, mx, sd);
    ck_assert_int_eq(jnum(j, "bytes"), 3 * 4096 * 4); /* every buffer read or written once */
    ck_assert_double_eq_tol(jnum(j, "gbps"), 3 * 4096 * 4 / (med * 1e6), 1e-9);
    ck_assert_str_eq(json_string_value(jget(j, "outputs_after")), "first");
    json_decref(j);
    ck_assert_int_eq(trident("run %s -g 4 buf:4096:rand buf:4096:rand buf:4096 4096 -r 3 --bytes 1000 --json", bundle),
                     0);
    j = parse_report();
    ck_assert_int_eq(jnum(j, "bytes"), 1000);
    json_decref(j);
    ck_assert_int_eq(trident("run %s -g 4 buf:4096:rand buf:4096:rand buf:4096 4096 -r 7 -w 3", bundle), 0);
    ck_assert_msg(strstr(out, "load ") && strstr(out, "3 warm-up launches, then 7 timed on the device's clock (events)")
                      && strstr(out, "time median ") && strstr(out, ", min ") && strstr(out, ", mean ") &&
                      strstr(out, ", max ") && strstr(out, ", stddev ") && strstr(out, "bandwidth ") &&
                      strstr(out, " GB/s (49152 bytes a launch"),
                  "%s", out);
    const char *bad[] = {"-r 0", "-r x", "--warmup -1", "--warmup", "--outputs middle", "--bytes 1e3", "--check x",
                         "--check =f"};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        ck_assert_msg(trident("run %s buf:4 buf:4 buf:4 4 %s", bundle, bad[i]) == 2, "%s: %s", bad[i], out);
}
END_TEST

/* Outputs are those of the first launch, whatever -r and --warmup say (an accumulating kernel showed the sum of
 * every launch: 5120 for 1024 with -r 5), or of the last with --outputs last; --help says so. */
START_TEST(run_outputs_after_first_launch)
{
    const char *acc = tu_host_kernel("accumulate_kernel");
    const char *args = "-n accumulate_kernel -s 'x:*i32,n:i32,out:*i64,count:*i32' buf:1024:const:1 1024 buf:1 buf:1 "
                       "-g 8 -p 1 --json";
    ck_assert_int_eq(trident("run %s %s -r 5", acc, args), 0);
    json_t *j = parse_report();
    ck_assert_int_eq(jnum(j, "buffers.1.values.0"), 1024);
    ck_assert_int_eq(jnum(j, "buffers.2.values.0"), 1024);
    json_decref(j);
    ck_assert_int_eq(trident("run %s %s -r 5 --outputs last", acc, args), 0);
    j = parse_report();
    ck_assert_int_eq(jnum(j, "buffers.1.values.0"), 6 * 1024); /* the warm-up and 5 timed */
    ck_assert_str_eq(json_string_value(jget(j, "outputs_after")), "last");
    json_decref(j);
    ck_assert_int_eq(trident("run %s %s -r 5 -w 0 --outputs last", acc, args), 0);
    j = parse_report();
    ck_assert_int_eq(jnum(j, "buffers.1.values.0"), 5 * 1024);
    json_decref(j);
    /* the dump and the check see the same launch as the print */
    const char *dir = tu_scratch_dir("run_acc");
    ck_assert_int_eq(trident("run %s %s -r 4 --dump %s --check 'out==sum(x)' --check 'count==n'", acc, args, dir), 0);
    FILE *f = fopen(tu_path("%s/arg2.bin", dir), "rb");
    int64_t v = 0;
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fread(&v, 8, 1, f), 1);
    fclose(f);
    ck_assert_int_eq(v, 1024);
    ck_assert_int_eq(trident("run --help"), 0);
    ck_assert_msg(strstr(out, "as the FIRST launch left") && strstr(out, "--outputs last"), "%s", out);
}
END_TEST

/* rand fills come from a real generator, one stream per argument and seed: two buffers of one run differ, seeds
 * 0 .. 100 start at 101 different values spread over [-1, 1) (they all started at -1, rand:0 was rand:1, and two
 * buffers shared their values), integers fill [-100, 100]. */
START_TEST(run_random_fills)
{
    const char *so = tu_host_kernel("noparams_kernel");
    char sig[1024] = "", args[4096] = "";
    for (int k = 0; k <= 100; k++) {
        snprintf(sig + strlen(sig), sizeof sig - strlen(sig), "%s*fp32", k ? "," : "");
        snprintf(args + strlen(args), sizeof args - strlen(args), " buf:64:rand:%d", k);
    }
    ck_assert_int_eq(trident("run %s -n noparams_kernel -s '%s,*fp32,*i32' %s buf:64:rand buf:1000:rand -p 1000 --json",
                             so, sig, args), 0);
    json_t *j = parse_report();
    double first[101], lo = 1, hi = -1;
    for (int k = 0; k <= 100; k++) {
        char path[64];
        snprintf(path, sizeof path, "buffers.%d.values.0", k);
        first[k] = jnum(j, path);
        ck_assert(first[k] >= -1 && first[k] < 1);
        lo = first[k] < lo ? first[k] : lo;
        hi = first[k] > hi ? first[k] : hi;
        for (int m = 0; m < k; m++)
            ck_assert_msg(first[m] != first[k], "seeds %d and %d start at %g", m, k, first[k]);
    }
    ck_assert_msg(lo < -0.8 && hi > 0.8, "the seeds' first values span only %g .. %g", lo, hi);
    /* argument 101 has seed 0, as argument 0: its own stream */
    int same = 0;
    for (int e = 0; e < 64; e++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "buffers.0.values.%d", e);
        snprintf(b, sizeof b, "buffers.101.values.%d", e);
        same += jnum(j, a) == jnum(j, b);
    }
    ck_assert_int_eq(same, 0);
    ck_assert_str_eq(json_string_value(jget(j, "buffers.101.fill")), "rand:0");
    /* integers: every value of [-100, 100] is in range, both ends are reached, the mean is near 0 */
    double sum = 0;
    int seen_lo = 0, seen_hi = 0;
    for (int e = 0; e < 1000; e++) {
        char a[64];
        snprintf(a, sizeof a, "buffers.102.values.%d", e);
        double v = jnum(j, a);
        ck_assert(v >= -100 && v <= 100 && v == (int)v);
        sum += v;
        seen_lo |= v < -90;
        seen_hi |= v > 90;
    }
    ck_assert_msg(seen_lo && seen_hi && sum / 1000 > -10 && sum / 1000 < 10, "mean %g", sum / 1000);
    json_decref(j);
}
END_TEST

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* --check compares an output element by element with a file or an expression and fails (exit 1) naming the first
 * mismatches; a planted wrong element is caught, a rounding-sized difference passes the default tolerance. */
START_TEST(run_check)
{
    enum { N = 3000 };
    static float x[N], y[N], ref[N];
    tu_fill_f32(x, N, 21);
    tu_fill_f32(y, N, 22);
    for (int i = 0; i < N; i++)
        ref[i] = x[i] + y[i];
    const char *dir = tu_scratch_dir("run_check");
    write_file(tu_path("%s/x.bin", dir), x, sizeof x);
    write_file(tu_path("%s/y.bin", dir), y, sizeof y);
    write_file(tu_path("%s/ref.bin", dir), ref, sizeof ref);
    char run[8192];
    snprintf(run, sizeof run, "run %s/examples/add_kernel.trdb -g 3 buf:file:%s/x.bin buf:file:%s/y.bin buf:%d %d",
             tu_builddir(), dir, dir, N, N);
    ck_assert_int_eq(trident("%s --check out_ptr=%s/ref.bin --check 'out_ptr==x_ptr+y_ptr' --check '2==arg0+arg1:0'",
                             run, dir), 0);
    ck_assert_msg(count(out, ": 0 of 3000 elements differ") == 3, "%s", out);
    /* one wrong element, planted */
    ref[1717] += 0.5f;
    write_file(tu_path("%s/ref.bin", dir), ref, sizeof ref);
    ck_assert_int_eq(trident("%s --check out_ptr=%s/ref.bin --json", run, dir), 1);
    json_t *j = parse_report();
    ck_assert_int_eq(jnum(j, "checks.0.mismatches"), 1);
    ck_assert_int_eq(jnum(j, "checks.0.elements"), N);
    ck_assert_int_eq(jnum(j, "checks.0.first_mismatches.0.index"), 1717);
    ck_assert(jnum(j, "checks.0.first_mismatches.0.expected") == ref[1717]);
    ck_assert(jnum(j, "checks.0.first_mismatches.0.got") == x[1717] + y[1717]);
    ck_assert(json_is_false(jget(j, "checks.0.ok")));
    json_decref(j);
    ck_assert_msg(strstr(out, tu_path("trident: --check out_ptr=%s/ref.bin: 1 of 3000 elements differ beyond rtol "
                                      "1e-05: [1717] ", dir)), "%s", out);
    /* a difference of rounding size passes the default tolerance and fails an exact one */
    ref[1717] = nextafterf(x[1717] + y[1717], 10.0f);
    write_file(tu_path("%s/ref.bin", dir), ref, sizeof ref);
    ck_assert_int_eq(trident("%s --check out_ptr=%s/ref.bin", run, dir), 0);
    ck_assert_int_eq(trident("%s --check out_ptr=%s/ref.bin:0", run, dir), 1);
    ck_assert_msg(strstr(out, "1 of 3000 elements differ beyond rtol 0: [1717]"), "%s", out);
    /* an expression that does not hold names the elements where it does not */
    ck_assert_int_eq(trident("%s --check 'out_ptr==x_ptr+y_ptr+floor(i/2999)'", run), 1);
    ck_assert_msg(strstr(out, "1 of 3000 elements differ beyond rtol 1e-05: [2999] "), "%s", out);
    /* usage: an argument that is not one, a scalar, a bad expression; a file of the wrong size fails before the run */
    ck_assert_int_eq(trident("%s --check z=%s/ref.bin", run, dir), 2);
    ck_assert_msg(strstr(out, "'z' is not an argument of the kernel"), "%s", out);
    ck_assert_int_eq(trident("%s --check 'n_elements==3'", run), 2);
    ck_assert_int_eq(trident("%s --check 'out_ptr==x_ptr+'", run), 2);
    ck_assert_int_eq(trident("%s --check 'out_ptr==foo(x_ptr)'", run), 2);
    ck_assert_msg(strstr(out, "'foo' is not a function"), "%s", out);
    ck_assert_int_eq(trident("%s --check out_ptr=%s/x.bin:2", run, dir), 2); /* a tolerance of 2 */
    write_file(tu_path("%s/short.bin", dir), ref, 100);
    ck_assert_int_eq(trident("%s --check out_ptr=%s/short.bin", run, dir), 1);
    ck_assert_msg(strstr(out, "has 100 bytes, not the 12000 of argument 2's 3000 elements of fp32") &&
                      !strstr(out, "kernel add_kernel ("), "%s", out);
    /* also for an output filled from a file: its size is the file's */
    ck_assert_int_eq(trident("run %s/examples/add_kernel.trdb -g 3 buf:file:%s/x.bin buf:file:%s/y.bin buf:file:%s/ref.bin "
                             "%d --check 0=%s/short.bin", tu_builddir(), dir, dir, dir, N, dir), 1);
    ck_assert_msg(strstr(out, "has 100 bytes, not the 12000 of argument 0's 3000 elements of fp32") &&
                      !strstr(out, "kernel add_kernel ("), "%s", out);
}
END_TEST

/* Every output path is checked before anything runs: the kernel (which prints a line a program) never starts. */
START_TEST(run_paths_checked_first)
{
    const char *so = tu_host_kernel("noparams_kernel");
    const char *file = tu_path("%s/not_a_dir", tu_scratch_dir("run_paths"));
    write_file(file, "x", 1);
    struct {
        const char *opt, *needle;
    } bad[] = {
        {"--dump /nonexistent/dir", "--dump /nonexistent/dir: No such file or directory"},
        {tu_path("--dump %s", file), "not a directory"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        ck_assert_int_eq(trident("run %s -n noparams_kernel -s '*fp32' buf:4 %s", so, bad[i].opt), 1);
        ck_assert_msg(strstr(out, bad[i].needle) && !strstr(out, "noparams_kernel program"), "%s", out);
    }
    ck_assert_int_eq(trident("run %s -n noparams_kernel -s '*fp32' buf:4 --check 0=/nonexistent.bin", so), 1);
    ck_assert_msg(strstr(out, "'/nonexistent.bin': No such file") && !strstr(out, "noparams_kernel program"), "%s",
                  out);
    ck_assert_int_eq(trident("run %s -n noparams_kernel -s '*fp32' buf:4 --check 0=/dev/zero", so), 1);
    ck_assert_msg(strstr(out, "is not a readable regular file") && !strstr(out, "noparams_kernel program"), "%s", out);
}
END_TEST

/* A host kernel that reads outside its buffers is reported (the kernel, the program, the signal, the hint) with
 * exit 1; it killed the CLI with signal 11 (exit 139). */
START_TEST(run_faulting_kernel)
{
    const char *so = tu_host_kernel("gather_kernel");
    const char *sig = "x:*fp32,idx:*i64,out:*fp32,n:i32";
    const char *cases[] = {"null buf:1000:seq buf:1000 1000", "buf:1000:seq buf:1000:const:4000000000 buf:1000 1000"};
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        ck_assert_msg(trident("run %s -n gather_kernel -s '%s' -g 4 %s", so, sig, cases[i]) == 1, "%s", out);
        ck_assert_msg(strstr(out, "running 'gather_kernel' on host:0: ") && strstr(out, "kernel 'gather_kernel'") &&
                          strstr(out, "faulted (SIGSEGV") &&
                          strstr(out, "a buffer may be smaller than the grid and the sizes given make the kernel use"),
                      "%s", out);
    }
    /* the same kernel with good indices runs and checks */
    ck_assert_int_eq(trident("run %s -n gather_kernel -s '%s' -g 4 buf:1000:rand buf:1000:seq buf:1000 1000 "
                             "--check 'out==x'", so, sig), 0);
}
END_TEST

/* A host add writing 4096 floats into 16-byte buffers (trident's own, between guard pages) fails with exit 1,
 * naming the kernel, the program and the buffer, every time; it used to end with SIGSEGV, a glibc abort (the heap
 * overwritten) or a hang (a stream's lock overwritten). */
START_TEST(run_overrunning_kernel)
{
    const char *bundle = tu_path("%s/examples/add_kernel.trdb", tu_builddir());
    for (int i = 0; i < 5; i++) {
        ck_assert_msg(trident("run %s --device host:0 -g 4 buf:4 buf:4 buf:4 4096", bundle) == 1, "run %d: %s", i,
                      out);
        ck_assert_msg(strstr(out, "running 'add_kernel' on host:0: ") && strstr(out, "kernel 'add_kernel'") &&
                          strstr(out, " of the 4x1x1 grid faulted (SIGSEGV, a protected address, at 0x") &&
                          strstr(out, " bytes past the end of buffer '") && strstr(out, "_ptr' (16 bytes at 0x"),
                      "run %d: %s", i, out);
    }
    /* buffers of the right size: every element checked */
    ck_assert_msg(trident("run %s --device host:0 -g 4 buf:4096:rand buf:4096:rand buf:4096 4096 "
                          "--check 'out_ptr==x_ptr+y_ptr'", bundle) == 0, "%s", out);
}
END_TEST

/* On a GPU (here the CUDA test double), the vendor's illegal-address error fails the run with exit 1, naming the
 * kernel and what the error means. */
START_TEST(run_gpu_fault)
{
    const char *dbl = tu_path("%s/tests/cuda/.libs/cudadouble.so", tu_builddir());
    if (access(dbl, R_OK) != 0) {
        tu_skip("run_gpu_fault", "the CUDA driver and its test double are not built (no CUDA headers)");
        return;
    }
    char env[4200];
    snprintf(env, sizeof env, "TRIDENT_DRIVER_CUDA_LIBRARY=%s TRD_DOUBLE_FAULTS=cuStreamSynchronize=700", dbl);
    ck_assert_int_eq(tu_cli(env, out, sizeof out, "run %s/examples/add_kernel.trdb -d cuda:0 -g 4 buf:4096:rand "
                            "buf:4096:rand buf:4096 4096", tu_builddir()), 1);
    ck_assert_msg(strstr(out, "trident: running 'add_kernel' on cuda:0: ") &&
                      strstr(out, "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered; the "
                                  "kernel read or wrote outside its buffers"),
                  "%s", out);
}
END_TEST

/* --check against non-finite expectations compares as IEEE does: inf equals inf of its sign only, NaN nothing
 * unless the check ends in :nan (1/0, 1e999, exp(1000) and a file of infinities passed every finite output:
 * |got - inf| <= rtol * inf; NaN matched NaN). */
START_TEST(run_check_non_finite)
{
    const char *so = tu_undeclared_kernel();
    char run[4200];
    snprintf(run, sizeof run, "run %s -n undeclared_kernel -s 'out:*fp32' -w 0", so);
    const char *never[] = {"out==1/0", "out==1e999", "out==exp(1000)", "out==-1/0", "out==0/0", "out==0/0:0.5"};
    for (size_t i = 0; i < TU_LEN(never); i++) {
        ck_assert_msg(trident("%s buf:4096:rand --check '%s'", run, never[i]) == 1, "%s: %s", never[i], out);
        ck_assert_msg(strstr(out, "4096 of 4096 elements differ"), "%s: %s", never[i], out);
    }
    const char *dir = tu_scratch_dir("run_check_inf");
    static float inf[4096];
    for (size_t i = 0; i < TU_LEN(inf); i++)
        inf[i] = INFINITY;
    write_file(tu_path("%s/inf.bin", dir), inf, sizeof inf);
    ck_assert_int_eq(trident("%s buf:4096:rand --check out=%s/inf.bin:0.5 --json", run, dir), 1);
    json_t *j = parse_report();
    ck_assert_int_eq(jnum(j, "checks.0.mismatches"), 4096);
    ck_assert_str_eq(json_string_value(jget(j, "checks.0.first_mismatches.0.expected")), "inf");
    json_decref(j);
    /* inf equals inf of its sign; NaN equals NaN only when asked */
    ck_assert_int_eq(trident("%s buf:4096:const:inf --check out=%s/inf.bin --check 'out==1/0'", run, dir), 0);
    ck_assert_int_eq(trident("%s buf:4096:const:-inf --check out=%s/inf.bin", run, dir), 1);
    ck_assert_int_eq(trident("%s buf:8:const:nan --check 'out==0/0'", run), 1);
    ck_assert_msg(strstr(out, "8 of 8 elements differ beyond rtol 1e-05: [0] nan, expected nan"), "%s", out);
    ck_assert_int_eq(trident("%s buf:8:const:nan --check 'out==0/0:nan' --check 'out==out:0.1:nan' --json -p 8", run), 0);
    j = parse_report();
    ck_assert(json_is_true(jget(j, "checks.0.nan_equal")) && json_is_true(jget(j, "checks.0.ok")));
    ck_assert_str_eq(json_string_value(jget(j, "buffers.0.values.0")), "nan");
    json_decref(j);
    ck_assert_int_eq(trident("%s buf:8:seq --check 'out==i:nan'", run), 0);
    ck_assert_int_eq(trident("%s buf:8:const:nan --check 'out==1:nan'", run), 1);
    /* an integer output: an expectation it cannot hold never matches (1/0 matched -1: inf became all ones) */
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s 'out:*i32' -w 0 buf:4:const:-1 --check 'out==1/0' "
                             "--check 'out==-3000000000' --check 'out==0/0:nan'", so), 1);
    ck_assert_msg(count(out, "4 of 4 elements differ beyond") == 3 && strstr(out, "[0] -1, expected inf"), "%s", out);
    /* i64 elements are compared exactly (2^53 + 1 matched 2^53 as doubles) */
    int64_t v = (int64_t)1 << 53;
    write_file(tu_path("%s/i64.bin", dir), &v, sizeof v);
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s 'out:*i64' -w 0 buf:1:const:9007199254740993 "
                             "--check out=%s/i64.bin", so, dir), 1);
    ck_assert_msg(strstr(out, "[0] 9007199254740993, expected 9007199254740992"), "%s", out);
}
END_TEST

/* buf:N:const:V is checked against the element type by the scalars' own routine (1e39 became inf in fp32,
 * 3000000000 -1294967296 in i32, 1.5 one, -1e30 an undefined conversion); seq stays exact. */
START_TEST(run_fill_values_checked)
{
    const char *so = tu_undeclared_kernel();
    struct {
        const char *type, *fill, *needle;
    } bad[] = {
        {"fp32", "const:1e39", "argument 0 out (*fp32): const:'1e39' is out of range (the largest finite fp32"},
        {"fp16", "const:65536", "is out of range (the largest finite fp16 is 65504)"},
        {"i32", "const:3000000000", "const:'3000000000' is out of range for i32 (-2147483648 .. 2147483647)"},
        {"i32", "const:1.5", "const:'1.5' is not an integer"},
        {"i32", "const:-1e30", "const:'-1e30' is not an integer"},
        {"i8", "const:-129", "out of range for i8"},
        {"u32", "const:-1", "out of range for u32"},
        {"i1", "const:2", "out of range for i1"},
        {"u64", "const:18446744073709551616", "out of range for u64"},
        {"fp8e5", "const:0x100", "is not an fp8 value"},
        {"fp32", "const:", "is not a number"},
        {"i8", "seq", "seq of 200 elements reaches 199, more than i8 holds"},
        {"fp16", "seq", "seq of 3000 elements reaches 2999, more than fp16 holds exactly (at most 2049 elements)"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        const char *count_ = strcmp(bad[i].fill, "seq") != 0 ? "4" : strcmp(bad[i].type, "i8") == 0 ? "200" : "3000";
        ck_assert_msg(trident("run %s -n undeclared_kernel -s 'out:*%s' buf:%s:%s", so, bad[i].type, count_,
                              bad[i].fill) == 2, "%s %s: %s", bad[i].type, bad[i].fill, out);
        ck_assert_msg(strstr(out, bad[i].needle), "%s %s: %s", bad[i].type, bad[i].fill, out);
    }
    /* the ends of the ranges, exactly */
    struct {
        const char *type, *fill, *printed;
    } good[] = {
        {"i64", "const:9223372036854775807", ": 9223372036854775807 9223372036854775807\n"},
        {"i64", "const:-9223372036854775808", ": -9223372036854775808 -9223372036854775808\n"},
        {"u64", "const:0xffffffffffffffff", ": 18446744073709551615 18446744073709551615\n"},
        {"i32", "const:-2147483648", ": -2147483648 -2147483648\n"},
        {"i8", "const:0x7f", ": 127 127\n"},
        {"fp32", "const:3.4028234663852886e38", ": 3.4028235e+38 3.4028235e+38\n"},
        {"fp8e4nv", "const:0xff", ": 255 255\n"},
        /* rounded once, by libtrident's conversion (trd_float_encode, a launch's): through fp32 first, the CLI
         * wrote 1 for both (1 + 2^-11 + 2^-40 became the fp16 tie 1 + 2^-11, then even) */
        {"fp16", "const:1.0004882812509095", ": 1.001 1.001\n"},
        {"bf16", "const:1.0039062500009095", ": 1.01 1.01\n"},
    };
    for (size_t i = 0; i < TU_LEN(good); i++) {
        ck_assert_msg(trident("run %s -n undeclared_kernel -s 'out:*%s' buf:2:%s -p 2", so, good[i].type,
                              good[i].fill) == 0, "%s %s: %s", good[i].type, good[i].fill, out);
        ck_assert_msg(strstr(out, good[i].printed), "%s %s: %s", good[i].type, good[i].fill, out);
    }
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s 'out:*i8' buf:128:seq -p 128", so), 0);
    ck_assert_msg(strstr(out, " 126 127\n"), "%s", out);
}
END_TEST

/* -p prints integers as integers, exactly (an i64 of 493827156 printed 4.93827e+08), and floats in the fewest
 * digits that read back as the same element (whole numbers below 10^17 in full); --json gives integers as JSON integers (a u64 above 2^63-1 as a
 * decimal string) and non-finite floats as "inf", "-inf", "nan" (they were left out of the array). */
START_TEST(run_print_exact)
{
    const char *so = tu_undeclared_kernel();
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s 'a:*i64,b:*u32,c:*i16,d:*fp64,e:*fp32,f:*fp16,g:*bf16' "
                             "buf:2:const:493827156 buf:2:const:4294967295 buf:2:const:-32768 "
                             "buf:2:const:0.30000000000000004 buf:2:const:0.1 buf:2:const:65504 buf:2:const:-inf -p 2",
                             so), 0);
    const char *lines[] = {"arg 0 a (*i64): 493827156 493827156\n", "arg 1 b (*u32): 4294967295 4294967295\n",
                           "arg 2 c (*i16): -32768 -32768\n", "arg 3 d (*fp64): 0.30000000000000004 0.30000000000000004\n",
                           "arg 4 e (*fp32): 0.1 0.1\n", "arg 5 f (*fp16): 65504 65504\n",
                           "arg 6 g (*bf16): -inf -inf\n"};
    for (size_t i = 0; i < TU_LEN(lines); i++)
        ck_assert_msg(strstr(out, lines[i]), "'%s' missing: %s", lines[i], out);
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s 'a:*i64,b:*u64,c:*fp32' buf:1:const:-9223372036854775807 "
                             "buf:1:const:18446744073709551615 buf:3:const:nan -p 3 --json", so), 0);
    json_t *j = parse_report();
    ck_assert(json_is_integer(jget(j, "buffers.0.values.0")));
    ck_assert_int_eq(json_integer_value(jget(j, "buffers.0.values.0")), -INT64_MAX);
    ck_assert_str_eq(json_string_value(jget(j, "buffers.1.values.0")), "18446744073709551615");
    ck_assert_uint_eq(json_array_size(jget(j, "buffers.2.values")), 3);
    ck_assert_str_eq(json_string_value(jget(j, "buffers.2.values.2")), "nan");
    json_decref(j);
}
END_TEST

/* Long arguments are taken whole or refused saying so, never cut: a 4 KB --check said "no expression given", a
 * parameter name of more than 63 characters could not be checked, a long ARCH of bundle was cut, counts with
 * many leading zeros were "not X[,Y[,Z]]". */
START_TEST(cli_long_arguments)
{
    const char *so = tu_undeclared_kernel();
    static char expr[4400], ones[4400];
    size_t n = 0;
    n += (size_t)snprintf(expr + n, sizeof expr - n, "out==x");
    while (n < 4200)
        n += (size_t)snprintf(expr + n, sizeof expr - n, "+x");
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s 'out:*fp32,x:*fp32' buf:4 buf:4 --check '%s'", so, expr), 2);
    ck_assert_msg(strstr(out, "too long") && !strstr(out, "no expression"), "%.2000s", out);
    /* one of more than 4095 characters says so, whatever it holds; a long one below that runs */
    memset(ones, '0', 4100);
    snprintf(ones + 4100, sizeof ones - 4100, "1");
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s 'out:*fp32' buf:4:const:1 --check 'out==%s'", so, ones), 2);
    ck_assert_msg(strstr(out, "--check 'out==...': the expression is too long: 4101 characters, more than the 4095 "
                              "accepted"), "%.300s", out);
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s 'out:*fp32' buf:4:const:1 --check 'out==%s:0.5:nan'", so,
                             ones + 6), 0);
    /* names longer than 63 characters: checked, read by expressions, shown whole */
    char name[101];
    memset(name, 'n', 100);
    name[100] = '\0';
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s '%s:*fp32,x:*fp32' buf:4:const:2 buf:4:const:2 "
                             "--check '%s==x' --check 'x==%s' --json", so, name, name, name), 0);
    json_t *j = parse_report();
    ck_assert_str_eq(json_string_value(jget(j, "buffers.0.name")), name);
    ck_assert_str_eq(json_string_value(jget(j, "checks.0.name")), name);
    json_decref(j);
    char prefix[64];
    memcpy(prefix, name, 63);
    prefix[63] = '\0';
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s '%s:*fp32' buf:4 --check '%s==0'", so, name, prefix), 2);
    ck_assert_msg(strstr(out, "is not an argument of the kernel"), "%s", out);
    ck_assert_int_eq(trident("info %s -n undeclared_kernel -s '%s:*fp32' --json", so, name), 0);
    j = parse();
    ck_assert_str_eq(json_string_value(jget(j, "params.0.name")), name);
    json_decref(j);
    /* numbers with many leading zeros are the numbers */
    ck_assert_int_eq(trident("run %s -n undeclared_kernel -s 'out:*i32' -g 00000000000000000000002 "
                             "buf:000000000000000000000000000000000000003:seq -p 3", so), 0);
    ck_assert_msg(strstr(out, "grid 2x1x1") && strstr(out, ": 0 1 2\n"), "%s", out);
    /* bundle: an ARCH too long for the bundle is refused, not cut */
    char arch[200];
    memset(arch, 'a', 150);
    arch[150] = '\0';
    const char *dir = tu_scratch_dir("cli_long");
    ck_assert_int_eq(trident("bundle -o %s/k.trdb -s '*fp32' %s@%s", dir, so, arch), 2);
    ck_assert_msg(strstr(out, "longer than") && access(tu_path("%s/k.trdb", dir), F_OK) != 0, "%s", out);
}
END_TEST

/* Special files: a bundle's metadata that is a FIFO or a device, a --dump target that is a FIFO, a cache entry
 * whose .cubin is a directory are errors naming them (a FIFO hung bundle and --dump, /dev/zero was read until
 * memory ran out, the entry loaded as PTX alone with exit 0). */
/* A cap on the CLI's address space, so that a regression reading /dev/zero fails fast instead of filling the
 * machine's memory. Not under a sanitizer, whose runtime reserves terabytes of address space at start (ASan
 * aborted at once under the cap). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ADDRESS_SPACE_CAP ""
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ADDRESS_SPACE_CAP ""
#endif
#endif
#ifndef ADDRESS_SPACE_CAP
#define ADDRESS_SPACE_CAP "ulimit -v 4000000; "
#endif

START_TEST(cli_special_files)
{
    const char *dir = tu_scratch_dir("cli_special");
    const char *so = tu_undeclared_kernel();
    const char *fifo = tu_path("%s/fifo", dir);
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    const char *metas[][2] = {{fifo, "is a FIFO"}, {"/dev/zero", "is a character device"}};
    for (size_t i = 0; i < TU_LEN(metas); i++) {
        ck_assert_int_eq(shell(ADDRESS_SPACE_CAP "timeout 20 %s/tools/trident bundle -o %s/k.trdb -s '*fp32' %s@x86_64@%s",
                               tu_builddir(), dir, so, metas[i][0]), 1);
        ck_assert_msg(strstr(out, metas[i][0]) && strstr(out, metas[i][1]), "%s", out);
    }
    ck_assert_int_eq(mkfifo(tu_path("%s/arg0.bin", dir), 0644), 0);
    ck_assert_int_eq(shell("timeout 20 %s/tools/trident run %s -n undeclared_kernel -s '*fp32' buf:4 --dump %s",
                           tu_builddir(), so, dir), 1);
    ck_assert_msg(strstr(out, tu_path("%s/arg0.bin", dir)) && strstr(out, "FIFO"), "%s", out);
    /* a Triton cache entry whose .cubin is a directory */
    const char *files[] = {"add_kernel.json", "add_kernel.ptx", "add_kernel.ttir"};
    for (size_t i = 0; i < TU_LEN(files); i++)
        ck_assert_int_eq(shell("cp %s/%s %s/", tu_fixture("cuda", "add_fp32"), files[i], dir), 0);
    ck_assert_int_eq(trident("info %s/add_kernel.json", dir), 0);
    ck_assert_int_eq(mkdir(tu_path("%s/add_kernel.cubin", dir), 0755), 0);
    ck_assert_int_eq(trident("info %s/add_kernel.json", dir), 1);
    ck_assert_msg(strstr(out, tu_path("'%s/add_kernel.cubin' is a directory", dir)), "%s", out);
}
END_TEST

/* bundle IMAGE@ARCH@METADATA.json: the input ends in .json but is no cache entry (it was taken for one: "cannot
 * open 'k.so@x86_64@meta.json'"); the metadata file is read and kept. */
START_TEST(cli_bundle_image_metadata)
{
    const char *dir = tu_scratch_dir("cli_bundle_meta");
    const char *meta = "{\"name\": \"undeclared_kernel\", \"num_warps\": 1, \"shared\": 0, "
                       "\"target\": {\"backend\": \"host\", \"arch\": \"x86_64\", \"warp_size\": 1}}";
    write_file(tu_path("%s/meta.json", dir), meta, strlen(meta));
    ck_assert_int_eq(trident("bundle -o %s/k.trdb -s '*fp32' %s@x86_64@%s/meta.json", dir, tu_undeclared_kernel(), dir),
                     0);
    ck_assert_int_eq(trident("info %s/k.trdb --json", dir), 0);
    json_t *j = parse();
    ck_assert_str_eq(json_string_value(jget(j, "targets.0.metadata.name")), "undeclared_kernel");
    ck_assert_str_eq(json_string_value(jget(j, "targets.0.arch")), "x86_64");
    json_decref(j);
    /* a cache entry's metadata path still names the entry when it is missing */
    ck_assert_int_eq(trident("bundle -o %s/k.trdb %s/missing.json", dir, dir), 1);
    ck_assert_msg(strstr(out, "missing.json"), "%s", out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cli");
    TCase *t = tcase_create("cli");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, version_and_usage);
    tcase_add_test(t, devices_and_drivers);
    tcase_add_test(t, devices_selector_and_detail);
    tcase_add_test(t, drivers_verbose);
    tcase_add_test(t, info_json);
    tcase_add_test(t, options_output_is_config);
    tcase_add_test(t, config_check_and_show);
    tcase_add_test(t, run_and_dump);
    tcase_add_test(t, info_and_bundle);
    tcase_add_test(t, bundle_variants);
    tcase_add_test(t, run_tune_table);
    suite_add_tcase(s, t);
    TCase *in = tcase_create("input");
    tcase_set_timeout(in, 300);
    tcase_add_test(in, cli_zero_parameters);
    tcase_add_test(in, cli_deep_pointers);
    tcase_add_test(in, cli_signature_contradiction);
    tcase_add_test(in, cli_grid_and_scalars);
    tcase_add_test(in, cli_messages);
    tcase_add_test(in, cli_bundle_atomic);
    suite_add_tcase(s, in);
    TCase *r = tcase_create("run");
    tcase_set_timeout(r, 300);
    tcase_add_test(r, run_timing);
    tcase_add_test(r, run_outputs_after_first_launch);
    tcase_add_test(r, run_random_fills);
    tcase_add_test(r, run_check);
    tcase_add_test(r, run_paths_checked_first);
    tcase_add_test(r, run_faulting_kernel);
    tcase_add_test(r, run_overrunning_kernel);
    tcase_add_test(r, run_gpu_fault);
    suite_add_tcase(s, r);
    TCase *h = tcase_create("hostile");
    tcase_set_timeout(h, 300);
    tcase_add_test(h, run_check_non_finite);
    tcase_add_test(h, run_fill_values_checked);
    tcase_add_test(h, run_print_exact);
    tcase_add_test(h, cli_long_arguments);
    tcase_add_test(h, cli_special_files);
    tcase_add_test(h, cli_bundle_image_metadata);
    suite_add_tcase(s, h);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
