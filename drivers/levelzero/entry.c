/* SPDX-License-Identifier: Apache-2.0 */
/* entry.c: the Level Zero driver's ops table and module entry. */
#include "drivers/levelzero/levelzero.h"

static const trd_driver_ops_t zdrv_ops = {
    .abi_version = TRD_DRV_ABI_VERSION,
    .struct_size = sizeof(trd_driver_ops_t),
    .name = "levelzero",
    .backend = "xpu",
    .priority = 0,
    .init = zdrv_init,
    .fini = zdrv_fini,
    .device_count = zdrv_device_count,
    .device_props = zdrv_device_props,
    .device_open = zdrv_device_open,
    .device_close = zdrv_device_close,
    .module_load = zdrv_module_load,
    .module_unload = zdrv_module_unload,
    .launch = zdrv_launch,
    .mem_alloc = zdrv_mem_alloc,
    .mem_free = zdrv_mem_free,
    .mem_copy = zdrv_mem_copy,
    .mem_set = zdrv_mem_set,
    .stream_create = zdrv_stream_create,
    .stream_wrap = zdrv_stream_wrap,
    .stream_destroy = zdrv_stream_destroy,
    .stream_sync = zdrv_stream_sync,
    .stream_native = zdrv_stream_native,
    .event_create = zdrv_event_create,
    .event_destroy = zdrv_event_destroy,
    .event_record = zdrv_event_record,
    .event_sync = zdrv_event_sync,
    .event_elapsed = zdrv_event_elapsed,
};

TRD_DRV_DEFINE_ENTRY(zdrv_ops)
