/* loader.c: dlopens the Level Zero loader library and resolves the functions
 * of symbols.h. Candidates are tried in order; when none is usable the error
 * lists every path and why it was refused. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/levelzero/levelzero.h"

struct zdrv_why {
    char text[2048];
    size_t len;
};

static void zdrv_why_add(struct zdrv_why *w, const char *path, const char *reason)
{
    if (w->len >= sizeof w->text - 1)
        return;
    int n = snprintf(w->text + w->len, sizeof w->text - w->len, "%s%s: %s", w->len ? "; " : "", path, reason);
    if (n > 0)
        w->len += (size_t)n < sizeof w->text - w->len ? (size_t)n : sizeof w->text - w->len - 1;
}

/* Resolves every symbol of `lib` into `api`; returns the first missing
 * required name, or NULL. */
static const char *zdrv_resolve(void *lib, struct zdrv_api *api)
{
    memset(api, 0, sizeof *api);
#define ZDRV_REQ(name)                                                                                 \
    *(void **)&api->name = dlsym(lib, #name);                                                          \
    if (!api->name)                                                                                    \
        return #name;
#define ZDRV_OPT(name) *(void **)&api->name = dlsym(lib, #name);
    ZDRV_SYMBOLS(ZDRV_REQ, ZDRV_OPT)
#undef ZDRV_REQ
#undef ZDRV_OPT
    return NULL;
}

static int zdrv_try_path(struct zdrv_driver *d, const char *path, struct zdrv_why *why)
{
    dlerror();
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        size_t n = strlen(path);
        /* glibc's message already starts with "<path>: " */
        if (e && strncmp(e, path, n) == 0 && e[n] == ':' && e[n + 1] == ' ')
            e += n + 2;
        zdrv_why_add(why, path, e ? e : "dlopen failed");
        return 0;
    }
    const char *missing = zdrv_resolve(lib, &d->api);
    if (missing) {
        char reason[160];
        snprintf(reason, sizeof reason, "required symbol %s is missing (not a Level Zero loader?)", missing);
        zdrv_why_add(why, path, reason);
        memset(&d->api, 0, sizeof d->api);
        dlclose(lib);
        return 0;
    }
    d->lib = lib;
    return 1;
}

trd_status_t zdrv_library_open(struct zdrv_driver *d, const char *paths)
{
    struct zdrv_why why = {.len = 0};
    why.text[0] = '\0';
    const char *list = paths && *paths ? paths : ZDRV_DEFAULT_LIBRARY;
    for (const char *s = list; *s;) {
        const char *colon = strchr(s, ':');
        size_t n = colon ? (size_t)(colon - s) : strlen(s);
        if (n > 0 && n < 4096) {
            char path[4096];
            memcpy(path, s, n);
            path[n] = '\0';
            if (zdrv_try_path(d, path, &why))
                return TRD_OK;
        }
        if (!colon)
            break;
        s = colon + 1;
    }
    return trd_driver_error(TRD_ERR_UNSUPPORTED, "no usable Level Zero loader library (%s): %s",
                            paths && *paths ? "[driver.levelzero] library" : "default name",
                            why.len ? why.text : "the library list is empty");
}

void zdrv_library_close(struct zdrv_driver *d)
{
    if (d->lib)
        dlclose(d->lib);
    d->lib = NULL;
    memset(&d->api, 0, sizeof d->api);
}
