/* SPDX-License-Identifier: Apache-2.0 */
/* selector.c: the device-selector grammar: a URI ("cuda:1"), a list index ("2"), "best", a driver or backend
 * name, or key=value terms joined by ',' ("arch=sm90,name=H200"), matched against the public device properties. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/selector.h"
#include "base/util.h"

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
