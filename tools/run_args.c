/* SPDX-License-Identifier: Apache-2.0 */
/* run_args.c: what `trident run`'s command line asks, checked before
 * anything runs: options, grid, scalars in their types' ranges, buffer
 * specifications, checks, and the paths it will read and write. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
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
        uint64_t v = 0;
        if (k == 3 || len == 0 || strspn(s, "0123456789") != len)
            return cli_usage("run", "--grid '%s' is not X[,Y[,Z]] with decimal program counts", text);
        if (cli_parse_digits_n(s, len, &v) != 1 || v == 0 || v > INT32_MAX)
            return cli_usage("run", "--grid '%s': %.*s programs along %c; each count is 1 .. 2147483647, in decimal",
                             text, (int)len, s, axis[k]);
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

/* The last ":SUFFIX" of the first *len characters of ref: 1 with *len cut before its ':' and *suffix after it
 * (running to the old *len). */
static int cut_suffix(const char *ref, size_t *len, const char **suffix)
{
    for (size_t k = *len; k > 0; k--)
        if (ref[k - 1] == ':') {
            *suffix = ref + k;
            *len = k - 1;
            return 1;
        }
    return 0;
}

/* "ARG=FILE[:RTOL][:nan]" or "ARG==EXPR[:RTOL][:nan]": RTOL a number in [0, 1) (a suffix that is no number belongs
 * to FILE or EXPR), nan to have NaN match NaN. FILE and ARG are taken whole, however long; an EXPR longer than
 * RUN_MAX_EXPR is refused saying so. */
static int parse_check(const char *text, struct check_spec *c)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return cli_usage("run", "--check '%s' is not ARG=FILE[:RTOL][:nan] or ARG==EXPRESSION[:RTOL][:nan]", text);
    memset(c, 0, sizeof *c);
    c->text = text;
    c->is_expr = eq[1] == '=';
    c->rtol = -1;
    const char *ref = eq + 1 + c->is_expr, *suffix;
    size_t len = strlen(ref), cut = len;
    if (cut_suffix(ref, &cut, &suffix) && strcmp(suffix, "nan") == 0) {
        c->nan_equal = 1;
        len = cut;
    }
    cut = len;
    if (cut_suffix(ref, &cut, &suffix) && !isspace((unsigned char)*suffix)) {
        char *end;
        errno = 0;
        double r = strtod(suffix, &end);
        if (end != suffix && end == ref + len && errno == 0) {
            if (!(r >= 0 && r < 1))
                return cli_usage("run", "--check '%s': the tolerance %.*s is not a number in [0, 1)", text,
                                 (int)(end - suffix), suffix);
            c->rtol = r;
            len = cut;
        }
    }
    if (len == 0)
        return cli_usage("run", "--check '%s': no %s given", text, c->is_expr ? "expression" : "file");
    if (c->is_expr && len > RUN_MAX_EXPR)
        return cli_usage("run", "--check '%.*s==...': the expression is too long: %zu characters, more than the %d "
                         "accepted", (int)(eq - text < 64 ? eq - text : 64), text, len, RUN_MAX_EXPR);
    c->target = strndup(text, (size_t)(eq - text));
    c->ref = strndup(ref, len);
    if (!c->target || !c->ref) {
        fprintf(stderr, "trident: out of memory\n");
        return CLI_FAIL;
    }
    return 0;
}

void run_opts_free(struct run_opts *o)
{
    for (uint32_t c = 0; c < o->nchecks; c++) {
        free(o->checks[c].target);
        free(o->checks[c].ref);
    }
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

/* Where a value is given: a scalar argument, or a buffer's const:V fill. */
struct value_site {
    uint32_t index;
    const struct param *p;
    int fill;
};

static int value_usage(const char *text, const struct value_site *at, const char *problem, const char *range)
{
    char label[96];
    return cli_usage("run", "%s (%s%s): %s'%s' %s%s", param_label(at->index, at->p, label, sizeof label),
                     at->p->pointer ? "*" : "", at->p->type, at->fill ? "const:" : "", text, problem, range);
}

/* A value of the parameter's type (a scalar's, or a buffer's element): one conversion and one check for both.
 * Floats within the type's finite range (or inf, nan), integers in decimal or 0x hex within the type's range, fp8
 * as its bits. */
static int parse_value(const char *text, const struct value_site *at, trd_arg_t *a)
{
    const char *type = at->p->type;
    char range[96];
    if (type_is_float(type)) {
        char *end;
        errno = 0;
        double v = strtod(text, &end);
        if (end == text || *end || isspace((unsigned char)text[0]))
            return value_usage(text, at, "is not a number", "");
        double max = !strcmp(type, "fp16") ? 65504.0 : !strcmp(type, "bf16") ? 3.3895313892515355e38
                   : !strcmp(type, "fp32") ? (double)FLT_MAX : DBL_MAX;
        if ((errno == ERANGE && isinf(v)) || (isfinite(v) && fabs(v) > max)) {
            snprintf(range, sizeof range, " (the largest finite %s is %g)", type, max);
            return value_usage(text, at, "is out of range", range);
        }
        *a = trd_arg_float(v);
        return 0;
    }
    if (type_is_fp8(type)) {
        uint64_t bits;
        if (!cli_parse_u64(text, &bits) || bits > 0xff)
            return value_usage(text, at, at->fill ? "is not an fp8 value" : "is not an fp8 scalar",
                               ", which is given as its bits (0 .. 0xff)");
        *a = trd_arg_bits(bits);
        return 0;
    }
    int64_t lo;
    uint64_t hi;
    if (!type_int_range(type, &lo, &hi))
        return value_usage(text, at, "cannot be given", ": the CLI has no syntax for this type");
    int neg = text[0] == '-';
    uint64_t mag;
    int r = cli_parse_digits(text + neg, &mag);
    if (r == 0)
        return value_usage(text, at, "is not an integer", " (decimal or 0x hex)");
    uint64_t neg_limit = lo < 0 ? (uint64_t)-(lo + 1) + 1 : 0; /* |lo| */
    if (r != 1 || mag > (neg ? neg_limit : hi)) {
        snprintf(range, sizeof range, " for %s (%lld .. %llu)", type, (long long)lo, (unsigned long long)hi);
        return value_usage(text, at, "is out of range", range);
    }
    if (lo < 0)
        *a = trd_arg_int(neg && mag ? -(int64_t)(mag - 1) - 1 : (int64_t)mag);
    else
        *a = trd_arg_uint(mag);
    return 0;
}

/* seq's elements 0 .. count-1, each held exactly by the type (an i8 wrapped after 127, fp16 rounded after 2048). */
static int check_seq(uint64_t count, const struct value_site *at)
{
    const char *type = at->p->type;
    int64_t lo;
    uint64_t most = UINT64_MAX; /* the largest element it holds, and every one below it */
    if (!strcmp(type, "fp16"))
        most = 1u << 11;
    else if (!strcmp(type, "bf16"))
        most = 1u << 8;
    else if (!strcmp(type, "fp32"))
        most = 1u << 24;
    else if (type_is_fp8(type))
        most = 0xff;
    else if (!type_int_range(type, &lo, &most))
        most = UINT64_MAX;
    if (count - 1 <= most)
        return 0;
    char label[96];
    return cli_usage("run", "%s (*%s): seq of %llu elements reaches %llu, more than %s holds exactly (at most %llu "
                     "elements)", param_label(at->index, at->p, label, sizeof label), type, (unsigned long long)count,
                     (unsigned long long)(count - 1), type, (unsigned long long)most + 1);
}

/* "buf:COUNT[:FILL]" or "buf:file:PATH"; FILL is zero, seq, rand[:SEED], const:V or file:PATH. */
static int parse_buffer(const char *spec, const struct value_site *at, struct arg_spec *out)
{
    uint32_t index = at->index;
    const char *rest = spec + 4;
    const char *fill = "zero";
    if (strncmp(rest, "file:", 5) == 0) {
        fill = rest;
    } else {
        const char *colon = strchr(rest, ':');
        size_t len = colon ? (size_t)(colon - rest) : strlen(rest);
        if (len == 0)
            return cli_usage("run", "argument %u '%s': expected buf:COUNT[:FILL]", index, spec);
        if (cli_parse_digits_n(rest, len, &out->count) != 1 || out->count == 0 || out->count > RUN_MAX_COUNT)
            return cli_usage("run", "argument %u '%s': COUNT must be 1 .. 2^36 elements", index, spec);
        if (colon)
            fill = colon + 1;
    }
    int r = 0;
    if (strcmp(fill, "zero") == 0) {
        out->fill = FILL_ZERO;
    } else if (strcmp(fill, "seq") == 0) {
        out->fill = FILL_SEQ;
        r = check_seq(out->count, at);
    } else if (strncmp(fill, "file:", 5) == 0 && fill[5]) {
        out->fill = FILL_FILE;
        out->path = fill + 5;
    } else if (strncmp(fill, "const:", 6) == 0) {
        out->fill = FILL_CONST;
        r = parse_value(fill + 6, at, &out->value);
    } else if (strncmp(fill, "rand", 4) == 0 && (fill[4] == '\0' || fill[4] == ':')) {
        out->fill = FILL_RAND;
        if (fill[4] == ':' && !cli_parse_u64(fill + 5, &out->seed))
            return cli_usage("run", "argument %u: '%s' is not rand[:SEED] (SEED: 0 .. 2^64-1)", index, fill);
    } else {
        return cli_usage("run", "argument %u: fill '%s' is not zero, seq, rand[:SEED], const:V or file:PATH", index,
                         fill);
    }
    out->kind = ARG_BUFFER;
    return r;
}

int run_parse_arg(const char *text, uint32_t index, const struct param *p, struct arg_spec *out)
{
    memset(out, 0, sizeof *out);
    struct value_site at = {.index = index, .p = p, .fill = p->pointer};
    if (!p->pointer) {
        out->kind = ARG_SCALAR;
        return parse_value(text, &at, &out->scalar);
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
    return parse_buffer(text, &at, out);
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
        /* the files it will write: any already there must be regular files (a FIFO hung the run's end) */
        for (uint32_t i = 0; i < o->nargs; i++) {
            char *file = NULL;
            if (specs[i].kind != ARG_BUFFER || asprintf(&file, "%s/arg%u.bin", o->dump, i) < 0)
                continue;
            int special = stat(file, &st) == 0 && !S_ISREG(st.st_mode);
            if (special)
                fprintf(stderr, "trident: --dump %s: '%s' is %s, not a regular file\n", o->dump, file,
                        trd_file_kind(st.st_mode));
            free(file);
            if (special)
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
