/* SPDX-License-Identifier: Apache-2.0 */
/* zetest.h: what the Level Zero test driver (zetest_driver.c) records, read
 * by the tests through the doubles harness (tests/doubles/double.h).
 *
 * The test driver is a Level Zero *driver* library: the real loader
 * (libze_loader.so.1) loads it through ZE_ENABLE_ALT_DRIVERS and calls it
 * through the dispatch tables it exports. It plays the device side: fake GPUs,
 * SPIR-V "builds" that check the binary and record the flags, kernels that
 * check and record their arguments, memory backed by host memory, and
 * immediate command lists that execute at append time (but count as running
 * until the host has seen a later command of the list complete: destroying
 * or freeing what such a command uses is a violation).
 *
 * Configuration, faults, call counts and violations: struct zetest_state,
 * reached in-process through tests/doubles/double.h (the test dlopens the
 * library the loader was pointed at, the same object, and calls its
 * trd_double_state()); the configuration is read at each call, so each test
 * sets its own after trd_double_reset. */
#ifndef TRD_TESTS_LEVELZERO_ZETEST_H
#define TRD_TESTS_LEVELZERO_ZETEST_H

#include <stdint.h>

#include "tests/doubles/double.h"

#define ZETEST_MAX_ARGS 32
#define ZETEST_MAX_LAUNCHES 512
#define ZETEST_MAX_BUILDS 64

struct zetest_arg {
    uint32_t set;        /* set since the kernel handle was created */
    uint32_t size;
    uint32_t null_value; /* pArgValue was NULL */
    uint8_t bytes[16];   /* the value's first bytes */
};

struct zetest_launch {
    uint64_t list;              /* command list handle (as the driver sees it) */
    uint64_t list_context;
    uint32_t list_ordinal;      /* its command queue group */
    uint32_t list_immediate;
    uint64_t kernel;
    uint64_t kernel_context;    /* the context its module was built in */
    char name[64];
    uint32_t group[3];          /* zeKernelSetGroupSize at the time of the append */
    uint32_t count[3];          /* the ze_group_count_t */
    uint32_t nargs;             /* the kernel's argument count (0: unknown, native binary) */
    struct zetest_arg args[ZETEST_MAX_ARGS];
    uint32_t ordered;           /* no earlier command of the list could still run */
    uint32_t emulated;          /* the test driver computed the kernel's result */
};

struct zetest_build {
    char flags[512];
    uint32_t format;            /* ze_module_format_t */
    uint32_t size;
    uint32_t failed;
    uint64_t context;
};

#define ZETEST_MAX_SUB_GROUPS 8

struct zetest_state {
    struct trd_double common;   /* calls, faults, violations of the Level Zero specification */
    /* Configuration (trd_double_reset: the defaults given). */
    uint32_t devices;           /* devices exposed: 1 (default) or 2 */
    char name[128];             /* device 0's name (a Data Center GPU Max 1100's) */
    uint32_t vendor_id;         /* device 0's vendorId (0x8086) */
    uint32_t sub_groups[ZETEST_MAX_SUB_GROUPS]; /* device 0's sub-group sizes (16, 32) */
    uint32_t nsub_groups;
    uint32_t no_pci;            /* do not offer ZE_extension_pci_properties */
    uint32_t no_free_policy;    /* do not offer ZE_extension_memory_free_policies */
    uint32_t api_1_1;           /* a 1.1 driver: timerResolution in ns (default 1.4: in Hz) */
    uint64_t timer_hz;          /* the fake timer's frequency (19200000) */
    uint64_t timer_start;       /* its first value (1000) */
    uint32_t timer_bits;        /* timestampValidBits (64) */
    uint64_t ticks_per_launch;  /* how far a kernel launch advances it (19200) */
    uint32_t spill_bytes;       /* spillMemSize of every kernel (0) */
    uint32_t init_result;       /* what the driver's zeInit returns (0: as it would) */
    char build_log[512];        /* the build log of an injected build failure ("": a default text) */
    /* The record. */
    uint32_t init_calls;
    uint32_t init_flags;
    uint32_t launches;
    struct zetest_launch launch[ZETEST_MAX_LAUNCHES];
    uint32_t builds;
    struct zetest_build build[ZETEST_MAX_BUILDS];
    uint32_t links;             /* successful zeModuleDynamicLink calls */
    uint32_t link_modules;      /* modules in the last one */
    uint32_t copies, fills, barriers, timestamps;
    uint32_t unordered;         /* commands appended while an earlier one of the list could still run */
    uint32_t frees, frees_blocking;
    uint32_t device_allocs;     /* zeMemAllocDevice successes */
    /* Live objects: all 0 once everything was destroyed. Last: trd_double_reset keeps them (a leak stays visible). */
    int32_t live_contexts, live_lists, live_pools, live_events, live_modules, live_kernels, live_logs, live_allocs;
};


#endif
