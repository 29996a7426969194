/* SPDX-License-Identifier: Apache-2.0 */
/* cache.c: what outlives one call of the XLA handler: the kernel cache (calls of one kernel share one trd_kernel_t,
 * keyed by the call's bytes: bundle, options, platform) and the state type's registry (one type id per platform,
 * whose deleter frees a call's state). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "xla/ffi.h"

/* -------------------------------------------------------- kernel cache */


static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xla_cached_kernel *cache;

static void cache_release(struct xla_cached_kernel *ck)
{
    pthread_mutex_lock(&cache_lock);
    if (--ck->refs == 0) {
        struct xla_cached_kernel **p = &cache;
        while (*p && *p != ck)
            p = &(*p)->next;
        if (*p)
            *p = ck->next;
        trd_kernel_destroy(ck->kernel);
        free(ck);
    }
    pthread_mutex_unlock(&cache_lock);
}

/* Load-stage options for the platform's backend from the JSON attribute. */
static trd_status_t options_from_json(const char *text, size_t len, int platform, trd_options_t **out)
{
    *out = NULL;
    if (len == 0)
        return TRD_OK;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    if (!json_is_object(root)) {
        json_decref(root);
        return xla_fail(TRD_ERR_FORMAT, "attribute 'options' is not a JSON object: %s", jerr.text);
    }
    json_t *mine = json_object_get(root, xla_backend_of(platform));
    trd_status_t st = TRD_OK;
    if (json_is_object(mine) && json_object_size(mine) > 0) {
        if ((st = trd_options_create(xla_backend_of(platform), out)) == TRD_OK) {
            const char *key;
            json_t *v;
            json_object_foreach(mine, key, v) {
                char buf[64];
                const char *value = buf;
                if (json_is_string(v))
                    value = json_string_value(v);
                else if (json_is_boolean(v))
                    value = json_is_true(v) ? "true" : "false";
                else if (json_is_integer(v))
                    snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
                else if (json_is_null(v))
                    value = "none";
                else {
                    st = xla_fail(TRD_ERR_INVALID_ARGUMENT, "option %s: give a string, integer, bool or null", key);
                    break;
                }
                if ((st = trd_options_set(*out, key, value)) != TRD_OK)
                    break;
            }
            if (st != TRD_OK) {
                trd_options_destroy(*out);
                *out = NULL;
            }
        }
    }
    json_decref(root);
    return st;
}

trd_status_t xla_kernel_get(trd_runtime_t *rt, const char *bundle, size_t len, const char *opts, size_t olen,
                            int platform, struct xla_cached_kernel **out)
{
    /* key: sha256(sha256(bundle) || options || platform) */
    uint8_t parts[32 + 8];
    trd_sha256(bundle, len, parts);
    uint8_t oh[32];
    trd_sha256(opts, olen, oh);
    memcpy(parts + 32, oh, 7);
    parts[39] = (uint8_t)platform;
    uint8_t key[32];
    trd_sha256(parts, sizeof parts, key);
    pthread_mutex_lock(&cache_lock);
    for (struct xla_cached_kernel *c = cache; c; c = c->next)
        if (!memcmp(c->key, key, 32)) {
            c->refs++;
            pthread_mutex_unlock(&cache_lock);
            *out = c;
            return TRD_OK;
        }
    pthread_mutex_unlock(&cache_lock);
    trd_options_t *options;
    trd_status_t st = options_from_json(opts, olen, platform, &options);
    if (st != TRD_OK)
        return st;
    trd_kernel_t *k;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .source = TRD_SOURCE_BUNDLE, .data = bundle, .size = len,
                           .options = options};
    st = trd_kernel_create(rt, &d, &k);
    trd_options_destroy(options);
    if (st != TRD_OK)
        return st;
    struct xla_cached_kernel *c = calloc(1, sizeof *c);
    if (!c) {
        trd_kernel_destroy(k);
        return xla_fail(TRD_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(c->key, key, 32);
    c->kernel = k;
    c->refs = 1;
    pthread_mutex_lock(&cache_lock);
    /* another thread may have made it meanwhile: keep the first */
    for (struct xla_cached_kernel *o = cache; o; o = o->next)
        if (!memcmp(o->key, key, 32)) {
            o->refs++;
            pthread_mutex_unlock(&cache_lock);
            trd_kernel_destroy(k);
            free(c);
            *out = o;
            return TRD_OK;
        }
    c->next = cache;
    cache = c;
    pthread_mutex_unlock(&cache_lock);
    *out = c;
    return TRD_OK;
}

/* ---------------------------------------------------------- call state */

void xla_call_delete(void *p)
{
    struct xla_call *c = p;
    if (!c)
        return;
    for (uint32_t i = 0; c->slots && i < c->ndev; i++) {
        struct xla_slot *s = atomic_load(&c->slots[i]);
        if (!s)
            continue;
        free(atomic_load(&s->plan));
        for (uint32_t k = 0; k < c->ncand; k++)
            trd_prepared_destroy(s->prepared[k]);
        free(s->prepared);
        for (int k = 0; k < XLA_STREAM_CACHE; k++)
            trd_stream_destroy(atomic_load(&s->streams[k].wrapped));
        pthread_mutex_destroy(&s->tune_lock);
        free(s);
    }
    free(c->slots);
    xla_tune_free(c->tune);
    for (uint32_t i = 0; c->cands && i < c->ncand; i++)
        if (c->cands[i].ck)
            cache_release(c->cands[i].ck);
    free(c->cands);
    free(c->zero);
    free(c->tma);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* One type id per platform: each XLA FFI instance (jaxlib's CPU client, each GPU plugin) keeps its own type
 * registry and numbers types from its own counter, so an id one registry assigned may name another type in the
 * next (a state deleted by the wrong deleter). Each platform's registry assigns its own. */
XLA_FFI_TypeId xla_state_id[PLATFORM_COUNT];
static XLA_FFI_TypeInfo state_info = {XLA_FFI_TypeInfo_STRUCT_SIZE, NULL, xla_call_delete};

TRD_API void *trd_xla_cuda_type_id(void)
{
    return &xla_state_id[PLATFORM_CUDA];
}

TRD_API void *trd_xla_rocm_type_id(void)
{
    return &xla_state_id[PLATFORM_ROCM];
}

TRD_API void *trd_xla_cpu_type_id(void)
{
    return &xla_state_id[PLATFORM_CPU];
}

TRD_API void *trd_xla_type_info(void)
{
    return &state_info;
}

TRD_API int32_t trd_xla_available(void)
{
    return 1;
}
