/* SPDX-License-Identifier: Apache-2.0 */
/* vendor_lib.h: finds a vendor's library (libcuda, libamdhip64,
 * libze_loader) and resolves the functions a driver calls, from one table.
 *
 * The rule, the same for every driver: candidates are tried in order (the
 * configured colon list, else the driver's defaults); a candidate that does not
 * open, or lacks a REQUIRED symbol, is recorded as "path: reason" and the next
 * is tried. OPTIONAL symbols may be NULL (the feature that needs one is then
 * unsupported). When none is usable the error lists every candidate with its
 * reason. */
#ifndef TRD_DRIVERS_COMMON_VENDOR_LIB_H
#define TRD_DRIVERS_COMMON_VENDOR_LIB_H

#include <stddef.h>
#include <stdint.h>

#include <trident/driver.h>

typedef struct trd_vlib_symbol {
    const char *name;      /* the API's name, for messages */
    const char *link_name; /* what the library exports (cuMemAlloc_v2): dlsym's name */
    size_t offset;         /* of the function pointer in the driver's api struct */
    uint32_t required;
} trd_vlib_symbol_t;

/* Table entries for `field` of struct `api`, exported as `link` (a string). */
#define TRD_VLIB_REQUIRED(api, field, link) {#field, link, offsetof(api, field), 1},
#define TRD_VLIB_OPTIONAL(api, field, link) {#field, link, offsetof(api, field), 0},

/* Resolves one symbol of an opened candidate; NULL when it lacks it. */
typedef void *(*trd_vlib_resolve_fn)(void *handle, const trd_vlib_symbol_t *sym);

typedef struct trd_vlib_spec {
    const char *what;              /* "HIP runtime", for messages */
    const char *config_key;        /* "[driver.hip] library" */
    const char *const *defaults;   /* candidates when none is configured; NULL-terminated */
    const trd_vlib_symbol_t *symbols;
    size_t num_symbols;
    size_t api_size;               /* of the api struct the table fills */
    const char *missing_hint;      /* after "required symbol X is missing", or NULL */
    trd_vlib_resolve_fn resolve;   /* NULL: dlsym(link_name) */
} trd_vlib_spec_t;

typedef struct trd_vlib {
    void *handle;
    char path[512];    /* the file the used candidate resolved to */
    char tried[1536];  /* candidates refused before it, "path: reason; ..."; "" when none */
} trd_vlib_t;

/* Opens the first usable candidate of `configured` (a colon list; NULL or ""
 * for spec->defaults) and fills `api` (spec->api_size bytes). On failure
 * returns TRD_ERR_UNSUPPORTED (the driver is then reported skipped) with
 * every candidate and its reason, and leaves lib and api zeroed. */
trd_status_t trd_vlib_open(trd_vlib_t *lib, const trd_vlib_spec_t *spec, const char *configured, void *api);
void trd_vlib_close(trd_vlib_t *lib);

#endif /* TRD_DRIVERS_COMMON_VENDOR_LIB_H */
