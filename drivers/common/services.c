/* SPDX-License-Identifier: Apache-2.0 */
/* services.c: the module's side of the core's services table (services.h).
 * One table per process: every libtrident hands the same functions, and a
 * later init's table replaces an earlier one's only with its equal. */
#include <stdarg.h>
#include <stdatomic.h>

#include "drivers/common/services.h"

#define SERVICES_NEEDED (offsetof(trd_driver_services_t, options_is_set) + sizeof(void *))

static _Atomic(const trd_driver_services_t *) bound;

trd_status_t trd_drv_bind(const trd_driver_init_args_t *args)
{
    if (!args || args->struct_size < offsetof(trd_driver_init_args_t, services) + sizeof(void *) ||
        !args->services || args->services->struct_size < SERVICES_NEEDED)
        return TRD_ERR_VERSION;
    atomic_store_explicit(&bound, args->services, memory_order_release);
    return TRD_OK;
}

static const trd_driver_services_t *svc(void)
{
    return atomic_load_explicit(&bound, memory_order_acquire);
}

trd_status_t trd_drv_error(trd_status_t status, const char *fmt, ...)
{
    const trd_driver_services_t *s = svc();
    if (!s)
        return status;
    va_list ap;
    va_start(ap, fmt);
    trd_status_t r = s->error(status, fmt, ap);
    va_end(ap);
    return r;
}

void trd_drv_log(int32_t level, const char *fmt, ...)
{
    const trd_driver_services_t *s = svc();
    if (!s)
        return;
    va_list ap;
    va_start(ap, fmt);
    s->log(level, fmt, ap);
    va_end(ap);
}

const char *trd_drv_config(const trd_driver_init_args_t *args, const char *key)
{
    const trd_driver_services_t *s = svc();
    return s && s->config_get ? s->config_get(args->config_ctx, key) : NULL;
}

trd_status_t trd_drv_options_get(const trd_options_t *options, const char *name, char *buf, size_t cap, size_t *len)
{
    return svc()->options_get(options, name, buf, cap, len);
}

trd_status_t trd_drv_options_get_int(const trd_options_t *options, const char *name, int64_t *value)
{
    return svc()->options_get_int(options, name, value);
}

trd_status_t trd_drv_options_get_bool(const trd_options_t *options, const char *name, int32_t *value)
{
    return svc()->options_get_bool(options, name, value);
}

trd_status_t trd_drv_options_is_set(const trd_options_t *options, const char *name, int32_t *is_set)
{
    return svc()->options_is_set(options, name, is_set);
}
