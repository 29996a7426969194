/* SPDX-License-Identifier: Apache-2.0 */
/* test_double.c: the test doubles' harness (tests/doubles/double.h): the one
 * fault syntax, good specs parsed as meant and bad ones refused with a message
 * naming the entry and what was expected; call counting, the NTH rule, the
 * violation log; and the environment's spec read at load, a bad one a clear
 * exit 1. */
#include "tests/doubles/double.h"
#include "tests/testutil.h"

static struct trd_double_fault f[TRD_DOUBLE_MAX_FAULTS];
static unsigned n;
static char err[256];

START_TEST(test_parse_good)
{
    ck_assert_int_eq(trd_double_faults_parse("cuInit=3", f, TU_LEN(f), &n, err, sizeof err), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(f[0].call, "cuInit");
    ck_assert_uint_eq(f[0].nth, 1);
    ck_assert_int_eq(f[0].code, 3);
    ck_assert_int_eq(trd_double_faults_parse("zeDeviceGetProperties#2=0x70000001,hipMalloc=2,a_9#17=-5", f,
                                             TU_LEN(f), &n, err, sizeof err),
                     0);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(f[0].call, "zeDeviceGetProperties");
    ck_assert_uint_eq(f[0].nth, 2);
    ck_assert_int_eq(f[0].code, 0x70000001);
    ck_assert_str_eq(f[1].call, "hipMalloc");
    ck_assert_uint_eq(f[1].nth, 1);
    ck_assert_int_eq(f[1].code, 2);
    ck_assert_str_eq(f[2].call, "a_9");
    ck_assert_uint_eq(f[2].nth, 17);
    ck_assert_int_eq(f[2].code, -5);
    ck_assert_int_eq(trd_double_faults_parse("", f, TU_LEN(f), &n, err, sizeof err), 0);
    ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_parse_bad)
{
    static const struct {
        const char *spec, *message;
    } bad[] = {
        {"cuInit", "fault 'cuInit': expected CALL[#NTH]=CODE, found no '='"},
        {"=3", "fault '=3': the call name must be 1 to 63 characters"},
        {"cu Init=3", "fault 'cu Init=3': the call name 'cu Init' is not an identifier"},
        {"cuInit#0=3", "fault 'cuInit#0=3': NTH '0' is not a call number from 1 to 1000000"},
        {"cuInit#=3", "fault 'cuInit#=3': NTH '' is not a call number from 1 to 1000000"},
        {"cuInit#2x=3", "fault 'cuInit#2x=3': NTH '2x' is not a call number from 1 to 1000000"},
        {"cuInit#-1=3", "fault 'cuInit#-1=3': NTH '-1' is not a call number from 1 to 1000000"},
        {"cuInit=", "fault 'cuInit=': CODE '' is not a nonzero status (decimal or 0x hex)"},
        {"cuInit=0", "fault 'cuInit=0': CODE '0' is not a nonzero status (decimal or 0x hex)"},
        {"cuInit=7oo", "fault 'cuInit=7oo': CODE '7oo' is not a nonzero status (decimal or 0x hex)"},
        {"cuInit=0x1ffffffff", "fault 'cuInit=0x1ffffffff': CODE '0x1ffffffff' is not a nonzero status (decimal or 0x hex)"},
        {"cuInit:0x3", "fault 'cuInit:0x3': expected CALL[#NTH]=CODE, found no '='"},
        {"cuInit=3,,cuCtx=1", "fault spec 'cuInit=3,,cuCtx=1': an empty entry at offset 9"},
        {",cuInit=3", "fault spec ',cuInit=3': an empty entry at offset 0"},
        {"cuInit=3,", "fault spec 'cuInit=3,': a trailing ','"},
    };
    f[0].code = 42;
    n = 42;
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        err[0] = '\0';
        ck_assert_msg(trd_double_faults_parse(bad[i].spec, f, TU_LEN(f), &n, err, sizeof err) == -1, "%s",
                      bad[i].spec);
        ck_assert_str_eq(err, bad[i].message);
        ck_assert_uint_eq(n, 42); /* out-parameters untouched on failure */
        ck_assert_int_eq(f[0].code, 42);
    }
    char many[1024] = "";
    for (int i = 0; i <= TRD_DOUBLE_MAX_FAULTS; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%sc%d=1", i ? "," : "", i);
    ck_assert_int_eq(trd_double_faults_parse(many, f, TU_LEN(f), &n, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "more than 16 faults"));
}
END_TEST

static struct trd_double d;

START_TEST(test_enter_counts_and_faults)
{
    unsetenv(TRD_DOUBLE_FAULTS_ENV);
    trd_double_init(&d, "unit", sizeof d);
    ck_assert_int_eq(trd_double_fail(&d, "b#3=7,c=9", err, sizeof err), 0);
    ck_assert_int_eq(trd_double_enter(&d, "a"), 0);
    ck_assert_int_eq(trd_double_enter(&d, "b"), 0);
    ck_assert_int_eq(trd_double_enter(&d, "b"), 0);
    ck_assert_int_eq(trd_double_enter(&d, "b"), 7); /* the 3rd and every later call */
    ck_assert_int_eq(trd_double_enter(&d, "b"), 7);
    ck_assert_int_eq(trd_double_enter(&d, "c"), 9);
    ck_assert_uint_eq(trd_double_calls(&d, "a"), 1);
    ck_assert_uint_eq(trd_double_calls(&d, "b"), 4);
    ck_assert_uint_eq(trd_double_calls(&d, "c"), 1);
    ck_assert_uint_eq(trd_double_calls(&d, "d"), 0);
    /* a bad spec leaves the faults set before */
    ck_assert_int_eq(trd_double_fail(&d, "c=x", err, sizeof err), -1);
    ck_assert_int_eq(trd_double_enter(&d, "c"), 9);
    /* an empty one clears them */
    ck_assert_int_eq(trd_double_fail(&d, "", err, sizeof err), 0);
    ck_assert_int_eq(trd_double_enter(&d, "c"), 0);

    ck_assert_uint_eq(trd_double_violation_count(&d), 0);
    ck_assert_ptr_null(trd_double_violation_get(&d, 0));
    trd_double_violation(&d, "handle %d freed twice", 5);
    ck_assert_uint_eq(trd_double_violation_count(&d), 1);
    ck_assert_str_eq(trd_double_violation_get(&d, 0), "handle 5 freed twice");
    for (int i = 0; i < TRD_DOUBLE_MAX_VIOLATIONS + 3; i++)
        trd_double_violation(&d, "v%d", i);
    ck_assert_uint_eq(trd_double_violation_count(&d), TRD_DOUBLE_MAX_VIOLATIONS + 4); /* all counted */
    ck_assert_ptr_null(trd_double_violation_get(&d, TRD_DOUBLE_MAX_VIOLATIONS));      /* the first ones kept */
    trd_double_clear(&d);
    ck_assert_uint_eq(trd_double_violation_count(&d), 0);
    ck_assert_uint_eq(trd_double_calls(&d, "b"), 0);
}
END_TEST

START_TEST(test_env)
{
    setenv(TRD_DOUBLE_FAULTS_ENV, "x#2=5", 1);
    trd_double_init(&d, "unit", sizeof d);
    ck_assert_int_eq(trd_double_enter(&d, "x"), 0);
    ck_assert_int_eq(trd_double_enter(&d, "x"), 5);
    unsetenv(TRD_DOUBLE_FAULTS_ENV);
}
END_TEST

START_TEST(test_env_bad)
{
    setenv(TRD_DOUBLE_FAULTS_ENV, "x#2:5", 1);
    trd_double_init(&d, "unit", sizeof d); /* stderr: "unit: TRD_DOUBLE_FAULTS: fault 'x#2:5': ..." */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("double");
    TCase *tc = tcase_create("faults");
    tcase_add_test(tc, test_parse_good);
    tcase_add_test(tc, test_parse_bad);
    tcase_add_test(tc, test_enter_counts_and_faults);
    tcase_add_test(tc, test_env);
    suite_add_tcase(s, tc);
    TCase *fork = tcase_create("exit");
    if (strcmp(getenv("CK_FORK") ? getenv("CK_FORK") : "", "no") != 0)
        tcase_add_exit_test(fork, test_env_bad, 1);
    suite_add_tcase(s, fork);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
