/* SPDX-License-Identifier: Apache-2.0 */
/* run_args.c: what `trident run`'s command line asks, checked before
 * anything runs: options, grid, scalars in their types' ranges, buffer
 * specifications, checks, and the paths it will read and write. */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/run.h"

/* "X[,Y[,Z]]" or "XxYxZ": decimal program counts 1 .. 2^31-1 (Triton's i32 program ids), fewer
 * than 2^63 in all, as trd_kernel_launch takes them. */
static int parse_grid(const char *text, uint32_t grid[3])
{
    static const char axis[] = "xyz";
    uint32_t g[3] = {1, 1, 1};
    const char *s = text;
    for (int k = 0;; k++) {
        size_t len = strcspn(s, ",x");
        char num[16];
        if (k == 3 || len == 0 || len >= sizeof num || strspn(s, "0123456789") != len)
            return cli_usage("run", "--grid '%s' is not X[,Y[,Z]] with decimal program counts", text);
        memcpy(num, s, len);
        num[len] = '\0';
        unsigned long long v = strtoull(num, NULL, 10);
        if (v == 0 || v > INT32_MAX)
            return cli_usage("run", "--grid '%s': %s programs along %c; each count is 1 .. 2147483647, in decimal",
                             text, num, axis[k]);
        g[k] = (uint32_t)v;
        s += len;
        if (!*s)
            break;
        s++;
    }
    uint64_t n;
    if (__builtin_mul_overflow((uint64_t)g[0] * g[1], (uint64_t)g[2], &n) || n > INT64_MAX)
        return cli_usage("run", "--grid '%s' has more than 2^63-1 programs", text);
    memcpy(grid, g, sizeof g);
    return 0;
}

static int parse_count(const char *opt, const char *val, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t v;
    if (!cli_parse_u64(val, &v) || v < lo || v > hi)
        return cli_usage("run", "%s '%s' is not %llu .. %llu", opt, val, (unsigned long long)lo,
                         (unsigned long long)hi);
    *out = v;
    return 0;
}

/* "ARG=FILE[:RTOL]" or "ARG==EXPR[:RTOL]". */
static int parse_check(const char *text, struct check_spec *c)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return cli_usage("run", "--check '%s' is not ARG=FILE[:RTOL] or ARG==EXPRESSION[:RTOL]", text);
    memset(c, 0, sizeof *c);
    c->text = text;
    c->is_expr = eq[1] == '=';
    const char *ref = eq + 1 + c->is_expr;
    size_t len = strlen(ref);
    c->rtol = -1;
    const char *colon = strrchr(ref, ':');
    if (colon) {
        char *end;
        errno = 0;
        double r = strtod(colon + 1, &end);
        if (colon[1] && !*end && errno == 0) {
            if (!(r >= 0 && r < 1))
                return cli_usage("run", "--check '%s': the tolerance %s is not a number in [0, 1)", text, colon + 1);
            c->rtol = r;
            len = (size_t)(colon - ref);
        }
    }
    if (len == 0 || len >= sizeof c->ref)
        return cli_usage("run", "--check '%s': no %s given", text, c->is_expr ? "expression" : "file");
    memcpy(c->ref, ref, len);
    c->ref[len] = '\0';
    if ((size_t)(eq - text) >= sizeof c->target)
        return cli_usage("run", "--check '%s': the argument's name is too long", text);
    snprintf(c->target, sizeof c->target, "%.*s", (int)(eq - text), text);
    return 0;
}

int run_parse_options(int argc, char **argv, struct run_opts *o, const char *help)
{
    static const struct option longs[] = {
        {"device", required_argument, NULL, 'd'}, {"grid", required_argument, NULL, 'g'},
        {"signature", required_argument, NULL, 's'}, {"name", required_argument, NULL, 'n'},
        {"option", required_argument, NULL, 'o'}, {"repeat", required_argument, NULL, 'r'},
        {"warmup", required_argument, NULL, 'w'}, {"print", required_argument, NULL, 'p'},
        {"dump", required_argument, NULL, 'D'}, {"bytes", required_argument, NULL, 'b'},
        {"outputs", required_argument, NULL, 'O'}, {"check", required_argument, NULL, 'c'},
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->grid[0] = o->grid[1] = o->grid[2] = 1;
    o->warmup = 1;
    o->repeat = 1;
    /* Options may come before or after KERNEL; "-5" and "-.5" are scalars, not options. */
    const char *pos[RUN_MAX_ARGS + 1];
    uint32_t npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int is_number = a[0] == '-' && ((a[1] >= '0' && a[1] <= '9') || a[1] == '.' || strncmp(a + 1, "inf", 3) == 0 ||
                                        strncmp(a + 1, "nan", 3) == 0);
        int rest = strcmp(a, "--") == 0;
        if (rest || a[0] != '-' || a[1] == '\0' || is_number) {
            for (i += rest; i < argc; i++) {
                if (npos > RUN_MAX_ARGS)
                    return cli_usage("run", "at most %d arguments", RUN_MAX_ARGS);
                pos[npos++] = argv[i];
                if (!rest)
                    break;
            }
            continue;
        }
        const struct option *opt = NULL;
        const char *val = NULL;
        if (a[1] == '-') {
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            for (const struct option *l = longs; l->name; l++)
                if (strlen(l->name) == n && strncmp(l->name, a + 2, n) == 0)
                    opt = l;
            if (eq)
                val = eq + 1;
        } else if (a[2] == '\0') {
            for (const struct option *l = longs; l->name; l++)
                if (l->val == a[1] && strchr("dgsnorpwjh", a[1]))
                    opt = l;
        }
        if (!opt)
            return cli_usage("run", "unknown option '%s'", a);
        if (opt->has_arg == required_argument && !val) {
            if (i + 1 >= argc)
                return cli_usage("run", "option '%s' needs a value", a);
            val = argv[++i];
        } else if (opt->has_arg == no_argument && val) {
            return cli_usage("run", "option '--%s' takes no value", opt->name);
        }
        int r = 0;
        switch (opt->val) {
        case 'd': o->device = val; break;
        case 'g': r = parse_grid(val, o->grid); break;
        case 's': o->signature = val; break;
        case 'n': o->name = val; break;
        case 'o':
            if (o->noptions == RUN_MAX_OPTIONS)
                return cli_usage("run", "at most %d --option", RUN_MAX_OPTIONS);
            if (!strchr(val, '=') || val[0] == '=')
                return cli_usage("run", "--option '%s' is not NAME=VALUE", val);
            o->options[o->noptions++] = val;
            break;
        case 'r': r = parse_count("--repeat", val, 1, 10000000, &o->repeat); break;
        case 'w': r = parse_count("--warmup", val, 0, 10000000, &o->warmup); break;
        case 'p': r = parse_count("--print", val, 0, UINT64_MAX, &o->print); break;
        case 'b':
            r = parse_count("--bytes", val, 0, UINT64_MAX, &o->bytes);
            o->bytes_given = 1;
            break;
        case 'D': o->dump = val; break;
        case 'O':
            if (strcmp(val, "first") != 0 && strcmp(val, "last") != 0)
                return cli_usage("run", "--outputs '%s' is not first or last", val);
            o->after_last = strcmp(val, "last") == 0;
            break;
        case 'c':
            if (o->nchecks == RUN_MAX_CHECKS)
                return cli_usage("run", "at most %d --check", RUN_MAX_CHECKS);
            r = parse_check(val, &o->checks[o->nchecks++]);
            break;
        case 'j': o->json = 1; break;
        case 'h': fputs(help, stdout); return -1;
        default: break;
        }
        if (r)
            return r;
    }
    if (npos == 0)
        return cli_usage("run", "no KERNEL given");
    o->kernel = pos[0];
    o->nargs = npos - 1;
    memcpy(o->args, pos + 1, o->nargs * sizeof *pos);
    return 0;
}

/* The integer types and the values each takes (the library's ranges, checked here as usage errors). */
static const struct {
    const char *name;
    int64_t lo;
    uint64_t hi;
} int_types[] = {
    {"i1", 0, 1},
    {"u1", 0, 1},
    {"i8", INT8_MIN, INT8_MAX},
    {"u8", 0, UINT8_MAX},
    {"i16", INT16_MIN, INT16_MAX},
    {"u16", 0, UINT16_MAX},
    {"i32", INT32_MIN, INT32_MAX},
    {"u32", 0, UINT32_MAX},
    {"i64", INT64_MIN, INT64_MAX},
    {"u64", 0, UINT64_MAX},
};

static int scalar_usage(const char *text, uint32_t index, const struct param *p, const char *problem, const char *range)
{
    char label[96];
    return cli_usage("run", "%s (%s): '%s' %s%s", param_label(index, p, label, sizeof label), p->type, text, problem,
                     range);
}

static int parse_scalar(const char *text, uint32_t index, const struct param *p, trd_arg_t *a)
{
    char range[96];
    if (type_is_float(p->type)) {
        char *end;
        errno = 0;
        double v = strtod(text, &end);
        if (end == text || *end)
            return scalar_usage(text, index, p, "is not a number", "");
        double max = !strcmp(p->type, "fp16") ? 65504.0 : !strcmp(p->type, "bf16") ? 3.3895313892515355e38
                   : !strcmp(p->type, "fp32") ? (double)FLT_MAX : DBL_MAX;
        if ((errno == ERANGE && isinf(v)) || (isfinite(v) && fabs(v) > max)) {
            snprintf(range, sizeof range, " (the largest finite %s is %g)", p->type, max);
            return scalar_usage(text, index, p, "is out of range", range);
        }
        *a = trd_arg_float(v);
        return 0;
    }
    if (type_is_fp8(p->type)) {
        uint64_t bits;
        if (!cli_parse_u64(text, &bits) || bits > 0xff)
            return scalar_usage(text, index, p, "is not an fp8 scalar", ", which is given as its bits (0 .. 0xff)");
        *a = trd_arg_bits(bits);
        return 0;
    }
    size_t t = 0;
    while (t < sizeof int_types / sizeof int_types[0] && strcmp(int_types[t].name, p->type) != 0)
        t++;
    if (t == sizeof int_types / sizeof int_types[0])
        return scalar_usage(text, index, p, "cannot be given", ": the CLI has no syntax for this type");
    int neg = text[0] == '-';
    uint64_t mag;
    int r = cli_parse_digits(text + neg, &mag);
    if (r == 0)
        return scalar_usage(text, index, p, "is not an integer", " (decimal or 0x hex)");
    int64_t lo = int_types[t].lo;
    uint64_t hi = int_types[t].hi;
    uint64_t neg_limit = lo < 0 ? (uint64_t)-(lo + 1) + 1 : 0; /* |lo| */
    if (r != 1 || mag > (neg ? neg_limit : hi)) {
        snprintf(range, sizeof range, " for %s (%lld .. %llu)", p->type, (long long)lo, (unsigned long long)hi);
        return scalar_usage(text, index, p, "is out of range", range);
    }
    if (lo < 0)
        *a = trd_arg_int(neg && mag ? -(int64_t)(mag - 1) - 1 : (int64_t)mag);
    else
        *a = trd_arg_uint(mag);
    return 0;
}

/* "buf:COUNT[:FILL]" or "buf:file:PATH"; FILL is zero, seq, rand[:SEED], const:V or file:PATH. */
static int parse_buffer(const char *spec, uint32_t index, struct arg_spec *out)
{
    const char *rest = spec + 4;
    const char *fill = "zero";
    if (strncmp(rest, "file:", 5) == 0) {
        fill = rest;
    } else {
        char num[32];
        const char *colon = strchr(rest, ':');
        size_t len = colon ? (size_t)(colon - rest) : strlen(rest);
        if (len == 0 || len >= sizeof num)
            return cli_usage("run", "argument %u '%s': expected buf:COUNT[:FILL]", index, spec);
        memcpy(num, rest, len);
        num[len] = '\0';
        if (!cli_parse_u64(num, &out->count) || out->count == 0 || out->count > RUN_MAX_COUNT)
            return cli_usage("run", "argument %u '%s': COUNT must be 1 .. 2^36 elements", index, spec);
        if (colon)
            fill = colon + 1;
    }
    if (strcmp(fill, "zero") == 0) {
        out->fill = FILL_ZERO;
    } else if (strcmp(fill, "seq") == 0) {
        out->fill = FILL_SEQ;
    } else if (strncmp(fill, "file:", 5) == 0 && fill[5]) {
        out->fill = FILL_FILE;
        out->path = fill + 5;
    } else if (strncmp(fill, "const:", 6) == 0) {
        char *end;
        out->value = strtod(fill + 6, &end);
        if (end == fill + 6 || *end)
            return cli_usage("run", "argument %u: '%s' is not const:<number>", index, fill);
        out->fill = FILL_CONST;
    } else if (strncmp(fill, "rand", 4) == 0 && (fill[4] == '\0' || fill[4] == ':')) {
        out->fill = FILL_RAND;
        if (fill[4] == ':' && !cli_parse_u64(fill + 5, &out->seed))
            return cli_usage("run", "argument %u: '%s' is not rand[:SEED] (SEED: 0 .. 2^64-1)", index, fill);
    } else {
        return cli_usage("run", "argument %u: fill '%s' is not zero, seq, rand[:SEED], const:V or file:PATH", index,
                         fill);
    }
    out->kind = ARG_BUFFER;
    return 0;
}

int run_parse_arg(const char *text, uint32_t index, const struct param *p, struct arg_spec *out)
{
    memset(out, 0, sizeof *out);
    if (!p->pointer) {
        out->kind = ARG_SCALAR;
        return parse_scalar(text, index, p, &out->scalar);
    }
    if (strcmp(text, "null") == 0) {
        out->kind = ARG_NULL;
        return 0;
    }
    if (strncmp(text, "buf:", 4) != 0) {
        char label[96];
        return cli_usage("run", "%s is a pointer (*%s): give buf:COUNT[:FILL] or null, not '%s'",
                         param_label(index, p, label, sizeof label), p->type, text);
    }
    return parse_buffer(text, index, out);
}

/* The parameter an argument reference names: its index ("2", "arg2") or its name; -1 when none. */
static int find_param(const char *ref, const struct param *params, uint32_t n)
{
    uint64_t idx;
    const char *digits = strncmp(ref, "arg", 3) == 0 ? ref + 3 : ref;
    if (cli_parse_u64(digits, &idx))
        return idx < n ? (int)idx : -1;
    for (uint32_t i = 0; i < n; i++)
        if (params[i].name[0] && strcmp(params[i].name, ref) == 0)
            return (int)i;
    return -1;
}

int run_resolve_checks(struct run_opts *o, const struct param *params, uint32_t nparams,
                       const struct arg_spec *specs)
{
    for (uint32_t c = 0; c < o->nchecks; c++) {
        struct check_spec *ck = &o->checks[c];
        int a = find_param(ck->target, params, nparams);
        if (a < 0)
            return cli_usage("run", "--check '%s': '%s' is not an argument of the kernel (an index 0 .. %u or a "
                             "parameter's name)", ck->text, ck->target, nparams ? nparams - 1 : 0);
        if (specs[a].kind != ARG_BUFFER)
            return cli_usage("run", "--check '%s': argument %d is %s, not a buffer", ck->text, a,
                             specs[a].kind == ARG_NULL ? "null" : "a scalar");
        if (!params[a].elem || type_is_fp8(params[a].type))
            return cli_usage("run", "--check '%s': argument %d's elements (%s) cannot be compared", ck->text, a,
                             params[a].type);
        ck->arg = (uint32_t)a;
        if (ck->is_expr) {
            char err[256];
            struct expr *e = expr_compile(ck->ref, params, specs, nparams, err, sizeof err);
            if (!e)
                return cli_usage("run", "--check '%s': %s", ck->text, err);
            expr_free(e);
        }
    }
    return 0;
}

int run_check_paths(const struct run_opts *o, const struct param *params, const struct arg_spec *specs)
{
    struct stat st;
    if (o->dump) {
        if (stat(o->dump, &st) != 0) {
            fprintf(stderr, "trident: --dump %s: %s\n", o->dump, strerror(errno));
            return CLI_FAIL;
        }
        if (!S_ISDIR(st.st_mode) || access(o->dump, W_OK | X_OK) != 0) {
            fprintf(stderr, "trident: --dump %s: %s\n", o->dump,
                    !S_ISDIR(st.st_mode) ? "not a directory" : "the directory is not writable");
            return CLI_FAIL;
        }
    }
    for (uint32_t c = 0; c < o->nchecks; c++) {
        const struct check_spec *ck = &o->checks[c];
        if (ck->is_expr)
            continue;
        const struct arg_spec *s = &specs[ck->arg];
        const struct param *p = &params[ck->arg];
        if (stat(ck->ref, &st) != 0) {
            fprintf(stderr, "trident: --check %s: '%s': %s\n", ck->text, ck->ref, strerror(errno));
            return CLI_FAIL;
        }
        if (!S_ISREG(st.st_mode) || access(ck->ref, R_OK) != 0) {
            fprintf(stderr, "trident: --check %s: '%s' is not a readable regular file\n", ck->text, ck->ref);
            return CLI_FAIL;
        }
        /* a buffer filled from a file without COUNT has the file's elements */
        uint64_t count = s->count;
        struct stat bs;
        if (!count && s->fill == FILL_FILE && stat(s->path, &bs) == 0)
            count = (uint64_t)bs.st_size / p->elem;
        if (count && (uint64_t)st.st_size != count * p->elem) {
            fprintf(stderr, "trident: --check %s: '%s' has %llu bytes, not the %llu of argument %u's %llu elements "
                            "of %s\n", ck->text, ck->ref, (unsigned long long)st.st_size,
                    (unsigned long long)(count * p->elem), ck->arg, (unsigned long long)count, p->type);
            return CLI_FAIL;
        }
    }
    return 0;
}
