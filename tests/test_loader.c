/* SPDX-License-Identifier: Apache-2.0 */
/* test_loader.c: driver discovery with real dlopen of the driver double
 * (tests/drivers/driver_double.h), its facts and faults set by each test:
 * broken modules are refused with a reason, good ones keep working, a
 * version-1 module still runs (tests/drivers/v1_driver.c), duplicated
 * physical devices are served once, devices are selected by URI, index and
 * property, and a launch reaches the driver with the right geometry and
 * packed arguments. */
#include <stdlib.h>
#include <unistd.h>

#include <trident/driver.h>

#include "tests/drivers/driver_double.h"
#include "tests/testutil.h"

/* The GPU drivers these tests load: tda with two devices (PCI 0000:80:00.0 and 0000:81:00.0), tdb, tdgfx. */
static struct tdd_state *tda(void)
{
    return tdd_facts(tdd_open("td_a", NULL), "tda", "cuda", "sm90", 2, NULL);
}

static struct tdd_state *tdb(void)
{
    return tdd_facts(tdd_open("td_b", NULL), "tdb", "cuda", "sm80", 1, "0000:90:00.0");
}

static struct tdd_state *tdgfx(void)
{
    return tdd_facts(tdd_open("td_gfx", NULL), "tdgfx", "hip", "gfx1100", 1, "0000:a0:00.0");
}

/* A double named `name` whose one fault is `spec`. */
static struct tdd_state *faulty(const char *file, const char *name, const char *spec)
{
    struct tdd_state *st = tdd_facts(tdd_open(file, NULL), name, "cuda", "sm90", 1, NULL);
    char err[256];
    ck_assert_msg(trd_double_fail(&st->common, spec, err, sizeof err) == 0, "%s", err);
    return st;
}

static const trd_driver_info_t *find_driver(trd_runtime_t *rt, const char *name, trd_driver_info_t *info)
{
    uint32_t n = 0;
    TU_OK(trd_runtime_driver_count(rt, &n));
    for (uint32_t i = 0; i < n; i++) {
        info->struct_size = sizeof *info;
        TU_OK(trd_runtime_driver_info(rt, i, info));
        if (!strcmp(info->name, name))
            return info;
    }
    return NULL;
}

START_TEST(broken_modules_are_refused)
{
    tdd_open("td_badabi", NULL)->abi_version = 99;
    tdd_open("td_small", NULL)->table_size = 24;
    tdd_open("td_nullfn", NULL)->no_launch = 1;
    char spec[64];
    snprintf(spec, sizeof spec, "init=%d", TRD_ERR_DEVICE);
    faulty("td_initfail", "tdinitfail", spec);
    snprintf(spec, sizeof spec, "init=%d", TRD_ERR_UNSUPPORTED); /* the vendor library missing: skipped */
    faulty("td_unsup", "tdunsup", spec);
    struct tdd_state *zero = tdd_facts(tdd_open("td_zero", NULL), "tdzero", "cuda", "sm90", 0, NULL);
    snprintf(zero->note, sizeof zero->note, "0 devices: fakeErrorNoDevice (100)");
    tda();
    const char *names[] = {"td_badabi", "td_small", "td_nullfn", "td_initfail", "td_unsup", "td_zero", "td_a"};
    /* a shared object without the entry (a host kernel) first */
    trd_runtime_t *rt = tu_runtime(tu_path("%s:%s", tu_undeclared_kernel(), tdd_paths(names, 7)), NULL);
    trd_driver_info_t info;
    struct {
        const char *name;
        int32_t status;
        const char *reason;
    } want[] = {
        {"undeclared_kernel.so", TRD_DRIVER_FAILED, "no 'trd_driver_entry' symbol"},
        {"td_badabi.so", TRD_DRIVER_FAILED, "driver ABI version 99 is not supported (this trident supports 1 to 2)"},
        {"td_small.so", TRD_DRIVER_FAILED, "ops table is 24 bytes"},
        {"td_nullfn.so", TRD_DRIVER_FAILED, "required function 'launch' is NULL"},
        {"tdinitfail", TRD_DRIVER_FAILED, "tdinitfail: init: injected status"},
        {"tdunsup", TRD_DRIVER_SKIPPED, "tdunsup: init: injected status"},
        {"tdzero", TRD_DRIVER_LOADED, "0 devices: fakeErrorNoDevice (100)"},
        {"tda", TRD_DRIVER_LOADED, ""},
    };
    for (size_t i = 0; i < TU_LEN(want); i++) {
        ck_assert_msg(find_driver(rt, want[i].name, &info), "driver %s not listed", want[i].name);
        ck_assert_msg(info.status == want[i].status, "%s: status %d", want[i].name, info.status);
        ck_assert_msg(strstr(info.reason, want[i].reason), "%s: reason '%s' lacks '%s'", want[i].name, info.reason,
                      want[i].reason);
        ck_assert_str_eq(info.path, i ? tdd_path(names[i - 1]) : tu_undeclared_kernel());
    }
    ck_assert_uint_eq(find_driver(rt, "tda", &info)->device_count, 2);
    ck_assert_uint_eq(find_driver(rt, "tdzero", &info)->device_count, 0);
    /* the host driver is always there: built in, or the module */
    ck_assert_ptr_nonnull(find_driver(rt, "host", &info));
    ck_assert_str_eq(info.path, TRD_HOST_EMBEDDED ? "(built-in)" : tu_path("%s/drivers/host/.libs/trident_host.so",
                                                                           tu_builddir()));
    uint32_t n;
    TU_OK(trd_runtime_device_count(rt, &n));
    ck_assert_uint_eq(n, 3); /* tda:0, tda:1, host:0 */
    trd_runtime_destroy(rt);
}
END_TEST

/* The version-1 module: tests/drivers/v1_driver.c. */
static const char *v1_module(void)
{
    return tu_path("%s/tests/drivers/.libs/v1_driver.so", tu_builddir());
}

/* Version negotiation: the core runs every driver ABI from
 * TRD_DRIVER_ABI_MIN_VERSION to its own. A version-1 module (which links
 * libtrident for trd_driver_error) loads and works under a version-2 core,
 * beside a version-2 one; a newer module and one older than any are refused
 * with the reason. */
START_TEST(version_negotiation)
{
    tda();
    tdd_open("td_badabi", NULL)->abi_version = 99;
    tdd_open("td_old", NULL)->abi_version = 0;
    const char *names[] = {"td_a", "td_badabi", "td_old"};
    trd_runtime_t *rt = tu_runtime(tu_path("%s:%s", v1_module(), tdd_paths(names, 3)), NULL);
    trd_driver_info_t info;
    ck_assert_ptr_nonnull(find_driver(rt, "tdv1", &info));
    ck_assert_int_eq(info.status, TRD_DRIVER_LOADED);
    ck_assert_uint_eq(info.abi_version, 1);
    ck_assert_uint_eq(info.device_count, 1);
    ck_assert_ptr_nonnull(find_driver(rt, "tda", &info));
    ck_assert_int_eq(info.status, TRD_DRIVER_LOADED);
    ck_assert_uint_eq(info.abi_version, 2);
    ck_assert_uint_eq(info.device_count, 2);
    trd_device_t *dev = NULL;
    TU_OK(trd_runtime_device_find(rt, "tdv1:0", &dev));
    trd_buffer_t *b = NULL;
    TU_OK(trd_buffer_alloc(dev, 64, &b)); /* its ops run */
    uint8_t in[64], out[64];
    for (unsigned i = 0; i < sizeof in; i++)
        in[i] = (uint8_t)(i * 37 + 11);
    TU_OK(trd_buffer_write(b, 0, in, sizeof in, NULL));
    TU_OK(trd_buffer_read(b, 0, out, sizeof out, NULL));
    ck_assert_mem_eq(out, in, sizeof in);
    trd_buffer_free(b);
    ck_assert_ptr_nonnull(find_driver(rt, "td_badabi.so", &info));
    ck_assert_int_eq(info.status, TRD_DRIVER_FAILED);
    ck_assert_uint_eq(info.abi_version, 99);
    ck_assert_str_eq(info.reason, "driver ABI version 99 is not supported (this trident supports 1 to 2): the module "
                                  "is newer than this libtrident");
    ck_assert_ptr_nonnull(find_driver(rt, "td_old.so", &info));
    ck_assert_int_eq(info.status, TRD_DRIVER_FAILED);
    ck_assert_str_eq(info.reason, "driver ABI version 0 is not supported (this trident supports 1 to 2): the module "
                                  "is older than any this libtrident runs");
    trd_runtime_destroy(rt);
    /* a version-1 module's errors (trd_driver_error) and configuration (init args' config_get) reach the core */
    rt = tu_runtime(v1_module(), "[driver.tdv1]\nlibrary = /nonexistent/libvendor.so\n");
    ck_assert_ptr_nonnull(find_driver(rt, "tdv1", &info));
    ck_assert_int_eq(info.status, TRD_DRIVER_SKIPPED);
    ck_assert_str_eq(info.reason, "tdv1: no usable vendor library (library = /nonexistent/libvendor.so)");
    trd_runtime_destroy(rt);
}
END_TEST

START_TEST(paths_and_duplicates)
{
    /* relative entries are ignored; a second module of one name is skipped */
    const char *a = tdd_path("td_a");
    tda();
    char list[8192];
    snprintf(list, sizeof list, "relative/dir:%s:%s", a, a);
    trd_runtime_t *rt = tu_runtime(list, NULL);
    uint32_t n;
    TU_OK(trd_runtime_driver_count(rt, &n));
    trd_driver_info_t info = {.struct_size = sizeof info};
    TU_OK(trd_runtime_driver_info(rt, 0, &info));
    ck_assert_int_eq(info.status, TRD_DRIVER_SKIPPED);
    ck_assert_ptr_nonnull(strstr(info.reason, "not absolute"));
    TU_OK(trd_runtime_driver_info(rt, 2, &info));
    ck_assert_int_eq(info.status, TRD_DRIVER_SKIPPED);
    ck_assert_ptr_nonnull(strstr(info.reason, "driver 'tda' is already loaded"));
    TU_OK(trd_runtime_device_count(rt, &n));
    ck_assert_uint_eq(n, 3);
    trd_runtime_destroy(rt);
    /* a directory: every trident_*.so in it (none here: the built modules are not named so) */
    rt = tu_runtime(tu_path("%s/tests/drivers/.libs", tu_builddir()), NULL);
    TU_OK(trd_runtime_device_count(rt, &n));
    ck_assert_uint_eq(n, 1);
    trd_runtime_destroy(rt);
}
END_TEST

/* The places searched, in order, each with its origin and what it held (trident drivers -v). */
START_TEST(search_is_recorded)
{
    tda();
    char list[8192];
    snprintf(list, sizeof list, "relative/dir:%s:/nonexistent/dir:%s/tests/drivers/.libs", tdd_path("td_a"),
             tu_builddir());
    trd_runtime_t *rt = tu_runtime(list, NULL);
    uint32_t n;
    TU_OK(trd_runtime_driver_search_count(rt, &n));
    ck_assert_uint_eq(n, 4); /* no build tree, no installed drivers: TRD_RUNTIME_NO_DEFAULT_DRIVERS */
    const struct {
        const char *path, *problem;
        uint32_t modules;
    } want[] = {{"relative/dir", "not an absolute path: ignored", 0},
                {tdd_path("td_a"), NULL, 1},
                {"/nonexistent/dir", "No such file or directory", 0},
                {tu_path("%s/tests/drivers/.libs", tu_builddir()), NULL, 0}};
    for (uint32_t i = 0; i < n; i++) {
        trd_driver_search_t e = {.struct_size = sizeof e};
        TU_OK(trd_runtime_driver_search_info(rt, i, &e));
        ck_assert_str_eq(e.path, want[i].path);
        ck_assert_str_eq(e.origin, "trd_runtime_desc_t.driver_path");
        ck_assert_uint_eq(e.modules, want[i].modules);
        if (want[i].problem)
            ck_assert_str_eq(e.problem, want[i].problem);
        else
            ck_assert_ptr_null(e.problem);
    }
    trd_driver_search_t e = {.struct_size = sizeof e};
    TU_FAILS(trd_runtime_driver_search_info(rt, 4, &e), TRD_ERR_NOT_FOUND, "search index 4 is out of range (4 places");
    e.struct_size = 4;
    TU_FAILS(trd_runtime_driver_search_info(rt, 0, &e), TRD_ERR_VERSION, "trd_driver_search_t");
    trd_runtime_destroy(rt);
}
END_TEST

START_TEST(one_physical_device_one_driver)
{
    /* tda's device 0 and tddup's device 0 share PCI 0000:80:00.0 */
    tda();
    tdd_facts(tdd_open("td_dup", NULL), "tddup", "cuda", "sm90", 1, "0000:80:00.0")->priority = 10;
    const char *names[] = {"td_a", "td_dup"};
    trd_runtime_t *rt = tu_runtime(tdd_paths(names, 2), NULL);
    trd_driver_info_t info;
    /* td_dup has priority 10 > 0: it keeps the device */
    ck_assert_uint_eq(find_driver(rt, "tda", &info)->device_count, 1);
    ck_assert_ptr_nonnull(strstr(info.reason, "tda:0 is the same device as tddup:0"));
    ck_assert_uint_eq(find_driver(rt, "tddup", &info)->device_count, 1);
    trd_device_t *d;
    TU_FAILS(trd_runtime_device_find(rt, "tda:0", &d), TRD_ERR_NO_DEVICE, "no device matches 'tda:0'");
    TU_OK(trd_runtime_device_find(rt, "tddup:0", &d));
    TU_OK(trd_runtime_device_find(rt, "tda:1", &d));
    trd_runtime_destroy(rt);
    /* the configuration picks the driver, over priorities */
    rt = tu_runtime(tdd_paths(names, 2), "[device \"pci=0000:80:00.0\"]\ndriver = tda\n");
    ck_assert_uint_eq(find_driver(rt, "tda", &info)->device_count, 2);
    ck_assert_uint_eq(find_driver(rt, "tddup", &info)->device_count, 0);
    TU_OK(trd_runtime_device_find(rt, "tda:0", &d));
    trd_runtime_destroy(rt);
    /* and priorities can be configured */
    rt = tu_runtime(tdd_paths(names, 2), "[driver.tda]\npriority = 50\n");
    ck_assert_uint_eq(find_driver(rt, "tda", &info)->device_count, 2);
    trd_runtime_destroy(rt);
}
END_TEST

START_TEST(config_disables)
{
    tda();
    tdb();
    const char *names[] = {"td_a", "td_b"};
    trd_runtime_t *rt = tu_runtime(tdd_paths(names, 2), "[driver.tdb]\nenabled = false\n[device \"tda:1\"]\nenabled = no\n");
    trd_driver_info_t info;
    find_driver(rt, "tdb", &info);
    ck_assert_int_eq(info.status, TRD_DRIVER_SKIPPED);
    ck_assert_ptr_nonnull(strstr(info.reason, "disabled by the configuration (test.ini:2)"));
    find_driver(rt, "tda", &info);
    ck_assert_uint_eq(info.device_count, 1);
    ck_assert_ptr_nonnull(strstr(info.reason, "tda:1 disabled by the configuration (test.ini:4)"));
    trd_runtime_destroy(rt);
}
END_TEST

START_TEST(device_selection)
{
    tda();
    tdb();
    tdgfx();
    const char *names[] = {"td_a", "td_b", "td_gfx"};
    trd_runtime_t *rt = tu_runtime(tdd_paths(names, 3), NULL);
    trd_device_t *d;
    trd_device_props_t p = {.struct_size = sizeof p};
    struct {
        const char *sel, *uri;
    } cases[] = {
        {"tda:1", "tda:1"},       {"1", "tda:1"},           {"arch=sm80", "tdb:0"},
        {"backend=hip", "tdgfx:0"}, {"tdgfx", "tdgfx:0"},   {"name=gpu gfx1100", "tdgfx:0"},
        {"pci=0000:90:00.0", "tdb:0"}, {"kind=cpu", "host:0"}, {"arch=sm90,index=1", "tda:1"},
        {"driver=tda,name=#0", "tda:0"}, {"host", "host:0"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        TU_OK(trd_runtime_device_find(rt, cases[i].sel, &d));
        TU_OK(trd_device_get_props(d, &p));
        ck_assert_msg(!strcmp(p.uri, cases[i].uri), "'%s' found %s, expected %s", cases[i].sel, p.uri, cases[i].uri);
    }
    /* best: a GPU before the host, then the most memory (tda:1 has 17 GiB) */
    TU_OK(trd_runtime_device_find(rt, NULL, &d));
    TU_OK(trd_device_get_props(d, &p));
    ck_assert_str_eq(p.uri, "tda:1");
    TU_FAILS(trd_runtime_device_find(rt, "arch=sm70", &d), TRD_ERR_NO_DEVICE, "devices: tda:0 (sm90)");
    TU_FAILS(trd_runtime_device_find(rt, "colour=red", &d), TRD_ERR_INVALID_ARGUMENT, "key 'colour' is not one of");
    TU_FAILS(trd_runtime_device_find(rt, "kind=tpu", &d), TRD_ERR_INVALID_ARGUMENT, "expected gpu or cpu");
    TU_FAILS(trd_runtime_device_find(rt, "arch", &d), TRD_ERR_NO_DEVICE, "no device matches 'arch'");
    TU_FAILS(trd_runtime_device_get(rt, 9, &d), TRD_ERR_NOT_FOUND, "index 9 is out of range (5 devices)");
    /* properties a driver reports reach the caller */
    TU_OK(trd_runtime_device_find(rt, "tdb:0", &d));
    TU_OK(trd_device_get_props(d, &p));
    ck_assert_str_eq(p.driver, "tdb");
    ck_assert_str_eq(p.backend, "cuda");
    ck_assert_str_eq(p.pci_bus_id, "0000:90:00.0");
    ck_assert_uint_eq(p.memory_bytes, (uint64_t)16 << 30);
    ck_assert_uint_eq(p.max_shared_per_block_optin, 227u << 10);
    int32_t m;
    TU_OK(trd_device_matches(d, "arch=sm80", &m));
    ck_assert_int_eq(m, 1);
    trd_runtime_destroy(rt);
}
END_TEST

START_TEST(launch_reaches_the_driver)
{
    struct tdd_state *r = tda();
    snprintf(r->options[0], sizeof r->options[0], "arch");
    snprintf(r->options[1], sizeof r->options[1], "max_num_imprecise_acc_default");
    trd_runtime_t *rt = tu_runtime(tdd_path("td_a"), NULL);
    trd_device_t *d;
    TU_OK(trd_runtime_device_find(rt, "tda:1", &d));
    /* a real Triton cache entry for sm90: its metadata drives the module desc */
    trd_kernel_t *k;
    trd_kernel_desc_t kd = {.struct_size = sizeof kd, .path = tu_fixture("cuda", "cluster")};
    TU_OK(trd_kernel_create(rt, &kd, &k));
    trd_buffer_t *b;
    TU_OK(trd_buffer_alloc(d, 4096, &b));
    void *addr;
    TU_OK(trd_buffer_address(b, &addr));
    trd_stream_t *s;
    TU_OK(trd_stream_create(d, &s));
    trd_arg_t args[4] = {trd_arg_buffer(b), trd_arg_ptr((void *)0x1000), trd_arg_ptr(NULL), trd_arg_int(-7)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {3, 2, 1}, .num_args = 4, .args = args, .stream = s};
    TU_OK(trd_kernel_launch(k, &l));
    ck_assert_uint_eq(r->loads, 1);
    ck_assert_uint_eq(r->ordinal, 1);
    ck_assert_uint_eq(r->num_warps, 4);
    ck_assert_uint_eq(r->num_ctas, 2);
    ck_assert_uint_eq(r->warp_size, 32);
    ck_assert_uint_eq(r->launches, 1);
    ck_assert_uint_eq(r->grid[0], 3);
    ck_assert_uint_eq(r->grid[1], 2);
    ck_assert_uint_eq(r->nparams, 4);
    ck_assert_uint_eq(r->sizes[0], 8);
    ck_assert_uint_eq(r->sizes[3], 4);
    ck_assert_mem_eq(r->bytes[0], &addr, 8);
    uint64_t v = 0x1000;
    ck_assert_mem_eq(r->bytes[1], &v, 8);
    int32_t n = -7;
    ck_assert_mem_eq(r->bytes[3], &n, 4);
    ck_assert_int_eq(r->had_native, 0);
    /* the device's options reached module_load: arch and derived defaults */
    ck_assert_str_eq(r->option_values[0], "sm90");
    ck_assert_str_eq(r->option_values[1], "1073741824");
    /* loaded once, launched many times; a grid with zero programs is a no-op */
    TU_OK(trd_kernel_launch(k, &l));
    l.grid[1] = 0;
    TU_OK(trd_kernel_launch(k, &l));
    ck_assert_uint_eq(r->loads, 1);
    ck_assert_uint_eq(r->launches, 2);
    /* a caller's stream: native, no trident stream */
    trd_launch_t nl = {.struct_size = sizeof nl, .grid = {1, 1, 1}, .num_args = 4, .args = args, .device = d,
                       .native_stream = (void *)0xabc};
    TU_OK(trd_kernel_launch(k, &nl));
    ck_assert_int_eq(r->had_native, 1);
    ck_assert_ptr_eq(r->native, (void *)0xabc);
    /* a kernel with no image for a device says what it has */
    trd_device_t *host;
    TU_OK(trd_runtime_device_find(rt, "host:0", &host));
    int32_t ok;
    TU_OK(trd_kernel_supports(k, host, &ok));
    ck_assert_int_eq(ok, 0);
    TU_FAILS(trd_kernel_load(k, host, NULL), TRD_ERR_UNSUPPORTED, "has no image host:0 (host x86_64) can run: it has cubin for cuda:sm90, ptx for cuda:sm90");
    trd_stream_destroy(s);
    trd_buffer_free(b);
    trd_kernel_destroy(k);
    ck_assert_uint_eq(r->unloads, 1);
    trd_runtime_destroy(rt);
    tdd_assert_clean(r); /* everything the core was given it released, each once */
}
END_TEST

/* A driver's errors, through the services table, reach the caller with the driver's message. */
START_TEST(driver_errors_reach_the_caller)
{
    struct tdd_state *r = tda();
    char spec[64], err[256];
    snprintf(spec, sizeof spec, "mem_alloc#2=%d,module_load=%d", TRD_ERR_NO_MEMORY, TRD_ERR_DEVICE);
    ck_assert_msg(trd_double_fail(&r->common, spec, err, sizeof err) == 0, "%s", err);
    trd_runtime_t *rt = tu_runtime(tdd_path("td_a"), NULL);
    trd_device_t *d;
    TU_OK(trd_runtime_device_find(rt, "tda:0", &d));
    trd_buffer_t *b, *b2 = NULL;
    TU_OK(trd_buffer_alloc(d, 64, &b)); /* the first succeeds */
    TU_FAILS(trd_buffer_alloc(d, 64, &b2), TRD_ERR_NO_MEMORY, "tda: mem_alloc: injected status");
    ck_assert_ptr_null(b2);
    trd_kernel_t *k;
    trd_kernel_desc_t kd = {.struct_size = sizeof kd, .path = tu_fixture("cuda", "cluster")};
    TU_OK(trd_kernel_create(rt, &kd, &k));
    TU_FAILS(trd_kernel_load(k, d, NULL), TRD_ERR_DEVICE, "tda: module_load: injected status");
    ck_assert_uint_eq(trd_double_calls(&r->common, "mem_alloc"), 2);
    ck_assert_uint_eq(r->loads, 0);
    trd_kernel_destroy(k);
    trd_buffer_free(b);
    trd_runtime_destroy(rt);
    tdd_assert_clean(r);
}
END_TEST

START_TEST(env_driver_path)
{
    /* TRIDENT_DRIVER_PATH reaches the runtime through the configuration */
    tdb();
    setenv("TRIDENT_DRIVER_PATH", tdd_path("td_b"), 1);
    trd_runtime_t *rt = NULL;
    trd_runtime_desc_t d = {.struct_size = sizeof d, .flags = TRD_RUNTIME_NO_DEFAULT_DRIVERS};
    TU_OK(trd_runtime_create(&d, &rt));
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "tdb:0", &dev));
    trd_runtime_destroy(rt);
    unsetenv("TRIDENT_DRIVER_PATH");
    /* the build tree's own modules are found without any path */
    TU_OK(trd_runtime_create(NULL, &rt));
    trd_driver_info_t info;
    ck_assert_ptr_nonnull(find_driver(rt, "host", &info));
    ck_assert_str_eq(info.status == TRD_DRIVER_LOADED ? info.path : "not loaded",
                     TRD_HOST_EMBEDDED ? "(built-in)" : tu_path("%s/drivers/host/.libs/trident_host.so", tu_builddir()));
    trd_runtime_destroy(rt);
}
END_TEST

/* The host driver is built one way. Built in, a libtrident skips a module named "host" (it would be a second copy
 * in the process), saying why, and serves the host device itself; with --enable-host-module nothing is built in:
 * the first host module loaded is the host driver (here the path's), and the one beside libtrident is loaded only
 * when no other was. */
START_TEST(host_driver_built_one_way)
{
    tdd_facts(tdd_open("td_host", NULL), "host", "host", "x86_64", 1, "");
    trd_runtime_t *rt = tu_runtime(tdd_path("td_host"), NULL);
    uint32_t n, hosts = 0;
    TU_OK(trd_runtime_driver_count(rt, &n));
    for (uint32_t i = 0; i < n; i++) {
        trd_driver_info_t info = {.struct_size = sizeof info};
        TU_OK(trd_runtime_driver_info(rt, i, &info));
        if (strcmp(info.name, "host") != 0)
            continue;
        hosts++;
        if (!TRD_HOST_EMBEDDED) {
            ck_assert_int_eq(info.status, TRD_DRIVER_LOADED);
            ck_assert_str_eq(info.path, tdd_path("td_host"));
        } else if (strstr(info.path, "td_host.so")) {
            ck_assert_int_eq(info.status, TRD_DRIVER_SKIPPED);
            ck_assert_str_eq(info.reason, "the host driver is built into this libtrident (configure "
                                          "--enable-host-module builds it as a module instead)");
        } else {
            ck_assert_int_eq(info.status, TRD_DRIVER_LOADED);
            ck_assert_str_eq(info.path, "(built-in)");
        }
    }
    ck_assert_uint_eq(hosts, TRD_HOST_EMBEDDED ? 2 : 1);
    trd_device_t *d;
    trd_device_props_t p = {.struct_size = sizeof p};
    TU_OK(trd_runtime_device_find(rt, "host:0", &d));
    TU_OK(trd_device_get_props(d, &p));
    ck_assert_int_eq(strstr(p.name, "Test GPU") == NULL, TRD_HOST_EMBEDDED); /* whose device it is */
    trd_runtime_destroy(rt);
}
END_TEST

START_TEST(shared_runtime)
{
    trd_runtime_t *a, *b;
    TU_OK(trd_runtime_shared(&a));
    TU_OK(trd_runtime_shared(&b));
    ck_assert_ptr_eq(a, b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("loader");
    TCase *t = tcase_create("loader");
    tcase_add_test(t, broken_modules_are_refused);
    tcase_add_test(t, version_negotiation);
    tcase_add_test(t, paths_and_duplicates);
    tcase_add_test(t, search_is_recorded);
    tcase_add_test(t, one_physical_device_one_driver);
    tcase_add_test(t, config_disables);
    tcase_add_test(t, device_selection);
    tcase_add_test(t, launch_reaches_the_driver);
    tcase_add_test(t, driver_errors_reach_the_caller);
    tcase_add_test(t, env_driver_path);
    tcase_add_test(t, host_driver_built_one_way);
    tcase_add_test(t, shared_runtime);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
