/* SPDX-License-Identifier: Apache-2.0 */
/* autotune.c: an autotuned XLA call (attribute version 2) chooses among its candidates at its first execution on
 * a device, on the call's own buffers, through libtrident's tuner (trd_tuner_*, core/tune.c): one mechanism for
 * every caller. What is the call's own stays here: the tuner's variants are the candidates' kernels, its key the
 * call's autotune_key, its identity the candidates' grids, zeroed results, tensor-map records, bundles and
 * options (a kept choice holds for exactly these), its written parameters the aliased operands, and its cache
 * directory the call's cache_dir (choices in <cache_dir>/tune/, as the tuner keeps them: memory, then a private
 * file proving its key, arch and candidates, then a benchmark). Each launch of a candidate, the benchmark's and
 * the chosen one's, is the call's own (launch_cand): zeroing its zeroed results and encoding its own tensor maps
 * (their boxes are its compilation's) before it, as EXECUTE does (xla_run_launch).
 *
 * Once the tuner keeps a choice for the device, the slot launches that candidate on EXECUTE's fast path, exactly
 * as a call with one kernel; while it keeps none (XLA's stream being captured into a graph, the aliased operands
 * not copied aside) the execution ran candidate 0 and the next one asks the tuner again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "xla/ffi.h"

#define TUNE_KEY_MAX 128

struct xla_tune {
    char key[TUNE_KEY_MAX + 1];
    uint32_t key_size;
    trd_tuner_t *tuner;
    uint32_t naliased;
    int64_t *aliased;     /* operands the kernels write */
    uint32_t nwritten;
    uint32_t written[XLA_MAX_PARAMS]; /* the launch parameters that pass them (the tuner saves and restores) */
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

/* The tuner over the candidates' kernels. */
static trd_status_t tuner_create(struct xla_call *c, struct xla_tune *t, const char *dir, const uint8_t id[32])
{
    trd_kernel_t **kernels = malloc(c->ncand * sizeof *kernels);
    if (!kernels)
        return xla_fail(TRD_ERR_NO_MEMORY, "out of memory");
    for (uint32_t i = 0; i < c->ncand; i++)
        kernels[i] = c->cands[i].kernel;
    trd_tuner_desc_t d = {.struct_size = sizeof d, .variants = kernels, .num_variants = c->ncand,
                          .num_written = t->nwritten, .written = t->written, .cache_dir = dir, .identity = id,
                          .identity_size = 32, .log_name = "autotune", .variant_noun = "candidate"};
    trd_status_t st = trd_tuner_create(&d, &t->tuner);
    free(kernels);
    return st;
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
    char *d = strndup(dir, dlen); /* "": choices in memory only */
    uint8_t id[32];
    if (!t || !d || !candidates_digest(c, bundles, len, opts, olen, tma, ntma, id)) {
        free(d);
        free(t);
        free(aliased);
        return xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
    }
    memcpy(t->key, key, klen);
    t->key_size = (uint32_t)klen;
    t->aliased = aliased;
    t->naliased = (uint32_t)naliased;
    /* the launch parameter that passes each aliased operand (an operand no parameter passes, no kernel writes) */
    for (uint32_t i = 0; i < t->naliased; i++)
        for (uint32_t j = 0; j < c->nparams; j++)
            if (c->params[j].kind == TRD_XLA_ARG_OPERAND && c->params[j].index == aliased[i]) {
                t->written[t->nwritten++] = j;
                break;
            }
    trd_status_t st = tuner_create(c, t, d, id);
    free(d);
    if (st != TRD_OK) {
        XLA_FFI_Error *e = xla_error(api, xla_errc(st), "trident_kernel_call: %s", trd_error_message());
        xla_tune_free(t);
        return e;
    }
    c->tune = t;
    return NULL;
}

void xla_tune_free(struct xla_tune *t)
{
    if (!t)
        return;
    trd_tuner_destroy(t->tuner);
    free(t->aliased);
    free(t);
}

/* ---------------------------------------------------------------- choice */

/* One execution's frame, as a candidate's launch needs it. */
struct exec {
    XLA_FFI_CallFrame *f;
    const struct xla_call *c;
    struct xla_slot *s;
    void *stream;
};

/* The tuner's launch of candidate i: the call's own (zeroing, tensor maps), as EXECUTE launches it. */
static trd_status_t launch_cand(void *user, uint32_t i)
{
    const struct exec *x = user;
    struct xla_run r;
    trd_status_t st = xla_run_load(x->c, x->s, i, &r);
    if (st == TRD_OK && (st = xla_run_check(x->f, x->c, x->s, &r)) == TRD_OK)
        st = xla_run_launch(x->f, x->c, x->s, &r, x->stream);
    return st;
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
                               int *launched, int *kept)
{
    const struct xla_tune *t = c->tune;
    XLA_FFI_Error *e = NULL;
    trd_arg_t *args = NULL;
    uint64_t *bytes = NULL;
    pthread_mutex_lock(&s->tune_lock);
    if (s->run.prepared) /* another thread chose */
        goto out;
    if ((e = xla_check_buffers(f, c)) != NULL || (e = check_aliased(f, c)) != NULL)
        goto out;
    trd_stream_t *ws = stream ? xla_slot_stream(s, stream) : NULL;
    if (stream && !ws) {
        e = xla_error(f->api, XLA_FFI_Error_Code_INTERNAL, "kernel '%s': cannot use XLA's stream on %s: %s", c->name,
                      s->uri, trd_error_message());
        goto out;
    }
    /* the arguments the tuner reads: the aliased operands, which it saves before the benchmark and restores */
    args = calloc(c->nparams ? c->nparams : 1, sizeof *args);
    bytes = calloc(t->nwritten ? t->nwritten : 1, sizeof *bytes);
    if (!args || !bytes) {
        e = xla_error(f->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "trident: out of memory");
        goto out;
    }
    for (uint32_t w = 0; w < t->nwritten; w++) {
        const XLA_FFI_Buffer *b = f->args.args[c->params[t->written[w]].index];
        args[t->written[w]] = trd_arg_ptr(b->data);
        bytes[w] = xla_buffer_bytes(b);
    }
    struct exec x = {.f = f, .c = c, .s = s, .stream = stream};
    trd_launch_t l = {.struct_size = sizeof l, .num_args = c->nparams, .args = args, .stream = ws,
                      .device = ws ? NULL : s->dev};
    trd_tuned_launch_t tl = {.struct_size = sizeof tl, .key_size = t->key_size, .key = t->key, .launch = &l,
                             .written_bytes = bytes, .launch_fn = launch_cand, .user = &x};
    uint32_t chosen;
    trd_status_t st = trd_tuner_launch(t->tuner, &tl, NULL);
    if (st != TRD_OK) {
        e = xla_error(f->api, xla_errc(st), "%s", trd_error_message());
        goto out;
    }
    *launched = 1;
    /* a choice kept: the slot launches it from now on (prepared and checked by its launch just now) */
    struct xla_run r;
    if (trd_tuner_choice(t->tuner, t->key, t->key_size, s->dev, &chosen) == TRD_OK &&
        xla_run_load(c, s, chosen, &r) == TRD_OK) {
        s->run = r;
        atomic_store_explicit(&s->checked, 1, memory_order_release);
        *kept = 1;
    }
out:
    pthread_mutex_unlock(&s->tune_lock);
    free(bytes);
    free(args);
    return e;
}
