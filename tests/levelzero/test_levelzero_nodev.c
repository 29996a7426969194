/* SPDX-License-Identifier: Apache-2.0 */
/* test_levelzero_nodev.c: the Level Zero driver module against the real
 * Debian loader with no Level Zero driver installed (the state of every CI
 * machine without an Intel GPU): the module loads, serves 0 devices and says
 * why; the host device keeps working. */
#include <dlfcn.h>

#include "tests/testutil.h"

static const char *module_path(void)
{
    return tu_path("%s/drivers/levelzero/.libs/trident_levelzero.so", tu_builddir());
}

/* A machine with Intel's GPU driver has devices: then this test has nothing to check. */
static int intel_driver_installed(void)
{
    void *dl = dlopen("libze_intel_gpu.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (dl)
        dlclose(dl);
    return dl != NULL;
}

START_TEST(test_no_driver_zero_devices)
{
    if (intel_driver_installed()) {
        tu_skip("test_no_driver_zero_devices", "libze_intel_gpu.so.1 is installed: this machine may have devices");
        return;
    }
    /* tu_runtime(module_path(), NULL), keeping the configuration to free it */
    trd_config_t *config = tu_config(NULL);
    trd_runtime_desc_t rd = {.struct_size = sizeof rd, .flags = TRD_RUNTIME_NO_DEFAULT_DRIVERS,
                             .driver_path = module_path(), .config = config};
    trd_runtime_t *rt = NULL;
    TU_OK(trd_runtime_create(&rd, &rt));
    uint32_t n = 0;
    TU_OK(trd_runtime_driver_count(rt, &n));
    int found = 0;
    for (uint32_t i = 0; i < n; i++) {
        trd_driver_info_t info = {.struct_size = sizeof info};
        TU_OK(trd_runtime_driver_info(rt, i, &info));
        if (strcmp(info.name, "levelzero") != 0)
            continue;
        found = 1;
        ck_assert_int_eq(info.status, TRD_DRIVER_LOADED);
        ck_assert_str_eq(info.backend, "xpu");
        ck_assert_uint_eq(info.device_count, 0);
        ck_assert_msg(strstr(info.reason, "0 devices: zeInit(ZE_INIT_FLAG_GPU_ONLY) returned "
                                          "ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)") != NULL,
                      "reason: %s", info.reason);
    }
    ck_assert_msg(found, "the levelzero module was not loaded from %s", module_path());
    trd_device_t *none = NULL;
    ck_assert_int_ne(trd_runtime_device_find(rt, "levelzero:0", &none), TRD_OK);

    /* The host device still runs kernels: add_kernel on host:0. */
    trd_device_t *host = NULL;
    TU_OK(trd_runtime_device_find(rt, "host:0", &host));
    trd_kernel_desc_t kd = {.struct_size = sizeof kd, .source = TRD_SOURCE_IMAGE,
                            .path = tu_host_kernel("add_kernel"), .name = "add_kernel",
                            .signature = "*fp32,*fp32,*fp32,i32", .format = TRD_FORMAT_HOST_SO, .target = "host"};
    trd_kernel_t *k = NULL;
    TU_OK(trd_kernel_create(rt, &kd, &k));
    enum { N = 10000 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
    tu_fill_f32(x, N, 1);
    tu_fill_f32(y, N, 2);
    trd_buffer_t *bx = NULL, *by = NULL, *bo = NULL;
    TU_OK(trd_buffer_alloc(host, N * sizeof *x, &bx));
    TU_OK(trd_buffer_alloc(host, N * sizeof *y, &by));
    TU_OK(trd_buffer_alloc(host, N * sizeof *out, &bo));
    TU_OK(trd_buffer_write(bx, 0, x, N * sizeof *x, NULL));
    TU_OK(trd_buffer_write(by, 0, y, N * sizeof *y, NULL));
    trd_arg_t args[] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(N)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {(N + 1023) / 1024, 1, 1}, .num_args = 4, .args = args,
                      .device = host};
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_buffer_read(bo, 0, out, N * sizeof *out, NULL));
    for (int i = 0; i < N; i++)
        ck_assert_msg(out[i] == x[i] + y[i], "out[%d] = %g, expected %g", i, out[i], x[i] + y[i]);
    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    trd_kernel_destroy(k);
    free(x);
    free(y);
    free(out);
    trd_runtime_destroy(rt);
    trd_config_destroy(config);
}
END_TEST

int main(void)
{
    /* The real driver search: no alternative driver list. */
    unsetenv("ZE_ENABLE_ALT_DRIVERS");
    unsetenv("ZE_ENABLE_NULL_DRIVER");
    Suite *s = suite_create("levelzero_nodev");
    TCase *t = tcase_create("nodev");
    tcase_add_test(t, test_no_driver_zero_devices);
    suite_add_tcase(s, t);
    return tu_run(s);
}
