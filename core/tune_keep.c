/* SPDX-License-Identifier: Apache-2.0 */
/* tune_keep.c: where a tuner's choices are kept beyond the tuner (core/tune.c): in this process's memory, by the
 * choice's name and the variants' digest, where threads and devices of one arch that start one key at once wait
 * for the first one's benchmark; and in a file of the runtime's cache directory for later processes, which is
 * only believed when it is one trident wrote for exactly these variants, this key and this arch, and only this
 * user may have written it (base/file.h's private files, as every cache of trident). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/file.h"
#include "core/internal.h"

#define TUNE_FILE_MAX (1u << 20)
#define TUNE_FILE_VERSION 1

/* ---------------------------------------------------- choices in the process */

struct known {
    struct known *next;
    uint8_t digest[32];
    uint32_t choice;
    int valid;     /* choice holds a choice for digest */
    int pending;   /* a thread is choosing (known_claim) */
    char name[];   /* the choice's file, or its name without a cache directory */
};

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t known_cond;  /* waits on CLOCK_MONOTONIC: a wall clock set back would stretch a wait */
static pthread_once_t known_once = PTHREAD_ONCE_INIT;
static struct known *known_list;

static void known_init(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&known_cond, &a);
    pthread_condattr_destroy(&a);
}

/* Threads (devices of one arch, tuners over the same variants) that start the same key at once wait for the
 * first one's benchmark rather than each running their own. A claim is an entry still pending; a waiter gives
 * up after KNOWN_WAIT_S and benchmarks alone, so that a device whose stream waits on another's never deadlocks. */
#define KNOWN_WAIT_S 30

static struct known *known_at(const char *name)
{
    struct known *k = known_list;
    while (k && strcmp(k->name, name))
        k = k->next;
    return k;
}

static struct known *known_add(const char *name)
{
    struct known *k = calloc(1, sizeof *k + strlen(name) + 1);
    if (k) { /* kept for the process's life, as interned names are */
        strcpy(k->name, name);
        k->next = known_list;
        known_list = k;
    }
    return k;
}

/* 1: the choice is known (*choice set); 0: this thread claimed the choice and must put or release
 * it; -1: no claim (another thread's benchmark is taking too long, or no memory): go on alone. */
int trd_tune_known_claim(const char *name, const uint8_t digest[32], uint32_t *choice)
{
    pthread_once(&known_once, known_init);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
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
            if (!k)
                k = known_add(name);
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
void trd_tune_known_release(const char *name)
{
    pthread_once(&known_once, known_init);
    pthread_mutex_lock(&known_lock);
    struct known *k = known_at(name);
    if (k && k->pending) {
        k->pending = 0;
        k->valid = 0;
    }
    pthread_cond_broadcast(&known_cond);
    pthread_mutex_unlock(&known_lock);
}

void trd_tune_known_put(const char *name, const uint8_t digest[32], uint32_t choice)
{
    pthread_once(&known_once, known_init);
    pthread_mutex_lock(&known_lock);
    struct known *k = known_at(name);
    if (!k)
        k = known_add(name);
    if (k) {
        memcpy(k->digest, digest, 32);
        k->choice = choice;
        k->pending = 0;
        k->valid = 1;
    }
    pthread_cond_broadcast(&known_cond);
    pthread_mutex_unlock(&known_lock);
}

/* ------------------------------------------------------- choices on disk */

int trd_tune_file_load(const char *dir, const char *path, const struct trd_tune_record *want, uint32_t *choice)
{
    const char *kname = want->kernel, *ln = want->log_name;
    char *text, msg[1024];
    size_t size;
    trd_status_t st = trd_file_dir_private(dir, msg, sizeof msg);
    if (st == TRD_OK)
        st = trd_file_load_private(path, TUNE_FILE_MAX, &text, &size, msg, sizeof msg);
    if (st == TRD_ERR_NOT_FOUND)
        return 0;
    if (st != TRD_OK) {
        trd_log(TRD_LOG_WARN, "%s: kernel '%s': ignoring the kept choice: %s; benchmarking again", ln, kname, msg);
        return 0;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, size, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    json_t *f = json_object_get(root, "format"), *ver = json_object_get(root, "version");
    json_t *jn = json_object_get(root, "variants"), *d = json_object_get(root, "digest");
    json_t *ch = json_object_get(root, "choice");
    const char *key = json_string_value(json_object_get(root, "key_sha256"));
    const char *arch = json_string_value(json_object_get(root, "arch"));
    int ok = 0;
    if (!json_is_object(root) || !json_is_string(f) || strcmp(json_string_value(f), "trident-tune") ||
        !json_is_integer(ver) || json_integer_value(ver) != TUNE_FILE_VERSION || !json_is_integer(jn) ||
        !json_is_string(d) || !json_is_integer(ch) || !key || !arch || json_integer_value(ch) < 0 ||
        json_integer_value(ch) >= json_integer_value(jn))
        trd_log(TRD_LOG_WARN, "%s: kernel '%s': ignoring %s, which is not a choice trident wrote (%s); "
                              "benchmarking again and replacing it",
                ln, kname, path, root ? "fields missing or out of range" : jerr.text);
    else if (strcmp(key, want->key_sha256) || strcmp(arch, want->arch ? want->arch : ""))
        /* a file proves what it holds, not only its name (a copied or renamed file is another key's choice) */
        trd_log(TRD_LOG_WARN, "%s: kernel '%s': ignoring %s, which holds the choice of key %s on arch '%s', not "
                              "its name's; benchmarking again",
                ln, kname, path, key, arch);
    else if (json_integer_value(jn) != want->n || strcmp(json_string_value(d), want->digest))
        trd_log(TRD_LOG_INFO, "%s: kernel '%s': %s was chosen among other %ss; benchmarking again", ln, kname, path,
                want->noun);
    else {
        *choice = (uint32_t)json_integer_value(ch);
        ok = 1;
    }
    json_decref(root);
    return ok;
}

void trd_tune_file_store(const char *dir, const char *path, const struct trd_tune_record *r)
{
    json_t *root = json_object(), *tj = json_array(), *cj = json_array();
    for (uint32_t i = 0; i < r->n && tj && cj; i++) {
        json_array_append_new(tj, isfinite(r->times[i]) ? json_real(r->times[i]) : json_null());
        json_array_append_new(cj, json_string(r->configs[i]));
    }
    char *text = NULL;
    if (root && tj && cj) {
        json_object_set_new(root, "format", json_string("trident-tune"));
        json_object_set_new(root, "version", json_integer(TUNE_FILE_VERSION));
        json_object_set_new(root, "kernel", json_string(r->kernel));
        json_object_set_new(root, "key_sha256", json_string(r->key_sha256));
        json_object_set_new(root, "arch", json_string(r->arch ? r->arch : ""));
        json_object_set_new(root, "device", json_string(r->device));
        json_object_set_new(root, "digest", json_string(r->digest));
        json_object_set_new(root, "variants", json_integer(r->n));
        json_object_set_new(root, "choice", json_integer(r->choice));
        json_object_set_new(root, "times_ms", tj);
        json_object_set_new(root, "configs", cj);
        tj = cj = NULL;
        text = json_dumps(root, JSON_INDENT(1) | JSON_SORT_KEYS);
    }
    json_decref(tj);
    json_decref(cj);
    json_decref(root);
    char msg[1024] = "out of memory";
    trd_status_t st = text ? TRD_OK : TRD_ERR_NO_MEMORY;
    if (st == TRD_OK && (st = trd_file_mkdirs(dir, 0700, msg, sizeof msg)) == TRD_OK &&
        (st = trd_file_dir_private(dir, msg, sizeof msg)) == TRD_OK)
        st = trd_file_store(path, text, strlen(text), 0600, msg, sizeof msg);
    if (st != TRD_OK)
        trd_log(TRD_LOG_WARN, "%s: kernel '%s': cannot keep the choice in %s (%s); it is kept in this process's "
                              "memory only",
                r->log_name, r->kernel, path, msg);
    free(text);
}
