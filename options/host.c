/* SPDX-License-Identifier: Apache-2.0 */
/* host.c: the options the host CPU driver uses, and the runtime-wide and
 * per-driver settings of the configuration. */
#include <string.h>

#include "base/util.h"
#include "options/checks.h"

static const struct trd_option_row host_rows[] = {
    {.name = "num_warps", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "1",
     .min = 1, .max = 1024, .check = trd_check_pow2,
     .doc = "Accepted for Triton-style calls; a host program is one call, whatever the warps."},
    {.name = "num_ctas", .type = TRD_OPT_INT, .stage = TRD_STAGE_LAUNCH, .type_name = "int", .def = "1", .min = 1,
     .max = 1, .doc = "CTAs per program (1 on the host)."},
    {.name = "num_stages", .type = TRD_OPT_INT, .stage = TRD_STAGE_COMPILE, .type_name = "int", .def = "1",
     .min = 0, .max = 64, .doc = "Accepted for Triton-style calls; unused by the host driver."},
    {.name = "debug", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_LOAD, .type_name = "bool", .def = "false",
     .doc = "Run the programs of a launch in order on the calling thread (reproducible, debugger friendly)."},
    {.name = "grain", .type = TRD_OPT_INT, .stage = TRD_STAGE_LOAD, .type_name = "int", .def = "0", .min = 0,
     .max = 1 << 24, .doc = "Programs a worker takes at a time; 0 picks grid / (4 x workers)."},
    {.name = "arch", .type = TRD_OPT_OPT_STRING, .stage = TRD_STAGE_COMPILE, .type_name = "str", .def = "none",
     .flags = TRD_OPTION_DERIVED, .derived = "the machine's architecture (x86_64, aarch64)",
     .check = trd_check_no_control, .doc = "Target architecture of host kernels."},
};

const struct trd_option_table trd_table_host = {
    .backend = "host",
    .current = "1.0",
    .source = "trident's host CPU driver",
    .rows = host_rows,
    .count = TRD_ARRAY_SIZE(host_rows),
};

static const struct trd_option_row runtime_rows[] = {
    {.name = "log_level", .type = TRD_OPT_ENUM, .stage = TRD_STAGE_RUNTIME, .type_name = "str", .def = "off",
     .values = "off|error|warn|info|debug", .env = "TRIDENT_LOG",
     .doc = "What trident logs to stderr (or to the callback set through the API)."},
    {.name = "driver_path", .type = TRD_OPT_STRING, .stage = TRD_STAGE_RUNTIME, .type_name = "str", .def = "",
     .check = trd_check_no_control, .env = "TRIDENT_DRIVER_PATH",
     .doc = "Colon list of directories or module files searched for drivers before the installed ones "
            "(absolute paths only; the variable is ignored in setuid processes)."},
    {.name = "cache_dir", .type = TRD_OPT_STRING, .stage = TRD_STAGE_RUNTIME, .type_name = "str", .def = "",
     .check = trd_check_no_control, .env = "TRIDENT_CACHE_DIR",
     .doc = "Directory of trident's caches: the JIT's, and trident.jax's compiled kernels and autotuning choices "
            "(default $XDG_CACHE_HOME/trident, else ~/.cache/trident)."},
    {.name = "jit_cache", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_RUNTIME, .type_name = "bool", .def = "true",
     .env = "TRIDENT_JIT_CACHE", .doc = "Keep JIT results (PTX -> device code) on disk across processes."},
    {.name = "strict", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_RUNTIME, .type_name = "bool", .def = "false",
     .env = "TRIDENT_STRICT",
     .doc = "Unknown configuration keys and unused TRIDENT_* variables are errors, not warnings."},
};

const struct trd_option_table trd_table_runtime = {
    .backend = "runtime",
    .current = "1.0",
    .source = "trident",
    .rows = runtime_rows,
    .count = TRD_ARRAY_SIZE(runtime_rows),
};

static const struct trd_option_row driver_rows[] = {
    {.name = "enabled", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_RUNTIME, .type_name = "bool", .def = "true",
     .doc = "false skips the driver (shown as skipped by `trident drivers`)."},
    {.name = "library", .type = TRD_OPT_STRING, .stage = TRD_STAGE_RUNTIME, .type_name = "str", .def = "",
     .check = trd_check_no_control,
     .doc = "Vendor library to dlopen instead of the default names (a colon list, tried in order)."},
    {.name = "priority", .type = TRD_OPT_INT, .stage = TRD_STAGE_RUNTIME, .type_name = "int", .def = "0",
     .min = -1000, .max = 1000,
     .doc = "When two drivers expose one physical device, the higher priority keeps it (0: the driver's own)."},
    {.name = "devices", .type = TRD_OPT_INT, .stage = TRD_STAGE_RUNTIME, .type_name = "int", .def = "1",
     .min = 0, .max = 64, .doc = "host driver only: how many host devices to expose (each with its own workers)."},
    {.name = "threads", .type = TRD_OPT_INT, .stage = TRD_STAGE_RUNTIME, .type_name = "int", .def = "0",
     .min = 0, .max = 4096, .doc = "host driver only: worker threads per host device (0: one per core)."},
    {.name = "catch_faults", .type = TRD_OPT_BOOL, .stage = TRD_STAGE_RUNTIME, .type_name = "bool", .def = "true",
     .doc = "host driver only: a kernel's fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL) fails its launch, naming the "
            "program; false lets it kill the process (a core dump for a debugger)."},
    {.name = "guarded_buffers", .type = TRD_OPT_INT, .stage = TRD_STAGE_RUNTIME, .type_name = "int", .def = "-1",
     .min = -1, .max = 1 << 24,
     .doc = "host driver only: host buffers at once between guard pages (an overrun fails the launch, naming the "
            "buffer); the rest are unguarded. -1: vm.max_map_count / 8."},
};

const struct trd_option_table trd_table_driver = {
    .backend = "driver",
    .current = "1.0",
    .source = "trident",
    .rows = driver_rows,
    .count = TRD_ARRAY_SIZE(driver_rows),
};
