/* zetest.h: what the Level Zero test driver (zetest_driver.c) records, read
 * by the tests through its exported zetest_state() after dlopening it.
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
 * Configuration, read at each call (so each test sets its own):
 *   TRDTEST_ZE_DEVICES          devices exposed: 1 (default) or 2
 *   TRDTEST_ZE_NAME             device 0's name
 *   TRDTEST_ZE_VENDOR_ID        device 0's vendorId (default 0x8086)
 *   TRDTEST_ZE_SUBGROUPS        device 0's sub-group sizes ("16,32")
 *   TRDTEST_ZE_NO_PCI=1         do not offer ZE_extension_pci_properties
 *   TRDTEST_ZE_NO_FREE_POLICY=1 do not offer ZE_extension_memory_free_policies
 *   TRDTEST_ZE_API_VERSION      "1.1": timerResolution in ns (default 1.4: in Hz)
 *   TRDTEST_ZE_TIMER_HZ         the fake timer's frequency (default 19200000)
 *   TRDTEST_ZE_TIMER_START      its first value (default 1000)
 *   TRDTEST_ZE_TIMER_BITS       timestampValidBits (default 64)
 *   TRDTEST_ZE_TICKS_PER_LAUNCH how far a kernel launch advances it (default 19200)
 *   TRDTEST_ZE_SPILL_BYTES      spillMemSize of every kernel (default 0)
 *   TRDTEST_ZE_INIT_RESULT      what the driver's zeInit returns (hex)
 *   TRDTEST_ZE_FAIL             "zeCall:0xRESULT[:N],...": the call fails with
 *                               RESULT after N successful calls (default 0)
 *   TRDTEST_ZE_BUILD_LOG        the build log of an injected build failure */
#ifndef TRD_TESTS_LEVELZERO_ZETEST_H
#define TRD_TESTS_LEVELZERO_ZETEST_H

#include <stdint.h>

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

struct zetest_state {
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
    uint32_t violations;        /* breaches of the Level Zero contract seen */
    char violation[512];        /* the first one */
    /* Live objects: all 0 once everything was destroyed. */
    int32_t live_contexts, live_lists, live_pools, live_events, live_modules, live_kernels, live_logs, live_allocs;
};

typedef const struct zetest_state *(*zetest_state_fn)(void);
typedef void (*zetest_reset_fn)(void);

#endif
