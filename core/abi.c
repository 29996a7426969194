/* SPDX-License-Identifier: Apache-2.0 */
/* abi.c: compile-time checks of the public ABI. A change that moves a field
 * or changes a size of a published struct breaks these before it ships;
 * structs grow only at their end (struct_size tells old callers apart). */
#include <stddef.h>

#include <trident/driver.h>
#include <trident/host_kernel.h>
#include <trident/trident.h>

#define ABI_ASSERT(cond) _Static_assert(cond, #cond)

#if defined(__x86_64__) || defined(__aarch64__)
ABI_ASSERT(sizeof(trd_arg_t) == 16);
ABI_ASSERT(offsetof(trd_arg_t, value) == 8);
ABI_ASSERT(sizeof(trd_launch_t) == 72);
ABI_ASSERT(offsetof(trd_launch_t, stream) == 32);
ABI_ASSERT(offsetof(trd_launch_t, profile_scratch) == 64);
ABI_ASSERT(sizeof(trd_runtime_desc_t) == 24);
ABI_ASSERT(offsetof(trd_device_props_t, uri) == 16);
ABI_ASSERT(offsetof(trd_device_props_t, ordinal) == 72);
ABI_ASSERT(offsetof(trd_device_props_t, memory_bytes) == 88);
ABI_ASSERT(offsetof(trd_device_props_t, uuid) == 104);
ABI_ASSERT(sizeof(trd_device_props_t) == 120);
ABI_ASSERT(offsetof(trd_kernel_desc_t, options) == 72);
ABI_ASSERT(offsetof(trd_option_info_t, env) == 88);
ABI_ASSERT(sizeof(trd_option_releases_t) == 40);
ABI_ASSERT(offsetof(trd_driver_info_t, reason) == 40);
ABI_ASSERT(sizeof(trd_driver_search_t) == 32);
ABI_ASSERT(offsetof(trd_config_entry_t, origin) == 32);
ABI_ASSERT(offsetof(trd_load_info_t, from_cache) == 28);
ABI_ASSERT(offsetof(trd_driver_ops_t, init) == 32);
ABI_ASSERT(offsetof(trd_driver_ops_t, event_elapsed) == 208);
ABI_ASSERT(offsetof(trd_driver_module_desc_t, metadata) == 128);
ABI_ASSERT(offsetof(trd_driver_module_desc_t, params) == 136);
ABI_ASSERT(offsetof(trd_driver_ops_t, tensor_map_encode) == 216);
ABI_ASSERT(offsetof(trd_driver_ops_t, stream_capturing) == 224);
ABI_ASSERT(sizeof(trd_driver_ops_t) == 232);
/* version 2: services at init, the launch's scratch bytes */
ABI_ASSERT(offsetof(trd_driver_init_args_t, services) == 40);
ABI_ASSERT(offsetof(trd_driver_launch_t, global_scratch_bytes) == 56);
ABI_ASSERT(sizeof(trd_driver_launch_t) == 72);
ABI_ASSERT(offsetof(trd_driver_services_t, options_is_set) == 56);
ABI_ASSERT(offsetof(trd_tensor_map_desc_t, base) == 16);
ABI_ASSERT(offsetof(trd_tensor_map_desc_t, shape) == 24);
ABI_ASSERT(offsetof(trd_tensor_map_desc_t, strides) == 64);
ABI_ASSERT(offsetof(trd_tensor_map_desc_t, box) == 104);
ABI_ASSERT(offsetof(trd_tensor_map_desc_t, swizzle) == 124);
ABI_ASSERT(offsetof(trd_tensor_map_desc_t, label) == 144);
ABI_ASSERT(sizeof(trd_tensor_map_desc_t) == 152);
ABI_ASSERT(sizeof(trd_host_program_t) == 48);
ABI_ASSERT(offsetof(trd_native_launch_t, params) == 24);
ABI_ASSERT(offsetof(trd_native_launch_t, native_stream) == 40);
ABI_ASSERT(offsetof(trd_native_launch_t, profile_scratch_size) == 72);
ABI_ASSERT(sizeof(trd_native_launch_t) == 80);
ABI_ASSERT(offsetof(trd_param_info_t, name) == 16);
ABI_ASSERT(sizeof(trd_param_info_t) == 32);
ABI_ASSERT(offsetof(trd_bundle_variant_t, config) == 16);
ABI_ASSERT(sizeof(trd_bundle_variant_t) == 32);
ABI_ASSERT(offsetof(trd_variant_info_t, grid) == 24);
ABI_ASSERT(sizeof(trd_variant_info_t) == 32);
ABI_ASSERT(offsetof(trd_tuner_desc_t, num_written) == 28);
ABI_ASSERT(offsetof(trd_tuner_desc_t, cache_dir) == 40);
ABI_ASSERT(offsetof(trd_tuner_desc_t, identity_size) == 56);
ABI_ASSERT(sizeof(trd_tuner_desc_t) == 80);
ABI_ASSERT(offsetof(trd_tuned_launch_t, launch) == 16);
ABI_ASSERT(offsetof(trd_tuned_launch_t, launch_fn) == 40);
ABI_ASSERT(sizeof(trd_tuned_launch_t) == 56);
#endif
ABI_ASSERT(sizeof(trd_status_t) == 4);
ABI_ASSERT(TRD_ERR_INTERNAL == 14);
ABI_ASSERT(TRD_FORMAT_HOST_SO == 7);
ABI_ASSERT(TRD_DRIVER_ABI_VERSION == 2 && TRD_DRIVER_ABI_MIN_VERSION == 1);
ABI_ASSERT(TRD_PARAM_SCALAR == 1 && TRD_PARAM_POINTER == 2 && TRD_PARAM_TENSOR_MAP == 3);
ABI_ASSERT(TRD_COPY_HOST_TO_DEVICE == 1 && TRD_COPY_DEVICE_TO_DEVICE == 3);
ABI_ASSERT(TRD_TENSOR_MAP_BYTES == 128 && TRD_TENSOR_MAP_MAX_RANK == 5);
