/* SPDX-License-Identifier: Apache-2.0 */
/* test_hip_real.c: the HIP driver with the HIP runtime of the machine (the
 * default library names), where no AMD GPU is: Debian's libamdhip64-5 here,
 * libamdhip64.so.5 beside CUDA on the GPU machine. The driver loads with 0
 * devices and says why (hipErrorNoDevice); the host device works as before.
 * Without a HIP runtime, or with an AMD GPU, the no-device check prints a SKIP
 * line and passes. */
#include <dlfcn.h>

#include "tests/testutil.h"

static const char *hip_module(void)
{
    return tu_path("%s/drivers/hip/.libs/trident_hip.so", tu_builddir());
}

/* The first of the driver's default names that loads, or NULL. */
static const char *hip_runtime_present(void)
{
    static const char *const names[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            dlclose(h);
            return names[i];
        }
    }
    return NULL;
}

START_TEST(test_no_device_and_host)
{
    trd_runtime_t *rt = tu_runtime(hip_module(), NULL);
    const char *lib = hip_runtime_present(); /* after the driver loaded (and kept) it */
    uint32_t n = 0;
    TU_OK(trd_runtime_driver_count(rt, &n));
    trd_driver_info_t hip = {.struct_size = 0};
    for (uint32_t i = 0; i < n; i++) {
        trd_driver_info_t d = {.struct_size = sizeof d};
        TU_OK(trd_runtime_driver_info(rt, i, &d));
        if (strcmp(d.name, "hip") == 0)
            hip = d;
    }
    ck_assert_msg(hip.struct_size != 0, "the hip driver module was not found");
    if (!lib) {
        ck_assert_int_eq(hip.status, TRD_DRIVER_SKIPPED);
        ck_assert_msg(strstr(hip.reason, "libamdhip64.so.6 (") && strstr(hip.reason, "libamdhip64.so.5 (") &&
                          strstr(hip.reason, "libamdhip64.so ("),
                      "reason: %s", hip.reason);
        tu_skip("hip driver with 0 devices", "no HIP runtime (libamdhip64) on this machine");
    } else if (hip.device_count > 0) {
        tu_skip("hip driver with 0 devices", "an AMD GPU is present");
    } else {
        ck_assert_int_eq(hip.status, TRD_DRIVER_LOADED);
        ck_assert_msg(strstr(hip.reason, "0 devices: hipErrorNoDevice (100)") != NULL, "reason: %s", hip.reason);
        printf("hip driver with %s: %s\n", lib, hip.reason);
    }

    /* nothing else is affected: the host device runs add_kernel */
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "host:0", &dev));
    trd_kernel_desc_t kd = {.struct_size = sizeof kd, .source = TRD_SOURCE_IMAGE, .path = tu_host_kernel("add_kernel"),
                            .name = "add_kernel", .signature = "*fp32,*fp32,*fp32,i32",
                            .format = TRD_FORMAT_HOST_SO, .target = "host"};
    trd_kernel_t *k;
    TU_OK(trd_kernel_create(rt, &kd, &k));
    enum { N = 5000 };
    static float x[N], y[N], out[N];
    tu_fill_f32(x, N, 1);
    tu_fill_f32(y, N, 2);
    trd_buffer_t *bx, *by, *bo;
    TU_OK(trd_buffer_alloc(dev, sizeof x, &bx));
    TU_OK(trd_buffer_alloc(dev, sizeof y, &by));
    TU_OK(trd_buffer_alloc(dev, sizeof out, &bo));
    TU_OK(trd_buffer_write(bx, 0, x, sizeof x, NULL));
    TU_OK(trd_buffer_write(by, 0, y, sizeof y, NULL));
    trd_arg_t args[4] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(N)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {(N + 1023) / 1024, 1, 1}, .num_args = 4, .args = args,
                      .device = dev};
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_buffer_read(bo, 0, out, sizeof out, NULL));
    for (int i = 0; i < N; i++)
        ck_assert_msg(out[i] == x[i] + y[i], "out[%d] = %g, expected %g", i, out[i], x[i] + y[i]);
    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hip_real");
    TCase *tc = tcase_create("real");
    tcase_add_test(tc, test_no_device_and_host);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
