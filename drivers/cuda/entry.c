/* SPDX-License-Identifier: Apache-2.0 */
/* entry.c: the ops table and the module's exported entry. */
#include "drivers/cuda/cuda_driver.h"

static const trd_driver_ops_t ops = {
    .abi_version = TRD_DRV_ABI_VERSION,
    .struct_size = sizeof(trd_driver_ops_t),
    .name = "cuda",
    .backend = "cuda",
    .priority = 100,
    .init = cuda_init,
    .fini = cuda_fini,
    .device_count = cuda_device_count,
    .device_props = cuda_device_props,
    .device_open = cuda_device_open,
    .device_close = cuda_device_close,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .launch = cuda_launch,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .mem_copy = cuda_mem_copy,
    .mem_set = cuda_mem_set,
    .stream_create = cuda_stream_create,
    .stream_wrap = cuda_stream_wrap,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .stream_native = cuda_stream_native,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_sync = cuda_event_sync,
    .event_elapsed = cuda_event_elapsed,
    .tensor_map_encode = cuda_tensor_map_encode,
    .stream_capturing = cuda_stream_capturing,
};

TRD_DRV_DEFINE_ENTRY(ops)
