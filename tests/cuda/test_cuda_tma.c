/* SPDX-License-Identifier: Apache-2.0 */
/* test_cuda_tma.c: tensor maps (TMA) on the CUDA path without a GPU, against
 * cudadouble (a test double of libcuda that checks and records what it gets).
 *
 * The driver's tensor_map_encode: the arguments cuTensorMapEncodeTiled
 * receives (dimensions reversed, strides in bytes with the innermost one
 * dropped, box reversed, element strides 1, swizzle, L2 promotion, NaN fill),
 * the map copied out, every invalid descriptor refused before CUDA with a
 * message naming the argument, CUDA's own failure, a device without TMA and a
 * libcuda without the function.
 *
 * With the XLA handlers built: trident_kernel_call on the CUDA platform through
 * a hand-made XLA call frame, with a kind-4 parameter: the launch's parameter
 * is the map encoded from that execution's buffer (a new buffer, a new map),
 * 64-byte aligned, with the scalars after it; the attribute's errors at
 * INSTANTIATE and the buffers' at the first EXECUTE. An autotuned call (version
 * 2) with a record per candidate: the benchmark launches each candidate with
 * its own map (its box), the double's clock making candidate 1 the fastest,
 * which later executions launch with its map; under a graph capture, candidate
 * 0 with its own; the per-candidate records' errors.
 *
 * Queued work, through a runtime on the double: a kernel destroyed while its
 * launches are queued is unloaded only after a synchronize covers them (the
 * double's rule for cuModuleUnload); a failure a synchronize reports names
 * the kernel launched last on the stream, and the event recorded after it. */
#include <dlfcn.h>
#include <pthread.h>
#include <trident/driver.h>

#include "tests/cuda/cudadouble.h"
#include "tests/testutil.h"

#ifdef TRDTEST_XLA
#include <trident/xla.h>
#include <xla/ffi/api/c_api.h>
#endif

static const char *double_lib(const char *name)
{
    return tu_path("%s/tests/cuda/.libs/%s.so", tu_builddir(), name);
}

static struct {
    void *dl;
    struct cudadouble_state *st; /* the double's, through tests/doubles/double.h */
} dbl;

static void double_open(const char *name)
{
    char err[512];
    dbl.st = trd_double_open(double_lib(name), sizeof *dbl.st, &dbl.dl, err, sizeof err);
    ck_assert_msg(dbl.st != NULL, "%s", err);
}

#define DBL_LOCKED(expr)                                                                                 \
    do {                                                                                                 \
        pthread_mutex_lock(&dbl.st->common.lock);                                                        \
        expr;                                                                                            \
        pthread_mutex_unlock(&dbl.st->common.lock);                                                      \
    } while (0)

/* Everything back as loaded: the configuration's defaults, no faults, an empty record. */
static void dbl_reset(void)
{
    trd_double_reset_dl(dbl.dl);
}

static unsigned dbl_calls(const char *function)
{
    return trd_double_calls(&dbl.st->common, function);
}

/* Sets the faults (tests/doubles/double.h's syntax): "" none. */
static void dbl_fail(const char *spec)
{
    char err[256];
    ck_assert_msg(trd_double_fail(&dbl.st->common, spec, err, sizeof err) == 0, "%s", err);
}

/* How many items one of the record's arrays holds (*n), and item index copied out: 1, or 0 past the end. */
static unsigned dbl_count(const unsigned *n)
{
    unsigned v;
    DBL_LOCKED(v = *n);
    return v;
}

static int dbl_item(const void *items, const unsigned *n, size_t size, unsigned index, void *out)
{
    int ok;
    DBL_LOCKED(ok = index < *n; if (ok) memcpy(out, (const char *)items + index * size, size));
    return ok;
}

static unsigned dbl_tmap_count(void)
{
    return dbl_count(&dbl.st->ntmaps);
}

static int dbl_tmap_get(unsigned index, struct cudadouble_tmap *out)
{
    return dbl_item(dbl.st->tmaps, &dbl.st->ntmaps, sizeof *out, index, out);
}

static void dbl_param_sizes(unsigned n, const unsigned *sizes)
{
    DBL_LOCKED(dbl.st->nsizes = n < CUDADOUBLE_MAX_PARAMS ? n : CUDADOUBLE_MAX_PARAMS;
               memcpy(dbl.st->sizes, sizes, dbl.st->nsizes * sizeof *sizes));
}

static unsigned dbl_launch_count(void)
{
    return dbl_count(&dbl.st->nlaunches);
}

static int dbl_launch_get(unsigned index, struct cudadouble_launch *out)
{
    return dbl_item(dbl.st->launches, &dbl.st->nlaunches, sizeof *out, index, out);
}

#ifdef TRDTEST_XLA /* what the XLA handler's tests set and read */

static void dbl_launch_ms(unsigned grid_x, double ms)
{
    DBL_LOCKED(if (dbl.st->ncosts < CUDADOUBLE_MAX_COSTS) {
        dbl.st->costs[dbl.st->ncosts].grid_x = grid_x;
        dbl.st->costs[dbl.st->ncosts++].ms = ms;
    });
}

static void dbl_capturing(int capturing)
{
    DBL_LOCKED(dbl.st->capturing = capturing);
}
#endif

/* No call broke a rule of the CUDA Driver API. */
static void check_clean(void)
{
    unsigned n = trd_double_violation_count(&dbl.st->common);
    ck_assert_msg(n == 0, "%u CUDA API violations, the first: %s", n,
                  n ? trd_double_violation_get(&dbl.st->common, 0) : "");
}

/* ------------------------------------------------ the driver's op, alone */

static struct {
    void *mod;
    const trd_driver_ops_t *ops;
    void *drv, *dev;
} cuda;

static const char *config_get(void *ctx, const char *key)
{
    return strcmp(key, "library") == 0 ? ctx : NULL;
}

/* The CUDA driver module on the double `name` with a device of compute capability cc, its device 0 opened. */
static void driver_open_cc(const char *name, int cc)
{
    double_open(name);
    dbl.st->cc = cc;
    const char *path = tu_path("%s/drivers/cuda/.libs/trident_cuda.so", tu_builddir());
    cuda.mod = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(cuda.mod != NULL, "dlopen %s: %s", path, dlerror());
    trd_driver_entry_fn entry;
    *(void **)&entry = dlsym(cuda.mod, TRD_DRIVER_ENTRY_SYMBOL);
    ck_assert_ptr_nonnull(entry);
    cuda.ops = entry(TRD_DRIVER_ABI_VERSION);
    char note[256] = "";
    char *lib = (char *)double_lib(name);
    trd_driver_init_args_t a = {.struct_size = sizeof a, .abi_version = TRD_DRIVER_ABI_VERSION,
                                .config_get = config_get, .config_ctx = lib, .note = note, .note_cap = sizeof note,
                                .services = tu_driver_services(config_get)};
    TU_OK(cuda.ops->init(&a, &cuda.drv));
    TU_OK(cuda.ops->device_open(cuda.drv, 0, &cuda.dev));
    ck_assert_ptr_nonnull(cuda.ops->tensor_map_encode);
    ck_assert_uint_ge(cuda.ops->struct_size, offsetof(trd_driver_ops_t, tensor_map_encode) + sizeof(void *));
    dbl_reset();
    dbl.st->cc = cc;
}

static void driver_open(const char *name)
{
    driver_open_cc(name, 90);
}

static void driver_close(void)
{
    if (cuda.dev)
        cuda.ops->device_close(cuda.dev);
    if (cuda.drv)
        cuda.ops->fini(cuda.drv);
    if (cuda.mod)
        dlclose(cuda.mod);
    if (dbl.dl)
        dlclose(dbl.dl);
    memset(&cuda, 0, sizeof cuda);
    memset(&dbl, 0, sizeof dbl);
}

static _Alignas(256) unsigned char memory[1 << 16]; /* the "device" address the maps describe */

/* A 100 x 72 fp16 tensor with rows 80 elements (160 bytes) apart, read in 32 x 64 blocks, 128-byte swizzle. */
static trd_tensor_map_desc_t desc_2d(void)
{
    trd_tensor_map_desc_t d = {.struct_size = sizeof d, .rank = 2, .elem_type = 6, .elem_size = 2, .base = memory,
                               .shape = {100, 72}, .strides = {80, 1}, .box = {32, 64}, .swizzle = 3,
                               .l2_promotion = 2, .label = "kernel 'k' argument 3 'a_desc'"};
    return d;
}

/* What cuTensorMapEncodeTiled must receive for desc_2d() at `address`: innermost first, the row stride in bytes
 * (the innermost implied), the box reversed, element strides 1, no interleave, the swizzle, L2 and fill given. */
static void check_2d(const struct cudadouble_tmap *t, const void *address)
{
    ck_assert_int_eq(t->dtype, 6); /* CU_TENSOR_MAP_DATA_TYPE_FLOAT16 */
    ck_assert_uint_eq(t->rank, 2);
    ck_assert_ptr_eq((void *)t->address, address);
    ck_assert_uint_eq(t->dims[0], 72);
    ck_assert_uint_eq(t->dims[1], 100);
    ck_assert_uint_eq(t->strides[0], 160);
    ck_assert_uint_eq(t->box[0], 64);
    ck_assert_uint_eq(t->box[1], 32);
    ck_assert_int_eq(t->interleave, 0);
    ck_assert_int_eq(t->swizzle, 3);
    ck_assert_int_eq(t->l2, 2);
    ck_assert_int_eq(t->oob, 0);
}

/* The call a map the double wrote records. */
static struct cudadouble_tmap tmap_of(const void *bytes)
{
    struct cudadouble_tmap_bytes b;
    memcpy(&b, bytes, sizeof b);
    ck_assert(b.magic == CUDADOUBLE_TMAP_MAGIC);
    struct cudadouble_tmap t = {.dtype = b.dtype, .rank = b.rank, .address = (uintptr_t)b.address,
                                .interleave = b.interleave, .swizzle = b.swizzle, .l2 = b.l2, .oob = b.oob};
    memcpy(t.dims, b.dims, sizeof b.dims);
    memcpy(t.strides, b.strides, sizeof b.strides);
    memcpy(t.box, b.box, sizeof b.box);
    return t;
}

static struct cudadouble_tmap last_tmap(void)
{
    struct cudadouble_tmap t;
    ck_assert_uint_gt(dbl_tmap_count(), 0);
    ck_assert(dbl_tmap_get(dbl_tmap_count() - 1, &t));
    return t;
}

START_TEST(encode_2d_reverses_dims_and_strides_in_bytes)
{
    driver_open("cudadouble");
    trd_tensor_map_desc_t d = desc_2d();
    _Alignas(64) unsigned char out[TRD_TENSOR_MAP_BYTES];
    memset(out, 0xee, sizeof out);
    TU_OK(cuda.ops->tensor_map_encode(cuda.dev, &d, out));
    ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), 1);
    struct cudadouble_tmap t = last_tmap();
    ck_assert_int_eq(t.result, 0);
    check_2d(&t, memory);
    ck_assert_uint_eq(t.estrides[0], 1);
    ck_assert_uint_eq(t.estrides[1], 1);
    ck_assert_uint_eq(t.map % 64, 0);
    /* the map, as the double wrote it, is what the caller gets */
    t = tmap_of(out);
    check_2d(&t, memory);
    for (size_t i = sizeof(struct cudadouble_tmap_bytes); i < sizeof out; i++)
        ck_assert_uint_eq(out[i], 0);
    check_clean();
    driver_close();
}
END_TEST

START_TEST(encode_ranks_1_3_5_and_nan_fill)
{
    driver_open("cudadouble");
    _Alignas(64) unsigned char out[TRD_TENSOR_MAP_BYTES];
    /* rank 5, fp32, padded strides, 8-element (32-byte) rows with the 32-byte swizzle */
    trd_tensor_map_desc_t d = {.struct_size = sizeof d, .rank = 5, .elem_type = 7, .elem_size = 4, .base = memory,
                               .shape = {3, 5, 7, 9, 16}, .strides = {5040, 1008, 144, 16, 1}, .box = {1, 2, 3, 4, 8},
                               .swizzle = 1, .l2_promotion = 2};
    TU_OK(cuda.ops->tensor_map_encode(cuda.dev, &d, out));
    struct cudadouble_tmap t = last_tmap();
    const uint64_t dims[] = {16, 9, 7, 5, 3}, strides[] = {64, 576, 4032, 20160};
    const unsigned box[] = {8, 4, 3, 2, 1};
    for (int i = 0; i < 5; i++) {
        ck_assert_uint_eq(t.dims[i], dims[i]);
        ck_assert_uint_eq(t.box[i], box[i]);
        ck_assert_uint_eq(t.estrides[i], 1);
        if (i < 4)
            ck_assert_uint_eq(t.strides[i], strides[i]);
    }
    ck_assert_int_eq(t.swizzle, 1);
    /* rank 3, bf16, NaN padding */
    trd_tensor_map_desc_t d3 = {.struct_size = sizeof d3, .rank = 3, .elem_type = 9, .elem_size = 2, .base = memory,
                                .shape = {4, 16, 64}, .strides = {1024, 64, 1}, .box = {2, 8, 64}, .swizzle = 3,
                                .oob_fill = 1, .l2_promotion = 2};
    TU_OK(cuda.ops->tensor_map_encode(cuda.dev, &d3, out));
    t = last_tmap();
    ck_assert_int_eq(t.dtype, 9);
    ck_assert_int_eq(t.oob, 1); /* CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA */
    ck_assert_uint_eq(t.dims[0], 64);
    ck_assert_uint_eq(t.dims[2], 4);
    ck_assert_uint_eq(t.strides[0], 128);
    ck_assert_uint_eq(t.strides[1], 2048);
    /* rank 1, bytes: no stride at all */
    trd_tensor_map_desc_t d1 = {.struct_size = sizeof d1, .rank = 1, .elem_type = 0, .elem_size = 1, .base = memory,
                                .shape = {1000}, .strides = {1}, .box = {256}, .l2_promotion = 2};
    TU_OK(cuda.ops->tensor_map_encode(cuda.dev, &d1, out));
    t = last_tmap();
    ck_assert_uint_eq(t.rank, 1);
    ck_assert_uint_eq(t.dims[0], 1000);
    ck_assert_uint_eq(t.box[0], 256);
    ck_assert_int_eq(t.swizzle, 0);
    ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), 3);
    check_clean();
    driver_close();
}
END_TEST

/* Every invalid descriptor is refused before CUDA sees it, naming what is wrong; out stays untouched. */
START_TEST(invalid_descriptors_refused_first)
{
    driver_open("cudadouble");
    static const struct {
        const char *field;
        long long value;
        const char *needle;
    } cases[] = {
        {"rank", 0, "rank 0 is outside 1 .. 5"},
        {"rank", 6, "rank 6 is outside 1 .. 5"},
        {"elem_type", 16, "element type 16 is not a CUtensorMapDataType"},
        {"elem_size", 4, "element size 4 bytes does not fit FLOAT16 (2 bytes)"},
        {"base", 8, "is not 16-byte aligned"},
        {"base", -1, "the base address is NULL"},
        {"shape1", 0, "shape[1] = 0 is outside 1 .. 2^32"},
        {"shape0", (1ll << 32) + 1, "shape[0] = 4294967297 is outside 1 .. 2^32"},
        {"box0", 0, "block[0] = 0 is outside 1 .. 256"},
        {"box1", 257, "block[1] = 257 is outside 1 .. 256"},
        {"stride1", 2, "the innermost stride (strides[1]) is 2"},
        {"stride0", 36, "strides[0] is 72 bytes, not a multiple of 16"},
        {"stride0", 0, "strides[0] = 0 elements is outside 1 .. 2^40 bytes"},
        {"stride0", 1ll << 39, "strides[0] = 549755813888 elements is outside 1 .. 2^40 bytes"},
        {"box1", 4, "the innermost block is 8 bytes, not a multiple of 16"},
        {"swizzle", 1, "the innermost block is 128 bytes, more than the 32 bytes swizzle 1 spans"},
        {"swizzle", 7, "swizzle 7 is not a CUtensorMapSwizzle"},
        {"l2", 4, "L2 promotion 4 is not a CUtensorMapL2promotion"},
        {"oob", 2, "out-of-bounds fill 2 is neither 0 (zero) nor 1 (NaN)"},
        {"nan_u16", 1, "NaN padding needs a floating-point element type, not UINT16"},
    };
    _Alignas(64) unsigned char out[TRD_TENSOR_MAP_BYTES];
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        trd_tensor_map_desc_t d = desc_2d();
        const char *f = cases[i].field;
        long long v = cases[i].value;
        if (!strcmp(f, "rank"))
            d.rank = (uint32_t)v;
        else if (!strcmp(f, "elem_type"))
            d.elem_type = (int32_t)v;
        else if (!strcmp(f, "elem_size"))
            d.elem_size = (uint32_t)v;
        else if (!strcmp(f, "base"))
            d.base = v < 0 ? NULL : memory + v;
        else if (!strncmp(f, "shape", 5))
            d.shape[f[5] - '0'] = (uint64_t)v;
        else if (!strncmp(f, "box", 3))
            d.box[f[3] - '0'] = (uint32_t)v;
        else if (!strncmp(f, "stride", 6))
            d.strides[f[6] - '0'] = (uint64_t)v;
        else if (!strcmp(f, "swizzle"))
            d.swizzle = (int32_t)v;
        else if (!strcmp(f, "l2"))
            d.l2_promotion = (int32_t)v;
        else if (!strcmp(f, "oob"))
            d.oob_fill = (int32_t)v;
        else if (!strcmp(f, "nan_u16"))
            d.elem_type = 1, d.oob_fill = 1;
        memset(out, 0xee, sizeof out);
        trd_status_t st = cuda.ops->tensor_map_encode(cuda.dev, &d, out);
        ck_assert_msg(st == TRD_ERR_INVALID_ARGUMENT, "case %zu (%s = %lld): %s: %s", i, f, v, trd_status_name(st),
                      trd_error_message());
        ck_assert_msg(strstr(trd_error_message(), cases[i].needle), "case %zu: '%s' lacks '%s'", i,
                      trd_error_message(), cases[i].needle);
        ck_assert_msg(strstr(trd_error_message(), "kernel 'k' argument 3 'a_desc' (shape ["), "%s",
                      trd_error_message());
        for (size_t k = 0; k < sizeof out; k++)
            ck_assert_uint_eq(out[k], 0xee);
    }
    /* the description names the whole descriptor */
    trd_tensor_map_desc_t d = desc_2d();
    d.strides[0] = 36;
    ck_assert_int_ne(cuda.ops->tensor_map_encode(cuda.dev, &d, out), TRD_OK);
    ck_assert_ptr_nonnull(strstr(trd_error_message(), "(shape [100, 72], strides [36, 1], block [32, 64], FLOAT16)"));
    /* an older caller's smaller struct, NULL pointers */
    d = desc_2d();
    d.struct_size = 16;
    TU_FAILS(cuda.ops->tensor_map_encode(cuda.dev, &d, out), TRD_ERR_VERSION, "struct_size is 16");
    d = desc_2d();
    TU_FAILS(cuda.ops->tensor_map_encode(cuda.dev, NULL, out), TRD_ERR_INVALID_ARGUMENT, "desc is NULL");
    TU_FAILS(cuda.ops->tensor_map_encode(cuda.dev, &d, NULL), TRD_ERR_INVALID_ARGUMENT, "out is NULL");
    ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), 0);
    check_clean();
    driver_close();
}
END_TEST

/* 4 rows of 256 16U6_ALIGN16B values (a byte each), rows 288 bytes apart, in 4 x 128 blocks: a map CUDA encodes. */
static trd_tensor_map_desc_t desc_packed(void)
{
    trd_tensor_map_desc_t d = {.struct_size = sizeof d, .rank = 2, .elem_type = 15, .elem_size = 1, .base = memory,
                               .shape = {4, 256}, .strides = {288, 1}, .box = {4, 128}, .l2_promotion = 2,
                               .label = "kernel 'k' argument 0 'q_desc'"};
    return d;
}

/* libtrident's answer (trd_tensor_map_check) is the driver's: the same verdict and message for the sub-byte types'
 * rules (CUDA's: 32-byte strides and base for the ALIGN16B types, innermost dimension and block of 128, their
 * swizzles; ALIGN8B's even dimension, blocks of 32 values) and for the descriptors the driver encodes. */
START_TEST(driver_encodes_by_libtridents_rule)
{
    driver_open("cudadouble");
    static const struct {
        int32_t type;
        const char *field;
        long long value;
        const char *needle; /* NULL: encoded */
    } cases[] = {
        {15, "", 0, NULL},
        {14, "", 0, NULL},
        {13, "box1", 64, NULL},
        {15, "stride0", 272, "strides[0] is 272 bytes, not a multiple of 32"},
        {14, "stride0", 144, "strides[0] is 144 bytes, not a multiple of 32"},
        {15, "base", 16, "is not 32-byte aligned"},
        {15, "shape1", 192, "16U6_ALIGN16B needs the innermost dimension a multiple of 128, not 192"},
        {14, "box1", 64, "16U4_ALIGN16B needs an innermost block of 128, not 64"},
        {15, "swizzle", 1, "16U6_ALIGN16B takes swizzle 0, 3 or 4 (6 to store), not 1"},
        {14, "swizzle", 6, "16U4_ALIGN16B takes swizzle 0, 3 or 4, not 6"},
        {15, "oob", 1, "NaN padding needs a floating-point element type, not 16U6_ALIGN16B"},
        {13, "shape1", 255, "16U4_ALIGN8B needs an even innermost dimension, not 255"},
        {13, "box1", 48, "the innermost block is 48 4-bit values, not a multiple of 32 (16 bytes)"},
        {13, "swizzle", 1, NULL}, /* 64 values, 32 bytes: as wide as swizzle 1 spans */
    };
    _Alignas(64) unsigned char out[TRD_TENSOR_MAP_BYTES];
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        trd_tensor_map_desc_t d = desc_packed();
        d.elem_type = cases[i].type;
        const char *f = cases[i].field;
        long long v = cases[i].value;
        if (!strcmp(f, "base"))
            d.base = memory + v;
        else if (!strcmp(f, "shape1"))
            d.shape[1] = (uint64_t)v;
        else if (!strcmp(f, "box1"))
            d.box[1] = (uint32_t)v;
        else if (!strcmp(f, "stride0"))
            d.strides[0] = (uint64_t)v;
        else if (!strcmp(f, "swizzle"))
            d.swizzle = (int32_t)v;
        else if (!strcmp(f, "oob"))
            d.oob_fill = (int32_t)v;
        if (cases[i].type == 13 && strcmp(f, "box1"))
            d.box[1] = 64;
        unsigned calls = dbl_calls("cuTensorMapEncodeTiled");
        trd_status_t checked = trd_tensor_map_check(&d);
        char said[1024];
        snprintf(said, sizeof said, "%s", checked == TRD_OK ? "" : trd_error_message());
        trd_status_t st = cuda.ops->tensor_map_encode(cuda.dev, &d, out);
        ck_assert_msg(st == checked, "case %zu: the driver says %s (%s), libtrident %s (%s)", i, trd_status_name(st),
                      st ? trd_error_message() : "", trd_status_name(checked), said);
        if (!cases[i].needle) {
            ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), calls + 1);
            ck_assert_int_eq(last_tmap().result, 0);
            continue;
        }
        ck_assert_int_eq(st, TRD_ERR_INVALID_ARGUMENT);
        ck_assert_str_eq(trd_error_message(), said);
        ck_assert_msg(strstr(said, cases[i].needle), "case %zu: '%s' lacks '%s'", i, said, cases[i].needle);
        ck_assert_msg(strstr(said, "kernel 'k' argument 0 'q_desc' (shape ["), "%s", said);
        ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), calls);
    }
    /* a template (no base yet) is checked but for its address; the driver needs one */
    trd_tensor_map_desc_t d = desc_packed();
    d.base = NULL;
    TU_OK(trd_tensor_map_check(&d));
    TU_FAILS(cuda.ops->tensor_map_encode(cuda.dev, &d, out), TRD_ERR_INVALID_ARGUMENT, "the base address is NULL");
    TU_FAILS(trd_tensor_map_check(NULL), TRD_ERR_INVALID_ARGUMENT, "trd_tensor_map_check: desc is NULL");
    d.struct_size = 16;
    TU_FAILS(trd_tensor_map_check(&d), TRD_ERR_VERSION, "trd_tensor_map_desc_t");
    check_clean();
    driver_close();
}
END_TEST

START_TEST(cuda_failure_names_the_error_and_the_argument)
{
    driver_open("cudadouble");
    dbl_fail("cuTensorMapEncodeTiled=1");
    trd_tensor_map_desc_t d = desc_2d();
    _Alignas(64) unsigned char out[TRD_TENSOR_MAP_BYTES];
    memset(out, 0xee, sizeof out);
    TU_FAILS(cuda.ops->tensor_map_encode(cuda.dev, &d, out), TRD_ERR_INVALID_ARGUMENT, "CUDA_ERROR_INVALID_VALUE");
    ck_assert_ptr_nonnull(strstr(trd_error_message(),
                                 "cuTensorMapEncodeTiled of kernel 'k' argument 3 'a_desc' (shape [100, 72], strides "
                                 "[80, 1], block [32, 64], FLOAT16)"));
    for (size_t k = 0; k < sizeof out; k++)
        ck_assert_uint_eq(out[k], 0xee);
    driver_close();
}
END_TEST

START_TEST(no_tma_unit_or_no_function_is_unsupported)
{
    driver_open_cc("cudadouble", 80);
    trd_tensor_map_desc_t d = desc_2d();
    _Alignas(64) unsigned char out[TRD_TENSOR_MAP_BYTES];
    TU_FAILS(cuda.ops->tensor_map_encode(cuda.dev, &d, out), TRD_ERR_UNSUPPORTED, "cuda:0 (sm80) has no TMA unit");
    ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), 0);
    driver_close();
    /* a libcuda older than CUDA 12: the driver loads, the op says why it cannot */
    driver_open("cudadouble_notma");
    ck_assert_ptr_null(dlsym(dbl.dl, "cuTensorMapEncodeTiled"));
    TU_FAILS(cuda.ops->tensor_map_encode(cuda.dev, &d, out), TRD_ERR_UNSUPPORTED, "lacks cuTensorMapEncodeTiled");
    ck_assert_ptr_nonnull(strstr(trd_error_message(), "kernel 'k' argument 3 'a_desc'"));
    driver_close();
}
END_TEST

#ifdef TRDTEST_XLA
/* ------------------------------------------- the XLA handler, CUDA path */

/* A minimal XLA: the FFI API functions the handlers call, one execution context. */
struct XLA_FFI_Error {
    XLA_FFI_Error_Code code;
    char message[4096];
};

/* the header's name of the context: XLA_FFI_InvokeContext from API 0.4 (ExecutionContext stays a typedef of it) */
#if XLA_FFI_API_MINOR >= 4
struct XLA_FFI_InvokeContext {
#else
struct XLA_FFI_ExecutionContext {
#endif
    void *state;
    void *stream;
};

static XLA_FFI_Error *fake_error_create(XLA_FFI_Error_Create_Args *a)
{
    XLA_FFI_Error *e = calloc(1, sizeof *e);
    ck_assert_ptr_nonnull(e);
    e->code = a->errc;
    snprintf(e->message, sizeof e->message, "%s", a->message);
    return e;
}

static void fake_error_destroy(XLA_FFI_Error_Destroy_Args *a)
{
    free(a->error);
}

static XLA_FFI_Error *fake_state_set(XLA_FFI_State_Set_Args *a)
{
    a->ctx->state = a->state;
    return NULL;
}

static XLA_FFI_Error *fake_state_get(XLA_FFI_State_Get_Args *a)
{
    a->state = a->ctx->state;
    return NULL;
}

static XLA_FFI_Error *fake_stream_get(XLA_FFI_Stream_Get_Args *a)
{
    a->stream = a->ctx->stream;
    return NULL;
}

static XLA_FFI_Error *fake_ordinal_get(XLA_FFI_DeviceOrdinal_Get_Args *a)
{
    a->device_ordinal = 0;
    return NULL;
}

static XLA_FFI_Api fake_api;

/* The call: one fp16 operand read through a tensor map, one result, scalars around them. */
#define SIG "in_tma:nvTmaDesc,in_dim0:i32,in_dim1:i32,in_dstride0:i64,in_dstride1:i64,out:*fp16,n:i32"

struct call {
    XLA_FFI_ExecutionContext ctx;
    XLA_FFI_CallFrame frame;
    /* attributes */
    void *bundle, *bundles;   /* bundles: version 2's, ncand copies of bundle */
    uint64_t bundle_size;
    XLA_FFI_ByteSpan names[16], kernel, scalars, options, key, cache_dir;
    XLA_FFI_ByteSpan *name_ptrs[16];
    XLA_FFI_AttrType types[16];
    void *attrs[16];
    int64_t grid[6], index[7], zero[1], scratch[2], tma[3 * TRD_XLA_TMA_FIELDS], koff[3], zoff[3], aliased[1];
    int32_t kinds[7], version;
    int ncand;                /* version 2 */
    const char *tune_key;
    XLA_FFI_Array grid_a, kinds_a, index_a, zero_a, scratch_a, tma_a, koff_a, zoff_a, aliased_a;
    XLA_FFI_Scalar version_s;
    unsigned char scalar_bytes[64];
    size_t ntma;
    /* buffers */
    int64_t in_dims[2], out_dims[1];
    XLA_FFI_Buffer in, out;
    void *args[1], *rets[1];
    XLA_FFI_ArgType arg_types[1];
    XLA_FFI_RetType ret_types[1];
};

static _Alignas(256) uint16_t in_a[100 * 80 + 64], in_b[100 * 80 + 64], out_buf[16];

static void set_tma(struct call *c, int k, const int64_t *shape, const int64_t *strides, const int64_t *block,
                    int64_t type, int64_t size, int64_t swizzle)
{
    int64_t *r = c->tma + k * TRD_XLA_TMA_FIELDS;
    memset(r, 0, TRD_XLA_TMA_FIELDS * sizeof *r);
    r[TRD_XLA_TMA_ELEM_TYPE] = type;
    r[TRD_XLA_TMA_ELEM_SIZE] = size;
    r[TRD_XLA_TMA_RANK] = 2;
    r[TRD_XLA_TMA_SWIZZLE] = swizzle;
    r[TRD_XLA_TMA_L2_PROMOTION] = 2;
    for (int i = 0; i < 2; i++) {
        r[TRD_XLA_TMA_SHAPE + i] = shape[i];
        r[TRD_XLA_TMA_STRIDES + i] = strides[i];
        r[TRD_XLA_TMA_BLOCK + i] = block[i];
    }
}

static void add_attr(struct call *c, int i, const char *name, XLA_FFI_AttrType type, void *value)
{
    c->names[i] = (XLA_FFI_ByteSpan){name, strlen(name)};
    c->name_ptrs[i] = &c->names[i];
    c->types[i] = type;
    c->attrs[i] = value;
}

/* Lays the attributes out as XLA does (sorted by name); ntma 0: no `tma` attribute. */
static void call_frame(struct call *c)
{
    int n = 0, tuned = c->version == 2;
    size_t ncand = tuned ? (size_t)c->ncand : 1;
    c->grid_a = (XLA_FFI_Array){XLA_FFI_DataType_S64, 3 * ncand, c->grid};
    c->kinds_a = (XLA_FFI_Array){XLA_FFI_DataType_S32, 7, c->kinds};
    c->index_a = (XLA_FFI_Array){XLA_FFI_DataType_S64, 7, c->index};
    c->zero_a = (XLA_FFI_Array){XLA_FFI_DataType_S64, 0, c->zero};
    c->scratch_a = (XLA_FFI_Array){XLA_FFI_DataType_S64, 2, c->scratch};
    c->tma_a = (XLA_FFI_Array){XLA_FFI_DataType_S64, c->ntma, c->tma};
    c->version_s = (XLA_FFI_Scalar){XLA_FFI_DataType_S32, &c->version};
    c->kernel = (XLA_FFI_ByteSpan){tuned ? c->bundles : c->bundle, (size_t)c->bundle_size * ncand};
    c->scalars = (XLA_FFI_ByteSpan){(const char *)c->scalar_bytes, 4 + 4 + 8 + 8 + 4};
    c->options = (XLA_FFI_ByteSpan){"", 0};
    c->koff_a = (XLA_FFI_Array){XLA_FFI_DataType_S64, ncand + 1, c->koff};
    c->zoff_a = (XLA_FFI_Array){XLA_FFI_DataType_S64, ncand + 1, c->zoff};
    c->aliased_a = (XLA_FFI_Array){XLA_FFI_DataType_S64, 0, c->aliased};
    c->key = (XLA_FFI_ByteSpan){c->tune_key, c->tune_key ? strlen(c->tune_key) : 0};
    c->cache_dir = (XLA_FFI_ByteSpan){"", 0};
    if (tuned)
        add_attr(c, n++, "aliased", XLA_FFI_AttrType_ARRAY, &c->aliased_a);
    add_attr(c, n++, "arg_index", XLA_FFI_AttrType_ARRAY, &c->index_a);
    add_attr(c, n++, "arg_kind", XLA_FFI_AttrType_ARRAY, &c->kinds_a);
    if (tuned) {
        add_attr(c, n++, "autotune_key", XLA_FFI_AttrType_STRING, &c->key);
        add_attr(c, n++, "cache_dir", XLA_FFI_AttrType_STRING, &c->cache_dir);
    }
    add_attr(c, n++, "grid", XLA_FFI_AttrType_ARRAY, &c->grid_a);
    add_attr(c, n++, "kernel", XLA_FFI_AttrType_STRING, &c->kernel);
    if (tuned)
        add_attr(c, n++, "kernel_offsets", XLA_FFI_AttrType_ARRAY, &c->koff_a);
    add_attr(c, n++, "options", XLA_FFI_AttrType_STRING, &c->options);
    add_attr(c, n++, "scalars", XLA_FFI_AttrType_STRING, &c->scalars);
    add_attr(c, n++, "scratch", XLA_FFI_AttrType_ARRAY, &c->scratch_a);
    if (c->ntma)
        add_attr(c, n++, "tma", XLA_FFI_AttrType_ARRAY, &c->tma_a);
    add_attr(c, n++, "version", XLA_FFI_AttrType_SCALAR, &c->version_s);
    add_attr(c, n++, "zero", XLA_FFI_AttrType_ARRAY, &c->zero_a);
    if (tuned)
        add_attr(c, n++, "zero_offsets", XLA_FFI_AttrType_ARRAY, &c->zoff_a);
    c->in = (XLA_FFI_Buffer){XLA_FFI_Buffer_STRUCT_SIZE, NULL, XLA_FFI_DataType_F16, in_a, 2, c->in_dims};
    c->out = (XLA_FFI_Buffer){XLA_FFI_Buffer_STRUCT_SIZE, NULL, XLA_FFI_DataType_F16, out_buf, 1, c->out_dims};
    c->args[0] = &c->in;
    c->rets[0] = &c->out;
    c->arg_types[0] = XLA_FFI_ArgType_BUFFER;
    c->ret_types[0] = XLA_FFI_RetType_BUFFER;
    c->frame = (XLA_FFI_CallFrame){
        .struct_size = XLA_FFI_CallFrame_STRUCT_SIZE,
        .api = &fake_api,
        .ctx = &c->ctx,
        .stage = XLA_FFI_ExecutionStage_INSTANTIATE,
        .args = {XLA_FFI_Args_STRUCT_SIZE, NULL, 1, c->arg_types, c->args},
        .rets = {XLA_FFI_Rets_STRUCT_SIZE, NULL, 1, c->ret_types, c->rets},
        .attrs = {XLA_FFI_Attrs_STRUCT_SIZE, NULL, n, c->types, c->name_ptrs, c->attrs},
    };
}

/* A valid call: a 100 x 72 fp16 tensor with rows 80 apart in 32 x 64 blocks. */
static struct call *call_new(void)
{
    struct call *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    size_t clen, mlen;
    char *cubin = tu_read_file(tu_path("%s/add_kernel.cubin", tu_fixture("cuda", "add_fp32")), &clen);
    char *meta = tu_read_file(tu_path("%s/add_kernel.json", tu_fixture("cuda", "add_fp32")), &mlen);
    trd_bundle_target_t t = {.struct_size = sizeof t, .format = TRD_FORMAT_CUBIN, .backend = "cuda", .arch = "sm90",
                             .image = cubin, .image_size = clen, .metadata = meta};
    TU_OK(trd_bundle_write("add_kernel", SIG, &t, 1, &c->bundle, &c->bundle_size));
    free(cubin);
    free(meta);
    c->grid[0] = 2, c->grid[1] = 3, c->grid[2] = 1;
    const int32_t kinds[] = {4, 2, 2, 2, 2, 1, 2};
    memcpy(c->kinds, kinds, sizeof kinds);
    c->scratch[0] = c->scratch[1] = -1;
    c->version = 1;
    int32_t d0 = 100, d1 = 72, n = 7200;
    int64_t s0 = 80, s1 = 1;
    memcpy(c->scalar_bytes, &d0, 4);
    memcpy(c->scalar_bytes + 4, &d1, 4);
    memcpy(c->scalar_bytes + 8, &s0, 8);
    memcpy(c->scalar_bytes + 16, &s1, 8);
    memcpy(c->scalar_bytes + 24, &n, 4);
    set_tma(c, 0, (int64_t[]){100, 72}, (int64_t[]){80, 1}, (int64_t[]){32, 64}, 6, 2, 3);
    c->ntma = TRD_XLA_TMA_FIELDS;
    c->in_dims[0] = 100, c->in_dims[1] = 80;
    c->out_dims[0] = 16;
    c->ctx.stream = (void *)(uintptr_t)0x5700;
    call_frame(c);
    return c;
}

/* The call autotuned (version 2) between two candidates of its kernel, each with its own tensor map: candidate 0
 * in a 4 x 3 grid of 32 x 64 boxes, candidate 1 in a 2 x 3 grid of 64 x 64 boxes. key names the choice (each
 * test its own: choices are kept in the process's memory). */
static void call_tune(struct call *c, const char *key)
{
    c->version = 2;
    c->ncand = 2;
    c->tune_key = key;
    c->bundles = malloc(2 * c->bundle_size);
    ck_assert_ptr_nonnull(c->bundles);
    memcpy(c->bundles, c->bundle, c->bundle_size);
    memcpy((char *)c->bundles + c->bundle_size, c->bundle, c->bundle_size);
    c->koff[0] = 0, c->koff[1] = (int64_t)c->bundle_size, c->koff[2] = 2 * (int64_t)c->bundle_size;
    c->zoff[0] = c->zoff[1] = c->zoff[2] = 0;
    const int64_t grids[6] = {4, 3, 1, 2, 3, 1};
    memcpy(c->grid, grids, sizeof grids);
    set_tma(c, 1, (int64_t[]){100, 72}, (int64_t[]){80, 1}, (int64_t[]){64, 64}, 6, 2, 3);
    c->ntma = 2 * TRD_XLA_TMA_FIELDS;
    call_frame(c);
}

static void call_free(struct call *c)
{
    if (c->ctx.state)
        ((XLA_FFI_TypeInfo *)trd_xla_type_info())->deleter(c->ctx.state);
    trd_free(c->bundle);
    free(c->bundles);
    free(c);
}

/* NULL, or the error's message (freed by the next call). */
static const char *result(XLA_FFI_Error *e)
{
    static char msg[4096];
    if (!e)
        return NULL;
    snprintf(msg, sizeof msg, "%s", e->message);
    free(e);
    return msg;
}

static const char *instantiate(struct call *c)
{
    call_frame(c);
    return result(trd_xla_cuda_instantiate(&c->frame));
}

static const char *execute(struct call *c)
{
    c->frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
    return result(trd_xla_cuda_execute(&c->frame));
}

/* The handler's error e says needle. */
#define XLA_SAYS(e, needle) ck_assert_msg((e) && strstr((e), (needle)), "'%s' lacks '%s'", (e) ? (e) : "(no error)", \
                                          (needle))

static void xla_setup(void)
{
    fake_api = (XLA_FFI_Api){.struct_size = XLA_FFI_Api_STRUCT_SIZE,
                             .XLA_FFI_Error_Create = fake_error_create,
                             .XLA_FFI_Error_Destroy = fake_error_destroy,
                             .XLA_FFI_State_Set = fake_state_set,
                             .XLA_FFI_State_Get = fake_state_get,
                             .XLA_FFI_Stream_Get = fake_stream_get,
                             .XLA_FFI_DeviceOrdinal_Get = fake_ordinal_get};
    double_open("cudadouble");
    dbl_reset();
    /* the parameters' sizes, then Triton's two scratch pointers */
    const unsigned sizes[] = {128, 4, 4, 8, 8, 8, 4, 8, 8};
    dbl_param_sizes(TU_LEN(sizes), sizes);
}

static void xla_teardown(void)
{
    dlclose(dbl.dl);
    memset(&dbl, 0, sizeof dbl);
}

/* The map a launch's parameter 0 holds. */
static struct cudadouble_tmap map_of(const struct cudadouble_launch *l)
{
    ck_assert_uint_eq(l->param_size[0], 128);
    return tmap_of(l->bytes + l->param_off[0]);
}

START_TEST(xla_launch_encodes_the_map_per_execution)
{
    struct call *c = call_new();
    const char *e = instantiate(c);
    ck_assert_msg(e == NULL, "%s", e);
    e = execute(c);
    ck_assert_msg(e == NULL, "%s", e);
    ck_assert_uint_eq(dbl_launch_count(), 1);
    struct cudadouble_launch l;
    ck_assert(dbl_launch_get(0, &l));
    ck_assert_uint_eq(l.nparams, 9);
    ck_assert_uint_eq(l.grid[0], 2);
    ck_assert_uint_eq(l.grid[1], 3);
    ck_assert_ptr_eq(l.stream, c->ctx.stream);
    ck_assert_uint_eq(l.param_ptr[0] % 64, 0);
    struct cudadouble_tmap t = map_of(&l);
    check_2d(&t, in_a);
    /* the shape and strides after it, the result's address, n */
    int32_t i32;
    int64_t i64;
    void *p;
    memcpy(&i32, l.bytes + l.param_off[1], 4);
    ck_assert_int_eq(i32, 100);
    memcpy(&i32, l.bytes + l.param_off[2], 4);
    ck_assert_int_eq(i32, 72);
    memcpy(&i64, l.bytes + l.param_off[3], 8);
    ck_assert_int_eq(i64, 80);
    memcpy(&i64, l.bytes + l.param_off[4], 8);
    ck_assert_int_eq(i64, 1);
    memcpy(&p, l.bytes + l.param_off[5], 8);
    ck_assert_ptr_eq(p, out_buf);
    memcpy(&i32, l.bytes + l.param_off[6], 4);
    ck_assert_int_eq(i32, 7200);
    /* XLA gives another buffer to the next execution: the map follows it */
    c->in.data = in_b;
    e = execute(c);
    ck_assert_msg(e == NULL, "%s", e);
    ck_assert_uint_eq(dbl_launch_count(), 2);
    ck_assert(dbl_launch_get(1, &l));
    t = map_of(&l);
    check_2d(&t, in_b);
    ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), 2);
    check_clean();
    call_free(c);
}
END_TEST

/* The attribute's errors, at INSTANTIATE, name the kernel, the argument and the problem. */
START_TEST(xla_instantiate_errors)
{
    static const struct {
        int field;     /* a record field to set, or -1: kinds[param] = value; -2: no tma attribute; -3: two records */
        int64_t value;
        const char *needle;
    } cases[] = {
        {-1, 0, "argument 0 'in_tma': it is a tensor map (nvTmaDesc): the call must pass kind 4"},
        {-2, 0, "argument 0 'in_tma': the tma attribute has no record for it"},
        {-3, 0, "the tma attribute has 48 values; its 1 tensor map parameters need 24"},
        {TRD_XLA_TMA_STRIDES, 36, "kernel 'add_kernel' argument 0 'in_tma' (shape [100, 72], strides [36, 1], block "
                                  "[32, 64], FLOAT16): strides[0] is 72 bytes, not a multiple of 16"},
        {TRD_XLA_TMA_STRIDES + 1, 2, "the innermost stride (strides[1]) is 2; TMA needs the last dimension contiguous"},
        {TRD_XLA_TMA_ELEM_TYPE, 16, "element type 16 is not a CUtensorMapDataType"},
        {TRD_XLA_TMA_ELEM_SIZE, 4, "element size 4 bytes does not fit FLOAT16 (2 bytes)"},
        {TRD_XLA_TMA_RANK, 0, "rank 0 is outside 1 .. 5"},
        {TRD_XLA_TMA_RANK, 1, "dimension 1 is beyond rank 1, yet its shape, stride or block is not 0"},
        {TRD_XLA_TMA_BLOCK, 257, "block[0] = 257 is outside 1 .. 256"},
        {TRD_XLA_TMA_SHAPE + 1, 0, "shape[1] = 0 is outside 1 .. 2^32"},
        {TRD_XLA_TMA_SWIZZLE, 1, "the innermost block is 128 bytes, more than the 32 bytes swizzle 1 spans"},
        {TRD_XLA_TMA_SWIZZLE, 9, "swizzle 9 is not a CUtensorMapSwizzle"},
        {TRD_XLA_TMA_OOB_FILL, 3, "out-of-bounds fill 3 is neither 0 (zero) nor 1 (NaN)"},
        {TRD_XLA_TMA_BASE, 2, "base 2 is neither 0 (an operand) nor 1 (a result)"},
        {TRD_XLA_TMA_FP4_PADDED, 1, "fp4_padded needs element type 14"},
        {TRD_XLA_TMA_L2_PROMOTION, 5, "L2 promotion 5 is not a CUtensorMapL2promotion"},
        {TRD_XLA_TMA_RESERVED, 1, "field 23 is 1; this libtrident knows it as reserved (0)"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        struct call *c = call_new();
        if (cases[i].field == -1)
            c->kinds[0] = (int32_t)cases[i].value;
        else if (cases[i].field == -2)
            c->ntma = 0;
        else if (cases[i].field == -3)
            memcpy(c->tma + TRD_XLA_TMA_FIELDS, c->tma, TRD_XLA_TMA_FIELDS * sizeof *c->tma), c->ntma *= 2;
        else
            c->tma[cases[i].field] = cases[i].value;
        const char *e = instantiate(c);
        ck_assert_msg(e && strstr(e, cases[i].needle), "case %zu: '%s' lacks '%s'", i, e ? e : "(no error)",
                      cases[i].needle);
        call_free(c);
    }
    /* kind 4 on a parameter that is not a tensor map */
    struct call *c = call_new();
    c->kinds[1] = 4;
    const char *e = instantiate(c);
    XLA_SAYS(e, "argument 1 'in_dim0': kind 4 (tensor map) is for nvTmaDesc parameters");
    call_free(c);
    /* not on CUDA */
    c = call_new();
    call_frame(c);
    e = result(trd_xla_rocm_instantiate(&c->frame));
    XLA_SAYS(e, "kernel 'add_kernel' argument 0 'in_tma': tensor maps (TMA) need the CUDA platform, "
                "not rocm");
    call_free(c);
    ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), 0);
}
END_TEST

/* INSTANTIATE refuses by the driver's rule: a 16U6_ALIGN16B map with rows 272 bytes apart (a multiple of 16, not
 * of the 32 CUDA needs for this type) once passed INSTANTIATE and failed at its first EXECUTE, in the driver. */
START_TEST(xla_instantiate_refuses_what_the_driver_would)
{
    struct call *c = call_new();
    set_tma(c, 0, (int64_t[]){4, 256}, (int64_t[]){272, 1}, (int64_t[]){4, 128}, 15, 1, 0);
    const char *e = instantiate(c);
    XLA_SAYS(e, "kernel 'add_kernel' argument 0 'in_tma' (shape [4, 256], strides [272, 1], block "
                "[4, 128], 16U6_ALIGN16B): strides[0] is 272 bytes, not a multiple of 32");
    call_free(c);
    /* 288 bytes apart it is accepted; so is fp4 padded at its doubled innermost dimension */
    c = call_new();
    set_tma(c, 0, (int64_t[]){4, 256}, (int64_t[]){288, 1}, (int64_t[]){4, 128}, 15, 1, 0);
    e = instantiate(c);
    ck_assert_msg(e == NULL, "%s", e);
    call_free(c);
    c = call_new();
    set_tma(c, 0, (int64_t[]){4, 64}, (int64_t[]){64, 1}, (int64_t[]){4, 128}, 14, 1, 0);
    c->tma[TRD_XLA_TMA_FP4_PADDED] = 1;
    e = instantiate(c);
    ck_assert_msg(e == NULL, "%s", e);
    c->tma[TRD_XLA_TMA_SHAPE + 1] = 32; /* 64 values: not a multiple of 128 */
    e = instantiate(c);
    XLA_SAYS(e, "(shape [4, 64], strides [64, 1], block [4, 128], 16U4_ALIGN16B): 16U4_ALIGN16B needs "
                "the innermost dimension a multiple of 128, not 64");
    call_free(c);
    ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), 0);
}
END_TEST

/* The buffers' errors, at the first EXECUTE; the driver's at each. */
START_TEST(xla_execute_errors)
{
    static const struct {
        int what;
        const char *needle;
    } cases[] = {
        {0, "argument 0 'in_tma': tensor map: its base, operand 0, is an array of float32 (4-byte elements); the map "
            "has 2-byte elements"},
        {1, "argument 0 'in_tma': tensor map: it reaches element 7991 of its base, operand 0, which has 4000 "
            "elements"},
        {2, "argument 0 'in_tma': tensor map: its base, operand 3, does not exist (the call has 1)"},
        {3, "encoding a tensor map on cuda:0: kernel 'add_kernel' argument 0 'in_tma' (shape [100, 72], strides [80, "
            "1], block [32, 64], FLOAT16): the base address"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        struct call *c = call_new();
        if (cases[i].what == 2)
            c->index[0] = 3;
        const char *e = instantiate(c);
        ck_assert_msg(e == NULL, "%s", e);
        if (cases[i].what == 0)
            c->in.dtype = XLA_FFI_DataType_F32;
        else if (cases[i].what == 1)
            c->in_dims[0] = 50;
        else if (cases[i].what == 3)
            c->in.data = (char *)in_a + 8;
        e = execute(c);
        ck_assert_msg(e && strstr(e, cases[i].needle), "case %zu: '%s' lacks '%s'", i, e ? e : "(no error)",
                      cases[i].needle);
        call_free(c);
    }
    ck_assert_uint_eq(dbl_launch_count(), 0);
    check_clean();
}
END_TEST

/* The launches from `from` on, of a call_tune call: each is a candidate's (its grid says which) with that
 * candidate's own map (candidate 0: boxes of 32 rows, candidate 1: 64) of `address`; counts[] per candidate. */
static void check_tuned_launches(unsigned from, const void *address, unsigned counts[2])
{
    counts[0] = counts[1] = 0;
    for (unsigned i = from; i < dbl_launch_count(); i++) {
        struct cudadouble_launch l;
        ck_assert(dbl_launch_get(i, &l));
        ck_assert_msg(l.grid[0] == 4 || l.grid[0] == 2, "launch %u: grid %u", i, l.grid[0]);
        int cand = l.grid[0] == 2;
        ck_assert_uint_eq(l.param_ptr[0] % 64, 0);
        struct cudadouble_tmap t = map_of(&l);
        ck_assert_ptr_eq((void *)t.address, address);
        ck_assert_uint_eq(t.dims[1], 100);
        ck_assert_uint_eq(t.box[0], 64);
        ck_assert_msg(t.box[1] == (cand ? 64u : 32u), "launch %u, candidate %d's, has a box of %u rows", i, cand,
                      t.box[1]);
        counts[cand]++;
    }
}

START_TEST(xla_autotune_launches_each_candidate_with_its_own_map)
{
    struct call *c = call_new();
    call_tune(c, "tma_tune_benchmark");
    dbl_launch_ms(4, 5.0f); /* candidate 1 is the faster on the double's clock */
    dbl_launch_ms(2, 2.0f);
    const char *e = instantiate(c);
    ck_assert_msg(e == NULL, "%s", e);
    e = execute(c);
    ck_assert_msg(e == NULL, "%s", e);
    /* the benchmark launched both, each with its own map, then the call the fastest */
    unsigned counts[2], n = dbl_launch_count();
    check_tuned_launches(0, in_a, counts);
    ck_assert_uint_gt(counts[0], 0);
    ck_assert_uint_gt(counts[1], 0);
    struct cudadouble_launch l;
    ck_assert(dbl_launch_get(n - 1, &l));
    ck_assert_uint_eq(l.grid[0], 2);
    ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), n);
    /* later executions launch the chosen one, its map from each execution's buffer */
    c->in.data = in_b;
    for (int k = 0; k < 3; k++) {
        e = execute(c);
        ck_assert_msg(e == NULL, "%s", e);
    }
    ck_assert_uint_eq(dbl_launch_count(), n + 3);
    check_tuned_launches(n, in_b, counts);
    ck_assert_uint_eq(counts[1], 3);
    ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), n + 3);
    check_clean();
    call_free(c);
}
END_TEST

/* Captured into a graph before any choice: candidate 0, with its own map; the next execution chooses. */
START_TEST(xla_autotune_under_capture_launches_candidate_0_with_its_map)
{
    struct call *c = call_new();
    call_tune(c, "tma_tune_capture");
    dbl_launch_ms(4, 5.0f);
    dbl_launch_ms(2, 2.0f);
    const char *e = instantiate(c);
    ck_assert_msg(e == NULL, "%s", e);
    dbl_capturing(1);
    e = execute(c);
    ck_assert_msg(e == NULL, "%s", e);
    unsigned counts[2];
    ck_assert_uint_eq(dbl_launch_count(), 1);
    check_tuned_launches(0, in_a, counts);
    ck_assert_uint_eq(counts[0], 1);
    dbl_capturing(0);
    e = execute(c);
    ck_assert_msg(e == NULL, "%s", e);
    check_tuned_launches(1, in_a, counts);
    ck_assert_uint_gt(counts[0], 0);
    struct cudadouble_launch l;
    ck_assert(dbl_launch_get(dbl_launch_count() - 1, &l));
    ck_assert_uint_eq(l.grid[0], 2);
    check_clean();
    call_free(c);
}
END_TEST

/* The per-candidate records' errors name the candidate, the argument and the problem. */
START_TEST(xla_autotune_record_errors)
{
    static const struct {
        int field;     /* candidate 1's record field to set; -1: candidate 0's record only; -2: three records */
        int64_t value;
        const char *needle;
    } cases[] = {
        {-1, 0, "kernel 'add_kernel' argument 0 'in_tma': the tma attribute has no record for it for every candidate"},
        {-2, 0, "the tma attribute has 72 values; its 1 tensor map parameters need 48 (24 each, for each of 2 "
                "candidates)"},
        {TRD_XLA_TMA_BLOCK, 257, "kernel 'add_kernel' candidate 1 argument 0 'in_tma' (shape [100, 72], strides [80, "
                                 "1], block [257, 64], FLOAT16): block[0] = 257 is outside 1 .. 256"},
        {TRD_XLA_TMA_SHAPE, 90, "kernel 'add_kernel' candidate 1 argument 0 'in_tma': tensor map: its record "
                                "describes another tensor than candidate 0's"},
        {TRD_XLA_TMA_BASE, 1, "candidate 1 argument 0 'in_tma': tensor map: its record describes another tensor"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        struct call *c = call_new();
        call_tune(c, "tma_tune_errors");
        if (cases[i].field == -1)
            c->ntma = TRD_XLA_TMA_FIELDS;
        else if (cases[i].field == -2)
            memcpy(c->tma + 2 * TRD_XLA_TMA_FIELDS, c->tma, TRD_XLA_TMA_FIELDS * sizeof *c->tma), c->ntma *= 3,
                c->ntma /= 2;
        else
            c->tma[TRD_XLA_TMA_FIELDS + cases[i].field] = cases[i].value;
        const char *e = instantiate(c);
        ck_assert_msg(e && strstr(e, cases[i].needle), "case %zu: '%s' lacks '%s'", i, e ? e : "(no error)",
                      cases[i].needle);
        call_free(c);
    }
    /* a base buffer too small for every candidate's map: none can run, the first reason named */
    struct call *c = call_new();
    call_tune(c, "tma_tune_errors");
    const char *e = instantiate(c);
    ck_assert_msg(e == NULL, "%s", e);
    c->in_dims[0] = 50;
    e = execute(c);
    XLA_SAYS(e, "none of its 2 candidates can run on cuda:0 (candidate 0: kernel 'add_kernel' "
                "candidate 0 argument 0 'in_tma': tensor map: it reaches element 7991 of its base, "
                "operand 0, which has 4000 elements)");
    call_free(c);
    ck_assert_uint_eq(dbl_launch_count(), 0);
    check_clean();
}
END_TEST
#endif


/* ------------------------------------------------ queued work, through a runtime */

static trd_runtime_t *double_runtime(void)
{
    double_open("cudadouble");
    return tu_runtime(tu_path("%s/drivers/cuda/.libs/trident_cuda.so", tu_builddir()),
                      tu_path("[driver.cuda]\nlibrary = %s\n", double_lib("cudadouble")));
}

START_TEST(kernel_destroyed_with_launches_queued)
{
    trd_runtime_t *rt = double_runtime();
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "cuda:0", &dev));
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_path("%s/add_kernel.json", tu_fixture("cuda", "add_fp32"))};
    trd_kernel_t *k;
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_stream_t *s;
    trd_event_t *e;
    trd_buffer_t *b;
    TU_OK(trd_stream_create(dev, &s));
    TU_OK(trd_event_create(dev, &e));
    TU_OK(trd_buffer_alloc(dev, 4096, &b));
    trd_arg_t a[4] = {trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_int(1024)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {1, 1, 1}, .num_args = 4, .args = a, .stream = s};
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_event_record(e, s));
    trd_event_destroy(e); /* allowed by cuEventDestroy with the record queued */
    trd_kernel_destroy(k);
    check_clean();
    /* a failure of queued work, reported by the synchronize, names the kernel that ran last there */
    TU_OK(trd_kernel_create(rt, &d, &k));
    TU_OK(trd_event_create(dev, &e));
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_event_record(e, s));
    dbl_fail("cuStreamSynchronize=700,cuEventSynchronize=700");
    TU_FAILS(trd_stream_synchronize(s), TRD_ERR_DEVICE,
             "synchronizing a stream of cuda:0 (its last launch: kernel 'add_kernel'): cuStreamSynchronize on cuda:0");
    TU_FAILS(trd_event_synchronize(e), TRD_ERR_DEVICE,
             "synchronizing an event of cuda:0 (recorded after kernel 'add_kernel'): cuEventSynchronize");
    dbl_fail("");
    trd_kernel_destroy(k); /* still queued in the double: not synchronized */
    check_clean();
    trd_buffer_free(b);
    trd_event_destroy(e);
    trd_stream_destroy(s);
    trd_runtime_destroy(rt);
    dlclose(dbl.dl);
    memset(&dbl, 0, sizeof dbl);
}
END_TEST

/* The global scratch of a kernel that needs it (Triton's scratch fixture, 128 bytes a program at 128): from the
 * stream's arena, reused while it fits, replaced when a grid needs more, the old block freed by the next
 * synchronize and not before (the double logs a cuMemFree of memory a queued launch uses); a native stream
 * launched on unwrapped has the device's arena for its handle, freed when the device closes after its work; a
 * wrapper its own; the per-thread default stream none; the caller's is passed. */
static uint64_t launched_scratch(unsigned index)
{
    struct cudadouble_launch l;
    ck_assert(dbl_launch_get(index, &l));
    ck_assert_uint_ge(l.nparams, 5);
    uint64_t p;
    memcpy(&p, l.bytes + l.param_off[3], 8);
    return p;
}

START_TEST(scratch_from_the_streams_arena)
{
    trd_runtime_t *rt = double_runtime();
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "cuda:0", &dev));
    trd_kernel_desc_t d = {.struct_size = sizeof d,
                           .path = tu_path("%s/scratch_kernel.json", tu_fixture("cuda", "scratch"))};
    trd_kernel_t *k;
    TU_OK(trd_kernel_create(rt, &d, &k));
    const unsigned sizes[] = {8, 8, 4, 8, 8}; /* x, out, n, global and profile scratch */
    dbl_param_sizes(TU_LEN(sizes), sizes);
    trd_stream_t *s, *other;
    trd_buffer_t *b;
    TU_OK(trd_stream_create(dev, &s));
    TU_OK(trd_stream_create(dev, &other));
    TU_OK(trd_buffer_alloc(dev, 4096, &b));
    trd_arg_t a[3] = {trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_int(1024)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {1000, 1, 1}, .num_args = 3, .args = a, .stream = s};
    unsigned allocs = dbl_calls("cuMemAlloc"), frees = dbl_calls("cuMemFree");
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_kernel_launch(k, &l));
    uint64_t g0 = launched_scratch(0);
    ck_assert(g0 != 0 && g0 % 128 == 0);
    ck_assert_uint_eq(launched_scratch(1), g0);
    ck_assert_uint_eq(dbl_calls("cuMemAlloc"), allocs + 1);
    l.grid[0] = 100000; /* 12.8 MB: a new block; the old one is still queued-for */
    TU_OK(trd_kernel_launch(k, &l));
    uint64_t g1 = launched_scratch(2);
    ck_assert(g1 != 0 && g1 != g0);
    ck_assert_uint_eq(dbl_calls("cuMemAlloc"), allocs + 2);
    ck_assert_uint_eq(dbl_calls("cuMemFree"), frees);
    TU_OK(trd_stream_synchronize(s));
    ck_assert_uint_eq(dbl_calls("cuMemFree"), frees + 1);
    check_clean();
    /* a native stream launched on unwrapped: the device's arena for that handle, reused */
    void *native;
    TU_OK(trd_stream_native(other, &native));
    trd_launch_t bare = {.struct_size = sizeof bare, .grid = {10, 1, 1}, .num_args = 3, .args = a, .device = dev,
                         .native_stream = native};
    TU_OK(trd_kernel_launch(k, &bare));
    uint64_t g2 = launched_scratch(3);
    ck_assert(g2 != 0 && g2 != g1);
    /* a wrapper has an arena of its own, freed when it is destroyed, which waits for the stream first */
    trd_stream_t *wrapped;
    TU_OK(trd_stream_wrap(dev, native, &wrapped));
    trd_launch_t via = {.struct_size = sizeof via, .grid = {10, 1, 1}, .num_args = 3, .args = a, .stream = wrapped};
    TU_OK(trd_kernel_launch(k, &via));
    uint64_t g3 = launched_scratch(4);
    ck_assert(g3 != 0 && g3 != g2 && g3 != g1);
    unsigned syncs = dbl_calls("cuStreamSynchronize"), freed = dbl_calls("cuMemFree");
    trd_stream_destroy(wrapped);
    ck_assert_uint_eq(dbl_calls("cuStreamSynchronize"), syncs + 1);
    ck_assert_uint_eq(dbl_calls("cuMemFree"), freed + 1);
    check_clean(); /* not freed under the queued launch */
    /* the per-thread default stream is another stream on each thread: no arena, the way out named */
    bare.native_stream = (void *)(uintptr_t)2; /* cuda.h's CU_STREAM_PER_THREAD */
    TU_FAILS(trd_kernel_launch(k, &bare), TRD_ERR_LIMIT, "none for a per-thread default stream");
    bare.native_stream = native;
    /* the caller's scratch as given, no allocation */
    trd_buffer_t *mine;
    TU_OK(trd_buffer_alloc(dev, 1000 * 128, &mine));
    void *mp;
    TU_OK(trd_buffer_address(mine, &mp));
    unsigned before = dbl_calls("cuMemAlloc");
    l.grid[0] = 1000;
    l.global_scratch = mp;
    TU_OK(trd_kernel_launch(k, &l));
    ck_assert_uint_eq(launched_scratch(5), (uint64_t)(uintptr_t)mp);
    ck_assert_uint_eq(dbl_launch_count(), 6);
    /* the device closes with a launch on the native stream queued: its arena goes after the device's work */
    TU_OK(trd_kernel_launch(k, &bare));
    ck_assert_uint_eq(dbl_calls("cuMemAlloc"), before);
    TU_OK(trd_stream_synchronize(s));
    trd_buffer_free(mine);
    trd_buffer_free(b);
    trd_stream_destroy(other);
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt); /* the foreign arenas go with the device, after its work */
    check_clean();
    dlclose(dbl.dl);
    memset(&dbl, 0, sizeof dbl);
}
END_TEST

/* The CUDA driver moves past a first libcuda candidate that opens but lacks the Driver API (drivers/common's
 * one rule) to the double; with only broken candidates it is skipped, naming each and why. */
START_TEST(loader_moves_past_a_broken_libcuda)
{
    const char *broken = tu_path("%s/tests/common/.libs/vl_full.so", tu_builddir());
    double_open("cudadouble");
    const char *module = tu_path("%s/drivers/cuda/.libs/trident_cuda.so", tu_builddir());
    trd_runtime_t *rt = tu_runtime(module, tu_path("[driver.cuda]\nlibrary = %s:%s\n", broken,
                                                   double_lib("cudadouble")));
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "cuda:0", &dev));
    ck_assert_uint_ge(dbl_calls("cuInit"), 1);
    trd_runtime_destroy(rt);
    rt = tu_runtime(module, tu_path("[driver.cuda]\nlibrary = %s:/nonexistent/libcuda.so.1\n", broken));
    trd_driver_info_t info = {.struct_size = sizeof info};
    TU_OK(trd_runtime_driver_info(rt, 0, &info));
    ck_assert_int_eq(info.status, TRD_DRIVER_SKIPPED);
    ck_assert_msg(strstr(info.reason, broken) && strstr(info.reason, "cuInit") &&
                      strstr(info.reason, "/nonexistent/libcuda.so.1"),
                  "%s", info.reason);
    trd_runtime_destroy(rt);
    dlclose(dbl.dl);
    memset(&dbl, 0, sizeof dbl);
}
END_TEST

/* CUDA_ERROR_ILLEGAL_ADDRESS, as a kernel that reads outside its buffers causes it: reported by the next
 * synchronize and (CUDA keeps it) by every later call; the messages say what it means, and the launch it fails
 * names the kernel. */
START_TEST(illegal_address_is_explained)
{
    trd_runtime_t *rt = double_runtime();
    trd_device_t *dev;
    TU_OK(trd_runtime_device_find(rt, "cuda:0", &dev));
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = tu_path("%s/add_kernel.json", tu_fixture("cuda", "add_fp32"))};
    trd_kernel_t *k;
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_stream_t *s;
    trd_event_t *e;
    trd_buffer_t *b;
    TU_OK(trd_stream_create(dev, &s));
    TU_OK(trd_event_create(dev, &e));
    TU_OK(trd_buffer_alloc(dev, 4096, &b));
    trd_arg_t a[4] = {trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_buffer(b), trd_arg_int(1024)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {1, 1, 1}, .num_args = 4, .args = a, .stream = s};
    TU_OK(trd_kernel_launch(k, &l));
    TU_OK(trd_event_record(e, s));
    dbl_fail("cuStreamSynchronize=700,cuEventSynchronize=700,cuLaunchKernelEx=700");
    const char *hint = "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered; the kernel read "
                       "or wrote outside its buffers: a buffer may be smaller than the grid and the sizes given make "
                       "the kernel use, or a pointer argument null; CUDA keeps this error";
    TU_FAILS(trd_stream_synchronize(s), TRD_ERR_DEVICE, hint);
    TU_FAILS(trd_event_synchronize(e), TRD_ERR_DEVICE, hint);
    TU_FAILS(trd_kernel_launch(k, &l), TRD_ERR_DEVICE, "launching kernel 'add_kernel' on cuda:0: ");
    ck_assert_msg(strstr(trd_error_message(), hint), "%s", trd_error_message());
    dbl_fail("cuStreamSynchronize=719");
    TU_FAILS(trd_stream_synchronize(s), TRD_ERR_DEVICE, "CUDA_ERROR_LAUNCH_FAILED (719)");
    ck_assert_msg(strstr(trd_error_message(), "the kernel faulted on the device"), "%s", trd_error_message());
    dbl_fail("");
    TU_OK(trd_stream_synchronize(s));
    check_clean();
    trd_buffer_free(b);
    trd_event_destroy(e);
    trd_stream_destroy(s);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
    dlclose(dbl.dl);
    memset(&dbl, 0, sizeof dbl);
}
END_TEST

/* The double catches a caller's mistake, through the harness's log: a tensor map with a zero box dimension is
 * refused with CUDA_ERROR_INVALID_VALUE (1) and logged as a violation naming the rule. */
START_TEST(double_logs_a_broken_rule)
{
    double_open("cudadouble");
    int (*retain)(void **ctx, int dev), (*push)(void *ctx), (*pop)(void **ctx), (*release)(int dev);
    int (*encode)(void *map, int dtype, unsigned rank, void *address, const uint64_t *dims, const uint64_t *strides,
                  const unsigned *box, const unsigned *estrides, int interleave, int swizzle, int l2, int oob);
    *(void **)&retain = dlsym(dbl.dl, "cuDevicePrimaryCtxRetain");
    *(void **)&push = dlsym(dbl.dl, "cuCtxPushCurrent_v2"); /* cuda.h maps the names */
    *(void **)&pop = dlsym(dbl.dl, "cuCtxPopCurrent_v2");
    *(void **)&release = dlsym(dbl.dl, "cuDevicePrimaryCtxRelease_v2");
    *(void **)&encode = dlsym(dbl.dl, "cuTensorMapEncodeTiled");
    ck_assert(retain && push && pop && release && encode);
    void *ctx = NULL;
    ck_assert_int_eq(retain(&ctx, 0), 0);
    ck_assert_int_eq(push(ctx), 0);
    _Alignas(64) unsigned char map[128];
    const uint64_t dims[2] = {64, 64}, strides[1] = {128};
    const unsigned box[2] = {0, 32}, estrides[2] = {1, 1};
    check_clean();
    ck_assert_int_eq(encode(map, 6, 2, memory, dims, strides, box, estrides, 0, 0, 0, 0), 1);
    ck_assert_uint_eq(trd_double_violation_count(&dbl.st->common), 1);
    ck_assert_str_eq(trd_double_violation_get(&dbl.st->common, 0), "cuTensorMapEncodeTiled: a boxDim is outside 1 .. 256");
    ck_assert_uint_eq(dbl_calls("cuTensorMapEncodeTiled"), 1);
    ck_assert_int_eq(pop(&ctx), 0);
    ck_assert_int_eq(release(0), 0);
    dbl_reset();
    check_clean();
    dlclose(dbl.dl);
    memset(&dbl, 0, sizeof dbl);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cuda_tma");
    TCase *t = tcase_create("driver");
    tcase_add_checked_fixture(t, NULL, driver_close);
    tcase_add_test(t, encode_2d_reverses_dims_and_strides_in_bytes);
    tcase_add_test(t, encode_ranks_1_3_5_and_nan_fill);
    tcase_add_test(t, invalid_descriptors_refused_first);
    tcase_add_test(t, driver_encodes_by_libtridents_rule);
    tcase_add_test(t, cuda_failure_names_the_error_and_the_argument);
    tcase_add_test(t, no_tma_unit_or_no_function_is_unsupported);
    tcase_add_test(t, double_logs_a_broken_rule);
    suite_add_tcase(s, t);
    TCase *q = tcase_create("queued");
    tcase_add_test(q, kernel_destroyed_with_launches_queued);
    tcase_add_test(q, scratch_from_the_streams_arena);
    tcase_add_test(q, loader_moves_past_a_broken_libcuda);
    suite_add_tcase(s, q);
    TCase *f = tcase_create("faults");
    tcase_add_test(f, illegal_address_is_explained);
    suite_add_tcase(s, f);
#ifdef TRDTEST_XLA
    TCase *x = tcase_create("xla");
    tcase_add_checked_fixture(x, xla_setup, xla_teardown);
    tcase_add_test(x, xla_launch_encodes_the_map_per_execution);
    tcase_add_test(x, xla_instantiate_errors);
    tcase_add_test(x, xla_instantiate_refuses_what_the_driver_would);
    tcase_add_test(x, xla_execute_errors);
    tcase_add_test(x, xla_autotune_launches_each_candidate_with_its_own_map);
    tcase_add_test(x, xla_autotune_under_capture_launches_candidate_0_with_its_map);
    tcase_add_test(x, xla_autotune_record_errors);
    suite_add_tcase(s, x);
#endif
    return s;
}

int main(void)
{
#ifdef TRDTEST_XLA
    /* the handlers use the process's shared runtime: its CUDA driver on the double */
    setenv("TRIDENT_DRIVER_CUDA_LIBRARY", double_lib("cudadouble"), 1);
#endif
    return tu_run(suite());
}
