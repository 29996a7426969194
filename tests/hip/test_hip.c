/* SPDX-License-Identifier: Apache-2.0 */
/* test_hip.c: the HIP driver (drivers/hip) against hipdouble, a test double
 * of libamdhip64 the driver is pointed at through [driver.hip] library.
 *
 * What a test expects comes from the vendor's documented contract, not from
 * the driver: Triton's HIP launch ABI (block = num_warps x warp_size of the
 * target, grid x counted in CTAs, the kernel's parameters followed by the
 * global and profile scratch pointers), the code object's own metadata (the
 * kernel argument layout, registers, private memory, maximum block), and
 * HIP's error codes. The double builds the kernel argument segment from
 * kernelParams as the runtime does, so every byte a kernel would read is
 * checked. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "core/internal.h"
#include "tests/hip/hipdouble.h"
#include "tests/testutil.h"

/* Three devices: CDNA3 (wave64, cooperative), RDNA3 (wave32, a PCI id in
 * capitals and a larger opt-in shared memory), and a gfx950 with cluster
 * launch and no UUID. */
#define THREE_DEVICES                                                                                \
    "gfx942:sramecc+:xnack-/64/304/coop,gfx1100/32/48/pci=0000:C3:00.0/optin=98304,"                \
    "gfx950:sramecc+:xnack-/64/256/cluster/nouuid"
#define TWO_GFX942 "gfx942:sramecc+:xnack-/64/304/coop,gfx942:sramecc+:xnack-/64/304"

static const char *hip_module(void)
{
    return tu_path("%s/drivers/hip/.libs/trident_hip.so", tu_builddir());
}

static const char *double_lib(int rocm)
{
    return tu_path("%s/tests/hip/.libs/hipdouble%s.so", tu_builddir(), rocm == 5 ? "5" : "");
}

/* The double, as the test reads it (tests/doubles/double.h), and HIP, as an application calls it. */
static struct {
    void *dl;
    struct hipdouble_state *st;
    hipdouble_launch_get_fn *launch_get;
    hipdouble_current_device_fn *current_device;
    hipdouble_live_fn *live;
    hipdouble_allocation_fn *allocation;
    hipdouble_stream_info_fn *stream_info;
    int (*hipSetDevice)(int device);
    int (*hipStreamCreateWithFlags)(void **stream, unsigned flags);
    int (*hipStreamDestroy)(void *stream);
    int (*hipStreamSynchronize)(void *stream);
    int (*hipStreamBeginCapture)(void *stream, int mode);
    int (*hipStreamEndCapture)(void *stream, void **graph);
} dbl;

static void *sym(const char *name)
{
    void *p = dlsym(dbl.dl, name);
    ck_assert_msg(p != NULL, "the HIP double exports no %s", name);
    return p;
}

static void double_open(int rocm)
{
    if (dbl.dl)
        dlclose(dbl.dl);
    char err[512];
    dbl.st = trd_double_open(double_lib(rocm), sizeof *dbl.st, &dbl.dl, err, sizeof err);
    ck_assert_msg(dbl.st != NULL, "%s", err);
    dbl.launch_get = dbl.st->launch_get;
    dbl.current_device = dbl.st->current_device;
    dbl.live = dbl.st->live;
    dbl.allocation = dbl.st->allocation;
    dbl.stream_info = dbl.st->stream_info;
    *(void **)&dbl.hipSetDevice = sym("hipSetDevice");
    *(void **)&dbl.hipStreamCreateWithFlags = sym("hipStreamCreateWithFlags");
    *(void **)&dbl.hipStreamDestroy = sym("hipStreamDestroy");
    *(void **)&dbl.hipStreamSynchronize = sym("hipStreamSynchronize");
    *(void **)&dbl.hipStreamBeginCapture = sym("hipStreamBeginCapture");
    *(void **)&dbl.hipStreamEndCapture = sym("hipStreamEndCapture");
}

static unsigned dbl_calls(const char *function)
{
    return trd_double_calls(&dbl.st->common, function);
}

static unsigned dbl_launch_count(void)
{
    pthread_mutex_lock(&dbl.st->common.lock);
    unsigned n = dbl.st->nlaunches;
    pthread_mutex_unlock(&dbl.st->common.lock);
    return n;
}

/* Sets the faults (tests/doubles/double.h's syntax): "" none. */
static void dbl_fail(const char *spec)
{
    char err[256];
    ck_assert_msg(trd_double_fail(&dbl.st->common, spec, err, sizeof err) == 0, "%s", err);
}

static void dbl_jit_log(const char *log)
{
    pthread_mutex_lock(&dbl.st->common.lock);
    dbl.st->jit_log = log;
    pthread_mutex_unlock(&dbl.st->common.lock);
}

/* An empty record (calls, launches, violations), the configuration and faults kept. */
static void dbl_forget(void)
{
    struct hipdouble_state keep = *dbl.st;
    trd_double_reset_dl(dbl.dl);
    pthread_mutex_lock(&dbl.st->common.lock);
    memcpy(dbl.st->devices, keep.devices, sizeof keep.devices);
    dbl.st->jit_log = keep.jit_log;
    memcpy(dbl.st->common.faults, keep.common.faults, sizeof keep.common.faults);
    dbl.st->common.nfaults = keep.common.nfaults;
    pthread_mutex_unlock(&dbl.st->common.lock);
}

static void teardown(void)
{
    if (dbl.dl)
        dlclose(dbl.dl);
    memset(&dbl, 0, sizeof dbl);
}

/* A runtime with the HIP driver on the double (ROCm 6 or 5), these devices and these faults. */
static trd_runtime_t *hip_runtime_failing(int rocm, const char *devices, const char *faults)
{
    double_open(rocm);
    snprintf(dbl.st->devices, sizeof dbl.st->devices, "%s", devices);
    dbl_fail(faults);
    trd_runtime_t *rt = tu_runtime(hip_module(), tu_path("[driver.hip]\nlibrary = %s\n", double_lib(rocm)));
    dbl_forget();
    return rt;
}

static trd_runtime_t *hip_runtime(int rocm, const char *devices)
{
    return hip_runtime_failing(rocm, devices, "");
}

/* No misuse the real runtime would crash on, and the caller's current device
 * (0 on a new thread) as it was. */
static void check_clean(void)
{
    unsigned n = trd_double_violation_count(&dbl.st->common);
    ck_assert_msg(n == 0, "%u HIP API violations, the first: %s", n,
                  n ? trd_double_violation_get(&dbl.st->common, 0) : "");
    ck_assert_int_eq(dbl.current_device(), 0);
}

static void check_released(trd_runtime_t *rt)
{
    trd_runtime_destroy(rt);
    ck_assert_uint_eq(dbl.live("allocations"), 0);
    ck_assert_uint_eq(dbl.live("streams"), 0);
    ck_assert_uint_eq(dbl.live("events"), 0);
    ck_assert_uint_eq(dbl.live("modules"), 0);
}

static trd_device_t *device(trd_runtime_t *rt, const char *selector)
{
    trd_device_t *d = NULL;
    TU_OK(trd_runtime_device_find(rt, selector, &d));
    return d;
}

static trd_driver_info_t driver_info(trd_runtime_t *rt, const char *name)
{
    uint32_t n = 0;
    TU_OK(trd_runtime_driver_count(rt, &n));
    for (uint32_t i = 0; i < n; i++) {
        trd_driver_info_t d = {.struct_size = sizeof d};
        TU_OK(trd_runtime_driver_info(rt, i, &d));
        if (strcmp(d.name, name) == 0)
            return d;
    }
    ck_abort_msg("no driver %s", name);
    trd_driver_info_t none = {.struct_size = 0};
    return none;
}

static struct hipdouble_launch last_launch(void)
{
    struct hipdouble_launch l;
    unsigned n = dbl_launch_count();
    ck_assert_uint_ge(n, 1);
    ck_assert(dbl.launch_get(n - 1, &l));
    return l;
}

/* ------------------------------------------------------------------ kernels */

static const char *gfx942_hsaco(void)
{
    return tu_path("%s/add_kernel.hsaco", tu_fixture("hip", "add_fp32"));
}

static const char *gfx1100_hsaco(void)
{
    return tu_path("%s/tests/fixtures/amdgpu/add_kernel_gfx1100.hsaco", tu_srcdir());
}

/* Triton-style metadata for add_kernel on a HIP target, in one of a few
 * rotating buffers. */
static const char *add_meta(const char *arch, int warp_size, int num_warps, int num_ctas, const char *extra)
{
    static char bufs[4][1024];
    static unsigned next;
    char *b = bufs[next++ % 4];
    snprintf(b, sizeof bufs[0],
             "{\"name\":\"add_kernel\",\"target\":{\"backend\":\"hip\",\"arch\":\"%s\",\"warp_size\":%d},"
             "\"num_warps\":%d,\"num_ctas\":%d,\"shared\":0,\"debug\":false%s%s}",
             arch, warp_size, num_warps, num_ctas, extra ? "," : "", extra ? extra : "");
    return b;
}

/* A raw code object with the given metadata (NULL: none). */
static trd_kernel_t *raw_kernel(trd_runtime_t *rt, const char *hsaco, const char *target, const char *name,
                                const char *meta)
{
    size_t n;
    void *img = tu_read_file(hsaco, &n);
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_IMAGE, .data = img, .size = n,
                           .name = name, .signature = "*fp32,*fp32,*fp32,i32", .metadata = meta,
                           .format = TRD_FORMAT_HSACO, .target = target};
    trd_kernel_t *k = NULL;
    TU_OK(trd_kernel_create(rt, &d, &k));
    free(img);
    return k;
}

/* Triton 3.6's own add_kernel cache entry for gfx942. */
static trd_kernel_t *triton_add(trd_runtime_t *rt)
{
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_TRITON_CACHE,
                           .path = tu_fixture("hip", "add_fp32")};
    trd_kernel_t *k = NULL;
    TU_OK(trd_kernel_create(rt, &d, &k));
    return k;
}

struct bufs {
    trd_buffer_t *x, *y, *out;
    void *ax, *ay, *aout;
};

static void bufs_alloc(trd_device_t *dev, size_t n, struct bufs *b)
{
    TU_OK(trd_buffer_alloc(dev, n * sizeof(float), &b->x));
    TU_OK(trd_buffer_alloc(dev, n * sizeof(float), &b->y));
    TU_OK(trd_buffer_alloc(dev, n * sizeof(float), &b->out));
    TU_OK(trd_buffer_address(b->x, &b->ax));
    TU_OK(trd_buffer_address(b->y, &b->ay));
    TU_OK(trd_buffer_address(b->out, &b->aout));
}

static void bufs_free(struct bufs *b)
{
    trd_buffer_free(b->x);
    trd_buffer_free(b->y);
    trd_buffer_free(b->out);
}

static trd_status_t launch_add(trd_kernel_t *k, trd_stream_t *s, trd_device_t *dev, void *native,
                               const struct bufs *b, int32_t n, uint32_t gx, uint32_t gy, void *gs, void *ps)
{
    trd_arg_t args[4] = {trd_arg_buffer(b->x), trd_arg_buffer(b->y), trd_arg_buffer(b->out), trd_arg_int(n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {gx, gy, 1}, .num_args = 4, .args = args, .stream = s,
                      .device = dev, .native_stream = native, .global_scratch = gs, .profile_scratch = ps};
    return trd_kernel_launch(k, &l);
}

/* Triton's add_kernel takes x, y, out (8-byte global pointers), n (i32), then
 * the global and profile scratch pointers: the AMDGPU code object places
 * them at 0, 8, 16, 24, 32 and 40 of a 48-byte argument segment. */
static void check_add_args(const struct hipdouble_launch *l, const struct bufs *b, int32_t n, void *gs, void *ps)
{
    static const unsigned offset[6] = {0, 8, 16, 24, 32, 40}, size[6] = {8, 8, 8, 4, 8, 8};
    ck_assert_str_eq(l->kernel, "add_kernel");
    ck_assert_uint_eq(l->nargs, 6);
    ck_assert_uint_eq(l->kernarg_size, 48);
    for (int i = 0; i < 6; i++) {
        ck_assert_uint_eq(l->arg_offset[i], offset[i]);
        ck_assert_uint_eq(l->arg_size[i], size[i]);
    }
    unsigned char want[48];
    memset(want, 0, sizeof want);
    memcpy(want + 0, &b->ax, 8);
    memcpy(want + 8, &b->ay, 8);
    memcpy(want + 16, &b->aout, 8);
    memcpy(want + 24, &n, 4);
    memcpy(want + 32, &gs, 8);
    memcpy(want + 40, &ps, 8);
    ck_assert_mem_eq(l->kernarg, want, sizeof want);
}

static void *kernarg_ptr(const struct hipdouble_launch *l, unsigned offset)
{
    void *p;
    memcpy(&p, l->kernarg + offset, sizeof p);
    return p;
}

/* ---------------------------------------------------------------- devices */

static void check_props(trd_runtime_t *rt, const char *uri, const char *name, const char *arch, uint32_t warp,
                        uint32_t cus, uint64_t memory, uint32_t optin, const char *pci, int index, uint32_t flags)
{
    trd_device_props_t p = {.struct_size = sizeof p};
    TU_OK(trd_device_get_props(device(rt, uri), &p));
    ck_assert_int_eq(p.kind, TRD_DEVICE_GPU);
    ck_assert_str_eq(p.driver, "hip");
    ck_assert_str_eq(p.backend, "hip");
    ck_assert_str_eq(p.name, name);
    ck_assert_str_eq(p.vendor, "AMD");
    ck_assert_str_eq(p.arch, arch);
    ck_assert_uint_eq(p.warp_size, warp);
    ck_assert_uint_eq(p.compute_units, cus);
    ck_assert_uint_eq(p.max_threads_per_block, HIPDOUBLE_THREADS);
    ck_assert_uint_eq(p.memory_bytes, memory);
    ck_assert_uint_eq(p.max_shared_per_block, HIPDOUBLE_SHARED);
    ck_assert_uint_eq(p.max_shared_per_block_optin, optin);
    ck_assert_str_eq(p.pci_bus_id, pci);
    ck_assert_uint_eq(p.flags, flags);
    if (flags & TRD_DEVICE_HAS_UUID)
        for (int k = 0; k < 16; k++)
            ck_assert_uint_eq(p.uuid[k], HIPDOUBLE_UUID_BYTE(index, k));
}

/* Every property, for a wave64 and a wave32 device, through the ROCm 6
 * (R0600) and the ROCm 5 (R0000) hipDeviceProp_t. */
START_TEST(test_enumeration)
{
    int rocm = _i ? 5 : 6;
    trd_runtime_t *rt = hip_runtime(rocm, THREE_DEVICES);
    trd_driver_info_t di = driver_info(rt, "hip");
    ck_assert_int_eq(di.status, TRD_DRIVER_LOADED);
    ck_assert_uint_eq(di.device_count, 3);
    ck_assert_str_eq(di.backend, "hip");
    ck_assert_str_eq(di.reason, "");
    uint32_t coop = rocm == 6 ? TRD_DEVICE_COOPERATIVE_LAUNCH : 0;
    uint32_t cluster = rocm == 6 ? TRD_DEVICE_CLUSTER_LAUNCH : 0;
    check_props(rt, "hip:0", "hipdouble gfx942 #0", "gfx942", 64, 304, HIPDOUBLE_MEMORY(0), HIPDOUBLE_SHARED,
                "0000:10:00.0", 0, TRD_DEVICE_HAS_UUID | coop);
    check_props(rt, "hip:1", "hipdouble gfx1100 #1", "gfx1100", 32, 48, HIPDOUBLE_MEMORY(1), 98304, "0000:c3:00.0",
                1, TRD_DEVICE_HAS_UUID);
    check_props(rt, "hip:2", "hipdouble gfx950 #2", "gfx950", 64, 256, HIPDOUBLE_MEMORY(2), HIPDOUBLE_SHARED,
                "0000:20:00.0", 2, cluster);
    /* the arch selects as Triton names it */
    trd_device_props_t p = {.struct_size = sizeof p};
    TU_OK(trd_device_get_props(device(rt, "arch=gfx1100"), &p));
    ck_assert_str_eq(p.uri, "hip:1");
    check_clean();
    trd_runtime_destroy(rt);
}
END_TEST

/* Without a GPU: HIP's own answers (hipInit 101, hipGetDeviceCount 100). */
START_TEST(test_no_device)
{
    trd_runtime_t *rt = hip_runtime(6, "");
    trd_driver_info_t di = driver_info(rt, "hip");
    ck_assert_int_eq(di.status, TRD_DRIVER_LOADED);
    ck_assert_uint_eq(di.device_count, 0);
    ck_assert_str_eq(di.reason, "0 devices: hipErrorNoDevice (100)");
    trd_runtime_destroy(rt);

    /* another reason hipGetDeviceCount gives is shown the same way */
    rt = hip_runtime_failing(6, TWO_GFX942, "hipGetDeviceCount=35");
    di = driver_info(rt, "hip");
    ck_assert_int_eq(di.status, TRD_DRIVER_LOADED);
    ck_assert_str_eq(di.reason, "0 devices: hipErrorInsufficientDriver (35)");
    trd_runtime_destroy(rt);
}
END_TEST

/* A device whose properties cannot be read is left out, with the reason. */
START_TEST(test_device_failure)
{
    trd_runtime_t *rt = hip_runtime_failing(6, TWO_GFX942, "hipGetDevicePropertiesR0600=999");
    trd_driver_info_t di = driver_info(rt, "hip");
    ck_assert_uint_eq(di.device_count, 0);
    ck_assert_msg(strstr(di.reason, "hipGetDevicePropertiesR0600") && strstr(di.reason, "hipErrorUnknown (999)"),
                  "reason: %s", di.reason);
    trd_runtime_destroy(rt);
}
END_TEST

/* The library is named in the configuration and does not load: the driver is
 * skipped and says what it tried. */
START_TEST(test_library_not_found)
{
    trd_runtime_t *rt = tu_runtime(hip_module(), "[driver.hip]\nlibrary = /nonexistent/libamdhip64.so\n");
    trd_driver_info_t di = driver_info(rt, "hip");
    ck_assert_int_eq(di.status, TRD_DRIVER_SKIPPED);
    ck_assert_msg(strstr(di.reason, "/nonexistent/libamdhip64.so: ") && strstr(di.reason, "No such file"),
                  "reason: %s", di.reason);
    trd_runtime_destroy(rt);

    /* every path with its own reason: missing, and a library that is not HIP */
    rt = tu_runtime(hip_module(), "[driver.hip]\nlibrary = /nonexistent/a.so:libm.so.6\n");
    di = driver_info(rt, "hip");
    ck_assert_int_eq(di.status, TRD_DRIVER_SKIPPED);
    ck_assert_msg(strstr(di.reason, "/nonexistent/a.so: ") &&
                      strstr(di.reason, "libm.so.6: required symbol hipInit is missing"),
                  "reason: %s", di.reason);
    /* the host device is not affected */
    trd_device_props_t p = {.struct_size = sizeof p};
    TU_OK(trd_device_get_props(device(rt, "host:0"), &p));
    trd_runtime_destroy(rt);
}
END_TEST

/* ------------------------------------------------------------ launches */

/* Triton's add_kernel cache entry: its metadata read, its HSACO accepted,
 * and a launch with a random input as HIP's contract requires. */
START_TEST(test_triton_add)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:0");
    trd_kernel_t *k = triton_add(rt);
    trd_target_info_t ti = {.struct_size = sizeof ti};
    TU_OK(trd_kernel_target_info(k, 0, &ti));
    ck_assert_int_eq(ti.format, TRD_FORMAT_HSACO);
    ck_assert_str_eq(ti.arch, "gfx942");
    ck_assert_uint_eq(ti.num_warps, 4);
    ck_assert_uint_eq(ti.warp_size, 64);

    /* what HIP reports of the compiled function: the code object's VGPRs,
     * private memory and maximum flat workgroup size (14, 0 and 256) */
    trd_load_info_t li = {.struct_size = sizeof li};
    TU_OK(trd_kernel_load(k, dev, &li));
    ck_assert_int_eq(li.format, TRD_FORMAT_HSACO);
    ck_assert_uint_eq(li.registers, 14);
    ck_assert_uint_eq(li.spills, 0);
    ck_assert_uint_eq(li.max_threads_per_block, 256);
    ck_assert_uint_eq(li.block_size, 256);
    ck_assert_uint_eq(dbl_calls("hipModuleLoadDataEx"), 1);

    uint64_t seed = 0x5eed;
    int32_t n = (int32_t)(1 + tu_rand(&seed) % 20000);
    uint32_t grid = (uint32_t)((n + 1023) / 1024); /* BLOCK = 1024 */
    struct bufs b;
    bufs_alloc(dev, (size_t)n, &b);
    float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y), *r = malloc((size_t)n * sizeof *r);
    tu_fill_f32(x, (size_t)n, seed);
    tu_fill_f32(y, (size_t)n, seed + 1);
    TU_OK(trd_buffer_write(b.x, 0, x, (size_t)n * sizeof *x, NULL));
    TU_OK(trd_buffer_write(b.y, 0, y, (size_t)n * sizeof *y, NULL));
    trd_stream_t *s;
    TU_OK(trd_stream_create(dev, &s));
    void *native;
    TU_OK(trd_stream_native(s, &native));
    TU_OK(launch_add(k, s, NULL, NULL, &b, n, grid, 1, NULL, NULL));
    TU_OK(trd_stream_synchronize(s));
    ck_assert_uint_eq(dbl_launch_count(), 1);
    struct hipdouble_launch l = last_launch();
    ck_assert_str_eq(l.api, "hipModuleLaunchKernel");
    ck_assert_ptr_eq(l.stream, native);
    ck_assert_int_eq(l.device, 0);
    ck_assert_uint_eq(l.grid[0], grid);
    ck_assert_uint_eq(l.grid[1], 1);
    ck_assert_uint_eq(l.grid[2], 1);
    ck_assert_uint_eq(l.block[0], 4 * 64);
    ck_assert_uint_eq(l.block[1], 1);
    ck_assert_uint_eq(l.block[2], 1);
    ck_assert_uint_eq(l.shared, 0);
    check_add_args(&l, &b, n, NULL, NULL); /* no scratch in the metadata: NULL pointers */

    /* caller scratch for a kernel that asks for none is still NULL */
    TU_OK(launch_add(k, s, NULL, NULL, &b, n, grid, 1, b.ax, b.ay));
    l = last_launch();
    check_add_args(&l, &b, n, NULL, NULL);

    /* device memory is host memory here: what was written reads back */
    TU_OK(trd_buffer_read(b.x, 0, r, (size_t)n * sizeof *r, NULL));
    ck_assert_mem_eq(r, x, (size_t)n * sizeof *r);
    free(x);
    free(y);
    free(r);
    trd_stream_destroy(s);
    bufs_free(&b);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);
}
END_TEST

/* A kernel's illegal memory access (hipErrorIllegalAddress, reported by the next synchronize and by every later
 * call: HIP keeps it) says what it means; the launch it fails names the kernel. */
START_TEST(test_kernel_fault)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:0");
    trd_kernel_t *k = triton_add(rt);
    struct bufs b;
    bufs_alloc(dev, 1024, &b);
    trd_stream_t *s;
    TU_OK(trd_stream_create(dev, &s));
    TU_OK(launch_add(k, s, NULL, NULL, &b, 1024, 1, 1, NULL, NULL));
    dbl_fail("hipStreamSynchronize=700,hipModuleLaunchKernel=700");
    TU_FAILS(trd_stream_synchronize(s), TRD_ERR_DEVICE, "hipErrorIllegalAddress (700)");
    ck_assert_msg(strstr(trd_error_message(), "the kernel read or wrote outside its buffers: a buffer may be smaller "
                                              "than the grid") &&
                      strstr(trd_error_message(), "HIP keeps this error"),
                  "%s", trd_error_message());
    TU_FAILS(launch_add(k, s, NULL, NULL, &b, 1024, 1, 1, NULL, NULL), TRD_ERR_DEVICE,
             "launching kernel 'add_kernel' on hip:0: ");
    ck_assert_msg(strstr(trd_error_message(), "hipErrorIllegalAddress (700)") &&
                      strstr(trd_error_message(), "outside its buffers"), "%s", trd_error_message());
    dbl_fail("hipStreamSynchronize=719");
    TU_FAILS(trd_stream_synchronize(s), TRD_ERR_DEVICE, "hipErrorLaunchFailure (719)");
    ck_assert_msg(strstr(trd_error_message(), "the kernel faulted on the device"), "%s", trd_error_message());
    dbl_fail("");
    trd_stream_destroy(s);
    bufs_free(&b);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);
}
END_TEST

static trd_kernel_t *triton_kernel(trd_runtime_t *rt, const char *variant)
{
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_TRITON_CACHE,
                           .path = tu_fixture("hip", variant)};
    trd_kernel_t *k = NULL;
    TU_OK(trd_kernel_create(rt, &d, &k));
    return k;
}

/* Every scalar type of Triton's signatures, and dynamic shared memory, as the
 * code objects lay out their arguments (offsets and sizes from their
 * metadata; values in IEEE and two's complement encodings). */
START_TEST(test_scalars_and_shared)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:0");
    trd_buffer_t *in, *out;
    TU_OK(trd_buffer_alloc(dev, 64 * 96 * 4, &in));
    TU_OK(trd_buffer_alloc(dev, 64 * 96 * 4, &out));
    void *ain, *aout;
    TU_OK(trd_buffer_address(in, &ain));
    TU_OK(trd_buffer_address(out, &aout));

    /* transpose_kernel(in, out, M: i32, N: i32, alpha: fp32), 4 warps, 4096 bytes of shared memory */
    trd_kernel_t *k = triton_kernel(rt, "transpose");
    trd_arg_t targs[5] = {trd_arg_buffer(in), trd_arg_buffer(out), trd_arg_int(64), trd_arg_int(96),
                          trd_arg_float(1.5)};
    trd_launch_t tl = {.struct_size = sizeof tl, .grid = {2, 3, 1}, .num_args = 5, .args = targs, .device = dev};
    TU_OK(trd_kernel_launch(k, &tl));
    struct hipdouble_launch l = last_launch();
    ck_assert_str_eq(l.kernel, "transpose_kernel");
    ck_assert_uint_eq(l.grid[0], 2);
    ck_assert_uint_eq(l.grid[1], 3);
    ck_assert_uint_eq(l.grid[2], 1);
    ck_assert_uint_eq(l.block[0], 256);
    ck_assert_uint_eq(l.shared, 4096);
    ck_assert_uint_eq(l.nargs, 7);
    unsigned char want[80];
    memset(want, 0, sizeof want);
    int32_t m = 64, n = 96;
    uint32_t alpha = 0x3fc00000; /* 1.5f */
    memcpy(want + 0, &ain, 8);
    memcpy(want + 8, &aout, 8);
    memcpy(want + 16, &m, 4);
    memcpy(want + 20, &n, 4);
    memcpy(want + 24, &alpha, 4);
    ck_assert_mem_eq(l.kernarg, want, 48); /* the scratch pointers at 32 and 40: NULL */
    trd_kernel_destroy(k);

    /* scalars_kernel(out, i8, i16, i32, i64, u32, u64, fp16, bf16, fp32, fp64, i1), 1 warp */
    k = triton_kernel(rt, "scalars");
    trd_arg_t sargs[12] = {trd_arg_buffer(out),  trd_arg_int(-5),     trd_arg_int(-300),   trd_arg_int(-70000),
                           trd_arg_int(-50000000000), trd_arg_uint(4000000000u), trd_arg_uint(UINT64_C(18000000000000000000)),
                           trd_arg_float(1.5),   trd_arg_float(-2.0), trd_arg_float(3.25), trd_arg_float(-6.5),
                           trd_arg_int(1)};
    trd_launch_t sl = {.struct_size = sizeof sl, .grid = {1, 1, 1}, .num_args = 12, .args = sargs, .device = dev};
    TU_OK(trd_kernel_launch(k, &sl));
    l = last_launch();
    ck_assert_str_eq(l.kernel, "scalars_kernel");
    ck_assert_uint_eq(l.block[0], 64);
    ck_assert_uint_eq(l.shared, 0);
    ck_assert_uint_eq(l.nargs, 14);
    ck_assert_uint_eq(l.kernarg_size, 80);
    memset(want, 0, sizeof want);
    int8_t i8 = -5;
    int16_t i16 = -300;
    int32_t i32 = -70000;
    int64_t i64 = -50000000000;
    uint32_t u32 = 4000000000u;
    uint64_t u64 = UINT64_C(18000000000000000000);
    uint16_t f16 = 0x3e00, bf16 = 0xc000; /* 1.5 and -2.0 */
    uint32_t f32 = 0x40500000;            /* 3.25f */
    uint64_t f64 = UINT64_C(0xc01a000000000000); /* -6.5 */
    uint8_t i1 = 1;
    memcpy(want + 0, &aout, 8);
    memcpy(want + 8, &i8, 1);
    memcpy(want + 10, &i16, 2);
    memcpy(want + 12, &i32, 4);
    memcpy(want + 16, &i64, 8);
    memcpy(want + 24, &u32, 4);
    memcpy(want + 32, &u64, 8);
    memcpy(want + 40, &f16, 2);
    memcpy(want + 42, &bf16, 2);
    memcpy(want + 44, &f32, 4);
    memcpy(want + 48, &f64, 8);
    memcpy(want + 56, &i1, 1);
    ck_assert_mem_eq(l.kernarg, want, 80);
    trd_kernel_destroy(k);
    trd_buffer_free(in);
    trd_buffer_free(out);
    check_clean();
    check_released(rt);
}
END_TEST

/* One kernel with a wave64 and a wave32 target: the block is num_warps times
 * each target's warp size (4 x 64 on gfx942, 4 x 32 on gfx1100), each module
 * loaded on its own device. */
START_TEST(test_wave32_and_wave64)
{
    trd_runtime_t *rt = hip_runtime(6, THREE_DEVICES);
    size_t n942, n1100;
    void *img942 = tu_read_file(gfx942_hsaco(), &n942), *img1100 = tu_read_file(gfx1100_hsaco(), &n1100);
    size_t nmeta;
    char *meta942 = tu_read_file(tu_path("%s/add_kernel.json", tu_fixture("hip", "add_fp32")), &nmeta);
    meta942 = realloc(meta942, nmeta + 1);
    meta942[nmeta] = '\0';
    trd_bundle_target_t t[2] = {
        {.struct_size = sizeof t[0], .format = TRD_FORMAT_HSACO, .backend = "hip", .arch = "gfx942",
         .image = img942, .image_size = n942, .metadata = meta942},
        {.struct_size = sizeof t[1], .format = TRD_FORMAT_HSACO, .backend = "hip", .arch = "gfx1100",
         .image = img1100, .image_size = n1100, .metadata = add_meta("gfx1100", 32, 4, 1, NULL)},
    };
    void *bundle;
    uint64_t bsize;
    TU_OK(trd_bundle_write("add_kernel", "*fp32,*fp32,*fp32,i32", t, 2, &bundle, &bsize));
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_BUNDLE, .data = bundle, .size = bsize};
    trd_kernel_t *k;
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_free(bundle);
    free(img942);
    free(img1100);
    free(meta942);

    const char *uris[2] = {"hip:0", "hip:1"};
    const unsigned block[2] = {256, 128};
    for (int i = 0; i < 2; i++) {
        trd_device_t *dev = device(rt, uris[i]);
        struct bufs b;
        bufs_alloc(dev, 4096, &b);
        trd_stream_t *s;
        TU_OK(trd_stream_create(dev, &s));
        TU_OK(launch_add(k, s, NULL, NULL, &b, 4096, 4, 1, NULL, NULL));
        struct hipdouble_launch l = last_launch();
        ck_assert_int_eq(l.device, i);
        ck_assert_int_eq(l.module_device, i);
        ck_assert_uint_eq(l.block[0], block[i]);
        ck_assert_uint_eq(l.grid[0], 4);
        check_add_args(&l, &b, 4096, NULL, NULL);
        trd_stream_destroy(s);
        bufs_free(&b);
    }
    /* the gfx1100 code object: 10 VGPRs, 132 bytes of private memory (33
     * spilled dwords), at most 128 threads a block */
    trd_load_info_t li = {.struct_size = sizeof li};
    TU_OK(trd_kernel_load(k, device(rt, "hip:1"), &li));
    ck_assert_uint_eq(li.registers, 10);
    ck_assert_uint_eq(li.spills, 33);
    ck_assert_uint_eq(li.max_threads_per_block, 128);
    ck_assert_uint_eq(li.block_size, 128);
    trd_kernel_destroy(k);

    /* the target's warp size, not the device's: RDNA code built for wave64
     * (2 x 64 threads) runs so on a device whose default is wave32 */
    k = raw_kernel(rt, gfx1100_hsaco(), "hip:gfx1100", NULL, add_meta("gfx1100", 64, 2, 1, NULL));
    struct bufs b;
    bufs_alloc(device(rt, "hip:1"), 1024, &b);
    TU_OK(launch_add(k, NULL, device(rt, "hip:1"), NULL, &b, 1024, 1, 1, NULL, NULL));
    ck_assert_uint_eq(last_launch().block[0], 128);
    bufs_free(&b);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);
}
END_TEST

/* A grid with no program launches nothing. */
START_TEST(test_empty_grid)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:0");
    trd_kernel_t *k = triton_add(rt);
    struct bufs b;
    bufs_alloc(dev, 16, &b);
    TU_OK(launch_add(k, NULL, dev, NULL, &b, 16, 0, 1, NULL, NULL));
    TU_OK(launch_add(k, NULL, dev, NULL, &b, 16, 4, 0, NULL, NULL));
    ck_assert_uint_eq(dbl_launch_count(), 0);
    ck_assert_uint_eq(dbl_calls("hipModuleLaunchKernel"), 0);
    bufs_free(&b);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);
}
END_TEST

/* Scratch: gridX*gridY*gridZ*num_ctas programs of global_scratch_size bytes,
 * then the profile scratch, each at its alignment; from an arena that is
 * reused and grows, freed only when no queued kernel can read it. */
START_TEST(test_scratch)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:0");
    trd_kernel_t *k = raw_kernel(rt, gfx942_hsaco(), "hip:gfx942", NULL,
                                 add_meta("gfx942", 64, 4, 1,
                                          "\"global_scratch_size\":96,\"global_scratch_align\":16,"
                                          "\"profile_scratch_size\":40,\"profile_scratch_align\":64"));
    struct bufs b;
    bufs_alloc(dev, 1024, &b);
    trd_stream_t *s;
    TU_OK(trd_stream_create(dev, &s));
    TU_OK(trd_kernel_load(k, dev, NULL));
    unsigned mallocs = dbl_calls("hipMalloc");

    TU_OK(launch_add(k, s, NULL, NULL, &b, 1024, 5, 2, NULL, NULL));
    struct hipdouble_launch l = last_launch();
    char *gs = kernarg_ptr(&l, 32), *ps = kernarg_ptr(&l, 40);
    void *base;
    uint64_t size;
    int adev;
    ck_assert_ptr_nonnull(gs);
    ck_assert_ptr_nonnull(ps);
    ck_assert_uint_eq((uintptr_t)gs % 16, 0);
    ck_assert_uint_eq((uintptr_t)ps % 64, 0);
    ck_assert(dbl.allocation(gs, &base, &size, &adev));
    ck_assert_int_eq(adev, 0);
    ck_assert_uint_ge((uint64_t)((char *)base + size - gs), 10 * 96);
    ck_assert(ps >= gs + 10 * 96); /* the profile region does not overlap the global one */
    ck_assert(dbl.allocation(ps, &base, &size, &adev));
    ck_assert_uint_ge((uint64_t)((char *)base + size - ps), 10 * 40);
    ck_assert_uint_eq(dbl_calls("hipMalloc"), mallocs + 1);
    check_add_args(&l, &b, 1024, gs, ps);

    /* reused: no allocation on the next launch */
    TU_OK(launch_add(k, s, NULL, NULL, &b, 1024, 5, 2, NULL, NULL));
    l = last_launch();
    ck_assert_ptr_eq(kernarg_ptr(&l, 32), gs);
    ck_assert_uint_eq(dbl_calls("hipMalloc"), mallocs + 1);

    /* a larger grid grows it; the old block stays until the stream is synchronized */
    unsigned live = dbl.live("allocations");
    TU_OK(launch_add(k, s, NULL, NULL, &b, 1024, 1000, 100, NULL, NULL));
    l = last_launch();
    char *gs2 = kernarg_ptr(&l, 32);
    ck_assert(dbl.allocation(gs2, &base, &size, &adev));
    ck_assert_uint_ge((uint64_t)((char *)base + size - gs2), (uint64_t)100000 * 96);
    ck_assert_uint_eq(dbl_calls("hipMalloc"), mallocs + 2);
    ck_assert_uint_eq(dbl.live("allocations"), live + 1);
    unsigned frees = dbl_calls("hipFree");
    TU_OK(trd_stream_synchronize(s));
    ck_assert_uint_eq(dbl_calls("hipFree"), frees + 1);
    ck_assert_uint_eq(dbl.live("allocations"), live);

    /* the caller's scratch is used as given */
    TU_OK(launch_add(k, s, NULL, NULL, &b, 1024, 5, 2, b.ax, b.ay));
    l = last_launch();
    check_add_args(&l, &b, 1024, b.ax, b.ay);
    ck_assert_uint_eq(dbl_calls("hipMalloc"), mallocs + 2);

    /* a caller's own stream: an arena of its own, reused */
    void *native = NULL;
    ck_assert_int_eq(dbl.hipStreamCreateWithFlags(&native, 0), 0);
    TU_OK(launch_add(k, NULL, dev, native, &b, 1024, 3, 1, NULL, NULL));
    l = last_launch();
    char *gs3 = kernarg_ptr(&l, 32);
    ck_assert_ptr_eq(l.stream, native);
    void *base2;
    ck_assert(dbl.allocation(gs2, &base2, &size, &adev));
    ck_assert(dbl.allocation(gs3, &base, &size, &adev));
    ck_assert_ptr_ne(base, base2); /* not the other stream's arena */
    TU_OK(launch_add(k, NULL, dev, native, &b, 1024, 3, 1, NULL, NULL));
    l = last_launch();
    ck_assert_ptr_eq(kernarg_ptr(&l, 32), gs3);
    ck_assert_uint_eq(dbl_calls("hipMalloc"), mallocs + 3);

    trd_stream_destroy(s);
    bufs_free(&b);
    trd_kernel_destroy(k);
    ck_assert_int_eq(dbl.hipStreamDestroy(native), 0);
    check_clean();
    check_released(rt); /* the arenas go with their stream and device */
}
END_TEST

/* A caller's stream: launched on as it is, the current device untouched. */
START_TEST(test_foreign_stream)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev1 = device(rt, "hip:1");
    trd_kernel_t *k = triton_add(rt);
    TU_OK(trd_kernel_load(k, dev1, NULL));
    struct bufs b;
    bufs_alloc(dev1, 2048, &b);
    /* the application makes a stream on device 1, then goes back to 0 */
    void *native = NULL;
    ck_assert_int_eq(dbl.hipSetDevice(1), 0);
    ck_assert_int_eq(dbl.hipStreamCreateWithFlags(&native, 0), 0);
    ck_assert_int_eq(dbl.hipSetDevice(0), 0);
    dbl_forget();

    TU_OK(launch_add(k, NULL, dev1, native, &b, 2048, 2, 1, NULL, NULL));
    struct hipdouble_launch l = last_launch();
    ck_assert_ptr_eq(l.stream, native);
    ck_assert_int_eq(l.device, 1);
    ck_assert_int_eq(l.current_device, 0);
    ck_assert_uint_eq(dbl_calls("hipSetDevice"), 0);
    check_add_args(&l, &b, 2048, NULL, NULL);

    /* wrapped, the same */
    trd_stream_t *w;
    TU_OK(trd_stream_wrap(dev1, native, &w));
    TU_OK(launch_add(k, w, NULL, NULL, &b, 2048, 2, 1, NULL, NULL));
    l = last_launch();
    ck_assert_ptr_eq(l.stream, native);
    ck_assert_uint_eq(dbl_calls("hipSetDevice"), 0);
    trd_stream_destroy(w);
    ck_assert_uint_eq(dbl_calls("hipStreamDestroy"), 0); /* the caller's to destroy */

    /* the NULL stream is the current device's: device 1 for the launch, then
     * the caller's device 0 again */
    TU_OK(launch_add(k, NULL, dev1, NULL, &b, 2048, 2, 1, NULL, NULL));
    l = last_launch();
    ck_assert_ptr_null(l.stream);
    ck_assert_int_eq(l.device, 1);
    ck_assert_int_eq(l.current_device, 1);
    ck_assert_int_eq(dbl.current_device(), 0);

    ck_assert_int_eq(dbl.hipStreamDestroy(native), 0);
    bufs_free(&b);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);
}
END_TEST

/* Cooperative launch where the library and the device offer it; a clear
 * error where either does not. */
START_TEST(test_cooperative)
{
    const char *meta = add_meta("gfx942", 64, 4, 1, "\"launch_cooperative_grid\":true");
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_kernel_t *k = raw_kernel(rt, gfx942_hsaco(), "hip:gfx942", NULL, meta);
    struct bufs b;
    bufs_alloc(device(rt, "hip:0"), 1024, &b);
    TU_OK(launch_add(k, NULL, device(rt, "hip:0"), NULL, &b, 1024, 8, 1, NULL, NULL));
    struct hipdouble_launch l = last_launch();
    ck_assert_str_eq(l.api, "hipModuleLaunchCooperativeKernel");
    ck_assert_int_eq(l.cooperative, 1);
    ck_assert_uint_eq(l.grid[0], 8);
    ck_assert_uint_eq(l.block[0], 256);
    check_add_args(&l, &b, 1024, NULL, NULL);
    /* more programs than can be resident at once: HIP's own error */
    TU_FAILS(launch_add(k, NULL, device(rt, "hip:0"), NULL, &b, 1024, 304 * 8 + 1, 1, NULL, NULL), TRD_ERR_LIMIT,
             "hipErrorCooperativeLaunchTooLarge (720)");
    bufs_free(&b);
    /* device 1 cannot launch cooperatively */
    bufs_alloc(device(rt, "hip:1"), 1024, &b);
    TU_FAILS(launch_add(k, NULL, device(rt, "hip:1"), NULL, &b, 1024, 8, 1, NULL, NULL), TRD_ERR_UNSUPPORTED,
             "does not support cooperative launch");
    bufs_free(&b);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);

    /* ROCm 5.2 exports no hipModuleLaunchCooperativeKernel */
    rt = hip_runtime(5, TWO_GFX942);
    k = raw_kernel(rt, gfx942_hsaco(), "hip:gfx942", NULL, meta);
    bufs_alloc(device(rt, "hip:0"), 1024, &b);
    TU_FAILS(launch_add(k, NULL, device(rt, "hip:0"), NULL, &b, 1024, 8, 1, NULL, NULL), TRD_ERR_UNSUPPORTED,
             "hipModuleLaunchCooperativeKernel");
    ck_assert_uint_eq(dbl_launch_count(), 0);
    bufs_free(&b);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);
}
END_TEST

/* num_ctas > 1: a cluster launch through hipDrvLaunchKernelEx, grid x in CTAs. */
START_TEST(test_cluster)
{
    const char *meta = add_meta("gfx942", 64, 4, 2, NULL);
    trd_runtime_t *rt = hip_runtime(6, "gfx942/64/304/cluster,gfx942/64/304");
    trd_kernel_t *k = raw_kernel(rt, gfx942_hsaco(), "hip:gfx942", NULL, meta);
    struct bufs b;
    bufs_alloc(device(rt, "hip:0"), 1024, &b);
    TU_OK(launch_add(k, NULL, device(rt, "hip:0"), NULL, &b, 1024, 3, 2, NULL, NULL));
    struct hipdouble_launch l = last_launch();
    ck_assert_str_eq(l.api, "hipDrvLaunchKernelEx");
    ck_assert_uint_eq(l.grid[0], 6);
    ck_assert_uint_eq(l.grid[1], 2);
    ck_assert_uint_eq(l.grid[2], 1);
    ck_assert_uint_eq(l.cluster[0], 2);
    ck_assert_uint_eq(l.cluster[1], 1);
    ck_assert_uint_eq(l.cluster[2], 1);
    ck_assert_uint_eq(l.block[0], 256);
    ck_assert_int_eq(l.cooperative, 0);
    check_add_args(&l, &b, 1024, NULL, NULL);
    bufs_free(&b);
    bufs_alloc(device(rt, "hip:1"), 1024, &b);
    TU_FAILS(launch_add(k, NULL, device(rt, "hip:1"), NULL, &b, 1024, 3, 2, NULL, NULL), TRD_ERR_UNSUPPORTED,
             "does not support cluster launch");
    bufs_free(&b);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);

    rt = hip_runtime(5, "gfx942/64/304/cluster");
    k = raw_kernel(rt, gfx942_hsaco(), "hip:gfx942", NULL, meta);
    bufs_alloc(device(rt, "hip:0"), 1024, &b);
    TU_FAILS(launch_add(k, NULL, device(rt, "hip:0"), NULL, &b, 1024, 3, 2, NULL, NULL), TRD_ERR_UNSUPPORTED,
             "hipDrvLaunchKernelEx");
    bufs_free(&b);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);
}
END_TEST

/* ------------------------------------------------------------- errors */

START_TEST(test_out_of_memory)
{
    trd_runtime_t *rt = hip_runtime(6, "gfx942/64/304/mem=1048576");
    trd_device_t *dev = device(rt, "hip:0");
    trd_buffer_t *buf = NULL;
    /* beyond the device's memory: HIP's hipErrorOutOfMemory */
    TU_FAILS(trd_buffer_alloc(dev, 2 << 20, &buf), TRD_ERR_NO_MEMORY, "hipErrorOutOfMemory (2)");
    ck_assert_ptr_null(buf);
    /* and injected */
    dbl_fail("hipMalloc=2");
    TU_FAILS(trd_buffer_alloc(dev, 64, &buf), TRD_ERR_NO_MEMORY, "hipMalloc");
    ck_assert_msg(strstr(trd_error_message(), "hipErrorOutOfMemory") && strstr(trd_error_message(), "hip:0"), "%s",
                  trd_error_message());
    ck_assert_ptr_null(buf);
    dbl_fail("");
    TU_OK(trd_buffer_alloc(dev, 64, &buf));
    trd_buffer_free(buf);
    check_clean();
    check_released(rt);
}
END_TEST

START_TEST(test_invalid_image)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:0");
    /* HIP rejects the image and writes a JIT log */
    dbl_fail("hipModuleLoadDataEx=200");
    dbl_jit_log("error: ELF relocation out of range");
    trd_kernel_t *k = triton_add(rt);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_FORMAT, "hipErrorInvalidImage (200)");
    const char *m = trd_error_message();
    ck_assert_msg(strstr(m, "kernel 'add_kernel'") && strstr(m, "hip:0") && strstr(m, "hipModuleLoadDataEx") &&
                      strstr(m, "JIT log: error: ELF relocation out of range"),
                  "%s", m);
    trd_kernel_destroy(k);
    /* AMD's runtime leaves the log buffers untouched: no log, no garbage */
    dbl_jit_log(NULL);
    k = triton_add(rt);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_FORMAT, "hipErrorInvalidImage (200)");
    ck_assert_msg(!strstr(trd_error_message(), "JIT log"), "%s", trd_error_message());
    trd_kernel_destroy(k);
    dbl_fail("");

    /* bytes that are no code object */
    dbl_jit_log("comgr");
    char junk[256];
    memset(junk, 0x5a, sizeof junk);
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_IMAGE, .data = junk, .size = sizeof junk,
                           .name = "add_kernel", .signature = "*fp32,*fp32,*fp32,i32", .format = TRD_FORMAT_HSACO,
                           .target = "hip:gfx942"};
    TU_OK(trd_kernel_create(rt, &d, &k));
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_FORMAT, "hipErrorInvalidImage (200)");
    ck_assert_msg(strstr(trd_error_message(), "JIT log: comgr: not an AMDGPU code object"), "%s",
                  trd_error_message());
    trd_kernel_destroy(k);
    /* a code object for another GPU */
    k = raw_kernel(rt, gfx1100_hsaco(), "hip:gfx942", "add_kernel", NULL);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_FORMAT, "hipErrorNoBinaryForGpu (209)");
    trd_kernel_destroy(k);
    /* an entry the code object does not have */
    size_t n;
    void *img = tu_read_file(gfx942_hsaco(), &n);
    d.data = img;
    d.size = n;
    d.name = "sub_kernel";
    TU_OK(trd_kernel_create(rt, &d, &k));
    free(img);
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_NOT_FOUND, "hipModuleGetFunction('sub_kernel')");
    ck_assert_msg(strstr(trd_error_message(), "hipErrorNotFound (500)"), "%s", trd_error_message());
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);
}
END_TEST

/* The block the metadata asks for must fit what the compiled function allows. */
START_TEST(test_block_limits)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:0");
    /* 8 x 64 = 512 threads; the code object allows 256 */
    trd_kernel_t *k = raw_kernel(rt, gfx942_hsaco(), "hip:gfx942", NULL, add_meta("gfx942", 64, 8, 1, NULL));
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_LIMIT, "more than the 256 the compiled function allows");
    trd_kernel_destroy(k);
    /* 32 x 64 = 2048 threads; the device allows 1024 */
    k = raw_kernel(rt, gfx942_hsaco(), "hip:gfx942", NULL, add_meta("gfx942", 64, 32, 1, NULL));
    TU_FAILS(trd_kernel_load(k, dev, NULL), TRD_ERR_LIMIT, "2048 threads per block");
    ck_assert_uint_eq(dbl_calls("hipModuleLoadDataEx"), 1);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);
}
END_TEST

/* A compiled image cannot honour a load option it was not compiled with. */
START_TEST(test_debug_option)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_options_t *o;
    TU_OK(trd_options_create("hip", &o));
    TU_OK(trd_options_set_bool(o, "debug", 1));
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_TRITON_CACHE,
                           .path = tu_fixture("hip", "add_fp32"), .options = o};
    trd_kernel_t *k;
    TU_OK(trd_kernel_create(rt, &d, &k));
    TU_FAILS(trd_kernel_load(k, device(rt, "hip:0"), NULL), TRD_ERR_INVALID_ARGUMENT,
             "option debug=true, but the HSACO was compiled with debug=false");
    trd_kernel_destroy(k);
    TU_OK(trd_options_set_bool(o, "debug", 0));
    TU_OK(trd_kernel_create(rt, &d, &k));
    TU_OK(trd_kernel_load(k, device(rt, "hip:0"), NULL));
    trd_kernel_destroy(k);
    trd_options_destroy(o);
    check_clean();
    check_released(rt);
}
END_TEST

/* -------------------------------------------------- streams, events, memory */

START_TEST(test_streams_events_memory)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:1");
    trd_stream_t *s;
    TU_OK(trd_stream_create(dev, &s));
    void *native;
    TU_OK(trd_stream_native(s, &native));
    int sdev = -1;
    unsigned flags = 0;
    ck_assert(dbl.stream_info(native, &sdev, &flags));
    ck_assert_int_eq(sdev, 1);
    ck_assert_uint_eq(flags, 1); /* hipStreamNonBlocking */

    enum { N = 4096 };
    uint8_t in[N], out[N], want[N];
    uint64_t seed = 7;
    for (int i = 0; i < N; i++)
        in[i] = (uint8_t)tu_rand(&seed);
    trd_buffer_t *a, *b;
    TU_OK(trd_buffer_alloc(dev, N, &a));
    TU_OK(trd_buffer_alloc(dev, N, &b));
    void *addr, *base;
    uint64_t size;
    int adev;
    TU_OK(trd_buffer_address(a, &addr));
    ck_assert(dbl.allocation(addr, &base, &size, &adev));
    ck_assert_int_eq(adev, 1);
    TU_OK(trd_buffer_write(a, 0, in, N, NULL));
    TU_OK(trd_buffer_read(a, 0, out, N, NULL));
    ck_assert_mem_eq(out, in, N);
    TU_OK(trd_buffer_fill(b, 0, N, 0xab, s));
    TU_OK(trd_buffer_copy(b, 100, a, 0, 1000, s));
    TU_OK(trd_buffer_read(b, 0, out, N, s));
    TU_OK(trd_stream_synchronize(s));
    memset(want, 0xab, N);
    memcpy(want + 100, in, 1000);
    ck_assert_mem_eq(out, want, N);
    TU_OK(trd_buffer_fill(b, 0, N, 0x11, NULL));
    TU_OK(trd_buffer_read(b, 0, out, N, NULL));
    memset(want, 0x11, N);
    ck_assert_mem_eq(out, want, N);

    trd_event_t *e0, *e1;
    TU_OK(trd_event_create(dev, &e0));
    TU_OK(trd_event_create(dev, &e1));
    double ms = -1;
    TU_FAILS(trd_event_elapsed(e0, e1, &ms), TRD_ERR_INVALID_ARGUMENT, "hipEventElapsedTime");
    ck_assert(ms == -1); /* out-parameters only on success */
    TU_OK(trd_event_record(e0, s));
    TU_OK(trd_event_record(e1, s));
    TU_OK(trd_event_synchronize(e1));
    TU_OK(trd_event_elapsed(e0, e1, &ms));
    ck_assert(ms >= 0);

    trd_event_destroy(e0);
    trd_event_destroy(e1);
    trd_buffer_free(a);
    trd_buffer_free(b);
    trd_stream_destroy(s);
    ck_assert_uint_eq(dbl_calls("hipStreamDestroy"), 1);
    check_clean();
    check_released(rt);
}
END_TEST

/* trident.h's lifetimes on HIP: a kernel destroyed with launches queued is
 * unloaded after a synchronize covers them (the double refuses a module
 * unloaded under queued launches), an event destroyed with its record queued
 * is fine; a failure a synchronize reports names the kernel launched last on
 * the stream, and the event recorded after it. */
START_TEST(test_queued_work)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:0");
    trd_kernel_t *k = triton_add(rt);
    trd_stream_t *s;
    trd_event_t *e;
    TU_OK(trd_stream_create(dev, &s));
    TU_OK(trd_event_create(dev, &e));
    struct bufs b;
    bufs_alloc(dev, 2048, &b);
    TU_OK(launch_add(k, s, NULL, NULL, &b, 2048, 2, 1, NULL, NULL));
    TU_OK(launch_add(k, s, NULL, NULL, &b, 2048, 2, 1, NULL, NULL));
    TU_OK(trd_event_record(e, s));
    trd_event_destroy(e);
    trd_kernel_destroy(k);
    check_clean();
    k = triton_add(rt);
    TU_OK(trd_event_create(dev, &e));
    TU_OK(launch_add(k, s, NULL, NULL, &b, 2048, 2, 1, NULL, NULL));
    TU_OK(trd_event_record(e, s));
    dbl_fail("hipStreamSynchronize=700,hipEventSynchronize=700");
    TU_FAILS(trd_stream_synchronize(s), TRD_ERR_DEVICE,
             "synchronizing a stream of hip:0 (its last launch: kernel 'add_kernel'): hipStreamSynchronize on hip:0");
    TU_FAILS(trd_event_synchronize(e), TRD_ERR_DEVICE,
             "synchronizing an event of hip:0 (recorded after kernel 'add_kernel'): hipEventSynchronize");
    dbl_fail("");
    trd_kernel_destroy(k);
    trd_event_destroy(e);
    bufs_free(&b);
    trd_stream_destroy(s);
    check_clean();
    check_released(rt);
}
END_TEST

/* The optional stream_capturing op: what hipStreamIsCapturing says of a
 * stream between hipStreamBeginCapture and hipStreamEndCapture. The op is not
 * in the public API (the XLA handler uses it), so the test reaches it through
 * the stream's driver table. */
START_TEST(test_stream_capturing)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:0");
    void *native = NULL;
    ck_assert_int_eq(dbl.hipStreamCreateWithFlags(&native, 0), 0);
    trd_stream_t *w;
    TU_OK(trd_stream_wrap(dev, native, &w));
    trd_status_t (*capturing)(void *, int32_t *) = TRD_OPS_OPTIONAL(w->dev->drv->ops, stream_capturing);
    ck_assert_ptr_nonnull(capturing);
    int32_t cap = -1;
    TU_OK(capturing(w->h, &cap));
    ck_assert_int_eq(cap, 0);
    ck_assert_int_eq(dbl.hipStreamBeginCapture(native, 0), 0);
    TU_OK(capturing(w->h, &cap));
    ck_assert_int_eq(cap, 1);
    ck_assert_int_ne(dbl.hipStreamSynchronize(native), 0); /* why the handler must not wait then */
    void *graph = NULL;
    ck_assert_int_eq(dbl.hipStreamEndCapture(native, &graph), 0);
    TU_OK(capturing(w->h, &cap));
    ck_assert_int_eq(cap, 0);

    dbl_fail("hipStreamIsCapturing=400");
    cap = -1;
    TU_FAILS(capturing(w->h, &cap), TRD_ERR_INVALID_ARGUMENT, "hipStreamIsCapturing");
    ck_assert_int_eq(cap, -1); /* out-parameters only on success */
    dbl_fail("");

    trd_stream_destroy(w);
    ck_assert_int_eq(dbl.hipStreamDestroy(native), 0);
    check_clean();
    check_released(rt);
}
END_TEST

/* ------------------------------------------------------------- threads */

#define THREADS 4
#define PER_THREAD 64

struct worker {
    trd_kernel_t *k;
    trd_device_t *dev;
    const struct bufs *b;
    int index;
    trd_stream_t *s;
    void *native;
    trd_status_t st;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    w->st = trd_stream_create(w->dev, &w->s);
    if (w->st == TRD_OK)
        w->st = trd_stream_native(w->s, &w->native);
    for (int i = 0; i < PER_THREAD && w->st == TRD_OK; i++)
        w->st = launch_add(w->k, w->s, NULL, NULL, w->b, w->index * 1000 + i, (uint32_t)(1 + i % 3), 1, NULL,
                           NULL);
    return NULL;
}

/* Launches from 4 threads on 4 streams, each recorded on its stream, in order. */
START_TEST(test_threads)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    trd_device_t *dev = device(rt, "hip:0");
    trd_kernel_t *k = triton_add(rt);
    struct bufs b;
    bufs_alloc(dev, 8192, &b);
    struct worker w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){.k = k, .dev = dev, .b = &b, .index = i};
        ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(w[i].st == TRD_OK, "thread %d: %s", i, trd_status_name(w[i].st));
    }
    ck_assert_uint_eq(dbl_launch_count(), THREADS * PER_THREAD);
    int next[THREADS] = {0};
    for (unsigned i = 0; i < THREADS * PER_THREAD; i++) {
        struct hipdouble_launch l;
        ck_assert(dbl.launch_get(i, &l));
        int who = -1;
        for (int j = 0; j < THREADS; j++)
            if (l.stream == w[j].native)
                who = j;
        ck_assert_msg(who >= 0, "launch %u on a stream no thread made", i);
        int seq = next[who]++;
        ck_assert_uint_eq(l.grid[0], (unsigned)(1 + seq % 3));
        ck_assert_uint_eq(l.block[0], 256);
        check_add_args(&l, &b, who * 1000 + seq, NULL, NULL);
    }
    for (int i = 0; i < THREADS; i++) {
        ck_assert_int_eq(next[i], PER_THREAD);
        trd_stream_destroy(w[i].s);
    }
    bufs_free(&b);
    trd_kernel_destroy(k);
    check_clean();
    check_released(rt);
}
END_TEST

/* The double catches a caller's mistake, through the harness's log: a function looked up with another device
 * current than its module's. */
START_TEST(test_double_logs_a_broken_rule)
{
    trd_runtime_t *rt = hip_runtime(6, TWO_GFX942);
    FILE *f = fopen(gfx942_hsaco(), "rb");
    ck_assert_ptr_nonnull(f);
    static char image[1 << 20];
    size_t n = fread(image, 1, sizeof image, f);
    fclose(f);
    ck_assert_uint_gt(n, 0);
    int (*load)(void **module, const void *image, unsigned n, void *options, void **values);
    int (*get)(void **function, void *module, const char *name);
    int (*unload)(void *module);
    *(void **)&load = sym("hipModuleLoadDataEx");
    *(void **)&get = sym("hipModuleGetFunction");
    *(void **)&unload = sym("hipModuleUnload");
    void *m = NULL, *fn = NULL;
    ck_assert_int_eq(load(&m, image, 0, NULL, NULL), 0);
    check_clean();
    ck_assert_int_eq(dbl.hipSetDevice(1), 0);
    get(&fn, m, "add_kernel");
    ck_assert_int_eq(dbl.hipSetDevice(0), 0);
    ck_assert_uint_eq(trd_double_violation_count(&dbl.st->common), 1);
    ck_assert_str_eq(trd_double_violation_get(&dbl.st->common, 0),
                     "hipModuleGetFunction('add_kernel') with device 1 current, its module loaded on device 0");
    ck_assert_int_eq(unload(m), 0);
    dbl_forget();
    check_clean();
    check_released(rt);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hip");
    TCase *tc = tcase_create("double");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_loop_test(tc, test_enumeration, 0, 2);
    tcase_add_test(tc, test_no_device);
    tcase_add_test(tc, test_double_logs_a_broken_rule);
    tcase_add_test(tc, test_device_failure);
    tcase_add_test(tc, test_library_not_found);
    tcase_add_test(tc, test_triton_add);
    tcase_add_test(tc, test_kernel_fault);
    tcase_add_test(tc, test_scalars_and_shared);
    tcase_add_test(tc, test_wave32_and_wave64);
    tcase_add_test(tc, test_empty_grid);
    tcase_add_test(tc, test_scratch);
    tcase_add_test(tc, test_foreign_stream);
    tcase_add_test(tc, test_cooperative);
    tcase_add_test(tc, test_cluster);
    tcase_add_test(tc, test_out_of_memory);
    tcase_add_test(tc, test_invalid_image);
    tcase_add_test(tc, test_block_limits);
    tcase_add_test(tc, test_debug_option);
    tcase_add_test(tc, test_streams_events_memory);
    tcase_add_test(tc, test_queued_work);
    tcase_add_test(tc, test_stream_capturing);
    tcase_add_test(tc, test_threads);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
