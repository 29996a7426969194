/* SPDX-License-Identifier: Apache-2.0 */
/* run.h: the parts of `trident run` (and the kernel types `trident info`
 * shares): what the command line asks (run_args.c), the buffers' contents
 * (run_fill.c, elements in types.c), references and checks (run_expr.c,
 * run_check.c), the timed launches (run_time.c) and the report
 * (run_report.c); cmd_run.c puts them together. */
#ifndef TRD_TOOLS_RUN_H
#define TRD_TOOLS_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "base/formats.h" /* libtrident's names of image formats */
#include "base/scalars.h" /* libtrident's scalar types: the values each integer type takes */
#include "tools/cli.h"

#define RUN_MAX_ARGS 512
#define RUN_MAX_OPTIONS 64
#define RUN_MAX_CHECKS 64
#define RUN_MAX_EXPR 4095 /* characters of a --check expression (its operations: run_expr.c's EXPR_NODES) */
#define RUN_MAX_COUNT ((uint64_t)1 << 36) /* elements of one buffer */
#define VALUE_TEXT 32                      /* value_text's longest, with its NUL */

/* ------------------------------------------------------------- types.c */

/* One launch parameter, from the kernel's canonical signature. */
struct param {
    int pointer;
    char *type;    /* the scalar type, or the pointee */
    size_t elem;   /* bytes of the scalar / pointee (0: unknown) */
    char *name;    /* "" when the signature has no names */
};

/* The kernel's launch parameters (trd_kernel_param_info: constexpr ones dropped), malloc'ed, their count in *n;
 * NULL when out of memory (or libtrident fails, its message set). */
struct param *param_list(const trd_kernel_t *kernel, uint32_t *n);
void param_free(struct param *params, uint32_t n);
/* "argument 2 out_ptr" or "argument 2", for messages. */
const char *param_label(uint32_t index, const struct param *p, char *buf, size_t cap);
size_t type_size(const char *type);
int type_is_float(const char *type);
int type_is_fp8(const char *type);
/* The values an integer type holds: 1 with *lo and *hi, 0 for a type that is no integer (floats, fp8). */
int type_int_range(const char *type, int64_t *lo, uint64_t *hi);
/* Element i of an array of `type` from / to a double (integers truncated; fp16, bf16 rounded to nearest even). */
void elem_put(void *base, size_t i, const char *type, double v);
double elem_get(const void *base, size_t i, const char *type);
/* Element i exactly, as a value of its type's kind: TRD_ARG_INT or _UINT for integers, _BITS for fp8, _FLOAT
 * for floats; and back (a value of the type's kind, or a float for a float type). */
trd_arg_t elem_read(const void *base, size_t i, const char *type);
void elem_write(void *base, size_t i, const char *type, trd_arg_t v);
double value_double(trd_arg_t v);
/* A double as the type holds it: floats rounded, integers truncated toward zero; 0 when the type cannot hold it
 * (an integer type: NaN, an infinity, out of its range). */
int value_of(const char *type, double v, trd_arg_t *out);
/* The value as text: integers exactly, floats in the fewest digits that read back as the same element of the type
 * (fp64 for a float standing for an integer type), nan, inf, -inf. */
void value_text(trd_arg_t v, const char *type, char *buf, size_t cap);

/* ---------------------------------------------------------- run_args.c */

enum arg_kind { ARG_SCALAR = 1, ARG_NULL, ARG_BUFFER };
enum fill_kind { FILL_ZERO = 1, FILL_SEQ, FILL_RAND, FILL_CONST, FILL_FILE };

/* One kernel argument as the command line gives it. */
struct arg_spec {
    int kind;          /* enum arg_kind */
    trd_arg_t scalar;  /* ARG_SCALAR */
    uint64_t count;    /* ARG_BUFFER: elements (0 with FILL_FILE: the file's) */
    int fill;          /* enum fill_kind */
    trd_arg_t value;   /* FILL_CONST, checked against the element type as a scalar is */
    uint64_t seed;     /* FILL_RAND */
    const char *path;  /* FILL_FILE */
};

/* One --check: an output compared element by element with a file or an expression. */
struct check_spec {
    const char *text;   /* as given */
    char *target;       /* the argument, by index or name (malloc'ed) */
    uint32_t arg;       /* resolved */
    char *ref;          /* the file's path, or the expression, without the suffixes (malloc'ed) */
    int is_expr;        /* ARG==EXPR */
    double rtol;        /* < 0: the type's default */
    int nan_equal;      /* :nan, NaN matches NaN */
};

struct run_opts {
    const char *kernel;
    const char *device, *signature, *name, *dump;
    const char *options[RUN_MAX_OPTIONS];
    uint32_t noptions;
    uint32_t grid[3];
    uint64_t warmup, repeat, print;
    uint64_t bytes;     /* per launch, with bytes_given */
    int bytes_given;
    int after_last;     /* --outputs last */
    int json;
    const char *args[RUN_MAX_ARGS];
    uint32_t nargs;
    struct check_spec checks[RUN_MAX_CHECKS];
    uint32_t nchecks;
};

/* The options and positional arguments; 0, CLI_OK (-1 for --help, printed) or CLI_USAGE (message printed). */
int run_parse_options(int argc, char **argv, struct run_opts *o, const char *help);
/* What run_parse_options allocated (o itself stays). */
void run_opts_free(struct run_opts *o);
/* One argument against its parameter; 0 or CLI_USAGE. */
int run_parse_arg(const char *text, uint32_t index, const struct param *p, struct arg_spec *out);
/* Resolves the checks' arguments and parses their expressions' syntax against the parameters; 0 or CLI_USAGE. */
int run_resolve_checks(struct run_opts *o, const struct param *params, uint32_t nparams,
                       const struct arg_spec *specs);
/* Every output path and reference file, before anything runs: --dump is a writable directory, each check's file
 * a readable regular file of the buffer's size; 0 or CLI_FAIL (message printed). */
int run_check_paths(const struct run_opts *o, const struct param *params, const struct arg_spec *specs);

/* ---------------------------------------------------------- run_fill.c */

/* The buffer's initial contents (malloc'ed, spec->count elements; for FILL_FILE the file's, its count written
 * to *count): 0, or CLI_FAIL with the message printed. Random fills come from one generator stream per
 * (seed, argument index). */
int run_fill(const struct arg_spec *spec, uint32_t index, const struct param *p, void **data, uint64_t *count);

/* ---------------------------------------------------------- run_expr.c */

struct expr;
/* The values an expression reads: the arguments' initial contents. */
struct expr_env {
    const struct param *params;
    const struct arg_spec *specs;
    void *const *data;       /* buffers' initial contents (NULL for scalars and null) */
    const uint64_t *counts;  /* their elements */
    uint32_t nparams;
};
/* Compiles an element-wise expression (numbers, arguments by name or argN, i, + - * / and parentheses,
 * abs sqrt exp log sin cos tanh floor ceil min max pow, sum(BUFFER)); NULL with the problem in err. */
struct expr *expr_compile(const char *text, const struct param *params, const struct arg_spec *specs,
                          uint32_t nparams, char *err, size_t cap);
/* The expression's value at element i; the buffers it reads must have more than i elements (expr_min_count). */
double expr_eval(struct expr *e, const struct expr_env *env, uint64_t i);
/* The fewest elements among the buffers read element-wise (UINT64_MAX when none), and one of them. */
uint64_t expr_min_count(const struct expr *e, const struct expr_env *env, uint32_t *arg);
void expr_free(struct expr *e);

/* --------------------------------------------------------- run_check.c */

#define CHECK_SHOWN 5

struct check_result {
    uint64_t elements, mismatches;
    double rtol, max_abs, max_rel;
    uint32_t nshown;
    struct {
        uint64_t index;
        trd_arg_t got, expected; /* expected: a float when the output's integer type cannot hold it */
    } shown[CHECK_SHOWN]; /* the first mismatches */
};

/* Compares the output with its reference; 0, or CLI_FAIL when the reference cannot be computed (message
 * printed). Mismatches are results, not failures. */
int run_check(const struct check_spec *c, const struct param *p, const void *got, uint64_t count,
              const struct expr_env *env, struct check_result *r);

/* ---------------------------------------------------------- run_time.c */

struct run_stats {
    uint64_t n;
    double min, median, mean, max, stddev; /* milliseconds */
};

struct run_buffers {
    trd_buffer_t **bufs;     /* per argument, NULL for scalars and null */
    void **result;           /* host copies, filled with the outputs */
    const uint64_t *bytes;
    uint32_t n;
};

/* warmup + repeat launches on a new stream of the device; the repeat ones timed each by a pair of events.
 * The buffers are read into `result` after the first launch, or after the last with after_last. times gets
 * `repeat` milliseconds; 0 or CLI_FAIL (message printed). */
int run_launches(trd_kernel_t *k, trd_device_t *dev, const trd_launch_t *launch, uint64_t warmup, uint64_t repeat,
                 int after_last, const struct run_buffers *b, double *times);
void run_stats_of(double *times, uint64_t n, struct run_stats *s);

/* -------------------------------------------------------- run_report.c */

struct run_report {
    const struct run_opts *o;
    const trd_kernel_info_t *ki;
    const trd_device_props_t *dp;
    const trd_load_info_t *li;
    double load_ms;
    const struct run_stats *stats;
    uint64_t bytes;          /* moved per launch (0: unknown) */
    const struct param *params;
    const struct arg_spec *specs;
    void *const *result;
    const uint64_t *counts;
    const struct check_result *checks;
};

/* The report (text or --json) and the --dump files; 0 or CLI_FAIL. */
int run_report(const struct run_report *r);
/* Prints the failed checks to stderr ("trident: --check ...: 3 of 4096 elements differ ..."); returns how many. */
uint32_t run_report_mismatches(const struct run_report *r);

#endif
