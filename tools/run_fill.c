/* SPDX-License-Identifier: Apache-2.0 */
/* run_fill.c: the initial contents of `trident run`'s buffers.
 *
 * Random fills come from xoshiro256** (Blackman and Vigna), its state seeded
 * by splitmix64 from the seed and the argument's index, so that every
 * (seed, argument) pair has a stream of its own: two buffers of one run
 * differ, and so do neighbouring seeds from their first element on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/run.h"

struct rng {
    uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed, uint32_t stream)
{
    uint64_t x = seed;
    uint64_t key = splitmix64(&x) ^ (0xd1b54a32d192ed03ull * ((uint64_t)stream + 1));
    for (int k = 0; k < 4; k++)
        r->s[k] = splitmix64(&key);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* A random element of the type: floats uniform in [-1, 1), signed integers in [-100, 100], unsigned ones in
 * [0, 200], booleans 0 or 1, fp8 a finite bit pattern of either sign. */
static double rand_value(struct rng *r, const struct param *p)
{
    uint64_t x = rng_next(r);
    if (type_is_float(p->type))
        return (double)(x >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    if (type_is_fp8(p->type))
        return (double)((x >> 8) % 0x78 | ((x & 1) << 7));
    if (!strcmp(p->type, "i1") || !strcmp(p->type, "u1"))
        return (double)(x >> 63);
    return p->type[0] == 'u' ? (double)((x >> 8) % 201) : (double)((x >> 8) % 201) - 100.0;
}

/* buf:file:PATH and buf:COUNT:file:PATH: the file's bytes, a whole number of elements (COUNT of them when given). */
static int fill_file(const struct arg_spec *spec, uint32_t index, const struct param *p, void **data, uint64_t *count)
{
    size_t elem = p->elem ? p->elem : 1;
    char what[32];
    snprintf(what, sizeof what, "argument %u", index);
    struct stat st;
    if (stat(spec->path, &st) == 0 && S_ISREG(st.st_mode)) {
        uint64_t bytes = (uint64_t)st.st_size;
        const char *problem = NULL;
        if (spec->count && bytes != spec->count * elem)
            problem = "the COUNT elements given";
        else if (bytes == 0 || bytes % elem)
            problem = "a whole, positive number of elements";
        else if (bytes / elem > RUN_MAX_COUNT)
            problem = "at most 2^36 elements";
        if (problem) {
            fprintf(stderr, "trident: argument %u (*%s): '%s' has %llu bytes, not %s of %zu bytes", index, p->type,
                    spec->path, (unsigned long long)bytes, problem, elem);
            if (spec->count)
                fprintf(stderr, " (%llu bytes)", (unsigned long long)(spec->count * elem));
            fputc('\n', stderr);
            return CLI_FAIL;
        }
    }
    uint64_t size;
    char *bytes;
    if (cli_read_file(spec->path, 0, &bytes, &size, what))
        return CLI_FAIL;
    *data = bytes;
    *count = size / elem;
    return 0;
}

int run_fill(const struct arg_spec *spec, uint32_t index, const struct param *p, void **data, uint64_t *count)
{
    if (spec->fill == FILL_FILE)
        return fill_file(spec, index, p, data, count);
    size_t elem = p->elem ? p->elem : 1;
    void *host = calloc(1, (size_t)(spec->count * elem));
    if (!host) {
        fprintf(stderr, "trident: argument %u: out of memory for %llu elements\n", index,
                (unsigned long long)spec->count);
        return CLI_FAIL;
    }
    struct rng r;
    if (spec->fill == FILL_RAND)
        rng_seed(&r, spec->seed, index);
    for (uint64_t i = 0; i < spec->count && spec->fill != FILL_ZERO; i++) {
        if (spec->fill == FILL_CONST)
            elem_write(host, (size_t)i, p->type, spec->value);
        else
            elem_put(host, (size_t)i, p->type, spec->fill == FILL_SEQ ? (double)i : rand_value(&r, p));
    }
    *data = host;
    *count = spec->count;
    return 0;
}
