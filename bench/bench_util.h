/* SPDX-License-Identifier: Apache-2.0 */
/* bench_util.h: what the benchmark programs share: failing loudly on a trident or CUDA error, a monotonic clock,
 * medians and reading a file. Define BENCH_NAME (the program's name) before including it. */
#ifndef TRD_BENCH_UTIL_H
#define TRD_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        trd_status_t st_ = (call);                                                                     \
        if (st_ != TRD_OK) {                                                                           \
            fprintf(stderr, BENCH_NAME ": %s: %s\n", #call, trd_error_message());                      \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)
#define CU(call)                                                                                       \
    do {                                                                                               \
        CUresult r_ = (call);                                                                          \
        if (r_ != CUDA_SUCCESS) {                                                                      \
            fprintf(stderr, BENCH_NAME ": %s failed: %d\n", #call, (int)r_);                           \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

static inline double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static inline int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v. */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp);
    return v[n / 2];
}

/* The bytes of a file (exits when it cannot be read); *size gets their count. */
static inline void *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, BENCH_NAME ": cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    void *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, BENCH_NAME ": cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

#endif
