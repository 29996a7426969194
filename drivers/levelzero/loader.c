/* SPDX-License-Identifier: Apache-2.0 */
/* loader.c: the Level Zero loader library and the functions of symbols.h,
 * through drivers/common's loader. */
#include <string.h>

#include "drivers/levelzero/levelzero.h"

static const trd_vlib_symbol_t zdrv_symbols[] = {
#define ZDRV_REQ(name) TRD_VLIB_REQUIRED(struct zdrv_api, name, #name)
#define ZDRV_OPT(name) TRD_VLIB_OPTIONAL(struct zdrv_api, name, #name)
    ZDRV_SYMBOLS(ZDRV_REQ, ZDRV_OPT)
#undef ZDRV_REQ
#undef ZDRV_OPT
};

static const char *const zdrv_defaults[] = {ZDRV_DEFAULT_LIBRARY, NULL};

static const trd_vlib_spec_t zdrv_spec = {
    .what = "Level Zero loader library",
    .config_key = "[driver.levelzero] library",
    .defaults = zdrv_defaults,
    .symbols = zdrv_symbols,
    .num_symbols = sizeof zdrv_symbols / sizeof *zdrv_symbols,
    .api_size = sizeof(struct zdrv_api),
    .missing_hint = "(not a Level Zero loader?)",
};

trd_status_t zdrv_library_open(struct zdrv_driver *d, const char *paths)
{
    return trd_vlib_open(&d->lib, &zdrv_spec, paths, &d->api);
}

void zdrv_library_close(struct zdrv_driver *d)
{
    trd_vlib_close(&d->lib);
    memset(&d->api, 0, sizeof d->api);
}
