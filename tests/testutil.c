/* SPDX-License-Identifier: Apache-2.0 */
/* testutil.c: see testutil.h. */
#include "tests/testutil.h"

#include <stdarg.h>
#include <trident/driver.h>
#include <sys/wait.h>
#include <unistd.h>

const char *tu_builddir(void)
{
    const char *d = getenv("TRD_BUILDDIR");
    return d ? d : ".";
}

const char *tu_srcdir(void)
{
    const char *d = getenv("TRD_SRCDIR");
    return d ? d : ".";
}

const char *tu_path(const char *fmt, ...)
{
    static char bufs[8][4096];
    static unsigned next;
    char *b = bufs[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, 4096, fmt, ap);
    va_end(ap);
    return b;
}

const char *tu_host_kernel(const char *name)
{
    return tu_path("%s/examples/host/.libs/%s.so", tu_builddir(), name);
}

const char *tu_undeclared_kernel(void)
{
    return tu_path("%s/tests/host/.libs/undeclared_kernel.so", tu_builddir());
}

const char *tu_fixture(const char *backend, const char *variant)
{
    return tu_path("%s/tests/fixtures/triton/%s/%s", tu_srcdir(), backend, variant);
}

trd_config_t *tu_config(const char *ini)
{
    trd_config_t *c = NULL;
    TU_OK(trd_config_create(0, &c));
    if (ini)
        TU_OK(trd_config_load_string(c, ini, "test.ini"));
    return c;
}

static trd_config_t *configs[64];
static unsigned nconfigs;

/* The configurations runtimes borrowed, released at exit (after the tests
 * destroyed their runtimes): leak checkers see them freed, and the array is
 * read, so that the compiler keeps the stores into it. */
__attribute__((destructor)) static void tu_configs_free(void)
{
    for (unsigned i = 0; i < nconfigs; i++)
        trd_config_destroy(configs[i]);
    nconfigs = 0;
}

trd_kernel_t *tu_host_kernel_create(trd_runtime_t *rt, const char *name, const char *signature, const char *metadata)
{
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_host_kernel(name), .name = name,
                           .signature = signature, .metadata = metadata};
    TU_OK(trd_kernel_create(rt, &d, &k));
    return k;
}

trd_runtime_t *tu_runtime(const char *driver_path, const char *ini)
{
    trd_config_t *c = tu_config(ini);
    if (nconfigs < 64)
        configs[nconfigs++] = c; /* kept for the process: the runtime borrows it */
    trd_runtime_desc_t d = {.struct_size = sizeof d, .config = c};
    if (driver_path) {
        d.driver_path = driver_path;
        d.flags = TRD_RUNTIME_NO_DEFAULT_DRIVERS;
    }
    trd_runtime_t *rt = NULL;
    TU_OK(trd_runtime_create(&d, &rt));
    return rt;
}

uint64_t tu_rand(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

void tu_fill_f32(float *a, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++)
        a[i] = (float)((double)(tu_rand(&s) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

void tu_fill_i32(int32_t *a, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++)
        a[i] = (int32_t)(tu_rand(&s) % 2001) - 1000;
}

int tu_run(Suite *s)
{
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

void tu_skip(const char *what, const char *why)
{
    printf("SKIP: %s: %s\n", what, why);
    fflush(stdout);
}

int tu_cli(const char *env, char *out, size_t cap, const char *fmt, ...)
{
    char args[8192], cmd[9400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "env %s timeout 60 %s/tools/trident %s 2>&1", env ? env : "", tu_builddir(), args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void *tu_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_msg(n >= 0, "cannot size %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
    char *p = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(fread(p, 1, (size_t)n, f) == (size_t)n, "cannot read %s", path);
    fclose(f);
    p[n] = '\0';
    *size = (size_t)n;
    return p;
}

const char *tu_scratch_dir(const char *name)
{
    static char dirs[4][4096];
    static unsigned next;
    char *d = dirs[next++ % 4];
    snprintf(d, sizeof dirs[0], "%s/tests/home/%s.%ld", tu_builddir(), name, (long)getpid());
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", d, d);
    ck_assert_int_eq(system(cmd), 0);
    return d;
}

static trd_status_t tu_services_error(trd_status_t status, const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return trd_driver_error(status, "%s", msg);
}

static void tu_services_log(int32_t level, const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    trd_driver_log(level, "%s", msg);
}

const struct trd_driver_services *tu_driver_services(const char *(*config_get)(void *ctx, const char *key))
{
    static trd_driver_services_t s;
    trd_driver_services_t t = {
        .struct_size = sizeof t,
        .error = tu_services_error,
        .log = tu_services_log,
        .config_get = config_get,
        .options_get = trd_options_get,
        .options_get_int = trd_options_get_int,
        .options_get_bool = trd_options_get_bool,
        .options_is_set = trd_options_is_set,
    };
    s = t;
    return &s;
}
