/* SPDX-License-Identifier: Apache-2.0 */
/* grid_rule.c: a variant's launch dimensions rule ("cdiv(M,BLOCK_M),cdiv(N,BLOCK_N)"): one to three integer
 * expressions of the kernel's integer scalar parameters (their values at launch) and its configuration's
 * NAME=integer pairs (their values at compile time), with + - * / %, parentheses, cdiv, min and max. Compiled
 * once when the kernel is read, into a postfix program evaluated at launch with a fixed stack: no lock, no
 * allocation, so that a tuned launch of a known key stays allocation-free. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

enum { OP_CONST = 1, OP_PARAM, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_CDIV, OP_MIN, OP_MAX, OP_NEG, OP_END };

struct parser {
    const char *text, *p;
    const struct trd_signature *sig;
    const char *config;
    struct trd_grid_rule *rule;
    const char *what;
    trd_status_t st;
    uint32_t depth; /* of parentheses, signs and calls: the parser recurses, and the text is a bundle's */
};

#define GRID_RULE_MAX_DEPTH 32

static trd_status_t emit(struct parser *ps, int32_t op, int64_t value)
{
    struct trd_grid_rule *r = ps->rule;
    if (r->nops == TRD_GRID_RULE_MAX_OPS)
        return ps->st = trd_error_set(TRD_ERR_FORMAT, "%s: the grid rule '%.100s%s' is longer than %d steps",
                                      ps->what, ps->text, strlen(ps->text) > 100 ? "..." : "", TRD_GRID_RULE_MAX_OPS);
    r->ops[r->nops].op = op;
    r->ops[r->nops++].value = value;
    return TRD_OK;
}

static void skip(struct parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

static trd_status_t fail(struct parser *ps, const char *why)
{
    /* the rule quoted up to 100 bytes: the reason must fit the message whatever the rule's length */
    if (ps->st == TRD_OK)
        ps->st = trd_error_set(TRD_ERR_FORMAT, "%s: grid rule '%.100s%s': %s at offset %d", ps->what, ps->text,
                               strlen(ps->text) > 100 ? "..." : "", why, (int)(ps->p - ps->text));
    return ps->st;
}

/* A decimal integer at s: 1 with *v and *end; 0 where there is none, -1 past 64 bits (strtoll would clamp it, and
 * the rule would compute with a value nobody wrote). */
static int integer_at(const char *s, int64_t *v, char **end)
{
    errno = 0;
    long long x = strtoll(s, end, 10);
    if (*end == s)
        return 0;
    if (errno == ERANGE)
        return -1;
    *v = x;
    return 1;
}

/* A NAME=integer of the config text: 1 when found, 0 when not, -1 when its value is past 64 bits. */
static int config_value(const char *config, const char *name, size_t n, int64_t *v)
{
    for (const char *p = config; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        while (*p == ' ')
            p++;
        if (!strncmp(p, name, n) && p[n] == '=') {
            char *end;
            int64_t x = 0;
            int got = integer_at(p + n + 1, &x, &end);
            if (got != 0 && (*end == ',' || *end == '\0')) {
                *v = x;
                return got;
            }
        }
    }
    return 0;
}

static trd_status_t expr(struct parser *ps);

/* An expression followed by `want` (',' or ')'). */
static trd_status_t expr_then(struct parser *ps, char want, const char *why)
{
    if (expr(ps) != TRD_OK)
        return ps->st;
    skip(ps);
    if (*ps->p != want)
        return fail(ps, why);
    ps->p++;
    return TRD_OK;
}

static trd_status_t factor_in(struct parser *ps);

static trd_status_t factor(struct parser *ps)
{
    if (ps->depth == GRID_RULE_MAX_DEPTH)
        return fail(ps, "nested deeper than 32 parentheses, signs and calls");
    ps->depth++;
    trd_status_t st = factor_in(ps);
    ps->depth--;
    return st;
}

static trd_status_t factor_in(struct parser *ps)
{
    skip(ps);
    const char *s = ps->p;
    if (*s == '(') {
        ps->p++;
        return expr_then(ps, ')', "expected ')'");
    }
    if (*s == '-') {
        ps->p++;
        return factor(ps) == TRD_OK ? emit(ps, OP_NEG, 0) : ps->st;
    }
    if (isdigit((unsigned char)*s)) {
        char *end;
        int64_t v = 0;
        if (integer_at(s, &v, &end) < 0)
            return fail(ps, "a number past 64 bits");
        ps->p = end;
        return emit(ps, OP_CONST, v);
    }
    if (!isalpha((unsigned char)*s) && *s != '_')
        return fail(ps, "expected a number, a name or '('");
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
        ps->p++;
    size_t n = (size_t)(ps->p - s);
    skip(ps);
    if (*ps->p == '(') { /* cdiv, min, max of two */
        int32_t op = n == 4 && !strncmp(s, "cdiv", 4) ? OP_CDIV : n == 3 && !strncmp(s, "min", 3) ? OP_MIN
                   : n == 3 && !strncmp(s, "max", 3) ? OP_MAX : 0;
        if (!op)
            return fail(ps, "unknown function (cdiv, min, max)");
        ps->p++;
        if (expr_then(ps, ',', "expected ',' (the function takes two arguments)") != TRD_OK ||
            expr_then(ps, ')', "expected ')'") != TRD_OK)
            return ps->st;
        return emit(ps, op, 0);
    }
    int64_t v = 0;
    int got = config_value(ps->config, s, n, &v);
    if (got < 0) {
        ps->p = s;
        return fail(ps, "the config's value of a name it reads is past 64 bits");
    }
    if (got)
        return emit(ps, OP_CONST, v);
    uint32_t launch = 0;
    for (uint32_t i = 0; i < ps->sig->count; i++) {
        const struct trd_param *p = &ps->sig->params[i];
        if (p->name && strlen(p->name) == n && !strncmp(p->name, s, n)) {
            int integer = p->type >= TRD_T_I1 && p->type <= TRD_T_U64;
            if (!integer) {
                ps->p = s;
                return fail(ps, "a parameter it names is not an integer scalar");
            }
            return emit(ps, OP_PARAM, launch);
        }
        launch += p->type != TRD_T_CONSTEXPR;
    }
    ps->p = s;
    return fail(ps, "a name that is neither an integer parameter nor a NAME=integer of the config");
}

static trd_status_t term(struct parser *ps)
{
    if (factor(ps) != TRD_OK)
        return ps->st;
    for (;;) {
        skip(ps);
        char c = *ps->p;
        if (c != '*' && c != '/' && c != '%')
            return TRD_OK;
        ps->p++;
        if (factor(ps) != TRD_OK || emit(ps, c == '*' ? OP_MUL : c == '/' ? OP_DIV : OP_MOD, 0) != TRD_OK)
            return ps->st;
    }
}

static trd_status_t expr(struct parser *ps)
{
    if (term(ps) != TRD_OK)
        return ps->st;
    for (;;) {
        skip(ps);
        char c = *ps->p;
        if (c != '+' && c != '-')
            return TRD_OK;
        ps->p++;
        if (term(ps) != TRD_OK || emit(ps, c == '+' ? OP_ADD : OP_SUB, 0) != TRD_OK)
            return ps->st;
    }
}

trd_status_t trd_grid_rule_compile(const char *text, const struct trd_signature *sig, const char *config,
                                   const char *what, struct trd_grid_rule *out)
{
    struct trd_grid_rule r;
    memset(&r, 0, sizeof r);
    struct parser ps = {.text = text, .p = text, .sig = sig, .config = config, .rule = &r, .what = what};
    for (;;) {
        if (r.ndims == 3)
            return fail(&ps, "more than 3 dimensions");
        if (expr(&ps) != TRD_OK || emit(&ps, OP_END, 0) != TRD_OK)
            return ps.st;
        r.ndims++;
        skip(&ps);
        if (!*ps.p)
            break;
        if (*ps.p != ',')
            return fail(&ps, "expected ',' or the end");
        ps.p++;
    }
    *out = r;
    return TRD_OK;
}

trd_status_t trd_grid_rule_eval(const struct trd_grid_rule *r, const trd_arg_t *args, uint32_t num_args,
                                const char *kernel, uint32_t grid[3])
{
    int64_t stack[TRD_GRID_RULE_MAX_OPS];
    uint32_t sp = 0, dim = 0, g[3] = {1, 1, 1};
    for (uint32_t i = 0; i < r->nops; i++) {
        int64_t v = r->ops[i].value, a = sp >= 2 ? stack[sp - 2] : 0, b = sp >= 1 ? stack[sp - 1] : 0;
        switch (r->ops[i].op) {
        case OP_CONST:
            stack[sp++] = v;
            break;
        case OP_PARAM: {
            const trd_arg_t *arg = (uint32_t)v < num_args && args ? &args[v] : NULL;
            if (!arg || (arg->kind != TRD_ARG_INT && arg->kind != TRD_ARG_UINT))
                return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                                     "kernel '%s': its grid rule reads argument %lld, which is not an integer",
                                     kernel, (long long)v);
            if (arg->kind == TRD_ARG_UINT && arg->value.u > INT64_MAX)
                return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': argument %lld is too large for its grid "
                                                               "rule", kernel, (long long)v);
            stack[sp++] = arg->kind == TRD_ARG_INT ? arg->value.i : (int64_t)arg->value.u;
            break;
        }
        case OP_NEG:
            if (b == INT64_MIN)
                return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': its grid rule overflows 64 bits", kernel);
            stack[sp - 1] = -b;
            break;
        case OP_END:
            if (b < 0 || b > UINT32_MAX)
                return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': its grid rule gives %lld programs along "
                                                               "dimension %u", kernel, (long long)b, dim);
            g[dim++] = (uint32_t)b;
            sp--;
            break;
        default: {
            int32_t op = r->ops[i].op;
            int divides = op == OP_DIV || op == OP_MOD || op == OP_CDIV;
            if (divides && b == 0)
                return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': its grid rule divides by zero", kernel);
            /* the operands are launch sizes: wrapping would take sizes past any device's; INT64_MIN / -1 is past
             * 64 bits too (and traps where it is computed) */
            int ovf = divides && b == -1 && a == INT64_MIN;
            if (!ovf)
                switch (op) {
                case OP_ADD: ovf = __builtin_add_overflow(a, b, &v); break;
                case OP_SUB: ovf = __builtin_sub_overflow(a, b, &v); break;
                case OP_MUL: ovf = __builtin_mul_overflow(a, b, &v); break;
                case OP_DIV: v = a / b; break;
                case OP_MOD: v = a % b; break;
                case OP_CDIV: v = a / b + (a % b != 0 && (a < 0) == (b < 0)); break;
                case OP_MIN: v = a < b ? a : b; break;
                default: v = a > b ? a : b; break;
                }
            if (ovf)
                return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': its grid rule overflows 64 bits", kernel);
            stack[sp - 2] = v;
            sp--;
        }
        }
    }
    memcpy(grid, g, sizeof g);
    return TRD_OK;
}
