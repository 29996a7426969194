/* SPDX-License-Identifier: Apache-2.0 */
/* testutil.h: helpers the Check test programs share. */
#ifndef TRD_TESTS_TESTUTIL_H
#define TRD_TESTS_TESTUTIL_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trident/trident.h>

#define TU_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The build and source trees (set by the test environment). */
const char *tu_builddir(void);
const char *tu_srcdir(void);
/* A path built with printf syntax; the result lives until the next 8 calls. */
const char *tu_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The built host kernel examples/host/<name>.so. */
const char *tu_host_kernel(const char *name);
/* The test host image without a declared signature: tests/host/.libs/undeclared_kernel.so. */
const char *tu_undeclared_kernel(void);
/* The kernel of the built host kernel <name> with a signature (and metadata, or NULL). */
trd_kernel_t *tu_host_kernel_create(trd_runtime_t *rt, const char *name, const char *signature, const char *metadata);
/* A Triton fixture directory: tests/fixtures/triton/<backend>/<variant>. */
const char *tu_fixture(const char *backend, const char *variant);
/* A driver services table (trident/driver.h, version 2) over libtrident's
 * public functions, with config_get as its configuration: for tests that run
 * a driver module without the core's loader. Lives until the next call. */
struct trd_driver_services;
const struct trd_driver_services *tu_driver_services(const char *(*config_get)(void *ctx, const char *key));

/* A runtime that reads no files or environment: only `ini` (may be NULL) as
 * configuration and only the modules in driver_path (NULL: the build tree's). */
trd_runtime_t *tu_runtime(const char *driver_path, const char *ini);
/* Its configuration, to check origins. */
trd_config_t *tu_config(const char *ini);

/* Deterministic random numbers (xorshift64*), never all zeros. */
uint64_t tu_rand(uint64_t *state);
void tu_fill_f32(float *a, size_t n, uint64_t seed);   /* uniform in [-1, 1) */
void tu_fill_i32(int32_t *a, size_t n, uint64_t seed); /* uniform in [-1000, 1000] */

/* Asserts a trident call succeeded, printing its message otherwise. */
#define TU_OK(call)                                                                                  \
    do {                                                                                             \
        trd_status_t tu_st_ = (call);                                                                \
        ck_assert_msg(tu_st_ == TRD_OK, "%s -> %s: %s", #call, trd_status_name(tu_st_), trd_error_message()); \
    } while (0)
/* Asserts a call failed with `status` and that its message contains `needle`. */
#define TU_FAILS(call, status, needle)                                                               \
    do {                                                                                             \
        trd_status_t tu_st_ = (call);                                                                \
        ck_assert_msg(tu_st_ == (status), "%s -> %s (expected %s): %s", #call, trd_status_name(tu_st_), \
                      trd_status_name(status), trd_error_message());                                 \
        ck_assert_msg(strstr(trd_error_message(), (needle)) != NULL, "%s: message '%s' lacks '%s'", #call, \
                      trd_error_message(), (needle));                                                \
    } while (0)

/* Runs `env VAR=... trident ARGS` from the build tree (stderr joined to stdout) under a 60 s timeout, so that a
 * hang fails the test (exit 124) instead of stalling the suite. env may be NULL or "A=1 B=2" (shell words).
 * The output goes to out (cap bytes, NUL-terminated); returns the exit status, -1 when killed by a signal. */
int tu_cli(const char *env, char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A whole file's bytes (failing the test when it cannot be read), NUL-terminated so that a text file is a string;
 * *size counts the bytes without the NUL. The caller frees it. */
void *tu_read_file(const char *path, size_t *size);
/* A fresh empty directory under the build tree's tests/home, for files a test makes (the last 4 stay valid). */
const char *tu_scratch_dir(const char *name);

/* Runs the suite; CK_FORK etc. as Check reads them. Returns the exit status. */
int tu_run(Suite *s);
/* Prints a visible skip line (GPU tests without a GPU). */
void tu_skip(const char *what, const char *why);

#endif
