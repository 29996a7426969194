/* SPDX-License-Identifier: Apache-2.0 */
/* vadd_demo: the C API end to end. Lists the devices, loads the add_kernel
 * bundle (sm90 cubin + PTX, gfx942 HSACO and a host shared object), runs it
 * on the best device that has an image for it (a GPU before the host) on
 * random inputs, and checks every output element against C.
 *
 *     vadd_demo [BUNDLE] [N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <trident/trident.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        if ((call) != TRD_OK) {                                                       \
            fprintf(stderr, "vadd_demo: %s failed: %s\n", #call, trd_error_message()); \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

int main(int argc, char **argv)
{
    const char *bundle = argc > 1 ? argv[1] : "examples/add_kernel.trdb";
    long n = argc > 2 ? atol(argv[2]) : 1 << 20;
    if (n <= 0 || n > (1L << 30)) {
        fprintf(stderr, "usage: vadd_demo [BUNDLE] [N]  (N: 1 .. 2^30)\n");
        return 2;
    }
    trd_runtime_t *rt;
    CHECK(trd_runtime_create(NULL, &rt));
    trd_kernel_t *k;
    trd_kernel_desc_t desc = {.struct_size = sizeof desc, .path = bundle};
    CHECK(trd_kernel_create(rt, &desc, &k));

    /* The best device the kernel has an image for: a GPU before the host. */
    uint32_t ndev = 0;
    CHECK(trd_runtime_device_count(rt, &ndev));
    trd_device_t *dev = NULL;
    trd_device_props_t best = {.struct_size = sizeof best};
    printf("devices:\n");
    for (uint32_t i = 0; i < ndev; i++) {
        trd_device_t *d;
        trd_device_props_t p = {.struct_size = sizeof p};
        int32_t ok = 0;
        CHECK(trd_runtime_device_get(rt, i, &d));
        CHECK(trd_device_get_props(d, &p));
        CHECK(trd_kernel_supports(k, d, &ok));
        printf("  %-8s %-40s %-8s %s\n", p.uri, p.name, p.arch, ok ? "" : "(no image for it)");
        if (ok && (!dev || (p.kind == TRD_DEVICE_GPU && best.kind != TRD_DEVICE_GPU))) {
            dev = d;
            best = p;
        }
    }
    if (!dev) {
        fprintf(stderr, "vadd_demo: no device can run %s\n", bundle);
        return 1;
    }

    size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
    if (!x || !y || !out)
        return 1;
    srand(42);
    for (long i = 0; i < n; i++) {
        x[i] = (float)((double)rand() / RAND_MAX * 2.0 - 1.0);
        y[i] = (float)((double)rand() / RAND_MAX * 2.0 - 1.0);
        out[i] = NAN; /* poison: every element must be written */
    }
    trd_stream_t *s;
    trd_buffer_t *bx, *by, *bo;
    CHECK(trd_stream_create(dev, &s));
    CHECK(trd_buffer_alloc(dev, bytes, &bx));
    CHECK(trd_buffer_alloc(dev, bytes, &by));
    CHECK(trd_buffer_alloc(dev, bytes, &bo));
    CHECK(trd_buffer_write(bx, 0, x, bytes, s));
    CHECK(trd_buffer_write(by, 0, y, bytes, s));
    CHECK(trd_buffer_write(bo, 0, out, bytes, s));

    trd_arg_t args[4] = {trd_arg_buffer(bx), trd_arg_buffer(by), trd_arg_buffer(bo), trd_arg_int(n)};
    trd_launch_t launch = {.struct_size = sizeof launch, .grid = {(uint32_t)((n + 1023) / 1024), 1, 1},
                           .num_args = 4, .args = args, .stream = s};
    trd_load_info_t li = {.struct_size = sizeof li};
    CHECK(trd_kernel_load(k, dev, &li));
    CHECK(trd_kernel_launch(k, &launch));
    CHECK(trd_buffer_read(bo, 0, out, bytes, s));
    CHECK(trd_stream_synchronize(s));

    long bad = 0;
    for (long i = 0; i < n; i++)
        if (out[i] != x[i] + y[i]) {
            if (bad++ < 5)
                fprintf(stderr, "  out[%ld] = %g, expected %g\n", i, out[i], x[i] + y[i]);
        }
    static const char *const formats[] = {"?", "cubin", "ptx", "fatbin", "hsaco", "spirv", "zebin", "host .so"};
    printf("add_kernel on %s (%s, %s image): %ld elements, %s\n", best.uri, best.name,
           li.format >= 0 && li.format <= 7 ? formats[li.format] : "?", n,
           bad ? "MISMATCH" : "every element verified against C");

    trd_buffer_free(bx);
    trd_buffer_free(by);
    trd_buffer_free(bo);
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
    free(x);
    free(y);
    free(out);
    return bad ? 1 : 0;
}
