/* SPDX-License-Identifier: Apache-2.0 */
/* test_drivers_common.c: drivers/common, the mechanisms every driver module
 * shares: the vendor-library loader's rule (real dlopen of the vl_* libraries
 * this suite builds), the checked arithmetic, the native-stream slot map and
 * the per-stream scratch arenas. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

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

/* ------------------------------------------------------------ scratch */

/* A vendor's device memory for the arenas: host memory, every live block
 * registered, so that a test can tell whether a pointer a launch got is
 * still allocated (a block freed while a launch holds it is the mistake the
 * lifetime policy exists to prevent). */
#define FAKE_BLOCKS 256
static struct {
    pthread_mutex_t lock;
    unsigned allocs, frees, fail_next;
    uint64_t live[FAKE_BLOCKS][2]; /* addr, size; 0: free entry */
} fake = {.lock = PTHREAD_MUTEX_INITIALIZER};

static trd_status_t fake_alloc(void *ctx, uint64_t size, void **addr)
{
    ck_assert_ptr_eq(ctx, &fake);
    pthread_mutex_lock(&fake.lock);
    if (fake.fail_next) {
        fake.fail_next = 0;
        pthread_mutex_unlock(&fake.lock);
        return trd_drv_error(TRD_ERR_NO_MEMORY, "fake: out of device memory for %llu bytes",
                             (unsigned long long)size);
    }
    void *p = aligned_alloc(TRD_SCRATCH_BASE_ALIGN, (size_t)size);
    ck_assert_ptr_nonnull(p);
    int slot = -1;
    for (int i = 0; i < FAKE_BLOCKS && slot < 0; i++)
        if (!fake.live[i][0])
            slot = i;
    ck_assert_int_ge(slot, 0);
    fake.live[slot][0] = (uint64_t)(uintptr_t)p;
    fake.live[slot][1] = size;
    fake.allocs++;
    pthread_mutex_unlock(&fake.lock);
    *addr = p;
    return TRD_OK;
}

static void fake_free(void *ctx, void *ptr)
{
    ck_assert_ptr_eq(ctx, &fake);
    uint64_t addr = (uint64_t)(uintptr_t)ptr;
    pthread_mutex_lock(&fake.lock);
    int found = 0;
    for (int i = 0; i < FAKE_BLOCKS; i++)
        if (fake.live[i][0] == addr) {
            fake.live[i][0] = 0;
            found = 1;
        }
    fake.frees++;
    pthread_mutex_unlock(&fake.lock);
    ck_assert_msg(found, "freed 0x%llx, which is not a live block", (unsigned long long)addr);
    free((void *)(uintptr_t)addr);
}

/* Whether [p, p + n) lies in one live block. */
static int fake_holds(uint64_t p, uint64_t n)
{
    pthread_mutex_lock(&fake.lock);
    int in = 0;
    for (int i = 0; i < FAKE_BLOCKS && !in; i++)
        in = fake.live[i][0] && p >= fake.live[i][0] && p + n <= fake.live[i][0] + fake.live[i][1];
    pthread_mutex_unlock(&fake.lock);
    return in;
}

static unsigned fake_live(void)
{
    pthread_mutex_lock(&fake.lock);
    unsigned n = fake.allocs - fake.frees;
    pthread_mutex_unlock(&fake.lock);
    return n;
}

static const trd_scratch_mem_t fake_mem = {fake_alloc, fake_free, &fake};

static trd_driver_launch_t scratch_launch(uint64_t gbytes, uint64_t pbytes)
{
    trd_driver_launch_t l = {.struct_size = sizeof l, .grid = {3, 2, 1}};
    l.global_scratch_bytes = gbytes;
    l.profile_scratch_bytes = pbytes;
    return l;
}

/* The caller's pointers are used as given and the arena is not touched; a
 * pointer the kernel has no use for is passed as 0. */
START_TEST(test_scratch_callers)
{
    const trd_scratch_spec_t both = {{100, 8}, {64, 8}, "kernel 'k' on test:0"};
    const trd_scratch_spec_t global_only = {{100, 0}, {64, 1}, "kernel 'k' on test:0"};
    trd_driver_launch_t l = scratch_launch(6 * 128, 6 * 8);
    l.global_scratch = (void *)(uintptr_t)0x10000;
    l.profile_scratch = (void *)(uintptr_t)0x20000;
    uint64_t ptr[2] = {1, 1};
    trd_arena_t *held = (trd_arena_t *)&l;
    ck_assert(!trd_scratch_wanted(&both, &l));
    TU_OK(trd_scratch_get(NULL, &both, &l, ptr, &held));
    ck_assert(ptr[0] == 0x10000 && ptr[1] == 0x20000 && held == NULL);
    TU_OK(trd_scratch_get(NULL, &global_only, &l, ptr, &held));
    ck_assert(ptr[0] == 0x10000 && ptr[1] == 0);
    l.global_scratch = NULL;
    ck_assert(trd_scratch_wanted(&global_only, &l));
    /* no arena for the stream: the way out is named, outputs untouched */
    ptr[0] = ptr[1] = 7;
    TU_FAILS(trd_scratch_get(NULL, &global_only, &l, ptr, &held), TRD_ERR_LIMIT,
             "kernel 'k' on test:0: no scratch arena for this native stream (trident keeps one for each of 64 "
             "native streams and none for a per-thread default stream");
    ck_assert(ptr[0] == 7 && ptr[1] == 7);
}
END_TEST

/* Global at the base, aligned to both alignments (past what the allocator
 * gives, too), profile after it at its alignment, never overlapping; blocks
 * are multiples of 64 KiB. */
START_TEST(test_scratch_layout)
{
    trd_arena_t a;
    trd_arena_init(&a, &fake_mem);
    unsigned allocs = fake.allocs;
    const trd_scratch_spec_t sp = {{1000, 24}, {8, 128}, "k"};
    trd_driver_launch_t l = scratch_launch(1000, 24);
    uint64_t ptr[2];
    trd_arena_t *held;
    TU_OK(trd_scratch_get(&a, &sp, &l, ptr, &held));
    ck_assert_ptr_eq(held, &a);
    ck_assert_uint_eq(ptr[1] - ptr[0], 1024);
    ck_assert_uint_eq(ptr[1] % 128, 0);
    ck_assert(fake_holds(ptr[0], 1000) && fake_holds(ptr[1], 24));
    ck_assert_uint_eq(atomic_load(&a.current)->size % TRD_SCRATCH_GRAIN, 0);
    trd_arena_release(held);
    ck_assert_uint_eq(atomic_load(&a.users), 0);
    /* a 4096-byte alignment, more than allocators promise: the base is aligned inside the block */
    const trd_scratch_spec_t big_align = {{70000, 0}, {4096, 1}, "k"};
    trd_driver_launch_t l2 = scratch_launch(70000, 0);
    TU_OK(trd_scratch_get(&a, &big_align, &l2, ptr, &held));
    trd_arena_release(held);
    ck_assert_uint_eq(ptr[0] % 4096, 0);
    ck_assert_uint_eq(ptr[1], 0);
    ck_assert(fake_holds(ptr[0], 70000));
    ck_assert_uint_eq(fake.allocs, allocs + 2);
    trd_arena_fini(&a);
    ck_assert_uint_eq(fake_live(), 0);
}
END_TEST

/* Reused while it fits; replaced (at least twice as large) when not, the
 * old block kept until a synchronize, then freed; after a failed
 * synchronize kept for the next. */
START_TEST(test_arena_lifetime)
{
    trd_arena_t a;
    trd_arena_init(&a, &fake_mem);
    unsigned allocs = fake.allocs;
    const trd_scratch_spec_t sp = {{128, 0}, {1, 1}, "k"};
    trd_driver_launch_t small = scratch_launch(50000, 0), large = scratch_launch(100000, 0);
    uint64_t p0[2], p1[2], p2[2];
    trd_arena_t *held;
    TU_OK(trd_scratch_get(&a, &sp, &small, p0, &held));
    trd_arena_release(held);
    TU_OK(trd_scratch_get(&a, &sp, &small, p1, &held));
    trd_arena_release(held);
    ck_assert_uint_eq(p0[0], p1[0]);
    ck_assert_uint_eq(fake.allocs, allocs + 1);
    ck_assert_ptr_null(trd_arena_reclaim_begin(&a)); /* nothing retired yet */
    uint64_t first = atomic_load(&a.current)->size;
    TU_OK(trd_scratch_get(&a, &sp, &large, p2, &held));
    trd_arena_release(held);
    ck_assert_uint_eq(fake.allocs, allocs + 2);
    ck_assert_uint_ge(atomic_load(&a.current)->size, 2 * first);
    ck_assert(fake_holds(p0[0], 50000)); /* retired, not freed: queued kernels may use it */
    trd_scratch_block_t *r = trd_arena_reclaim_begin(&a);
    ck_assert_ptr_nonnull(r);
    trd_arena_reclaim_end(&a, r, 0); /* the synchronize failed: kept */
    ck_assert(fake_holds(p0[0], 50000));
    r = trd_arena_reclaim_begin(&a);
    ck_assert_ptr_nonnull(r);
    trd_arena_reclaim_end(&a, r, 1);
    ck_assert(!fake_holds(p0[0], 1));
    ck_assert(fake_holds(p2[0], 100000));
    ck_assert_uint_eq(fake_live(), 1);
    trd_arena_fini(&a);
    ck_assert_uint_eq(fake_live(), 0);
}
END_TEST

/* A launch between trd_scratch_get and trd_arena_release may hold a block
 * that another launch retires: a synchronize meanwhile frees nothing. */
START_TEST(test_arena_held_block_waits)
{
    trd_arena_t a;
    trd_arena_init(&a, &fake_mem);
    const trd_scratch_spec_t sp = {{1, 0}, {1, 1}, "k"};
    trd_driver_launch_t small = scratch_launch(1000, 0), large = scratch_launch(1000000, 0);
    uint64_t p0[2], p1[2];
    trd_arena_t *h0, *h1;
    TU_OK(trd_scratch_get(&a, &sp, &small, p0, &h0)); /* held: its kernel not yet queued */
    TU_OK(trd_scratch_get(&a, &sp, &large, p1, &h1)); /* retires p0's block */
    trd_arena_release(h1);
    ck_assert_ptr_null(trd_arena_reclaim_begin(&a));
    ck_assert(fake_holds(p0[0], 1000));
    trd_arena_release(h0);
    trd_scratch_block_t *r = trd_arena_reclaim_begin(&a);
    ck_assert_ptr_nonnull(r);
    trd_arena_reclaim_end(&a, r, 1);
    ck_assert(!fake_holds(p0[0], 1));
    trd_arena_fini(&a);
    ck_assert_uint_eq(fake_live(), 0);
}
END_TEST

/* Sizes past the arena's limit or past 64 bits, a core without the byte
 * counts and a failed allocation are errors naming the figures; nothing is
 * allocated or held, outputs are untouched. */
START_TEST(test_arena_limits)
{
    trd_arena_t a;
    trd_arena_init(&a, &fake_mem);
    unsigned allocs = fake.allocs;
    const trd_scratch_spec_t sp = {{8, 8}, {1, 64}, "kernel 'k' on test:0"};
    uint64_t ptr[2] = {7, 7};
    trd_arena_t *held = NULL;
    trd_driver_launch_t l = scratch_launch(TRD_SCRATCH_MAX, 1);
    TU_FAILS(trd_scratch_get(&a, &sp, &l, ptr, &held), TRD_ERR_LIMIT,
             "kernel 'k' on test:0: grid 3x2x1 needs 17592186044416 global + 1 profile bytes of scratch, more than "
             "the 17592186044416 bytes");
    l = scratch_launch(UINT64_MAX - 10, 20); /* profile's offset and the sum overflow */
    TU_FAILS(trd_scratch_get(&a, &sp, &l, ptr, &held), TRD_ERR_LIMIT, "more than the");
    l = scratch_launch(UINT64_MAX - 10, 0);
    TU_FAILS(trd_scratch_get(&a, &sp, &l, ptr, &held), TRD_ERR_LIMIT, "more than the");
    l = scratch_launch(64, 64);
    l.struct_size = (uint32_t)offsetof(trd_driver_launch_t, global_scratch_bytes); /* a version-1 core's */
    TU_FAILS(trd_scratch_get(&a, &sp, &l, ptr, &held), TRD_ERR_VERSION, "has no scratch byte counts");
    l = scratch_launch(64, 64);
    fake.fail_next = 1;
    TU_FAILS(trd_scratch_get(&a, &sp, &l, ptr, &held), TRD_ERR_NO_MEMORY, "fake: out of device memory");
    ck_assert(ptr[0] == 7 && ptr[1] == 7 && held == NULL);
    ck_assert_uint_eq(fake.allocs, allocs);
    ck_assert_uint_eq(atomic_load(&a.users), 0);
    ck_assert_ptr_null(atomic_load(&a.current));
    TU_OK(trd_scratch_get(&a, &sp, &l, ptr, &held)); /* the next one allocates */
    trd_arena_release(held);
    trd_arena_fini(&a);
    ck_assert_uint_eq(fake_live(), 0);
}
END_TEST

/* Native streams: an arena per handle (NULL too), the same one each time;
 * all of them freed with the set. */
START_TEST(test_arena_set)
{
    static trd_arena_set_t set;
    trd_arena_set_init(&set, &fake_mem);
    static char h[2];
    trd_arena_t *a0 = trd_arena_set_find(&set, &h[0]);
    trd_arena_t *an = trd_arena_set_find(&set, NULL);
    ck_assert(a0 && an && a0 != an);
    ck_assert_ptr_eq(trd_arena_set_find(&set, &h[0]), a0);
    ck_assert_ptr_eq(trd_arena_set_find(&set, NULL), an);
    ck_assert_ptr_ne(trd_arena_set_find(&set, &h[1]), a0);
    const trd_scratch_spec_t sp = {{8, 0}, {1, 1}, "k"};
    trd_driver_launch_t l = scratch_launch(4096, 0);
    uint64_t p[2];
    trd_arena_t *held;
    TU_OK(trd_scratch_get(a0, &sp, &l, p, &held));
    trd_arena_release(held);
    TU_OK(trd_scratch_get(an, &sp, &l, p, &held));
    trd_arena_release(held);
    ck_assert_uint_eq(fake_live(), 2);
    trd_arena_set_fini(&set);
    ck_assert_uint_eq(fake_live(), 0);
}
END_TEST

/* Launching threads grow one arena while another synchronizes it, with the
 * device's queue modelled: a launch queues the block it got (after which it
 * releases the arena); a synchronize completes what was queued before it.
 * No block may be freed while a launch holds it or queued work not yet
 * completed uses it. Each round starts a fresh arena, so that every round
 * grows (and retires) several times. */
#define RACE_QUEUE 4096
static struct {
    trd_arena_t arena;
    pthread_mutex_t lock;        /* the queue */
    uint64_t queued[RACE_QUEUE]; /* a launch's block address; 0 once completed */
    unsigned nqueued;
    atomic_int bad, stop;
} arena_race = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* fake_free's check (the fake's lock held): queued work still uses [addr, addr + size). */
static int race_in_use(uint64_t addr, uint64_t size)
{
    pthread_mutex_lock(&arena_race.lock);
    int used = 0;
    for (unsigned i = 0; i < arena_race.nqueued && !used; i++)
        used = arena_race.queued[i] >= addr && arena_race.queued[i] < addr + size;
    pthread_mutex_unlock(&arena_race.lock);
    return used;
}

static void race_free(void *ctx, void *ptr)
{
    uint64_t addr = (uint64_t)(uintptr_t)ptr, size = 0;
    pthread_mutex_lock(&fake.lock);
    for (int i = 0; i < FAKE_BLOCKS; i++)
        if (fake.live[i][0] == addr)
            size = fake.live[i][1];
    pthread_mutex_unlock(&fake.lock);
    if (race_in_use(addr, size))
        atomic_fetch_add(&arena_race.bad, 1);
    fake_free(ctx, ptr);
}

static const trd_scratch_mem_t race_mem = {fake_alloc, race_free, &fake};

static void *race_launch(void *arg)
{
    const trd_scratch_spec_t sp = {{1, 0}, {1, 1}, "k"};
    for (int i = 0; i < 24; i++) {
        trd_driver_launch_t l = scratch_launch((uint64_t)(1 + i * 4 + (int)(intptr_t)arg) << 14, 0);
        uint64_t p[2];
        trd_arena_t *held;
        if (trd_scratch_get(&arena_race.arena, &sp, &l, p, &held) != TRD_OK) {
            atomic_fetch_add(&arena_race.bad, 1);
            continue;
        }
        sched_yield();
        if (!fake_holds(p[0], l.global_scratch_bytes))
            atomic_fetch_add(&arena_race.bad, 1);
        pthread_mutex_lock(&arena_race.lock); /* the kernel is queued, then the arena released */
        if (arena_race.nqueued < RACE_QUEUE)
            arena_race.queued[arena_race.nqueued++] = p[0];
        pthread_mutex_unlock(&arena_race.lock);
        trd_arena_release(held);
    }
    return NULL;
}

static void *race_sync(void *arg)
{
    (void)arg;
    while (!atomic_load(&arena_race.stop)) {
        trd_scratch_block_t *r = trd_arena_reclaim_begin(&arena_race.arena);
        pthread_mutex_lock(&arena_race.lock); /* the vendor's synchronize: what is queued by now completes */
        arena_race.nqueued = 0;
        pthread_mutex_unlock(&arena_race.lock);
        trd_arena_reclaim_end(&arena_race.arena, r, 1);
        sched_yield();
    }
    return NULL;
}

START_TEST(test_arena_race)
{
    atomic_store(&arena_race.bad, 0);
    for (int round = 0; round < 20; round++) {
        trd_arena_init(&arena_race.arena, &race_mem);
        arena_race.nqueued = 0;
        atomic_store(&arena_race.stop, 0);
        pthread_t th[3], sync;
        ck_assert_int_eq(pthread_create(&sync, NULL, race_sync, NULL), 0);
        for (int t = 0; t < 3; t++)
            ck_assert_int_eq(pthread_create(&th[t], NULL, race_launch, (void *)(intptr_t)t), 0);
        for (int t = 0; t < 3; t++)
            pthread_join(th[t], NULL);
        atomic_store(&arena_race.stop, 1);
        pthread_join(sync, NULL);
        ck_assert_uint_eq(atomic_load(&arena_race.arena.users), 0);
        arena_race.nqueued = 0; /* the stream's work is done: then the arena goes */
        trd_arena_fini(&arena_race.arena);
        ck_assert_uint_eq(fake_live(), 0);
    }
    ck_assert_int_eq(atomic_load(&arena_race.bad), 0);
}
END_TEST

/* The native-stream slot map: a handle keeps its slot, NULL is a handle,
 * distinct handles get distinct slots, and when all are taken the next is
 * refused (-1) while the known ones are still found. */
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
    tcase_add_test(t, test_slot_map);
    tcase_add_test(t, test_slot_map_race);
    suite_add_tcase(s, t);
    t = tcase_create("scratch");
    tcase_add_checked_fixture(t, bind_services, NULL);
    tcase_add_test(t, test_scratch_callers);
    tcase_add_test(t, test_scratch_layout);
    tcase_add_test(t, test_arena_lifetime);
    tcase_add_test(t, test_arena_held_block_waits);
    tcase_add_test(t, test_arena_limits);
    tcase_add_test(t, test_arena_set);
    tcase_add_test(t, test_arena_race);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
