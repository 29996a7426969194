/* SPDX-License-Identifier: Apache-2.0 */
/* zetest_spirv.c: a small reader of the SPIR-V instructions the test driver
 * needs (see the SPIR-V specification, section 2.3 "Physical Layout"). */
#include <stdlib.h>
#include <string.h>

#include "tests/levelzero/zetest_spirv.h"

#define SPV_MAGIC 0x07230203u

enum {
    OP_ENTRY_POINT = 15,
    OP_EXECUTION_MODE = 16,
    OP_TYPE_INT = 21,
    OP_TYPE_FLOAT = 22,
    OP_TYPE_VECTOR = 23,
    OP_TYPE_POINTER = 32,
    OP_TYPE_FUNCTION = 33,
    OP_FUNCTION = 54,
    OP_DECORATE = 71,
    EXEC_MODEL_KERNEL = 6,
    EXEC_MODE_SUBGROUP_SIZE = 35,
    DECORATION_BUILTIN = 11,
    DECORATION_LINKAGE = 41,
    STORAGE_WORKGROUP = 4,
    LINKAGE_IMPORT = 1
};

struct spv_type {
    uint8_t kind;      /* 0 unknown, 1 value, 2 pointer */
    uint8_t local;     /* pointer to Workgroup storage */
    uint32_t size;
    uint32_t nparams;  /* OpTypeFunction */
    uint32_t first;    /* index of its first parameter type in the word stream */
};

struct spv_link {
    uint32_t id;
    int import;
    char name[SPV_NAME_MAX];
};

static uint32_t word(const uint8_t *b, size_t i, int swap)
{
    uint32_t w;
    memcpy(&w, b + 4 * i, 4);
    return swap ? __builtin_bswap32(w) : w;
}

/* A literal string starting at word i of n words; returns the words it used. */
static uint32_t literal(const uint8_t *b, size_t i, size_t end, int swap, char *out, size_t cap)
{
    size_t k = 0;
    uint32_t used = 0;
    for (size_t w = i; w < end; w++) {
        uint32_t v = word(b, w, swap);
        used++;
        for (int c = 0; c < 4; c++) {
            char ch = (char)((v >> (8 * c)) & 0xff);
            if (ch == '\0') {
                out[k < cap ? k : cap - 1] = '\0';
                return used;
            }
            if (k + 1 < cap)
                out[k++] = ch;
        }
    }
    out[k < cap ? k : cap - 1] = '\0';
    return used;
}

const char *spv_parse(const void *data, size_t size, struct spv_info *out)
{
    const uint8_t *b = data;
    memset(out, 0, sizeof *out);
    if (size < 20 || size % 4)
        return "the module is not a whole number of 32-bit words of at least a header";
    int swap;
    uint32_t m;
    memcpy(&m, b, 4);
    if (m == SPV_MAGIC)
        swap = 0;
    else if (__builtin_bswap32(m) == SPV_MAGIC)
        swap = 1;
    else
        return "bad SPIR-V magic number";
    size_t nwords = size / 4;
    uint32_t bound = word(b, 3, swap);
    if (bound == 0 || bound > (1u << 22))
        return "bad SPIR-V id bound";
    struct spv_type *types = calloc(bound, sizeof *types);
    uint32_t *fn_type = calloc(bound, sizeof *fn_type);  /* function id -> its OpTypeFunction */
    uint8_t *builtin = calloc(bound, 1);
    struct spv_link links[2 * SPV_MAX_SYMBOLS];
    uint32_t nlinks = 0;
    uint32_t entry_fn[SPV_MAX_ENTRIES];
    const char *err = NULL;
    if (!types || !fn_type || !builtin) {
        err = "out of memory";
        goto done;
    }
    for (size_t i = 5; i < nwords;) {
        uint32_t w0 = word(b, i, swap);
        uint32_t count = w0 >> 16, op = w0 & 0xffff;
        if (count == 0 || i + count > nwords) {
            err = "truncated SPIR-V instruction";
            goto done;
        }
        size_t end = i + count;
        uint32_t a1 = count > 1 ? word(b, i + 1, swap) : 0;
        uint32_t a2 = count > 2 ? word(b, i + 2, swap) : 0;
        uint32_t a3 = count > 3 ? word(b, i + 3, swap) : 0;
        switch (op) {
        case OP_ENTRY_POINT:
            if (a1 == EXEC_MODEL_KERNEL && out->nentries < SPV_MAX_ENTRIES && count > 3) {
                entry_fn[out->nentries] = a2;
                literal(b, i + 3, end, swap, out->entries[out->nentries].name, SPV_NAME_MAX);
                out->nentries++;
            }
            break;
        case OP_EXECUTION_MODE:
            if (a2 == EXEC_MODE_SUBGROUP_SIZE && count > 3)
                for (uint32_t e = 0; e < out->nentries; e++)
                    if (entry_fn[e] == a1)
                        out->entries[e].subgroup_size = a3;
            break;
        case OP_TYPE_INT:
        case OP_TYPE_FLOAT:
            if (a1 < bound) {
                types[a1].kind = 1;
                types[a1].size = a2 / 8;
            }
            break;
        case OP_TYPE_VECTOR:
            if (a1 < bound && a2 < bound) {
                types[a1].kind = 1;
                types[a1].size = types[a2].size * (a3 == 3 ? 4 : a3); /* OpenCL: 3-vectors take 4 slots */
            }
            break;
        case OP_TYPE_POINTER:
            if (a1 < bound) {
                types[a1].kind = 2;
                types[a1].local = a2 == STORAGE_WORKGROUP;
                types[a1].size = 8; /* Physical64 addressing */
            }
            break;
        case OP_TYPE_FUNCTION:
            if (a1 < bound && count >= 3) {
                types[a1].nparams = count - 3;
                types[a1].first = (uint32_t)(i + 3);
            }
            break;
        case OP_FUNCTION:
            if (count > 4 && a2 < bound)
                fn_type[a2] = word(b, i + 4, swap);
            break;
        case OP_DECORATE:
            if (a1 < bound && a2 == DECORATION_BUILTIN)
                builtin[a1] = 1;
            if (a1 < bound && a2 == DECORATION_LINKAGE && count > 4 && nlinks < 2 * SPV_MAX_SYMBOLS) {
                struct spv_link *l = &links[nlinks++];
                l->id = a1;
                uint32_t used = literal(b, i + 3, end, swap, l->name, SPV_NAME_MAX);
                l->import = i + 3 + used < end && word(b, i + 3 + used, swap) == LINKAGE_IMPORT;
            }
            break;
        default:
            break;
        }
        i = end;
    }
    for (uint32_t e = 0; e < out->nentries; e++) {
        uint32_t f = entry_fn[e];
        uint32_t t = f < bound ? fn_type[f] : 0;
        if (!t || t >= bound || !types[t].first) {
            err = "an entry point has no function type";
            goto done;
        }
        struct spv_entry *en = &out->entries[e];
        en->nparams = types[t].nparams < SPV_MAX_PARAMS ? types[t].nparams : SPV_MAX_PARAMS;
        for (uint32_t p = 0; p < en->nparams; p++) {
            uint32_t pt = word(b, types[t].first + p, swap);
            if (pt >= bound || !types[pt].kind) {
                err = "a kernel parameter has a type the test driver does not know";
                goto done;
            }
            en->params[p].kind = types[pt].kind == 1 ? SPV_PARAM_VALUE : types[pt].local ? SPV_PARAM_LOCAL
                                                                                        : SPV_PARAM_GLOBAL;
            en->params[p].size = types[pt].local ? 0 : types[pt].size;
        }
    }
    for (uint32_t k = 0; k < nlinks; k++) {
        if (builtin[links[k].id])
            continue; /* builtins are the compiler's, not linked */
        if (links[k].import && out->nimports < SPV_MAX_SYMBOLS)
            memcpy(out->imports[out->nimports++], links[k].name, SPV_NAME_MAX);
        else if (!links[k].import && out->nexports < SPV_MAX_SYMBOLS)
            memcpy(out->exports[out->nexports++], links[k].name, SPV_NAME_MAX);
    }
done:
    free(types);
    free(fn_type);
    free(builtin);
    return err;
}

const struct spv_entry *spv_find(const struct spv_info *info, const char *name)
{
    for (uint32_t i = 0; i < info->nentries; i++)
        if (strcmp(info->entries[i].name, name) == 0)
            return &info->entries[i];
    return NULL;
}
