/* SPDX-License-Identifier: Apache-2.0 */
/* zetest_spirv.h: what the Level Zero test driver reads from a SPIR-V
 * module to act like a real build: its kernels (entry points) with their
 * parameters and required sub-group size, and its import/export linkage. */
#ifndef TRD_TESTS_LEVELZERO_ZETEST_SPIRV_H
#define TRD_TESTS_LEVELZERO_ZETEST_SPIRV_H

#include <stddef.h>
#include <stdint.h>

#define SPV_MAX_ENTRIES 8
#define SPV_MAX_PARAMS 32
#define SPV_MAX_SYMBOLS 16
#define SPV_NAME_MAX 64

enum spv_param_kind {
    SPV_PARAM_VALUE = 1,  /* a scalar or vector passed by value */
    SPV_PARAM_GLOBAL = 2, /* a pointer to global (or generic, constant) memory: 8 bytes */
    SPV_PARAM_LOCAL = 3   /* a pointer to work-group local memory: bound by size, value NULL */
};

struct spv_param {
    int kind;
    uint32_t size;        /* bytes the argument takes (8 for pointers, 0 for local) */
};

struct spv_entry {
    char name[SPV_NAME_MAX];
    uint32_t nparams;
    struct spv_param params[SPV_MAX_PARAMS];
    uint32_t subgroup_size; /* OpExecutionMode SubgroupSize, 0 when absent */
};

struct spv_info {
    uint32_t nentries;
    struct spv_entry entries[SPV_MAX_ENTRIES];
    uint32_t nimports, nexports; /* linkage of non-builtin symbols */
    char imports[SPV_MAX_SYMBOLS][SPV_NAME_MAX];
    char exports[SPV_MAX_SYMBOLS][SPV_NAME_MAX];
};

/* Reads a SPIR-V binary. Returns NULL on success, else why it is not one
 * (for the build log). */
const char *spv_parse(const void *data, size_t size, struct spv_info *out);
const struct spv_entry *spv_find(const struct spv_info *info, const char *name);

#endif
