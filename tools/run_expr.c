/* SPDX-License-Identifier: Apache-2.0 */
/* run_expr.c: the reference expressions of `trident run --check ARG==EXPR`:
 * element-wise arithmetic over the arguments' initial values, in double.
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/') unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := NUMBER | NAME | NAME '(' expr [',' expr] ')' | 'sum' '(' NAME ')' | '(' expr ')'
 *
 * A NAME is a parameter's name or argN (a buffer reads its element i, a
 * scalar its value), or i (the element's index) when no parameter has that
 * name. sum(BUFFER) is the sum of all of a buffer's elements. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/run.h"

#define EXPR_NODES 256

enum op { OP_NUM = 1, OP_INDEX, OP_SCALAR, OP_ELEM, OP_SUM, OP_NEG, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FN1, OP_FN2 };

struct node {
    int op;
    int a, b;          /* operands (node indices) */
    uint32_t arg;      /* OP_SCALAR, OP_ELEM, OP_SUM */
    double value;      /* OP_NUM; OP_SUM once computed */
    int have;          /* OP_SUM: value computed */
    double (*fn1)(double);
    double (*fn2)(double, double);
};

struct expr {
    struct node n[EXPR_NODES];
    int count, root;
};

struct parser {
    const char *s;
    struct expr *e;
    const struct param *params;
    const struct arg_spec *specs;
    uint32_t nparams;
    char *err;
    size_t cap;
    int failed;
};

static double fn_min(double a, double b) { return a < b ? a : b; }
static double fn_max(double a, double b) { return a > b ? a : b; }

static const struct {
    const char *name;
    double (*fn1)(double);
    double (*fn2)(double, double);
} functions[] = {
    {"abs", fabs, NULL},   {"sqrt", sqrt, NULL},  {"exp", exp, NULL},    {"log", log, NULL},
    {"sin", sin, NULL},    {"cos", cos, NULL},    {"tanh", tanh, NULL},  {"floor", floor, NULL},
    {"ceil", ceil, NULL},  {"min", NULL, fn_min}, {"max", NULL, fn_max}, {"pow", NULL, pow},
};

static int fail(struct parser *p, const char *fmt, const char *what)
{
    if (!p->failed)
        snprintf(p->err, p->cap, fmt, what);
    p->failed = 1;
    return -1;
}

static void skip(struct parser *p)
{
    while (isspace((unsigned char)*p->s))
        p->s++;
}

static int node(struct parser *p, int op, int a, int b)
{
    if (p->failed)
        return -1;
    if (p->e->count == EXPR_NODES)
        return fail(p, "the expression is too long: more than 256 numbers, names and operations%s", "");
    struct node *n = &p->e->n[p->e->count];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->a = a;
    n->b = b;
    return p->e->count++;
}

static int parse_expr(struct parser *p);

/* Whether the n characters at s are the name. */
static int is_name(const char *name, const char *s, size_t n)
{
    return strlen(name) == n && memcmp(name, s, n) == 0;
}

/* The identifier at p->s (letters, digits, _), whole; its length. */
static size_t identifier(const struct parser *p)
{
    size_t len = 0;
    while (isalnum((unsigned char)p->s[len]) || p->s[len] == '_')
        len++;
    return len;
}

/* The identifier for a message, at most 64 characters of it. */
static const char *shown(const char *s, size_t len, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.*s%s", len > 64 ? 64 : (int)len, s, len > 64 ? "..." : "");
    return buf;
}

/* An argument named in the expression: its parameter index, or -1 (message set). */
static int name_arg(struct parser *p, const char *name, size_t len)
{
    uint64_t idx;
    int a = -1;
    if (len > 3 && !memcmp(name, "arg", 3) && cli_parse_digits_n(name + 3, len - 3, &idx) == 1 && idx < p->nparams)
        a = (int)idx;
    for (uint32_t k = 0; k < p->nparams && a < 0; k++)
        if (p->params[k].name[0] && is_name(p->params[k].name, name, len))
            a = (int)k;
    char what[72];
    shown(name, len, what, sizeof what);
    if (a < 0)
        return fail(p, "'%s' is not an argument (a parameter's name or argN), i or a function", what);
    if (p->specs[a].kind == ARG_NULL)
        return fail(p, "'%s' is a null pointer: it has no elements", what);
    if (p->specs[a].kind == ARG_BUFFER && (!p->params[a].elem || type_is_fp8(p->params[a].type)))
        return fail(p, "'%s' has elements the expression cannot read", what);
    return a;
}

static int parse_primary(struct parser *p)
{
    skip(p);
    if (*p->s == '(') {
        p->s++;
        int r = parse_expr(p);
        skip(p);
        if (*p->s != ')')
            return fail(p, "a ')' is missing%s", "");
        p->s++;
        return r;
    }
    if (isdigit((unsigned char)*p->s) || *p->s == '.') {
        char *end;
        double v = strtod(p->s, &end);
        if (end == p->s)
            return fail(p, "'%s' is not a number", p->s);
        p->s = end;
        int r = node(p, OP_NUM, -1, -1);
        if (r >= 0)
            p->e->n[r].value = v;
        return r;
    }
    if (!isalpha((unsigned char)*p->s) && *p->s != '_')
        return fail(p, *p->s ? "unexpected '%s'" : "an operand is missing at the end%s", p->s);
    const char *name = p->s;
    size_t len = identifier(p);
    char fname[72];
    p->s += len;
    skip(p);
    if (*p->s != '(') {
        int named = 0;
        for (uint32_t k = 0; k < p->nparams; k++)
            named |= is_name(p->params[k].name, name, len);
        if (is_name("i", name, len) && !named)
            return node(p, OP_INDEX, -1, -1);
        int a = name_arg(p, name, len);
        if (a < 0)
            return -1;
        int r = node(p, p->specs[a].kind == ARG_SCALAR ? OP_SCALAR : OP_ELEM, -1, -1);
        if (r >= 0)
            p->e->n[r].arg = (uint32_t)a;
        return r;
    }
    p->s++;
    if (is_name("sum", name, len)) {
        skip(p);
        const char *buf = p->s;
        size_t bl = identifier(p);
        p->s += bl;
        skip(p);
        int a = bl ? name_arg(p, buf, bl) : fail(p, "sum() takes a buffer argument's name%s", "");
        if (a < 0)
            return -1;
        if (p->specs[a].kind != ARG_BUFFER)
            return fail(p, "sum(%s): not a buffer", shown(buf, bl, fname, sizeof fname));
        if (*p->s != ')')
            return fail(p, "sum() takes one buffer, then ')'%s", "");
        p->s++;
        int r = node(p, OP_SUM, -1, -1);
        if (r >= 0)
            p->e->n[r].arg = (uint32_t)a;
        return r;
    }
    size_t f = 0;
    while (f < sizeof functions / sizeof functions[0] && !is_name(functions[f].name, name, len))
        f++;
    shown(name, len, fname, sizeof fname);
    if (f == sizeof functions / sizeof functions[0])
        return fail(p, "'%s' is not a function (abs sqrt exp log sin cos tanh floor ceil min max pow sum)", fname);
    int a = parse_expr(p), b = -1;
    skip(p);
    if (functions[f].fn2) {
        if (*p->s != ',')
            return fail(p, "%s() takes two operands", fname);
        p->s++;
        b = parse_expr(p);
        skip(p);
    }
    if (*p->s != ')')
        return fail(p, "%s(): a ')' is missing", fname);
    p->s++;
    int r = node(p, functions[f].fn2 ? OP_FN2 : OP_FN1, a, b);
    if (r >= 0) {
        p->e->n[r].fn1 = functions[f].fn1;
        p->e->n[r].fn2 = functions[f].fn2;
    }
    return r;
}

static int parse_unary(struct parser *p)
{
    skip(p);
    if (*p->s == '-' || *p->s == '+') {
        int neg = *p->s++ == '-';
        int a = parse_unary(p);
        return neg ? node(p, OP_NEG, a, -1) : a;
    }
    return parse_primary(p);
}

static int parse_term(struct parser *p)
{
    int a = parse_unary(p);
    for (;;) {
        skip(p);
        if (*p->s != '*' && *p->s != '/')
            return a;
        int op = *p->s++ == '*' ? OP_MUL : OP_DIV;
        a = node(p, op, a, parse_unary(p));
    }
}

static int parse_expr(struct parser *p)
{
    int a = parse_term(p);
    for (;;) {
        skip(p);
        if (*p->s != '+' && *p->s != '-')
            return a;
        int op = *p->s++ == '+' ? OP_ADD : OP_SUB;
        a = node(p, op, a, parse_term(p));
    }
}

struct expr *expr_compile(const char *text, const struct param *params, const struct arg_spec *specs,
                          uint32_t nparams, char *err, size_t cap)
{
    struct expr *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    struct parser p = {.s = text, .e = e, .params = params, .specs = specs, .nparams = nparams, .err = err,
                       .cap = cap};
    e->root = parse_expr(&p);
    skip(&p);
    if (!p.failed && *p.s)
        fail(&p, "unexpected '%s'", p.s);
    if (p.failed) {
        free(e);
        return NULL;
    }
    return e;
}

static double eval(struct node *n, int k, const struct expr_env *env, uint64_t i)
{
    struct node *x = &n[k];
    switch (x->op) {
    case OP_NUM: return x->value;
    case OP_INDEX: return (double)i;
    case OP_SCALAR: return value_double(env->specs[x->arg].scalar);
    case OP_ELEM: return elem_get(env->data[x->arg], (size_t)i, env->params[x->arg].type);
    case OP_SUM:
        if (!x->have) {
            double s = 0;
            for (uint64_t j = 0; j < env->counts[x->arg]; j++)
                s += elem_get(env->data[x->arg], (size_t)j, env->params[x->arg].type);
            x->value = s;
            x->have = 1;
        }
        return x->value;
    case OP_NEG: return -eval(n, x->a, env, i);
    case OP_ADD: return eval(n, x->a, env, i) + eval(n, x->b, env, i);
    case OP_SUB: return eval(n, x->a, env, i) - eval(n, x->b, env, i);
    case OP_MUL: return eval(n, x->a, env, i) * eval(n, x->b, env, i);
    case OP_DIV: return eval(n, x->a, env, i) / eval(n, x->b, env, i);
    case OP_FN1: return x->fn1(eval(n, x->a, env, i));
    default: return x->fn2(eval(n, x->a, env, i), eval(n, x->b, env, i));
    }
}

double expr_eval(struct expr *e, const struct expr_env *env, uint64_t i)
{
    return eval(e->n, e->root, env, i);
}

uint64_t expr_min_count(const struct expr *e, const struct expr_env *env, uint32_t *arg)
{
    uint64_t m = UINT64_MAX;
    for (int k = 0; k < e->count; k++)
        if (e->n[k].op == OP_ELEM && env->counts[e->n[k].arg] < m) {
            m = env->counts[e->n[k].arg];
            *arg = e->n[k].arg;
        }
    return m;
}

void expr_free(struct expr *e)
{
    free(e);
}
