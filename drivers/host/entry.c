/* SPDX-License-Identifier: Apache-2.0 */
/* entry.c: the host driver as a loadable module (libtrident also embeds it). */
#include "drivers/host/host.h"

TRD_DRIVER_EXPORT const trd_driver_ops_t *trd_driver_entry(void);

TRD_DRIVER_EXPORT const trd_driver_ops_t *trd_driver_entry(void)
{
    return trd_host_driver_ops();
}
