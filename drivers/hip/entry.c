/* SPDX-License-Identifier: Apache-2.0 */
/* entry.c: the HIP driver's ops table, the module's one exported symbol. */
#include "drivers/hip/hip.h"

static const trd_driver_ops_t ops = {
    .abi_version = TRD_DRV_ABI_VERSION,
    .struct_size = sizeof(trd_driver_ops_t),
    .name = "hip",
    .backend = "hip",
    .priority = 0,
    .init = hip_init,
    .fini = hip_fini,
    .device_count = hip_device_count,
    .device_props = hip_device_props,
    .device_open = hip_device_open,
    .device_close = hip_device_close,
    .module_load = hip_module_load,
    .module_unload = hip_module_unload,
    .launch = hip_launch,
    .mem_alloc = hip_mem_alloc,
    .mem_free = hip_mem_free,
    .mem_copy = hip_mem_copy,
    .mem_set = hip_mem_set,
    .stream_create = hip_stream_create,
    .stream_wrap = hip_stream_wrap,
    .stream_destroy = hip_stream_destroy,
    .stream_sync = hip_stream_sync,
    .stream_native = hip_stream_native,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_sync = hip_event_sync,
    .event_elapsed = hip_event_elapsed,
    .stream_capturing = hip_stream_capturing,
};

TRD_DRV_DEFINE_ENTRY(ops)
