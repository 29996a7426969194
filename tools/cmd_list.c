/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_list.c: `trident devices` and `trident drivers`. Their --json keys are
 * those of Python's trident.devices() and trident.drivers(). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

/* --json, -v and at most `maxpos` positional arguments (into *pos); 0, -1 after --help, or CLI_USAGE. */
static int parse_flags(const char *cmd, int argc, char **argv, const char *help, int maxpos, int *json, int *verbose,
                       const char **pos)
{
    static const struct option longs[] = {{"json", no_argument, NULL, 'j'}, {"verbose", no_argument, NULL, 'v'},
                                          {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    *json = *verbose = 0;
    while ((c = getopt_long(argc, argv, "+jvh", longs, NULL)) != -1 || optind < argc) {
        if (c == -1) { /* a positional argument; options may follow it */
            if (maxpos == 0 || *pos)
                return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
            *pos = argv[optind++];
            continue;
        }
        if (c == 'j')
            *json = 1;
        else if (c == 'v')
            *verbose = 1;
        else if (c == 'h') {
            fputs(help, stdout);
            return -1;
        } else
            return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
    }
    return 0;
}

static void uuid_text(const trd_device_props_t *p, char *buf, size_t cap)
{
    const uint8_t *u = p->uuid;
    if (!(p->flags & TRD_DEVICE_HAS_UUID)) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, cap, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
             u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* Every property of trd_device_props_t, as trident.devices() gives it. */
static json_t *device_json(const trd_device_props_t *p)
{
    char uuid[40];
    uuid_text(p, uuid, sizeof uuid);
    return json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:b, "
                     "s:b}",
                     "index", (json_int_t)p->index, "uri", p->uri, "driver", p->driver, "backend", p->backend, "name",
                     p->name, "vendor", p->vendor, "arch", p->arch, "kind", p->kind == TRD_DEVICE_GPU ? "gpu" : "cpu",
                     "ordinal", (json_int_t)p->ordinal, "warp_size", (json_int_t)p->warp_size, "compute_units",
                     (json_int_t)p->compute_units, "max_threads_per_block", (json_int_t)p->max_threads_per_block,
                     "memory_bytes", (json_int_t)p->memory_bytes, "max_shared_per_block",
                     (json_int_t)p->max_shared_per_block, "max_shared_per_block_optin",
                     (json_int_t)p->max_shared_per_block_optin, "pci_bus_id",
                     p->pci_bus_id ? json_string(p->pci_bus_id) : json_null(), "uuid",
                     uuid[0] ? json_string(uuid) : json_null(), "cooperative_launch",
                     (p->flags & TRD_DEVICE_COOPERATIVE_LAUNCH) != 0, "cluster_launch",
                     (p->flags & TRD_DEVICE_CLUSTER_LAUNCH) != 0);
}

/* The module that serves a driver name, for the detail view. */
static const char *driver_path(trd_runtime_t *rt, const char *name)
{
    uint32_t n = 0;
    trd_runtime_driver_count(rt, &n);
    for (uint32_t i = 0; i < n; i++) {
        trd_driver_info_t d = {.struct_size = sizeof d};
        if (trd_runtime_driver_info(rt, i, &d) == TRD_OK && d.status == TRD_DRIVER_LOADED && !strcmp(d.name, name))
            return d.path;
    }
    return "?";
}

/* clinfo style: one block per device, a property a line. */
static void device_detail(trd_runtime_t *rt, const trd_device_props_t *p)
{
    char uuid[40], mem[32], sh[32], shopt[32];
    uuid_text(p, uuid, sizeof uuid);
    cli_bytes(p->memory_bytes, mem, sizeof mem);
    cli_bytes(p->max_shared_per_block, sh, sizeof sh);
    cli_bytes(p->max_shared_per_block_optin, shopt, sizeof shopt);
    printf("%s\n", p->uri);
    printf("  %-34s %u\n", "index", p->index);
    printf("  %-34s %s\n", "name", p->name);
    printf("  %-34s %s\n", "vendor", p->vendor);
    printf("  %-34s %s\n", "kind", p->kind == TRD_DEVICE_GPU ? "gpu" : "cpu");
    printf("  %-34s %s (%s)\n", "driver", p->driver, driver_path(rt, p->driver));
    printf("  %-34s %u\n", "ordinal (the driver's number)", p->ordinal);
    printf("  %-34s %s\n", "backend", p->backend);
    printf("  %-34s %s\n", "arch", p->arch);
    printf("  %-34s %s (%llu bytes)\n", "memory", mem, (unsigned long long)p->memory_bytes);
    printf("  %-34s %u\n", "compute units", p->compute_units);
    printf("  %-34s %u\n", "warp size", p->warp_size);
    printf("  %-34s %u\n", "max threads per block", p->max_threads_per_block);
    printf("  %-34s %s (%u bytes)\n", "shared memory per block", sh, p->max_shared_per_block);
    printf("  %-34s %s (%u bytes)\n", "shared memory per block, opt-in", shopt, p->max_shared_per_block_optin);
    printf("  %-34s %s\n", "PCI bus id", p->pci_bus_id ? p->pci_bus_id : "-");
    printf("  %-34s %s\n", "UUID", uuid[0] ? uuid : "-");
    printf("  %-34s %s\n", "cooperative launch", p->flags & TRD_DEVICE_COOPERATIVE_LAUNCH ? "yes" : "no");
    printf("  %-34s %s\n", "cluster launch", p->flags & TRD_DEVICE_CLUSTER_LAUNCH ? "yes" : "no");
}

static const char devices_help[] =
    "usage: trident devices [SEL] [--json] [-v]\n\n"
    "The devices, or those SEL matches (a URI such as cuda:1, an index, a driver or backend name, or\n"
    "property matches such as arch=sm90,name=H200; 'best' is the one `run` picks): one line each with\n"
    "URI, driver, name, arch, memory, compute units, warp size and PCI id; -v shows every property\n"
    "(ordinal, vendor, shared memory limits, UUID, the driver's module, launch features).\n"
    "--json prints an array of objects with every property, the keys of Python's trident.devices():\n"
    "index, uri, driver, backend, name, vendor, arch, kind, ordinal, warp_size, compute_units,\n"
    "max_threads_per_block, memory_bytes, max_shared_per_block, max_shared_per_block_optin, pci_bus_id\n"
    "(null when unknown), uuid (null when unknown), cooperative_launch, cluster_launch.\n"
    "A selector that matches no device fails (exit 1); a malformed one is a usage error (exit 2).\n";

int cmd_devices(int argc, char **argv)
{
    int json, verbose;
    const char *sel = NULL;
    int r = parse_flags("devices", argc, argv, devices_help, 1, &json, &verbose, &sel);
    if (r)
        return r < 0 ? CLI_OK : r;
    trd_runtime_t *rt = cli_runtime();
    if (!rt)
        return CLI_FAIL;
    uint32_t n = 0, shown = 0;
    trd_runtime_device_count(rt, &n);
    trd_device_t *best = NULL;
    if (sel && strcmp(sel, "best") == 0 && trd_runtime_device_find(rt, sel, &best) != TRD_OK) {
        trd_runtime_destroy(rt);
        return cli_error();
    }
    json_t *arr = json ? json_array() : NULL;
    int rc = CLI_OK;
    for (uint32_t i = 0; i < n && rc == CLI_OK; i++) {
        trd_device_t *dev;
        trd_device_props_t p = {.struct_size = sizeof p};
        int32_t match = 1;
        if (trd_runtime_device_get(rt, i, &dev) != TRD_OK || trd_device_get_props(dev, &p) != TRD_OK) {
            rc = cli_fail("reading device %u", i);
            break;
        }
        if (best)
            match = dev == best;
        else if (sel && trd_device_matches(dev, sel, &match) != TRD_OK) {
            rc = cli_usage("devices", "%s", trd_error_message());
            break;
        }
        if (!match)
            continue;
        shown++;
        if (json) {
            json_array_append_new(arr, device_json(&p));
        } else if (verbose) {
            if (shown > 1)
                putchar('\n');
            device_detail(rt, &p);
        } else {
            char mem[32];
            cli_bytes(p.memory_bytes, mem, sizeof mem);
            if (shown == 1)
                printf("%-10s %-8s %-40s %-8s %10s %5s %5s %s\n", "URI", "DRIVER", "NAME", "ARCH", "MEMORY", "CUS",
                       "WARP", "PCI");
            printf("%-10s %-8s %-40.40s %-8s %10s %5u %5u %s\n", p.uri, p.driver, p.name, p.arch, mem,
                   p.compute_units, p.warp_size, p.pci_bus_id ? p.pci_bus_id : "-");
        }
    }
    if (rc == CLI_OK && sel && shown == 0) {
        trd_device_t *none;
        trd_runtime_device_find(rt, sel, &none); /* its message names the selector and lists the devices */
        rc = cli_error();
    }
    trd_runtime_destroy(rt);
    if (rc != CLI_OK) {
        json_decref(arr);
        return rc;
    }
    if (json)
        return cli_print_json(arr);
    if (n == 0)
        printf("(no devices: see 'trident drivers')\n");
    return CLI_OK;
}

static const char *status_name(int32_t s)
{
    return s == TRD_DRIVER_LOADED ? "loaded" : s == TRD_DRIVER_SKIPPED ? "skipped" : "failed";
}

static const char drivers_help[] =
    "usage: trident drivers [--json] [-v]\n\n"
    "Each driver module found: name, status (loaded, skipped, failed), devices, path and the reason it\n"
    "was skipped or failed, then every place searched for modules, in order (the driver path given to\n"
    "the runtime, [runtime] driver_path or TRIDENT_DRIVER_PATH, the build tree, the installed drivers in\n"
    "trident/drivers beside the libtrident in use), with how many modules each held or why it could not\n"
    "be read (a missing one says so). -v lists the places first, then every module tried.\n"
    "--json keys (those of Python's trident.drivers()): name, backend, path, status, reason, devices,\n"
    "abi_version; with -v an object {\"searched\": [{path, origin, modules, problem}], \"drivers\": [...]}.\n";

/* Every place searched for driver modules, in order: appended to arr, or printed (a missing one with why). */
static void print_searched(trd_runtime_t *rt, json_t *arr)
{
    uint32_t ns = 0;
    trd_runtime_driver_search_count(rt, &ns);
    for (uint32_t i = 0; i < ns; i++) {
        trd_driver_search_t s = {.struct_size = sizeof s};
        if (trd_runtime_driver_search_info(rt, i, &s) != TRD_OK)
            continue;
        if (arr)
            json_array_append_new(arr, json_pack("{s:s, s:s, s:I, s:o}", "path", s.path, "origin", s.origin,
                                                 "modules", (json_int_t)s.modules, "problem",
                                                 s.problem ? json_string(s.problem) : json_null()));
        else if (s.problem)
            printf("  %-50s %s: %s\n", s.path, s.origin, s.problem);
        else
            printf("  %-50s %s: %u module%s\n", s.path, s.origin, s.modules, s.modules == 1 ? "" : "s");
    }
}

int cmd_drivers(int argc, char **argv)
{
    int json, verbose;
    const char *none = NULL;
    int r = parse_flags("drivers", argc, argv, drivers_help, 0, &json, &verbose, &none);
    if (r)
        return r < 0 ? CLI_OK : r;
    trd_runtime_t *rt = cli_runtime();
    if (!rt)
        return CLI_FAIL;
    json_t *searched = json && verbose ? json_array() : NULL;
    if (verbose) {
        if (!json)
            printf("searched, in order:\n");
        print_searched(rt, searched);
        if (!json)
            printf("\nmodules tried:\n");
    }
    uint32_t n = 0;
    trd_runtime_driver_count(rt, &n);
    json_t *arr = json ? json_array() : NULL;
    if (!json)
        printf("%-10s %-8s %7s  %-40s %s\n", "NAME", "STATUS", "DEVICES", "PATH", "REASON");
    for (uint32_t i = 0; i < n; i++) {
        trd_driver_info_t d = {.struct_size = sizeof d};
        if (trd_runtime_driver_info(rt, i, &d) != TRD_OK) {
            json_decref(arr);
            json_decref(searched);
            trd_runtime_destroy(rt);
            return cli_fail("reading driver %u", i);
        }
        if (json) {
            json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:o, s:I, s:I}", "name", d.name, "backend",
                                                 d.backend, "path", d.path, "status", status_name(d.status), "reason",
                                                 d.reason[0] ? json_string(d.reason) : json_null(), "devices",
                                                 (json_int_t)d.device_count, "abi_version",
                                                 (json_int_t)d.abi_version));
        } else {
            printf("%-10s %-8s %7u  %-40s %s\n", d.name, status_name(d.status), d.device_count, d.path,
                   d.reason[0] ? d.reason : "-");
        }
    }
    if (!json && !verbose) {
        printf("\nsearched, in order:\n");
        print_searched(rt, NULL);
    }
    trd_runtime_destroy(rt);
    if (!json)
        return CLI_OK;
    return cli_print_json(searched ? json_pack("{s:o, s:o}", "searched", searched, "drivers", arr) : arr);
}
