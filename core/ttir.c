/* SPDX-License-Identifier: Apache-2.0 */
/* ttir.c: a kernel's signature read from Triton IR (the .ttir beside a cache
 * entry), since Triton's metadata does not carry the signature. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

struct cursor {
    const char *p;
    const char *end;
};

static void skip_space(struct cursor *c)
{
    while (c->p < c->end && isspace((unsigned char)*c->p))
        c->p++;
}

/* Skips a balanced group that starts at c->p with `open`, honouring strings. */
static int skip_group(struct cursor *c, char open, char close)
{
    int depth = 0;
    while (c->p < c->end) {
        char ch = *c->p;
        if (ch == '"') {
            c->p++;
            while (c->p < c->end && *c->p != '"') {
                if (*c->p == '\\' && c->p + 1 < c->end)
                    c->p++;
                c->p++;
            }
            if (c->p >= c->end)
                return 0;
        } else if (ch == open) {
            depth++;
        } else if (ch == close) {
            depth--;
            if (depth == 0) {
                c->p++;
                return 1;
            }
        }
        c->p++;
    }
    return 0;
}

static int starts(const struct cursor *c, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(c->end - c->p) >= n && memcmp(c->p, lit, n) == 0;
}

/* Parses an IR type at c->p into p. */
static int ir_type(struct cursor *c, struct trd_param *p, char *err, size_t errcap)
{
    if (starts(c, "!tt.ptr<")) {
        /* "!tt.ptr<!tt.ptr<f32>, 1>": pointers nest; each may name an address space */
        uint32_t depth = 0;
        while (starts(c, "!tt.ptr<")) {
            if (depth == TRD_MAX_PTR_DEPTH) {
                snprintf(err, errcap, "a pointer more than %d levels deep", TRD_MAX_PTR_DEPTH);
                return 0;
            }
            depth++;
            c->p += 8;
            skip_space(c);
        }
        const char *t = c->p;
        while (c->p < c->end && (trd_char_is_ident(*c->p)))
            c->p++;
        int32_t elem;
        if (!trd_scalar_parse_ir(t, (size_t)(c->p - t), &elem)) {
            char shown[64];
            trd_quote(t, TRD_MIN((size_t)(c->end - t), (size_t)40), shown, sizeof shown);
            snprintf(err, errcap, "pointer to unsupported element type '%s'", shown);
            return 0;
        }
        for (uint32_t i = 0; i < depth; i++) {
            skip_space(c);
            if (c->p < c->end && *c->p == ',') {
                c->p++;
                skip_space(c);
                const char *digits = c->p;
                while (c->p < c->end && isdigit((unsigned char)*c->p))
                    c->p++;
                if (c->p == digits) {
                    snprintf(err, errcap, "expected an address space after ',' in !tt.ptr<...>");
                    return 0;
                }
                skip_space(c);
            }
            if (c->p >= c->end || *c->p != '>') {
                snprintf(err, errcap, "unterminated !tt.ptr<...>");
                return 0;
            }
            c->p++;
        }
        trd_param_set_pointer(p, depth, elem);
        return 1;
    }
    const char *t = c->p;
    while (c->p < c->end && (trd_char_is_ident(*c->p) || *c->p == '.' || *c->p == '!'))
        c->p++;
    int32_t type;
    if (!trd_scalar_parse_ir(t, (size_t)(c->p - t), &type)) {
        char shown[64];
        trd_quote(t, TRD_MIN((size_t)(c->end - t), (size_t)40), shown, sizeof shown);
        snprintf(err, errcap, "unsupported parameter type '%s' (tensor descriptors and other IR types "
                 "need an explicit signature)", shown);
        return 0;
    }
    p->type = type;
    p->size = trd_scalar_size(type);
    p->align = p->size;
    return 1;
}

trd_status_t trd_signature_from_ttir(const char *ttir, size_t len, const char *name,
                                     const char *what, struct trd_signature *out)
{
    struct cursor c = {ttir, ttir + len};
    const char *marker = "tt.func public @";
    size_t mlen = strlen(marker);
    const char *found = NULL;
    for (const char *p = ttir; p + mlen <= c.end; p++) {
        if (memcmp(p, marker, mlen) != 0)
            continue;
        const char *n = p + mlen;
        const char *ne = n;
        while (ne < c.end && (trd_char_is_ident(*ne) || *ne == '$' || *ne == '.'))
            ne++;
        if (!name || ((size_t)(ne - n) == strlen(name) && memcmp(n, name, (size_t)(ne - n)) == 0)) {
            found = ne;
            break;
        }
    }
    if (!found)
        return trd_error_set(TRD_ERR_FORMAT, "%s: no 'tt.func public @%s' in the Triton IR", what,
                             name ? name : "<kernel>");
    c.p = found;
    skip_space(&c);
    if (c.p >= c.end || *c.p != '(')
        return trd_error_set(TRD_ERR_FORMAT, "%s: expected '(' after the kernel name in the Triton IR",
                             what);
    c.p++;
    struct trd_signature sig;
    memset(&sig, 0, sizeof sig);
    uint32_t cap = 0;
    char err[160];
    skip_space(&c);
    if (c.p < c.end && *c.p == ')')
        c.p++;
    else {
        for (;;) {
            skip_space(&c);
            if (c.p >= c.end || *c.p != '%') {
                snprintf(err, sizeof err, "expected '%%name: type' for parameter %u", sig.count);
                goto bad;
            }
            c.p++;
            const char *an = c.p;
            while (c.p < c.end && trd_char_is_ident(*c.p))
                c.p++;
            size_t anlen = (size_t)(c.p - an);
            skip_space(&c);
            if (c.p >= c.end || *c.p != ':') {
                snprintf(err, sizeof err, "expected ':' after parameter %u's name", sig.count);
                goto bad;
            }
            c.p++;
            skip_space(&c);
            trd_status_t st = trd_signature_push(&sig, &cap, what);
            if (st != TRD_OK) {
                trd_signature_free(&sig);
                return st;
            }
            struct trd_param *p = &sig.params[sig.count - 1];
            if (!ir_type(&c, p, err, sizeof err))
                goto bad;
            /* The SSA name is the Python parameter name unless it is argN. */
            int generic = anlen > 3 && memcmp(an, "arg", 3) == 0;
            for (size_t k = 3; generic && k < anlen; k++)
                generic = isdigit((unsigned char)an[k]);
            if (anlen > 0 && !generic && !isdigit((unsigned char)an[0])) {
                p->name = trd_strndup(an, anlen);
                if (!p->name) {
                    trd_signature_free(&sig);
                    return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
                }
            }
            skip_space(&c);
            if (c.p < c.end && *c.p == '{') {
                if (!skip_group(&c, '{', '}')) {
                    snprintf(err, sizeof err, "unbalanced '{' in parameter %u's attributes", sig.count - 1);
                    goto bad;
                }
                skip_space(&c);
            }
            if (starts(&c, "loc(")) {
                c.p += 3;
                if (!p->name && c.p + 2 < c.end && c.p[1] == '"') {
                    const char *q = c.p + 2;
                    const char *qe = q;
                    while (qe < c.end && trd_char_is_ident(*qe))
                        qe++;
                    if (qe < c.end && *qe == '"' && qe > q && !isdigit((unsigned char)*q) &&
                        !(p->name = trd_strndup(q, (size_t)(qe - q)))) {
                        trd_signature_free(&sig);
                        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
                    }
                }
                if (!skip_group(&c, '(', ')')) {
                    snprintf(err, sizeof err, "unbalanced 'loc(' after parameter %u", sig.count - 1);
                    goto bad;
                }
                skip_space(&c);
            }
            if (c.p < c.end && *c.p == ',') {
                c.p++;
                continue;
            }
            if (c.p < c.end && *c.p == ')')
                break;
            snprintf(err, sizeof err, "expected ',' or ')' after parameter %u", sig.count - 1);
            goto bad;
        }
    }
    trd_status_t st = trd_signature_finish(&sig, what);
    if (st != TRD_OK) {
        trd_signature_free(&sig);
        return st;
    }
    *out = sig;
    return TRD_OK;
bad:
    trd_signature_free(&sig);
    return trd_error_set(TRD_ERR_FORMAT, "%s: %s in the Triton IR signature", what, err);
}
