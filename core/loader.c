/* SPDX-License-Identifier: Apache-2.0 */
/* loader.c: finds driver modules, dlopens them, checks their entry, and
 * records for each what happened and why. A failing module never stops the
 * others. */
#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file.h"
#include "core/internal.h"

/* Installed modules lie in <libdir>/trident/drivers (automake's $(pkglibdir)/drivers), found from where this
 * libtrident lies, so that a prefix, a DESTDIR tree moved elsewhere or a wheel finds its own; TRD_DRIVER_DIR,
 * the configured one, only where the library cannot name its own file. */
#ifndef TRD_DRIVER_SUBDIR
#define TRD_DRIVER_SUBDIR "trident/drivers"
#endif
#ifndef TRD_DRIVER_DIR
#define TRD_DRIVER_DIR "/usr/local/lib/" TRD_DRIVER_SUBDIR
#endif

/* The host driver is built one way (drivers/host/configure.m4): into libtrident, whose loader starts it and
 * skips a module of that name (it would be a second copy in the process), or as the module trident_host.so,
 * which the loader finds like the others. Weak: defined where drivers/host's code is linked in (libtrident built
 * with it, and the programs that link libtrident's layers statically), NULL in a libtrident without it. */
const trd_driver_ops_t *trd_host_driver_ops(void) __attribute__((weak, visibility("hidden")));

/* The size of the first version of the ops table: a module must have at least this. */
#define OPS_V1_SIZE (offsetof(trd_driver_ops_t, event_elapsed) + sizeof(void *))

static struct trd_driver *driver_new(trd_runtime_t *rt, const char *name, const char *path)
{
    struct trd_driver *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->rt = rt;
    d->name = trd_strdup(name);
    d->path = trd_strdup(path);
    d->backend = trd_strdup("");
    if (!d->name || !d->path || !d->backend) {
        free(d->name);
        free(d->path);
        free(d->backend);
        free(d);
        return NULL;
    }
    return d;
}

static void set_reason(struct trd_driver *d, int32_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_reason(struct trd_driver *d, int32_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *r = NULL;
    if (vasprintf(&r, fmt, ap) < 0)
        r = NULL;
    va_end(ap);
    free(d->reason);
    d->reason = r;
    d->status = status;
}

void trd_driver_unload(struct trd_driver *d)
{
    if (!d)
        return;
    if (d->ops && d->ctx)
        d->ops->fini(d->ctx);
    if (d->dl)
        dlclose(d->dl);
    free(d->name);
    free(d->backend);
    free(d->path);
    free(d->reason);
    free(d);
}

static int push_driver(trd_runtime_t *rt, struct trd_driver *d)
{
    struct trd_driver **p = realloc(rt->drivers, (rt->ndrivers + 1) * sizeof *p);
    if (!p)
        return 0;
    rt->drivers = p;
    rt->drivers[rt->ndrivers++] = d;
    return 1;
}

static struct trd_driver *find_loaded(trd_runtime_t *rt, const char *name)
{
    for (uint32_t i = 0; i < rt->ndrivers; i++)
        if (rt->drivers[i]->ops && strcmp(rt->drivers[i]->name, name) == 0)
            return rt->drivers[i];
    return NULL;
}

static int valid_name(const char *s)
{
    if (!s || !*s || strlen(s) > 32)
        return 0;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return 0;
    return 1;
}

/* Checks a module's table; returns a reason when it is not usable. */
static const char *check_ops(const trd_driver_ops_t *ops, char *buf, size_t cap)
{
    if (!ops)
        return "its entry returned NULL";
    if (ops->abi_version < TRD_DRIVER_ABI_MIN_VERSION || ops->abi_version > TRD_DRIVER_ABI_VERSION) {
        snprintf(buf, cap, "driver ABI version %u is not supported (this trident supports %u to %u): %s",
                 ops->abi_version, TRD_DRIVER_ABI_MIN_VERSION, TRD_DRIVER_ABI_VERSION,
                 ops->abi_version > TRD_DRIVER_ABI_VERSION ? "the module is newer than this libtrident"
                                                           : "the module is older than any this libtrident runs");
        return buf;
    }
    if (ops->struct_size < OPS_V1_SIZE) {
        snprintf(buf, cap, "its ops table is %u bytes, smaller than the %zu of ABI version %u",
                 ops->struct_size, (size_t)OPS_V1_SIZE, ops->abi_version);
        return buf;
    }
    if (!valid_name(ops->name))
        return "its name is missing or not [a-z0-9_]{1,32}";
    if (!valid_name(ops->backend))
        return "its backend is missing or not [a-z0-9_]{1,32}";
    const struct { const void *fn; const char *name; } required[] = {
        {(const void *)ops->init, "init"},
        {(const void *)ops->fini, "fini"},
        {(const void *)ops->device_count, "device_count"},
        {(const void *)ops->device_props, "device_props"},
        {(const void *)ops->device_open, "device_open"},
        {(const void *)ops->device_close, "device_close"},
        {(const void *)ops->module_load, "module_load"},
        {(const void *)ops->module_unload, "module_unload"},
        {(const void *)ops->launch, "launch"},
        {(const void *)ops->mem_alloc, "mem_alloc"},
        {(const void *)ops->mem_free, "mem_free"},
        {(const void *)ops->mem_copy, "mem_copy"},
        {(const void *)ops->mem_set, "mem_set"},
        {(const void *)ops->stream_create, "stream_create"},
        {(const void *)ops->stream_destroy, "stream_destroy"},
        {(const void *)ops->stream_sync, "stream_sync"},
        {(const void *)ops->stream_native, "stream_native"},
        {(const void *)ops->event_create, "event_create"},
        {(const void *)ops->event_destroy, "event_destroy"},
        {(const void *)ops->event_record, "event_record"},
        {(const void *)ops->event_sync, "event_sync"},
        {(const void *)ops->event_elapsed, "event_elapsed"},
    };
    for (size_t i = 0; i < TRD_ARRAY_SIZE(required); i++)
        if (!required[i].fn) {
            snprintf(buf, cap, "its required function '%s' is NULL", required[i].name);
            return buf;
        }
    return NULL;
}

struct config_closure {
    const trd_config_t *config;
    char section[64];
};

static const char *config_get(void *ctx, const char *key)
{
    struct config_closure *c = ctx;
    return trd_config_value(c->config, c->section, key);
}

static trd_status_t services_error(trd_status_t status, const char *fmt, va_list ap)
{
    return trd_error_vset(status, fmt, ap);
}

/* What a version-2 driver calls instead of linking libtrident. */
static const trd_driver_services_t services = {
    .struct_size = sizeof(trd_driver_services_t),
    .error = services_error,
    .log = trd_vlog,
    .config_get = config_get,
    .options_get = trd_options_get,
    .options_get_int = trd_options_get_int,
    .options_get_bool = trd_options_get_bool,
    .options_is_set = trd_options_is_set,
};

/* Runs a checked module's init and records the outcome. */
static void start_driver(trd_runtime_t *rt, struct trd_driver *d, const trd_driver_ops_t *ops)
{
    char *name = trd_strdup(ops->name), *backend = trd_strdup(ops->backend);
    if (!name || !backend) {
        free(name);
        free(backend);
        set_reason(d, TRD_DRIVER_FAILED, "out of memory");
        return;
    }
    free(d->name);
    free(d->backend);
    d->name = name;
    d->backend = backend;
    d->abi_version = ops->abi_version;
    d->priority = ops->priority;

    struct config_closure cc = {.config = rt->config};
    snprintf(cc.section, sizeof cc.section, "driver.%s", d->name);
    const char *enabled = trd_config_value(rt->config, cc.section, "enabled");
    if (enabled && strcmp(enabled, "false") == 0) {
        const char *origin = NULL;
        trd_config_get(rt->config, cc.section, "enabled", NULL, &origin);
        set_reason(d, TRD_DRIVER_SKIPPED, "disabled by the configuration (%s)", origin ? origin : "?");
        return;
    }
    const char *prio = trd_config_value(rt->config, cc.section, "priority");
    int64_t pv;
    if (prio && trd_parse_i64(prio, &pv))
        d->priority = (int32_t)pv;

    char note[512] = "";
    trd_driver_init_args_t args = {
        .struct_size = sizeof args,
        .abi_version = ops->abi_version,
        .config_get = config_get,
        .config_ctx = &cc,
        .note = note,
        .note_cap = sizeof note,
        .services = &services,
    };
    trd_error_clear();
    void *ctx = NULL;
    trd_status_t st = ops->init(&args, &ctx);
    note[sizeof note - 1] = '\0';
    if (st != TRD_OK) {
        const char *msg = trd_error_message();
        if (!*msg && st == TRD_ERR_VERSION) /* a module refusing the table cannot report through it */
            set_reason(d, TRD_DRIVER_FAILED,
                       "its init refused the core's services table (init args of %zu bytes, services table of %u "
                       "bytes): the module needs a newer libtrident",
                       sizeof args, (unsigned)services.struct_size);
        else
            set_reason(d, st == TRD_ERR_UNSUPPORTED ? TRD_DRIVER_SKIPPED : TRD_DRIVER_FAILED, "%s",
                       *msg ? msg : trd_status_name(st));
        return;
    }
    d->ops = ops;
    d->ctx = ctx;
    d->status = TRD_DRIVER_LOADED;
    free(d->reason);
    d->reason = note[0] ? trd_strdup(note) : NULL;
}

static void load_module(trd_runtime_t *rt, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    struct trd_driver *d = driver_new(rt, base, path);
    if (!d || !push_driver(rt, d)) {
        trd_driver_unload(d);
        trd_log(TRD_LOG_ERROR, "out of memory recording driver module %s", path);
        return;
    }
    if (path[0] != '/') {
        set_reason(d, TRD_DRIVER_SKIPPED, "not an absolute path: only absolute paths are loaded");
        return;
    }
    /* dlopen would block forever on a FIFO and read a device without end: only regular files are modules */
    struct stat sb;
    if (stat(path, &sb) != 0) {
        set_reason(d, TRD_DRIVER_FAILED, "cannot stat: %s", strerror(errno));
        return;
    }
    if (!S_ISREG(sb.st_mode)) {
        set_reason(d, TRD_DRIVER_SKIPPED, "%s, not a regular file", trd_file_kind(sb.st_mode));
        return;
    }
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        set_reason(d, TRD_DRIVER_FAILED, "dlopen failed: %s", e ? e : "unknown error");
        return;
    }
    trd_driver_entry_fn entry;
    *(void **)&entry = dlsym(dl, TRD_DRIVER_ENTRY_SYMBOL);
    if (!entry) {
        dlclose(dl);
        set_reason(d, TRD_DRIVER_FAILED, "no '%s' symbol: not a trident driver module", TRD_DRIVER_ENTRY_SYMBOL);
        return;
    }
    const trd_driver_ops_t *ops = entry(TRD_DRIVER_ABI_VERSION);
    char buf[256];
    const char *why = check_ops(ops, buf, sizeof buf);
    if (why) {
        if (ops && ops->abi_version)
            d->abi_version = ops->abi_version;
        dlclose(dl);
        set_reason(d, TRD_DRIVER_FAILED, "%s", why);
        return;
    }
    if (trd_host_driver_ops && strcmp(ops->name, "host") == 0) {
        char *nm = trd_strdup("host");
        dlclose(dl);
        if (nm) {
            free(d->name);
            d->name = nm;
        }
        set_reason(d, TRD_DRIVER_SKIPPED, "the host driver is built into this libtrident (configure "
                                          "--enable-host-module builds it as a module instead)");
        return;
    }
    struct trd_driver *other = find_loaded(rt, ops->name);
    if (other) {
        char *nm = trd_strdup(ops->name);
        dlclose(dl);
        if (nm) {
            free(d->name);
            d->name = nm;
        }
        set_reason(d, TRD_DRIVER_SKIPPED, "driver '%s' is already loaded from %s", d->name, other->path);
        return;
    }
    d->dl = dl;
    start_driver(rt, d, ops);
    if (d->status != TRD_DRIVER_LOADED) {
        dlclose(d->dl);
        d->dl = NULL;
    }
}

/* Records a place searched, in order; a record that cannot be allocated is left out (it is only shown). */
static void searched(trd_runtime_t *rt, const char *path, const char *origin, const char *problem, uint32_t modules)
{
    struct trd_search *p = realloc(rt->searched, (rt->nsearched + 1) * sizeof *p);
    if (!p)
        return;
    rt->searched = p;
    struct trd_search *e = &p[rt->nsearched];
    e->path = trd_strdup(path);
    e->origin = trd_strdup(origin);
    e->problem = problem ? trd_strdup(problem) : NULL;
    e->modules = modules;
    if (!e->path || !e->origin || (problem && !e->problem)) {
        free(e->path);
        free(e->origin);
        free(e->problem);
        return;
    }
    rt->nsearched++;
}

void trd_runtime_searched_free(trd_runtime_t *rt)
{
    for (uint32_t i = 0; i < rt->nsearched; i++) {
        free(rt->searched[i].path);
        free(rt->searched[i].origin);
        free(rt->searched[i].problem);
    }
    free(rt->searched);
    rt->searched = NULL;
    rt->nsearched = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads every trident_*.so of a directory, in name order. */
static void load_dir(trd_runtime_t *rt, const char *dir, const char *origin)
{
    DIR *dh = opendir(dir);
    if (!dh) {
        searched(rt, dir, origin, strerror(errno), 0);
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dh))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "trident_", 8) != 0 || len < 11 || strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            char **p = realloc(names, ncap * sizeof *p);
            if (!p)
                break;
            names = p;
            cap = ncap;
        }
        if (!(names[n] = trd_asprintf("%s/%s", dir, e->d_name)))
            break;
        n++;
    }
    closedir(dh);
    searched(rt, dir, origin, NULL, (uint32_t)n);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        load_module(rt, names[i]);
        free(names[i]);
    }
    free(names);
}

static int is_directory(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void load_entry(trd_runtime_t *rt, const char *entry, size_t len, const char *origin)
{
    if (len == 0)
        return;
    char *p = trd_strndup(entry, len);
    if (!p)
        return;
    if (p[0] == '/' && is_directory(p)) {
        load_dir(rt, p, origin);
    } else if (p[0] != '/') {
        searched(rt, p, origin, "not an absolute path: ignored", 0);
        struct trd_driver *d = driver_new(rt, p, p);
        if (d && push_driver(rt, d))
            set_reason(d, TRD_DRIVER_SKIPPED, "driver path entry '%s' is not absolute: ignored", p);
        else
            trd_driver_unload(d);
    } else {
        struct stat st;
        int missing = stat(p, &st) != 0;
        searched(rt, p, origin, missing ? strerror(errno) : NULL, !missing);
        load_module(rt, p); /* which says why it does not load */
    }
    free(p);
}

static void load_list(trd_runtime_t *rt, const char *list, const char *origin)
{
    if (!list)
        return;
    const char *s = list;
    while (*s) {
        const char *c = strchr(s, ':');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        load_entry(rt, s, len, origin);
        if (!c)
            break;
        s = c + 1;
    }
}

/* The build tree this libtrident lies in (libtrident at <build>/core/.libs/), or NULL when installed. */
static char *build_tree_root(void)
{
    Dl_info info;
    if (!dladdr((void *)trd_runtime_create, &info) || !info.dli_fname)
        return NULL;
    const char *lib = info.dli_fname;
    const char *suffix = "/core/.libs/";
    const char *slash = strrchr(lib, '/');
    if (!slash)
        return NULL;
    size_t dirlen = (size_t)(slash - lib) + 1;
    size_t slen = strlen(suffix);
    if (dirlen < slen || strncmp(lib + dirlen - slen, suffix, slen) != 0)
        return NULL;
    return trd_strndup(lib, dirlen - slen);
}

/* The installed drivers' directory beside the libtrident in use (<its directory>/TRD_DRIVER_SUBDIR), that
 * directory canonical (the loader names libtrident as the rpath found it: $ORIGIN/../libtrident.so.1). */
static char *installed_driver_dir(void)
{
    Dl_info info;
    const char *slash = dladdr((void *)trd_runtime_create, &info) && info.dli_fname ? strrchr(info.dli_fname, '/')
                                                                                     : NULL;
    if (!slash)
        return trd_strdup(TRD_DRIVER_DIR);
    char *dir = trd_strndup(info.dli_fname, (size_t)(slash - info.dli_fname));
    char *real = dir ? realpath(dir, NULL) : NULL;
    char *out = dir ? trd_asprintf("%s/%s", real ? real : dir, TRD_DRIVER_SUBDIR) : NULL;
    free(real);
    free(dir);
    return out;
}

/* An uninstalled build finds its own modules: under <build>/drivers/<name>/.libs/. */
static void load_build_tree(trd_runtime_t *rt, const char *root)
{
    char *drivers = trd_asprintf("%s/drivers", root);
    DIR *dh = drivers ? opendir(drivers) : NULL;
    if (dh) {
        char **subs = NULL;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(dh))) {
            if (e->d_name[0] == '.')
                continue;
            char **p = realloc(subs, (n + 1) * sizeof *p);
            if (!p)
                break;
            subs = p;
            if (!(subs[n] = trd_asprintf("%s/%s/.libs", drivers, e->d_name)))
                break;
            n++;
        }
        closedir(dh);
        if (n)
            qsort(subs, n, sizeof *subs, cmp_str);
        for (size_t i = 0; i < n; i++) {
            load_dir(rt, subs[i], "the build tree of the libtrident in use");
            free(subs[i]);
        }
        free(subs);
    }
    free(drivers);
}

trd_status_t trd_runtime_load_drivers(trd_runtime_t *rt, const char *path_list, uint32_t flags)
{
    load_list(rt, path_list, "trd_runtime_desc_t.driver_path");
    const char *where = NULL;
    const char *list = trd_config_value(rt->config, "runtime", "driver_path");
    char origin[512];
    if (list) {
        trd_config_get(rt->config, "runtime", "driver_path", NULL, &where);
        snprintf(origin, sizeof origin, "[runtime] driver_path (%s)", where ? where : "?");
        load_list(rt, list, origin);
    }
    if (!(flags & TRD_RUNTIME_NO_DEFAULT_DRIVERS)) {
        /* a build tree's libtrident its own build's modules, an installed one those installed beside it */
        char *root = build_tree_root();
        char *dir = root ? NULL : installed_driver_dir();
        if (root)
            load_build_tree(rt, root);
        else if (dir)
            load_dir(rt, dir, "the installed drivers, beside the libtrident in use");
        free(dir);
        if (!root && !dir)
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        free(root);
    }
    /* the host driver, last (its device follows the GPUs), in every runtime as libtrident's own part: built in,
     * or the module beside libtrident (its build tree's, or the installed one) unless one was loaded */
    int have_host = 0;
    for (uint32_t i = 0; i < rt->ndrivers; i++)
        have_host |= strcmp(rt->drivers[i]->name, "host") == 0; /* loaded, or already reported as failed */
    if (trd_host_driver_ops) {
        struct trd_driver *host = driver_new(rt, "host", "(built-in)");
        if (!host || !push_driver(rt, host)) {
            trd_driver_unload(host);
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        }
        start_driver(rt, host, trd_host_driver_ops());
    } else if (!have_host) {
        char *root = build_tree_root();
        char *dir = root ? NULL : installed_driver_dir();
        char *path = root ? trd_asprintf("%s/drivers/host/.libs/trident_host.so", root)
                          : dir ? trd_asprintf("%s/trident_host.so", dir) : NULL;
        free(dir);
        free(root);
        if (!path)
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        load_module(rt, path);
        free(path);
    }
    for (uint32_t i = 0; i < rt->ndrivers; i++) {
        struct trd_driver *d = rt->drivers[i];
        if (d->status == TRD_DRIVER_LOADED)
            trd_log(TRD_LOG_INFO, "driver %s loaded from %s", d->name, d->path);
        else
            trd_log(d->status == TRD_DRIVER_FAILED ? TRD_LOG_WARN : TRD_LOG_INFO, "driver %s (%s) %s: %s",
                    d->name, d->path, d->status == TRD_DRIVER_FAILED ? "failed" : "skipped",
                    d->reason ? d->reason : "");
    }
    return TRD_OK;
}
