/* SPDX-License-Identifier: Apache-2.0 */
/* main.c: the trident command line. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "tools/cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    {"devices", cmd_devices, "list devices (URI, driver, name, arch, memory, compute units, warp size, PCI id)"},
    {"drivers", cmd_drivers, "list driver modules found, with their status and why"},
    {"run", cmd_run, "load a kernel and launch it on a device"},
    {"info", cmd_info, "show a kernel's name, signature and targets"},
    {"bundle", cmd_bundle, "pack kernel images for several targets into one bundle file"},
    {"options", cmd_options, "list backend options (the output is a valid trident.ini)"},
    {"config", cmd_config, "show the effective configuration, or check a file"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: trident [--version] [--help] <command> [<args>]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'trident <command> --help' describes a command.\n"
               "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "trident %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see 'trident %s --help')\n", cmd);
    va_end(ap);
    return CLI_USAGE;
}

int cli_fail(const char *what, ...)
{
    va_list ap;
    va_start(ap, what);
    fprintf(stderr, "trident: ");
    vfprintf(stderr, what, ap);
    va_end(ap);
    const char *msg = trd_error_message();
    fprintf(stderr, "%s%s\n", *msg ? ": " : "", msg);
    return CLI_FAIL;
}

int cli_print_json(json_t *value)
{
    if (!value) {
        fprintf(stderr, "trident: out of memory building JSON\n");
        return CLI_FAIL;
    }
    char *text = json_dumps(value, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(value);
    if (!text) {
        fprintf(stderr, "trident: out of memory building JSON\n");
        return CLI_FAIL;
    }
    puts(text);
    free(text);
    return CLI_OK;
}

trd_runtime_t *cli_runtime(void)
{
    trd_runtime_t *rt = NULL;
    if (trd_runtime_create(NULL, &rt) != TRD_OK) {
        cli_fail("cannot start the runtime");
        return NULL;
    }
    return rt;
}

void cli_bytes(uint64_t n, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

int cli_error(void)
{
    fprintf(stderr, "trident: %s\n", trd_error_message());
    return CLI_FAIL;
}

int cli_parse_digits_n(const char *s, size_t n, uint64_t *out)
{
    if (!s)
        return 0;
    const char *end = s + n;
    unsigned base = 10;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (s == end)
        return 0;
    uint64_t v = 0;
    int overflow = 0;
    for (; s < end; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && isxdigit((unsigned char)*s))
            d = (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
        else
            return 0;
        if (v > (UINT64_MAX - d) / base)
            overflow = 1;
        v = v * base + d;
    }
    if (overflow)
        return -1;
    *out = v;
    return 1;
}

int cli_parse_digits(const char *s, uint64_t *out)
{
    return s ? cli_parse_digits_n(s, strlen(s), out) : 0;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
    return cli_parse_digits(s, out) == 1;
}

int cli_read_file(const char *path, uint64_t bytes, char **data, uint64_t *size, const char *what)
{
    /* base/file.c's reader, as libtrident's: a FIFO is not waited on, a device or directory not read */
    char msg[8400], *buf;
    size_t n;
    if (trd_file_load(path, bytes && bytes < SIZE_MAX ? (size_t)bytes : SIZE_MAX - 1, &buf, &n, msg, sizeof msg) !=
        TRD_OK) {
        fprintf(stderr, "trident: %s: %s\n", what, msg);
        return CLI_FAIL;
    }
    if (bytes && n != bytes) {
        fprintf(stderr, "trident: %s: '%s' has %zu bytes, not %llu\n", what, path, n, (unsigned long long)bytes);
        free(buf);
        return CLI_FAIL;
    }
    *data = buf;
    if (size)
        *size = n;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("trident %s (ABI %u)\n", trd_version_string(), trd_abi_version());
        return CLI_OK;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "trident: '%s' is not a command\n\n", cmd);
    usage(stderr);
    return CLI_USAGE;
}
