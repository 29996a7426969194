/* loader.c: finds the HIP runtime library and resolves the entry points of
 * symbols.h. Candidates are tried in order; one that does not open, or lacks a
 * required symbol, is recorded with the reason and the next is tried. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "drivers/hip/hip.h"

/* ROCm 6, ROCm 5 (Debian 12's libamdhip64-5), then the development link. */
static const char *const default_names[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};

struct hip_tried {
    char text[1536];
    size_t len;
};

static void hip_tried_add(struct hip_tried *t, const char *path, const char *why)
{
    /* dlerror() starts with the path again: drop it */
    size_t pl = strlen(path);
    if (strncmp(why, path, pl) == 0 && strncmp(why + pl, ": ", 2) == 0)
        why += pl + 2;
    if (t->len < sizeof t->text) {
        int n = snprintf(t->text + t->len, sizeof t->text - t->len, "%s%s (%s)", t->len ? "; " : "", path, why);
        if (n > 0)
            t->len += (size_t)n;
    }
}

/* Resolves every symbol; returns the first missing required one, or NULL. */
static const char *hip_resolve(void *lib, struct hip_api *api)
{
    const char *missing = NULL;
#define HIP_RESOLVE_REQUIRED(ret, name, params)                                                      \
    *(void **)&api->name = dlsym(lib, #name);                                                       \
    if (!api->name && !missing)                                                                      \
        missing = #name;
#define HIP_RESOLVE_OPTIONAL(ret, name, params) *(void **)&api->name = dlsym(lib, #name);
    HIP_SYMBOLS(HIP_RESOLVE_REQUIRED, HIP_RESOLVE_OPTIONAL)
#undef HIP_RESOLVE_REQUIRED
#undef HIP_RESOLVE_OPTIONAL
    return missing;
}

/* Tries one candidate; 1 when it is usable (d filled). */
static int hip_try_open(struct hip_driver *d, const char *path, struct hip_tried *t)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        hip_tried_add(t, path, e ? e : "dlopen failed");
        return 0;
    }
    struct hip_api api;
    memset(&api, 0, sizeof api);
    const char *missing = hip_resolve(lib, &api);
    if (missing) {
        char why[128];
        snprintf(why, sizeof why, "no symbol %s: not a usable HIP runtime", missing);
        hip_tried_add(t, path, why);
        dlclose(lib);
        return 0;
    }
    /* The file the name resolved to, for messages and logs. */
    Dl_info info;
    const char *where = dladdr(*(void **)&api.hipInit, &info) && info.dli_fname ? info.dli_fname : path;
    snprintf(d->lib_path, sizeof d->lib_path, "%s", where);
    /* HIP cannot be unloaded once initialized (its runtime keeps threads and
     * state, and has no deinit): pin it in the process. */
    void *pin = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
    if (pin)
        dlclose(pin);
    d->lib = lib;
    d->api = api;
    return 1;
}

trd_status_t hip_library_open(struct hip_driver *d, const char *configured)
{
    struct hip_tried t = {.len = 0};
    t.text[0] = '\0';
    if (configured && *configured) {
        /* [driver.hip] library: a colon list tried instead of the defaults */
        const char *s = configured;
        while (*s) {
            const char *c = strchr(s, ':');
            size_t n = c ? (size_t)(c - s) : strlen(s);
            if (n > 0) {
                char path[512];
                if (n >= sizeof path) {
                    hip_tried_add(&t, "(a path)", "longer than 511 bytes");
                } else {
                    memcpy(path, s, n);
                    path[n] = '\0';
                    if (hip_try_open(d, path, &t))
                        goto found;
                }
            }
            if (!c)
                break;
            s = c + 1;
        }
        return trd_driver_error(TRD_ERR_UNSUPPORTED, "no usable HIP runtime: [driver.hip] library = %s: tried %s",
                                configured, t.len ? t.text : "nothing");
    }
    for (size_t i = 0; i < sizeof default_names / sizeof *default_names; i++)
        if (hip_try_open(d, default_names[i], &t))
            goto found;
    return trd_driver_error(TRD_ERR_UNSUPPORTED, "no usable HIP runtime: tried %s", t.text);
found:
    if (t.len)
        trd_driver_log(TRD_LOG_INFO, "hip: using %s after %s", d->lib_path, t.text);
    else
        trd_driver_log(TRD_LOG_INFO, "hip: using %s", d->lib_path);
    return TRD_OK;
}

void hip_library_close(struct hip_driver *d)
{
    if (d->lib)
        dlclose(d->lib);
    d->lib = NULL;
}
