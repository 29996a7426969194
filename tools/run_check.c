/* SPDX-License-Identifier: Apache-2.0 */
/* run_check.c: `trident run --check`: an output compared element by element
 * with a reference (a file of the output's type, or an expression over the
 * arguments' initial values, stored in the output's type), within a tolerance relative to the expected
 * value (absolute below 1: |got - expected| <= RTOL * max(|expected|, 1)). */
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

static void compare(struct check_result *r, uint64_t i, double got, double want)
{
    double err = fabs(got - want), scale = fabs(want) > 1 ? fabs(want) : 1;
    int same = got == want || (isnan(got) && isnan(want));
    if (!same && isfinite(err)) {
        if (err > r->max_abs)
            r->max_abs = err;
        if (err / scale > r->max_rel)
            r->max_rel = err / scale;
    }
    if (same || err <= r->rtol * scale)
        return;
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
        void *ref;
        char what[4200];
        snprintf(what, sizeof what, "--check %s", c->text);
        if (run_read_file(c->ref, count * p->elem, &ref, NULL, what))
            return CLI_FAIL;
        for (uint64_t i = 0; i < count; i++)
            compare(r, i, elem_get(got, (size_t)i, p->type), elem_get(ref, (size_t)i, p->type));
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
        uint64_t cell = 0;
        elem_put(&cell, 0, p->type, expr_eval(e, env, i));
        compare(r, i, elem_get(got, (size_t)i, p->type), elem_get(&cell, 0, p->type));
    }
    expr_free(e);
    return 0;
}
