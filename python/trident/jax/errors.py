# SPDX-License-Identifier: Apache-2.0
"""The errors of a kernel call whose arguments do not fit the kernel, shared by kernel_call and its tensor maps."""
from __future__ import annotations

from .. import Kernel, Param


class KernelCallError(ValueError):
    """A kernel_call whose arguments do not fit the kernel."""


def label(kernel: Kernel, i: int, p: Param) -> str:
    """How a message names a launch parameter: "kernel 'k' argument 2 'n' (i32)"."""
    return f"kernel '{kernel.name}' argument {i}" + (f" '{p.name}'" if p.name else "") + f" ({p.type})"
