/* SPDX-License-Identifier: Apache-2.0 */
/* services.h: what a driver module calls of the core, through the services
 * table the core hands it at init (trident/driver.h, version 2): the module
 * links nothing of libtrident. trd_drv_bind, first in every driver's init,
 * keeps the table; the rest forward to it. */
#ifndef TRD_DRIVERS_COMMON_SERVICES_H
#define TRD_DRIVERS_COMMON_SERVICES_H

#include <stddef.h>
#include <stdint.h>

#include <trident/driver.h>

/* The driver ABI version every module built on drivers/common implements. */
#define TRD_DRV_ABI_VERSION 2

/* Keeps args->services. TRD_ERR_VERSION when the core gave none, or a table
 * smaller than this module calls (there is then no way to say more). */
trd_status_t trd_drv_bind(const trd_driver_init_args_t *args);

/* The core's error(): sets the thread's message, returns status. */
trd_status_t trd_drv_error(trd_status_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void trd_drv_log(int32_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* This driver's [driver.<name>] key, or NULL when unset. */
const char *trd_drv_config(const trd_driver_init_args_t *args, const char *key);
trd_status_t trd_drv_options_get(const trd_options_t *options, const char *name, char *buf, size_t cap, size_t *len);
trd_status_t trd_drv_options_get_int(const trd_options_t *options, const char *name, int64_t *value);
trd_status_t trd_drv_options_get_bool(const trd_options_t *options, const char *name, int32_t *value);
trd_status_t trd_drv_options_is_set(const trd_options_t *options, const char *name, int32_t *is_set);

/* The module's exported entry: answers the core's offer with
 * TRD_DRV_ABI_VERSION (the table's abi_version), which a core older than
 * that refuses, naming both versions. */
#define TRD_DRV_DEFINE_ENTRY(table)                                                                       \
    TRD_DRIVER_EXPORT const trd_driver_ops_t *trd_driver_entry(uint32_t offered);                       \
    TRD_DRIVER_EXPORT const trd_driver_ops_t *trd_driver_entry(uint32_t offered)                        \
    {                                                                                                     \
        (void)offered;                                                                                    \
        return &(table);                                                                                  \
    }

#endif /* TRD_DRIVERS_COMMON_SERVICES_H */
