# SPDX-License-Identifier: Apache-2.0
"""kernel_call: one compiled kernel (for any number of targets) called from
JAX. The call is a triton_kernel_call_p (primitive.py) whose lowering emits
libtrident's XLA custom call through jax.ffi.ffi_call (`emit`, which
triton_call's lowering uses too once it has compiled its kernels).

A host TensorDescriptor for a parameter Triton lowered to TMA (type nvTmaDesc)
becomes a tensor-map parameter (arg_kind 4): its base array is an operand and
the `tma` attribute carries what the handler needs to encode the CUtensorMap
from the buffer's address at each launch (docs/xla.md); an autotuned call
carries each candidate's own records, since a map's box is its compilation's."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import operator
import os
import re
import struct
import weakref
from typing import Any, Mapping, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .. import Kernel, Param, TridentError
from . import cache as _cache
from . import primitive as _prim
from . import protocol as _ffi
from .dtypes import compatible as _compatible
from .errors import KernelCallError, label as _label
from .tma import tma_records
from .tensordesc import TensorDescriptor
from .values import ByValue

_INT = {"i1": ("<B", 0, 1), "i8": ("<b", -2**7, 2**7 - 1), "i16": ("<h", -2**15, 2**15 - 1),
        "i32": ("<i", -2**31, 2**31 - 1), "i64": ("<q", -2**63, 2**63 - 1), "u1": ("<B", 0, 1),
        "u8": ("<B", 0, 2**8 - 1), "u16": ("<H", 0, 2**16 - 1), "u32": ("<I", 0, 2**32 - 1),
        "u64": ("<Q", 0, 2**64 - 1)}


def pack_scalar(kernel: Kernel, i: int, p: Param, value: Any) -> bytes:
    """The bytes libtrident passes for a scalar parameter of Triton type p.type."""
    t = p.type
    if isinstance(value, (jax.Array, jax.core.Tracer)):
        raise KernelCallError(f"{_label(kernel, i, p)}: a scalar parameter takes a Python or NumPy scalar "
                              f"(its value is compiled into the call), not a traced array")
    if isinstance(value, np.ndarray):
        if value.shape != ():
            raise KernelCallError(f"{_label(kernel, i, p)}: expects a scalar, got an array of shape {value.shape}")
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if t in _INT:
        fmt, lo, hi = _INT[t]
        if isinstance(value, float) and not float(value).is_integer() or not isinstance(value, (int, float, bool)):
            raise KernelCallError(f"{_label(kernel, i, p)}: expects an integer, got {value!r}")
        v = int(value)
        if not lo <= v <= hi:
            # signless IR: an unsigned value of the same width fits a signed parameter
            if t.startswith("i") and t != "i1" and 0 <= v <= 2 * hi + 1:
                fmt = fmt.upper()
            else:
                raise KernelCallError(f"{_label(kernel, i, p)}: {v} is out of range ({lo} .. {hi})")
        return struct.pack(fmt, v)
    if t in ("fp16", "bf16", "fp32", "fp64"):
        if not isinstance(value, (int, float, bool)):
            raise KernelCallError(f"{_label(kernel, i, p)}: expects a float, got {value!r}")
        v = float(value)
        if t == "fp64":
            return struct.pack("<d", v)
        if t == "fp32":
            if math.isfinite(v) and abs(v) > np.finfo(np.float32).max:
                raise KernelCallError(f"{_label(kernel, i, p)}: {v} overflows fp32")
            return struct.pack("<f", v)
        if t == "fp16":
            if math.isfinite(v) and abs(v) > 65504.0:
                raise KernelCallError(f"{_label(kernel, i, p)}: {v} overflows fp16")
            return np.array(v, dtype=np.float16).tobytes()
        if math.isfinite(v) and abs(v) > float(jnp.finfo(jnp.bfloat16).max):
            raise KernelCallError(f"{_label(kernel, i, p)}: {v} overflows bf16")
        return np.array(v, dtype=jnp.bfloat16).tobytes()
    raise KernelCallError(f"{_label(kernel, i, p)}: scalars of type {t} cannot be passed from JAX")


def _as_kernel(kernel: Any) -> Kernel:
    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, (bytes, bytearray, str, os.PathLike)):
        return Kernel(kernel)
    raise TypeError(f"kernel must be a trident.Kernel, bundle bytes or a path, not {type(kernel).__name__}")


def normalize_grid(grid: Any, kname: str = "") -> tuple:
    """A launch's grid as (x, y, z): an int, or 1 to 3 integers (Python's or NumPy's), as Triton's launcher takes
    them; a float, a string or None is an error naming the value and its dimension, never converted."""
    who = f"kernel '{kname}': " if kname else ""
    if grid is None:
        raise KernelCallError(f"{who}grid is None; expected an int or a tuple of 1 to 3 ints (or a function of the "
                              f"metaparameters returning one)")
    dims = list(grid) if isinstance(grid, (tuple, list)) or (isinstance(grid, np.ndarray) and grid.ndim == 1) \
        else [grid]
    if not 1 <= len(dims) <= 3:
        raise KernelCallError(f"{who}grid {grid!r} must have 1 to 3 dimensions")
    out = []
    for i, g in enumerate(dims):
        try:
            out.append(operator.index(g))
        except TypeError:
            raise KernelCallError(f"{who}grid {grid!r}: dimension {i} is {g!r} ({type(g).__name__}), not an integer "
                                  f"(Triton's launcher takes integers only): round up with triton.cdiv") from None
    if any(g < 0 or g > 2**31 - 1 for g in out):
        raise KernelCallError(f"{who}grid {grid!r} has a dimension outside 0 .. 2^31-1")
    return tuple(out) + (1,) * (3 - len(out))


# a kernel's bundle bytes, made once and dropped with the kernel
_bundles: "weakref.WeakKeyDictionary[Kernel, bytes]" = weakref.WeakKeyDictionary()


def _bundle_of(kernel: Kernel) -> bytes:
    data = _bundles.get(kernel)
    if data is None:
        data = _bundles[kernel] = kernel.bundle()
    return data


def kernel_call(kernel: Any, *args: Any, grid: Any, out_shape: Any, input_output_aliases: Optional[Mapping[int, int]] = None,
                zeroed_outputs: Any = (), options: Any = None,
                name: Optional[str] = None, out_params: Optional[Sequence[int]] = None,
                has_side_effect: bool = False, autotune_key: Optional[str] = None,
                cost_estimate: Optional[Mapping[str, int]] = None, vmap_method: Optional[str] = None,
                sharding_rule: Any = None, local_args: Any = None) -> Any:
    """Calls a compiled kernel from JAX (inside or outside jax.jit).

    kernel: a trident.Kernel, bundle bytes, or a path (bundle or Triton cache entry); it may hold
        images for several targets, and each device runs its own. A list of them makes an
        autotuned call: the candidates take the same arguments (the first one's parameters),
        and the first execution on each device benchmarks them on the call's own inputs and
        launches the fastest from then on (kept in memory and in the trident cache directory,
        tune/<kernel>-<sha256 of autotune_key>-<arch>.json, by libtrident's tuner; see docs/xla.md).
    args: values for the kernel's first parameters, in order: arrays for pointer parameters,
        Python or NumPy scalars for scalar parameters (their values are compiled into the call),
        None for a NULL pointer, a TensorDescriptor for a tensor-map parameter (nvTmaDesc: a
        host descriptor Triton lowered to TMA; its base array is the operand, the encoding comes
        from the kernel's tensordesc_meta, each candidate's own in an autotuned call). The
        remaining parameters receive the outputs that are not aliased to an input, in order.
    out_params: where the unaliased outputs go instead, one launch-parameter index (constexpr
        parameters removed) per unaliased output, in output order; args then fill the other
        parameters in order.
    grid: programs along x, y, z (an int or a tuple of up to three); with a list of kernels,
        also a list of one grid (a tuple or list) per kernel.
    out_shape: an object with .shape and .dtype (jax.ShapeDtypeStruct) or a pytree of them.
    input_output_aliases: {argument index: output index}: the output is the input's buffer
        (donate the input under jit to avoid a copy). An autotuned call saves these inputs
        before benchmarking and restores them after each candidate.
    zeroed_outputs: output indices zeroed before the launch (not aliased ones); with a list of
        kernels, also a list of one such list per kernel.
    options: load-stage backend options per backend, e.g. {"cuda": {"maxnreg": 64}}; with a list
        of kernels, also a list of one such dict per kernel.
    name: unused by the handler; kept for the caller's own labels.
    has_side_effect: keep the call even when no output is used, in XLA too (JAX never removes it).
    autotune_key: names an autotuned call's choice (letters, digits, '_', '-', '.'); by default
        a digest of the kernels, grids, arguments and shapes.
    cost_estimate: {"flops": ..., "bytes_accessed": ...} for XLA's scheduler and profilers.
    vmap_method: "sequential" lets jax.vmap run the kernel once per batch element; otherwise
        jax.vmap raises (write a jax.custom_batching.custom_vmap rule).
    sharding_rule, local_args: the call partitions itself under jax.jit over sharded arrays (sharding.py);
        local_args returns the per-shard values of scalar parameters (by name) and the per-shard "grid".
    """
    if sharding_rule is not None:
        return _partitioned_call(kernel, args, sharding_rule, local_args, dict(
            grid=grid, out_shape=out_shape, input_output_aliases=input_output_aliases, zeroed_outputs=zeroed_outputs,
            options=options, name=name, out_params=out_params, has_side_effect=has_side_effect,
            autotune_key=autotune_key, cost_estimate=cost_estimate, vmap_method=vmap_method))
    if local_args is not None:
        raise KernelCallError("kernel_call: local_args is given without sharding_rule")
    flat, in_tree = jax.tree_util.tree_flatten(list(args), is_leaf=lambda v: v is None)
    operands, statics = [], []
    for v in flat:
        if isinstance(v, (jax.Array, jax.core.Tracer)) or (isinstance(v, np.ndarray) and v.shape != ()):
            statics.append(_Operand(len(operands)))
            operands.append(v)
        else:
            statics.append(v)
    out_flat, out_tree = jax.tree_util.tree_flatten(out_shape)
    call = PrebuiltCall(
        kernel=tuple(_as_kernel(k) for k in kernel) if isinstance(kernel, (list, tuple)) else _as_kernel(kernel),
        in_tree=in_tree, statics=tuple(statics), grid=grid,
        out_shapes=tuple(jax.ShapeDtypeStruct(tuple(o.shape), o.dtype) for o in out_flat),
        input_output_aliases=dict(input_output_aliases or {}), zeroed_outputs=zeroed_outputs, options=options,
        out_params=None if out_params is None else tuple(out_params), autotune_key=autotune_key)
    ks = call.kernel if isinstance(call.kernel, tuple) else (call.kernel,)
    for g, k in zip(_per_kernel(grid, len(ks), "grids", len(ks) > 1 and _sequences(grid)), ks):
        normalize_grid(g, k.name)   # refused here, where the call is made, not when it is lowered
    out = _prim.bind(operands, call, name=name or "", has_side_effect=bool(has_side_effect),
                     cost_estimate=cost_estimate, vmap_method=vmap_method)
    return jax.tree_util.tree_unflatten(out_tree, out)


def _partitioned_call(kernel: Any, args: tuple, rule: Any, local: Any, kw: dict[str, Any]) -> Any:
    """A kernel_call partitioned by its sharding rule: the same call, made on each shard (sharding.py)."""
    from . import sharding as _sh
    ks = [_as_kernel(k) for k in kernel] if isinstance(kernel, (list, tuple)) else [_as_kernel(kernel)]
    params = [p for p in ks[0].launch_params]
    if kw["out_params"] is not None:   # the arguments fill the parameters the outputs do not take
        params = [p for i, p in enumerate(params) if i not in set(kw["out_params"])]
    names = [p.name or f"argument {i}" for i, p in enumerate(params)]
    kernel = [k for k in ks] if isinstance(kernel, (list, tuple)) else ks[0]

    def bind(a: tuple, extra: dict) -> dict[str, Any]:
        del extra
        return dict(zip(names, a))

    def run(a: tuple, extra: dict, outs: Optional[list], local_grid: Any = None) -> Any:
        del extra
        o = dict(kw)
        if outs is not None:
            o["out_shape"] = _sh.local_out_shape(o["out_shape"], outs)
        if local_grid is not None:
            o["grid"] = local_grid
        return kernel_call(kernel, *a, **o)

    return _sh.call(f"trident.jax.kernel_call of kernel '{ks[0].name}'", rule, local, tuple(args), {}, bind,
                    names[:len(args)], kw["grid"], run, has_side_effect=bool(kw["has_side_effect"]),
                    name=kw["name"] or "")


@dataclasses.dataclass(frozen=True)
class _Operand:
    """Where an array argument of kernel_call stands among the call's operands."""
    index: int


@dataclasses.dataclass(frozen=True, eq=False)
class PrebuiltCall(ByValue):
    """A kernel_call of already compiled kernels: its arguments with the arrays taken out (operands), for the
    primitive's lowering, which emits the custom call for any platform (the bundle holds the targets)."""
    kernel: Any                                  # a Kernel, or a tuple of them (autotuned)
    in_tree: Any                                 # the arguments' structure (statics and _Operand leaves)
    statics: tuple
    grid: Any
    out_shapes: tuple
    input_output_aliases: dict
    zeroed_outputs: Any
    options: Any
    out_params: Optional[tuple]
    autotune_key: Optional[str]
    api: str = "trident.jax.kernel_call"

    def key(self) -> Any:
        return (self.kernel, self.in_tree, self.statics, self.grid, self.out_shapes, self.input_output_aliases,
                self.zeroed_outputs, self.options, self.out_params, self.autotune_key)

    def expand(self, platform: str, operands: Sequence[Any], has_side_effect: bool,
               cost_estimate: Optional[Mapping[str, int]]) -> list:
        flat = [operands[v.index] if isinstance(v, _Operand) else v for v in self.statics]
        args = jax.tree_util.tree_unflatten(self.in_tree, flat)
        kernel = list(self.kernel) if isinstance(self.kernel, tuple) else self.kernel
        return list(emit(kernel, *args, grid=self.grid, out_shape=list(self.out_shapes),
                         input_output_aliases=self.input_output_aliases, zeroed_outputs=self.zeroed_outputs,
                         options=self.options, out_params=self.out_params, has_side_effect=has_side_effect,
                         autotune_key=self.autotune_key, cost_estimate=cost_estimate, platform=platform))


def emit(kernel: Any, *args: Any, grid: Any, out_shape: Any, input_output_aliases: Optional[Mapping[int, int]] = None,
         zeroed_outputs: Any = (), options: Any = None, name: Optional[str] = None,
         out_params: Optional[Sequence[int]] = None, has_side_effect: bool = False,
         autotune_key: Optional[str] = None, cost_estimate: Optional[Mapping[str, int]] = None,
         zero_aliased: bool = False, platform: str = "") -> Any:
    """The custom call of a kernel_call (kernel_call's arguments), while its primitive is lowered for `platform`
    (the operands are the lowering's; the bundle holds every target, the handler picks each device's; the
    platform picks the custom-call target, protocol.target). zero_aliased: outputs aliased to an input may be
    zeroed (jax-triton's zeroed_outputs with a dict input_output_aliases: the buffer is zeroed before the
    launch)."""
    del name
    if isinstance(kernel, (list, tuple)):
        return _autotuned_call(list(kernel), args, grid, out_shape, input_output_aliases, zeroed_outputs, options,
                               out_params, has_side_effect, autotune_key, cost_estimate, zero_aliased, platform)
    _ffi.register()
    k = _as_kernel(kernel)
    lowered = _lower(k, args, out_shape, input_output_aliases, out_params)
    zero = _zero_list(k, lowered, zeroed_outputs, zero_aliased)
    g = normalize_grid(grid, k.name)
    scratch, results = _with_scratch(lowered.outs, [(k, g)])
    call = jax.ffi.ffi_call(_ffi.target(platform), results, input_output_aliases=lowered.ffi_aliases or None,
                            has_side_effect=has_side_effect)
    out = call(*lowered.operands, kernel=_bundle_of(k), grid=np.array(g, dtype=np.int64),
               arg_kind=np.array(lowered.kinds, dtype=np.int32), arg_index=np.array(lowered.index, dtype=np.int64),
               scalars=lowered.scalars, zero=np.array(zero, dtype=np.int64),
               scratch=np.array(scratch, dtype=np.int64), options=_options_text(options),
               version=np.int32(_ffi.CALL_VERSION), **_tma_attr(lowered.tma), **cost_attribute(cost_estimate))
    return lowered.unflatten(out)


def cost_attribute(cost: Optional[Mapping[str, int]]) -> dict[str, Any]:
    """jax-triton's `cost_estimate_json` attribute, which XLA reads (libtrident's handler ignores it)."""
    return {"cost_estimate_json": json.dumps(dict(cost))} if cost else {}


def _tma_attr(values: list[int]) -> dict[str, Any]:
    """The optional `tma` attribute: absent without tensor maps, so that such calls run on a libtrident
    that predates it."""
    return {"tma": np.array(values, dtype=np.int64)} if values else {}


def _options_text(options: Optional[Mapping[str, Mapping[str, Any]]]) -> str:
    return json.dumps({b: {n: v for n, v in d.items()} for b, d in (options or {}).items()}, sort_keys=True)


@dataclasses.dataclass
class _Lowered:
    """A call's arguments as the handler takes them."""
    operands: list                  # the arrays, in operand order
    kinds: list[int]                # per launch parameter: protocol.ARG_OPERAND .. ARG_TENSOR_MAP
    index: list[int]                # per launch parameter: its operand or result index
    scalars: bytes                  # the scalar parameters' bytes, in parameter order
    outs: list                      # the results (ShapeDtypeStructs)
    out_tree: Any
    aliases: dict[int, int]         # argument index -> output index, as given
    ffi_aliases: dict[int, int]     # operand index -> output index
    descs: list                     # (launch parameter, TensorDescriptor), in parameter order
    tma: list[int]                  # the `tma` attribute's values

    def unflatten(self, out: Any) -> Any:
        return jax.tree_util.tree_unflatten(self.out_tree, list(out)[:len(self.outs)])


def _with_scratch(outs: list, launches: Sequence[tuple[Kernel, tuple]]) -> tuple[list[int], list]:
    """The scratch attribute and the results with scratch buffers appended, sized for the largest need of any
    launch on any target (libtrident's figures: Kernel.scratch_bytes)."""
    try:
        needs = [k.scratch_bytes(g) for k, g in launches]
    except TridentError as e:
        raise KernelCallError(e.message) from e
    results = list(outs)
    scratch = [-1, -1]
    for slot in (0, 1):  # global, profile
        need = max(n[slot] for n in needs)
        if need:
            scratch[slot] = len(results)
            results.append(jax.ShapeDtypeStruct((need,), jnp.uint8))
    return scratch, results


def _zero_list(k: Kernel, lowered: "_Lowered", zeroed_outputs: Sequence[int], zero_aliased: bool = False) -> list[int]:
    zero = []
    for o in zeroed_outputs:
        if not 0 <= o < len(lowered.outs):
            raise KernelCallError(f"kernel '{k.name}': zeroed_outputs names output {o}; there are "
                                  f"{len(lowered.outs)}")
        if o in lowered.aliases.values() and not zero_aliased:
            raise KernelCallError(f"kernel '{k.name}': zeroed_outputs: output {o} is aliased to an input, whose "
                                  f"values zeroing would destroy; zero the input instead")
        zero.append(o)
    return zero


def _per_kernel(value: Any, n: int, what: str, per: bool) -> list:
    """A keyword of an autotuned call: the same value for every kernel, or (per) a list of one per kernel."""
    if not per:
        return [value] * n
    if len(value) != n:
        raise KernelCallError(f"kernel_call: {n} kernels and {len(value)} {what}")
    return list(value)


def _sequences(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(e, (list, tuple)) for e in v)


def _autotuned_call(kernels: list, args: tuple, grid: Any, out_shape: Any, input_output_aliases: Any,
                    zeroed_outputs: Any, options: Any, out_params: Any, has_side_effect: bool,
                    autotune_key: Optional[str], cost_estimate: Optional[Mapping[str, int]],
                    zero_aliased: bool, platform: str) -> Any:
    if not kernels:
        raise KernelCallError("kernel_call: an empty list of kernels")
    ks = [_as_kernel(k) for k in kernels]
    n = len(ks)
    grids = _per_kernel(grid, n, "grids", _sequences(grid))
    zeros = _per_kernel(zeroed_outputs, n, "zeroed_outputs lists", _sequences(zeroed_outputs))
    opts = _per_kernel(options, n, "options", isinstance(options, list))
    if n == 1:
        return emit(ks[0], *args, grid=grids[0], out_shape=out_shape, input_output_aliases=input_output_aliases,
                    zeroed_outputs=zeros[0], options=opts[0], out_params=out_params,
                    has_side_effect=has_side_effect, cost_estimate=cost_estimate, zero_aliased=zero_aliased,
                    platform=platform)
    _ffi.register()
    grids = [normalize_grid(g, k.name) for g, k in zip(grids, ks)]
    lowered = _lower(ks[0], args, out_shape, input_output_aliases, out_params)
    types = [p.type for p in ks[0].launch_params]
    for i, k in enumerate(ks[1:], 1):
        if [p.type for p in k.launch_params] != types:
            raise KernelCallError(f"kernel_call: candidate {i} (kernel '{k.name}', {k.signature}) does not take the "
                                  f"parameters of candidate 0 ('{ks[0].name}', {ks[0].signature})")
    zero = [_zero_list(k, lowered, z, zero_aliased) for k, z in zip(ks, zeros)]
    # each candidate's own tensor-map records (its boxes), concatenated in candidate order
    tma = lowered.tma + [v for i, k in enumerate(ks[1:], 1)
                         for v in tma_records(k, lowered.descs, f"kernel_call: candidate {i}: ")]
    scratch, results = _with_scratch(lowered.outs, list(zip(ks, grids)))
    bundles = [_bundle_of(k) for k in ks]
    opts_text = [_options_text(o) for o in opts]
    if autotune_key is None:
        h = hashlib.sha256()
        for part in (*bundles, repr(grids).encode(), repr(zero).encode(), lowered.scalars, repr(lowered.kinds).encode(),
                     repr(lowered.index).encode(), *(t.encode() for t in opts_text),
                     repr([(tuple(a.shape), str(np.dtype(a.dtype))) for a in lowered.operands]).encode(),
                     repr([(o.shape, str(np.dtype(o.dtype))) for o in lowered.outs]).encode(),
                     repr(sorted(lowered.ffi_aliases.items())).encode()):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
        autotune_key = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', ks[0].name)[:60].lstrip('.')}-{h.hexdigest()[:40]}"
    cdir = _cache.cache_dir()
    call = jax.ffi.ffi_call(_ffi.target(platform), results, input_output_aliases=lowered.ffi_aliases or None,
                            has_side_effect=has_side_effect)
    offsets = np.cumsum([0] + [len(b) for b in bundles], dtype=np.int64)
    zoff = np.cumsum([0] + [len(z) for z in zero], dtype=np.int64)
    out = call(*lowered.operands, kernel=b"".join(bundles), kernel_offsets=offsets,
               grid=np.array(grids, dtype=np.int64).reshape(-1), arg_kind=np.array(lowered.kinds, dtype=np.int32),
               arg_index=np.array(lowered.index, dtype=np.int64), scalars=lowered.scalars,
               zero=np.array([o for z in zero for o in z], dtype=np.int64), zero_offsets=zoff,
               scratch=np.array(scratch, dtype=np.int64), options="[" + ", ".join(opts_text) + "]",
               aliased=np.array(sorted(lowered.ffi_aliases), dtype=np.int64), autotune_key=autotune_key,
               cache_dir="" if cdir is None else os.fspath(cdir), version=np.int32(_ffi.AUTOTUNE_VERSION),
               **_tma_attr(tma), **cost_attribute(cost_estimate))
    return lowered.unflatten(out)


def _lower(k: Kernel, args: tuple, out_shape: Any, input_output_aliases: Optional[Mapping[int, int]],
           out_params: Optional[Sequence[int]]) -> _Lowered:
    params = k.launch_params
    flat_out, out_tree = jax.tree_util.tree_flatten(out_shape)
    outs = [jax.ShapeDtypeStruct(tuple(o.shape), o.dtype) for o in flat_out]
    aliases = dict(input_output_aliases or {})
    if len(set(aliases.values())) != len(aliases):
        raise KernelCallError(f"kernel '{k.name}': input_output_aliases {aliases} maps two inputs to one output")
    for a, o in aliases.items():
        if not 0 <= a < len(args) or not 0 <= o < len(outs):
            raise KernelCallError(f"kernel '{k.name}': input_output_aliases {a} -> {o}: there are {len(args)} "
                                  f"arguments and {len(outs)} outputs")
    unaliased = [o for o in range(len(outs)) if o not in aliases.values()]
    if len(args) + len(unaliased) != len(params):
        raise KernelCallError(
            f"kernel '{k.name}' takes {len(params)} arguments ({k.signature}); the call gives {len(args)} "
            f"arguments and {len(unaliased)} outputs not aliased to an input")
    # which launch parameter each output lands on; the arguments fill the rest in order
    if out_params is None:
        out_at = {len(args) + j: o for j, o in enumerate(unaliased)}
    else:
        out_params = [int(i) for i in out_params]
        if len(out_params) != len(unaliased) or len(set(out_params)) != len(out_params) or any(
                not 0 <= i < len(params) for i in out_params):
            raise KernelCallError(f"kernel '{k.name}': out_params {out_params} must name {len(unaliased)} distinct "
                                  f"parameters among 0 .. {len(params) - 1}, one per unaliased output")
        out_at = dict(zip(out_params, unaliased))
    arg_at = [i for i in range(len(params)) if i not in out_at]
    kinds, index, scalars, operands, operand_of = [0] * len(params), [0] * len(params), b"", [], {}
    descs: list[tuple[int, TensorDescriptor]] = []
    for a_i, (a, i) in enumerate(zip(args, arg_at)):
        p = params[i]
        if isinstance(a, TensorDescriptor) or p.type == "nvTmaDesc":
            if not isinstance(a, TensorDescriptor) or p.type != "nvTmaDesc":
                raise KernelCallError(f"{_label(k, i, p)}: " + (
                    "a TensorDescriptor goes to a tensor-map parameter (nvTmaDesc: a descriptor Triton lowered to "
                    "TMA); triton_call expands descriptors for other targets" if p.type != "nvTmaDesc" else
                    f"a tensor map (a host descriptor lowered to TMA) takes a TensorDescriptor, got {a!r}"))
            kinds[i] = _ffi.ARG_TENSOR_MAP
            index[i] = len(operands)
            operand_of[a_i] = len(operands)
            operands.append(a.base)
            descs.append((i, a))
            continue
        if a is None:
            if not p.is_pointer:
                raise KernelCallError(f"{_label(k, i, p)}: None is only for pointer parameters")
            kinds[i] = _ffi.ARG_NULL
        elif hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, np.generic) and (
                not isinstance(a, np.ndarray) or p.is_pointer):
            if not p.is_pointer:
                raise KernelCallError(f"{_label(k, i, p)}: a scalar parameter, given an array of shape {a.shape}")
            if not _compatible(p.type[1:], a.dtype):
                raise KernelCallError(f"{_label(k, i, p)}: given an array of {np.dtype(a.dtype).name}")
            operand_of[a_i] = len(operands)
            kinds[i] = _ffi.ARG_OPERAND
            index[i] = len(operands)
            operands.append(a)
        else:
            if p.is_pointer:
                raise KernelCallError(f"{_label(k, i, p)}: a pointer parameter takes an array or None, got {a!r}")
            kinds[i] = _ffi.ARG_SCALAR
    # the records go in parameter order, whatever order the arguments fill the parameters in
    descs.sort(key=lambda t: t[0])
    tma = tma_records(k, descs)
    # the scalars attribute holds the scalar parameters' bytes in parameter order
    for a, i in sorted(zip(args, arg_at), key=lambda t: t[1]):
        if kinds[i] == _ffi.ARG_SCALAR:
            scalars += pack_scalar(k, i, params[i], a)
    for i, o in out_at.items():
        p = params[i]
        if not p.is_pointer:
            raise KernelCallError(f"{_label(k, i, p)}: output {o} lands on a "
                                  f"{'tensor-map' if p.type == 'nvTmaDesc' else 'scalar'} parameter")
        if not _compatible(p.type[1:], outs[o].dtype):
            raise KernelCallError(f"{_label(k, i, p)}: output {o} is {np.dtype(outs[o].dtype).name}")
        kinds[i] = _ffi.ARG_RESULT
        index[i] = o
    ffi_aliases = {}
    for a, o in aliases.items():
        if a not in operand_of:
            raise KernelCallError(f"kernel '{k.name}': input_output_aliases: argument {a} is not an array")
        src = args[a].base if isinstance(args[a], TensorDescriptor) else args[a]
        if tuple(src.shape) != outs[o].shape or np.dtype(src.dtype) != np.dtype(outs[o].dtype):
            raise KernelCallError(f"kernel '{k.name}': argument {a} ({np.dtype(src.dtype).name}{list(src.shape)}) "
                                  f"cannot alias output {o} ({np.dtype(outs[o].dtype).name}{list(outs[o].shape)})")
        ffi_aliases[operand_of[a]] = o
    return _Lowered(operands=operands, kinds=kinds, index=index, scalars=scalars, outs=outs, out_tree=out_tree,
                    aliases=aliases, ffi_aliases=ffi_aliases, descs=descs, tma=tma)
