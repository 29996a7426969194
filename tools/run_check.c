/* SPDX-License-Identifier: Apache-2.0 */
/* run_check.c: `trident run --check`: an output compared element by element
 * with a reference (a file of the output's type, or an expression over the
 * arguments' initial values, stored in the output's type), within a tolerance relative to the expected
 * value (absolute below 1: |got - expected| <= RTOL * max(|expected|, 1)). Integers compare exactly, as
 * integers; non-finite floats as IEEE does (no tolerance makes a finite value equal an infinity). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/run.h"

/* Exact for integers; a few units in the last place for floats, so that a kernel's own rounding passes. */
static double default_rtol(const char *type)
{
    if (!strcmp(type, "fp64"))
        return 1e-12;
    if (!strcmp(type, "fp32"))
        return 1e-5;
    if (!strcmp(type, "fp16"))
        return 4e-3;
    if (!strcmp(type, "bf16"))
        return 1.6e-2;
    return 0;
}

/* |a - b| of two integers of one kind, exactly, as a double (rounded only when above 2^53). */
static double int_distance(trd_arg_t a, trd_arg_t b)
{
    if (a.kind == TRD_ARG_INT)
        return (double)(a.value.i >= b.value.i ? (uint64_t)a.value.i - (uint64_t)b.value.i
                                               : (uint64_t)b.value.i - (uint64_t)a.value.i);
    return (double)(a.value.bits >= b.value.bits ? a.value.bits - b.value.bits : b.value.bits - a.value.bits);
}

/* One element. Integers compare exactly (within RTOL when one is given); floats as IEEE does: an infinity equals
 * only the infinity of its sign, NaN nothing (NaN with :nan); finite ones within the tolerance. An expected value
 * that the output's integer type cannot hold (a float here) never matches. */
static void compare(struct check_result *r, uint64_t i, trd_arg_t got, trd_arg_t want, int nan_equal)
{
    int same, finite = 1;
    double err = 0, scale = 1;
    if (want.kind != got.kind) {
        same = 0;
        finite = 0;
    } else if (got.kind == TRD_ARG_FLOAT) {
        double g = got.value.f, w = want.value.f;
        same = g == w || (nan_equal && isnan(g) && isnan(w));
        finite = isfinite(g) && isfinite(w);
        err = fabs(g - w);
        scale = fabs(w) > 1 ? fabs(w) : 1;
    } else {
        same = got.value.bits == want.value.bits;
        err = int_distance(got, want);
        double w = value_double(want);
        scale = fabs(w) > 1 ? fabs(w) : 1;
    }
    if (same)
        return;
    if (finite) {
        if (err > r->max_abs)
            r->max_abs = err;
        if (err / scale > r->max_rel)
            r->max_rel = err / scale;
        if (err <= r->rtol * scale)
            return;
    }
    if (r->nshown < CHECK_SHOWN) {
        r->shown[r->nshown].index = i;
        r->shown[r->nshown].got = got;
        r->shown[r->nshown].expected = want;
        r->nshown++;
    }
    r->mismatches++;
}

int run_check(const struct check_spec *c, const struct param *p, const void *got, uint64_t count,
              const struct expr_env *env, struct check_result *r)
{
    memset(r, 0, sizeof *r);
    r->elements = count;
    r->rtol = c->rtol >= 0 ? c->rtol : default_rtol(p->type);
    if (!c->is_expr) {
        char *ref, *what = NULL;
        if (asprintf(&what, "--check %s", c->text) < 0) {
            fprintf(stderr, "trident: out of memory\n");
            return CLI_FAIL;
        }
        int rc = cli_read_file(c->ref, count * p->elem, &ref, NULL, what);
        free(what);
        if (rc)
            return CLI_FAIL;
        for (uint64_t i = 0; i < count; i++)
            compare(r, i, elem_read(got, (size_t)i, p->type), elem_read(ref, (size_t)i, p->type), c->nan_equal);
        free(ref);
        return 0;
    }
    char err[256];
    struct expr *e = expr_compile(c->ref, env->params, env->specs, env->nparams, err, sizeof err);
    if (!e) {
        fprintf(stderr, "trident: --check %s: %s\n", c->text, err);
        return CLI_FAIL;
    }
    uint32_t short_arg = 0;
    uint64_t have = expr_min_count(e, env, &short_arg);
    if (have < count) {
        char a[96], b[96];
        fprintf(stderr, "trident: --check %s: %s has %llu elements, fewer than the %llu of %s\n", c->text,
                param_label(short_arg, &env->params[short_arg], a, sizeof a), (unsigned long long)have,
                (unsigned long long)count, param_label(c->arg, p, b, sizeof b));
        expr_free(e);
        return CLI_FAIL;
    }
    for (uint64_t i = 0; i < count; i++) {
        /* the expected value as the output's type holds it (rounded, or truncated for integers) */
        double v = expr_eval(e, env, i);
        trd_arg_t want;
        if (!value_of(p->type, v, &want))
            want = trd_arg_float(v);
        compare(r, i, elem_read(got, (size_t)i, p->type), want, c->nan_equal);
    }
    expr_free(e);
    return 0;
}
