# SPDX-License-Identifier: Apache-2.0
"""The exceptions trident.jax raises to its callers, in one place. Each is also importable from the module that
raises it (platforms, interpret, bounds, coords, routing, autotune, sharding, cache), as before. Not here: what
stays inside trident.jax (host_ffi.FfiError, the code and message a Python FFI handler fails its XLA call with;
triton_cache.Damaged, turned into a CompileError)."""
from __future__ import annotations

from .. import Kernel, Param


class CompileError(ValueError):
    """A kernel that cannot be compiled or bound for a target."""


class InterpretError(CompileError):
    """A kernel that Triton's interpreter cannot run (a Gluon kernel, one that refers to its enclosing
    function's variables, a config that does not exist)."""


class KernelCallError(ValueError):
    """A kernel_call whose arguments do not fit the kernel."""


class BoundsError(KernelCallError):
    """A call whose kernel certainly reads or writes past the end of one of its arrays."""


class CoordinateError(ValueError):
    """A coordinate, out_shape, out_names, alias or zeroing spec that does not fit the kernel."""


class OptionError(ValueError):
    """An unknown keyword or an invalid backend option value."""


class AutotuneError(RuntimeError):
    """No autotuner config is left to run (pruned away, or none compiles), or one failed as Triton's autotuner
    would not skip it."""


class ShardingRuleError(ValueError):
    """A sharding_rule that does not fit the call, or a per-shard value that cannot be computed."""


class UntrustedError(OSError):
    """A cache file or directory that someone other than this user could have written."""


def label(kernel: Kernel, i: int, p: Param) -> str:
    """How a message names a launch parameter: "kernel 'k' argument 2 'n' (i32)"."""
    return f"kernel '{kernel.name}' argument {i}" + (f" '{p.name}'" if p.name else "") + f" ({p.type})"
