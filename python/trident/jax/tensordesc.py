# SPDX-License-Identifier: Apache-2.0
"""Host-side tensor descriptors (jax-triton's TensorDescriptor): a JAX array
with the shape, strides and block shape a kernel's tl.tensor_descriptor
parameter takes.

Triton lowers a descriptor parameter per target. Where it does not use the
TMA unit (sm80 and older, gfx942, ...) the launch passes the base pointer,
shape, strides and padding flag, then the shape and strides again: plain
arguments, which trident's XLA handler passes today. Where it uses TMA (sm90,
sm100: the compiled metadata's tensordesc_meta), the launch passes a 128-byte
CUtensorMap encoded from the buffer's device address, which only exists at
execution: kernel_call sends its encoding (the `tma` attribute) and the handler
builds the map (cuTensorMapEncodeTiled) at each launch.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Literal, Optional, Sequence

import jax

from .utils import strides_from_shape


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class TensorDescriptor:
    """A tensor descriptor argument of triton_call (the array is an operand)."""

    base: Any
    shape: tuple[int, ...] = dataclasses.field(metadata=dict(static=True))
    strides: tuple[int, ...] = dataclasses.field(metadata=dict(static=True))
    block_shape: tuple[int, ...] = dataclasses.field(metadata=dict(static=True))
    layout: Optional[Any] = dataclasses.field(default=None, metadata=dict(static=True))
    padding: Literal["zero", "nan"] | str = dataclasses.field(default="zero", metadata=dict(static=True))
    round_f32_to_tf32: bool = dataclasses.field(default=False, metadata=dict(static=True))

    def __post_init__(self):
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"padding must be 'zero' or 'nan', got {self.padding!r}")
        if not len(self.shape) == len(self.strides) == len(self.block_shape):
            raise ValueError(f"shape, strides and block_shape must have the same length, got {len(self.shape)}, "
                             f"{len(self.strides)}, {len(self.block_shape)}")

    @classmethod
    def from_array(cls, array: Any, block_shape: Sequence[int], layout: Optional[Any] = None,
                   padding: str = "zero", round_f32_to_tf32: bool = False) -> "TensorDescriptor":
        """A descriptor of a whole contiguous array."""
        return cls(array, tuple(array.shape), strides_from_shape(array.shape), tuple(block_shape), layout, padding,
                   round_f32_to_tf32)
