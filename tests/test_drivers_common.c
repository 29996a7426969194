/* SPDX-License-Identifier: Apache-2.0 */
/* test_drivers_common.c: drivers/common, the mechanisms every driver module
 * shares: the vendor-library loader's rule (real dlopen of the vl_* libraries
 * this suite builds) and the checked arithmetic. */
#include <dlfcn.h>
#include <pthread.h>

#include <trident/driver.h>

#include "drivers/common/arith.h"
#include "drivers/common/scratch.h"
#include "drivers/common/services.h"
#include "drivers/common/slot_map.h"
#include "drivers/common/vendor_lib.h"
#include "tests/testutil.h"

struct vl_api {
    int (*vl_init)(void);
    int (*vl_launch)(int);
    int (*vl_extra)(void);
};

static const trd_vlib_symbol_t vl_symbols[] = {
    TRD_VLIB_REQUIRED(struct vl_api, vl_init, "vl_init")
    TRD_VLIB_REQUIRED(struct vl_api, vl_launch, "vl_launch_v2")
    TRD_VLIB_OPTIONAL(struct vl_api, vl_extra, "vl_extra")
};

static const char *vl(const char *name)
{
    return tu_path("%s/tests/common/.libs/%s.so", tu_builddir(), name);
}

static trd_vlib_spec_t spec(const char *const *defaults)
{
    trd_vlib_spec_t s = {
        .what = "test library",
        .config_key = "[driver.test] library",
        .defaults = defaults,
        .symbols = vl_symbols,
        .num_symbols = TU_LEN(vl_symbols),
        .api_size = sizeof(struct vl_api),
        .missing_hint = "(not the test library)",
    };
    return s;
}

/* The first candidate opens but lacks a required symbol: it is reported with
 * its reason and the second, which works, is used. */
START_TEST(test_broken_first_then_working)
{
    char list[2048];
    snprintf(list, sizeof list, "%s:%s", vl("vl_broken"), vl("vl_full"));
    trd_vlib_spec_t s = spec(NULL);
    trd_vlib_t lib;
    struct vl_api api;
    TU_OK(trd_vlib_open(&lib, &s, list, &api));
    ck_assert_int_eq(api.vl_init(), 2); /* vl_full's, not vl_broken's */
    ck_assert_int_eq(api.vl_launch(20), 42);
    ck_assert_ptr_nonnull(api.vl_extra);
    ck_assert_int_eq(api.vl_extra(), 7);
    ck_assert_msg(strstr(lib.path, "vl_full.so") != NULL, "path: %s", lib.path);
    const char *want = tu_path("%s: required symbol vl_launch is missing (not the test library)", vl("vl_broken"));
    ck_assert_msg(strcmp(lib.tried, want) == 0, "tried: '%s', want '%s'", lib.tried, want);
    trd_vlib_close(&lib);
    ck_assert_ptr_null(lib.handle);
}
END_TEST

/* A candidate that does not open at all: its dlerror without the path twice. */
START_TEST(test_missing_first_then_working)
{
    char list[2048];
    snprintf(list, sizeof list, "/nonexistent/libvl.so::%s", vl("vl_noopt"));
    trd_vlib_spec_t s = spec(NULL);
    trd_vlib_t lib;
    struct vl_api api;
    TU_OK(trd_vlib_open(&lib, &s, list, &api));
    ck_assert_int_eq(api.vl_init(), 3);
    ck_assert_ptr_null(api.vl_extra); /* optional and absent */
    ck_assert_msg(strncmp(lib.tried, "/nonexistent/libvl.so: ", 23) == 0 && strstr(lib.tried, "No such file") &&
                      !strstr(lib.tried + 1, "/nonexistent/libvl.so"),
                  "tried: %s", lib.tried);
    trd_vlib_close(&lib);
}
END_TEST

/* None usable: TRD_ERR_UNSUPPORTED naming the setting and every candidate
 * with its reason; nothing written. */
START_TEST(test_none_usable)
{
    char list[2048];
    snprintf(list, sizeof list, "%s:/nonexistent/b.so", vl("vl_broken"));
    trd_vlib_spec_t s = spec(NULL);
    trd_vlib_t lib;
    struct vl_api api;
    memset(&api, 0x5a, sizeof api);
    TU_FAILS(trd_vlib_open(&lib, &s, list, &api), TRD_ERR_UNSUPPORTED,
             "no usable test library: [driver.test] library = ");
    const char *m = trd_error_message();
    ck_assert_msg(strstr(m, tu_path("%s: required symbol vl_launch is missing", vl("vl_broken"))) &&
                      strstr(m, "; /nonexistent/b.so: ") && strstr(m, "No such file"),
                  "message: %s", m);
    ck_assert_ptr_null(lib.handle);
    ck_assert_ptr_null(api.vl_init);
    ck_assert_ptr_null(api.vl_launch);

    /* a path longer than any file name is refused, not truncated */
    char longp[700];
    memset(longp, 'a', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    TU_FAILS(trd_vlib_open(&lib, &s, longp, &api), TRD_ERR_UNSUPPORTED, "(a path): longer than 511 bytes");
    /* an empty list entry only: nothing tried */
    TU_FAILS(trd_vlib_open(&lib, &s, ":", &api), TRD_ERR_UNSUPPORTED, "tried nothing");
}
END_TEST

/* Without a configured list the defaults are tried, by the same rule. */
START_TEST(test_defaults)
{
    const char *defaults[] = {"/nonexistent/libvl.so.1", vl("vl_broken"), vl("vl_full"), NULL};
    trd_vlib_spec_t s = spec(defaults);
    trd_vlib_t lib;
    struct vl_api api;
    TU_OK(trd_vlib_open(&lib, &s, "", &api));
    ck_assert_int_eq(api.vl_init(), 2);
    ck_assert_msg(strstr(lib.tried, "/nonexistent/libvl.so.1: ") && strstr(lib.tried, "vl_broken.so: required"),
                  "tried: %s", lib.tried);
    trd_vlib_close(&lib);
    const char *none[] = {"/nonexistent/libvl.so.1", NULL};
    s = spec(none);
    TU_FAILS(trd_vlib_open(&lib, &s, NULL, &api), TRD_ERR_UNSUPPORTED, "no usable test library: tried /nonexistent/");
}
END_TEST

/* A driver's own resolver (CUDA's cuGetProcAddress) sees every symbol. */
static int resolved;
static void *count_resolve(void *handle, const trd_vlib_symbol_t *sym)
{
    resolved++;
    return dlsym(handle, sym->link_name);
}

START_TEST(test_resolver)
{
    trd_vlib_spec_t s = spec(NULL);
    s.resolve = count_resolve;
    trd_vlib_t lib;
    struct vl_api api;
    resolved = 0;
    TU_OK(trd_vlib_open(&lib, &s, vl("vl_full"), &api));
    ck_assert_int_eq(resolved, 3);
    ck_assert_int_eq(api.vl_launch(1), 4);
    trd_vlib_close(&lib);
}
END_TEST

START_TEST(test_checked_arith)
{
    uint64_t r = 99;
    ck_assert(trd_align_up_u64(100, 64, &r) && r == 128);
    ck_assert(trd_align_up_u64(128, 64, &r) && r == 128);
    ck_assert(trd_align_up_u64(5, 0, &r) && r == 5);
    ck_assert(trd_align_up_u64(5, 1, &r) && r == 5);
    r = 99;
    ck_assert(!trd_align_up_u64(UINT64_MAX - 3, 16, &r) && r == 99);
    ck_assert(trd_mul_u64(1ull << 31, 1ull << 32, &r) && r == 1ull << 63);
    ck_assert(!trd_mul_u64(1ull << 32, 1ull << 32, &r) && r == 1ull << 63);
    ck_assert(trd_add_u64(UINT64_MAX - 1, 1, &r) && r == UINT64_MAX);
    ck_assert(!trd_add_u64(UINT64_MAX, 1, &r) && r == UINT64_MAX);
}
END_TEST

/* The core's figures where the launch struct has them; from an older core's
 * (smaller) struct, the same rule computed here, overflow-checked. */
START_TEST(test_launch_scratch)
{
    const trd_scratch_spec_t sp = {2, {100, 8}, {64, 0}};
    trd_driver_launch_t l = {.struct_size = sizeof l, .grid = {3, 2, 1}};
    l.global_scratch_bytes = 12345;
    l.profile_scratch_bytes = 77;
    uint64_t need[2] = {1, 1};
    TU_OK(trd_launch_scratch(&l, &sp, need));
    ck_assert(need[0] == 12345 && need[1] == 77);
    l.struct_size = (uint32_t)offsetof(trd_driver_launch_t, global_scratch_bytes); /* a version-1 core */
    TU_OK(trd_launch_scratch(&l, &sp, need));
    ck_assert_uint_eq(need[0], 6 * 2 * 128); /* 6 programs x 2 CTAs x 100 rounded up to 64 */
    ck_assert_uint_eq(need[1], 6 * 2 * 8);
    const trd_scratch_spec_t huge = {1, {(uint64_t)1 << 40, 0}, {1, 1}};
    l.grid[0] = 1u << 30;
    l.grid[1] = 1u << 4;
    need[0] = need[1] = 5;
    TU_FAILS(trd_launch_scratch(&l, &huge, need), TRD_ERR_LIMIT,
             "grid 1073741824x16x1 x 1 CTAs x 1099511627776 global + 0 profile bytes of scratch a program is more "
             "than 2^64 bytes");
    ck_assert(need[0] == 5 && need[1] == 5);
    const trd_scratch_spec_t unaligned = {1, {UINT64_MAX - 2, 0}, {64, 1}};
    l.grid[0] = l.grid[1] = 1;
    TU_FAILS(trd_launch_scratch(&l, &unaligned, need), TRD_ERR_LIMIT, "more than 2^64 bytes");
}
END_TEST

/* The native-stream slot map: a handle keeps its slot, NULL is a handle,
 * distinct handles get distinct slots, and when all are taken the next is
 * refused (-1) while the known ones are still found. */
/* Both scratch areas in one block never overlap: profile after global at its alignment. */
START_TEST(test_scratch_layout)
{
    uint64_t off = 7, total = 7;
    ck_assert(trd_scratch_layout(1000, 24, 128, &off, &total));
    ck_assert_uint_eq(off, 1024);
    ck_assert_uint_eq(total, 1048);
    ck_assert(trd_scratch_layout(1000, 0, 128, &off, &total)); /* no profile area: nothing aligned */
    ck_assert_uint_eq(off, 1000);
    ck_assert_uint_eq(total, 1000);
    ck_assert(trd_scratch_layout(0, 64, 256, &off, &total));
    ck_assert_uint_eq(off, 0);
    ck_assert_uint_eq(total, 64);
    off = total = 7;
    ck_assert(!trd_scratch_layout(UINT64_MAX - 10, 1, 64, &off, &total)); /* the alignment overflows */
    ck_assert(!trd_scratch_layout(UINT64_MAX - 10, 20, 1, &off, &total));  /* the sum overflows */
    ck_assert_uint_eq(off, 7);
    ck_assert_uint_eq(total, 7);
}
END_TEST

START_TEST(test_slot_map)
{
    static trd_slot_map_t m;
    trd_slot_map_init(&m);
    static char handles[TRD_SLOT_MAP_SLOTS + 1][16];
    int seen[TRD_SLOT_MAP_SLOTS] = {0};
    int null_slot = trd_slot_map_find(&m, NULL);
    ck_assert_int_ge(null_slot, 0);
    seen[null_slot] = 1;
    for (int i = 0; i < TRD_SLOT_MAP_SLOTS - 1; i++) {
        int at = trd_slot_map_find(&m, handles[i]);
        ck_assert_msg(at >= 0 && at < TRD_SLOT_MAP_SLOTS && !seen[at], "handle %d: slot %d", i, at);
        seen[at] = 1;
    }
    ck_assert_int_eq(trd_slot_map_find(&m, handles[TRD_SLOT_MAP_SLOTS]), -1); /* full */
    ck_assert_int_eq(trd_slot_map_find(&m, NULL), null_slot);
    for (int i = 0; i < TRD_SLOT_MAP_SLOTS - 1; i++)
        ck_assert_int_eq(seen[trd_slot_map_find(&m, handles[i])], 1);
    ck_assert_int_eq(trd_slot_map_find(&m, handles[5]), trd_slot_map_find(&m, handles[5]));
}
END_TEST

/* Threads racing to claim the same handles agree on their slots. */
static trd_slot_map_t race_map;
static char race_handles[32];
static int race_slots[8][32];

static void *race(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < 32; i++) {
        int h = (i * 7 + t) % 32;
        race_slots[t][h] = trd_slot_map_find(&race_map, &race_handles[h]);
    }
    return NULL;
}

START_TEST(test_slot_map_race)
{
    trd_slot_map_init(&race_map);
    pthread_t th[8];
    for (int t = 0; t < 8; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, race, (void *)(intptr_t)t), 0);
    for (int t = 0; t < 8; t++)
        pthread_join(th[t], NULL);
    for (int h = 0; h < 32; h++) {
        ck_assert_int_ge(race_slots[0][h], 0);
        for (int t = 1; t < 8; t++)
            ck_assert_int_eq(race_slots[t][h], race_slots[0][h]);
        for (int g = 0; g < h; g++)
            ck_assert_int_ne(race_slots[0][g], race_slots[0][h]);
    }
}
END_TEST

/* drivers/common reports through the core's services: bound once, as a
 * driver's init binds them. */
static void bind_services(void)
{
    trd_driver_init_args_t a = {.struct_size = sizeof a, .abi_version = TRD_DRIVER_ABI_VERSION,
                                .services = tu_driver_services(NULL)};
    ck_assert_int_eq(trd_drv_bind(&a), TRD_OK);
}

static Suite *suite(void)
{
    Suite *s = suite_create("drivers_common");
    TCase *t = tcase_create("vendor_lib");
    tcase_add_checked_fixture(t, bind_services, NULL);
    tcase_add_test(t, test_broken_first_then_working);
    tcase_add_test(t, test_missing_first_then_working);
    tcase_add_test(t, test_none_usable);
    tcase_add_test(t, test_defaults);
    tcase_add_test(t, test_resolver);
    suite_add_tcase(s, t);
    t = tcase_create("arith");
    tcase_add_checked_fixture(t, bind_services, NULL);
    tcase_add_test(t, test_checked_arith);
    tcase_add_test(t, test_launch_scratch);
    tcase_add_test(t, test_scratch_layout);
    tcase_add_test(t, test_slot_map);
    tcase_add_test(t, test_slot_map_race);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
