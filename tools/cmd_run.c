/* cmd_run.c: `trident run` loads a kernel and launches it; `trident info`
 * shows what a kernel input holds; `trident bundle` packs one. */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tools/cli.h"

#define MAX_ARGS 512
#define MAX_OPTIONS 64

/* A parameter's type as the CLI needs it, from the canonical signature. */
struct ptype {
    int pointer;
    char type[24];   /* scalar type, or the pointee */
    size_t elem;     /* bytes of the scalar / pointee */
    char name[64];
};

static size_t type_size(const char *t)
{
    if (t[0] == '*') /* a pointer to pointers */
        return 8;
    if (!strcmp(t, "i1") || !strcmp(t, "i8") || !strcmp(t, "u8") || !strcmp(t, "u1") || !strncmp(t, "fp8", 3))
        return 1;
    if (!strcmp(t, "i16") || !strcmp(t, "u16") || !strcmp(t, "fp16") || !strcmp(t, "bf16"))
        return 2;
    if (!strcmp(t, "i32") || !strcmp(t, "u32") || !strcmp(t, "fp32"))
        return 4;
    if (!strcmp(t, "i64") || !strcmp(t, "u64") || !strcmp(t, "fp64"))
        return 8;
    return 0;
}

static int is_float_type(const char *t)
{
    return !strcmp(t, "fp16") || !strcmp(t, "bf16") || !strcmp(t, "fp32") || !strcmp(t, "fp64");
}

/* Splits the canonical "x:*fp32,n:i32,B:constexpr" into the launch parameters (names and deep
 * pointee types are only shown, so they may be cut; a scalar type always fits). */
static uint32_t parse_signature(const char *sig, struct ptype *out, uint32_t cap)
{
    uint32_t n = 0;
    for (const char *s = sig; *s && n < cap;) {
        size_t len = strcspn(s, ",");
        const char *colon = memchr(s, ':', len);
        const char *t = colon ? colon + 1 : s;
        int tlen = (int)(s + len - t);
        if (!(tlen == 9 && !memcmp(t, "constexpr", 9))) {
            struct ptype *p = &out[n++];
            memset(p, 0, sizeof *p);
            if (colon)
                snprintf(p->name, sizeof p->name, "%.*s", (int)(colon - s), s);
            p->pointer = t[0] == '*';
            snprintf(p->type, sizeof p->type, "%.*s", tlen - p->pointer, t + p->pointer);
            p->elem = type_size(p->type);
        }
        s += len;
        if (*s == ',')
            s++;
    }
    return n;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static uint16_t half_bits(float f)
{
    /* round-to-nearest-even float -> half, for fill values */
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff)
        return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        m |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), halfv = 1u << (shift - 1);
        if (rem > halfv || (rem == halfv && (q & 1)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t q = m >> 13, rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (q & 1)))
        q++;
    uint32_t v = ((uint32_t)e << 10) + q; /* a carry bumps the exponent */
    if (v >= 0x7c00)
        return (uint16_t)(sign | 0x7c00);
    return (uint16_t)(sign | v);
}

static double half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double bf16_value(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* Writes element i of type t from a double. */
static void put(void *base, size_t i, const char *t, double v)
{
    char *p = (char *)base;
    if (!strcmp(t, "fp32")) {
        float f = (float)v;
        memcpy(p + 4 * i, &f, 4);
    } else if (!strcmp(t, "fp64")) {
        memcpy(p + 8 * i, &v, 8);
    } else if (!strcmp(t, "fp16")) {
        uint16_t h = half_bits((float)v);
        memcpy(p + 2 * i, &h, 2);
    } else if (!strcmp(t, "bf16")) {
        float f = (float)v;
        uint32_t x;
        memcpy(&x, &f, 4);
        uint16_t b = (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
        memcpy(p + 2 * i, &b, 2);
    } else {
        size_t n = type_size(t);
        int64_t iv = (int64_t)v;
        memcpy(p + n * i, &iv, n); /* little-endian: the low bytes */
    }
}

static double get(const void *base, size_t i, const char *t)
{
    const char *p = base;
    if (!strcmp(t, "fp32")) {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    if (!strcmp(t, "fp64")) {
        double d;
        memcpy(&d, p + 8 * i, 8);
        return d;
    }
    if (!strcmp(t, "fp16") || !strcmp(t, "bf16")) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return !strcmp(t, "fp16") ? half_value(h) : bf16_value(h);
    }
    size_t n = type_size(t);
    int64_t v = 0;
    memcpy(&v, p + n * i, n);
    if (t[0] == 'i' && n < 8) { /* sign-extend */
        int shift = (int)(64 - 8 * n);
        v = (int64_t)((uint64_t)v << shift) >> shift;
    }
    return (double)v;
}

struct buffer_arg {
    trd_buffer_t *buf;
    void *host;
    uint64_t count, bytes;
};

/* "buf:COUNT[:FILL]" or "buf:file:PATH". */
static int make_buffer(const char *spec, uint32_t index, const struct ptype *p, trd_device_t *dev,
                       struct buffer_arg *out)
{
    const char *rest = spec + 4;
    uint64_t count = 0;
    const char *fill = "zero";
    char num[32];
    const char *colon = strchr(rest, ':');
    if (strncmp(rest, "file:", 5) == 0) {
        fill = rest;
    } else {
        size_t len = colon ? (size_t)(colon - rest) : strlen(rest);
        if (len == 0 || len >= sizeof num)
            return cli_usage("run", "argument %u '%s': expected buf:COUNT[:FILL]", index, spec);
        memcpy(num, rest, len);
        num[len] = '\0';
        if (!cli_parse_u64(num, &count) || count == 0 || count > ((uint64_t)1 << 36))
            return cli_usage("run", "argument %u '%s': COUNT must be 1 .. 2^36 elements", index, spec);
        if (colon)
            fill = colon + 1;
    }
    size_t elem = p->elem ? p->elem : 1;
    void *host = NULL;
    if (strncmp(fill, "file:", 5) == 0) {
        const char *path = fill + 5;
        FILE *f = fopen(path, "rb");
        if (!f) {
            fprintf(stderr, "trident: argument %u: cannot open '%s': %s\n", index, path, strerror(errno));
            return CLI_FAIL;
        }
        struct stat st;
        if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
            fclose(f);
            fprintf(stderr, "trident: argument %u: '%s' is not a regular file\n", index, path);
            return CLI_FAIL;
        }
        uint64_t bytes = (uint64_t)st.st_size;
        const char *problem = NULL;
        if (count && bytes != count * elem)
            problem = "the COUNT elements given";
        else if (bytes == 0 || bytes % elem)
            problem = "a whole, positive number of elements";
        else if (bytes / elem > ((uint64_t)1 << 36))
            problem = "at most 2^36 elements";
        if (problem) {
            fclose(f);
            fprintf(stderr, "trident: argument %u (*%s): '%s' has %llu bytes, not %s of %zu bytes", index, p->type,
                    path, (unsigned long long)bytes, problem, elem);
            if (count)
                fprintf(stderr, " (%llu bytes)", (unsigned long long)(count * elem));
            fputc('\n', stderr);
            return CLI_FAIL;
        }
        count = bytes / elem;
        host = malloc((size_t)(count * elem));
        if (!host || fread(host, 1, (size_t)(count * elem), f) != count * elem) {
            fclose(f);
            free(host);
            fprintf(stderr, "trident: argument %u: cannot read '%s'\n", index, path);
            return CLI_FAIL;
        }
        fclose(f);
    } else {
        host = calloc(1, (size_t)(count * elem));
        if (!host) {
            fprintf(stderr, "trident: argument %u: out of memory for %llu elements\n", index, (unsigned long long)count);
            return CLI_FAIL;
        }
        if (strcmp(fill, "zero") == 0) {
            /* calloc'ed */
        } else if (strcmp(fill, "seq") == 0) {
            for (uint64_t i = 0; i < count; i++)
                put(host, i, p->type, (double)i);
        } else if (strncmp(fill, "const:", 6) == 0) {
            char *end;
            double v = strtod(fill + 6, &end);
            if (end == fill + 6 || *end) {
                free(host);
                return cli_usage("run", "argument %u: '%s' is not const:<number>", index, fill);
            }
            for (uint64_t i = 0; i < count; i++)
                put(host, i, p->type, v);
        } else if (strncmp(fill, "rand", 4) == 0 && (fill[4] == '\0' || fill[4] == ':')) {
            uint64_t seed = 0x9e3779b97f4a7c15ull ^ (index + 1);
            if (fill[4] == ':' && !cli_parse_u64(fill + 5, &seed)) {
                free(host);
                return cli_usage("run", "argument %u: '%s' is not rand[:SEED]", index, fill);
            }
            if (seed == 0)
                seed = 1;
            for (uint64_t i = 0; i < count; i++) {
                uint64_t r = xorshift(&seed);
                double v = is_float_type(p->type) ? (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0
                                                  : (double)(r % 201) - 100.0;
                if (p->type[0] == 'u')
                    v = (double)(r % 201);
                put(host, i, p->type, v);
            }
        } else {
            free(host);
            return cli_usage("run", "argument %u: fill '%s' is not zero, seq, rand[:SEED], const:V or file:PATH", index,
                             fill);
        }
    }
    out->count = count;
    out->bytes = count * elem;
    out->host = host;
    if (trd_buffer_alloc(dev, out->bytes, &out->buf) != TRD_OK ||
        trd_buffer_write(out->buf, 0, host, out->bytes, NULL) != TRD_OK)
        return cli_fail("argument %u: device buffer of %llu bytes", index, (unsigned long long)out->bytes);
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

static int scalar_usage(const char *text, uint32_t index, const struct ptype *p, const char *problem, const char *range)
{
    return cli_usage("run", "argument %u%s%s (%s): '%s' %s%s", index, p->name[0] ? " " : "", p->name, p->type, text,
                     problem, range);
}

static int parse_scalar(const char *text, uint32_t index, const struct ptype *p, trd_arg_t *a)
{
    char range[96];
    if (is_float_type(p->type)) {
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
    if (!strncmp(p->type, "fp8", 3)) {
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

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *format_name(int32_t f)
{
    static const char *const names[] = {"unknown", "cubin", "ptx", "fatbin", "hsaco", "spirv", "zebin", "so"};
    return f >= 0 && f <= 7 ? names[f] : "?";
}

/* The best device the kernel can run on: a GPU before the host. */
static trd_device_t *pick_device(trd_runtime_t *rt, trd_kernel_t *k)
{
    uint32_t n = 0;
    trd_runtime_device_count(rt, &n);
    trd_device_t *best = NULL;
    trd_device_props_t bp = {.struct_size = sizeof bp};
    for (uint32_t i = 0; i < n; i++) {
        trd_device_t *d;
        int32_t ok = 0;
        trd_runtime_device_get(rt, i, &d);
        trd_kernel_supports(k, d, &ok);
        if (!ok)
            continue;
        trd_device_props_t p = {.struct_size = sizeof p};
        trd_device_get_props(d, &p);
        if (!best || (p.kind == TRD_DEVICE_GPU && bp.kind != TRD_DEVICE_GPU) ||
            (p.kind == bp.kind && p.memory_bytes > bp.memory_bytes)) {
            best = d;
            bp = p;
        }
    }
    return best;
}

static const char run_help[] =
    "usage: trident run KERNEL [options] ARG...\n\n"
    "KERNEL: a Triton cache entry (<name>.json or its directory), a trident bundle, or a raw image\n"
    "(a host shared object, cubin, PTX, HSACO ...; give --name and --signature).\n\n"
    "ARG, one per kernel parameter (constexpr ones excluded), typed by the signature:\n"
    "  NUMBER                  a scalar in its type's range (integers in decimal or 0x hex)\n"
    "  buf:COUNT[:FILL]        a device buffer of COUNT elements of the pointee type; FILL is\n"
    "                          zero (default), seq, rand[:SEED], const:V or file:PATH\n"
    "  buf:file:PATH           a buffer holding the file's bytes\n"
    "  null                    a NULL pointer\n\n"
    "options:\n"
    "  -d, --device SEL        device URI, index or property match (default: the best device the\n"
    "                          kernel has an image for, a GPU before the host)\n"
    "  -g, --grid X[,Y[,Z]]    programs along x, y, z (default 1), decimal, 1 .. 2^31-1 each\n"
    "  -s, --signature SIG     the kernel's signature, e.g. '*fp32,*fp32,i32' ('' for none); a kernel\n"
    "                          that knows its own takes only one that agrees with it\n"
    "  -n, --name NAME         the kernel's name (entry symbol of a raw image)\n"
    "  -o, --option NAME=VALUE a backend option for loading (repeatable)\n"
    "  -r, --repeat N          launch N times and report the median (default 1)\n"
    "  -p, --print N           print the first N elements of every buffer after the run\n"
    "      --dump DIR          write every buffer to DIR/arg<i>.bin after the run\n"
    "      --json              print a JSON report\n";

int cmd_run(int argc, char **argv)
{
    static const struct option longs[] = {
        {"device", required_argument, NULL, 'd'}, {"grid", required_argument, NULL, 'g'},
        {"signature", required_argument, NULL, 's'}, {"name", required_argument, NULL, 'n'},
        {"option", required_argument, NULL, 'o'}, {"repeat", required_argument, NULL, 'r'},
        {"print", required_argument, NULL, 'p'}, {"dump", required_argument, NULL, 'D'},
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    const char *device = NULL, *signature = NULL, *name = NULL, *dump = NULL;
    const char *opts[MAX_OPTIONS];
    uint32_t nopts = 0, grid[3] = {1, 1, 1};
    uint64_t repeat = 1, print = 0;
    int json = 0;
    /* Options may come before or after KERNEL; "-5" and "-.5" are scalars, not options. */
    const char *pos[MAX_ARGS + 1];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int is_number = a[0] == '-' && ((a[1] >= '0' && a[1] <= '9') || a[1] == '.' || strncmp(a + 1, "inf", 3) == 0 ||
                                        strncmp(a + 1, "nan", 3) == 0);
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++) {
                if (npos > MAX_ARGS)
                    return cli_usage("run", "at most %d arguments", MAX_ARGS);
                pos[npos++] = argv[i];
            }
            break;
        }
        if (a[0] != '-' || a[1] == '\0' || is_number) {
            if (npos > MAX_ARGS)
                return cli_usage("run", "at most %d arguments", MAX_ARGS);
            pos[npos++] = a;
            continue;
        }
        const struct option *o = NULL;
        const char *val = NULL;
        if (a[1] == '-') {
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            for (const struct option *l = longs; l->name; l++)
                if (strlen(l->name) == n && strncmp(l->name, a + 2, n) == 0)
                    o = l;
            if (eq)
                val = eq + 1;
        } else if (a[2] == '\0') {
            for (const struct option *l = longs; l->name; l++)
                if (l->val == a[1])
                    o = l;
        }
        if (!o)
            return cli_usage("run", "unknown option '%s'", a);
        if (o->has_arg == required_argument && !val) {
            if (i + 1 >= argc)
                return cli_usage("run", "option '%s' needs a value", a);
            val = argv[++i];
        } else if (o->has_arg == no_argument && val) {
            return cli_usage("run", "option '--%s' takes no value", o->name);
        }
        switch (o->val) {
        case 'd': device = val; break;
        case 'g':
            if (parse_grid(val, grid))
                return CLI_USAGE;
            break;
        case 's': signature = val; break;
        case 'n': name = val; break;
        case 'o':
            if (nopts == MAX_OPTIONS)
                return cli_usage("run", "at most %d --option", MAX_OPTIONS);
            if (!strchr(val, '='))
                return cli_usage("run", "--option '%s' is not NAME=VALUE", val);
            opts[nopts++] = val;
            break;
        case 'r':
            if (!cli_parse_u64(val, &repeat) || repeat == 0 || repeat > 1000000)
                return cli_usage("run", "--repeat '%s' is not 1 .. 1000000", val);
            break;
        case 'p':
            if (!cli_parse_u64(val, &print))
                return cli_usage("run", "--print '%s' is not a count", val);
            break;
        case 'D': dump = val; break;
        case 'j': json = 1; break;
        case 'h': fputs(run_help, stdout); return CLI_OK;
        default: break;
        }
    }
    if (npos == 0)
        return cli_usage("run", "no KERNEL given");
    const char *path = pos[0];
    int nargs = npos - 1;
    const char *const *argp = pos + 1;

    trd_runtime_t *rt = cli_runtime();
    if (!rt)
        return CLI_FAIL;
    int rc = CLI_FAIL;
    trd_kernel_t *k = NULL;
    trd_options_t *options = NULL;
    trd_stream_t *stream = NULL;
    trd_event_t *ev0 = NULL, *ev1 = NULL;
    struct buffer_arg bufs[MAX_ARGS];
    memset(bufs, 0, sizeof bufs);
    trd_arg_t args[MAX_ARGS];
    struct ptype types[MAX_ARGS];
    double *times = NULL;

    trd_kernel_desc_t desc = {.struct_size = sizeof desc, .path = path, .name = name, .signature = signature};
    if (trd_kernel_create(rt, &desc, &k) != TRD_OK) {
        rc = cli_error();
        goto done;
    }
    /* The arguments against the signature, before any device work. */
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    trd_kernel_get_info(k, &ki);
    uint32_t nparams = parse_signature(ki.signature, types, MAX_ARGS);
    if ((uint32_t)nargs != nparams) {
        rc = cli_usage("run", "kernel '%s' takes %u arguments (%s), %d given", ki.name, nparams, ki.signature, nargs);
        goto done;
    }
    for (int i = 0; i < nargs; i++) {
        const char *a = argp[i];
        if (!types[i].pointer) {
            if ((rc = parse_scalar(a, (uint32_t)i, &types[i], &args[i])) != 0)
                goto done;
        } else if (strcmp(a, "null") == 0) {
            args[i] = trd_arg_ptr(NULL);
        } else if (strncmp(a, "buf:", 4) != 0) {
            rc = cli_usage("run", "argument %d%s%s is a pointer (*%s): give buf:COUNT[:FILL] or null, not '%s'", i,
                           types[i].name[0] ? " " : "", types[i].name, types[i].type, a);
            goto done;
        }
    }
    rc = CLI_FAIL;
    trd_device_t *dev = NULL;
    if (device) {
        if (trd_runtime_device_find(rt, device, &dev) != TRD_OK) {
            rc = cli_fail("--device %s", device);
            goto done;
        }
    } else if (!(dev = pick_device(rt, k))) {
        fprintf(stderr, "trident: no device can run '%s' (see 'trident info %s' and 'trident devices')\n", path, path);
        goto done;
    }
    if (nopts) {
        if (trd_options_create_for_device(dev, &options) != TRD_OK) {
            rc = cli_fail("options");
            goto done;
        }
        for (uint32_t i = 0; i < nopts; i++) {
            char nm[128];
            const char *eq = strchr(opts[i], '=');
            snprintf(nm, sizeof nm, "%.*s", (int)((size_t)(eq - opts[i]) < 127 ? (size_t)(eq - opts[i]) : 127), opts[i]);
            if (trd_options_set(options, nm, eq + 1) != TRD_OK) {
                rc = cli_usage("run", "--option %s: %s", opts[i], trd_error_message());
                goto done;
            }
        }
        trd_kernel_destroy(k);
        k = NULL;
        desc.options = options;
        if (trd_kernel_create(rt, &desc, &k) != TRD_OK) {
            rc = cli_error();
            goto done;
        }
        trd_kernel_get_info(k, &ki);
    }
    for (int i = 0; i < nargs; i++) {
        if (!types[i].pointer || strcmp(argp[i], "null") == 0)
            continue;
        int r = make_buffer(argp[i], (uint32_t)i, &types[i], dev, &bufs[i]);
        if (r) {
            rc = r;
            goto done;
        }
        args[i] = trd_arg_buffer(bufs[i].buf);
    }
    trd_device_props_t dp = {.struct_size = sizeof dp};
    trd_device_get_props(dev, &dp);
    trd_load_info_t li = {.struct_size = sizeof li};
    double t0 = now_ms();
    if (trd_kernel_load(k, dev, &li) != TRD_OK) {
        rc = cli_error();
        goto done;
    }
    double load_ms = now_ms() - t0;
    if (trd_stream_create(dev, &stream) != TRD_OK || trd_event_create(dev, &ev0) != TRD_OK ||
        trd_event_create(dev, &ev1) != TRD_OK) {
        rc = cli_fail("stream on %s", dp.uri);
        goto done;
    }
    times = calloc(repeat, sizeof *times);
    if (!times) {
        fprintf(stderr, "trident: out of memory\n");
        goto done;
    }
    trd_launch_t launch = {.struct_size = sizeof launch, .grid = {grid[0], grid[1], grid[2]},
                           .num_args = (uint32_t)nargs, .args = args, .stream = stream};
    for (uint64_t r = 0; r < repeat; r++) {
        if (trd_event_record(ev0, stream) != TRD_OK || trd_kernel_launch(k, &launch) != TRD_OK ||
            trd_event_record(ev1, stream) != TRD_OK || trd_event_synchronize(ev1) != TRD_OK ||
            trd_event_elapsed(ev0, ev1, &times[r]) != TRD_OK) {
            rc = cli_error();
            goto done;
        }
    }
    if (trd_stream_synchronize(stream) != TRD_OK) {
        rc = cli_fail("running '%s' on %s", ki.name, dp.uri);
        goto done;
    }
    qsort(times, repeat, sizeof *times, cmp_double);
    double median = times[repeat / 2];
    json_t *report = json ? json_object() : NULL;
    if (json) {
        json_object_set_new(report, "kernel", json_string(ki.name));
        json_object_set_new(report, "signature", json_string(ki.signature));
        json_object_set_new(report, "device", json_string(dp.uri));
        json_object_set_new(report, "format", json_string(format_name(li.format)));
        json_object_set_new(report, "grid", json_pack("[iii]", grid[0], grid[1], grid[2]));
        json_object_set_new(report, "load_ms", json_real(load_ms));
        json_object_set_new(report, "launch_ms_median", json_real(median));
        json_object_set_new(report, "launch_ms_min", json_real(times[0]));
        json_object_set_new(report, "repeat", json_integer((json_int_t)repeat));
        json_object_set_new(report, "registers", json_integer(li.registers));
        json_object_set_new(report, "spills", json_integer(li.spills));
    } else {
        printf("kernel %s (%s) on %s (%s, %s), %s image\n", ki.name, ki.signature, dp.uri, dp.name, dp.arch,
               format_name(li.format));
        printf("grid %ux%ux%u, block %u threads, shared %u B, registers %u, spills %u\n", grid[0], grid[1], grid[2],
               li.block_size, li.shared, li.registers, li.spills);
        printf("load %.3f ms; launch %.4f ms (median of %llu, min %.4f)\n", load_ms, median,
               (unsigned long long)repeat, times[0]);
    }
    json_t *outs = json ? json_array() : NULL;
    for (int i = 0; i < nargs; i++) {
        if (!bufs[i].buf)
            continue;
        if (trd_buffer_read(bufs[i].buf, 0, bufs[i].host, bufs[i].bytes, NULL) != TRD_OK) {
            json_decref(report);
            json_decref(outs);
            rc = cli_fail("reading argument %d", i);
            goto done;
        }
        json_t *o = json ? json_pack("{s:i, s:s, s:I}", "arg", i, "type", types[i].type, "count",
                                     (json_int_t)bufs[i].count)
                         : NULL;
        if (dump) {
            char file[4096];
            snprintf(file, sizeof file, "%s/arg%d.bin", dump, i);
            FILE *f = fopen(file, "wb");
            if (!f || fwrite(bufs[i].host, 1, (size_t)bufs[i].bytes, f) != bufs[i].bytes) {
                if (f)
                    fclose(f);
                fprintf(stderr, "trident: cannot write '%s': %s\n", file, strerror(errno));
                json_decref(o);
                json_decref(report);
                json_decref(outs);
                goto done;
            }
            fclose(f);
            if (o)
                json_object_set_new(o, "file", json_string(file));
        }
        if (print) {
            uint64_t n = print < bufs[i].count ? print : bufs[i].count;
            json_t *vals = json ? json_array() : NULL;
            if (!json)
                printf("arg %d%s%s (*%s):", i, types[i].name[0] ? " " : "", types[i].name, types[i].type);
            for (uint64_t e = 0; e < n; e++) {
                double v = get(bufs[i].host, (size_t)e, types[i].type);
                if (json)
                    json_array_append_new(vals, json_real(v));
                else
                    printf(" %g", v);
            }
            if (json)
                json_object_set_new(o, "values", vals);
            else
                printf("%s\n", n < bufs[i].count ? " ..." : "");
        }
        if (o)
            json_array_append_new(outs, o);
    }
    if (json) {
        json_object_set_new(report, "buffers", outs);
        rc = cli_print_json(report);
    } else {
        rc = CLI_OK;
    }
done:
    free(times);
    for (int i = 0; i < MAX_ARGS; i++) {
        trd_buffer_free(bufs[i].buf);
        free(bufs[i].host);
    }
    trd_event_destroy(ev0);
    trd_event_destroy(ev1);
    trd_stream_destroy(stream);
    trd_kernel_destroy(k);
    trd_options_destroy(options);
    trd_runtime_destroy(rt);
    return rc;
}

int cmd_info(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs("usage: trident info KERNEL [--name NAME] [--signature SIG]\n\n"
              "The kernel's name, signature and targets (format, backend, arch, size, num_warps, shared).\n",
              stdout);
        return CLI_OK;
    }
    static const struct option longs[] = {{"name", required_argument, NULL, 'n'},
                                          {"signature", required_argument, NULL, 's'}, {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    const char *name = NULL, *sig = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "n:s:", longs, NULL)) != -1) {
        if (c == 'n')
            name = optarg;
        else if (c == 's')
            sig = optarg;
        else
            return cli_usage("info", "unknown option '%s'", argv[optind - 1]);
    }
    if (argc - optind != 1)
        return cli_usage("info", "expected one KERNEL");
    trd_runtime_t *rt = cli_runtime();
    if (!rt)
        return CLI_FAIL;
    trd_kernel_t *k;
    trd_kernel_desc_t desc = {.struct_size = sizeof desc, .path = argv[optind], .name = name, .signature = sig};
    if (trd_kernel_create(rt, &desc, &k) != TRD_OK) {
        int rc = cli_error();
        trd_runtime_destroy(rt);
        return rc;
    }
    trd_kernel_info_t ki = {.struct_size = sizeof ki};
    trd_kernel_get_info(k, &ki);
    printf("kernel %s\nsignature %s\nparameters %u\n", ki.name, ki.signature, ki.num_params);
    for (uint32_t i = 0; i < ki.num_targets; i++) {
        trd_target_info_t t = {.struct_size = sizeof t};
        trd_kernel_target_info(k, i, &t);
        printf("target %u: %s %s:%s, %llu bytes, num_warps %u, num_ctas %u, warp_size %u, shared %u\n", i,
               format_name(t.format), t.backend, t.arch, (unsigned long long)t.size, t.num_warps, t.num_ctas,
               t.warp_size, t.shared);
    }
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
    return CLI_OK;
}
