# SPDX-License-Identifier: Apache-2.0
"""Tensor maps: a host TensorDescriptor for a parameter Triton lowered to TMA
(type nvTmaDesc) becomes a tensor-map parameter (arg_kind 4) whose base array
is an operand; the `tma` attribute carries what libtrident's handler needs to
encode the CUtensorMap from the buffer's address at each launch (docs/xla.md).
An autotuned call carries each candidate's own records, since a map's box is
its compilation's. Checked here, so that a bad descriptor fails when the call
is lowered, naming the argument."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .. import Kernel
from . import protocol as P
from .errors import KernelCallError, label as _label
from .tensordesc import TensorDescriptor

TMA_MAX_RANK = P.TMA_MAX_RANK
# Triton's tensordesc_meta elem_type counts as PTX's tensormap.replace does; CUtensorMapDataType (what
# cuTensorMapEncodeTiled takes) has f64, bf16 and f32.ftz in another order
_PTX_TO_CU_DTYPE = {8: 10, 9: 8, 10: 9}
_CU_FLOAT32, _CU_TFLOAT32, _CU_16U4_ALIGN16B = 7, 11, 14
_CU_FLOAT_TYPES = range(6, 13)      # FLOAT16 .. TFLOAT32_FTZ: NaN padding needs one of them
_L2_PROMOTION_128B = 2              # Triton's launcher always asks for 128-byte L2 promotion


def tma_metas(kernel: Kernel) -> list[dict]:
    """The tensordesc_meta entries of the kernel's CUDA targets, one per nvTmaDesc parameter in order; the
    targets must agree (one call has one `tma` attribute for all of them)."""
    found: Optional[list[dict]] = None
    for t in kernel.targets:
        if t.backend != "cuda":
            continue
        metas = [m for m in (t.metadata.get("tensordesc_meta") or []) if m]
        if not metas:
            continue
        if found is not None and metas != found:
            raise KernelCallError(f"kernel '{kernel.name}': its CUDA targets lower its tensor descriptors to TMA "
                                  f"differently ({found} and {metas} in {t.arch}); call them separately")
        found = metas
    return found or []


def tma_record(label: str, desc: TensorDescriptor, meta: dict) -> list[int]:
    """The `tma` attribute record of one descriptor (base: operand), from the compiled metadata's entry;
    checked here so that a bad descriptor fails at trace time, naming the argument."""
    base = desc.base
    rank = len(desc.shape)
    shape, strides = [int(v) for v in desc.shape], [int(v) for v in desc.strides]
    block = [int(v) for v in meta["block_size"]]
    elem_size, swizzle = int(meta["elem_size"]), int(meta["swizzle"])
    fp4 = bool(meta.get("fp4_padded"))
    if meta.get("is_im2col"):   # Triton 3.9's entries say which kind of tensor map the kernel reads
        raise KernelCallError(f"{label}: the kernel reads it as an im2col tensor map; trident encodes tiled ones")
    elem_type = _PTX_TO_CU_DTYPE.get(int(meta["elem_type"]), int(meta["elem_type"]))
    where = f"{label}: TensorDescriptor(shape={shape}, strides={strides}, block_shape={list(desc.block_shape)})"
    if not 1 <= rank <= TMA_MAX_RANK:
        raise KernelCallError(f"{where}: TMA takes 1 to {TMA_MAX_RANK} dimensions, not {rank}")
    if len(block) != rank:
        raise KernelCallError(f"{where}: the kernel was compiled for a {len(block)}-dimensional descriptor")
    if not hasattr(base, "shape") or not hasattr(base, "dtype"):
        raise KernelCallError(f"{where}: its base must be an array, not {type(base).__name__}")
    itemsize = np.dtype(base.dtype).itemsize
    if itemsize != elem_size:
        raise KernelCallError(f"{where}: its base is an array of {np.dtype(base.dtype).name} ({itemsize}-byte "
                              f"elements); the kernel reads {elem_size}-byte elements through it")
    if any(n < 1 for n in shape):
        raise KernelCallError(f"{where}: every dimension must be at least 1")
    if strides[-1] != 1:
        raise KernelCallError(f"{where}: TMA needs the last dimension contiguous (stride 1), not {strides[-1]}")
    for i, st in enumerate(strides[:-1]):
        if st < 1 or st * elem_size % 16:
            raise KernelCallError(f"{where}: strides[{i}] is {st * elem_size} bytes; TMA needs a positive multiple "
                                  f"of 16")
    reach = sum((n - 1) * st for n, st in zip(shape, strides))
    size = int(np.prod(base.shape, dtype=np.int64))
    if reach >= size:
        raise KernelCallError(f"{where}: it reaches element {reach} of its base, an array of {size} elements")
    nan = desc.padding == "nan"
    if desc.round_f32_to_tf32:
        if elem_type != _CU_FLOAT32:
            raise KernelCallError(f"{where}: round_f32_to_tf32 is for float32 descriptors")
        elem_type = _CU_TFLOAT32
    if nan and elem_type not in _CU_FLOAT_TYPES:
        raise KernelCallError(f"{where}: padding='nan' needs a floating-point array, not "
                              f"{np.dtype(base.dtype).name}")
    if fp4 and elem_type != _CU_16U4_ALIGN16B:
        raise KernelCallError(f"{where}: the metadata marks it fp4-padded with element type {elem_type}")
    row = block[-1] * (1 if fp4 else elem_size)
    if not fp4 and row % 16:
        raise KernelCallError(f"{where}: the kernel moves blocks whose rows are {row} bytes; TMA moves rows of a "
                              f"multiple of 16 bytes (a last block dimension of at least {16 // elem_size} for "
                              f"{np.dtype(base.dtype).name})")

    record = [0] * P.TMA_FIELDS
    record[P.TMA_BASE] = 0   # the descriptor's base is an operand
    record[P.TMA_ELEM_TYPE], record[P.TMA_ELEM_SIZE], record[P.TMA_RANK] = elem_type, elem_size, rank
    record[P.TMA_SWIZZLE], record[P.TMA_OOB_FILL], record[P.TMA_FP4_PADDED] = swizzle, int(nan), int(fp4)
    record[P.TMA_L2_PROMOTION] = _L2_PROMOTION_128B
    for at, values in ((P.TMA_SHAPE, shape), (P.TMA_STRIDES, strides), (P.TMA_BLOCK, block)):
        record[at:at + rank] = values
    return record


def tma_records(kernel: Kernel, descs: Sequence[tuple[int, TensorDescriptor]], who: str = "") -> list[int]:
    """The `tma` attribute's values for one kernel: a record per (launch parameter, descriptor), in the order
    given (parameter order). The encoding is the kernel's compilation's (its tensordesc_meta block_size is the
    box), so an autotuned call sends each candidate's own records. who prefixes the messages."""
    if not descs:
        return []
    params = kernel.launch_params
    tma_at = [i for i, p in enumerate(params) if p.type == "nvTmaDesc"]
    metas = tma_metas(kernel)
    if len(metas) not in (0, len(tma_at)):
        raise KernelCallError(f"{who}kernel '{kernel.name}' has {len(tma_at)} tensor-map parameters, its metadata "
                              f"describes {len(metas)} (tensordesc_meta)")
    out: list[int] = []
    for i, d in descs:
        label = who + _label(kernel, i, params[i])
        if not metas:
            raise KernelCallError(f"{label}: the kernel's CUDA metadata has no tensordesc_meta to encode the tensor "
                                  f"map from")
        out += tma_record(label, d, metas[tma_at.index(i)])
    return out
