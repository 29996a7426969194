/* SPDX-License-Identifier: Apache-2.0 */
/* tensor_map.h: what a tiled tensor map (trd_tensor_map_desc_t) may be: the one statement of CUDA's
 * requirements of cuTensorMapEncodeTiled for the maps Triton encodes. libtrident answers it to callers
 * (trd_tensor_map_check: the XLA handlers at INSTANTIATE, trident.jax while it lowers a call) and the CUDA driver
 * module links its own copy (libtrident_pure), so that a descriptor the first accept the second encodes. */
#ifndef TRD_BASE_TENSOR_MAP_H
#define TRD_BASE_TENSOR_MAP_H

#include <stddef.h>

#include <trident/trident.h>

/* TRD_OK, or the status with what is wrong in msg, naming the field and its value ("strides[0] is 72 bytes,
 * not a multiple of 16"): TRD_ERR_INVALID_ARGUMENT for a descriptor CUDA would refuse (or NULL), TRD_ERR_VERSION
 * for a struct_size smaller than this reads. A NULL base is not checked (a template whose buffer comes later);
 * any other must be aligned as CUDA needs. No state, no allocation: safe on a launch path. */
trd_status_t trd_tensor_map_verify(const trd_tensor_map_desc_t *d, char *msg, size_t cap);

/* What a message names: "label (shape [64, 16], strides [16, 1], block [16, 16], FLOAT32)" into buf. */
const char *trd_tensor_map_describe(const trd_tensor_map_desc_t *d, char *buf, size_t cap);

#endif
