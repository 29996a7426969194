# SPDX-License-Identifier: Apache-2.0
"""Tensor maps: a host TensorDescriptor for a parameter Triton lowered to TMA
(type nvTmaDesc) becomes a tensor-map parameter (arg_kind 4) whose base array
is an operand; the `tma` attribute carries what libtrident's handler needs to
encode the CUtensorMap from the buffer's address at each launch (docs/xla.md).
An autotuned call carries each candidate's own records, since a map's box is
its compilation's. Checked here, so that a bad descriptor fails when the call
is lowered, naming the argument: by libtrident's rule (trd_tensor_map_check,
the one the CUDA driver encodes by), on the descriptor the handler will make
of the record; what is checked here besides is the array's and the
metadata's."""
from __future__ import annotations

from typing import Optional, Sequence

import ctypes

import numpy as np

from .. import Kernel
from .._lib import TensorMapDesc, lib, sized
from . import protocol as P
from .errors import KernelCallError, label as _label
from .tensordesc import TensorDescriptor

TMA_MAX_RANK = P.TMA_MAX_RANK
# Triton's tensordesc_meta elem_type counts as PTX's tensormap.replace does; CUtensorMapDataType (what
# cuTensorMapEncodeTiled takes) has f64, bf16 and f32.ftz in another order
_PTX_TO_CU_DTYPE = {8: 10, 9: 8, 10: 9}
_CU_FLOAT32, _CU_TFLOAT32, _CU_16U4_ALIGN16B = 7, 11, 14
_L2_PROMOTION_128B = 2              # Triton's launcher always asks for 128-byte L2 promotion
# the record's fields that go into trd_tensor_map_desc_t, and the most each field there holds
_DESC_FIELDS = [(P.TMA_ELEM_TYPE, 1, "element type", 2**31 - 1), (P.TMA_ELEM_SIZE, 1, "element size", 2**32 - 1),
                (P.TMA_SWIZZLE, 1, "swizzle", 2**31 - 1), (P.TMA_SHAPE, TMA_MAX_RANK, "shape", 2**63 - 1),
                (P.TMA_STRIDES, TMA_MAX_RANK, "strides", 2**63 - 1), (P.TMA_BLOCK, TMA_MAX_RANK, "block", 2**32 - 1)]


def tensor_map_desc(record: list[int], label: str) -> TensorMapDesc:
    """The trd_tensor_map_desc_t the XLA handler makes of a `tma` record (xla/tma.c), without its base address
    (XLA's buffer, known at execution); a value its field cannot hold raises KernelCallError."""
    rank = record[P.TMA_RANK]
    for at, count, name, most in _DESC_FIELDS:
        for k in range(rank if count > 1 else 1):
            if not 0 <= record[at + k] <= most:
                raise KernelCallError(f"{label}: {name}{f'[{k}]' if count > 1 else ''} = {record[at + k]} is "
                                      f"outside 0 .. {most}")
    d = sized(TensorMapDesc)
    d.rank, d.elem_type, d.elem_size = rank, record[P.TMA_ELEM_TYPE], record[P.TMA_ELEM_SIZE]
    d.swizzle, d.oob_fill, d.l2_promotion = record[P.TMA_SWIZZLE], record[P.TMA_OOB_FILL], record[P.TMA_L2_PROMOTION]
    for i in range(rank):
        d.shape[i], d.strides[i], d.box[i] = (record[P.TMA_SHAPE + i], record[P.TMA_STRIDES + i],
                                              record[P.TMA_BLOCK + i])
    if record[P.TMA_FP4_PADDED]:    # fp4 values two to a byte: the map counts values, the array's shape bytes
        d.shape[rank - 1] *= 2
    d.label = label.encode()
    return d


def check_tensor_map(record: list[int], label: str) -> None:
    """libtrident's rule (trd_tensor_map_check: the CUDA driver's) on the record's descriptor: KernelCallError with
    libtrident's message (the label, the descriptor, the value at fault) where the driver would refuse it."""
    L = lib()
    if L.trd_tensor_map_check(ctypes.byref(tensor_map_desc(record, label))) != 0:
        raise KernelCallError(L.trd_error_message().decode(errors="replace"))


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
    nan = desc.padding == "nan"
    if desc.round_f32_to_tf32:
        if elem_type != _CU_FLOAT32:
            raise KernelCallError(f"{where}: round_f32_to_tf32 is for float32 descriptors")
        elem_type = _CU_TFLOAT32
    if fp4 and elem_type != _CU_16U4_ALIGN16B:
        raise KernelCallError(f"{where}: the metadata marks it fp4-padded with element type {elem_type}")

    record = [0] * P.TMA_FIELDS
    record[P.TMA_BASE] = 0   # the descriptor's base is an operand
    record[P.TMA_ELEM_TYPE], record[P.TMA_ELEM_SIZE], record[P.TMA_RANK] = elem_type, elem_size, rank
    record[P.TMA_SWIZZLE], record[P.TMA_OOB_FILL], record[P.TMA_FP4_PADDED] = swizzle, int(nan), int(fp4)
    record[P.TMA_L2_PROMOTION] = _L2_PROMOTION_128B
    for at, values in ((P.TMA_SHAPE, shape), (P.TMA_STRIDES, strides), (P.TMA_BLOCK, block)):
        record[at:at + rank] = values
    check_tensor_map(record, label)
    reach = sum((n - 1) * st for n, st in zip(shape, strides))
    size = int(np.prod(base.shape, dtype=np.int64))
    if reach >= size:
        raise KernelCallError(f"{where}: it reaches element {reach} of its base, an array of {size} elements")
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
