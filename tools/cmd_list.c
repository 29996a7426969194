/* cmd_list.c: `trident devices` and `trident drivers`. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

static int parse_json_flag(const char *cmd, int argc, char **argv, const char *help, int *json)
{
    static const struct option longs[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    *json = 0;
    while ((c = getopt_long(argc, argv, "jh", longs, NULL)) != -1) {
        if (c == 'j')
            *json = 1;
        else if (c == 'h') {
            fputs(help, stdout);
            return -1;
        } else
            return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
    }
    if (optind < argc)
        return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    return 0;
}

int cmd_devices(int argc, char **argv)
{
    int json;
    int r = parse_json_flag("devices", argc, argv,
                            "usage: trident devices [--json]\n\n"
                            "One line per device: URI, driver, name, arch, memory, compute units, warp size, PCI id.\n"
                            "--json prints an array of objects with the keys uri, driver, backend, name, vendor,\n"
                            "arch, kind, warp_size, memory_bytes, compute_units, max_threads_per_block,\n"
                            "max_shared_per_block, max_shared_per_block_optin, pci_bus_id (null when unknown), uuid.\n",
                            &json);
    if (r)
        return r < 0 ? CLI_OK : r;
    trd_runtime_t *rt = cli_runtime();
    if (!rt)
        return CLI_FAIL;
    uint32_t n = 0;
    trd_runtime_device_count(rt, &n);
    json_t *arr = json ? json_array() : NULL;
    if (!json)
        printf("%-10s %-8s %-40s %-8s %10s %5s %5s %s\n", "URI", "DRIVER", "NAME", "ARCH", "MEMORY", "CUS", "WARP",
               "PCI");
    for (uint32_t i = 0; i < n; i++) {
        trd_device_t *dev;
        trd_device_props_t p = {.struct_size = sizeof p};
        if (trd_runtime_device_get(rt, i, &dev) != TRD_OK || trd_device_get_props(dev, &p) != TRD_OK) {
            json_decref(arr);
            trd_runtime_destroy(rt);
            return cli_fail("reading device %u", i);
        }
        char uuid[37] = "";
        if (p.flags & TRD_DEVICE_HAS_UUID) {
            const uint8_t *u = p.uuid;
            snprintf(uuid, sizeof uuid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                     u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
        }
        if (json) {
            json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "uri",
                                  p.uri, "driver", p.driver, "backend", p.backend, "name", p.name, "vendor", p.vendor,
                                  "arch", p.arch, "kind", p.kind == TRD_DEVICE_GPU ? "gpu" : "cpu", "warp_size",
                                  (json_int_t)p.warp_size, "memory_bytes", (json_int_t)p.memory_bytes, "compute_units",
                                  (json_int_t)p.compute_units, "max_threads_per_block",
                                  (json_int_t)p.max_threads_per_block, "max_shared_per_block",
                                  (json_int_t)p.max_shared_per_block, "max_shared_per_block_optin",
                                  (json_int_t)p.max_shared_per_block_optin, "pci_bus_id",
                                  p.pci_bus_id ? json_string(p.pci_bus_id) : json_null(), "uuid",
                                  uuid[0] ? json_string(uuid) : json_null());
            json_array_append_new(arr, o);
        } else {
            char mem[32];
            cli_bytes(p.memory_bytes, mem, sizeof mem);
            printf("%-10s %-8s %-40.40s %-8s %10s %5u %5u %s\n", p.uri, p.driver, p.name, p.arch, mem, p.compute_units,
                   p.warp_size, p.pci_bus_id ? p.pci_bus_id : "-");
        }
    }
    trd_runtime_destroy(rt);
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

int cmd_drivers(int argc, char **argv)
{
    int json;
    int r = parse_json_flag("drivers", argc, argv,
                            "usage: trident drivers [--json]\n\n"
                            "Each driver module found: name, status (loaded, skipped, failed), devices, path and the\n"
                            "reason it was skipped or failed. --json keys: name, backend, path, status, reason, devices,\n"
                            "abi_version.\n",
                            &json);
    if (r)
        return r < 0 ? CLI_OK : r;
    trd_runtime_t *rt = cli_runtime();
    if (!rt)
        return CLI_FAIL;
    uint32_t n = 0;
    trd_runtime_driver_count(rt, &n);
    json_t *arr = json ? json_array() : NULL;
    if (!json)
        printf("%-10s %-8s %7s  %-40s %s\n", "NAME", "STATUS", "DEVICES", "PATH", "REASON");
    for (uint32_t i = 0; i < n; i++) {
        trd_driver_info_t d = {.struct_size = sizeof d};
        if (trd_runtime_driver_info(rt, i, &d) != TRD_OK) {
            json_decref(arr);
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
    trd_runtime_destroy(rt);
    return json ? cli_print_json(arr) : CLI_OK;
}
