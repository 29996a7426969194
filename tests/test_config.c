/* SPDX-License-Identifier: Apache-2.0 */
/* test_config.c: trident.ini through inih: precedence of files, environment
 * and API; FILE:LINE errors and warnings; strict mode; malformed files;
 * [device] sections on a simulated mixed host (test driver modules for sm90,
 * sm80 and gfx1100 devices). */
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tests/drivers/driver_double.h"
#include "tests/testutil.h"

struct diags {
    int errors, warnings;
    char text[16384];
};

static void collect(void *user, int32_t level, const char *file, uint32_t line, const char *message)
{
    struct diags *d = user;
    if (level == TRD_LOG_ERROR)
        d->errors++;
    else
        d->warnings++;
    size_t n = strlen(d->text);
    snprintf(d->text + n, sizeof d->text - n, "%s:%u: %s: %s\n", file ? file : "env", line,
             level == TRD_LOG_ERROR ? "error" : "warning", message);
}

static const char *write_file(const char *content, size_t len)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/trd_config_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, content, len) == (ssize_t)len);
    close(fd);
    return path;
}

static const char *value(trd_config_t *c, const char *section, const char *key, const char **origin)
{
    const char *v = NULL;
    TU_OK(trd_config_get(c, section, key, &v, origin));
    return v;
}

START_TEST(precedence)
{
    trd_config_t *c;
    TU_OK(trd_config_create(0, &c));
    const char *a = "[backend.cuda]\nnum_warps = 2\nnum_stages = 5\nmaxnreg = 64\n";
    const char *b = "[backend.cuda]\n; a later file overrides an earlier one\nnum_warps = 8\n";
    char pa[64], pb[64];
    snprintf(pa, sizeof pa, "%s", write_file(a, strlen(a)));
    snprintf(pb, sizeof pb, "%s", write_file(b, strlen(b)));
    TU_OK(trd_config_load_file(c, pa));
    TU_OK(trd_config_load_file(c, pb));
    const char *origin;
    ck_assert_str_eq(value(c, "backend.cuda", "num_warps", &origin), "8");
    ck_assert_str_eq(origin, tu_path("%s:3", pb));
    ck_assert_str_eq(value(c, "backend.cuda", "num_stages", &origin), "5");
    /* the environment overrides files */
    setenv("TRIDENT_CUDA_NUM_STAGES", "6", 1);
    setenv("TRIDENT_HIP_WAVES_PER_EU", "2", 1);
    TU_OK(trd_config_load_env(c));
    ck_assert_str_eq(value(c, "backend.cuda", "num_stages", &origin), "6");
    ck_assert_str_eq(origin, "env TRIDENT_CUDA_NUM_STAGES");
    ck_assert_str_eq(value(c, "backend.hip", "waves_per_eu", &origin), "2");
    /* the API overrides both, and a file read later does not override the API */
    TU_OK(trd_config_set(c, "backend.cuda", "num_stages", "7"));
    TU_OK(trd_config_load_env(c));
    TU_OK(trd_config_load_file(c, pa));
    ck_assert_str_eq(value(c, "backend.cuda", "num_stages", &origin), "7");
    ck_assert_str_eq(origin, "api");
    /* but a file does not override the environment either */
    ck_assert_str_eq(value(c, "backend.hip", "waves_per_eu", &origin), "2");
    TU_FAILS(trd_config_set(c, "backend.cuda", "num_warps", "3"), TRD_ERR_INVALID_ARGUMENT, "power of two");
    TU_FAILS(trd_config_set(c, "backend.cuda", "nope", "3"), TRD_ERR_NOT_FOUND, "has no key 'nope'");
    TU_FAILS(trd_config_set(c, "backend.metal", "num_warps", "4"), TRD_ERR_INVALID_ARGUMENT, "'metal' is not a backend");
    uint32_t n;
    TU_OK(trd_config_entry_count(c, &n));
    ck_assert_uint_eq(n, 4);
    trd_config_entry_t e = {.struct_size = sizeof e};
    TU_OK(trd_config_entry_get(c, 0, &e));
    ck_assert_str_eq(e.section, "backend.cuda");
    unsetenv("TRIDENT_CUDA_NUM_STAGES");
    unsetenv("TRIDENT_HIP_WAVES_PER_EU");
    unlink(pa);
    unlink(pb);
    trd_config_destroy(c);
}
END_TEST

START_TEST(default_files)
{
    /* $XDG_CONFIG_HOME/trident/trident.ini, then $TRIDENT_CONFIG, then env */
    char dir[] = "/tmp/trd_xdg_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char sub[128], user[160];
    snprintf(sub, sizeof sub, "%s/trident", dir);
    mkdir(sub, 0700);
    snprintf(user, sizeof user, "%s/trident.ini", sub);
    FILE *f = fopen(user, "w");
    fputs("[runtime]\nlog_level = warn\n[backend.hip]\nnum_stages = 3\nkpack = 2\n", f);
    fclose(f);
    const char *named = "[backend.hip]\nnum_stages = 4\n";
    char np[64];
    snprintf(np, sizeof np, "%s", write_file(named, strlen(named)));
    setenv("XDG_CONFIG_HOME", dir, 1);
    setenv("TRIDENT_CONFIG", np, 1);
    setenv("TRIDENT_HIP_KPACK", "1", 1);
    trd_config_t *c;
    TU_OK(trd_config_create(0, &c));
    TU_OK(trd_config_load_defaults(c));
    const char *origin;
    ck_assert_str_eq(value(c, "runtime", "log_level", &origin), "warn");
    ck_assert_str_eq(origin, tu_path("%s:2", user));
    ck_assert_str_eq(value(c, "backend.hip", "num_stages", &origin), "4");
    ck_assert_str_eq(origin, tu_path("%s:2", np));
    ck_assert_str_eq(value(c, "backend.hip", "kpack", &origin), "1");
    ck_assert_str_eq(origin, "env TRIDENT_HIP_KPACK");
    trd_config_destroy(c);
    /* TRIDENT_CONFIG naming a missing file is an error */
    setenv("TRIDENT_CONFIG", "/nonexistent/trident.ini", 1);
    TU_OK(trd_config_create(0, &c));
    TU_FAILS(trd_config_load_defaults(c), TRD_ERR_FORMAT, "/nonexistent/trident.ini: TRIDENT_CONFIG names a file that does not exist");
    trd_config_destroy(c);
    unsetenv("TRIDENT_CONFIG");
    unsetenv("TRIDENT_HIP_KPACK");
    setenv("XDG_CONFIG_HOME", "/nonexistent", 1);
    unlink(user);
    rmdir(sub);
    rmdir(dir);
    unlink(np);
}
END_TEST

START_TEST(errors_name_file_and_line)
{
    const char *text = "[runtime]\n"
                       "log_level = loud\n"             /* 2: bad enum */
                       "[backend.cuda]\n"
                       "num_warps = 3\n"                /* 4: not a power of two */
                       "num_warp = 4\n"                 /* 5: unknown key (warning) */
                       "maxnreg = 64\n"
                       "maxnreg = 32\n"                 /* 7: duplicate */
                       "this line has no equals sign\n" /* 8: syntax */
                       "[backend.cuda\n"                /* 9: unterminated section */
                       "[flavours]\n"
                       "x = 1\n"                        /* 11: unknown section (warning) */
                       "[driver.CUDA]\n"                /* 12: bad driver name */
                       "enabled = true\n"
                       "[device \"colour=red\"]\n"      /* 14: bad selector */
                       "driver = hip\n";
    struct diags d = {0};
    uint32_t errors = 0;
    const char *path = write_file(text, strlen(text));
    TU_FAILS(trd_config_check_file(path, 0, collect, &d, &errors), TRD_ERR_FORMAT, path);
    ck_assert_msg(strstr(d.text, ":2: error: [runtime] option runtime.log_level: 'loud' is not valid"), "%s", d.text);
    ck_assert_msg(strstr(d.text, ":4: error: [backend.cuda] option cuda.num_warps: '3' is not valid: expected a power of two"), "%s", d.text);
    ck_assert_msg(strstr(d.text, ":5: warning: [backend.cuda] 'num_warp' is not an option of cuda; did you mean 'num_warps'?"), "%s", d.text);
    ck_assert_msg(strstr(d.text, ":7: error: [backend.cuda] duplicate key 'maxnreg' (first set at line 6)"), "%s", d.text);
    ck_assert_msg(strstr(d.text, ":8: error: expected 'key = value'"), "%s", d.text);
    ck_assert_msg(strstr(d.text, ":9: error: unterminated section header"), "%s", d.text);
    ck_assert_msg(strstr(d.text, ":11: warning: unknown section [flavours]"), "%s", d.text);
    ck_assert_msg(strstr(d.text, ":13: error: [driver.CUDA]: a driver name is"), "%s", d.text);
    ck_assert_msg(strstr(d.text, ":15: error: [device \"colour=red\"]: device selector key 'colour'"), "%s", d.text);
    ck_assert_int_eq(d.errors, 7);
    ck_assert_int_eq(d.warnings, 2);
    ck_assert_uint_eq(errors, 7);
    /* strict: warnings are errors */
    memset(&d, 0, sizeof d);
    TU_FAILS(trd_config_check_file(path, TRD_CONFIG_STRICT, collect, &d, &errors), TRD_ERR_FORMAT, path);
    ck_assert_int_eq(d.errors, 9);
    unlink(path);
    /* a valid file */
    const char *good = "# trident.ini\n[runtime]\nlog_level = info\n  [backend.cuda]\n  num_warps = 8 ; inline comment\n"
                       "extern_libs = libdevice=/usr/lib/libdevice.10.bc\n[device \"arch=sm90\"]\nmaxnreg = 128\n"
                       "[device \"cuda:1\"]\nenabled = false\n[driver.hip]\nlibrary = /opt/rocm/lib/libamdhip64.so\n";
    path = write_file(good, strlen(good));
    memset(&d, 0, sizeof d);
    TU_OK(trd_config_check_file(path, TRD_CONFIG_STRICT, collect, &d, &errors));
    ck_assert_msg(d.errors == 0 && d.warnings == 0, "%s", d.text);
    unlink(path);
}
END_TEST

START_TEST(malformed_files)
{
    struct diags d;
    uint32_t errors;
    /* binary garbage */
    unsigned char junk[4096];
    uint64_t seed = 77;
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)tu_rand(&seed);
    const char *path = write_file((const char *)junk, sizeof junk);
    memset(&d, 0, sizeof d);
    ck_assert_int_eq(trd_config_check_file(path, 0, collect, &d, &errors), TRD_ERR_FORMAT);
    ck_assert(errors > 0);
    ck_assert_msg(strstr(d.text, "not valid UTF-8"), "%s", d.text);
    unlink(path);
    /* a huge line */
    char *huge = malloc(100000);
    memcpy(huge, "[runtime]\ncache_dir = ", 22);
    memset(huge + 22, 'x', 100000 - 24);
    huge[100000 - 2] = '\n';
    huge[100000 - 1] = '\0';
    path = write_file(huge, strlen(huge));
    memset(&d, 0, sizeof d);
    ck_assert_int_eq(trd_config_check_file(path, 0, collect, &d, &errors), TRD_ERR_FORMAT);
    ck_assert_msg(strstr(d.text, ":2: error: the line is 99988 characters long, more than the"), "%s", d.text);
    free(huge);
    unlink(path);
    /* invalid UTF-8 in a value, a NUL byte, CRLF endings, an empty file, a key before any section */
    const char bad_utf8[] = "[runtime]\nlog_level = \xc3\x28\n";
    path = write_file(bad_utf8, sizeof bad_utf8 - 1);
    memset(&d, 0, sizeof d);
    ck_assert_int_eq(trd_config_check_file(path, 0, collect, &d, &errors), TRD_ERR_FORMAT);
    ck_assert_msg(strstr(d.text, ":2: error: the line is not valid UTF-8"), "%s", d.text);
    unlink(path);
    const char nul[] = "[runtime]\nlog_le\0vel = warn\n";
    path = write_file(nul, sizeof nul - 1);
    memset(&d, 0, sizeof d);
    ck_assert_int_eq(trd_config_check_file(path, 0, collect, &d, &errors), TRD_ERR_FORMAT);
    unlink(path);
    const char crlf[] = "[runtime]\r\nlog_level = debug\r\n";
    path = write_file(crlf, sizeof crlf - 1);
    TU_OK(trd_config_check_file(path, 0, NULL, NULL, &errors));
    unlink(path);
    path = write_file("", 0);
    TU_OK(trd_config_check_file(path, 0, NULL, NULL, &errors));
    unlink(path);
    const char nosec[] = "log_level = debug\n";
    path = write_file(nosec, sizeof nosec - 1);
    memset(&d, 0, sizeof d);
    ck_assert_int_eq(trd_config_check_file(path, 0, collect, &d, &errors), TRD_ERR_FORMAT);
    ck_assert_msg(strstr(d.text, ":1: error: 'log_level' is outside any section"), "%s", d.text);
    unlink(path);
    TU_FAILS(trd_config_check_file("/nonexistent/x.ini", 0, NULL, NULL, &errors), TRD_ERR_NOT_FOUND, "/nonexistent/x.ini");
    /* fuzz-like: random lines of ini punctuation never crash */
    static const char alphabet[] = "[]=;#:\"\n\t abcdefghijklmnopqrstuvwxyz._0123456789\xc3\xa9\xff";
    char buf[2048];
    for (int round = 0; round < 300; round++) {
        size_t n = tu_rand(&seed) % (sizeof buf - 1);
        for (size_t i = 0; i < n; i++)
            buf[i] = alphabet[tu_rand(&seed) % (sizeof alphabet - 1)];
        buf[n] = '\0';
        trd_config_t *c;
        TU_OK(trd_config_create(0, &c));
        TU_OK(trd_config_set_diag(c, collect, &d));
        memset(&d, 0, sizeof d);
        trd_status_t st = trd_config_load_string(c, buf, "fuzz.ini");
        ck_assert(st == TRD_OK || st == TRD_ERR_FORMAT);
        trd_config_destroy(c);
    }
}
END_TEST

START_TEST(environment_warnings)
{
    setenv("TRIDENT_CUDA_NUM_WARP", "4", 1);
    setenv("TRIDENT_FOO", "1", 1);
    struct diags d = {0};
    trd_config_t *c;
    TU_OK(trd_config_create(0, &c));
    TU_OK(trd_config_set_diag(c, collect, &d));
    TU_OK(trd_config_load_env(c));
    ck_assert_msg(strstr(d.text, "environment variable TRIDENT_CUDA_NUM_WARP is not one trident reads (did you mean TRIDENT_CUDA_NUM_WARPS?)"),
                  "%s", d.text);
    ck_assert_msg(strstr(d.text, "TRIDENT_FOO is not one trident reads"), "%s", d.text);
    ck_assert_int_eq(d.errors, 0);
    trd_config_destroy(c);
    /* strict mode, from the environment itself */
    setenv("TRIDENT_STRICT", "1", 1);
    memset(&d, 0, sizeof d);
    TU_OK(trd_config_create(0, &c));
    TU_OK(trd_config_set_diag(c, collect, &d));
    TU_FAILS(trd_config_load_env(c), TRD_ERR_FORMAT, "TRIDENT_");
    ck_assert_int_eq(d.errors, 2);
    trd_config_destroy(c);
    unsetenv("TRIDENT_STRICT");
    unsetenv("TRIDENT_FOO");
    unsetenv("TRIDENT_CUDA_NUM_WARP");
    /* a bad value in the environment is an error naming the variable */
    setenv("TRIDENT_CUDA_NUM_WARPS", "3", 1);
    memset(&d, 0, sizeof d);
    TU_OK(trd_config_create(0, &c));
    TU_OK(trd_config_set_diag(c, collect, &d));
    TU_FAILS(trd_config_load_env(c), TRD_ERR_FORMAT, "power of two");
    trd_config_destroy(c);
    unsetenv("TRIDENT_CUDA_NUM_WARPS");
    /* driver keys */
    setenv("TRIDENT_DRIVER_HOST_DEVICES", "3", 1);
    TU_OK(trd_config_create(0, &c));
    TU_OK(trd_config_load_env(c));
    const char *origin;
    ck_assert_str_eq(value(c, "driver.host", "devices", &origin), "3");
    trd_config_destroy(c);
    /* and the runtime sees three host devices */
    trd_runtime_t *rt;
    trd_runtime_desc_t desc = {.struct_size = sizeof desc, .flags = TRD_RUNTIME_NO_DEFAULT_DRIVERS};
    TU_OK(trd_runtime_create(&desc, &rt));
    uint32_t n;
    TU_OK(trd_runtime_device_count(rt, &n));
    ck_assert_uint_eq(n, 3);
    trd_runtime_destroy(rt);
    unsetenv("TRIDENT_DRIVER_HOST_DEVICES");
    /* a broken configuration stops the runtime with FILE:LINE */
    setenv("TRIDENT_HOST_NUM_WARPS", "5", 1);
    TU_FAILS(trd_runtime_create(&desc, &rt), TRD_ERR_FORMAT, "env TRIDENT_HOST_NUM_WARPS");
    unsetenv("TRIDENT_HOST_NUM_WARPS");
}
END_TEST

static const char *mixed_modules(void)
{
    tdd_facts(tdd_open("td_a", NULL), "tda", "cuda", "sm90", 2, NULL);
    tdd_facts(tdd_open("td_b", NULL), "tdb", "cuda", "sm80", 1, "0000:90:00.0");
    tdd_facts(tdd_open("td_gfx", NULL), "tdgfx", "hip", "gfx1100", 1, "0000:a0:00.0");
    const char *files[] = {"td_a", "td_b", "td_gfx"};
    return tdd_paths(files, 3);
}

static char *opt(trd_device_t *d, const char *name)
{
    static char buf[512];
    trd_options_t *o;
    TU_OK(trd_options_create_for_device(d, &o));
    size_t len;
    TU_OK(trd_options_get(o, name, buf, sizeof buf, &len));
    trd_options_destroy(o);
    return buf;
}

START_TEST(device_sections_on_a_mixed_host)
{
    const char *ini = "[backend.cuda]\nnum_stages = 4\nmaxnreg = 200\n"
                      "[device \"arch=sm80\"]\nmaxnreg = 64\nnum_stages = 2\n"
                      "[device \"tda:1\"]\nmaxnreg = 96\n"
                      "[device \"backend=hip\"]\nwaves_per_eu = 3\n"
                      "[backend.hip]\nwaves_per_eu = 1\nkpack = 2\n";
    trd_runtime_t *rt = tu_runtime(mixed_modules(), ini);
    trd_device_t *a0, *a1, *b0, *g0;
    TU_OK(trd_runtime_device_find(rt, "tda:0", &a0));
    TU_OK(trd_runtime_device_find(rt, "tda:1", &a1));
    TU_OK(trd_runtime_device_find(rt, "tdb:0", &b0));
    TU_OK(trd_runtime_device_find(rt, "tdgfx:0", &g0));
    /* each device: its own derived defaults, the backend section, then its [device] sections */
    ck_assert_str_eq(opt(a0, "arch"), "sm90");
    ck_assert_str_eq(opt(a0, "maxnreg"), "200");
    ck_assert_str_eq(opt(a0, "num_stages"), "4");
    ck_assert_str_eq(opt(a0, "max_num_imprecise_acc_default"), "1073741824");
    ck_assert_str_eq(opt(a1, "maxnreg"), "96");
    ck_assert_str_eq(opt(b0, "arch"), "sm80");
    ck_assert_str_eq(opt(b0, "maxnreg"), "64");
    ck_assert_str_eq(opt(b0, "num_stages"), "2");
    ck_assert_str_eq(opt(b0, "max_num_imprecise_acc_default"), "0");
    ck_assert_str_eq(opt(b0, "supported_fp8_dtypes"), "fp8e4b15,fp8e5");
    ck_assert_str_eq(opt(g0, "arch"), "gfx1100");
    ck_assert_str_eq(opt(g0, "warp_size"), "32");
    ck_assert_str_eq(opt(g0, "waves_per_eu"), "3");
    ck_assert_str_eq(opt(g0, "kpack"), "2");
    trd_runtime_destroy(rt);
    /* a value that is invalid for the device it lands on is an error naming where it came from */
    rt = tu_runtime(mixed_modules(), "[device \"tdb:0\"]\nnum_ctas = 2\n");
    TU_OK(trd_runtime_device_find(rt, "tdb:0", &b0));
    trd_options_t *o;
    TU_FAILS(trd_options_create_for_device(b0, &o), TRD_ERR_INVALID_ARGUMENT, "test.ini:2");
    ck_assert_ptr_nonnull(strstr(trd_error_message(), "needs compute capability 9.0"));
    trd_runtime_destroy(rt);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("config");
    TCase *t = tcase_create("config");
    tcase_add_test(t, precedence);
    tcase_add_test(t, default_files);
    tcase_add_test(t, errors_name_file_and_line);
    tcase_add_test(t, malformed_files);
    tcase_add_test(t, environment_warnings);
    tcase_add_test(t, device_sections_on_a_mixed_host);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
