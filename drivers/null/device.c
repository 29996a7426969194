/* SPDX-License-Identifier: Apache-2.0 */
/* device.c: init (bind the core's services, open the vendor library, count
 * the devices), their properties, open and close. */
#include <stdlib.h>

#include "drivers/null/null.h"

trd_status_t null_init(const trd_driver_init_args_t *args, void **out)
{
    trd_status_t st = trd_drv_bind(args); /* first: everything after reports through it */
    if (st != TRD_OK)
        return st;
    /* A real driver opens its library here with trd_vlib_open (the
     * [driver.<name>] library setting: trd_drv_config(args, "library")) and
     * returns its TRD_ERR_UNSUPPORTED when none is usable: the module is then
     * reported skipped. With no device it still succeeds, saying why in
     * args->note. */
    struct null_driver *d = calloc(1, sizeof *d);
    if (!d)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "null: out of memory");
    d->ndevices = 1;
    *out = d;
    return TRD_OK;
}

void null_fini(void *driver)
{
    free(driver);
}

trd_status_t null_device_count(void *driver, uint32_t *count)
{
    *count = ((struct null_driver *)driver)->ndevices;
    return TRD_OK;
}

trd_status_t null_device_props(void *driver, uint32_t ordinal, trd_device_props_t *p)
{
    struct null_driver *d = driver;
    if (ordinal >= d->ndevices)
        return trd_drv_error(TRD_ERR_NOT_FOUND, "null: no device %u (there is %u)", ordinal, d->ndevices);
    /* strings must live until fini: a real driver keeps them per device */
    p->kind = TRD_DEVICE_GPU;
    p->name = "null device (drivers/null skeleton)";
    p->vendor = "trident";
    p->arch = "none";
    p->warp_size = 32;
    p->compute_units = 1;
    p->max_threads_per_block = 1024;
    p->memory_bytes = (uint64_t)1 << 30;
    p->max_shared_per_block = 48 << 10;
    p->max_shared_per_block_optin = 48 << 10;
    return TRD_OK;
}

trd_status_t null_device_open(void *driver, uint32_t ordinal, void **out)
{
    struct null_driver *d = driver;
    if (ordinal >= d->ndevices)
        return trd_drv_error(TRD_ERR_NOT_FOUND, "null: no device %u (there is %u)", ordinal, d->ndevices);
    struct null_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "null: out of memory");
    dev->drv = d;
    dev->ordinal = ordinal;
    *out = dev;
    return TRD_OK;
}

void null_device_close(void *device)
{
    free(device);
}
