/* SPDX-License-Identifier: Apache-2.0 */
/* test_null_driver.c: drivers/null, the skeleton, through the core's real
 * loader: it loads as a driver-ABI-2 module (no libtrident linked), lists
 * one device, its memory round-trips, its streams and events work, and every
 * launch fails naming the kernel, the grid and why. */
#include <trident/driver.h>

#include "tests/testutil.h"

static const char *null_module(void)
{
    return tu_path("%s/drivers/null/.libs/null_driver.so", tu_builddir());
}

static trd_runtime_t *null_runtime(void)
{
    return tu_runtime(null_module(), NULL);
}

START_TEST(test_loads_through_the_loader)
{
    trd_runtime_t *rt = null_runtime();
    uint32_t n;
    TU_OK(trd_runtime_driver_count(rt, &n));
    int found = 0;
    for (uint32_t i = 0; i < n; i++) {
        trd_driver_info_t info = {.struct_size = sizeof info};
        TU_OK(trd_runtime_driver_info(rt, i, &info));
        if (!info.name || strcmp(info.name, "null") != 0)
            continue;
        found = 1;
        ck_assert_msg(info.status == TRD_DRIVER_LOADED, "status %d: %s", info.status, info.reason);
        ck_assert_uint_eq(info.abi_version, TRD_DRIVER_ABI_VERSION);
        ck_assert_uint_eq(info.device_count, 1);
        ck_assert_str_eq(info.path, null_module());
    }
    ck_assert_msg(found, "the null driver is not listed");
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "null:0", &dev));
    trd_device_props_t p = {.struct_size = sizeof p};
    TU_OK(trd_device_get_props(dev, &p));
    ck_assert_str_eq(p.uri, "null:0");
    ck_assert_str_eq(p.arch, "none");
    ck_assert_int_eq(p.kind, TRD_DEVICE_GPU);
    TU_FAILS(trd_runtime_device_find(rt, "null:1", &dev), TRD_ERR_NO_DEVICE, "null:1");
    trd_runtime_destroy(rt);
}
END_TEST

/* Memory, streams and events: host memory behind the device's buffers. */
START_TEST(test_memory_streams_events)
{
    trd_runtime_t *rt = null_runtime();
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "null:0", &dev));
    enum { N = 1000 };
    int32_t in[N], out[N];
    tu_fill_i32(in, N, 17);
    trd_buffer_t *b;
    TU_OK(trd_buffer_alloc(dev, sizeof in, &b));
    trd_stream_t *s;
    TU_OK(trd_stream_create(dev, &s));
    trd_event_t *e0, *e1;
    TU_OK(trd_event_create(dev, &e0));
    TU_OK(trd_event_create(dev, &e1));
    TU_OK(trd_event_record(e0, s));
    TU_OK(trd_buffer_write(b, 0, in, sizeof in, s));
    TU_OK(trd_event_record(e1, s));
    TU_OK(trd_stream_synchronize(s));
    TU_OK(trd_event_synchronize(e1));
    double ms = -1;
    TU_OK(trd_event_elapsed(e0, e1, &ms));
    ck_assert(ms >= 0);
    memset(out, 0, sizeof out);
    TU_OK(trd_buffer_read(b, 0, out, sizeof out, NULL));
    for (int i = 0; i < N; i++)
        ck_assert_msg(out[i] == in[i], "element %d: %d, want %d", i, out[i], in[i]);
    trd_event_destroy(e1);
    trd_event_destroy(e0);
    trd_stream_destroy(s);
    trd_buffer_free(b);
    trd_runtime_destroy(rt);
}
END_TEST

/* Every launch fails, clearly: the driver's message under the core's. */
START_TEST(test_launch_fails_clearly)
{
    trd_runtime_t *rt = null_runtime();
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "null:0", &dev));
    /* a host image (the skeleton's backend): loaded, never run */
    trd_kernel_t *k = tu_host_kernel_create(rt, "add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    trd_buffer_t *b;
    TU_OK(trd_buffer_alloc(dev, 64, &b));
    void *p;
    TU_OK(trd_buffer_address(b, &p));
    trd_arg_t args[] = {trd_arg_ptr(p), trd_arg_ptr(p), trd_arg_ptr(p), trd_arg_int(4)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {3, 2, 1}, .num_args = 4, .args = args, .device = dev};
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_UNSUPPORTED, "(grid 3x2x1) on null:0: the null driver runs no kernels");
    const char *m = trd_error_message();
    ck_assert_msg(strstr(m, "launching kernel 'add_kernel' on null:0") && strstr(m, "add_kernel"), "message: %s", m);
    /* on a stream too, and the stream stays usable */
    trd_stream_t *s;
    TU_OK(trd_stream_create(dev, &s));
    l.device = NULL;
    l.stream = s;
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_UNSUPPORTED, "the null driver runs no kernels");
    TU_OK(trd_stream_synchronize(s));
    trd_stream_destroy(s);
    trd_buffer_free(b);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("null_driver");
    TCase *t = tcase_create("null_driver");
    tcase_add_test(t, test_loads_through_the_loader);
    tcase_add_test(t, test_memory_streams_events);
    tcase_add_test(t, test_launch_fails_clearly);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
