/* SPDX-License-Identifier: Apache-2.0 */
/* grid_rule.c: a variant's launch dimensions rule ("cdiv(M,BLOCK_M),cdiv(N,BLOCK_N)"): one to three integer
 * expressions of the kernel's integer scalar parameters (their values at launch) and its configuration's
 * NAME=integer pairs (their values at compile time), with + - * / %, parentheses, cdiv, min and max. Compiled
 * once when the kernel is read, into a postfix program evaluated at launch with a fixed stack: no lock, no
 * allocation, so that a tuned launch of a known key stays allocation-free. */
#include <ctype.h>
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
};

static trd_status_t emit(struct parser *ps, int32_t op, int64_t value)
{
    struct trd_grid_rule *r = ps->rule;
    if (r->nops == TRD_GRID_RULE_MAX_OPS)
        return ps->st = trd_error_set(TRD_ERR_FORMAT, "%s: the grid rule '%s' is longer than %d steps", ps->what,
                                      ps->text, TRD_GRID_RULE_MAX_OPS);
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
    if (ps->st == TRD_OK)
        ps->st = trd_error_set(TRD_ERR_FORMAT, "%s: grid rule '%s': %s at offset %d", ps->what, ps->text, why,
                               (int)(ps->p - ps->text));
    return ps->st;
}

/* A NAME=integer of the config text; 1 when found. */
static int config_value(const char *config, const char *name, size_t n, int64_t *v)
{
    for (const char *p = config; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        while (*p == ' ')
            p++;
        if (!strncmp(p, name, n) && p[n] == '=') {
            char *end;
            long long x = strtoll(p + n + 1, &end, 10);
            if (end != p + n + 1 && (*end == ',' || *end == '\0')) {
                *v = x;
                return 1;
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

static trd_status_t factor(struct parser *ps)
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
        long long v = strtoll(s, &end, 10);
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
    int64_t v;
    if (config_value(ps->config, s, n, &v))
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
            stack[sp - 1] = -b;
            break;
        case OP_END:
            if (b < 0 || b > UINT32_MAX)
                return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': its grid rule gives %lld programs along "
                                                               "dimension %u", kernel, (long long)b, dim);
            g[dim++] = (uint32_t)b;
            sp--;
            break;
        default:
            if ((r->ops[i].op == OP_DIV || r->ops[i].op == OP_MOD || r->ops[i].op == OP_CDIV) && b == 0)
                return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': its grid rule divides by zero", kernel);
            /* the operands are launch sizes: wrapping would take sizes past any device's */
            int ovf = b == -1 && a == INT64_MIN;
            switch (r->ops[i].op) {
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
    memcpy(grid, g, sizeof g);
    return TRD_OK;
}
