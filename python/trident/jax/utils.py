# SPDX-License-Identifier: Apache-2.0
"""Small helpers for writing and calling Triton kernels from JAX (jax-triton's
`jax_triton.utils`): integer ceiling division, the next power of two, and the
row-major strides of a shape, counted in elements."""
from __future__ import annotations

import math
from typing import Sequence

__all__ = ["cdiv", "next_power_of_2", "strides_from_shape"]


def cdiv(a: int, b: int) -> int:
    """ceil(a / b) for integers (also for JAX integer arrays: -(-a // b))."""
    return -(-a // b)


def next_power_of_2(x: int) -> int:
    """The smallest power of two >= x (1 for x <= 1)."""
    x = int(x)
    return 1 if x <= 1 else 1 << (x - 1).bit_length()


def strides_from_shape(shape: Sequence[int]) -> tuple[int, ...]:
    """The strides, in elements, of a contiguous row-major array of this shape."""
    size = math.prod(shape)
    strides = []
    for dim in shape:
        size = size // dim if dim else 0
        strides.append(size)
    return tuple(strides)
