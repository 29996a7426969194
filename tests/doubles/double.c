/* SPDX-License-Identifier: Apache-2.0 */
/* double.c: the harness of the vendor test doubles (double.h). */
#include "tests/doubles/double.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One entry, [s, end): CALL[#NTH]=CODE. */
static int fault_parse(const char *s, const char *end, struct trd_double_fault *f, char *err, size_t errcap)
{
    int len = (int)(end - s);
    const char *eq = memchr(s, '=', (size_t)(end - s));
    const char *hash = memchr(s, '#', (size_t)(end - s));
    if (!eq) {
        snprintf(err, errcap, "fault '%.*s': expected CALL[#NTH]=CODE, found no '='", len, s);
        return -1;
    }
    const char *name_end = hash && hash < eq ? hash : eq;
    size_t nlen = (size_t)(name_end - s);
    if (nlen == 0 || nlen >= sizeof f->call) {
        snprintf(err, errcap, "fault '%.*s': the call name must be 1 to %zu characters", len, s,
                 sizeof f->call - 1);
        return -1;
    }
    for (const char *c = s; c < name_end; c++)
        if (!(*c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))) {
            snprintf(err, errcap, "fault '%.*s': the call name '%.*s' is not an identifier", len, s, (int)nlen, s);
            return -1;
        }
    unsigned nth = 1;
    if (name_end == hash) {
        char *p;
        errno = 0;
        unsigned long v = strtoul(hash + 1, &p, 10);
        if (p == hash + 1 || p != eq || errno || v == 0 || v > 1000000 || hash[1] == '-' || hash[1] == '+') {
            snprintf(err, errcap, "fault '%.*s': NTH '%.*s' is not a call number from 1 to 1000000", len, s,
                     (int)(eq - hash - 1), hash + 1);
            return -1;
        }
        nth = (unsigned)v;
    }
    char *p;
    errno = 0;
    long code = strtol(eq + 1, &p, 0);
    if (p == eq + 1 || p != end || errno || code == 0 || code < -2147483648L || code > 4294967295L) {
        snprintf(err, errcap, "fault '%.*s': CODE '%.*s' is not a nonzero status (decimal or 0x hex)", len, s,
                 (int)(end - eq - 1), eq + 1);
        return -1;
    }
    memset(f, 0, sizeof *f);
    memcpy(f->call, s, nlen);
    f->nth = nth;
    f->code = code;
    return 0;
}

int trd_double_faults_parse(const char *spec, struct trd_double_fault *out, unsigned cap, unsigned *n, char *err,
                            size_t errcap)
{
    struct trd_double_fault parsed[TRD_DOUBLE_MAX_FAULTS];
    unsigned k = 0;
    if (!spec) {
        snprintf(err, errcap, "fault spec: NULL, expected CALL[#NTH]=CODE[,...]");
        return -1;
    }
    for (const char *s = spec; *s;) {
        const char *end = strchr(s, ',');
        if (!end)
            end = s + strlen(s);
        if (end == s) {
            snprintf(err, errcap, "fault spec '%s': an empty entry at offset %zu", spec, (size_t)(s - spec));
            return -1;
        }
        if (k == cap || k == TRD_DOUBLE_MAX_FAULTS) {
            snprintf(err, errcap, "fault spec '%s': more than %u faults", spec,
                     cap < TRD_DOUBLE_MAX_FAULTS ? cap : TRD_DOUBLE_MAX_FAULTS);
            return -1;
        }
        if (fault_parse(s, end, &parsed[k++], err, errcap) != 0)
            return -1;
        if (!*end)
            break;
        s = end + 1;
        if (!*s) {
            snprintf(err, errcap, "fault spec '%s': a trailing ','", spec);
            return -1;
        }
    }
    memcpy(out, parsed, k * sizeof *parsed);
    *n = k;
    return 0;
}

/* ------------------------------------------------------------ the doubles */

static void record_clear(struct trd_double *d)
{
    memset(d->calls, 0, sizeof d->calls);
    d->ncalls = 0;
    d->nfaults = 0;
    d->nviolations = 0;
}

void trd_double_init(struct trd_double *d, const char *name, size_t struct_size)
{
    d->struct_size = struct_size;
    d->name = name;
    pthread_mutex_init(&d->lock, NULL);
    record_clear(d);
    const char *env = getenv(TRD_DOUBLE_FAULTS_ENV);
    char err[256];
    if (env && trd_double_faults_parse(env, d->faults, TRD_DOUBLE_MAX_FAULTS, &d->nfaults, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s: %s\n", name, TRD_DOUBLE_FAULTS_ENV, err);
        exit(1);
    }
}

void trd_double_clear(struct trd_double *d)
{
    pthread_mutex_lock(&d->lock);
    record_clear(d);
    pthread_mutex_unlock(&d->lock);
}

long trd_double_enter(struct trd_double *d, const char *call)
{
    pthread_mutex_lock(&d->lock);
    long code = trd_double_enter_locked(d, call);
    pthread_mutex_unlock(&d->lock);
    return code;
}

long trd_double_enter_locked(struct trd_double *d, const char *call)
{
    long code = 0;
    unsigned i;
    for (i = 0; i < d->ncalls && strcmp(d->calls[i].name, call) != 0; i++)
        ;
    if (i == d->ncalls && d->ncalls < TRD_DOUBLE_MAX_CALLS) {
        snprintf(d->calls[i].name, sizeof d->calls[i].name, "%s", call);
        d->ncalls++;
    }
    if (i < d->ncalls)
        d->calls[i].count++;
    else /* uncounted, so "never called" would pass: a violation instead */
        trd_double_violation_locked(d, "%s: more than %d entry points called: %s is not counted", d->name,
                                    TRD_DOUBLE_MAX_CALLS, call);
    for (unsigned f = 0; f < d->nfaults; f++) {
        struct trd_double_fault *p = &d->faults[f];
        if (strcmp(p->call, call) == 0 && code == 0 && ++p->seen >= p->nth)
            code = p->code;
    }
    return code;
}

static void violation_v(struct trd_double *d, const char *fmt, va_list ap)
{
    char msg[sizeof d->violations[0]];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (d->nviolations < TRD_DOUBLE_MAX_VIOLATIONS)
        memcpy(d->violations[d->nviolations], msg, sizeof msg);
    d->nviolations++;
    fprintf(stderr, "%s: contract violated: %s\n", d->name, msg);
}

void trd_double_violation_locked(struct trd_double *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    violation_v(d, fmt, ap);
    va_end(ap);
}

void trd_double_violation(struct trd_double *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&d->lock);
    violation_v(d, fmt, ap);
    pthread_mutex_unlock(&d->lock);
    va_end(ap);
}

/* -------------------------------------------------------------- the tests */

unsigned trd_double_calls(struct trd_double *d, const char *call)
{
    unsigned n = 0;
    pthread_mutex_lock(&d->lock);
    for (unsigned i = 0; i < d->ncalls; i++)
        if (strcmp(d->calls[i].name, call) == 0)
            n = d->calls[i].count;
    pthread_mutex_unlock(&d->lock);
    return n;
}

int trd_double_fail(struct trd_double *d, const char *spec, char *err, size_t errcap)
{
    struct trd_double_fault f[TRD_DOUBLE_MAX_FAULTS];
    unsigned n;
    if (trd_double_faults_parse(spec, f, TRD_DOUBLE_MAX_FAULTS, &n, err, errcap) != 0)
        return -1;
    pthread_mutex_lock(&d->lock);
    memcpy(d->faults, f, n * sizeof *f);
    d->nfaults = n;
    pthread_mutex_unlock(&d->lock);
    return 0;
}

unsigned trd_double_violation_count(struct trd_double *d)
{
    pthread_mutex_lock(&d->lock);
    unsigned n = d->nviolations;
    pthread_mutex_unlock(&d->lock);
    return n;
}

const char *trd_double_violation_get(struct trd_double *d, unsigned index)
{
    pthread_mutex_lock(&d->lock);
    const char *v = index < d->nviolations && index < TRD_DOUBLE_MAX_VIOLATIONS ? d->violations[index] : NULL;
    pthread_mutex_unlock(&d->lock);
    return v;
}

void trd_double_reset_dl(void *dl)
{
    trd_double_reset_fn *reset;
    *(void **)&reset = dlsym(dl, TRD_DOUBLE_RESET_SYMBOL);
    if (reset)
        reset();
}

void *trd_double_open(const char *path, size_t min_size, void **dl, char *err, size_t errcap)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errcap, "test double %s: %s", path, dlerror());
        return NULL;
    }
    trd_double_state_fn *state;
    trd_double_reset_fn *reset;
    *(void **)&state = dlsym(h, TRD_DOUBLE_STATE_SYMBOL);
    *(void **)&reset = dlsym(h, TRD_DOUBLE_RESET_SYMBOL);
    struct trd_double *d = state ? state() : NULL;
    if (!d || !reset || d->struct_size < min_size) {
        snprintf(err, errcap, "test double %s: %s", path,
                 !state || !reset ? "exports no " TRD_DOUBLE_STATE_SYMBOL " or " TRD_DOUBLE_RESET_SYMBOL
                                  : "its state is older than this test's header");
        dlclose(h);
        return NULL;
    }
    reset();
    *dl = h;
    return d;
}
