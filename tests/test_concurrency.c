/* SPDX-License-Identifier: Apache-2.0 */
/* test_concurrency.c: many threads using one runtime at once, on the host
 * driver's add kernel (examples/host/add_kernel.c, and the host twin inside
 * the examples/add_kernel.trdb bundle). Built into every tree; the
 * ThreadSanitizer stage of run-tests.sh runs it in build-tsan/, where any
 * report fails it.
 *
 *  - 16 threads launching 1000 times each on one shared stream, on a stream
 *    each, and without a stream; every thread chains its launches
 *    (out = x + out, in place), so that a launch lost, run twice or out of
 *    order changes the result, and checks every element against C;
 *  - 16 threads racing the lazy first load of a fresh kernel;
 *  - threads creating, loading, launching and destroying kernels, streams,
 *    events and buffers (kernels and events destroyed with work still
 *    queued) while others launch. */
#include <pthread.h>

#include "tests/testutil.h"

#define THREADS 16
#define LAUNCHES 1000

static trd_runtime_t *rt;
static trd_device_t *host;
static const char *const add_sig = "x:*fp32,y:*fp32,out:*fp32,n:i32";
/* The kernel's two files, named once here (tu_path is not for threads). */
static char so_path[4096], bundle_path[4096];

static void setup(void)
{
    rt = tu_runtime(NULL, NULL);
    TU_OK(trd_runtime_device_find(rt, "host:0", &host));
    snprintf(so_path, sizeof so_path, "%s", tu_host_kernel("add_kernel"));
    snprintf(bundle_path, sizeof bundle_path, "%s/examples/add_kernel.trdb", tu_builddir());
}

static void teardown(void)
{
    trd_runtime_destroy(rt);
}

/* The add kernel from the host shared object, or from the bundle. */
static trd_kernel_t *add_kernel(int from_bundle)
{
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = so_path, .name = "add_kernel", .signature = add_sig};
    if (from_bundle)
        d = (trd_kernel_desc_t){.struct_size = sizeof d, .path = bundle_path};
    trd_kernel_t *k = NULL;
    TU_OK(trd_kernel_create(rt, &d, &k));
    return k;
}

/* One thread's chain: out = x + out, `launches` times, on n elements (n
 * differs per thread: 3 or 4 programs of 1024, so the device's workers share
 * each launch). Failures are counted, not asserted: Check's assertions belong
 * to the test's own thread. */
struct chain {
    trd_kernel_t *k;
    trd_stream_t *stream;  /* NULL: a stream of its own (own_stream) or none */
    int own_stream;
    int launches;
    int id;
    int n;
    float *x, *out, *ref;
    trd_buffer_t *bx, *bo;
    trd_status_t st;
    char error[512];
};

static void chain_fail(struct chain *c, trd_status_t st, const char *what)
{
    if (c->st == TRD_OK) {
        c->st = st;
        snprintf(c->error, sizeof c->error, "thread %d: %s: %s", c->id, what, trd_error_message());
    }
}

static int chain_init(struct chain *c, int id, int launches)
{
    c->id = id;
    c->launches = launches;
    c->n = 2049 + 97 * id;
    size_t bytes = (size_t)c->n * 4;
    c->x = malloc(bytes);
    c->out = malloc(bytes);
    c->ref = malloc(bytes);
    tu_fill_f32(c->x, (size_t)c->n, 1000 + (uint64_t)id);
    tu_fill_f32(c->out, (size_t)c->n, 2000 + (uint64_t)id);
    memcpy(c->ref, c->out, bytes);
    for (int r = 0; r < launches; r++)
        for (int i = 0; i < c->n; i++)
            c->ref[i] = c->x[i] + c->ref[i];
    trd_status_t st;
    if ((st = trd_buffer_alloc(host, bytes, &c->bx)) != TRD_OK || (st = trd_buffer_alloc(host, bytes, &c->bo)) != TRD_OK ||
        (st = trd_buffer_write(c->bx, 0, c->x, bytes, NULL)) != TRD_OK ||
        (st = trd_buffer_write(c->bo, 0, c->out, bytes, NULL)) != TRD_OK) {
        chain_fail(c, st, "buffers");
        return 0;
    }
    return 1;
}

static void chain_free(struct chain *c)
{
    trd_buffer_free(c->bx);
    trd_buffer_free(c->bo);
    free(c->x);
    free(c->out);
    free(c->ref);
}

/* Launches the chain; with a stream, reads the result back through it. */
static void *chain_run(void *arg)
{
    struct chain *c = arg;
    trd_stream_t *s = c->stream;
    trd_status_t st;
    if (c->own_stream && (st = trd_stream_create(host, &s)) != TRD_OK) {
        chain_fail(c, st, "trd_stream_create");
        return NULL;
    }
    trd_arg_t a[4] = {trd_arg_buffer(c->bx), trd_arg_buffer(c->bo), trd_arg_buffer(c->bo), trd_arg_int(c->n)};
    trd_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)(c->n + 1023) / 1024, 1, 1}, .num_args = 4,
                      .args = a, .stream = s, .device = s ? NULL : host};
    for (int r = 0; r < c->launches && c->st == TRD_OK; r++)
        if ((st = trd_kernel_launch(c->k, &l)) != TRD_OK)
            chain_fail(c, st, "trd_kernel_launch");
    if ((st = trd_buffer_read(c->bo, 0, c->out, (size_t)c->n * 4, s)) != TRD_OK)
        chain_fail(c, st, "trd_buffer_read");
    if (s && (st = trd_stream_synchronize(s)) != TRD_OK)
        chain_fail(c, st, "trd_stream_synchronize");
    if (c->own_stream)
        trd_stream_destroy(s);
    return NULL;
}

static void chain_check(const struct chain *c)
{
    ck_assert_msg(c->st == TRD_OK, "%s", c->error);
    for (int i = 0; i < c->n; i++)
        ck_assert_msg(c->out[i] == c->ref[i], "thread %d: out[%d] = %.9g, expected %.9g", c->id, i, c->out[i],
                      c->ref[i]);
}

enum mode { SHARED_STREAM, OWN_STREAMS, NO_STREAM };

static void chains(enum mode mode)
{
    trd_kernel_t *k = add_kernel(0);
    TU_OK(trd_kernel_load(k, host, NULL));
    trd_stream_t *shared = NULL;
    if (mode == SHARED_STREAM)
        TU_OK(trd_stream_create(host, &shared));
    static struct chain c[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&c[i], 0, sizeof c[i]);
        ck_assert(chain_init(&c[i], i, LAUNCHES));
        c[i].k = k;
        c[i].stream = shared;
        c[i].own_stream = mode == OWN_STREAMS;
        ck_assert_int_eq(pthread_create(&t[i], NULL, chain_run, &c[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        chain_check(&c[i]);
        chain_free(&c[i]);
    }
    trd_stream_destroy(shared);
    trd_kernel_destroy(k);
}

START_TEST(launches_on_a_shared_stream)
{
    chains(SHARED_STREAM);
}
END_TEST

START_TEST(launches_on_a_stream_each)
{
    chains(OWN_STREAMS);
}
END_TEST

START_TEST(launches_without_a_stream)
{
    chains(NO_STREAM);
}
END_TEST

/* Threads released at once by a barrier, each launching a kernel that no
 * thread has loaded yet (or loading it explicitly): one load, every launch
 * on the loaded kernel. */
struct racer {
    struct chain c;
    pthread_barrier_t *start;
    int explicit_load;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    pthread_barrier_wait(r->start);
    trd_status_t st;
    if (r->explicit_load && (st = trd_kernel_load(r->c.k, host, NULL)) != TRD_OK)
        chain_fail(&r->c, st, "trd_kernel_load");
    return chain_run(&r->c);
}

START_TEST(first_load_races)
{
    static struct racer r[THREADS];
    pthread_t t[THREADS];
    pthread_barrier_t start;
    for (int round = 0; round < 8; round++) {
        trd_kernel_t *k = add_kernel(round % 2);
        trd_stream_t *shared;
        TU_OK(trd_stream_create(host, &shared));
        ck_assert_int_eq(pthread_barrier_init(&start, NULL, THREADS), 0);
        for (int i = 0; i < THREADS; i++) {
            memset(&r[i], 0, sizeof r[i]);
            ck_assert(chain_init(&r[i].c, i, 20));
            r[i].c.k = k;
            r[i].c.stream = i % 3 == 0 ? shared : NULL;
            r[i].c.own_stream = i % 3 == 1;
            r[i].start = &start;
            r[i].explicit_load = i % 4 == 3;
            ck_assert_int_eq(pthread_create(&t[i], NULL, race, &r[i]), 0);
        }
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
        for (int i = 0; i < THREADS; i++) {
            chain_check(&r[i].c);
            chain_free(&r[i].c);
        }
        pthread_barrier_destroy(&start);
        trd_stream_destroy(shared);
        trd_kernel_destroy(k);
    }
}
END_TEST

/* A thread that makes and unmakes everything in a loop: a kernel (from the
 * shared object or the bundle), a stream, events, buffers; launches on them,
 * records events and destroys the event and the kernel while that work is
 * still queued, then checks the result the stream computed. */
struct churner {
    int id;
    int rounds;
    trd_status_t st;
    char error[512];
};

static void *churn(void *arg)
{
    struct churner *w = arg;
    for (int round = 0; round < w->rounds && w->st == TRD_OK; round++) {
        struct chain c;
        memset(&c, 0, sizeof c);
        trd_kernel_desc_t d = {.struct_size = sizeof d, .path = so_path, .name = "add_kernel", .signature = add_sig};
        trd_kernel_desc_t b = {.struct_size = sizeof b, .path = bundle_path};
        trd_stream_t *s = NULL;
        trd_event_t *e0 = NULL, *e1 = NULL;
        trd_status_t st;
        const char *what = "trd_kernel_create";
        if ((st = trd_kernel_create(rt, (round + w->id) % 2 ? &b : &d, &c.k)) != TRD_OK)
            goto fail;
        what = "creating a stream and events";
        if ((st = trd_stream_create(host, &s)) != TRD_OK || (st = trd_event_create(host, &e0)) != TRD_OK ||
            (st = trd_event_create(host, &e1)) != TRD_OK)
            goto fail;
        what = "buffers";
        if (!chain_init(&c, 100 + w->id, 30)) {
            st = c.st;
            goto fail;
        }
        trd_arg_t a[4] = {trd_arg_buffer(c.bx), trd_arg_buffer(c.bo), trd_arg_buffer(c.bo), trd_arg_int(c.n)};
        trd_launch_t l = {.struct_size = sizeof l, .grid = {(uint32_t)(c.n + 1023) / 1024, 1, 1}, .num_args = 4,
                          .args = a, .stream = s};
        what = "launching";
        if ((st = trd_event_record(e0, s)) != TRD_OK)
            goto fail;
        for (int i = 0; i < c.launches; i++)
            if ((st = trd_kernel_launch(c.k, &l)) != TRD_OK)
                goto fail;
        what = "recording, reading";
        if ((st = trd_event_record(e1, s)) != TRD_OK ||
            (st = trd_buffer_read(c.bo, 0, c.out, (size_t)c.n * 4, s)) != TRD_OK)
            goto fail;
        /* the kernel and an event go while their work is queued */
        trd_kernel_destroy(c.k);
        c.k = NULL;
        trd_event_destroy(e0);
        e0 = NULL;
        what = "synchronizing";
        if ((st = trd_event_synchronize(e1)) != TRD_OK || (st = trd_stream_synchronize(s)) != TRD_OK)
            goto fail;
        for (int i = 0; i < c.n; i++)
            if (c.out[i] != c.ref[i]) {
                snprintf(w->error, sizeof w->error, "churner %d round %d: out[%d] = %.9g, expected %.9g", w->id,
                         round, i, c.out[i], c.ref[i]);
                w->st = TRD_ERR_INTERNAL;
                break;
            }
        goto done;
    fail:
        w->st = st;
        snprintf(w->error, sizeof w->error, "churner %d round %d: %s: %s", w->id, round, what, trd_error_message());
    done:
        trd_event_destroy(e0);
        trd_event_destroy(e1);
        trd_stream_destroy(s);
        trd_kernel_destroy(c.k);
        chain_free(&c);
    }
    return NULL;
}

START_TEST(objects_come_and_go_while_others_launch)
{
    enum { LAUNCHERS = 8, CHURNERS = 8 };
    trd_kernel_t *k = add_kernel(1);
    trd_stream_t *shared;
    TU_OK(trd_stream_create(host, &shared));
    static struct chain c[LAUNCHERS];
    static struct churner w[CHURNERS];
    pthread_t t[LAUNCHERS + CHURNERS];
    for (int i = 0; i < LAUNCHERS; i++) {
        memset(&c[i], 0, sizeof c[i]);
        ck_assert(chain_init(&c[i], i, 300));
        c[i].k = k;
        c[i].stream = i % 2 ? shared : NULL;
        c[i].own_stream = i % 4 == 2;
        ck_assert_int_eq(pthread_create(&t[i], NULL, chain_run, &c[i]), 0);
    }
    for (int i = 0; i < CHURNERS; i++) {
        w[i] = (struct churner){.id = i, .rounds = 12};
        ck_assert_int_eq(pthread_create(&t[LAUNCHERS + i], NULL, churn, &w[i]), 0);
    }
    for (int i = 0; i < LAUNCHERS + CHURNERS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < CHURNERS; i++)
        ck_assert_msg(w[i].st == TRD_OK, "%s", w[i].error);
    for (int i = 0; i < LAUNCHERS; i++) {
        chain_check(&c[i]);
        chain_free(&c[i]);
    }
    trd_stream_destroy(shared);
    trd_kernel_destroy(k);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("concurrency");
    TCase *t = tcase_create("concurrency");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 600);
    tcase_add_test(t, launches_on_a_shared_stream);
    tcase_add_test(t, launches_on_a_stream_each);
    tcase_add_test(t, launches_without_a_stream);
    tcase_add_test(t, first_load_races);
    tcase_add_test(t, objects_come_and_go_while_others_launch);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
