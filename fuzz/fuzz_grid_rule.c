/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_grid_rule: a variant's launch dimensions rule (a bundle's text) on arbitrary bytes. What compiles must
 * evaluate as a second, independent reading of the same grammar does: this file's recursive evaluator, in 128-bit
 * arithmetic, says whether an intermediate leaves 64 bits, divides by zero or gives a dimension outside 0 ..
 * 2^32-1, and else what the grid is. What the reference reads but the compiler refuses must be refused for one of
 * its own limits (steps, nesting); any other difference aborts. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define SIG "a:*fp32,M:i32,N:u64,B:constexpr,x:fp32,K:i64"
#define CONFIG "BM=16,S=-3,BIG=9223372036854775807,num_warps=4"

typedef __int128 wide;

/* The reference reading: parse and evaluate at once. bad: the text is not a rule; err: it is one, but its
 * evaluation fails (the first failure in reading order, as the compiled program's). */
struct ref {
    const char *p;
    int bad, err;
};

static const struct {
    const char *name;
    int64_t value; /* integers only */
    int integer;
} names[] = {{"BM", 16, 1}, {"S", -3, 1}, {"BIG", INT64_MAX, 1}, {"num_warps", 4, 1}, {"M", 100, 1},
             {"N", 7, 1},   {"K", -5, 1}, {"a", 0, 0},            {"B", 0, 0},         {"x", 0, 0}};

static wide sum(struct ref *r);

static void space(struct ref *r)
{
    while (isspace((unsigned char)*r->p))
        r->p++;
}

static wide checked(struct ref *r, wide v)
{
    if (v < INT64_MIN || v > INT64_MAX)
        r->err = 1;
    return r->err ? 0 : v;
}

static wide binary(struct ref *r, char op, wide a, wide b)
{
    if (r->bad || r->err)
        return 0;
    if ((op == '/' || op == '%' || op == 'c') && b == 0) {
        r->err = 1;
        return 0;
    }
    switch (op) {
    case '+': return checked(r, a + b);
    case '-': return checked(r, a - b);
    case '*': return checked(r, a * b);
    case '/': return checked(r, a / b); /* INT64_MIN / -1 leaves 64 bits */
    case '%': return a == INT64_MIN && b == -1 ? checked(r, (wide)INT64_MAX + 1) : a % b;
    case 'c': return checked(r, a / b + (a % b != 0 && (a < 0) == (b < 0)));
    case 'm': return a < b ? a : b;
    default: return a > b ? a : b;
    }
}

static wide atom(struct ref *r)
{
    space(r);
    const char *s = r->p;
    if (*s == '(') {
        r->p++;
        wide v = sum(r);
        space(r);
        if (*r->p != ')')
            r->bad = 1;
        else
            r->p++;
        return v;
    }
    if (*s == '-') {
        r->p++;
        wide v = atom(r);
        return r->bad || r->err ? 0 : checked(r, -v);
    }
    if (isdigit((unsigned char)*s)) {
        wide v = 0;
        while (isdigit((unsigned char)*r->p)) {
            v = v * 10 + (*r->p++ - '0');
            if (v > INT64_MAX)
                v = (wide)INT64_MAX + 1; /* past 64 bits: not a rule */
        }
        if (v > INT64_MAX)
            r->bad = 1;
        return v;
    }
    if (!isalpha((unsigned char)*s) && *s != '_') {
        r->bad = 1;
        return 0;
    }
    while (isalnum((unsigned char)*r->p) || *r->p == '_')
        r->p++;
    size_t n = (size_t)(r->p - s);
    space(r);
    if (*r->p == '(') {
        char op = n == 4 && !strncmp(s, "cdiv", 4) ? 'c' : n == 3 && !strncmp(s, "min", 3) ? 'm'
                : n == 3 && !strncmp(s, "max", 3) ? 'M' : 0;
        if (!op) {
            r->bad = 1;
            return 0;
        }
        r->p++;
        wide a = sum(r);
        space(r);
        if (*r->p != ',') {
            r->bad = 1;
            return 0;
        }
        r->p++;
        wide b = sum(r);
        space(r);
        if (*r->p != ')') {
            r->bad = 1;
            return 0;
        }
        r->p++;
        return binary(r, op, a, b);
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == n && !strncmp(names[i].name, s, n)) {
            if (!names[i].integer)
                r->bad = 1;
            return names[i].value;
        }
    r->bad = 1;
    return 0;
}

static wide product(struct ref *r)
{
    wide v = atom(r);
    for (;;) {
        space(r);
        char c = *r->p;
        if (r->bad || (c != '*' && c != '/' && c != '%'))
            return v;
        r->p++;
        wide b = atom(r);
        v = binary(r, c, v, b);
    }
}

static wide sum(struct ref *r)
{
    wide v = product(r);
    for (;;) {
        space(r);
        char c = *r->p;
        if (r->bad || (c != '+' && c != '-'))
            return v;
        r->p++;
        wide b = product(r);
        v = binary(r, c, v, b);
    }
}

/* The reference grid: 1 (a rule) with *err or grid, 0 (no rule). */
static int reference(const char *text, int *err, uint32_t grid[3])
{
    struct ref r = {.p = text};
    uint32_t g[3] = {1, 1, 1};
    for (int dim = 0;; dim++) {
        if (dim == 3)
            return 0;
        wide v = sum(&r);
        if (r.bad)
            return 0;
        if (!r.err && (v < 0 || v > UINT32_MAX))
            r.err = 1;
        if (!r.err)
            g[dim] = (uint32_t)v;
        space(&r);
        if (!*r.p)
            break;
        if (*r.p != ',')
            return 0;
        r.p++;
    }
    *err = r.err;
    if (!r.err)
        memcpy(grid, g, sizeof g);
    return 1;
}

static void differ(const char *text, const char *what)
{
    fprintf(stderr, "fuzz_grid_rule: %s\n  rule: %.300s\n  trident: %s\n", what, text, trd_error_message());
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct trd_signature sig;
    static int ready;
    if (!ready) {
        if (trd_signature_parse(SIG, "fuzz", &sig) != TRD_OK)
            abort();
        ready = 1;
    }
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int err = 0;
    uint32_t want[3] = {0, 0, 0};
    int ok = reference(text, &err, want);
    struct trd_grid_rule rule;
    if (trd_grid_rule_compile(text, &sig, CONFIG, "fuzz", &rule) != TRD_OK) {
        const char *m = trd_error_message();
        if (ok && !strstr(m, "nested deeper than") && !strstr(m, "longer than"))
            differ(text, "refused, but the reference reads a rule");
        free(text);
        return 0;
    }
    if (!ok)
        differ(text, "compiled, but the reference reads no rule");
    trd_arg_t args[5] = {trd_arg_ptr(NULL), trd_arg_int(100), trd_arg_uint(7), trd_arg_float(1.5), trd_arg_int(-5)};
    uint32_t got[3] = {0, 0, 0};
    trd_status_t st = trd_grid_rule_eval(&rule, args, 5, "fuzz", got);
    if ((st != TRD_OK) != err)
        differ(text, err ? "evaluated, but the reference finds it fails" : "failed, but the reference evaluates it");
    if (st == TRD_OK && memcmp(got, want, sizeof got) != 0) {
        fprintf(stderr, "grid %u,%u,%u; reference %u,%u,%u\n", got[0], got[1], got[2], want[0], want[1], want[2]);
        differ(text, "a different grid");
    }
    free(text);
    return 0;
}
