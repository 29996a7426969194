/* SPDX-License-Identifier: Apache-2.0 */
/* tune.c: a tuner chooses among a kernel's variants (compiled configurations) at run time, for every caller.
 *
 * The choice is kept per (caller's key, device arch): in the tuner (a lock-free table per device, so that a
 * known key launches with no lock and no allocation), in this process's memory (so that devices of one arch and
 * other tuners over the same variants share it, and wait for the first one's benchmark rather than each running
 * their own), and in <cache_dir>/tune/<kernel>-<key sha256>-<arch>.json for later processes (written through a
 * temporary and a rename). A file that does not parse, or that was written for other variants, is ignored (with
 * a warning for the former) and replaced after the benchmark.
 *
 * The benchmark runs on the caller's stream with the caller's buffers: the ones the variants write are copied
 * aside first and copied back after each variant, so that they come out as one launch leaves them. Each variant
 * is loaded, launched once to warm up, timed once (twice where that looks hopeless), then repeated in batches
 * between two events until its launches add up to TUNE_TARGET_MS; its figure is its best batch's mean. A variant
 * that cannot be loaded or launched here is infinitely slow. While the stream is being captured into a graph
 * nothing may wait for it: without a choice the launch runs variant 0, warns once and keeps nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define TUNE_TARGET_MS 10.0  /* a variant's timed launches add up to about this */
#define TUNE_MAX_REPS 100
#define TUNE_BATCHES 5       /* the figure is the best batch: a busy moment spoils a batch, not the figure */
#define TUNE_HOPELESS 4.0    /* two timed launches this much slower than the best figure are not repeated */
#define TUNE_MAX_VARIANTS 256
#define TUNE_BUCKETS 64
#define TUNE_BENCH_LOCKS 8
#define TUNE_STEM_MAX 64
#define TUNE_WORD_MAX 32     /* of a caller's log name and variant noun */

/* A field a caller's struct_size covers (one added after the struct's first version). */
#define TUNE_HAS(s, type, field) ((s)->struct_size >= offsetof(type, field) + sizeof((s)->field))

/* A choice the tuner made for a key on a device: immutable once published. */
struct choice {
    struct choice *next;
    uint64_t hash;
    uint32_t dev;
    uint32_t variant;
    uint32_t key_size;
    uint8_t key[];
};

struct trd_tuner {
    trd_runtime_t *rt;
    uint32_t n;
    trd_kernel_t *variants[TUNE_MAX_VARIANTS];
    uint32_t nwritten;
    uint32_t *written;
    int memory_only;
    char *cache_dir;               /* the caller's, or NULL: the runtime's */
    char log_name[TUNE_WORD_MAX + 1];  /* how log lines and errors name the tuner ("tune") and a variant */
    char noun[TUNE_WORD_MAX + 1];
    char stem[TUNE_STEM_MAX + 1];  /* the kernel's name as file names may hold it */
    uint8_t digest[32];            /* of the variants: a kept choice holds for exactly these */
    char digest_hex[65];
    pthread_mutex_t lock;          /* publishing choices */
    _Atomic(struct choice *) buckets[TUNE_BUCKETS];
    atomic_int capture_warned;
    atomic_int copy_warned;
    atomic_int path_warned;
};

static int name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '-' || ch == '.' || ch == '+';
}

/* ------------------------------------------------------------- the tuner */

/* The launch types of two kernels agree (names may differ). */
static trd_status_t same_signature(const trd_kernel_t *a, const trd_kernel_t *b, uint32_t ia, uint32_t ib)
{
    const struct trd_signature *x = &a->src.sig, *y = &b->src.sig;
    int same = x->num_params == y->num_params;
    for (uint32_t i = 0, j = 0; same && (i < x->count || j < y->count);) {
        if (i < x->count && x->params[i].type == TRD_T_CONSTEXPR) {
            i++;
            continue;
        }
        if (j < y->count && y->params[j].type == TRD_T_CONSTEXPR) {
            j++;
            continue;
        }
        if (i == x->count || j == y->count)
            break;
        char tx[TRD_PARAM_TYPE_MAX], ty[TRD_PARAM_TYPE_MAX];
        trd_param_type(&x->params[i++], tx, sizeof tx);
        trd_param_type(&y->params[j++], ty, sizeof ty);
        same = strcmp(tx, ty) == 0;
    }
    if (!same)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                             "tuner: variant %u of kernel '%s' has signature '%s', variant %u of kernel '%s' has "
                             "'%s': variants must share one signature",
                             ia, a->src.name, x->canonical, ib, b->src.name, y->canonical);
    return TRD_OK;
}

static trd_status_t variants_digest(trd_tuner_t *t, const uint8_t identity[32])
{
    struct trd_str s;
    trd_str_init(&s);
    trd_str_appendf(&s, "trident-tune %u %u;", t->n, t->nwritten);
    if (identity) {
        char hex[65];
        trd_hex(identity, 32, hex);
        trd_str_appendf(&s, "i%s;", hex);
    }
    for (uint32_t w = 0; w < t->nwritten; w++)
        trd_str_appendf(&s, "w%u;", t->written[w]);
    for (uint32_t v = 0; v < t->n; v++) {
        const trd_kernel_t *k = t->variants[v];
        trd_str_appendf(&s, "v%u %s %u;", v, k->src.sig.canonical, k->src.ntargets);
        for (uint32_t i = 0; i < k->src.ntargets; i++) {
            char hex[65];
            trd_hex(k->src.targets[i].sha256, 32, hex);
            trd_str_appendf(&s, "%s;", hex);
        }
        uint8_t oh[32];
        if (k->options && trd_options_hash(k->options, oh) == TRD_OK) {
            char hex[65];
            trd_hex(oh, 32, hex);
            trd_str_appendf(&s, "o%s;", hex);
        }
    }
    char *text = trd_str_take(&s);
    if (!text)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    trd_sha256(text, strlen(text), t->digest);
    trd_hex(t->digest, 32, t->digest_hex);
    free(text);
    return TRD_OK;
}

TRD_API trd_status_t trd_tuner_create(const trd_tuner_desc_t *desc, trd_tuner_t **out)
{
    if (!desc || !out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tuner_create: NULL argument");
    /* the first version's size: TRIDENT_1.5's callers leave out the fields TRIDENT_1.6 added */
    trd_status_t st = trd_struct_check(desc->struct_size, offsetof(trd_tuner_desc_t, cache_dir), "trd_tuner_desc_t");
    if (st != TRD_OK)
        return st;
    uint32_t n = desc->variants ? desc->num_variants : desc->kernel ? desc->kernel->nvariants : 0;
    if (n == 0 || n > TUNE_MAX_VARIANTS)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                             "trd_tuner_create: give a kernel or 1 .. %d variants (num_variants is %u)",
                             TUNE_MAX_VARIANTS, n);
    if (desc->flags & ~(uint32_t)TRD_TUNER_MEMORY_ONLY)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tuner_create: flags 0x%x are not trd_tuner_flags",
                             desc->flags);
    if (desc->num_written && !desc->written)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tuner_create: num_written is %u but written is NULL",
                             desc->num_written);
    /* the fields of TRIDENT_1.6, where the caller's struct has them */
    const char *cache_dir = TUNE_HAS(desc, trd_tuner_desc_t, cache_dir) ? desc->cache_dir : NULL;
    const void *identity = TUNE_HAS(desc, trd_tuner_desc_t, identity_size) ? desc->identity : NULL;
    uint32_t identity_size = identity ? desc->identity_size : 0;
    const char *log_name = TUNE_HAS(desc, trd_tuner_desc_t, log_name) ? desc->log_name : NULL;
    const char *noun = TUNE_HAS(desc, trd_tuner_desc_t, variant_noun) ? desc->variant_noun : NULL;
    if (!identity && TUNE_HAS(desc, trd_tuner_desc_t, identity_size) && desc->identity_size)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tuner_create: identity_size is %u but identity is NULL",
                             desc->identity_size);
    if (TUNE_HAS(desc, trd_tuner_desc_t, reserved) && desc->reserved)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tuner_create: reserved is %u; it must be 0",
                             desc->reserved);
    const char *words[2] = {log_name, noun};
    for (int w = 0; w < 2; w++) {
        size_t len = words[w] ? strlen(words[w]) : 1;
        int ok = len > 0 && len <= TUNE_WORD_MAX;
        for (size_t i = 0; ok && words[w] && i < len; i++)
            ok = (words[w][i] >= 'a' && words[w][i] <= 'z') || words[w][i] == '_' || words[w][i] == '-';
        if (!ok)
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                                 "trd_tuner_create: %s '%.40s' is not 1 to %d lower-case letters, '_' or '-'",
                                 w ? "variant_noun" : "log_name", words[w], TUNE_WORD_MAX);
    }
    trd_tuner_t *t = calloc(1, sizeof *t);
    if (!t)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    t->n = n;
    for (uint32_t v = 0; v < n; v++)
        t->variants[v] = desc->variants ? desc->variants[v] : desc->kernel->variants ? desc->kernel->variants[v]
                                                                                      : desc->kernel;
    for (uint32_t v = 0; v < n && st == TRD_OK; v++) {
        const trd_kernel_t *k = t->variants[v];
        if (!k)
            st = trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tuner_create: variant %u is NULL", v);
        else if (k->rt != t->variants[0]->rt)
            st = trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                               "trd_tuner_create: variants 0 ('%s') and %u ('%s') belong to different runtimes",
                               t->variants[0]->src.name, v, k->src.name);
        else if (v)
            st = same_signature(t->variants[0], k, 0, v);
    }
    if (st != TRD_OK)
        goto fail;
    t->rt = t->variants[0]->rt;
    t->memory_only = (desc->flags & TRD_TUNER_MEMORY_ONLY) != 0 || (cache_dir && !cache_dir[0]);
    snprintf(t->log_name, sizeof t->log_name, "%s", log_name ? log_name : "tune");
    snprintf(t->noun, sizeof t->noun, "%s", noun ? noun : "variant");
    if (cache_dir && cache_dir[0] && !(t->cache_dir = strdup(cache_dir))) {
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    t->nwritten = desc->num_written;
    if (t->nwritten && !(t->written = malloc(t->nwritten * sizeof *t->written))) {
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    for (uint32_t w = 0; w < t->nwritten && st == TRD_OK; w++) {
        uint32_t idx = desc->written[w];
        trd_param_info_t pi = {.struct_size = sizeof pi};
        if (trd_kernel_param_info(t->variants[0], idx, &pi) != TRD_OK || pi.kind != TRD_PARAM_POINTER)
            st = trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                               "trd_tuner_create: written[%u] = %u is not a pointer parameter of kernel '%s' (%s)",
                               w, idx, t->variants[0]->src.name, t->variants[0]->src.sig.canonical);
        for (uint32_t j = 0; j < w && st == TRD_OK; j++)
            if (desc->written[j] == idx)
                st = trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tuner_create: written names parameter %u twice",
                                   idx);
        t->written[w] = idx;
    }
    uint8_t id[32];
    if (identity)
        trd_sha256(identity, identity_size, id);
    if (st != TRD_OK || (st = variants_digest(t, identity ? id : NULL)) != TRD_OK)
        goto fail;
    size_t len = 0;
    for (const char *p = t->variants[0]->src.name; *p && len < TUNE_STEM_MAX; p++, len++)
        t->stem[len] = name_char(*p) && !(len == 0 && *p == '.') ? *p : '_';
    pthread_mutex_init(&t->lock, NULL);
    *out = t;
    return TRD_OK;
fail:
    free(t->cache_dir);
    free(t->written);
    free(t);
    return st;
}

TRD_API void trd_tuner_destroy(trd_tuner_t *t)
{
    if (!t)
        return;
    for (int b = 0; b < TUNE_BUCKETS; b++) {
        struct choice *c = atomic_load(&t->buckets[b]);
        while (c) {
            struct choice *next = c->next;
            free(c);
            c = next;
        }
    }
    pthread_mutex_destroy(&t->lock);
    free(t->cache_dir);
    free(t->written);
    free(t);
}

/* ------------------------------------------------------- choices in the tuner */

static uint64_t key_hash(const void *key, uint32_t size, uint32_t dev)
{
    const uint8_t *p = key;
    uint64_t h = 0xcbf29ce484222325ull ^ dev;
    for (uint32_t i = 0; i < size; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static const struct choice *choice_find(const trd_tuner_t *t, uint64_t h, const void *key, uint32_t size,
                                        uint32_t dev)
{
    for (const struct choice *c = atomic_load_explicit(&t->buckets[h % TUNE_BUCKETS], memory_order_acquire); c;
         c = c->next)
        if (c->hash == h && c->dev == dev && c->key_size == size && !memcmp(c->key, key, size))
            return c;
    return NULL;
}

/* Kept for the tuner's life; a failure to allocate only means the next launch chooses again. */
static void choice_publish(trd_tuner_t *t, uint64_t h, const void *key, uint32_t size, uint32_t dev,
                           uint32_t variant)
{
    pthread_mutex_lock(&t->lock);
    struct choice *c;
    if (!choice_find(t, h, key, size, dev) && (c = malloc(sizeof *c + size)) != NULL) {
        c->hash = h;
        c->dev = dev;
        c->variant = variant;
        c->key_size = size;
        memcpy(c->key, key, size);
        _Atomic(struct choice *) *b = &t->buckets[h % TUNE_BUCKETS];
        c->next = atomic_load_explicit(b, memory_order_relaxed);
        atomic_store_explicit(b, c, memory_order_release);
    }
    pthread_mutex_unlock(&t->lock);
}

/* ------------------------------------------------------------- benchmark */

/* One benchmark at a time on a device: two would disturb each other's figures. A lock per device, not one for
 * all: a device's stream may wait on another device's (a collective), whose first launch may be tuning too. */
static pthread_mutex_t bench_locks[TUNE_BENCH_LOCKS] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};

struct bench {
    trd_tuner_t *t;
    const trd_tuned_launch_t *tl;
    trd_device_t *dev;
    trd_stream_t *ws;     /* the launch's stream as a trident stream (NULL: the device's default stream) */
    trd_event_t *ev[2];
};

/* The launch of variant v: the caller's, with the variant's grid. */
static trd_status_t launch_variant(const trd_tuner_t *t, const trd_tuned_launch_t *tl, uint32_t v)
{
    if (TUNE_HAS(tl, trd_tuned_launch_t, user) && tl->launch_fn) /* the pair, or neither: user is launch_fn's */
        return tl->launch_fn(tl->user, v);
    trd_launch_t l = *tl->launch;
    const trd_kernel_t *k = t->variants[v];
    if (tl->grids) {
        for (int d = 0; d < 3; d++)
            l.grid[d] = tl->grids[3 * v + d];
    } else if (k->grid_rule) {
        trd_status_t st = trd_grid_rule_eval(k->grid_rule, l.args, l.num_args, k->src.name, l.grid);
        if (st != TRD_OK)
            return st;
    }
    l.struct_size = sizeof l;
    return trd_kernel_launch(t->variants[v], &l);
}

/* ms between the events around `reps` launches, per launch. */
static trd_status_t timed(struct bench *b, uint32_t v, uint32_t reps, double *ms)
{
    trd_status_t st = trd_event_record(b->ev[0], b->ws);
    for (uint32_t i = 0; i < reps && st == TRD_OK; i++)
        st = launch_variant(b->t, b->tl, v);
    double e = 0;
    if (st == TRD_OK && (st = trd_event_record(b->ev[1], b->ws)) == TRD_OK &&
        (st = trd_event_synchronize(b->ev[1])) == TRD_OK && (st = trd_event_elapsed(b->ev[0], b->ev[1], &e)) == TRD_OK)
        *ms = e / reps;
    return st;
}

/* A variant's figure: ms a launch. */
static trd_status_t measure(struct bench *b, uint32_t v, double best, double *ms)
{
    double est;
    trd_status_t st = trd_kernel_load(b->t->variants[v], b->dev, NULL);
    /* the warm-up also waits for the work queued before the call */
    if (st == TRD_OK && (st = timed(b, v, 1, &est)) == TRD_OK)
        st = timed(b, v, 1, &est);
    if (st != TRD_OK)
        return st;
    est = est > 1e-4 ? est : 1e-4;
    /* one busy moment must not condemn a variant: a second look before it is given up */
    if (est > TUNE_HOPELESS * best) {
        double again;
        if ((st = timed(b, v, 1, &again)) != TRD_OK)
            return st;
        again = again > 1e-4 ? again : 1e-4;
        if (again > TUNE_HOPELESS * best) {
            *ms = again < est ? again : est;
            return TRD_OK;
        }
        est = again;
    }
    double r = TUNE_TARGET_MS / est;
    uint32_t reps = r < 1 ? 1 : r > TUNE_MAX_REPS ? TUNE_MAX_REPS : (uint32_t)r;
    uint32_t batches = reps < TUNE_BATCHES ? reps : TUNE_BATCHES, per = reps / batches;
    double fig = INFINITY;
    for (uint32_t i = 0; i < batches && st == TRD_OK; i++) {
        double e;
        if ((st = timed(b, v, per, &e)) == TRD_OK && e < fig)
            fig = e;
    }
    if (st == TRD_OK)
        *ms = fig;
    return st;
}

/* The written parameter w's address and bytes in this launch. */
static trd_status_t written_at(const struct bench *b, uint32_t w, void **ptr, uint64_t *bytes)
{
    const trd_tuner_t *t = b->t;
    const trd_launch_t *l = b->tl->launch;
    uint32_t idx = t->written[w];
    const char *kname = t->variants[0]->src.name;
    if (idx >= l->num_args || !l->args)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': the launch has %u arguments, no written parameter %u",
                             kname, l->num_args, idx);
    const trd_arg_t *a = &l->args[idx];
    if (a->kind == TRD_ARG_BUFFER && a->value.buffer) {
        *ptr = a->value.buffer->ptr;
        *bytes = a->value.buffer->size;
    } else if (a->kind == TRD_ARG_PTR) {
        if (!b->tl->written_bytes)
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                                 "kernel '%s': written parameter %u is a TRD_ARG_PTR: give its bytes in "
                                 "trd_tuned_launch_t.written_bytes, so that it can be saved and restored",
                                 kname, idx);
        *ptr = a->value.ptr;
        *bytes = b->tl->written_bytes[w];
    } else {
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': written parameter %u is not a pointer argument",
                             kname, idx);
    }
    return TRD_OK;
}

/* Copies between the written buffers and their saved copies, on the launch's stream. */
static trd_status_t copy_written(struct bench *b, trd_buffer_t **saved, int restore)
{
    for (uint32_t w = 0; w < b->t->nwritten; w++) {
        void *ptr;
        uint64_t bytes;
        trd_status_t st = written_at(b, w, &ptr, &bytes);
        if (st != TRD_OK)
            return st;
        if (!bytes)
            continue;
        void *copy = saved[w]->ptr;
        st = trd_device_memcpy(b->dev, restore ? ptr : copy, restore ? copy : ptr, bytes, TRD_COPY_DEVICE_TO_DEVICE,
                               b->ws);
        if (st != TRD_OK)
            return trd_error_wrap(st, "%s written parameter %u (%llu bytes)", restore ? "restoring" : "saving",
                                  b->t->written[w], (unsigned long long)bytes);
    }
    return TRD_OK;
}

/* Every variant on the launch's buffers: times[v] (INFINITY where it cannot run), *choice the fastest. *measured
 * 0 when the written buffers could not be saved (then nothing ran, and *why says why). An error only when none
 * can run, or the written buffers could not be put back. */
static trd_status_t benchmark(struct bench *b, double *times, uint32_t *choice, int *measured)
{
    trd_tuner_t *t = b->t;
    const char *kname = t->variants[0]->src.name;
    trd_status_t st;
    trd_buffer_t *saved[TRD_MAX_LAUNCH_PARAMS] = {0};
    *measured = 0;
    if ((st = trd_event_create(b->dev, &b->ev[0])) != TRD_OK)
        return st;
    if ((st = trd_event_create(b->dev, &b->ev[1])) != TRD_OK)
        goto events;
    for (uint32_t w = 0; w < t->nwritten && st == TRD_OK; w++) {
        void *ptr;
        uint64_t bytes;
        if ((st = written_at(b, w, &ptr, &bytes)) == TRD_OK)
            st = trd_buffer_alloc(b->dev, bytes ? bytes : 1, &saved[w]);
    }
    if (st == TRD_OK)
        st = copy_written(b, saved, 0);
    if (st != TRD_OK)
        goto sync;
    *measured = 1;
    double best = INFINITY;
    char why[512] = "";
    trd_status_t why_st = TRD_OK;
    for (uint32_t v = 0; v < t->n; v++) {
        times[v] = INFINITY;
        if ((st = measure(b, v, best, &times[v])) != TRD_OK) {
            trd_log(TRD_LOG_INFO, "%s: kernel '%s' on %s: %s %u cannot run: %s", t->log_name, kname, b->dev->uri,
                    t->noun, v, trd_error_message());
            if (!why[0]) {
                snprintf(why, sizeof why, "%s %u: %s", t->noun, v, trd_error_message());
                why_st = st;
            }
            times[v] = INFINITY;
        }
        if (times[v] < best) {
            best = times[v];
            *choice = v;
        }
        if ((st = copy_written(b, saved, 1)) != TRD_OK)
            goto sync;
    }
    if (!isfinite(best))
        st = trd_error_set(why_st, "%s: kernel '%s': none of its %u %ss can run on %s (%s)", t->log_name, kname,
                           t->n, t->noun, b->dev->uri, why);
sync:;
    /* the copies back are queued: they must be done before their sources are freed */
    trd_status_t sst = b->ws ? trd_stream_synchronize(b->ws) : TRD_OK;
    if (st == TRD_OK)
        st = sst;
    for (uint32_t w = t->nwritten; w-- > 0;)
        trd_buffer_free(saved[w]);
events:
    for (int k = 1; k >= 0; k--)
        trd_event_destroy(b->ev[k]);
    return st;
}

/* ---------------------------------------------------------------- launch */

static trd_status_t launch_check(const trd_tuner_t *t, const trd_tuned_launch_t *tl, trd_device_t **dev)
{
    if (!t || !tl)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tuner_launch: NULL argument");
    if (tl->struct_size < offsetof(trd_tuned_launch_t, launch_fn)) /* the first version's size */
        return trd_struct_check(tl->struct_size, offsetof(trd_tuned_launch_t, launch_fn), "trd_tuned_launch_t");
    const trd_launch_t *l = tl->launch;
    if (!l)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': trd_tuned_launch_t.launch is NULL",
                             t->variants[0]->src.name);
    if (l->struct_size < sizeof(trd_launch_t))
        return trd_struct_check(l->struct_size, sizeof(trd_launch_t), "trd_launch_t");
    *dev = l->stream ? l->stream->dev : l->device;
    if (!*dev)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': the launch names neither a stream nor a device",
                             t->variants[0]->src.name);
    if ((*dev)->rt != t->rt)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s' and device %s belong to different runtimes",
                             t->variants[0]->src.name, (*dev)->uri);
    return TRD_OK;
}

/* The launch's stream as a trident stream: its own, or the native one wrapped (*wrapped, to destroy). */
static trd_status_t bench_stream(const trd_launch_t *l, trd_device_t *dev, trd_stream_t **ws, trd_stream_t **wrapped)
{
    *wrapped = NULL;
    *ws = l->stream;
    if (l->stream || !l->native_stream)
        return TRD_OK;
    trd_status_t st = trd_stream_wrap(dev, l->native_stream, wrapped);
    if (st == TRD_OK)
        *ws = *wrapped;
    return st;
}

TRD_API trd_status_t trd_tuner_benchmark(trd_tuner_t *t, const trd_tuned_launch_t *tl, double *times_ms,
                                         uint32_t num_times, uint32_t *best)
{
    trd_device_t *dev;
    trd_status_t st = launch_check(t, tl, &dev);
    if (st != TRD_OK)
        return st;
    if (!times_ms || num_times < t->n)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tuner_benchmark: times_ms needs room for %u variants, "
                                                       "not %u",
                             t->n, times_ms ? num_times : 0);
    struct bench b = {.t = t, .tl = tl, .dev = dev};
    trd_stream_t *wrapped;
    if ((st = bench_stream(tl->launch, dev, &b.ws, &wrapped)) != TRD_OK)
        return st;
    double times[TUNE_MAX_VARIANTS];
    uint32_t choice = 0;
    int measured;
    pthread_mutex_t *bl = &bench_locks[dev->index % TUNE_BENCH_LOCKS];
    pthread_mutex_lock(bl);
    st = benchmark(&b, times, &choice, &measured);
    pthread_mutex_unlock(bl);
    trd_stream_destroy(wrapped);
    if (st != TRD_OK)
        return st;
    memcpy(times_ms, times, t->n * sizeof *times);
    if (best)
        *best = choice;
    return TRD_OK;
}

/* The first launch of a key on a device: the choice from the process, the disk or a benchmark. */
static trd_status_t tune_first(trd_tuner_t *t, const trd_tuned_launch_t *tl, trd_device_t *dev, uint64_t h,
                               uint32_t *variant)
{
    const char *kname = t->variants[0]->src.name;
    uint8_t kd[32];
    char key_hex[65], name[TUNE_STEM_MAX + 200], dir[4096] = "", path[4096] = "";
    trd_sha256(tl->key, tl->key_size, kd);
    trd_hex(kd, 32, key_hex);
    int arch_at = snprintf(name, sizeof name, "%s-%s-", t->stem, key_hex);
    snprintf(name + arch_at, sizeof name - (size_t)arch_at, "%.100s", dev->arch && *dev->arch ? dev->arch : "unknown");
    for (char *p = name + arch_at; *p; p++)
        if (!name_char(*p))
            *p = '_'; /* "gfx942:sramecc+" has ':' */
    const char *root = t->cache_dir ? t->cache_dir : t->rt->cache_root;
    if (!t->memory_only && root) {
        snprintf(dir, sizeof dir, "%s/tune", root);
        if (snprintf(path, sizeof path, "%s/%s.json", dir, name) >= (int)sizeof path) {
            path[0] = '\0';
            if (!atomic_exchange(&t->path_warned, 1))
                trd_log(TRD_LOG_WARN, "%s: kernel '%s': the cache directory '%.200s...' makes a choice file's path "
                                      "longer than %zu bytes; choices are kept in this process's memory only",
                        t->log_name, kname, dir, sizeof path - 1);
        }
    }
    /* in memory by file, so that what a process keeps mirrors what the directory keeps */
    const char *mem = path[0] ? path : name;
    uint32_t choice = 0;
    int claim = -1; /* trd_tune_known_claim's answer: 0 while this thread holds the claim */
    const char *from = NULL;
    double times[TUNE_MAX_VARIANTS];
    trd_stream_t *wrapped = NULL;
    trd_status_t st = TRD_OK;
    char only[TUNE_WORD_MAX + 16];
    if (t->n == 1) {
        snprintf(only, sizeof only, "the only %s", t->noun);
        from = only;
    } else if ((claim = trd_tune_known_claim(mem, t->digest, &choice)) == 1) {
        from = "this process's memory";
    } else if (path[0] && trd_tune_file_load(dir, path,
                                             &(struct trd_tune_record){.kernel = kname, .log_name = t->log_name,
                                                                       .noun = t->noun, .key_sha256 = key_hex,
                                                                       .arch = dev->arch, .n = t->n,
                                                                       .digest = t->digest_hex},
                                             &choice)) {
        from = path;
        trd_tune_known_put(mem, t->digest, choice);
        claim = -1;
    } else {
        struct bench b = {.t = t, .tl = tl, .dev = dev};
        if ((st = bench_stream(tl->launch, dev, &b.ws, &wrapped)) != TRD_OK)
            goto out;
        int32_t cap = 0;
        if (b.ws && trd_stream_capturing(b.ws, &cap) != TRD_OK)
            cap = 0;
        if (cap) {
            if (!atomic_exchange(&t->capture_warned, 1))
                trd_log(TRD_LOG_WARN, "%s: kernel '%s' on %s: the stream is being captured into a graph before "
                                      "any launch chose a %s; the graph launches %s 0 unbenchmarked",
                        t->log_name, kname, dev->uri, t->noun, t->noun);
            if ((st = launch_variant(t, tl, 0)) == TRD_OK && variant)
                *variant = 0;
            goto out;
        }
        int measured;
        pthread_mutex_t *bl = &bench_locks[dev->index % TUNE_BENCH_LOCKS];
        pthread_mutex_lock(bl);
        st = benchmark(&b, times, &choice, &measured);
        pthread_mutex_unlock(bl);
        if (st != TRD_OK && !measured && st != TRD_ERR_INVALID_ARGUMENT) {
            /* the buffers are as they were: the launch can still run, only not benchmarked, and nothing kept (a
             * later launch tries again: memory may be free then); said once a tuner, not at every launch */
            if (!atomic_exchange(&t->copy_warned, 1))
                trd_log(TRD_LOG_WARN, "%s: kernel '%s' on %s: cannot copy aside the buffers its %ss write (%s); "
                                      "%s 0 runs, unbenchmarked, until a launch can",
                        t->log_name, kname, dev->uri, t->noun, trd_error_message(), t->noun);
            if ((st = launch_variant(t, tl, 0)) == TRD_OK && variant)
                *variant = 0;
            goto out;
        }
        if (st != TRD_OK)
            goto out;
        trd_tune_known_put(mem, t->digest, choice);
        claim = -1;
        if (path[0]) {
            const char *configs[TUNE_MAX_VARIANTS];
            for (uint32_t v = 0; v < t->n; v++)
                configs[v] = t->variants[v]->config ? t->variants[v]->config : "";
            struct trd_tune_record rec = {.kernel = kname, .log_name = t->log_name, .noun = t->noun,
                                          .key_sha256 = key_hex, .arch = dev->arch, .device = dev->uri,
                                          .digest = t->digest_hex, .n = t->n, .choice = choice, .times = times,
                                          .configs = configs};
            trd_tune_file_store(dir, path, &rec);
        }
        char list[1024] = "";
        for (uint32_t i = 0, n = 0; i < t->n && n + 16 < sizeof list; i++)
            n += (size_t)snprintf(list + n, sizeof list - n, isfinite(times[i]) ? "%s%.4g" : "%sfailed",
                                  i ? ", " : "", times[i]);
        trd_log(TRD_LOG_INFO, "%s: kernel '%s' on %s: %s %u of %u chosen by benchmark on the call's buffers (ms a "
                              "launch: %s)",
                t->log_name, kname, dev->uri, t->noun, choice, t->n, list);
    }
    if (from)
        trd_log(TRD_LOG_INFO, "%s: kernel '%s' on %s: %s %u of %u, from %s", t->log_name, kname, dev->uri, t->noun,
                choice, t->n, from);
    choice_publish(t, h, tl->key, tl->key_size, dev->index, choice);
    if ((st = launch_variant(t, tl, choice)) == TRD_OK && variant)
        *variant = choice;
out:
    if (claim == 0) /* claimed, then no choice kept (captured, an error): let a waiter choose */
        trd_tune_known_release(mem);
    trd_stream_destroy(wrapped);
    return st;
}

/* A tuning key as trd_tuner_launch and trd_tuner_choice take it. */
static trd_status_t key_check(const trd_tuner_t *t, const void *key, uint32_t key_size)
{
    if (!key || key_size == 0 || key_size > TRD_TUNE_KEY_MAX)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': a tuning key has 1 .. %d bytes, not %u%s",
                             t->variants[0]->src.name, TRD_TUNE_KEY_MAX, key_size, key ? "" : " (key is NULL)");
    return TRD_OK;
}

TRD_API trd_status_t trd_tuner_choice(const trd_tuner_t *t, const void *key, uint32_t key_size,
                                      const trd_device_t *dev, uint32_t *variant)
{
    if (!t || !dev || !variant)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_tuner_choice: NULL argument");
    trd_status_t st = key_check(t, key, key_size);
    if (st != TRD_OK)
        return st;
    const struct choice *c = choice_find(t, key_hash(key, key_size, dev->index), key, key_size, dev->index);
    if (!c)
        return trd_error_set(TRD_ERR_NOT_FOUND, "kernel '%s': no %s is chosen for this key on %s yet",
                             t->variants[0]->src.name, t->noun, dev->uri);
    *variant = c->variant;
    return TRD_OK;
}

/* The launch path: no lock and no allocation once the key is known on the device. */
TRD_API trd_status_t trd_tuner_launch(trd_tuner_t *t, const trd_tuned_launch_t *tl, uint32_t *variant)
{
    trd_device_t *dev;
    trd_status_t st = launch_check(t, tl, &dev);
    if (st != TRD_OK)
        return st;
    if ((st = key_check(t, tl->key, tl->key_size)) != TRD_OK)
        return st;
    uint64_t h = key_hash(tl->key, tl->key_size, dev->index);
    const struct choice *c = choice_find(t, h, tl->key, tl->key_size, dev->index);
    if (!c)
        return tune_first(t, tl, dev, h, variant);
    if ((st = launch_variant(t, tl, c->variant)) == TRD_OK && variant)
        *variant = c->variant;
    return st;
}
