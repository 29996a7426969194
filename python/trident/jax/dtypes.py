# SPDX-License-Identifier: Apache-2.0
"""JAX dtypes as Triton names them, and which arrays a pointer parameter of a
given Triton element type takes (Triton IR is signless)."""
from __future__ import annotations

from typing import Any, Optional

import jax.numpy as jnp
import numpy as np

# Triton's type of a pointer's element for each JAX dtype
DTYPE_TO_TRITON = {
    np.dtype("bool"): "i1", np.dtype("int8"): "i8", np.dtype("int16"): "i16", np.dtype("int32"): "i32",
    np.dtype("int64"): "i64", np.dtype("uint8"): "u8", np.dtype("uint16"): "u16", np.dtype("uint32"): "u32",
    np.dtype("uint64"): "u64", np.dtype("float16"): "fp16", np.dtype(jnp.bfloat16): "bf16",
    np.dtype("float32"): "fp32", np.dtype("float64"): "fp64",
}
for _name, _t in [("float8_e4m3fn", "fp8e4nv"), ("float8_e5m2", "fp8e5"), ("float8_e4m3fnuz", "fp8e4b8"),
                  ("float8_e5m2fnuz", "fp8e5b16"), ("float8_e4m3b11fnuz", "fp8e4b15")]:
    if hasattr(jnp, _name):
        DTYPE_TO_TRITON[np.dtype(getattr(jnp, _name))] = _t

# *i32 takes uint32 arrays too; *i8/*u8 take bool (stored as bytes)
_SIGNLESS = {("i8", "u8"), ("i16", "u16"), ("i32", "u32"), ("i64", "u64"), ("i1", "i8"), ("i1", "u8")}


def triton_dtype(dtype: Any) -> Optional[str]:
    """Triton's name of an array dtype ("fp32"), or None when Triton has none."""
    return DTYPE_TO_TRITON.get(np.dtype(dtype))


def compatible(elem: str, dtype: Any) -> bool:
    """Whether a pointer to Triton element type `elem` takes an array of `dtype`."""
    t = triton_dtype(dtype)
    return t == elem or (elem, t) in _SIGNLESS or (t, elem) in _SIGNLESS
