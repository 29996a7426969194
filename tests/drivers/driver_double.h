/* SPDX-License-Identifier: Apache-2.0 */
/* driver_double.h: the driver-ABI-2 test double the loader and runtime tests
 * load (driver_double.c), built once. Vulkan-Loader's test ICD is the model:
 * the double's device facts are a state struct the test sets at run time,
 * through the doubles harness (tests/doubles/double.h), before a runtime
 * loads the module, and the double records what the core passed for the test
 * to read back. Its faults are the harness's: "init=CODE" (a trd_status_t)
 * fails init, and so on for the ops named below.
 *
 * Several drivers at once (several names, two of one PCI device) are several
 * files: tdd_open copies the built module to a file of the name asked, a
 * separate object to dlopen with its own state, as Vulkan-Loader's tests copy
 * their test ICD. */
#ifndef TRD_TESTS_DRIVER_DOUBLE_H
#define TRD_TESTS_DRIVER_DOUBLE_H

#include <stdint.h>

#include "tests/doubles/double.h"

#define TDD_MAX_DEVICES 8
#define TDD_MAX_PARAMS 64
#define TDD_MAX_OPTIONS 4

/* Every op off the launch path counts its calls and takes the harness's faults under its own name ("init",
 * "module_load", "mem_alloc", ...). launch, mem_copy, mem_set and stream_capturing take no lock (test_prepared
 * counts libtrident's locks and allocations in a loop of them), so they record without the harness. */
struct tdd_state {
    struct trd_double common;
    /* Facts (trd_double_reset: the defaults given). */
    char name[32];              /* the URI scheme ("tdd") */
    char backend[16];           /* the Triton backend ("cuda") */
    char arch[32];              /* every device's arch ("sm90") */
    uint32_t devices;           /* devices exposed (1) */
    char pci[TDD_MAX_DEVICES][32]; /* each device's PCI bus id ("0000:80:00.0", "0000:81:00.0", ...; "": none) */
    int32_t priority;           /* the ops table's (0) */
    char note[128];             /* what init writes into the note ("") */
    uint32_t abi_version;       /* the table's (2) */
    uint32_t table_size;        /* the table's struct_size (sizeof(trd_driver_ops_t)) */
    uint32_t no_launch;         /* the required launch op left NULL (0) */
    uint32_t capture;           /* offers the optional stream_capturing op (0) */
    int32_t capturing;          /* what it answers (0) */
    char options[TDD_MAX_OPTIONS][48]; /* options module_load reads through the services ("": none) */
    /* The record. */
    unsigned loads, launches, unloads;
    char option_values[TDD_MAX_OPTIONS][128]; /* the last load's values of `options` ("": unset) */
    unsigned ordinal;           /* the device of the last load */
    unsigned num_warps, num_ctas, shared, warp_size, flags, num_params;
    unsigned grid[3];           /* the last launch's */
    unsigned nparams;
    unsigned sizes[TDD_MAX_PARAMS];
    unsigned char bytes[TDD_MAX_PARAMS][16]; /* each parameter's first value bytes */
    int had_native;             /* the last launch came with a native stream */
    void *native;
    /* Live objects: all 0 once the core released everything it was given. Last: trd_double_reset keeps them (a
     * leak stays visible). */
    int32_t live_drivers, live_devices, live_modules, live_allocs, live_streams, live_events;
};

/* For the tests (driver_double_open.c): the double as tests/home/doubles.<pid>/<file>.so, a copy of the built
 * module (made once per process), dlopened and reset; *path (may be NULL) its path, valid as long as the process.
 * The copy stays open until exit, so a runtime loading that path gets this state. */
struct tdd_state *tdd_open(const char *file, const char **path);
/* The state of a file tdd_open opened, as it is (not reset). */
struct tdd_state *tdd_get(const char *file);
/* The facts most tests vary: name, backend, arch, device count and device 0's PCI bus id (NULL: the default;
 * "": none). Returns st. */
struct tdd_state *tdd_facts(struct tdd_state *st, const char *name, const char *backend, const char *arch,
                            unsigned devices, const char *pci0);
/* The path tdd_open gives `file`. */
const char *tdd_path(const char *file);
/* A module list for a runtime's driver_path: the tdd_open paths of `files`, ':'-joined (lives until the next call). */
const char *tdd_paths(const char *const *files, unsigned n);
/* Asserts that the double saw no contract violation and that nothing it gave is alive (after the runtimes that
 * loaded it were destroyed). */
void tdd_assert_clean(struct tdd_state *st);

#endif
