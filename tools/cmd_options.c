/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_options.c: `trident options` and `trident config`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

static const char *type_name(int32_t t)
{
    switch (t) {
    case TRD_OPT_BOOL: return "bool";
    case TRD_OPT_INT: return "int";
    case TRD_OPT_OPT_INT: return "optional int";
    case TRD_OPT_STRING: return "string";
    case TRD_OPT_OPT_STRING: return "optional string";
    case TRD_OPT_ENUM: return "enum";
    case TRD_OPT_STRING_LIST: return "string list";
    case TRD_OPT_PATH_MAP: return "name=path map";
    case TRD_OPT_INT_TRIPLE: return "int triple";
    case TRD_OPT_OPT_BOOL: return "optional bool";
    default: return "?";
    }
}

static const char *stage_name(int32_t s)
{
    switch (s) {
    case TRD_STAGE_COMPILE: return "compile";
    case TRD_STAGE_LOAD: return "load";
    case TRD_STAGE_LAUNCH: return "launch";
    case TRD_STAGE_RUNTIME: return "runtime";
    default: return "?";
    }
}

/* One row as the release asks it: 1 shown (*def: its default there), 0 not in the release, -1 error set
 * (a release the backend's table does not know). */
static int row_in(const char *backend, const trd_option_info_t *info, const char *triton, const char **def)
{
    *def = info->default_value;
    if (!triton)
        return 1;
    trd_status_t st = trd_option_default(backend, info->name, triton, def);
    if (st == TRD_OK)
        return 1;
    if (st == TRD_ERR_NOT_FOUND)
        return 0;
    if (info->flags & TRD_OPTION_NOT_FIELD) {
        *def = info->default_value;
        return 1; /* trident's own (host, runtime, driver) and launcher-derived rows: in every release */
    }
    return -1;
}

/* The releases line of a Triton backend's section. */
static void print_releases(const char *backend, const char *triton)
{
    trd_option_releases_t r = {.struct_size = sizeof r};
    if (trd_option_releases(backend, &r) != TRD_OK || !r.product)
        return;
    if (triton)
        printf("# the fields of %s %s (this table knows %s .. %s", r.product, triton, r.oldest, r.newest);
    else
        printf("# the fields of %s %s, the newest release this table knows (it knows %s .. %s; --triton VERSION "
               "lists another", r.product, r.newest, r.oldest, r.newest);
    printf("%s%s)\n", *r.tested ? "; CI tests it against " : "", r.tested);
}

/* The driver table's keys go in every [driver.<name>] section: one for each driver trident ships. */
static const char *const driver_sections[] = {"driver.cuda", "driver.hip", "driver.levelzero", "driver.host"};

/* The ini sections a backend's table fills (*n of them). */
static const char *section_of(const char *backend, uint32_t k, uint32_t *n)
{
    static char buf[64];
    *n = 1;
    if (strcmp(backend, "runtime") == 0)
        return "runtime";
    if (strcmp(backend, "driver") == 0) {
        *n = sizeof driver_sections / sizeof driver_sections[0];
        return driver_sections[k];
    }
    snprintf(buf, sizeof buf, "backend.%s", backend);
    return buf;
}

/* A driver row that only the host driver reads (the table says so at the start of its doc). */
static int host_only(const trd_option_info_t *info)
{
    return strncmp(info->doc, "host driver only", 16) == 0;
}

int cmd_options(int argc, char **argv)
{
    static const struct option longs[] = {{"json", no_argument, NULL, 'j'}, {"triton", required_argument, NULL, 't'},
                                          {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int json = 0, c;
    const char *triton = NULL;
    while ((c = getopt_long(argc, argv, "jt:h", longs, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 't': triton = optarg; break;
        case 'h':
            fputs("usage: trident options [BACKEND] [--json] [--triton VERSION]\n\n"
                  "Every option of a backend (cuda, hip, xpu, host) or of the runtime and drivers (runtime,\n"
                  "driver): type, default, the stage where it takes effect, the releases that have it, and its\n"
                  "doc. The plain output is a valid trident.ini, so that\n"
                  "  trident options cuda > my.ini && trident config check my.ini\n"
                  "succeeds. --triton VERSION lists the fields of that release and their defaults there (3.5\n"
                  "has cluster_dims); a field the newest release dropped is listed commented out. Each\n"
                  "section names the releases its table knows (Triton 3.0 .. 3.9; 3.6 .. 3.9 are compared\n"
                  "with the installed Triton in CI); a release none knows is a usage error (exit 2).\n"
                  "--json prints an array of objects with the keys name, backend, type, default, stage, doc,\n"
                  "derived, values, since, until, env, triton_field, settable.\n",
                  stdout);
            return CLI_OK;
        default:
            return cli_usage("options", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind > 1)
        return cli_usage("options", "expected at most one backend, got '%s' and '%s'", argv[optind], argv[optind + 1]);
    const char *only = optind < argc ? argv[optind] : NULL;
    uint32_t nb = 0;
    trd_backend_count(&nb);
    if (only) {
        uint32_t count;
        if (trd_option_count(only, &count) != TRD_OK)
            return cli_usage("options", "%s", trd_error_message());
    }
    if (triton) {
        /* a release that no selected Triton table knows is a usage error */
        char why[512] = "";
        int known = 0, tables = 0;
        for (uint32_t b = 0; b < nb && !known; b++) {
            const char *backend, *def;
            trd_backend_name(b, &backend);
            if (only && strcmp(only, backend) != 0 && !(strcmp(only, "intel") == 0 && strcmp(backend, "xpu") == 0))
                continue;
            trd_option_releases_t r = {.struct_size = sizeof r};
            trd_option_info_t info = {.struct_size = sizeof info};
            if (trd_option_releases(backend, &r) != TRD_OK || !r.product || trd_option_info(backend, 0, &info) != TRD_OK)
                continue;
            tables++;
            known = row_in(backend, &info, triton, &def) >= 0;
            if (!known && !*why)
                snprintf(why, sizeof why, "%s", trd_error_message());
        }
        if (tables && !known)
            return cli_usage("options", "--triton: %s", why);
    }
    json_t *arr = json ? json_array() : NULL;
    int listed = 0;
    for (uint32_t b = 0; b < nb; b++) {
        const char *backend;
        trd_backend_name(b, &backend);
        if (only && strcmp(only, backend) != 0 && !(strcmp(only, "intel") == 0 && strcmp(backend, "xpu") == 0))
            continue;
        uint32_t n = 0, nsections = 1;
        trd_option_count(backend, &n);
        for (uint32_t sec = 0; sec < nsections && (sec == 0 || !json); sec++) {
            const char *section = section_of(backend, sec, &nsections);
            if (!json) {
                printf("%s[%s]\n", listed++ ? "\n" : "", section);
                if (nsections > 1 && sec == 0)
                    printf("# the keys of every [driver.<name>] section (a module's name: cuda, hip, levelzero, host, "
                           "...)\n");
            }
            for (uint32_t i = 0; i < n; i++) {
                trd_option_info_t info = {.struct_size = sizeof info};
                trd_option_info(backend, i, &info);
                if (!json && host_only(&info) && strcmp(section, "driver.host") != 0)
                    continue;
                int32_t current = 0;
                trd_option_exists(backend, info.name, NULL, &current);
                current = current || (info.flags & TRD_OPTION_NOT_FIELD);
                const char *def;
                int shown = row_in(backend, &info, triton, &def);
                if (shown < 0) { /* a release this table does not know, another one does */
                    if (!json)
                        printf("# %s\n", trd_error_message());
                    break;
                }
                if (i == 0 && !json)
                    print_releases(backend, triton);
                if (!shown || (!triton && !current))
                    continue;
                if (json) {
                    json_array_append_new(
                        arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:b, s:b}", "name",
                                       info.name, "backend", backend, "type", info.type_name, "kind", type_name(info.type),
                                       "default", def, "stage", stage_name(info.stage), "doc", info.doc, "derived",
                                       info.derived ? json_string(info.derived) : json_null(), "values",
                                       info.values ? json_string(info.values) : json_null(), "since",
                                       info.triton_since ? json_string(info.triton_since) : json_null(), "until",
                                       info.triton_until ? json_string(info.triton_until) : json_null(), "env",
                                       info.env ? json_string(info.env) : json_null(), "triton_field",
                                       !(info.flags & TRD_OPTION_NOT_FIELD), "settable", current));
                    continue;
                }
                printf("# %s (%s, %s stage)", info.name, info.type_name, stage_name(info.stage));
                if (info.triton_since || info.triton_until)
                    printf(", releases %s .. %s", info.triton_since ? info.triton_since : "?",
                           info.triton_until ? info.triton_until : "current");
                printf("\n# %s\n", info.doc);
                if (info.values)
                    printf("# accepted: %s\n", info.values);
                if (info.derived)
                    printf("# derived default: %s\n", info.derived);
                if (info.env)
                    printf("# environment: %s\n", info.env);
                /* a field the newest release dropped is no option of trident's runtime: listed, not set */
                if (!current)
                    printf("# not in the newest release, whose fields trident's options follow: not settable in "
                           "trident.ini\n# ");
                printf("%s = %s\n", info.name, def);
            }
        }
    }
    return json ? cli_print_json(arr) : CLI_OK;
}

/* ------------------------------------------------------------ config */

struct check_ctx {
    const char *path;
    uint32_t errors, warnings;
};

static void print_diag(void *user, int32_t level, const char *file, uint32_t line, const char *message)
{
    struct check_ctx *c = user;
    const char *f = file ? file : "environment";
    if (level == TRD_LOG_ERROR)
        c->errors++;
    else
        c->warnings++;
    if (line)
        fprintf(stderr, "%s:%u: %s%s\n", f, line, level == TRD_LOG_ERROR ? "" : "warning: ", message);
    else
        fprintf(stderr, "%s: %s%s\n", f, level == TRD_LOG_ERROR ? "" : "warning: ", message);
}

static int config_check(int argc, char **argv)
{
    static const struct option longs[] = {{"strict", no_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
                                          {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c, strict = 0;
    while ((c = getopt_long(argc, argv, "sh", longs, NULL)) != -1) {
        if (c == 's')
            strict = 1;
        else if (c == 'h') {
            fputs("usage: trident config check [--strict] FILE\n\n"
                  "Checks every section, key and value of FILE against the option tables. Exit 0 when\n"
                  "valid; exit 1 with FILE:LINE: message lines otherwise. Unknown keys are warnings\n"
                  "(errors with --strict).\n",
                  stdout);
            return CLI_OK;
        } else
            return cli_usage("config check", "unknown option '%s'", argv[optind - 1]);
    }
    if (argc - optind != 1)
        return cli_usage("config check", "expected one FILE");
    struct check_ctx ctx = {.path = argv[optind]};
    uint32_t errors = 0;
    trd_status_t st =
        trd_config_check_file(argv[optind], strict ? TRD_CONFIG_STRICT : 0, print_diag, &ctx, &errors);
    if (st != TRD_OK && st != TRD_ERR_FORMAT) {
        fprintf(stderr, "trident config check: %s\n", trd_error_message());
        return CLI_FAIL;
    }
    if (errors) {
        fprintf(stderr, "%s: %u error%s\n", argv[optind], errors, errors == 1 ? "" : "s");
        return CLI_FAIL;
    }
    printf("%s: valid%s\n", argv[optind], ctx.warnings ? " (with warnings)" : "");
    return CLI_OK;
}

static json_t *entry_json(const char *section, const char *key, const char *value, const char *origin)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "section", section, "key", key, "value", value, "origin", origin);
}

static int config_show(int argc, char **argv)
{
    static const struct option longs[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
                                          {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c, json = 0;
    while ((c = getopt_long(argc, argv, "jh", longs, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 'h') {
            fputs("usage: trident config show [--json]\n\n"
                  "The effective configuration: every runtime setting and backend option with its value and\n"
                  "where it came from (default, FILE:LINE, env NAME, api), then the [driver.*] and [device]\n"
                  "entries that are set. Sources, later overriding earlier: the system file, the user file,\n"
                  "$TRIDENT_CONFIG, TRIDENT_* environment variables.\n",
                  stdout);
            return CLI_OK;
        } else
            return cli_usage("config show", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind < argc)
        return cli_usage("config show", "unexpected argument '%s'", argv[optind]);
    trd_config_t *cfg;
    if (trd_config_create(0, &cfg) != TRD_OK)
        return cli_fail("config show");
    struct check_ctx ctx = {0};
    trd_config_set_diag(cfg, print_diag, &ctx);
    trd_config_load_defaults(cfg);
    json_t *arr = json ? json_array() : NULL;
    static const char *const backends[] = {"runtime", "cuda", "hip", "xpu", "host"};
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
        uint32_t one;
        const char *section = section_of(backends[b], 0, &one);
        if (!json)
            printf("%s[%s]\n", b ? "\n" : "", section);
        uint32_t n = 0;
        trd_option_count(backends[b], &n);
        for (uint32_t i = 0; i < n; i++) {
            trd_option_info_t info = {.struct_size = sizeof info};
            trd_option_info(backends[b], i, &info);
            int32_t current = 0;
            trd_option_exists(backends[b], info.name, NULL, &current);
            if (!current && !(info.flags & TRD_OPTION_NOT_FIELD))
                continue;
            const char *value = info.default_value, *origin = "default";
            trd_config_get(cfg, section, info.name, &value, &origin);
            if (json)
                json_array_append_new(arr, entry_json(section, info.name, value, origin));
            else
                printf("%s = %s  ; %s\n", info.name, value, origin);
        }
    }
    uint32_t ne = 0;
    trd_config_entry_count(cfg, &ne);
    const char *last = NULL;
    for (uint32_t i = 0; i < ne; i++) {
        trd_config_entry_t e = {.struct_size = sizeof e};
        trd_config_entry_get(cfg, i, &e);
        if (strncmp(e.section, "driver.", 7) != 0 && strncmp(e.section, "device", 6) != 0)
            continue;
        if (json) {
            json_array_append_new(arr, entry_json(e.section, e.key, e.value, e.origin));
            continue;
        }
        if (!last || strcmp(last, e.section) != 0)
            printf("\n[%s]\n", e.section);
        last = e.section;
        printf("%s = %s  ; %s\n", e.key, e.value, e.origin);
    }
    trd_config_destroy(cfg);
    int rc = json ? cli_print_json(arr) : CLI_OK;
    return ctx.errors ? CLI_FAIL : rc;
}

int cmd_config(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs("usage: trident config show [--json]\n"
              "       trident config check [--strict] FILE\n",
              argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (strcmp(argv[1], "show") == 0)
        return config_show(argc - 1, argv + 1);
    if (strcmp(argv[1], "check") == 0)
        return config_check(argc - 1, argv + 1);
    return cli_usage("config", "'%s' is not show or check", argv[1]);
}
