/* SPDX-License-Identifier: Apache-2.0 */
/* entry.c: the ops table and its two entries: libtrident's loader starts
 * the built-in driver through trd_host_driver_ops (the default build), and
 * loads trident_host.so (configure --enable-host-module) through the
 * exported trd_driver_entry, as any module. Built in, the entry is not
 * exported: libtrident exports only its API (abi/libtrident.map). */
#include "drivers/host/host.h"

static const trd_driver_ops_t host_ops = {
    .abi_version = TRD_DRV_ABI_VERSION,
    .struct_size = sizeof(trd_driver_ops_t),
    .name = "host",
    .backend = "host",
    .priority = 0,
    .init = host_init,
    .fini = host_fini,
    .device_count = host_device_count,
    .device_props = host_device_props,
    .device_open = host_device_open,
    .device_close = host_device_close,
    .module_load = host_module_load,
    .module_unload = host_module_unload,
    .launch = host_launch,
    .mem_alloc = host_mem_alloc,
    .mem_free = host_mem_free,
    .mem_copy = host_mem_copy,
    .mem_set = host_mem_set,
    .stream_create = host_stream_create,
    .stream_wrap = host_stream_wrap,
    .stream_destroy = host_stream_destroy,
    .stream_sync = host_stream_sync,
    .stream_native = host_stream_native,
    .event_create = host_event_create,
    .event_destroy = host_event_destroy,
    .event_record = host_event_record,
    .event_sync = host_event_sync,
    .event_elapsed = host_event_elapsed,
};

const trd_driver_ops_t *trd_host_driver_ops(void)
{
    return &host_ops;
}

TRD_DRV_DEFINE_ENTRY(host_ops)
