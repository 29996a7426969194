/* device.c: device properties, selection by URI / index / property, and the
 * driver's per-device state, opened once on first use. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"

int trd_device_is_gpu(const trd_device_t *dev)
{
    return dev->props.kind == TRD_DEVICE_GPU;
}

trd_status_t trd_device_handle(trd_device_t *dev, void **handle)
{
    void *h = atomic_load_explicit(&dev->handle, memory_order_acquire);
    if (h) {
        *handle = h;
        return TRD_OK;
    }
    pthread_mutex_lock(&dev->open_lock);
    h = atomic_load_explicit(&dev->handle, memory_order_relaxed);
    trd_status_t st = TRD_OK;
    if (!h) {
        if (dev->open_status != TRD_OK) {
            st = trd_error_set(dev->open_status, "%s", dev->open_error ? dev->open_error : "device failed to open");
        } else {
            st = dev->drv->ops->device_open(dev->drv->ctx, dev->ordinal, &h);
            if (st != TRD_OK) {
                trd_error_wrap(st, "opening %s", dev->uri);
                dev->open_status = st;
                dev->open_error = trd_strdup(trd_error_message());
            } else {
                atomic_store_explicit(&dev->handle, h, memory_order_release);
            }
        }
    }
    pthread_mutex_unlock(&dev->open_lock);
    if (st == TRD_OK)
        *handle = h;
    return st;
}

TRD_API trd_status_t trd_device_get_props(const trd_device_t *dev, trd_device_props_t *props)
{
    if (!dev || !props)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_device_get_props: NULL argument");
    trd_status_t st = trd_struct_check(props->struct_size, sizeof(trd_device_props_t), "trd_device_props_t");
    if (st != TRD_OK)
        return st;
    trd_struct_fill(props, &dev->props, sizeof dev->props);
    return TRD_OK;
}

TRD_API trd_status_t trd_runtime_device_count(trd_runtime_t *rt, uint32_t *count)
{
    if (!rt || !count)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_device_count: NULL argument");
    *count = rt->ndevices;
    return TRD_OK;
}

TRD_API trd_status_t trd_runtime_device_get(trd_runtime_t *rt, uint32_t index, trd_device_t **device)
{
    if (!rt || !device)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_device_get: NULL argument");
    if (index >= rt->ndevices)
        return trd_error_set(TRD_ERR_NOT_FOUND, "device index %u is out of range (%u devices)", index,
                             rt->ndevices);
    *device = rt->devices[index];
    return TRD_OK;
}

static int parse_uuid(const char *s, uint8_t out[16])
{
    int n = 0;
    for (; *s && n < 32; s++) {
        if (*s == '-')
            continue;
        int v = isdigit((unsigned char)*s) ? *s - '0'
              : (tolower((unsigned char)*s) >= 'a' && tolower((unsigned char)*s) <= 'f') ? tolower((unsigned char)*s) - 'a' + 10
              : -1;
        if (v < 0)
            return 0;
        if (n % 2 == 0)
            out[n / 2] = (uint8_t)(v << 4);
        else
            out[n / 2] |= (uint8_t)v;
        n++;
    }
    return n == 32 && *s == '\0';
}

/* One "key=value" term. Returns 1 match, 0 no match, -1 bad term (message set). */
static int match_term(const trd_device_props_t *p, const char *key, size_t klen, const char *val)
{
#define KEY(k) (klen == strlen(k) && strncmp(key, k, klen) == 0)
    if (KEY("driver"))
        return strcmp(p->driver, val) == 0;
    if (KEY("backend"))
        return strcmp(p->backend, val) == 0;
    if (KEY("arch"))
        return strcmp(p->arch, val) == 0;
    if (KEY("uri"))
        return strcmp(p->uri, val) == 0;
    if (KEY("vendor"))
        return strcasecmp(p->vendor, val) == 0;
    if (KEY("name"))
        return strcasestr(p->name, val) != NULL;
    if (KEY("pci"))
        return p->pci_bus_id && strcasecmp(p->pci_bus_id, val) == 0;
    if (KEY("kind")) {
        if (strcmp(val, "gpu") == 0)
            return p->kind == TRD_DEVICE_GPU;
        if (strcmp(val, "cpu") == 0)
            return p->kind == TRD_DEVICE_CPU;
        trd_error_set(TRD_ERR_INVALID_ARGUMENT, "device selector kind=%s: expected gpu or cpu", val);
        return -1;
    }
    if (KEY("index")) {
        uint64_t i;
        if (!trd_parse_u64(val, &i)) {
            trd_error_set(TRD_ERR_INVALID_ARGUMENT, "device selector index=%s: expected a number", val);
            return -1;
        }
        return i == p->index;
    }
    if (KEY("uuid")) {
        uint8_t u[16];
        if (!parse_uuid(val, u)) {
            trd_error_set(TRD_ERR_INVALID_ARGUMENT, "device selector uuid=%s: expected 32 hex digits", val);
            return -1;
        }
        return (p->flags & TRD_DEVICE_HAS_UUID) && memcmp(u, p->uuid, 16) == 0;
    }
#undef KEY
    char k[64];
    trd_quote(key, klen, k, sizeof k);
    trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                  "device selector key '%s' is not one of driver, backend, arch, name, vendor, pci, uuid, "
                  "kind, uri, index",
                  k);
    return -1;
}

/* 1 match, 0 no match, -1 malformed selector (message set). */
int trd_props_match(const trd_device_props_t *p, const char *sel)
{
    if (!sel || !*sel || strcmp(sel, "best") == 0)
        return 1;
    uint64_t idx;
    if (trd_parse_u64(sel, &idx))
        return idx == p->index;
    if (!strchr(sel, '=')) {
        if (strchr(sel, ':'))
            return strcmp(sel, p->uri) == 0;
        /* a bare word: a driver or backend name */
        return strcmp(sel, p->driver) == 0 || strcmp(sel, p->backend) == 0;
    }
    const char *s = sel;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        if (!eq || eq == s) {
            char shown[128];
            trd_quote(s, len, shown, sizeof shown);
            trd_error_set(TRD_ERR_INVALID_ARGUMENT, "device selector term '%s' is not key=value", shown);
            return -1;
        }
        char val[256];
        size_t vlen = len - (size_t)(eq + 1 - s);
        if (vlen >= sizeof val) {
            trd_error_set(TRD_ERR_INVALID_ARGUMENT, "device selector value is too long");
            return -1;
        }
        memcpy(val, eq + 1, vlen);
        val[vlen] = '\0';
        int m = match_term(p, s, (size_t)(eq - s), val);
        if (m <= 0)
            return m;
        if (!comma)
            break;
        s = comma + 1;
    }
    return 1;
}

TRD_API trd_status_t trd_device_matches(const trd_device_t *dev, const char *selector, int32_t *match)
{
    if (!dev || !match)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_device_matches: NULL argument");
    int m = trd_props_match(&dev->props, selector);
    if (m < 0)
        return TRD_ERR_INVALID_ARGUMENT;
    *match = m;
    return TRD_OK;
}

/* Higher is better: a GPU before the host, then more memory, then more units. */
static int better(const trd_device_t *a, const trd_device_t *b)
{
    int ga = a->props.kind == TRD_DEVICE_GPU, gb = b->props.kind == TRD_DEVICE_GPU;
    if (ga != gb)
        return ga > gb;
    if (a->props.memory_bytes != b->props.memory_bytes)
        return a->props.memory_bytes > b->props.memory_bytes;
    if (a->props.compute_units != b->props.compute_units)
        return a->props.compute_units > b->props.compute_units;
    return a->index < b->index;
}

TRD_API trd_status_t trd_runtime_device_find(trd_runtime_t *rt, const char *selector, trd_device_t **device)
{
    if (!rt || !device)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_runtime_device_find: NULL argument");
    int best = !selector || !*selector || strcmp(selector, "best") == 0;
    trd_device_t *found = NULL;
    for (uint32_t i = 0; i < rt->ndevices; i++) {
        int m = trd_props_match(&rt->devices[i]->props, selector);
        if (m < 0)
            return TRD_ERR_INVALID_ARGUMENT;
        if (!m)
            continue;
        if (!best) {
            found = rt->devices[i];
            break;
        }
        if (!found || better(rt->devices[i], found))
            found = rt->devices[i];
    }
    if (!found) {
        struct trd_str s;
        trd_str_init(&s);
        for (uint32_t i = 0; i < rt->ndevices; i++)
            trd_str_appendf(&s, "%s%s (%s)", i ? ", " : "", rt->devices[i]->uri, rt->devices[i]->arch);
        trd_status_t st = trd_error_set(TRD_ERR_NO_DEVICE, "no device matches '%s' (devices: %s)",
                                        selector ? selector : "best", s.buf ? s.buf : "none");
        trd_str_free(&s);
        return st;
    }
    *device = found;
    return TRD_OK;
}
