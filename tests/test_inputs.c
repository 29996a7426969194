/* SPDX-License-Identifier: Apache-2.0 */
/* test_inputs.c: input that arrives from the environment and the file system rather than through arguments — bad
 * TRIDENT_LOG values, FIFOs, devices, directories and oversized files wherever a path is read (configuration,
 * kernels, metadata, driver directories) — through the API and through the CLI as a separate process, so that a
 * hang fails (a timeout) instead of stalling the suite. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/testutil.h"

static char out[1 << 16];

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static const char *fifo(const char *dir, const char *name)
{
    const char *p = tu_path("%s/%s", dir, name);
    ck_assert_msg(mkfifo(p, 0600) == 0, "mkfifo %s: %s", p, strerror(errno));
    return p;
}

/* A bad TRIDENT_LOG once deadlocked every process at its first log call (the warning re-entered pthread_once):
 * now it is one warning naming the variable and the accepted values, and the program runs. */
START_TEST(bad_log_level_warns_once)
{
    const char *values[] = {"TRIDENT_LOG=garbage", "TRIDENT_LOG=", "'TRIDENT_LOG=%s%n'", "TRIDENT_LOG=5"};
    for (size_t i = 0; i < TU_LEN(values); i++) {
        int rc = tu_cli(values[i], out, sizeof out, "devices");
        ck_assert_msg(rc == 0, "%s: exit %d: %s", values[i], rc, out);
        ck_assert_msg(strstr(out, "host:0") != NULL, "%s: %s", values[i], out);
        ck_assert_msg(count(out, "TRIDENT_LOG") == 1, "%s: not exactly one warning: %s", values[i], out);
        ck_assert_msg(strstr(out, "off, error, warn, info, debug") != NULL, "%s: %s", values[i], out);
    }
    /* a valid level still applies, and strict configuration still refuses a bad one */
    ck_assert_int_eq(tu_cli("TRIDENT_LOG=debug", out, sizeof out, "devices"), 0);
    ck_assert_ptr_nonnull(strstr(out, "trident: debug:"));
    ck_assert_int_eq(tu_cli("TRIDENT_LOG=garbage TRIDENT_STRICT=1", out, sizeof out, "devices"), 1);
    ck_assert_ptr_nonnull(strstr(out, "runtime.log_level"));
}
END_TEST

/* The ini reader read whatever it was given: /dev/zero until memory ran out, a FIFO forever, a directory as an
 * empty valid file; TRIDENT_CONFIG naming a directory was silently ignored. */
START_TEST(config_refuses_special_files)
{
    const char *d = tu_scratch_dir("config");
    const char *f = fifo(d, "trident.ini");
    struct {
        const char *path, *needle;
    } cases[] = {{"/dev/zero", "is a character device, not a regular file"},
                 {d, "is a directory, not a regular file"},
                 {f, "is a FIFO, not a regular file"}};
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        trd_config_t *c;
        TU_OK(trd_config_create(0, &c));
        TU_FAILS(trd_config_load_file(c, cases[i].path), TRD_ERR_IO, cases[i].needle);
        ck_assert_ptr_nonnull(strstr(trd_error_message(), cases[i].path));
        trd_config_destroy(c);
        uint32_t errors = 0;
        ck_assert_int_eq(trd_config_check_file(cases[i].path, 0, NULL, NULL, &errors), TRD_ERR_IO);
        ck_assert_uint_eq(errors, 1);
        ck_assert_int_eq(tu_cli(NULL, out, sizeof out, "config check '%s'", cases[i].path), 1);
        ck_assert_msg(strstr(out, cases[i].needle) != NULL, "config check %s: %s", cases[i].path, out);
        char env[4200];
        snprintf(env, sizeof env, "'TRIDENT_CONFIG=%s'", cases[i].path);
        ck_assert_int_eq(tu_cli(env, out, sizeof out, "devices"), 1);
        ck_assert_msg(strstr(out, "TRIDENT_CONFIG") && strstr(out, cases[i].needle), "%s: %s", env, out);
    }
    /* an ini file far larger than any configuration is refused by size, before it is read */
    const char *big = tu_path("%s/big.ini", d);
    int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 64 << 20), 0);
    close(fd);
    trd_config_t *c;
    TU_OK(trd_config_create(0, &c));
    TU_FAILS(trd_config_load_file(c, big), TRD_ERR_LIMIT, "more than the 1048576 accepted");
    trd_config_destroy(c);
    /* a missing TRIDENT_CONFIG is still an error of its own */
    ck_assert_int_eq(tu_cli("TRIDENT_CONFIG=/nonexistent/trident.ini", out, sizeof out, "devices"), 1);
    ck_assert_ptr_nonnull(strstr(out, "does not exist"));
}
END_TEST

/* Kernel paths, metadata named *.json and driver modules named trident_*.so: a FIFO among them once hung
 * `trident info` and every command that scans a driver directory. */
START_TEST(kernel_and_driver_paths_refuse_special_files)
{
    const char *d = tu_scratch_dir("kernels");
    const char *k = fifo(d, "kernel.bin");
    const char *j = fifo(d, "add_kernel.json");
    ck_assert_int_eq(symlink("/dev/zero", tu_path("%s/zero_kernel.json", d)), 0);
    const char *z = tu_path("%s/zero_kernel.json", d);
    const char *paths[] = {k, j, z, "/dev/zero"};
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    for (size_t i = 0; i < TU_LEN(paths); i++) {
        ck_assert_int_eq(tu_cli(NULL, out, sizeof out, "info '%s'", paths[i]), 1);
        ck_assert_msg(strstr(out, "not a regular file") != NULL, "info %s: %s", paths[i], out);
        trd_kernel_desc_t kd = {.struct_size = sizeof kd, .path = paths[i], .signature = "*fp32"};
        trd_kernel_t *kern;
        TU_FAILS(trd_kernel_create(rt, &kd, &kern), TRD_ERR_IO, "not a regular file");
    }
    trd_runtime_destroy(rt);

    const char *drv = tu_scratch_dir("drivers");
    fifo(drv, "trident_fifo.so");
    char env[4200];
    snprintf(env, sizeof env, "'TRIDENT_DRIVER_PATH=%s'", drv);
    ck_assert_int_eq(tu_cli(env, out, sizeof out, "drivers"), 0);
    ck_assert_msg(strstr(out, "trident_fifo.so") && strstr(out, "a FIFO, not a regular file"), "%s", out);
    ck_assert_int_eq(tu_cli(env, out, sizeof out, "devices"), 0);
    ck_assert_ptr_nonnull(strstr(out, "host:0"));
}
END_TEST

/* inih keeps at most 49 characters of a section name and cut longer ones without a word, so a long device selector
 * (a uuid= with dashes) silently became another selector; a selector with one quote was taken literally. Found by
 * fuzz_ini_file's round trip. */
START_TEST(config_long_and_unbalanced_sections)
{
    const char *ini = "[device \"uuid=01234567-89ab-cdef-0123-456789abcdef\"]\ndebug = true\n"
                      "[device \"uuid=01234567-89ab-cdef-0123-456789abcdee\"]\ndebug = false\n";
    trd_config_t *c;
    TU_OK(trd_config_create(0, &c));
    TU_OK(trd_config_load_string(c, ini, "long.ini"));
    const char *v = NULL;
    TU_OK(trd_config_get(c, "device \"uuid=01234567-89ab-cdef-0123-456789abcdef\"", "debug", &v, NULL));
    ck_assert_str_eq(v, "true");
    TU_OK(trd_config_get(c, "device \"uuid=01234567-89ab-cdef-0123-456789abcdee\"", "debug", &v, NULL));
    ck_assert_str_eq(v, "false");
    uint32_t n = 0;
    TU_OK(trd_config_entry_count(c, &n));
    ck_assert_uint_eq(n, 2);
    TU_FAILS(trd_config_load_string(c, "[device \"arch=sm90]\ndebug = true\n", "quote.ini"), TRD_ERR_FORMAT,
             "unbalanced quote");
    trd_config_destroy(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("inputs");
    TCase *t = tcase_create("inputs");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, bad_log_level_warns_once);
    tcase_add_test(t, config_refuses_special_files);
    tcase_add_test(t, kernel_and_driver_paths_refuse_special_files);
    tcase_add_test(t, config_long_and_unbalanced_sections);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
