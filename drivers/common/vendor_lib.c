/* SPDX-License-Identifier: Apache-2.0 */
/* vendor_lib.c: the one vendor-library loader (vendor_lib.h gives the rule). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "drivers/common/services.h"
#include "drivers/common/vendor_lib.h"

static void tried_add(trd_vlib_t *lib, const char *path, const char *why)
{
    /* glibc's dlerror() already starts with "<path>: " */
    size_t pl = strlen(path);
    if (strncmp(why, path, pl) == 0 && strncmp(why + pl, ": ", 2) == 0)
        why += pl + 2;
    size_t len = strlen(lib->tried);
    if (len < sizeof lib->tried - 1)
        snprintf(lib->tried + len, sizeof lib->tried - len, "%s%s: %s", len ? "; " : "", path, why);
}

/* Fills api from handle; returns the first REQUIRED symbol missing, or NULL. */
static const trd_vlib_symbol_t *resolve_all(const trd_vlib_spec_t *spec, void *handle, void *api)
{
    for (size_t i = 0; i < spec->num_symbols; i++) {
        const trd_vlib_symbol_t *s = &spec->symbols[i];
        void *fn = spec->resolve ? spec->resolve(handle, s) : dlsym(handle, s->link_name);
        memcpy((char *)api + s->offset, &fn, sizeof fn);
        if (!fn && s->required)
            return s;
    }
    return NULL;
}

/* 1 when path is usable: lib and api filled. */
static int try_one(trd_vlib_t *lib, const trd_vlib_spec_t *spec, const char *path, void *api)
{
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        tried_add(lib, path, e ? e : "dlopen failed");
        return 0;
    }
    const trd_vlib_symbol_t *missing = resolve_all(spec, h, api);
    if (missing) {
        char why[256];
        snprintf(why, sizeof why, "required symbol %s is missing%s%s", missing->name,
                 spec->missing_hint ? " " : "", spec->missing_hint ? spec->missing_hint : "");
        tried_add(lib, path, why);
        memset(api, 0, spec->api_size);
        dlclose(h);
        return 0;
    }
    /* The file the name resolved to, for messages and logs. */
    Dl_info info;
    void *first = NULL;
    if (spec->num_symbols)
        memcpy(&first, (char *)api + spec->symbols[0].offset, sizeof first);
    const char *where = first && dladdr(first, &info) && info.dli_fname ? info.dli_fname : path;
    snprintf(lib->path, sizeof lib->path, "%s", where);
    lib->handle = h;
    return 1;
}

trd_status_t trd_vlib_open(trd_vlib_t *lib, const trd_vlib_spec_t *spec, const char *configured, void *api)
{
    memset(lib, 0, sizeof *lib);
    memset(api, 0, spec->api_size);
    if (configured && *configured) {
        for (const char *s = configured;;) {
            const char *c = strchr(s, ':');
            size_t n = c ? (size_t)(c - s) : strlen(s);
            char path[512];
            if (n >= sizeof path)
                tried_add(lib, "(a path)", "longer than 511 bytes");
            else if (n > 0) {
                memcpy(path, s, n);
                path[n] = '\0';
                if (try_one(lib, spec, path, api))
                    return TRD_OK;
            }
            if (!c)
                break;
            s = c + 1;
        }
    } else {
        for (const char *const *p = spec->defaults; p && *p; p++)
            if (try_one(lib, spec, *p, api))
                return TRD_OK;
    }
    char tried[sizeof lib->tried];
    memcpy(tried, lib->tried, sizeof tried);
    memset(lib, 0, sizeof *lib);
    if (configured && *configured)
        return trd_drv_error(TRD_ERR_UNSUPPORTED, "no usable %s: %s = %s: tried %s", spec->what,
                                spec->config_key, configured, tried[0] ? tried : "nothing");
    return trd_drv_error(TRD_ERR_UNSUPPORTED, "no usable %s: tried %s", spec->what,
                            tried[0] ? tried : "nothing");
}

void trd_vlib_close(trd_vlib_t *lib)
{
    if (lib->handle)
        dlclose(lib->handle);
    lib->handle = NULL;
}
