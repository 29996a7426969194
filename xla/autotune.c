/* SPDX-License-Identifier: Apache-2.0 */
/* autotune.c: an autotuned XLA call (attribute version 2) chooses among its
 * candidates at its first execution on a device, on the call's own buffers.
 *
 * The choice is kept per (autotune_key, device arch): in this process's
 * memory, and in <cache_dir>/autotune/<key>-<arch>.json (a private directory,
 * written through a temporary file and a rename) for later processes. A file
 * that does not parse, names another key or arch, or was made for other
 * candidates, is ignored (with a warning for the first two) and replaced after
 * the benchmark; so is a file or directory someone else could have written
 * (another user's, writable by group or others, a symbolic link).
 *
 * The benchmark runs on XLA's stream, in the first execution (XLA runs it
 * normally, before any command-buffer capture): the operands the kernels
 * write (aliased to a result) are copied aside first and copied back after
 * each candidate, so they come out of the call as one launch leaves them.
 * Each candidate zeroes its zeroed results and encodes its own tensor maps
 * (their boxes are its compilation's) before every launch, as EXECUTE does
 * (xla_run_launch), is launched once to warm up, timed once, then repeated
 * in batches between two driver events until its launches add up to
 * TUNE_TARGET_MS; its figure is its best batch's mean. A candidate that
 * cannot be loaded or launched here (no image for the device, too many
 * resources) is infinitely slow. Once chosen, the slot launches that
 * candidate on the fast path, exactly as a call with one kernel. While XLA's
 * stream is being captured into a graph nothing may wait for it: without a
 * choice the call launches candidate 0, warns once and keeps nothing. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/file.h"
#include "base/sha256.h"
#include "xla/ffi.h"

#define TUNE_TARGET_MS 10.0  /* a candidate's timed launches add up to about this */
#define TUNE_MAX_REPS 100
#define TUNE_BATCHES 5       /* the figure is the best batch: a busy moment spoils a batch, not the figure */
#define TUNE_HOPELESS 4.0    /* a first timed launch this much slower than the best figure is not repeated */
#define TUNE_KEY_MAX 128
#define TUNE_FILE_MAX (1u << 20)
#define TUNE_BENCH_LOCKS 8

struct xla_tune {
    char key[TUNE_KEY_MAX + 1];
    char *dir;            /* the cache directory; NULL: memory only */
    uint32_t naliased;
    int64_t *aliased;     /* operands the kernels write */
    uint8_t digest[32];   /* of the candidates: a kept choice holds for exactly these */
    char digest_hex[65];
};

/* ------------------------------------------------------------ attributes */

static int key_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '-' || ch == '.';
}

/* The candidates' identity: their bundles, load options, grids, zeroed results and tensor-map records (none:
 * nothing hashed for them). 0 when out of memory. */
static int candidates_digest(const struct xla_call *c, const char *bundles, size_t len, const char *opts,
                             size_t olen, const int64_t *tma, size_t ntma, uint8_t out[32])
{
    size_t nzero = 0;
    for (uint32_t i = 0; i < c->ncand; i++)
        nzero += c->cands[i].nzero;
    int64_t *buf = malloc(64 + ((size_t)c->ncand * 4 + nzero + ntma) * sizeof(int64_t));
    if (!buf)
        return 0;
    trd_sha256(bundles, len, (uint8_t *)buf);
    trd_sha256(opts, olen, (uint8_t *)buf + 32);
    size_t n = 64 / sizeof(int64_t);
    for (uint32_t i = 0; i < c->ncand; i++) {
        const struct xla_cand *cand = &c->cands[i];
        for (int d = 0; d < 3; d++)
            buf[n++] = cand->grid[d];
        buf[n++] = cand->nzero;
        for (uint32_t z = 0; z < cand->nzero; z++)
            buf[n++] = cand->zero[z];
    }
    for (size_t i = 0; i < ntma; i++)
        buf[n++] = tma[i];
    trd_sha256(buf, n * sizeof(int64_t), out);
    free(buf);
    return 1;
}

XLA_FFI_Error *xla_tune_create(const XLA_FFI_Api *api, struct xla_attrs *a, struct xla_call *c,
                               const char *bundles, size_t len, const int64_t *tma, size_t ntma)
{
    const char *key, *dir, *opts;
    size_t klen, dlen, olen, naliased;
    int64_t *aliased;
    if (!xla_attr_string(a, "autotune_key", &key, &klen) || !xla_attr_string(a, "cache_dir", &dir, &dlen) ||
        !xla_attr_string(a, "options", &opts, &olen))
        return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "trident_kernel_call: %s", a->err);
    int key_ok = klen > 0 && klen <= TUNE_KEY_MAX && key[0] != '.';
    for (size_t i = 0; i < klen && key_ok; i++)
        key_ok = key_char(key[i]);
    if (!key_ok)
        return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "trident_kernel_call: attribute 'autotune_key' names a file: give 1 to %d letters, digits, "
                         "'_', '-' or '.', not starting with '.'", TUNE_KEY_MAX);
    if (memchr(dir, '\0', dlen))
        return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "trident_kernel_call: attribute 'cache_dir' holds a NUL byte");
    if (!xla_attr_ints_new(a, "aliased", XLA_MAX_PARAMS, &aliased, &naliased))
        return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "trident_kernel_call: %s", a->err);
    for (size_t i = 0; i < naliased; i++) {
        const char *bad = aliased[i] < 0 ? "(negative)" : NULL;
        for (size_t j = 0; j < i && !bad; j++)
            if (aliased[j] == aliased[i])
                bad = "twice";
        if (bad) {
            XLA_FFI_Error *e = xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                                         "trident_kernel_call: attribute 'aliased' names operand %lld %s",
                                         (long long)aliased[i], bad);
            free(aliased);
            return e;
        }
    }
    struct xla_tune *t = calloc(1, sizeof *t);
    char *d = dlen ? strndup(dir, dlen) : NULL;
    if (!t || (dlen && !d) || !candidates_digest(c, bundles, len, opts, olen, tma, ntma, t->digest)) {
        free(d);
        free(t);
        free(aliased);
        return xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
    }
    memcpy(t->key, key, klen);
    t->dir = d;
    t->aliased = aliased;
    t->naliased = (uint32_t)naliased;
    trd_hex(t->digest, 32, t->digest_hex);
    c->tune = t;
    return NULL;
}

void xla_tune_free(struct xla_tune *t)
{
    if (!t)
        return;
    free(t->aliased);
    free(t->dir);
    free(t);
}

/* ------------------------------------------------------ choices in memory */

struct known {
    struct known *next;
    uint8_t digest[32];
    uint32_t choice;
    int valid;     /* choice holds a choice for digest */
    int pending;   /* a thread is choosing (known_claim) */
    char name[];   /* the choice's file, or <key>-<arch> without a cache directory */
};

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static struct known *known_list;

/* Devices of one arch that start the same call at once wait for the first one's benchmark rather than each
 * running their own (one choice per key and arch a process). A claim is an entry still pending; a waiter gives
 * up after KNOWN_WAIT_S and benchmarks alone, so a device whose stream waits on another's never deadlocks. */
#define KNOWN_WAIT_S 30
static pthread_cond_t known_cond = PTHREAD_COND_INITIALIZER;

static struct known *known_at(const char *name)
{
    struct known *k = known_list;
    while (k && strcmp(k->name, name))
        k = k->next;
    return k;
}

/* 1: the choice is known (*choice set); 0: this thread claimed the choice and must known_put or known_release
 * it; -1: no claim (another thread's benchmark is taking too long, or no memory): go on alone. */
static int known_claim(const char *name, const uint8_t digest[32], uint32_t *choice)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += KNOWN_WAIT_S;
    int r = -1;
    pthread_mutex_lock(&known_lock);
    for (;;) {
        struct known *k = known_at(name);
        if (k && !k->pending && k->valid && !memcmp(k->digest, digest, 32)) {
            *choice = k->choice;
            r = 1;
            break;
        }
        if (!k || !k->pending) { /* nobody is choosing: claim it */
            if (!k && (k = calloc(1, sizeof *k + strlen(name) + 1)) != NULL) {
                strcpy(k->name, name);
                k->next = known_list;
                known_list = k;
            }
            if (k) {
                memcpy(k->digest, digest, 32);
                k->pending = 1;
                r = 0;
            }
            break;
        }
        if (pthread_cond_timedwait(&known_cond, &known_lock, &deadline) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&known_lock);
    return r;
}

/* A claim given up without a choice: the waiters claim it in turn. */
static void known_release(const char *name)
{
    pthread_mutex_lock(&known_lock);
    struct known *k = known_at(name);
    if (k && k->pending) {
        k->pending = 0;
        k->valid = 0;
    }
    pthread_cond_broadcast(&known_cond);
    pthread_mutex_unlock(&known_lock);
}

static void known_put(const char *name, const uint8_t digest[32], uint32_t choice)
{
    pthread_mutex_lock(&known_lock);
    struct known *k = known_at(name);
    if (!k && (k = calloc(1, sizeof *k + strlen(name) + 1)) != NULL) {
        strcpy(k->name, name);
        k->next = known_list;
        known_list = k;
    }
    if (k) { /* kept for the process's life, as the kernels are */
        memcpy(k->digest, digest, 32);
        k->choice = choice;
        k->pending = 0;
        k->valid = 1;
    }
    pthread_cond_broadcast(&known_cond);
    pthread_mutex_unlock(&known_lock);
}

/* ------------------------------------------------------- choices on disk */

/* <key>-<arch>, the arch with what a file name should not hold replaced ("gfx942:sramecc+" has ':'). */
static void choice_name(const struct xla_tune *t, const struct xla_slot *s, char *out, size_t cap)
{
    snprintf(out, cap, "%s-%s", t->key, s->arch ? s->arch : "unknown");
    for (char *p = out + strlen(t->key) + 1; *p; p++)
        if (!key_char(*p) && *p != '+')
            *p = '_';
}

/* 1 with the choice a file keeps for these candidates; 0 when there is none to use (said why). A file proves what it
 * holds: its key and arch must be the call's (not only its name), its digest the candidates'; and only a file this
 * user alone may have written, in such a directory, is read. */
static int file_load(const struct xla_call *c, const struct xla_slot *s, const char *dir, const char *path,
                     uint32_t *choice)
{
    char *text, msg[1024];
    size_t size;
    trd_status_t st = trd_file_dir_private(dir, msg, sizeof msg);
    if (st == TRD_OK)
        st = trd_file_load_private(path, TUNE_FILE_MAX, &text, &size, msg, sizeof msg);
    if (st == TRD_ERR_NOT_FOUND)
        return 0;
    if (st != TRD_OK) {
        xla_log(TRD_LOG_WARN, "autotune: kernel '%s': ignoring the kept choice: %s", c->name, msg);
        return 0;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, size, 0, &jerr);
    free(text);
    json_t *n = json_object_get(root, "candidates"), *d = json_object_get(root, "digest");
    json_t *ch = json_object_get(root, "choice");
    const char *key = json_string_value(json_object_get(root, "key"));
    const char *arch = json_string_value(json_object_get(root, "arch"));
    int ok = 0;
    if (!json_is_object(root) || !json_is_integer(n) || !json_is_string(d) || !json_is_integer(ch) || !key ||
        !arch || json_integer_value(ch) < 0 || json_integer_value(ch) >= json_integer_value(n))
        xla_log(TRD_LOG_WARN, "autotune: kernel '%s': ignoring %s, which is not a choice trident wrote (%s); "
                              "benchmarking again",
                c->name, path, root ? "fields missing or out of range" : jerr.text);
    else if (strcmp(key, c->tune->key) || strcmp(arch, s->arch ? s->arch : ""))
        xla_log(TRD_LOG_WARN, "autotune: kernel '%s': ignoring %s, which holds the choice of key '%s' on arch '%s', "
                              "not its name's; benchmarking again",
                c->name, path, key, arch);
    else if (json_integer_value(n) != c->ncand || strcmp(json_string_value(d), c->tune->digest_hex))
        xla_log(TRD_LOG_INFO, "autotune: kernel '%s': %s was chosen among other candidates; benchmarking again",
                c->name, path);
    else {
        *choice = (uint32_t)json_integer_value(ch);
        ok = 1;
    }
    json_decref(root);
    return ok;
}

/* dir: "" when the cache directory's name is too long. */
static void file_store(const struct xla_call *c, const struct xla_slot *s, const char *dir, const char *name,
                       const char *path, uint32_t choice, const double *times)
{
    json_t *root = json_object(), *tj = json_array();
    for (uint32_t i = 0; i < c->ncand && tj; i++)
        json_array_append_new(tj, isfinite(times[i]) ? json_real(times[i]) : json_null());
    char *text = NULL;
    if (root && tj) {
        json_object_set_new(root, "kernel", json_string(c->name));
        json_object_set_new(root, "key", json_string(c->tune->key));
        json_object_set_new(root, "arch", json_string(s->arch ? s->arch : ""));
        json_object_set_new(root, "device", json_string(s->uri));
        json_object_set_new(root, "device_name", json_string(s->name ? s->name : ""));
        json_object_set_new(root, "digest", json_string(c->tune->digest_hex));
        json_object_set_new(root, "candidates", json_integer(c->ncand));
        json_object_set_new(root, "choice", json_integer(choice));
        json_object_set_new(root, "times_ms", tj);
        tj = NULL;
        text = json_dumps(root, JSON_INDENT(1) | JSON_SORT_KEYS);
    }
    json_decref(tj);
    json_decref(root);
    char msg[1024] = "out of memory";
    trd_status_t st = text ? TRD_OK : TRD_ERR_NO_MEMORY;
    if (st == TRD_OK && !dir[0]) {
        snprintf(msg, sizeof msg, "the directory's name is too long");
        st = TRD_ERR_IO;
    }
    if (st == TRD_OK && (st = trd_file_mkdirs(dir, 0700, msg, sizeof msg)) == TRD_OK &&
        (st = trd_file_dir_private(dir, msg, sizeof msg)) == TRD_OK)
        st = trd_file_store(path, text, strlen(text), 0600, msg, sizeof msg);
    if (st != TRD_OK)
        xla_log(TRD_LOG_WARN, "autotune: kernel '%s': cannot keep the choice for %s in %s (%s); it is kept in "
                              "this process's memory only",
                c->name, name, path, msg);
    free(text);
}

/* ------------------------------------------------------------- benchmark */

/* One benchmark at a time on a device: two would disturb each other's figures. A lock per device, not one for
 * all: a device's stream may wait on another device's (a collective), whose first execution may be here too. */
static pthread_mutex_t bench_locks[TUNE_BENCH_LOCKS] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};

struct bench {
    XLA_FFI_CallFrame *f;
    struct xla_call *c;
    struct xla_slot *s;
    void *stream;         /* XLA's (NULL on the CPU, where launches run synchronously) */
    trd_stream_t *ws;     /* libtrident's stream over it, for events and copies (NULL: the default stream) */
    trd_event_t *ev[2];
};

/* ms between the events around `reps` launches, per launch. */
static trd_status_t timed(struct bench *b, const struct xla_run *r, uint32_t reps, double *ms)
{
    trd_status_t st = trd_event_record(b->ev[0], b->ws);
    for (uint32_t i = 0; i < reps && st == TRD_OK; i++)
        st = xla_run_launch(b->f, b->c, b->s, r, b->stream);
    double v = 0;
    if (st == TRD_OK && (st = trd_event_record(b->ev[1], b->ws)) == TRD_OK &&
        (st = trd_event_synchronize(b->ev[1])) == TRD_OK && (st = trd_event_elapsed(b->ev[0], b->ev[1], &v)) == TRD_OK)
        *ms = v / reps;
    return st;
}

/* A candidate's figure: ms a launch, zeroing included. */
static trd_status_t measure(struct bench *b, const struct xla_run *r, double best, double *ms)
{
    double est;
    /* the warm-up also waits for the work XLA queued before the call */
    trd_status_t st = timed(b, r, 1, &est);
    if (st == TRD_OK)
        st = timed(b, r, 1, &est);
    if (st != TRD_OK)
        return st;
    est = XLA_MAX(est, 1e-4);
    if (est > TUNE_HOPELESS * best) {
        *ms = est;
        return TRD_OK;
    }
    uint32_t reps = (uint32_t)XLA_MIN(XLA_MAX(TUNE_TARGET_MS / est, 1.0), (double)TUNE_MAX_REPS);
    uint32_t batches = XLA_MIN(reps, TUNE_BATCHES), per = reps / batches;
    double fig = INFINITY;
    for (uint32_t i = 0; i < batches && st == TRD_OK; i++) {
        double v;
        if ((st = timed(b, r, per, &v)) == TRD_OK)
            fig = XLA_MIN(fig, v);
    }
    if (st == TRD_OK)
        *ms = fig;
    return st;
}

/* Copies between the aliased operands and their saved copies, on XLA's stream. */
static trd_status_t copy_aliased(struct bench *b, trd_buffer_t **saved, int restore)
{
    const struct xla_tune *t = b->c->tune;
    for (uint32_t i = 0; i < t->naliased; i++) {
        const XLA_FFI_Buffer *buf = b->f->args.args[t->aliased[i]];
        uint64_t bytes = xla_buffer_bytes(buf);
        if (!bytes)
            continue;
        void *copy;
        trd_status_t st = trd_buffer_address(saved[i], &copy);
        if (st == TRD_OK)
            st = trd_device_memcpy(b->s->dev, restore ? buf->data : copy, restore ? copy : buf->data, bytes,
                                   TRD_COPY_DEVICE_TO_DEVICE, b->ws);
        if (st != TRD_OK)
            return xla_wrap(st, "%s aliased operand %lld (%llu bytes)", restore ? "restoring" : "saving",
                                  (long long)t->aliased[i], (unsigned long long)bytes);
    }
    return TRD_OK;
}

static void times_text(const double *times, uint32_t n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < n && len + 16 < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, isfinite(times[i]) ? "%s%.4g" : "%sfailed",
                                i ? ", " : "", times[i]);
}

/* Every candidate on the call's buffers; *choice the fastest, *measured 0 when the operands the candidates write
 * could not be copied aside (then nothing ran). An error only when none can run, or those operands could not be
 * put back. */
static XLA_FFI_Error *benchmark(struct bench *b, double *times, uint32_t *choice, int *measured)
{
    const XLA_FFI_Api *api = b->f->api;
    struct xla_call *c = b->c;
    struct xla_slot *s = b->s;
    const struct xla_tune *t = c->tune;
    XLA_FFI_Error *e = NULL;
    trd_status_t st = TRD_OK;
    trd_buffer_t **saved = calloc(t->naliased ? t->naliased : 1, sizeof *saved);
    if (!saved)
        return xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
    if ((st = trd_event_create(s->dev, &b->ev[0])) != TRD_OK || (st = trd_event_create(s->dev, &b->ev[1])) != TRD_OK) {
        e = xla_error(api, xla_errc(st), "autotune: kernel '%s' on %s: %s", c->name, s->uri,
                      trd_error_message());
        goto events;
    }
    for (uint32_t i = 0; i < t->naliased && st == TRD_OK; i++) {
        uint64_t bytes = xla_buffer_bytes(b->f->args.args[t->aliased[i]]);
        if (bytes)
            st = trd_buffer_alloc(s->dev, bytes, &saved[i]);
    }
    if (st == TRD_OK)
        st = copy_aliased(b, saved, 0);
    if (st != TRD_OK) { /* the operands are as they were: the call can still run, only not benchmarked */
        xla_log(TRD_LOG_WARN, "autotune: kernel '%s' on %s: cannot copy aside the operands its candidates write "
                              "(%s); candidate 0 runs, unbenchmarked",
                c->name, s->uri, trd_error_message());
        *choice = 0;
        goto sync;
    }
    *measured = 1;
    double best = INFINITY;
    char why[512] = "";
    trd_status_t why_st = TRD_OK;
    for (uint32_t i = 0; i < c->ncand; i++) {
        struct xla_run r;
        times[i] = INFINITY;
        if ((st = xla_run_load(c, s, i, &r)) == TRD_OK && (st = xla_run_check(b->f, c, s, &r)) == TRD_OK)
            st = measure(b, &r, best, &times[i]);
        if (st != TRD_OK) {
            xla_log(TRD_LOG_INFO, "autotune: kernel '%s' on %s: candidate %u cannot run: %s", c->name, s->uri,
                    i, trd_error_message());
            if (!why[0]) {
                snprintf(why, sizeof why, "candidate %u: %s", i, trd_error_message());
                why_st = st;
            }
            times[i] = INFINITY;
        }
        if (times[i] < best) {
            best = times[i];
            *choice = i;
        }
        if ((st = copy_aliased(b, saved, 1)) != TRD_OK) {
            e = xla_error(api, xla_errc(st), "autotune: kernel '%s' on %s: %s", c->name, s->uri,
                          trd_error_message());
            goto sync;
        }
    }
    if (!isfinite(best))
        e = xla_error(api, xla_errc(why_st), "autotune: kernel '%s': none of its %u candidates can run on %s (%s)",
                      c->name, c->ncand, s->uri, why);
sync:
    /* the copies back are queued: they must be done before their sources are freed */
    if (b->ws && trd_stream_synchronize(b->ws) != TRD_OK && !e)
        e = xla_error(api, XLA_FFI_Error_Code_INTERNAL, "autotune: kernel '%s' on %s: %s", c->name, s->uri,
                      trd_error_message());
    for (uint32_t i = t->naliased; i-- > 0;)
        trd_buffer_free(saved[i]);
events:
    for (int k = 1; k >= 0; k--)
        trd_event_destroy(b->ev[k]);
    free(saved);
    return e;
}

/* ---------------------------------------------------------------- choice */

static int captured(struct xla_slot *s, void *stream)
{
    if (!stream)
        return 0;
    trd_stream_t *ws = xla_slot_stream(s, stream);
    int32_t cap = 0;
    if (!ws || trd_stream_capturing(ws, &cap) != TRD_OK) {
        xla_log(TRD_LOG_DEBUG, "autotune: cannot tell whether XLA's stream on %s is captured: %s", s->uri,
                trd_error_message());
        return 0;
    }
    return cap != 0;
}

/* Candidate 0, unchosen: XLA's stream is being captured, so nothing may wait for it. */
static XLA_FFI_Error *launch_first(XLA_FFI_CallFrame *f, struct xla_call *c, struct xla_slot *s, void *stream)
{
    if (!atomic_exchange(&s->capture_warned, 1))
        xla_log(TRD_LOG_WARN, "autotune: kernel '%s' on %s: XLA's stream is being captured into a graph before "
                              "any execution chose a candidate; the graph launches candidate 0 unbenchmarked",
                c->name, s->uri);
    struct xla_run r;
    trd_status_t st = xla_run_load(c, s, 0, &r);
    if (st == TRD_OK && (st = xla_run_check(f, c, s, &r)) == TRD_OK)
        st = xla_run_launch(f, c, s, &r, stream);
    return st == TRD_OK ? NULL : xla_error(f->api, xla_errc(st), "%s", trd_error_message());
}

static XLA_FFI_Error *check_aliased(XLA_FFI_CallFrame *f, const struct xla_call *c)
{
    for (uint32_t i = 0; i < c->tune->naliased; i++)
        if (c->tune->aliased[i] >= f->args.size)
            return xla_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                             "kernel '%s': aliased operand %lld does not exist (the call has %lld)", c->name,
                             (long long)c->tune->aliased[i], (long long)f->args.size);
    return NULL;
}

XLA_FFI_Error *xla_tune_choose(XLA_FFI_CallFrame *f, struct xla_call *c, struct xla_slot *s, void *stream,
                               int *launched)
{
    struct xla_tune *t = c->tune;
    XLA_FFI_Error *e = NULL;
    double *times = NULL;
    int claim = -1;            /* known_claim's answer: 0 while this thread holds the claim */
    const char *mem = NULL;
    pthread_mutex_lock(&s->tune_lock);
    if (s->run.prepared) /* another thread chose */
        goto out;
    if ((e = xla_check_buffers(f, c)) != NULL || (e = check_aliased(f, c)) != NULL)
        goto out;
    char name[TUNE_KEY_MAX + 80], dir[4096] = "", path[4096 + sizeof name + 8] = "";
    choice_name(t, s, name, sizeof name);
    if (t->dir && snprintf(dir, sizeof dir, "%s/autotune", t->dir) >= (int)sizeof dir)
        dir[0] = '\0'; /* too long: nothing is read, file_store says why nothing is kept */
    if (t->dir)
        snprintf(path, sizeof path, "%s/%s.json", dir, name);
    /* in memory by file, so that what a process keeps mirrors what the directory keeps */
    mem = t->dir ? path : name;
    uint32_t choice = 0;
    const char *from = NULL;
    if (c->ncand == 1)
        from = "the only candidate";
    else if ((claim = known_claim(mem, t->digest, &choice)) == 1)
        from = "this process's memory";
    else if (t->dir && file_load(c, s, dir, path, &choice)) {
        from = path;
        known_put(mem, t->digest, choice);
        claim = -1;
    } else if (captured(s, stream)) {
        if ((e = launch_first(f, c, s, stream)) == NULL)
            *launched = 1;
        goto out;
    } else if (!(times = malloc(c->ncand * sizeof *times))) {
        e = xla_error(f->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
        goto out;
    } else {
        struct bench b = {.f = f, .c = c, .s = s, .stream = stream, .ws = stream ? xla_slot_stream(s, stream) : NULL};
        if (stream && !b.ws) {
            e = xla_error(f->api, XLA_FFI_Error_Code_INTERNAL, "kernel '%s': cannot use XLA's stream on %s: %s",
                          c->name, s->uri, trd_error_message());
            goto out;
        }
        pthread_mutex_t *bl = &bench_locks[s->index % TUNE_BENCH_LOCKS];
        int measured = 0;
        pthread_mutex_lock(bl);
        e = benchmark(&b, times, &choice, &measured);
        pthread_mutex_unlock(bl);
        if (e)
            goto out;
        if (!measured) {
            from = "no benchmark";
        } else {
            known_put(mem, t->digest, choice);
            claim = -1;
            if (t->dir)
                file_store(c, s, dir, name, path, choice, times);
        }
    }
    struct xla_run r;
    trd_status_t st = xla_run_load(c, s, choice, &r);
    if (st == TRD_OK)
        st = xla_run_check(f, c, s, &r);
    if (st != TRD_OK) {
        e = xla_error(f->api, xla_errc(st), "autotune: kernel '%s' candidate %u: %s", c->name, choice,
                      trd_error_message());
        goto out;
    }
    s->run = r;
    atomic_store_explicit(&s->checked, 1, memory_order_release);
    if (from) {
        xla_log(TRD_LOG_INFO, "autotune: kernel '%s' on %s: candidate %u of %u, from %s", c->name, s->uri,
                choice, c->ncand, from);
    } else {
        char list[1024];
        times_text(times, c->ncand, list, sizeof list);
        xla_log(TRD_LOG_INFO, "autotune: kernel '%s' on %s: candidate %u of %u chosen by benchmark on the call's "
                              "buffers (ms a launch: %s)",
                c->name, s->uri, choice, c->ncand, list);
    }
out:
    if (claim == 0) /* claimed, then no choice kept (captured, an error, nothing measured): let a waiter choose */
        known_release(mem);
    pthread_mutex_unlock(&s->tune_lock);
    free(times);
    return e;
}
