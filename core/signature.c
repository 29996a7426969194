/* SPDX-License-Identifier: Apache-2.0 */
/* signature.c: kernel argument signatures: what a parameter is, and the
 * parser of Triton's notation ("x:*fp32,n:i32"); ttir.c reads the same from
 * Triton IR. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define TRD_MAX_PARAMS 1024 /* entries, constexpr included; launches pass at most 512 */
#define TRD_MAX_SIG_TEXT 65536

void trd_signature_free(struct trd_signature *sig)
{
    if (!sig)
        return;
    for (uint32_t i = 0; i < sig->count; i++)
        free(sig->params[i].name);
    free(sig->params);
    free(sig->canonical);
    memset(sig, 0, sizeof *sig);
}

void trd_param_type(const struct trd_param *p, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    if (p->type != TRD_T_PTR) {
        snprintf(buf, cap, "%s", trd_scalar_name(p->type));
        return;
    }
    uint32_t depth = p->depth ? p->depth : 1;
    size_t n = 0;
    for (uint32_t i = 0; i < depth && n + 1 < cap; i++)
        buf[n++] = '*';
    snprintf(buf + n, cap - n, "%s", trd_scalar_name(p->depth ? p->base : p->elem));
}

/* Fills in num_params and the canonical text (its only spelling: no "*k", no aliases). */
trd_status_t trd_signature_finish(struct trd_signature *sig, const char *what)
{
    struct trd_str s;
    trd_str_init(&s);
    sig->num_params = 0;
    char type[TRD_PARAM_TYPE_MAX];
    for (uint32_t i = 0; i < sig->count; i++) {
        struct trd_param *p = &sig->params[i];
        if (i)
            trd_str_append(&s, ",");
        if (p->name)
            trd_str_appendf(&s, "%s:", p->name);
        trd_param_type(p, type, sizeof type);
        trd_str_append(&s, type);
        if (p->type != TRD_T_CONSTEXPR)
            sig->num_params++;
    }
    size_t len = s.len;
    sig->canonical = trd_str_take(&s);
    if (!sig->canonical)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory for the %s", what);
    /* what trd_signature_parse takes, so that the canonical text always reads back (aliases such as f16 and the
     * Triton IR's names can make it longer than its source) */
    if (len > TRD_MAX_SIG_TEXT)
        return trd_error_set(TRD_ERR_LIMIT, "%s: the signature's canonical text is %zu characters long, more than %d",
                             what, len, TRD_MAX_SIG_TEXT);
    return TRD_OK;
}

trd_status_t trd_signature_copy(const struct trd_signature *src, struct trd_signature *dst)
{
    struct trd_signature out;
    memset(&out, 0, sizeof out);
    if (src->count) {
        out.params = calloc(src->count, sizeof *out.params);
        if (!out.params)
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    out.count = src->count;
    for (uint32_t i = 0; i < src->count; i++) {
        out.params[i] = src->params[i];
        out.params[i].name = NULL;
        if (src->params[i].name && !(out.params[i].name = trd_strdup(src->params[i].name))) {
            trd_signature_free(&out);
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        }
    }
    out.num_params = src->num_params;
    out.canonical = trd_strdup(src->canonical ? src->canonical : "");
    if (!out.canonical) {
        trd_signature_free(&out);
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    *dst = out;
    return TRD_OK;
}

/* The IR's integers are signless: a signature may read either signedness into one. */
static int same_scalar(int32_t a, int32_t b)
{
    static const int32_t pairs[][2] = {{TRD_T_I1, TRD_T_U1},   {TRD_T_I8, TRD_T_U8}, {TRD_T_I16, TRD_T_U16},
                                       {TRD_T_I32, TRD_T_U32}, {TRD_T_I64, TRD_T_U64}};
    if (a == b)
        return 1;
    for (size_t i = 0; i < TRD_ARRAY_SIZE(pairs); i++)
        if ((a == pairs[i][0] && b == pairs[i][1]) || (a == pairs[i][1] && b == pairs[i][0]))
            return 1;
    return 0;
}

static int same_type(const struct trd_param *a, const struct trd_param *b)
{
    if ((a->type == TRD_T_PTR) != (b->type == TRD_T_PTR))
        return 0;
    if (a->type == TRD_T_PTR)
        return a->depth == b->depth && same_scalar(a->base, b->base);
    return same_scalar(a->type, b->type);
}

/* The next launch parameter at or after *i (constexpr ones are not passed), or NULL. */
static const struct trd_param *next_launched(const struct trd_signature *sig, uint32_t *i)
{
    while (*i < sig->count && sig->params[*i].type == TRD_T_CONSTEXPR)
        ++*i;
    return *i < sig->count ? &sig->params[(*i)++] : NULL;
}

trd_status_t trd_signature_merge(const struct trd_signature *own, const struct trd_signature *given,
                                 const char *what, struct trd_signature *out)
{
    const char *gc = given->canonical ? given->canonical : "", *oc = own->canonical ? own->canonical : "";
    if (given->num_params != own->num_params)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                             "%s: the signature given (%s) has %u launch parameters, the kernel's own (%s) %u", what,
                             gc, given->num_params, oc, own->num_params);
    uint32_t gi = 0, oi = 0;
    for (uint32_t j = 0; j < given->num_params; j++) {
        const struct trd_param *g = next_launched(given, &gi), *o = next_launched(own, &oi);
        char gt[TRD_PARAM_TYPE_MAX], ot[TRD_PARAM_TYPE_MAX];
        trd_param_type(g, gt, sizeof gt);
        trd_param_type(o, ot, sizeof ot);
        if (!same_type(g, o))
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                                 "%s: the signature given (%s) contradicts the kernel's own (%s): launch parameter %u "
                                 "is %s in the one given, %s in the kernel's",
                                 what, gc, oc, j, gt, ot);
        if (g->name && o->name && strcmp(g->name, o->name) != 0)
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                                 "%s: the signature given (%s) contradicts the kernel's own (%s): launch parameter %u "
                                 "is named '%s' in the one given, '%s' in the kernel's",
                                 what, gc, oc, j, g->name, o->name);
    }
    struct trd_signature m;
    trd_status_t st = trd_signature_copy(given, &m);
    if (st != TRD_OK)
        return st;
    gi = oi = 0;
    for (uint32_t j = 0; j < m.num_params; j++) {
        struct trd_param *g = (struct trd_param *)next_launched(&m, &gi);
        const struct trd_param *o = next_launched(own, &oi);
        if (!g->name && o->name && !(g->name = trd_strdup(o->name))) {
            trd_signature_free(&m);
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        }
    }
    free(m.canonical);
    m.canonical = NULL;
    if ((st = trd_signature_finish(&m, what)) != TRD_OK) {
        trd_signature_free(&m);
        return st;
    }
    *out = m;
    return TRD_OK;
}

int trd_char_is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

trd_status_t trd_signature_push(struct trd_signature *sig, uint32_t *cap, const char *what)
{
    if (sig->count >= TRD_MAX_PARAMS)
        return trd_error_set(TRD_ERR_LIMIT, "%s has more than %d parameters", what, TRD_MAX_PARAMS);
    if (sig->count == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 8;
        struct trd_param *p = realloc(sig->params, ncap * sizeof *p);
        if (!p)
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory for the %s", what);
        sig->params = p;
        *cap = ncap;
    }
    memset(&sig->params[sig->count], 0, sizeof sig->params[0]);
    sig->count++;
    return TRD_OK;
}

void trd_param_set_pointer(struct trd_param *p, uint32_t depth, int32_t base)
{
    p->type = TRD_T_PTR;
    p->elem = depth > 1 ? TRD_T_PTR : base;
    p->base = base;
    p->depth = depth;
    p->size = 8;
    p->align = 8;
}

/* One Triton type ("*fp32", "i32", "constexpr", "*k*i8"): fills p. Returns 0 when it is none,
 * -1 when it nests more than TRD_MAX_PTR_DEPTH pointers (*depth: how many). */
static int parse_type(const char *t, size_t n, struct trd_param *p, uint32_t *depth)
{
    /* Triton's str_to_ty: each '*' is a pointer to the rest, "*k" a constant one. */
    *depth = 0;
    while (n > 0 && t[0] == '*') {
        ++*depth;
        t++;
        n--;
        if (n > 0 && t[0] == 'k') {
            t++;
            n--;
        }
    }
    if (*depth > TRD_MAX_PTR_DEPTH)
        return -1;
    if (*depth) {
        int32_t base = trd_scalar_parse(t, n);
        if (base == TRD_T_INVALID || base == TRD_T_CONSTEXPR || base == TRD_T_NVTMADESC)
            return 0;
        trd_param_set_pointer(p, *depth, base);
        return 1;
    }
    p->type = trd_scalar_parse(t, n);
    if (p->type == TRD_T_INVALID)
        return 0;
    p->size = trd_scalar_size(p->type);
    p->align = p->type == TRD_T_NVTMADESC ? 64 : (p->size ? p->size : 1);
    return 1;
}

trd_status_t trd_signature_parse(const char *text, const char *what, struct trd_signature *out)
{
    struct trd_signature sig;
    memset(&sig, 0, sizeof sig);
    uint32_t cap = 0;
    if (!text)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "the %s is missing", what);
    size_t total = strlen(text);
    if (total > TRD_MAX_SIG_TEXT)
        return trd_error_set(TRD_ERR_LIMIT, "the %s is %zu characters long, more than %d", what, total,
                             TRD_MAX_SIG_TEXT);
    const char *s = text;
    /* An empty signature is a kernel without parameters. */
    while (isspace((unsigned char)*s))
        s++;
    uint32_t index = 0;
    while (*s) {
        const char *start = s;
        while (*s && *s != ',')
            s++;
        const char *end = s;
        while (start < end && isspace((unsigned char)*start))
            start++;
        while (end > start && isspace((unsigned char)end[-1]))
            end--;
        char shown[96];
        trd_quote(start, (size_t)(end - start), shown, sizeof shown);
        if (start == end) {
            trd_signature_free(&sig);
            return trd_error_set(TRD_ERR_FORMAT, "%s: entry %u is empty (expected a Triton type such as *fp32 or i32)",
                                 what, index);
        }
        trd_status_t st = trd_signature_push(&sig, &cap, what);
        if (st != TRD_OK) {
            trd_signature_free(&sig);
            return st;
        }
        struct trd_param *p = &sig.params[sig.count - 1];
        const char *colon = memchr(start, ':', (size_t)(end - start));
        const char *tstart = start;
        if (colon) {
            const char *nend = colon;
            while (nend > start && isspace((unsigned char)nend[-1]))
                nend--;
            int ok = nend > start && !isdigit((unsigned char)start[0]);
            for (const char *c = start; ok && c < nend; c++)
                ok = trd_char_is_ident(*c);
            if (!ok) {
                trd_signature_free(&sig);
                return trd_error_set(TRD_ERR_FORMAT, "%s: entry %u '%s': the name before ':' is not an identifier",
                                     what, index, shown);
            }
            p->name = trd_strndup(start, (size_t)(nend - start));
            if (!p->name) {
                trd_signature_free(&sig);
                return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
            }
            tstart = colon + 1;
            while (tstart < end && isspace((unsigned char)*tstart))
                tstart++;
        }
        uint32_t depth;
        int parsed = parse_type(tstart, (size_t)(end - tstart), p, &depth);
        if (parsed < 0) {
            trd_signature_free(&sig);
            return trd_error_set(TRD_ERR_LIMIT,
                                 "%s: entry %u '%s' is a pointer %u levels deep, more than %d (Triton stops "
                                 "below Python's recursion limit)",
                                 what, index, shown, depth, TRD_MAX_PTR_DEPTH);
        }
        if (!parsed) {
            trd_signature_free(&sig);
            return trd_error_set(TRD_ERR_FORMAT,
                                 "%s: entry %u '%s' is not a Triton type (expected *<type>, i1, i8, "
                                 "i16, i32, i64, u8 .. u64, fp16, bf16, fp32, fp64, fp8 types, "
                                 "nvTmaDesc or constexpr)",
                                 what, index, shown);
        }
        index++;
        if (*s == ',') {
            s++;
            while (isspace((unsigned char)*s))
                s++;
            if (!*s) {
                trd_signature_free(&sig);
                return trd_error_set(TRD_ERR_FORMAT, "%s ends with ',' (an entry is missing)", what);
            }
        }
    }
    trd_status_t st = trd_signature_finish(&sig, what);
    if (st != TRD_OK) {
        trd_signature_free(&sig);
        return st;
    }
    *out = sig;
    return TRD_OK;
}
