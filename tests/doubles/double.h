/* SPDX-License-Identifier: Apache-2.0 */
/* double.h: the harness every vendor test double (cudadouble, hipdouble,
 * zetest_driver) shares, Vulkan-Loader style: the double keeps its state in
 * one struct whose first member is a struct trd_double; a test dlopens the
 * same library the driver loaded (the same object, so the same state) and
 * reaches it through the one exported getter TRD_DOUBLE_STATE_SYMBOL, and
 * empties its record (calls, faults, violations) with TRD_DOUBLE_RESET_SYMBOL. The test sets
 * configuration and faults in the struct in-process; no environment.
 *
 * Faults, one syntax for every double: a comma list of
 *     CALL[#NTH]=CODE
 * CALL the entry point's name, CODE the vendor's status (decimal, or 0x hex),
 * NTH (from 1) the first call that fails, counted from when the fault was set:
 * the calls before it succeed, it and every later one return CODE and do
 * nothing else. Without #NTH every call fails.
 *
 * The one environment variable, for a double loaded in a child process the
 * test cannot reach: TRD_DOUBLE_FAULTS, the same syntax, read when the double
 * is loaded (a bad spec: a message on stderr and exit 1).
 *
 * Call counting and contract violations live here too: a double counts each
 * entry with trd_double_enter and logs each breach of its vendor's documented
 * rules with trd_double_violation; tests assert the log empty
 * (trd_double_violation_count) or holding the violation expected. */
#ifndef TRD_TESTS_DOUBLES_DOUBLE_H
#define TRD_TESTS_DOUBLES_DOUBLE_H

#include <pthread.h>
#include <stddef.h>

#define TRD_DOUBLE_STATE_SYMBOL "trd_double_state"
#define TRD_DOUBLE_RESET_SYMBOL "trd_double_reset"
#define TRD_DOUBLE_FAULTS_ENV "TRD_DOUBLE_FAULTS"

#define TRD_DOUBLE_MAX_CALLS 160
#define TRD_DOUBLE_MAX_FAULTS 16
#define TRD_DOUBLE_MAX_VIOLATIONS 64
#define TRD_DOUBLE_NAME 64

struct trd_double_fault {
    char call[TRD_DOUBLE_NAME];
    unsigned nth;  /* the first call that fails, from 1 */
    unsigned seen; /* calls since the fault was set */
    long code;
};

/* The part of every double's state the harness knows. */
struct trd_double {
    size_t struct_size;       /* of the double's whole state struct */
    const char *name;         /* "cudadouble", "hipdouble", "zetest_driver" */
    pthread_mutex_t lock;     /* guards this struct (a double may use it for its own state too) */
    struct {
        char name[TRD_DOUBLE_NAME];
        unsigned count;
    } calls[TRD_DOUBLE_MAX_CALLS];
    unsigned ncalls;
    struct trd_double_fault faults[TRD_DOUBLE_MAX_FAULTS];
    unsigned nfaults;
    char violations[TRD_DOUBLE_MAX_VIOLATIONS][512];
    unsigned nviolations;     /* every breach seen; the first TRD_DOUBLE_MAX_VIOLATIONS kept */
};

typedef void *trd_double_state_fn(void);
typedef void trd_double_reset_fn(void);

/* Parses a fault spec into out[0 .. *n); 0, or -1 with a message in err naming the entry and what was expected
 * (out and *n untouched then). */
int trd_double_faults_parse(const char *spec, struct trd_double_fault *out, unsigned cap, unsigned *n, char *err,
                            size_t errcap);

/* ---------------------------------------------------- used by the doubles */

/* A state's common part as loaded: name, an empty record, the faults of TRD_DOUBLE_FAULTS (exits 1 on a bad one). */
void trd_double_init(struct trd_double *d, const char *name, size_t struct_size);
/* An empty record: calls, faults (those of TRD_DOUBLE_FAULTS too) and violations; takes the lock. */
void trd_double_clear(struct trd_double *d);
/* Counts a call of `call`; returns the code a fault injects for it, or 0 (every vendor's success). */
long trd_double_enter(struct trd_double *d, const char *call);
/* As trd_double_enter, with the lock held by the caller (a double whose common.lock guards its own state too). */
long trd_double_enter_locked(struct trd_double *d, const char *call);
/* Logs a contract violation (and says it on stderr); the caller need not hold the lock, nor may it. */
void trd_double_violation(struct trd_double *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* As trd_double_violation, with the lock held by the caller. */
void trd_double_violation_locked(struct trd_double *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Defines a double's constructor, trd_double_state and trd_double_reset, for a state `st` whose first member is
 * `common` and whose common.lock guards all of it; `defaults` (called with the lock held) restores the rest. */
#define TRD_DOUBLE_DEFINE(st, name, defaults)                                                                  \
    __attribute__((constructor)) static void trd_double_load_(void)                                            \
    {                                                                                                          \
        trd_double_init(&(st).common, name, sizeof(st));                                                       \
        defaults();                                                                                            \
    }                                                                                                          \
    __attribute__((visibility("default"))) void *trd_double_state(void);                                       \
    __attribute__((visibility("default"))) void trd_double_reset(void);                                        \
    void *trd_double_state(void)                                                                               \
    {                                                                                                          \
        return &(st);                                                                                          \
    }                                                                                                          \
    void trd_double_reset(void)                                                                                \
    {                                                                                                          \
        trd_double_clear(&(st).common);                                                                        \
        pthread_mutex_lock(&(st).common.lock);                                                                 \
        defaults();                                                                                            \
        pthread_mutex_unlock(&(st).common.lock);                                                               \
    }

/* ------------------------------------------------------ used by the tests */

/* Calls of `call` so far. */
unsigned trd_double_calls(struct trd_double *d, const char *call);
/* Sets the faults of `spec` (replacing any); 0, or -1 with err written. */
int trd_double_fail(struct trd_double *d, const char *spec, char *err, size_t errcap);
/* Violations so far, and the index-th (NULL past the end). */
unsigned trd_double_violation_count(struct trd_double *d);
const char *trd_double_violation_get(struct trd_double *d, unsigned index);
/* The state of the double at `path` (dlopened into *dl, RTLD_LOCAL), reset; NULL with err written when it cannot be
 * opened, exports no getter, or its state is smaller than min_size. */
void *trd_double_open(const char *path, size_t min_size, void **dl, char *err, size_t errcap);
/* Resets the double dl. */
void trd_double_reset_dl(void *dl);

#endif
