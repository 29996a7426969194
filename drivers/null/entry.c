/* SPDX-License-Identifier: Apache-2.0 */
/* entry.c: the ops table and the module's exported entry. A new driver
 * renames null_ and fills the optional ops it has (tensor_map_encode,
 * stream_capturing) after event_elapsed. */
#include "drivers/null/null.h"

static const trd_driver_ops_t null_ops = {
    .abi_version = TRD_DRV_ABI_VERSION,
    .struct_size = sizeof(trd_driver_ops_t),
    .name = "null",      /* the URI scheme: null:0 */
    /* The Triton backend whose images it loads: a real driver names its own
     * ("cuda", "hip", "xpu"). The skeleton takes host images, so that its
     * test loads a built host kernel and sees the launch fail. */
    .backend = "host",
    .priority = 0,
    .init = null_init,
    .fini = null_fini,
    .device_count = null_device_count,
    .device_props = null_device_props,
    .device_open = null_device_open,
    .device_close = null_device_close,
    .module_load = null_module_load,
    .module_unload = null_module_unload,
    .launch = null_launch,
    .mem_alloc = null_mem_alloc,
    .mem_free = null_mem_free,
    .mem_copy = null_mem_copy,
    .mem_set = null_mem_set,
    .stream_create = null_stream_create,
    .stream_wrap = null_stream_wrap,
    .stream_destroy = null_stream_destroy,
    .stream_sync = null_stream_sync,
    .stream_native = null_stream_native,
    .event_create = null_event_create,
    .event_destroy = null_event_destroy,
    .event_record = null_event_record,
    .event_sync = null_event_sync,
    .event_elapsed = null_event_elapsed,
};

TRD_DRV_DEFINE_ENTRY(null_ops)
