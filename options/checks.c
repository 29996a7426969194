/* SPDX-License-Identifier: Apache-2.0 */
/* checks.c: validation and derivation helpers that several tables' rows use. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options/options.h"
#include "options/checks.h"

const char *trd_check_pow2(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    (void)o;
    (void)buf;
    (void)cap;
    if (v->kind == TRD_V_INT && (v->i <= 0 || (v->i & (v->i - 1))))
        return "expected a power of two";
    return NULL;
}

const char *trd_check_no_control(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    (void)o;
    (void)buf;
    (void)cap;
    if (v->kind == TRD_V_STR)
        for (const char *c = v->s; *c; c++)
            if ((unsigned char)*c < 0x20)
                return "control characters are not allowed";
    return NULL;
}

const char *trd_instrumentation_unsupported(const char *mode)
{
    /* 3.8 tests for the substring, 3.9 for a name of the comma list: either way "gsan" enables it */
    if (mode && strstr(mode, "gsan"))
        return "instrumentation_mode gsan (Triton 3.8 and newer) gives the kernel launch parameters for GSan's "
               "state that only Triton's own launcher passes; trident cannot launch it";
    return NULL;
}

const char *trd_check_instrumentation(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    const char *e = trd_check_no_control(o, v, buf, cap);
    if (e || v->kind != TRD_V_STR)
        return e;
    return trd_instrumentation_unsupported(v->s);
}

/* extern_libs: each path must be absolute; the file is read when the module
 * is built (and hashed for cache keys), not at parse time. */
const char *trd_check_extern_libs(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap)
{
    (void)o;
    if (v->kind != TRD_V_MAP)
        return NULL;
    for (uint32_t i = 0; i < v->n; i++) {
        const char *name = v->items[2 * i], *path = v->items[2 * i + 1];
        for (const char *c = name; *c; c++)
            if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.')) {
                snprintf(buf, cap, "library name '%.64s' must be [A-Za-z0-9_.-]", name);
                return buf;
            }
        if (path[0] != '/') {
            snprintf(buf, cap, "the path of '%.64s' must be absolute (got '%.128s')", name, path);
            return buf;
        }
    }
    return NULL;
}

const char *trd_options_arch(const struct trd_options *o)
{
    if (!o)
        return NULL;
    const struct trd_option_row *r = trd_row_find(o->table, "arch");
    if (!r)
        return NULL;
    const struct trd_value *v = &o->values[r - o->table->rows];
    return v->kind == TRD_V_STR && *v->s ? v->s : NULL;
}

int trd_options_cuda_cc(const struct trd_options *o)
{
    const char *a = trd_options_arch(o);
    if (!a || strncmp(a, "sm", 2) != 0 || !isdigit((unsigned char)a[2]))
        return -1;
    return atoi(a + 2);
}

int trd_options_gfx(const struct trd_options *o, int *major)
{
    const char *a = trd_options_arch(o);
    if (!a || strncmp(a, "gfx", 3) != 0)
        return 0;
    /* gfx942 -> major 9, gfx1100 -> 11: the last two characters are minor and stepping */
    size_t n = strlen(a + 3);
    if (n < 3)
        return 0;
    char buf[8];
    if (n - 2 >= sizeof buf)
        return 0;
    memcpy(buf, a + 3, n - 2);
    buf[n - 2] = '\0';
    *major = atoi(buf);
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int trd_value_set_sorted(struct trd_value *v, const char **items, uint32_t n)
{
    qsort(items, n, sizeof *items, cmp_str);
    return trd_value_set_list(v, items, n);
}
