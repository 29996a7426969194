/* SPDX-License-Identifier: Apache-2.0 */
/* test_levelzero.c: the Level Zero driver module (drivers/levelzero) run
 * through the REAL Level Zero loader (libze_loader.so.1), which loads the
 * test driver library tests/levelzero/zetest_driver.so as its only driver
 * (ZE_ENABLE_ALT_DRIVERS, set by main before anything calls zeInit).
 *
 * What a launch must look like is taken from the Level Zero specification
 * and Triton's Intel launcher, never from what the module happens to do:
 *   - group size (num_warps * threads_per_warp, 1, 1), group count = grid;
 *   - arguments: each kernel parameter with its size, then the global and
 *     profile scratch pointers (8 bytes each; NULL when the metadata's sizes
 *     are 0), then, for a kernel with a local-memory parameter, that argument
 *     with size = the metadata's shared and a NULL value;
 *   - build flags: the metadata's, grf_mode -> -cl-intel-*-GRF-per-thread,
 *     debug -> -g;
 *   - errors carry the ze_result_t name and value.
 * The test driver checks the SPIR-V's own parameter list and records every
 * breach of the API contract, which each test requires to be none.
 *
 * Each test runs in its own process (Check's fork mode): the loader keeps the
 * first zeInit result per process. Under CK_FORK=no (valgrind) the tests
 * that need a process of their own skip themselves visibly. */
#include <dlfcn.h>
#include <jansson.h>
#include <pthread.h>
#include <unistd.h>

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>

#include "tests/levelzero/zetest.h"
#include "tests/testutil.h"


static struct zetest_state *S; /* the test driver's, through tests/doubles/double.h */
static trd_config_t *config; /* the runtime's, destroyed by finish() */

static const char *zt_path(void)
{
    return tu_path("%s/tests/levelzero/.libs/zetest_driver.so", tu_builddir());
}

static const char *module_path(void)
{
    return tu_path("%s/drivers/levelzero/.libs/trident_levelzero.so", tu_builddir());
}

static const char *spirv_fixture(const char *file)
{
    return tu_path("%s/tests/fixtures/spirv/%s", tu_srcdir(), file);
}

static int forked(void)
{
    const char *f = getenv("CK_FORK");
    return !(f && strcmp(f, "no") == 0);
}

/* Sets the faults (tests/doubles/double.h's syntax): "" none. */
static void zt_fail(const char *spec)
{
    char err[256];
    ck_assert_msg(trd_double_fail(&S->common, spec, err, sizeof err) == 0, "%s", err);
}

/* Every test starts from the test driver's defaults. */
static void *zt_dl;

static void setup(void)
{
    unsetenv("ZE_ENABLE_LOADER_INTERCEPT");
    char err[512];
    S = trd_double_open(zt_path(), sizeof *S, &zt_dl, err, sizeof err);
    ck_assert_msg(S != NULL, "cannot open the test driver: %s", err);
}

static void no_violations(void)
{
    unsigned n = trd_double_violation_count(&S->common);
    ck_assert_msg(n == 0, "%u Level Zero contract violations, first: %s", n,
                  n ? trd_double_violation_get(&S->common, 0) : "");
}

/* Destroys the runtime and checks that every Level Zero object went away. */
static void finish(trd_runtime_t *rt)
{
    trd_runtime_destroy(rt);
    trd_config_destroy(config);
    config = NULL;
    no_violations();
    ck_assert_int_eq(S->live_kernels, 0);
    ck_assert_int_eq(S->live_modules, 0);
    ck_assert_int_eq(S->live_logs, 0);
    ck_assert_int_eq(S->live_events, 0);
    ck_assert_int_eq(S->live_pools, 0);
    ck_assert_int_eq(S->live_lists, 0);
    ck_assert_int_eq(S->live_allocs, 0);
    ck_assert_int_eq(S->live_contexts, 0);
}

/* tu_runtime(module_path(), ini), but the configuration is freed by
 * finish(): tu_runtime's is kept for the process, which valgrind reports
 * as lost (see the report of this branch). */
static trd_runtime_t *runtime_with(const char *ini)
{
    config = tu_config(ini);
    trd_runtime_desc_t d = {.struct_size = sizeof d, .flags = TRD_RUNTIME_NO_DEFAULT_DRIVERS,
                            .driver_path = module_path(), .config = config};
    trd_runtime_t *rt = NULL;
    TU_OK(trd_runtime_create(&d, &rt));
    return rt;
}

static trd_runtime_t *runtime(void)
{
    return runtime_with(NULL);
}

static trd_device_t *device(trd_runtime_t *rt, const char *uri)
{
    trd_device_t *d = NULL;
    TU_OK(trd_runtime_device_find(rt, uri, &d));
    return d;
}

/* A fixture's metadata with `changes` (a JSON object) merged over it. */
static char *fixture_meta(const char *base, const char *changes)
{
    json_error_t err;
    json_t *m = json_load_file(spirv_fixture(tu_path("%s.json", base)), 0, &err);
    ck_assert_msg(m != NULL, "%s.json: %s", base, err.text);
    if (changes) {
        json_t *c = json_loads(changes, 0, &err);
        ck_assert_msg(c != NULL, "changes: %s", err.text);
        json_object_update(m, c);
        json_decref(c);
    }
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    return text;
}

/* A kernel from a fixture as a raw SPIR-V image with its metadata. */
static trd_kernel_t *fixture_kernel(trd_runtime_t *rt, const char *base, const char *signature, const char *changes,
                                    const trd_options_t *opts)
{
    size_t size;
    void *spv = tu_read_file(spirv_fixture(tu_path("%s.spv", base)), &size);
    char *meta = fixture_meta(base, changes);
    trd_kernel_desc_t d = {
        .struct_size = sizeof d,
        .source = TRD_SOURCE_IMAGE,
        .data = spv,
        .size = size,
        .signature = signature,
        .metadata = meta,
        .format = TRD_FORMAT_SPIRV,
        .target = "xpu",
        .options = opts,
    };
    trd_kernel_t *k = NULL;
    TU_OK(trd_kernel_create(rt, &d, &k));
    free(meta);
    free(spv);
    return k;
}

static trd_buffer_t *buffer(trd_device_t *dev, size_t bytes, const void *init)
{
    trd_buffer_t *b = NULL;
    TU_OK(trd_buffer_alloc(dev, bytes, &b));
    if (init)
        TU_OK(trd_buffer_write(b, 0, init, bytes, NULL));
    return b;
}

static void *address(trd_buffer_t *b)
{
    void *a = NULL;
    TU_OK(trd_buffer_address(b, &a));
    return a;
}

/* Checks a recorded argument: a pointer (8 bytes) with the given value. */
static void check_ptr_arg(const struct zetest_launch *l, uint32_t i, const void *want)
{
    const struct zetest_arg *a = &l->args[i];
    ck_assert_msg(a->set, "argument %u was not set", i);
    ck_assert_msg(a->size == sizeof(void *), "argument %u: %u bytes, a pointer takes 8", i, a->size);
    void *got = NULL;
    if (!a->null_value)
        memcpy(&got, a->bytes, sizeof got);
    ck_assert_msg(got == want, "argument %u is %p, expected %p", i, got, want);
}

static void check_value_arg(const struct zetest_launch *l, uint32_t i, const void *want, uint32_t size)
{
    const struct zetest_arg *a = &l->args[i];
    ck_assert_msg(a->set, "argument %u was not set", i);
    ck_assert_msg(a->size == size, "argument %u: %u bytes, expected %u", i, a->size, size);
    ck_assert_msg(!a->null_value && memcmp(a->bytes, want, size) == 0, "argument %u has the wrong value", i);
}

/* Runs add_kernel over n random elements on `stream` (or the default stream)
 * and checks every output element. Returns the recorded launch. */
static const struct zetest_launch *run_add(trd_kernel_t *k, trd_device_t *dev, trd_stream_t *stream, int32_t n,
                                           uint64_t seed, void **ptrs)
{
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
    tu_fill_f32(x, (size_t)n, seed);
    tu_fill_f32(y, (size_t)n, seed + 1);
    trd_buffer_t *bx = buffer(dev, n * sizeof *x, x), *by = buffer(dev, n * sizeof *y, y);
    trd_buffer_t *bo = buffer(dev, n * sizeof *out, NULL);
    trd_arg_t args[] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)((n + 1023) / 1024), 1, 1}, .num_args = 4,
                      .args = args, .stream = stream, .device = stream ? NULL : dev};
    uint32_t before = S->launches;
    TU_OK(trd_kernel_launch(k, &l));
    if (stream)
        TU_OK(trd_stream_synchronize(stream));
    TU_OK(trd_buffer_read(bo, 0, out, n * sizeof *out, stream));
    if (stream)
        TU_OK(trd_stream_synchronize(stream));
    for (int32_t i = 0; i < n; i++)
        ck_assert_msg(out[i] == x[i] + y[i], "out[%d] = %g, expected %g", i, out[i], x[i] + y[i]);
    ck_assert_uint_eq(S->launches, before + 1);
    if (ptrs) {
        ptrs[0] = address(bx);
        ptrs[1] = address(by);
        ptrs[2] = address(bo);
    }
    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    free(x);
    free(y);
    free(out);
    return &S->launch[before];
}

/* ------------------------------------------------------------ enumeration */

static const trd_driver_info_t *levelzero_info(trd_runtime_t *rt, trd_driver_info_t *info)
{
    uint32_t n = 0;
    TU_OK(trd_runtime_driver_count(rt, &n));
    for (uint32_t i = 0; i < n; i++) {
        info->struct_size = sizeof *info;
        TU_OK(trd_runtime_driver_info(rt, i, info));
        if (strcmp(info->name, "levelzero") == 0)
            return info;
    }
    ck_abort_msg("no levelzero driver in the runtime");
    return NULL;
}

START_TEST(test_enumerate_props)
{
    S->devices = 2;
    trd_runtime_t *rt = runtime();
    trd_driver_info_t info;
    levelzero_info(rt, &info);
    ck_assert_int_eq(info.status, TRD_DRIVER_LOADED);
    ck_assert_str_eq(info.backend, "xpu");
    ck_assert_uint_eq(info.device_count, 2);
    ck_assert_str_eq(info.reason, "");
    ck_assert_uint_eq(S->init_flags, ZE_INIT_FLAG_GPU_ONLY);

    trd_device_props_t p = {.struct_size = sizeof p};
    TU_OK(trd_device_get_props(device(rt, "levelzero:0"), &p));
    ck_assert_int_eq(p.kind, TRD_DEVICE_GPU);
    ck_assert_str_eq(p.backend, "xpu");
    ck_assert_str_eq(p.name, "Intel(R) Data Center GPU Max 1100");
    ck_assert_str_eq(p.vendor, "Intel");
    ck_assert_str_eq(p.arch, "Intel(R) Data Center GPU Max 1100"); /* the name, as Triton's target.arch.name */
    ck_assert_uint_eq(p.warp_size, 32);                          /* sub-groups 16, 32: 32 */
    ck_assert_uint_eq(p.compute_units, 1 * 56 * 8);              /* slices x sub-slices x EUs */
    ck_assert_uint_eq(p.max_threads_per_block, 1024);
    ck_assert_uint_eq(p.memory_bytes, UINT64_C(48) << 30);
    ck_assert_uint_eq(p.max_shared_per_block, 128 * 1024);
    ck_assert_uint_eq(p.max_shared_per_block_optin, 128 * 1024);
    ck_assert_str_eq(p.pci_bus_id, "0000:3a:00.0");
    ck_assert(p.flags & TRD_DEVICE_HAS_UUID);
    for (int i = 0; i < 16; i++)
        ck_assert_uint_eq(p.uuid[i], 0x10 + i);

    TU_OK(trd_device_get_props(device(rt, "levelzero:1"), &p));
    ck_assert_str_eq(p.name, "Intel(R) Arc(TM) A770 Graphics");
    ck_assert_uint_eq(p.warp_size, 16);                          /* sub-groups 8, 16: no 32, the largest */
    ck_assert_uint_eq(p.compute_units, 8 * 4 * 16);
    ck_assert_uint_eq(p.max_threads_per_block, 512);
    ck_assert_uint_eq(p.memory_bytes, (UINT64_C(15) << 30) + (UINT64_C(1) << 30)); /* both heaps */
    ck_assert_uint_eq(p.max_shared_per_block, 64 * 1024);
    ck_assert_str_eq(p.pci_bus_id, "0001:03:00.0");
    ck_assert_uint_eq(p.uuid[0], 0x20);
    /* the selector syntax reaches them too */
    trd_device_t *d = NULL;
    TU_OK(trd_runtime_device_find(rt, "pci=0001:03:00.0", &d));
    TU_OK(trd_runtime_device_find(rt, "backend=xpu,name=Intel(R) Arc(TM) A770 Graphics", &d));
    finish(rt);
}
END_TEST

START_TEST(test_props_without_extensions)
{
    /* No PCI extension: no address (and the call is not made); other vendor. */
    S->no_pci = 1;
    S->vendor_id = 0x1234;
    S->sub_groups[0] = 8, S->sub_groups[1] = 16, S->sub_groups[2] = 32, S->nsub_groups = 3;
    trd_runtime_t *rt = runtime();
    trd_device_props_t p = {.struct_size = sizeof p};
    TU_OK(trd_device_get_props(device(rt, "levelzero:0"), &p));
    ck_assert_ptr_null(p.pci_bus_id);
    ck_assert_str_eq(p.vendor, "vendor 0x1234");
    ck_assert_uint_eq(p.warp_size, 32);
    finish(rt);
}
END_TEST

START_TEST(test_device_skipped_note)
{
    /* device 1's properties fail: device 0 stays, the note says why 1 is gone */
    S->devices = 2;
    zt_fail("zeDeviceGetProperties#2=0x70000001");
    trd_runtime_t *rt = runtime();
    trd_driver_info_t info;
    levelzero_info(rt, &info);
    ck_assert_uint_eq(info.device_count, 1);
    ck_assert_str_eq(info.reason, "device 1 skipped: zeDeviceGetProperties failed: ZE_RESULT_ERROR_DEVICE_LOST "
                                  "(0x70000001)");
    finish(rt);
    /* every device fails: 0 devices, and why */
    zt_fail("zeDeviceGetProperties=0x70000001");
    rt = runtime();
    levelzero_info(rt, &info);
    ck_assert_uint_eq(info.device_count, 0);
    ck_assert_msg(strncmp(info.reason, "0 devices: device 0 skipped: zeDeviceGetProperties failed: "
                                       "ZE_RESULT_ERROR_DEVICE_LOST (0x70000001); device 1 skipped",
                          strlen("0 devices: device 0 skipped: zeDeviceGetProperties failed: "
                                 "ZE_RESULT_ERROR_DEVICE_LOST (0x70000001); device 1 skipped")) == 0,
                  "reason: %s", info.reason);
    finish(rt);
}
END_TEST

START_TEST(test_init_failure_note)
{
    if (!forked()) {
        tu_skip("test_init_failure_note", "needs a process of its own (the loader keeps the first zeInit result)");
        return;
    }
    S->init_result = 0x70000001;
    trd_runtime_t *rt = runtime();
    trd_driver_info_t info;
    levelzero_info(rt, &info);
    ck_assert_int_eq(info.status, TRD_DRIVER_LOADED);
    ck_assert_uint_eq(info.device_count, 0);
    ck_assert_msg(strstr(info.reason, "0 devices: zeInit(ZE_INIT_FLAG_GPU_ONLY) returned "
                                      "ZE_RESULT_ERROR_DEVICE_LOST (0x70000001)") != NULL,
                  "reason: %s", info.reason);
    finish(rt);
}
END_TEST

START_TEST(test_library_not_found)
{
    trd_runtime_t *rt = runtime_with("[driver.levelzero]\nlibrary = /nonexistent/libze_loader.so.1:libc.so.6\n");
    trd_driver_info_t info;
    levelzero_info(rt, &info);
    ck_assert_int_eq(info.status, TRD_DRIVER_SKIPPED);
    ck_assert_uint_eq(info.device_count, 0);
    /* every path, each with why */
    ck_assert_msg(strstr(info.reason, "/nonexistent/libze_loader.so.1: ") != NULL, "reason: %s", info.reason);
    ck_assert_msg(strstr(info.reason, "No such file or directory") != NULL, "reason: %s", info.reason);
    ck_assert_msg(strstr(info.reason, "libc.so.6: required symbol zeInit is missing") != NULL, "reason: %s",
                  info.reason);
    ck_assert_uint_eq(S->init_calls, 0);
    /* the host device is still there */
    trd_device_t *host = device(rt, "host:0");
    ck_assert_ptr_nonnull(host);
    finish(rt);
}
END_TEST

/* ---------------------------------------------------------------- launches */

START_TEST(test_launch_add_bundle)
{
    S->spill_bytes = 4096;
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    size_t size;
    void *spv = tu_read_file(spirv_fixture("add_kernel.spv"), &size);
    char *meta = fixture_meta("add_kernel", NULL);
    trd_bundle_target_t t = {.struct_size = sizeof t, .format = TRD_FORMAT_SPIRV, .backend = "xpu", .arch = "",
                             .image = spv, .image_size = size, .metadata = meta};
    void *data = NULL;
    uint64_t dsize = 0;
    TU_OK(trd_bundle_write("add_kernel", "*fp32,*fp32,*fp32,i32", &t, 1, &data, &dsize));
    trd_kernel_desc_t kd = {.struct_size = sizeof kd, .source = TRD_SOURCE_BUNDLE, .data = data, .size = dsize};
    trd_kernel_t *k = NULL;
    TU_OK(trd_kernel_create(rt, &kd, &k));
    trd_free(data);
    free(meta);
    free(spv);

    trd_load_info_t li = {.struct_size = sizeof li};
    TU_OK(trd_kernel_load(k, dev, &li));
    ck_assert_int_eq(li.format, TRD_FORMAT_SPIRV);
    ck_assert_uint_eq(li.block_size, 4 * 32);
    ck_assert_uint_eq(li.spills, 4096 / (4 * 32)); /* spill bytes per thread / (4 x sub-group size) */
    ck_assert_uint_eq(li.registers, 0);            /* no GRF mode fixed by the flags */
    ck_assert_uint_eq(li.max_threads_per_block, 1024);
    ck_assert_uint_eq(S->builds, 1);
    ck_assert_uint_eq(S->build[0].format, ZE_MODULE_FORMAT_IL_SPIRV);
    ck_assert_str_eq(S->build[0].flags, "");
    ck_assert_uint_eq(S->build[0].size, size);

    trd_stream_t *s = NULL;
    TU_OK(trd_stream_create(dev, &s));
    void *ptrs[3];
    int32_t n = 5000; /* not a multiple of the 1024-element block */
    const struct zetest_launch *l = run_add(k, dev, s, n, 42, ptrs);
    ck_assert_str_eq(l->name, "add_kernel");
    ck_assert(l->emulated);
    void *native = NULL;
    TU_OK(trd_stream_native(s, &native));
    ck_assert_uint_eq(l->list, (uint64_t)(uintptr_t)native);
    ck_assert_uint_eq(l->list_ordinal, 1); /* device 0's compute group is ordinal 1 (0 is copy-only) */
    ck_assert_uint_eq(l->list_context, l->kernel_context);
    /* group size (num_warps * threads_per_warp, 1, 1), group count = grid */
    ck_assert_uint_eq(l->group[0], 4 * 32);
    ck_assert_uint_eq(l->group[1], 1);
    ck_assert_uint_eq(l->group[2], 1);
    ck_assert_uint_eq(l->count[0], 5);
    ck_assert_uint_eq(l->count[1], 1);
    ck_assert_uint_eq(l->count[2], 1);
    /* x, y, out, n, then global and profile scratch (NULL: sizes 0) */
    ck_assert_uint_eq(l->nargs, 6);
    check_ptr_arg(l, 0, ptrs[0]);
    check_ptr_arg(l, 1, ptrs[1]);
    check_ptr_arg(l, 2, ptrs[2]);
    check_value_arg(l, 3, &n, 4);
    check_ptr_arg(l, 4, NULL);
    check_ptr_arg(l, 5, NULL);
    ck_assert_uint_eq(S->unordered, 0);
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

START_TEST(test_launch_grid_default_stream)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", NULL, NULL);
    trd_buffer_t *b = buffer(dev, 4096, NULL);
    trd_arg_t args[] = {trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_int(0)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {3, 2, 4}, .num_args = 4, .args = args, .device = dev};
    TU_OK(trd_kernel_launch(k, &l));
    ck_assert_uint_eq(S->launches, 1);
    ck_assert_uint_eq(S->launch[0].count[0], 3);
    ck_assert_uint_eq(S->launch[0].count[1], 2);
    ck_assert_uint_eq(S->launch[0].count[2], 4);
    /* a zero in the grid launches nothing */
    for (int z = 0; z < 3; z++) {
        trd_launch_t e = l;
        e.grid[z] = 0;
        TU_OK(trd_kernel_launch(k, &e));
    }
    ck_assert_uint_eq(S->launches, 1);
    /* more groups than the device counts in y: refused with the limits */
    trd_launch_t big = l;
    big.grid[1] = 70000;
    TU_FAILS(trd_kernel_launch(k, &big), TRD_ERR_LIMIT, "exceeds the group counts levelzero:0 allows");
    ck_assert_uint_eq(S->launches, 1);
    /* a second launch on the default stream is ordered after the first */
    TU_OK(trd_kernel_launch(k, &l));
    ck_assert(S->launch[1].ordered);
    ck_assert_uint_eq(S->unordered, 0);
    trd_buffer_free(b);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

START_TEST(test_launch_slm_and_scalars)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "slm_kernel", "*fp32,*fp32,i32,fp32,i64", NULL, NULL);
    int32_t n = 1000;
    float *x = malloc(n * sizeof *x), *out = malloc(n * sizeof *out);
    tu_fill_f32(x, (size_t)n, 7);
    trd_buffer_t *bx = buffer(dev, n * sizeof *x, x), *bo = buffer(dev, n * sizeof *out, NULL);
    float alpha = -1.75f;
    int64_t stride = 3;
    trd_arg_t args[] = {trd_arg_buffer(bx), trd_arg_buffer(bo), trd_arg_int(n), trd_arg_float(alpha),
                        trd_arg_int(stride)};
    trd_stream_t *s = NULL;
    TU_OK(trd_stream_create(dev, &s));
    trd_launch_t l = {.struct_size = sizeof l, .grid = {4, 1, 1}, .num_args = 5, .args = args, .stream = s};
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_buffer_read(bo, 0, out, n * sizeof *out, s));
    TU_OK(trd_stream_synchronize(s));
    for (int32_t i = 0; i < n; i++)
        ck_assert_msg(out[i] == alpha * x[i] + (float)stride, "out[%d] = %g", i, out[i]);
    const struct zetest_launch *r = &S->launch[0];
    ck_assert(r->emulated);
    ck_assert_uint_eq(r->group[0], 8 * 16); /* num_warps 8 x threads_per_warp 16 */
    ck_assert_uint_eq(r->nargs, 8);
    check_ptr_arg(r, 0, address(bx));
    check_ptr_arg(r, 1, address(bo));
    check_value_arg(r, 2, &n, 4);
    check_value_arg(r, 3, &alpha, 4);
    check_value_arg(r, 4, &stride, 8);
    check_ptr_arg(r, 5, NULL);
    check_ptr_arg(r, 6, NULL);
    /* the shared-local-memory argument: size = shared, value NULL */
    ck_assert(r->args[7].set);
    ck_assert_uint_eq(r->args[7].size, 4096);
    ck_assert(r->args[7].null_value);
    /* the metadata's build flags are passed on */
    ck_assert_str_eq(S->build[0].flags, "-cl-fp32-correctly-rounded-divide-sqrt");
    trd_stream_destroy(s);
    trd_buffer_free(bx);
    trd_buffer_free(bo);
    free(x);
    free(out);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

START_TEST(test_second_device)
{
    /* Each device has its own context and its own compute queue group
     * (device 1's is ordinal 0); a kernel loads for each device. */
    S->devices = 2;
    trd_runtime_t *rt = runtime();
    trd_device_t *d0 = device(rt, "levelzero:0"), *d1 = device(rt, "levelzero:1");
    trd_kernel_t *k = fixture_kernel(rt, "slm_kernel", "*fp32,*fp32,i32,fp32,i64", NULL, NULL);
    trd_buffer_t *b0 = buffer(d0, 1024, NULL), *b1 = buffer(d1, 1024, NULL);
    trd_arg_t a0[] = {trd_arg_buffer(b0), trd_arg_buffer(b0), trd_arg_int(256), trd_arg_float(1), trd_arg_int(0)};
    trd_arg_t a1[] = {trd_arg_buffer(b1), trd_arg_buffer(b1), trd_arg_int(256), trd_arg_float(1), trd_arg_int(0)};
    trd_launch_t l0 = {.struct_size = sizeof l0, .grid = {1, 1, 1}, .num_args = 5, .args = a0, .device = d0};
    trd_launch_t l1 = {.struct_size = sizeof l1, .grid = {1, 1, 1}, .num_args = 5, .args = a1, .device = d1};
    TU_OK(trd_kernel_launch(k, &l0));
    TU_OK(trd_kernel_launch(k, &l1));
    ck_assert_uint_eq(S->launches, 2);
    ck_assert_uint_eq(S->builds, 2);
    ck_assert_uint_eq(S->launch[0].list_ordinal, 1);
    ck_assert_uint_eq(S->launch[1].list_ordinal, 0);
    ck_assert_uint_ne(S->launch[0].list_context, S->launch[1].list_context);
    ck_assert_uint_eq(S->launch[1].list_context, S->launch[1].kernel_context);
    ck_assert_uint_eq(S->build[1].context, S->launch[1].list_context);
    /* add_kernel needs sub-group 32, which device 1 lacks */
    trd_kernel_t *add = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", NULL, NULL);
    TU_FAILS(trd_kernel_load(add, d1, NULL), TRD_ERR_UNSUPPORTED, "32 threads per warp, not a sub-group size");
    trd_kernel_destroy(add);
    trd_buffer_free(b0);
    trd_buffer_free(b1);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

START_TEST(test_static_shared_memory)
{
    /* shared > 0 but no local-memory parameter (Triton allocates it
     * statically): no extra argument is bound. */
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", "{\"shared\": 2048}", NULL);
    const struct zetest_launch *l = run_add(k, dev, NULL, 300, 3, NULL);
    ck_assert_uint_eq(l->nargs, 6);
    ck_assert(!l->args[6].set);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

START_TEST(test_argument_count_mismatch)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    /* a signature one parameter short of the kernel's */
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32", NULL, NULL);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_FORMAT, "takes 6 arguments, but a Triton launch passes 5");
    trd_kernel_destroy(k);
    /* a local-memory parameter but shared 0 in the metadata */
    k = fixture_kernel(rt, "slm_kernel", "*fp32,*fp32,i32,fp32,i64", "{\"shared\": 0}", NULL);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_FORMAT, "takes 8 arguments, but a Triton launch passes 7");
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

START_TEST(test_geometry_from_metadata)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    /* the SPIR-V requires sub-group 32; metadata claiming 16 is refused */
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", "{\"threads_per_warp\": 16}", NULL);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_FORMAT, "requires sub-group size 32");
    trd_kernel_destroy(k);
    /* a sub-group size the device lacks */
    k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", "{\"threads_per_warp\": 64}", NULL);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_UNSUPPORTED, "not a sub-group size of levelzero:0");
    trd_kernel_destroy(k);
    /* more work-items per group than the device allows */
    k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", "{\"num_warps\": 64}", NULL);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_LIMIT, "64 x threads_per_warp 32 = 2048 work-items");
    trd_kernel_destroy(k);
    /* the kernel's metadata decides, not the device's preferred warp size */
    k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", "{\"num_warps\": 2}", NULL);
    const struct zetest_launch *l = run_add(k, dev, NULL, 2048, 9, NULL);
    ck_assert_uint_eq(l->group[0], 2 * 32);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

/* -------------------------------------------------------------- build flags */

/* The build flags of add_kernel loaded with these options; `registers` is
 * what the load must report: the GRF count the final flags fix, else 0. */
static const char *flags_with(const char *grf_mode, int debug, const char *meta_changes, uint32_t registers)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_options_t *o = NULL;
    TU_OK(trd_options_create("xpu", &o));
    if (grf_mode)
        TU_OK(trd_options_set(o, "grf_mode", grf_mode));
    if (debug)
        TU_OK(trd_options_set_bool(o, "debug", 1));
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", meta_changes, o);
    trd_options_destroy(o);
    trd_load_info_t li = {.struct_size = sizeof li};
    TU_OK(trd_kernel_load(k, dev, &li));
    ck_assert_uint_eq(S->builds, 1);
    ck_assert_uint_eq(li.registers, registers);
    trd_kernel_destroy(k);
    finish(rt);
    return S->build[0].flags;
}

START_TEST(test_build_flags)
{
    switch (_i) {
    case 0:
        ck_assert_str_eq(flags_with("256", 0, NULL, 256), "-cl-intel-256-GRF-per-thread");
        break;
    case 1:
        ck_assert_str_eq(flags_with("auto", 0, NULL, 0), "-cl-intel-enable-auto-large-GRF-mode");
        break;
    case 2:
        ck_assert_str_eq(flags_with(NULL, 1, NULL, 0), "-g");
        break;
    case 3: /* the metadata's flags come first; an option's GRF mode replaces the metadata's */
        ck_assert_str_eq(flags_with("512", 1, "{\"build_flags\": \"-cl-fp32-correctly-rounded-divide-sqrt "
                                              "-cl-intel-128-GRF-per-thread\"}", 512),
                         "-cl-fp32-correctly-rounded-divide-sqrt -cl-intel-512-GRF-per-thread -g");
        break;
    case 4: /* default grf_mode keeps the metadata's GRF flag; -g is not repeated */
        ck_assert_str_eq(flags_with("default", 1, "{\"build_flags\": \"-cl-intel-128-GRF-per-thread -g\"}", 128),
                         "-cl-intel-128-GRF-per-thread -g");
        break;
    default:
        ck_abort();
    }
}
END_TEST

START_TEST(test_build_failure_log)
{
    zt_fail("zeModuleCreate=0x70000004");
    snprintf(S->build_log, sizeof S->build_log, "error: total scratch space exceeds HW supported limit");
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", NULL, NULL);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_FORMAT,
             "zeModuleCreate failed: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE (0x70000004)");
    const char *msg = trd_error_message();
    ck_assert_msg(strstr(msg, "loading kernel 'add_kernel'") && strstr(msg, "levelzero:0"), "%s", msg);
    ck_assert_msg(strstr(msg, "build log: error: total scratch space exceeds HW supported limit"), "%s", msg);
    ck_assert_int_eq(S->live_logs, 0); /* the log was destroyed */
    ck_assert_int_eq(S->live_modules, 0);
    /* the failure sticks: a launch loop does not rebuild */
    trd_arg_t args[] = {trd_arg_ptr(NULL), trd_arg_ptr(NULL), trd_arg_ptr(NULL), trd_arg_int(0)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {1, 1, 1}, .num_args = 4, .args = args, .device = dev};
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_FORMAT, "build log:");
    ck_assert_uint_eq(S->builds, 1);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

START_TEST(test_invalid_spirv)
{
    /* a real build failure of the test driver: the image is not SPIR-V */
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    uint32_t junk[16] = {0x07230203, 0x00010400, 0, 0 /* id bound 0 */, 0};
    char *meta = fixture_meta("add_kernel", NULL);
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_IMAGE, .data = junk, .size = sizeof junk,
                           .signature = "*fp32,*fp32,*fp32,i32", .metadata = meta, .format = TRD_FORMAT_SPIRV,
                           .target = "xpu"};
    trd_kernel_t *k = NULL;
    TU_OK(trd_kernel_create(rt, &d, &k));
    free(meta);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_FORMAT, "build log: error: bad SPIR-V id bound");
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

/* ------------------------------------------------------------------ scratch */

START_TEST(test_scratch_arena)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32",
                                     "{\"global_scratch_size\": 100, \"global_scratch_align\": 64,"
                                     " \"profile_scratch_size\": 24, \"profile_scratch_align\": 8}",
                                     NULL);
    trd_stream_t *s = NULL;
    TU_OK(trd_stream_create(dev, &s));
    trd_buffer_t *b = buffer(dev, 64, NULL);
    trd_arg_t args[] = {trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_int(0)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {10, 1, 1}, .num_args = 4, .args = args, .stream = s};
    uint32_t allocs = S->device_allocs;
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_kernel_launch(k, &l));
    ck_assert_uint_eq(S->launches, 2);
    void *g0, *p0, *g1, *p1;
    memcpy(&g0, S->launch[0].args[4].bytes, 8);
    memcpy(&p0, S->launch[0].args[5].bytes, 8);
    memcpy(&g1, S->launch[1].args[4].bytes, 8);
    memcpy(&p1, S->launch[1].args[5].bytes, 8);
    ck_assert_ptr_nonnull(g0);
    ck_assert_ptr_nonnull(p0);
    ck_assert_uint_eq((uintptr_t)g0 % 64, 0);
    ck_assert_uint_eq((uintptr_t)p0 % 8, 0);
    /* 10 programs x 128 (100 aligned to 64) bytes of global scratch before the profile scratch */
    ck_assert((char *)p0 >= (char *)g0 + 10 * 128);
    /* reused, not reallocated */
    ck_assert_ptr_eq(g0, g1);
    ck_assert_ptr_eq(p0, p1);
    ck_assert_uint_eq(S->device_allocs, allocs + 1);
    /* a bigger grid grows the arena (once; at least twice as large) */
    trd_launch_t big = l;
    big.grid[0] = 4000;
    TU_OK(trd_kernel_launch(k, &big));
    TU_OK(trd_kernel_launch(k, &big));
    ck_assert_uint_eq(S->device_allocs, allocs + 2);
    void *g2, *p2;
    memcpy(&g2, S->launch[3].args[4].bytes, 8);
    memcpy(&p2, S->launch[3].args[5].bytes, 8);
    ck_assert((char *)p2 >= (char *)g2 + 4000 * 128);
    /* caller-provided global scratch is passed as is */
    trd_buffer_t *mine = buffer(dev, 4000 * 128, NULL);
    trd_launch_t own = big;
    own.global_scratch = address(mine);
    TU_OK(trd_kernel_launch(k, &own));
    check_ptr_arg(&S->launch[4], 4, address(mine));
    ck_assert_uint_eq(S->device_allocs, allocs + 3); /* only `mine` */
    /* the replaced block is kept while launches queued before may use it, freed by the synchronize */
    int32_t live = S->live_allocs;
    TU_OK(trd_stream_synchronize(s));
    ck_assert_int_eq(S->live_allocs, live - 1);
    ck_assert_uint_eq(S->unordered, 0);
    trd_stream_destroy(s);
    trd_buffer_free(mine);
    trd_buffer_free(b);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

/* ------------------------------------------------------------- foreign lists */

struct l0 {
    void *dl;
    ze_result_t (*Init)(ze_init_flags_t);
    ze_result_t (*DriverGet)(uint32_t *, ze_driver_handle_t *);
    ze_result_t (*DeviceGet)(ze_driver_handle_t, uint32_t *, ze_device_handle_t *);
    ze_result_t (*ContextCreate)(ze_driver_handle_t, const ze_context_desc_t *, ze_context_handle_t *);
    ze_result_t (*ContextDestroy)(ze_context_handle_t);
    ze_result_t (*ListCreateImmediate)(ze_context_handle_t, ze_device_handle_t, const ze_command_queue_desc_t *,
                                       ze_command_list_handle_t *);
    ze_result_t (*ListDestroy)(ze_command_list_handle_t);
};

static void l0_open(struct l0 *z)
{
    z->dl = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(z->dl != NULL, "%s", dlerror());
    *(void **)&z->Init = dlsym(z->dl, "zeInit");
    *(void **)&z->DriverGet = dlsym(z->dl, "zeDriverGet");
    *(void **)&z->DeviceGet = dlsym(z->dl, "zeDeviceGet");
    *(void **)&z->ContextCreate = dlsym(z->dl, "zeContextCreate");
    *(void **)&z->ContextDestroy = dlsym(z->dl, "zeContextDestroy");
    *(void **)&z->ListCreateImmediate = dlsym(z->dl, "zeCommandListCreateImmediate");
    *(void **)&z->ListDestroy = dlsym(z->dl, "zeCommandListDestroy");
    ck_assert(z->Init && z->DriverGet && z->DeviceGet && z->ContextCreate && z->ContextDestroy &&
              z->ListCreateImmediate && z->ListDestroy);
}

START_TEST(test_foreign_command_list)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", NULL, NULL);
    /* The application's own immediate command list, through the same loader. */
    struct l0 z;
    l0_open(&z);
    ck_assert_int_eq(z.Init(ZE_INIT_FLAG_GPU_ONLY), ZE_RESULT_SUCCESS);
    uint32_t n = 1;
    ze_driver_handle_t drv;
    ze_device_handle_t zdev;
    ck_assert_int_eq(z.DriverGet(&n, &drv), ZE_RESULT_SUCCESS);
    n = 1;
    ck_assert_int_eq(z.DeviceGet(drv, &n, &zdev), ZE_RESULT_SUCCESS);
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t ctx;
    ck_assert_int_eq(z.ContextCreate(drv, &cd, &ctx), ZE_RESULT_SUCCESS);
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, .ordinal = 1,
                                  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_list_handle_t list;
    ck_assert_int_eq(z.ListCreateImmediate(ctx, zdev, &qd, &list), ZE_RESULT_SUCCESS);

    trd_stream_t *s = NULL;
    TU_OK(trd_stream_wrap(dev, list, &s));
    void *native = NULL;
    TU_OK(trd_stream_native(s, &native));
    ck_assert_ptr_eq(native, list);
    const struct zetest_launch *l = run_add(k, dev, s, 3000, 11, NULL);
    ck_assert_uint_eq(l->list, (uint64_t)(uintptr_t)list);
    ck_assert(l->ordered); /* after whatever the application appended before */
    trd_stream_destroy(s);
    ck_assert_int_eq(S->live_lists, 2); /* trident's default stream, and the application's list, untouched */

    /* a launch naming the native list without a trident stream */
    trd_buffer_t *b = buffer(dev, 4096, NULL);
    trd_arg_t args[] = {trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_int(1024)};
    trd_launch_t bare = {.struct_size = sizeof bare, .grid = {1, 1, 1}, .num_args = 4, .args = args,
                         .device = dev, .native_stream = list};
    uint32_t before = S->launches;
    TU_OK(trd_kernel_launch(k, &bare));
    ck_assert_uint_eq(S->launches, before + 1);
    ck_assert_uint_eq(S->launch[before].list, (uint64_t)(uintptr_t)list);
    ck_assert(S->launch[before].ordered);
    /* the application waits for its own list before the kernel goes (trident.h: trident cannot see into a list
     * passed per launch); wrapping it again is one way */
    TU_OK(trd_stream_wrap(dev, list, &s));
    TU_OK(trd_stream_synchronize(s));
    trd_stream_destroy(s);
    trd_buffer_free(b);
    trd_kernel_destroy(k);
    ck_assert_int_eq(z.ListDestroy(list), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(z.ContextDestroy(ctx), ZE_RESULT_SUCCESS);
    finish(rt);
    dlclose(z.dl);
}
END_TEST

/* A caller's command list passed bare per launch gets the device's arena
 * for that list (drivers/common/scratch.h), reused by its next launch and
 * not another stream's; the caller's scratch is passed as given. */
START_TEST(test_bare_native_list_scratch)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", "{\"global_scratch_size\": 64}", NULL);
    trd_stream_t *s = NULL, *own = NULL;
    TU_OK(trd_stream_create(dev, &s));
    TU_OK(trd_stream_create(dev, &own));
    void *list = NULL;
    TU_OK(trd_stream_native(s, &list));
    trd_arg_t args[] = {trd_arg_ptr(NULL), trd_arg_ptr(NULL), trd_arg_ptr(NULL), trd_arg_int(0)};
    trd_launch_t bare = {.struct_size = sizeof bare, .grid = {2, 1, 1}, .num_args = 4, .args = args,
                         .device = dev, .native_stream = list};
    uint32_t allocs = S->device_allocs;
    TU_OK(trd_kernel_launch(k, &bare));
    TU_OK(trd_kernel_launch(k, &bare));
    ck_assert_uint_eq(S->device_allocs, allocs + 1);
    void *g0, *g1;
    memcpy(&g0, S->launch[0].args[4].bytes, 8);
    memcpy(&g1, S->launch[1].args[4].bytes, 8);
    ck_assert_ptr_nonnull(g0);
    ck_assert_ptr_eq(g0, g1);
    trd_launch_t on_own = bare;
    on_own.device = NULL;
    on_own.native_stream = NULL;
    on_own.stream = own;
    TU_OK(trd_kernel_launch(k, &on_own));
    void *g2;
    memcpy(&g2, S->launch[2].args[4].bytes, 8);
    ck_assert_ptr_ne(g2, g0); /* another stream's arena */
    trd_buffer_t *g = buffer(dev, 128, NULL);
    bare.global_scratch = address(g);
    TU_OK(trd_kernel_launch(k, &bare));
    check_ptr_arg(&S->launch[3], 4, address(g));
    TU_OK(trd_stream_synchronize(s));
    TU_OK(trd_stream_synchronize(own));
    trd_buffer_free(g);
    trd_stream_destroy(own);
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    finish(rt); /* the list's arena goes with the device: no violation, nothing live */
}
END_TEST

/* ------------------------------------------------------------ memory, errors */

START_TEST(test_memory_ops)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    enum { N = 4096 };
    uint8_t src[N], dst[N];
    for (int i = 0; i < N; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    trd_buffer_t *a = buffer(dev, N, src), *b = buffer(dev, N, NULL);
    /* synchronous */
    TU_OK(trd_buffer_copy(b, 0, a, 0, N, NULL));
    TU_OK(trd_buffer_fill(b, 100, 50, 0xab, NULL));
    TU_OK(trd_buffer_read(b, 0, dst, N, NULL));
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(dst[i], i >= 100 && i < 150 ? 0xab : src[i]);
    /* on a stream: ordered by barriers, finished by synchronize */
    trd_stream_t *s = NULL;
    TU_OK(trd_stream_create(dev, &s));
    uint32_t copies = S->copies, fills = S->fills;
    TU_OK(trd_buffer_fill(a, 0, N, 0x00, s));
    TU_OK(trd_buffer_write(a, 8, src, 16, s));
    TU_OK(trd_buffer_copy(b, 0, a, 0, N, s));
    TU_OK(trd_buffer_read(b, 0, dst, N, s));
    TU_OK(trd_stream_synchronize(s));
    ck_assert_uint_eq(S->copies, copies + 3);
    ck_assert_uint_eq(S->fills, fills + 1);
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(dst[i], i >= 8 && i < 24 ? src[i - 8] : 0);
    ck_assert_uint_eq(S->unordered, 0);
    /* freeing uses the blocking free policy when the driver offers it */
    uint32_t blocking = S->frees_blocking;
    trd_buffer_free(a);
    ck_assert_uint_eq(S->frees_blocking, blocking + 1);
    trd_stream_destroy(s);
    trd_buffer_free(b);
    finish(rt);
}
END_TEST

START_TEST(test_free_without_policy)
{
    S->no_free_policy = 1;
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_buffer_t *a = buffer(dev, 64, NULL);
    uint32_t frees = S->frees;
    trd_buffer_free(a);
    ck_assert_uint_eq(S->frees, frees + 1);
    ck_assert_uint_eq(S->frees_blocking, 0);
    finish(rt);
}
END_TEST

START_TEST(test_queued_work)
{
    /* trident.h's lifetimes: an event, a kernel and buffers go while work that uses them is queued; the driver
     * waits before Level Zero destroys or frees what a command may still use (the test driver checks it), here
     * without the blocking free policy */
    S->no_free_policy = 1;
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", NULL, NULL);
    trd_stream_t *s = NULL;
    trd_event_t *e = NULL;
    TU_OK(trd_stream_create(dev, &s));
    TU_OK(trd_event_create(dev, &e));
    trd_buffer_t *b = buffer(dev, 4096, NULL), *o = buffer(dev, 4096, NULL);
    trd_arg_t args[] = {trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_buffer(o), trd_arg_int(1024)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {1, 1, 1}, .num_args = 4, .args = args, .stream = s};
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_kernel_launch(k, &l));
    trd_kernel_destroy(k);
    trd_buffer_free(b);
    args[0] = args[1] = trd_arg_buffer(o);
    k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", NULL, NULL);
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_event_record(e, s));
    trd_event_destroy(e);
    trd_kernel_destroy(k);
    no_violations();
    /* a failure the synchronize reports names the kernel that ran last on the stream */
    k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", NULL, NULL);
    TU_OK(trd_kernel_launch(k, &l));
    zt_fail("zeCommandListAppendBarrier=0x70000001");
    TU_FAILS(trd_stream_synchronize(s), TRD_ERR_DEVICE,
             "synchronizing a stream of levelzero:0 (its last launch: kernel 'add_kernel'): synchronizing a stream of "
             "levelzero:0: zeCommandListAppendBarrier failed: ZE_RESULT_ERROR_DEVICE_LOST");
    zt_fail("");
    TU_OK(trd_stream_synchronize(s));
    trd_kernel_destroy(k);
    trd_buffer_free(o);
    trd_stream_destroy(s);
    finish(rt);
}
END_TEST

START_TEST(test_alloc_error_mapping)
{
    zt_fail("zeMemAllocDevice=0x70000003");
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_buffer_t *b = NULL;
    TU_FAILS(trd_buffer_alloc(dev, 1024, &b), TRD_ERR_LIMIT,
             "zeMemAllocDevice failed: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY (0x70000003)");
    ck_assert_msg(strstr(trd_error_message(), "allocating 1024 bytes on levelzero:0"), "%s", trd_error_message());
    ck_assert_ptr_null(b);
    finish(rt);
}
END_TEST

START_TEST(test_launch_error_mapping)
{
    /* a failing append: the result's name, the geometry, no state left behind */
    zt_fail("zeCommandListAppendLaunchKernel=0x70000001");
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", NULL, NULL);
    trd_arg_t args[] = {trd_arg_ptr(NULL), trd_arg_ptr(NULL), trd_arg_ptr(NULL), trd_arg_int(0)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {7, 1, 1}, .num_args = 4, .args = args, .device = dev};
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_DEVICE,
             "zeCommandListAppendLaunchKernel failed: ZE_RESULT_ERROR_DEVICE_LOST (0x70000001)");
    ck_assert_msg(strstr(trd_error_message(), "launching kernel 'add_kernel' on levelzero:0"), "%s",
                  trd_error_message());
    ck_assert_msg(strstr(trd_error_message(), "(7, 1, 1) groups of 128"), "%s", trd_error_message());
    /* a lost device (what a kernel's page fault causes) says so, here and at a synchronize */
    ck_assert_msg(strstr(trd_error_message(), "; the device was lost, as when a kernel faults: the kernel read or "
                                              "wrote outside its buffers"), "%s", trd_error_message());
    zt_fail("");
    trd_stream_t *s;
    TU_OK(trd_stream_create(dev, &s));
    l.device = NULL;
    l.stream = s;
    TU_OK(trd_kernel_launch(k, &l));
    zt_fail("zeEventHostSynchronize=0x70000001");
    TU_FAILS(trd_stream_synchronize(s), TRD_ERR_DEVICE,
             "synchronizing a stream of levelzero:0: zeEventHostSynchronize failed: ZE_RESULT_ERROR_DEVICE_LOST "
             "(0x70000001); the device was lost, as when a kernel faults: the kernel read or wrote outside its buffers");
    zt_fail("");
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

START_TEST(test_context_error_mapping)
{
    zt_fail("zeContextCreate=0x70000002");
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_buffer_t *b = NULL;
    TU_FAILS(trd_buffer_alloc(dev, 16, &b), TRD_ERR_NO_MEMORY,
             "zeContextCreate failed: ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY (0x70000002)");
    finish(rt);
}
END_TEST

/* ------------------------------------------------------------------ events */

static double timed_launch(void)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", NULL, NULL);
    trd_stream_t *s = NULL;
    TU_OK(trd_stream_create(dev, &s));
    trd_event_t *e0 = NULL, *e1 = NULL;
    TU_OK(trd_event_create(dev, &e0));
    TU_OK(trd_event_create(dev, &e1));
    double ms = -1;
    TU_FAILS(trd_event_elapsed(e0, e1, &ms), TRD_ERR_STATE, "never recorded");
    trd_buffer_t *b = buffer(dev, 64, NULL);
    trd_arg_t args[] = {trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_int(0)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {1, 1, 1}, .num_args = 4, .args = args, .stream = s};
    TU_OK(trd_event_record(e0, s));
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_event_record(e1, s));
    TU_OK(trd_event_synchronize(e1));
    TU_OK(trd_event_elapsed(e0, e1, &ms));
    ck_assert_uint_eq(S->timestamps, 2);
    ck_assert_uint_eq(S->unordered, 0);
    trd_buffer_free(b);
    trd_event_destroy(e0);
    trd_event_destroy(e1);
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    finish(rt);
    return ms;
}

START_TEST(test_event_timing)
{
    switch (_i) {
    case 0: /* timer in Hz (1.2+): one launch = 19200 ticks at 19.2 MHz = 1 ms */
        ck_assert_double_eq_tol(timed_launch(), 1.0, 1e-9);
        break;
    case 1: /* a 1.1 driver reports ns per tick: round(1e9 / 19.2e6) = 52 ns */
        S->api_1_1 = 1;
        ck_assert_double_eq_tol(timed_launch(), 19200 * 52 / 1e6, 1e-9);
        break;
    case 2: /* a 32-bit counter wrapping between the two stamps */
        S->timer_bits = 32;
        S->timer_start = 0xffffff00;
        ck_assert_double_eq_tol(timed_launch(), 1.0, 1e-9);
        break;
    case 3: /* 500 kHz, 2500 ticks: 5 ms */
        S->timer_hz = 500000;
        S->ticks_per_launch = 2500;
        ck_assert_double_eq_tol(timed_launch(), 5.0, 1e-9);
        break;
    default:
        ck_abort();
    }
}
END_TEST

/* ------------------------------------------------------------ extern_libs */

START_TEST(test_extern_libs)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    /* without the library the module keeps an unresolved import */
    trd_kernel_t *k = fixture_kernel(rt, "extern_user", "*fp32,*fp32,i32", NULL, NULL);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_FORMAT,
             "zeKernelCreate failed: ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED (0x78000018)");
    trd_kernel_destroy(k);
    /* with it: built with the same flags and linked with zeModuleDynamicLink */
    trd_options_t *o = NULL;
    TU_OK(trd_options_create("xpu", &o));
    TU_OK(trd_options_set(o, "extern_libs", tu_path("scale=%s", spirv_fixture("extern_lib.spv"))));
    TU_OK(trd_options_set(o, "grf_mode", "256"));
    uint32_t builds = S->builds;
    k = fixture_kernel(rt, "extern_user", "*fp32,*fp32,i32", NULL, o);
    TU_OK(trd_kernel_load(k, dev, NULL));
    ck_assert_uint_eq(S->builds, builds + 2);
    ck_assert_str_eq(S->build[builds].flags, "-cl-intel-256-GRF-per-thread");
    ck_assert_str_eq(S->build[builds + 1].flags, "-cl-intel-256-GRF-per-thread");
    ck_assert_uint_eq(S->links, 1);
    ck_assert_uint_eq(S->link_modules, 2);
    trd_kernel_destroy(k);
    /* a missing file is an error that names it */
    TU_OK(trd_options_set(o, "extern_libs", "scale=/nonexistent/lib.spv"));
    k = fixture_kernel(rt, "extern_user", "*fp32,*fp32,i32", NULL, o);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_NOT_FOUND, "cannot open '/nonexistent/lib.spv'");
    trd_kernel_destroy(k);
    trd_options_destroy(o);
    finish(rt);
}
END_TEST

/* ------------------------------------------------------------ native zebin */

START_TEST(test_native_zebin)
{
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    /* An ELF header for EM_INTELGT (205): enough for the core to see a zebin
     * and for the test driver to accept a native binary. */
    uint8_t elf[256];
    memset(elf, 0, sizeof elf);
    memcpy(elf, "\x7f" "ELF", 4);
    elf[4] = 2; /* 64-bit */
    elf[5] = 1; /* little-endian */
    elf[6] = 1;
    elf[18] = 205;
    char *meta = fixture_meta("add_kernel", "{\"binary_ext\": \"zebin\", \"generate_native_code\": true}");
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_IMAGE, .data = elf, .size = sizeof elf,
                           .signature = "*fp32,*fp32,*fp32,i32", .metadata = meta, .target = "xpu"};
    trd_kernel_t *k = NULL;
    TU_OK(trd_kernel_create(rt, &d, &k));
    free(meta);
    trd_load_info_t li = {.struct_size = sizeof li};
    TU_OK(trd_kernel_load(k, dev, &li));
    ck_assert_int_eq(li.format, TRD_FORMAT_ZEBIN);
    ck_assert_uint_eq(S->build[0].format, ZE_MODULE_FORMAT_NATIVE);
    trd_buffer_t *b = buffer(dev, 64, NULL);
    int32_t n = 16;
    trd_arg_t args[] = {trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {2, 1, 1}, .num_args = 4, .args = args, .device = dev};
    TU_OK(trd_kernel_launch(k, &l));
    const struct zetest_launch *r = &S->launch[0];
    ck_assert_uint_eq(r->nargs, 6); /* the same list: 4 parameters and 2 scratch pointers */
    check_ptr_arg(r, 0, address(b));
    check_value_arg(r, 3, &n, 4);
    check_ptr_arg(r, 4, NULL);
    check_ptr_arg(r, 5, NULL);
    ck_assert_uint_eq(r->group[0], 128);
    trd_buffer_free(b);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

/* ------------------------------------------------------------ threads */

static pthread_barrier_t start_line;

struct worker {
    trd_kernel_t *k;
    trd_device_t *dev;
    trd_stream_t *stream;
    int own_stream;
    int id;
    int errors;
};

static void *work(void *p)
{
    struct worker *w = p;
    enum { N = 1500, ROUNDS = 10, BURST = 50 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
    trd_stream_t *s = w->stream;
    trd_buffer_t *bx = NULL, *by = NULL, *bo = NULL;
    if ((w->own_stream && trd_stream_create(w->dev, &s) != TRD_OK) || trd_buffer_alloc(w->dev, N * 4, &bx) ||
        trd_buffer_alloc(w->dev, N * 4, &by) || trd_buffer_alloc(w->dev, N * 4, &bo)) {
        w->errors++;
        pthread_barrier_wait(&start_line);
        return NULL;
    }
    pthread_barrier_wait(&start_line); /* every thread launches at the same time */
    for (int r = 0; r < ROUNDS; r++) {
        tu_fill_f32(x, N, (uint64_t)(w->id * 1000 + r));
        tu_fill_f32(y, N, (uint64_t)(w->id * 1000 + r + 500));
        trd_arg_t args[] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(N)};
        trd_launch_t l = {.struct_size = sizeof l, .grid = {(N + 1023) / 1024, 1, 1}, .num_args = 4,
                          .args = args, .stream = s};
        int bad = trd_buffer_write(bx, 0, x, N * 4, s) || trd_buffer_write(by, 0, y, N * 4, s);
        /* launches back to back: the threads' argument setting overlaps */
        for (int b = 0; b < BURST && !bad; b++)
            bad = trd_kernel_launch(w->k, &l) != TRD_OK;
        if (bad || trd_buffer_read(bo, 0, out, N * 4, s) || trd_stream_synchronize(s)) {
            w->errors++;
            break;
        }
        for (int i = 0; i < N; i++)
            if (out[i] != x[i] + y[i]) {
                w->errors++;
                break;
            }
    }
    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    if (w->own_stream)
        trd_stream_destroy(s);
    free(x);
    free(y);
    free(out);
    return NULL;
}

START_TEST(test_threads)
{
    /* _i == 0: a stream per thread; 1: every thread on one stream */
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_kernel_t *k = fixture_kernel(rt, "add_kernel", "*fp32,*fp32,*fp32,i32", NULL, NULL);
    TU_OK(trd_kernel_load(k, dev, NULL));
    trd_stream_t *shared = NULL;
    if (_i == 1)
        TU_OK(trd_stream_create(dev, &shared));
    enum { T = 4 };
    pthread_t th[T];
    struct worker w[T];
    pthread_barrier_init(&start_line, NULL, T);
    for (int i = 0; i < T; i++) {
        w[i] = (struct worker){.k = k, .dev = dev, .stream = shared, .own_stream = _i == 0, .id = i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        ck_assert_msg(w[i].errors == 0, "thread %d: %d errors (%s)", i, w[i].errors, trd_error_message());
    }
    pthread_barrier_destroy(&start_line);
    ck_assert_uint_eq(S->launches, T * 10 * 50);
    for (uint32_t i = 0; i < S->launches && i < ZETEST_MAX_LAUNCHES; i++)
        ck_assert(S->launch[i].emulated);
    ck_assert_uint_eq(S->unordered, 0);
    no_violations();
    if (shared)
        trd_stream_destroy(shared);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

/* ------------------------------------------------ the loader's intercept layer */

START_TEST(test_loader_intercept)
{
    /* With ZE_ENABLE_LOADER_INTERCEPT the loader wraps every handle in its
     * own objects: the module must treat handles as opaque. */
    if (!forked()) {
        tu_skip("test_loader_intercept", "needs a process of its own (the loader reads it at the first zeInit)");
        return;
    }
    setenv("ZE_ENABLE_LOADER_INTERCEPT", "1", 1);
    trd_runtime_t *rt = runtime();
    trd_device_t *dev = device(rt, "levelzero:0");
    trd_device_props_t p = {.struct_size = sizeof p};
    TU_OK(trd_device_get_props(dev, &p));
    ck_assert_str_eq(p.pci_bus_id, "0000:3a:00.0");
    trd_kernel_t *k = fixture_kernel(rt, "slm_kernel", "*fp32,*fp32,i32,fp32,i64", NULL, NULL);
    trd_stream_t *s = NULL;
    TU_OK(trd_stream_create(dev, &s));
    int32_t n = 700;
    float x[700], out[700];
    tu_fill_f32(x, 700, 5);
    trd_buffer_t *bx = buffer(dev, sizeof x, x), *bo = buffer(dev, sizeof out, NULL);
    trd_arg_t args[] = {trd_arg_buffer(bx), trd_arg_buffer(bo), trd_arg_int(n), trd_arg_float(2.0),
                        trd_arg_int(-1)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {3, 1, 1}, .num_args = 5, .args = args, .stream = s};
    trd_event_t *e0 = NULL, *e1 = NULL;
    TU_OK(trd_event_create(dev, &e0));
    TU_OK(trd_event_create(dev, &e1));
    TU_OK(trd_event_record(e0, s));
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_event_record(e1, s));
    TU_OK(trd_buffer_read(bo, 0, out, sizeof out, s));
    TU_OK(trd_stream_synchronize(s));
    for (int i = 0; i < n; i++)
        ck_assert(out[i] == 2.0f * x[i] - 1.0f);
    double ms;
    TU_OK(trd_event_elapsed(e0, e1, &ms));
    ck_assert_double_eq_tol(ms, 1.0, 1e-9);
    trd_event_destroy(e0);
    trd_event_destroy(e1);
    trd_buffer_free(bx);
    trd_buffer_free(bo);
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    finish(rt);
}
END_TEST

/* The test driver catches a caller's mistake, through the harness's log: a handle that is no context passed to
 * zeContextDestroy (called through the driver's own dispatch table, as the loader does). */
START_TEST(test_double_logs_a_broken_rule)
{
    ze_result_t (*get_driver)(ze_api_version_t, ze_driver_dditable_t *);
    ze_result_t (*get_context)(ze_api_version_t, ze_context_dditable_t *);
    *(void **)&get_driver = dlsym(zt_dl, "zeGetDriverProcAddrTable");
    *(void **)&get_context = dlsym(zt_dl, "zeGetContextProcAddrTable");
    ck_assert(get_driver && get_context);
    ze_driver_dditable_t dt;
    ze_context_dditable_t ct;
    ck_assert_int_eq(get_driver(ZE_API_VERSION_1_0, &dt), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(get_context(ZE_API_VERSION_1_0, &ct), ZE_RESULT_SUCCESS);
    uint32_t n = 1;
    ze_driver_handle_t drv;
    ck_assert_int_eq(dt.pfnGet(&n, &drv), ZE_RESULT_SUCCESS);
    ze_context_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t ctx;
    ck_assert_int_eq(ct.pfnCreate(drv, &desc, &ctx), ZE_RESULT_SUCCESS);
    no_violations();
    ck_assert_int_eq(ct.pfnDestroy((ze_context_handle_t)drv), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ck_assert_uint_eq(trd_double_violation_count(&S->common), 1);
    ck_assert_str_eq(trd_double_violation_get(&S->common, 0), "zt_context_destroy: invalid or destroyed handle");
    ck_assert_uint_eq(trd_double_calls(&S->common, "zeContextCreate"), 1);
    ck_assert_int_eq(S->live_contexts, 1);
    ck_assert_int_eq(ct.pfnDestroy(ctx), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(S->live_contexts, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("levelzero");
    TCase *t = tcase_create("levelzero");
    tcase_add_checked_fixture(t, setup, NULL);
    tcase_add_test(t, test_enumerate_props);
    tcase_add_test(t, test_double_logs_a_broken_rule);
    tcase_add_test(t, test_props_without_extensions);
    tcase_add_test(t, test_device_skipped_note);
    tcase_add_test(t, test_init_failure_note);
    tcase_add_test(t, test_library_not_found);
    tcase_add_test(t, test_launch_add_bundle);
    tcase_add_test(t, test_launch_grid_default_stream);
    tcase_add_test(t, test_launch_slm_and_scalars);
    tcase_add_test(t, test_second_device);
    tcase_add_test(t, test_static_shared_memory);
    tcase_add_test(t, test_argument_count_mismatch);
    tcase_add_test(t, test_geometry_from_metadata);
    tcase_add_loop_test(t, test_build_flags, 0, 5);
    tcase_add_test(t, test_build_failure_log);
    tcase_add_test(t, test_invalid_spirv);
    tcase_add_test(t, test_scratch_arena);
    tcase_add_test(t, test_foreign_command_list);
    tcase_add_test(t, test_bare_native_list_scratch);
    tcase_add_test(t, test_memory_ops);
    tcase_add_test(t, test_free_without_policy);
    tcase_add_test(t, test_queued_work);
    tcase_add_test(t, test_alloc_error_mapping);
    tcase_add_test(t, test_launch_error_mapping);
    tcase_add_test(t, test_context_error_mapping);
    tcase_add_loop_test(t, test_event_timing, 0, 4);
    tcase_add_test(t, test_extern_libs);
    tcase_add_test(t, test_native_zebin);
    tcase_add_loop_test(t, test_threads, 0, 2);
    tcase_add_test(t, test_loader_intercept);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    /* Before anything can call zeInit: the real loader loads only the test driver. */
    setenv("ZE_ENABLE_ALT_DRIVERS", zt_path(), 1);
    return tu_run(suite());
}
