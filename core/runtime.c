/* SPDX-License-Identifier: Apache-2.0 */
/* runtime.c: a runtime owns its configuration, its drivers and one list of
 * devices across them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"

static void device_free(trd_device_t *dev)
{
    if (!dev)
        return;
    void *h = atomic_load(&dev->handle);
    if (h && dev->drv->ops)
        dev->drv->ops->device_close(h);
    pthread_mutex_destroy(&dev->open_lock);
    free(dev->uri);
    free(dev->name);
    free(dev->vendor);
    free(dev->arch);
    free(dev->pci_bus_id);
    free(dev->backend);
    free(dev->open_error);
    free(dev);
}

static int uuid_nonzero(const uint8_t *u)
{
    for (int i = 0; i < 16; i++)
        if (u[i])
            return 1;
    return 0;
}

static int same_physical(const trd_device_t *a, const trd_device_t *b)
{
    if (a->pci_bus_id && b->pci_bus_id && *a->pci_bus_id && strcasecmp(a->pci_bus_id, b->pci_bus_id) == 0)
        return 1;
    return (a->props.flags & TRD_DEVICE_HAS_UUID) && (b->props.flags & TRD_DEVICE_HAS_UUID) &&
           uuid_nonzero(a->props.uuid) && memcmp(a->props.uuid, b->props.uuid, 16) == 0;
}

static trd_status_t make_device(trd_runtime_t *rt, struct trd_driver *drv, uint32_t ordinal,
                                trd_device_t **out)
{
    trd_device_props_t p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    trd_status_t st = drv->ops->device_props(drv->ctx, ordinal, &p);
    if (st != TRD_OK)
        return st;
    trd_device_t *d = calloc(1, sizeof *d);
    if (!d)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    pthread_mutex_init(&d->open_lock, NULL);
    d->rt = rt;
    d->drv = drv;
    d->ordinal = ordinal;
    d->uri = trd_asprintf("%s:%u", drv->name, ordinal);
    d->name = trd_strdup(p.name ? p.name : "");
    d->vendor = trd_strdup(p.vendor ? p.vendor : "");
    d->arch = trd_strdup(p.arch ? p.arch : "");
    d->backend = trd_strdup(drv->backend);
    d->pci_bus_id = p.pci_bus_id && *p.pci_bus_id ? trd_strdup(p.pci_bus_id) : NULL;
    if (!d->uri || !d->name || !d->vendor || !d->arch || !d->backend ||
        (p.pci_bus_id && *p.pci_bus_id && !d->pci_bus_id)) {
        device_free(d);
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    d->props = p;
    d->props.struct_size = sizeof d->props;
    d->props.ordinal = ordinal;
    d->props.uri = d->uri;
    d->props.driver = drv->name;
    d->props.backend = d->backend;
    d->props.name = d->name;
    d->props.vendor = d->vendor;
    d->props.arch = d->arch;
    d->props.pci_bus_id = d->pci_bus_id;
    *out = d;
    return TRD_OK;
}

static void note_driver(struct trd_driver *drv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_driver(struct trd_driver *drv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *r = drv->reason ? trd_asprintf("%s; %s", drv->reason, buf) : trd_strdup(buf);
    if (r) {
        free(drv->reason);
        drv->reason = r;
    }
}

/* Which of two drivers exposing one physical device keeps it: the one a
 * [device] section names, else the higher priority, else the first found. */
static int keeps(const trd_runtime_t *rt, const trd_device_t *a, const trd_device_t *b)
{
    const char *want = trd_config_device_value(rt->config, &a->props, "driver", NULL);
    if (!want)
        want = trd_config_device_value(rt->config, &b->props, "driver", NULL);
    if (want) {
        if (strcmp(want, a->drv->name) == 0)
            return 1;
        if (strcmp(want, b->drv->name) == 0)
            return 0;
    }
    return a->drv->priority >= b->drv->priority;
}

static trd_status_t build_devices(trd_runtime_t *rt)
{
    for (uint32_t i = 0; i < rt->ndrivers; i++) {
        struct trd_driver *drv = rt->drivers[i];
        if (drv->status != TRD_DRIVER_LOADED)
            continue;
        uint32_t n = 0;
        trd_status_t st = drv->ops->device_count(drv->ctx, &n);
        if (st != TRD_OK) {
            note_driver(drv, "device enumeration failed: %s", trd_error_message());
            continue;
        }
        if (n > 4096) {
            note_driver(drv, "reported %u devices: ignored", n);
            continue;
        }
        for (uint32_t o = 0; o < n; o++) {
            trd_device_t *dev = NULL;
            st = make_device(rt, drv, o, &dev);
            if (st != TRD_OK) {
                note_driver(drv, "device %u: %s", o, trd_error_message());
                continue;
            }
            const char *origin = NULL;
            const char *en = trd_config_device_value(rt->config, &dev->props, "enabled", &origin);
            if (en && strcmp(en, "false") == 0) {
                note_driver(drv, "%s disabled by the configuration (%s)", dev->uri, origin ? origin : "?");
                device_free(dev);
                continue;
            }
            /* De-duplicate physical devices exposed by two drivers. */
            int dropped = 0;
            for (uint32_t k = 0; k < rt->ndevices && !dropped; k++) {
                trd_device_t *other = rt->devices[k];
                if (other->drv == drv || !same_physical(other, dev))
                    continue;
                if (keeps(rt, other, dev)) {
                    note_driver(drv, "%s is the same device as %s, which %s serves", dev->uri, other->uri,
                                other->drv->name);
                    device_free(dev);
                } else {
                    note_driver(other->drv, "%s is the same device as %s, which %s serves", other->uri,
                                dev->uri, drv->name);
                    other->drv->ndevices--;
                    device_free(other);
                    rt->devices[k] = dev;
                    drv->ndevices++;
                }
                dropped = 1;
            }
            if (dropped)
                continue;
            trd_device_t **p = realloc(rt->devices, (rt->ndevices + 1) * sizeof *p);
            if (!p) {
                device_free(dev);
                return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
            }
            rt->devices = p;
            rt->devices[rt->ndevices++] = dev;
            drv->ndevices++;
        }
    }
    for (uint32_t i = 0; i < rt->ndevices; i++) {
        rt->devices[i]->index = i;
        rt->devices[i]->props.index = i;
    }
    return TRD_OK;
}

/* The cache directory ([runtime] cache_dir, else the XDG default) for every cache; the JIT's only with jit_cache. */
static void setup_cache(trd_runtime_t *rt)
{
    const char *dir = trd_config_value(rt->config, "runtime", "cache_dir");
    char *path = NULL;
    if (dir && *dir) {
        path = trd_strdup(dir);
    } else {
        const char *xdg = trd_getenv("XDG_CACHE_HOME");
        const char *home = trd_getenv("HOME");
        if (xdg && *xdg == '/')
            path = trd_asprintf("%s/trident", xdg);
        else if (home && *home == '/')
            path = trd_asprintf("%s/.cache/trident", home);
    }
    if (!path)
        return;
    rt->cache_root = path;
    const char *enabled = trd_config_value(rt->config, "runtime", "jit_cache");
    if (!enabled || strcmp(enabled, "false") != 0)
        rt->cache_dir = trd_strdup(path);
}

TRD_API trd_status_t trd_runtime_create(const trd_runtime_desc_t *desc, trd_runtime_t **out)
{
    trd_runtime_desc_t d = {.struct_size = sizeof d};
    if (!out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_create: out is NULL");
    if (desc) {
        trd_status_t st = trd_struct_check(desc->struct_size, sizeof(trd_runtime_desc_t), "trd_runtime_desc_t");
        if (st != TRD_OK)
            return st;
        d = *desc;
    }
    trd_log_init_from_env();
    trd_runtime_t *rt = calloc(1, sizeof *rt);
    if (!rt)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    trd_status_t st;
    if (d.config) {
        rt->config = d.config;
    } else {
        if ((st = trd_config_create(0, &rt->config)) != TRD_OK) {
            free(rt);
            return st;
        }
        rt->own_config = 1;
        st = TRD_OK;
        if (!(d.flags & TRD_RUNTIME_NO_ENV))
            st = trd_config_load_defaults(rt->config);
        /* A broken configuration stops here, saying FILE:LINE (or the
         * variable) and why, rather than running with half of it. */
        if (st != TRD_OK) {
            trd_runtime_destroy(rt);
            return st;
        }
    }
    const char *lvl = trd_config_value(rt->config, "runtime", "log_level");
    if (lvl)
        trd_log_apply_config(trd_log_parse_level(lvl));
    setup_cache(rt);
    if ((st = trd_runtime_load_drivers(rt, d.driver_path, d.flags)) != TRD_OK ||
        (st = build_devices(rt)) != TRD_OK) {
        trd_runtime_destroy(rt);
        return st;
    }
    *out = rt;
    return TRD_OK;
}

TRD_API void trd_runtime_destroy(trd_runtime_t *rt)
{
    if (!rt)
        return;
    for (uint32_t i = rt->ndevices; i-- > 0;)
        device_free(rt->devices[i]);
    free(rt->devices);
    for (uint32_t i = rt->ndrivers; i-- > 0;)
        trd_driver_unload(rt->drivers[i]);
    free(rt->drivers);
    trd_runtime_searched_free(rt);
    if (rt->own_config)
        trd_config_destroy(rt->config);
    free(rt->cache_dir);
    free(rt->cache_root);
    free(rt);
}

static pthread_once_t shared_once = PTHREAD_ONCE_INIT;
static trd_runtime_t *shared_rt;
static trd_status_t shared_status;
static char shared_error[1024];

static void shared_init(void)
{
    shared_status = trd_runtime_create(NULL, &shared_rt);
    if (shared_status != TRD_OK)
        snprintf(shared_error, sizeof shared_error, "%s", trd_error_message());
}

TRD_API trd_status_t trd_runtime_shared(trd_runtime_t **out)
{
    if (!out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_shared: out is NULL");
    pthread_once(&shared_once, shared_init);
    if (shared_status != TRD_OK)
        return trd_error_set(shared_status, "the shared runtime failed to start: %s", shared_error);
    *out = shared_rt;
    return TRD_OK;
}

TRD_API trd_status_t trd_runtime_config(trd_runtime_t *rt, const trd_config_t **config)
{
    if (!rt || !config)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_config: NULL argument");
    *config = rt->config;
    return TRD_OK;
}

TRD_API trd_status_t trd_runtime_cache_dir(trd_runtime_t *rt, const char **dir)
{
    if (!rt || !dir)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_cache_dir: NULL argument");
    if (!rt->cache_root)
        return trd_error_set(TRD_ERR_NOT_FOUND, "the runtime has no cache directory ([runtime] cache_dir is empty "
                                                "and neither XDG_CACHE_HOME nor HOME is an absolute path)");
    *dir = rt->cache_root;
    return TRD_OK;
}

TRD_API trd_status_t trd_runtime_driver_count(trd_runtime_t *rt, uint32_t *count)
{
    if (!rt || !count)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_driver_count: NULL argument");
    *count = rt->ndrivers;
    return TRD_OK;
}

TRD_API trd_status_t trd_runtime_driver_search_count(trd_runtime_t *rt, uint32_t *count)
{
    if (!rt || !count)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_driver_search_count: NULL argument");
    *count = rt->nsearched;
    return TRD_OK;
}

TRD_API trd_status_t trd_runtime_driver_search_info(trd_runtime_t *rt, uint32_t index, trd_driver_search_t *info)
{
    if (!rt || !info)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_driver_search_info: NULL argument");
    trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_driver_search_t), "trd_driver_search_t");
    if (st != TRD_OK)
        return st;
    if (index >= rt->nsearched)
        return trd_error_set(TRD_ERR_NOT_FOUND, "search index %u is out of range (%u places searched)", index,
                             rt->nsearched);
    const struct trd_search *e = &rt->searched[index];
    trd_driver_search_t full = {
        .struct_size = sizeof full,
        .modules = e->modules,
        .path = e->path,
        .origin = e->origin,
        .problem = e->problem,
    };
    trd_struct_fill(info, &full, sizeof full);
    return TRD_OK;
}

TRD_API trd_status_t trd_runtime_driver_info(trd_runtime_t *rt, uint32_t index, trd_driver_info_t *info)
{
    if (!rt || !info)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_driver_info: NULL argument");
    trd_status_t st = trd_struct_check(info->struct_size, sizeof(trd_driver_info_t), "trd_driver_info_t");
    if (st != TRD_OK)
        return st;
    if (index >= rt->ndrivers)
        return trd_error_set(TRD_ERR_NOT_FOUND, "driver index %u is out of range (%u drivers)", index,
                             rt->ndrivers);
    const struct trd_driver *d = rt->drivers[index];
    trd_driver_info_t full = {
        .struct_size = sizeof full,
        .status = d->status,
        .device_count = d->ndevices,
        .abi_version = d->abi_version,
        .name = d->name,
        .backend = d->backend,
        .path = d->path,
        .reason = d->reason ? d->reason : "",
    };
    trd_struct_fill(info, &full, sizeof full);
    return TRD_OK;
}
