# SPDX-License-Identifier: Apache-2.0
"""triton_call and @kernel: jax-triton's API (upstream 0.4 and the ROCm fork's
0.5.1) over trident. A call binds triton_kernel_call_p (primitive.py) with
the call's static description (lowering.TritonCall); the kernel is compiled
when the call is lowered, with the installed Triton, for the targets of the
platform it is lowered for, and runs through trident's XLA handler, inside or
outside jax.jit:

    import trident.jax as jt

    out = jt.triton_call(x, y, x.size, kernel=add_kernel, out_shape=x,
                         grid=lambda meta: (jt.cdiv(x.size, meta["BLOCK"]),), BLOCK=1024)

    @jt.kernel(out_names="out_ptr")
    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr): ...
    out = add[(n // 1024,)](x, y, n=n, BLOCK=1024, out_shape=x)

Arguments are what Triton takes at a launch: arrays (operands), Python and
NumPy scalars (compiled into the call; a Python float is fp32, as in Triton),
tl.constexpr values, None, strings, callables (@triton.jit functions) and
nested tuples of these, positionally or by name; jax.Ref arguments are
read-write buffers (jax-triton 0.4). Binding and specialization are Triton's
(compile.py). Keywords share one namespace with the backend options
(routing.py; unknown names fail here, when the call is made, and again for
the backends of the platform lowered for). Outputs, aliases and zeroing:
coords.py. Autotuner and heuristics: autotune.py, applied when lowering.

Why output-only parameters come last: an output is not an argument, so it
lands on a parameter no argument was given for; in the positional form the
arguments fill the first parameters, so the outputs are the parameters after
them. That is jax-triton's contract (its launcher passes XLA's operands, then
its results) and kernel_call's default. With out_names or a dict out_shape an
output may sit anywhere: kernel_call's out_params puts it there.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Mapping, Optional

import jax
import numpy as np
from triton import knobs as _knobs

from . import compile as _c
from . import coords as _co
from . import lowering as _lo
from . import primitive as _prim
from . import routing as _ro
from . import sharding as _sh
from .call import normalize_grid
from .tensordesc import TensorDescriptor
from .values import plain

_UNSET: Any = object()

try:  # jax.core.Tracer is public in the JAX releases this supports; keep working if it moves
    _Tracer = jax.core.Tracer
except AttributeError:  # pragma: no cover
    from jax._src.core import Tracer as _Tracer

# the explicit parameters of triton_call that @kernel(...) may preset
_CALL_PARAMS = ("out_shape", "out_type", "out_names", "input_output_aliases", "zeroed_outputs", "num_warps",
                "num_stages", "num_ctas", "debug", "name", "compute_capability", "enable_fp_fusion",
                "backend_options", "serialized_metadata", "cost_estimate", "has_side_effect",
                "custom_call_target_name", "vmap_method", "sharding_rule", "local_args")


class JTKernel:
    """A kernel with preset triton_call keywords, launched as kernel[grid](*args, **kwargs)."""

    def __init__(self, kernel: Any, kwargs: Optional[dict[str, Any]] = None):
        kwargs = dict(kwargs or {})
        if isinstance(kernel, JTKernel):
            kwargs = {**kernel.kwargs, **kwargs}
            kernel = kernel.kernel
        fn = _c.jit_function(kernel)
        if "grid" in kwargs:
            raise ValueError(f"kernel '{fn.__name__}': give the grid as kernel[grid](...), not as a keyword")
        if "out_names" in kwargs and kwargs["out_names"] is not None:
            names = kwargs["out_names"]
            names = (names,) if isinstance(names, (str, int)) else tuple(names)
            info = _param_info(fn)
            for n in names:
                _co.path_of(info, n, "out_names")
            kwargs["out_names"] = names
        self.kernel = kernel
        self.kwargs = kwargs
        functools.update_wrapper(self, fn, updated=())

    @property
    def fn(self) -> Any:
        return self.kernel

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        return lambda *args, **kwargs: triton_call(*args, kernel=self, grid=grid, **kwargs)

    def __repr__(self) -> str:
        return f"JTKernel({self.kernel!r}, {self.kwargs})"


def kernel(fn: Any = None, **kwargs: Any) -> Any:
    """@kernel or @kernel(out_names=..., **triton_call keywords): a kernel launched with
    kernel[grid](*args, **kwargs); the keywords given here are defaults of every launch."""
    if fn is not None:
        return JTKernel(fn, kwargs)
    return lambda f: JTKernel(f, kwargs)


def _param_info(fn: Any) -> _co.ParamInfo:
    return _co.ParamInfo(kernel=fn.__name__, names=[p.name for p in fn.params],
                         constexpr=[p.is_constexpr for p in fn.params],
                         has_default=[p.has_default for p in fn.params])


def _is_ref(x: Any) -> bool:
    """A jax.Ref (jax.new_ref), or its tracer under jax.jit."""
    ref_type = getattr(jax, "Ref", None)
    if ref_type is not None and isinstance(x, ref_type):
        return True
    if isinstance(x, _Tracer):
        try:
            from jax._src.state.types import AbstractRef
        except ImportError:  # pragma: no cover
            return False
        return isinstance(getattr(x, "aval", None), AbstractRef)
    return False


def _is_array(x: Any) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, _Tracer))


class _Inputs:
    """The call's array arguments, numbered in signature order (the launch order): the arrays are the
    primitive's operands, the leaves (their ShapeDtypeStructs) go into the call's description."""

    def __init__(self, kernel_name: str):
        self.kernel = kernel_name
        self.leaves: list[_co.In] = []
        self.arrays: list[Any] = []
        self.refs: list[tuple[Any, int]] = []   # (Ref, operand)

    def _leaf(self, array: Any) -> _co.In:
        leaf = _co.In(jax.ShapeDtypeStruct(tuple(array.shape), array.dtype), len(self.leaves))
        self.leaves.append(leaf)
        self.arrays.append(array)
        return leaf

    def convert(self, v: Any, where: str) -> Any:
        if _is_ref(v):
            leaf = self._leaf(v[...])
            self.refs.append((v, leaf.operand))
            return leaf
        if isinstance(v, TensorDescriptor):
            return dataclasses.replace(v, base=self.convert(v.base, where + ".base"))
        if _is_array(v):
            if isinstance(v, _Tracer) and not hasattr(v, "shape"):
                raise TypeError(f"kernel '{self.kernel}' argument {where}: a traced value without a shape")
            return self._leaf(v)
        if isinstance(v, tuple):
            items = [self.convert(e, f"{where}[{i}]") for i, e in enumerate(v)]
            return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
        return plain(v)


def triton_call(*args: Any, kernel: Any, grid: Any, out_shape: Any = _UNSET, out_type: Any = _UNSET,
                out_names: Any = _UNSET, input_output_aliases: Any = _UNSET, zeroed_outputs: Any = _UNSET,
                num_warps: Optional[int] = _UNSET, num_stages: Optional[int] = _UNSET,
                num_ctas: Optional[int] = _UNSET, debug: Optional[bool] = _UNSET, name: str = _UNSET,
                compute_capability: Optional[int] = _UNSET, enable_fp_fusion: Optional[bool] = _UNSET,
                backend_options: Optional[Mapping[str, Any]] = _UNSET, serialized_metadata: bytes = _UNSET,
                cost_estimate: Any = _UNSET, has_side_effect: bool = _UNSET, custom_call_target_name: Any = _UNSET,
                vmap_method: Optional[str] = _UNSET, sharding_rule: Any = _UNSET, local_args: Any = _UNSET,
                **kwargs: Any) -> Any:
    """Calls a Triton or Gluon kernel with JAX arrays (inside or outside jax.jit).

    kernel: a @triton.jit / Gluon function, a triton.autotune / triton.heuristics
        around one, or a @trident.jax.kernel (its preset keywords apply).
    grid: an int, a tuple of up to 3 ints, or a function of the call's
        metaparameters (the parameters' values and every keyword) returning one.
    out_shape / out_type: the outputs: an object with .shape and .dtype, a
        sequence or pytree of them, or a dict {parameter name or index: shape(s)}
        (nested sequences for tuple parameters). out_names: the output parameters
        for a sequence out_shape. Outputs are not passed as arguments. See coords.py.
    input_output_aliases: the old dict {input: out_shape index}, or signature
        coordinates ("param", (index, i, j), nested lists): the aliased arrays are
        returned after the output-only ones, their shapes taken from the inputs.
    zeroed_outputs: coordinates of output parameters (or jax-triton's output
        indices), or a function of the metaparameters returning them; aliased
        buffers are never zeroed.
    num_warps (4), num_stages (each backend's: 3 on CUDA, 2 on HIP and XPU),
        num_ctas (1), debug, enable_fp_fusion,
        backend_options (jax-triton 0.4's dict) and any other keyword that names
        a backend option (maxnreg, extern_libs, waves_per_eu, ...) are compiler
        options; keywords naming kernel parameters are arguments.
    compute_capability: compile for this CUDA capability instead of the devices'.
    has_side_effect: keep the call in XLA when its results are unused (JAX never
        removes it).
    cost_estimate: {"flops": ..., "bytes_accessed": ...}: the custom call's
        cost_estimate_json attribute, for XLA's scheduler and profilers.
    vmap_method: "sequential" lets jax.vmap launch the kernel once per batch
        element; otherwise jax.vmap raises, as jax-triton does.
    sharding_rule: a Shardy sharding rule ("i j, i j -> i j", or a
        trident.jax.ShardingRule naming the factors the kernel needs whole): under
        jax.jit over sharded arrays each device launches the kernel on its own
        shard (sharding.py). local_args: a callable of the operands' local
        ShapeDtypeStructs returning {parameter: per-shard value} (and "grid").
    name, serialized_metadata, custom_call_target_name: accepted for
        compatibility; trident's handler has no use for them.
    """
    given_call = {k: v for k, v in (
        ("out_shape", out_shape), ("out_type", out_type), ("out_names", out_names),
        ("input_output_aliases", input_output_aliases), ("zeroed_outputs", zeroed_outputs),
        ("num_warps", num_warps), ("num_stages", num_stages), ("num_ctas", num_ctas), ("debug", debug),
        ("name", name), ("compute_capability", compute_capability), ("enable_fp_fusion", enable_fp_fusion),
        ("backend_options", backend_options), ("serialized_metadata", serialized_metadata),
        ("cost_estimate", cost_estimate), ("has_side_effect", has_side_effect),
        ("custom_call_target_name", custom_call_target_name), ("vmap_method", vmap_method),
        ("sharding_rule", sharding_rule), ("local_args", local_args)) if v is not _UNSET}
    if isinstance(kernel, JTKernel):
        preset = dict(kernel.kwargs)
        for k in list(preset):
            if k not in _CALL_PARAMS:
                kwargs.setdefault(k, preset.pop(k))
        given_call = {**preset, **given_call}
        kernel = kernel.kernel
    rule, local = given_call.pop("sharding_rule", None), given_call.pop("local_args", None)
    if rule is not None:
        return _partitioned_call(args, kernel, grid, given_call, kwargs, rule, local)
    if local is not None:
        raise ValueError(f"kernel '{_c.jit_function(kernel).__name__}': local_args is given without sharding_rule")
    return _call(args, kernel, grid, given_call, kwargs)


def _partitioned_call(args: tuple, kernel: Any, grid: Any, opts: dict[str, Any], kwargs: dict[str, Any], rule: Any,
                      local: Any) -> Any:
    """A triton_call partitioned by its sharding rule: the same call, made on each shard (sharding.py)."""
    fn = _c.jit_function(kernel)
    info = _param_info(fn)
    out_key = "out_type" if opts.get("out_type") is not None else "out_shape"
    if opts.get("out_names") is not None or isinstance(opts.get(out_key), dict):
        raise _sh.ShardingRuleError(
            f"trident.jax.triton_call of kernel '{fn.__name__}': sharding_rule with out_names or a dict out_shape is "
            f"not supported (their results come in parameter order); give out_shape as a shape or a sequence of "
            f"shapes for the output parameters after the arguments")

    def bind(a: tuple, kw: dict) -> Mapping[str, Any]:
        try:
            return fn.signature.bind_partial(*a, **{k: v for k, v in kw.items() if k in info.names}).arguments
        except TypeError as e:
            raise TypeError(f"kernel '{fn.__name__}': {e}") from None

    def run(a: tuple, kw: dict, outs: Optional[list], local_grid: Any = _UNSET) -> Any:
        o = dict(opts)
        if outs is not None:
            o[out_key] = _sh.local_out_shape(o.get(out_key), outs)
        return _call(a, kernel, grid if local_grid is _UNSET else local_grid, o, kw)

    def grid_of(a: tuple, kw: dict) -> Any:
        """What a grid callable gives these arguments: the metaparameters as the lowering builds them (arrays as
        their shapes), with an autotuner's first config."""
        configs = getattr(kernel, "configs", None) or []
        meta = {**dict(bind(a, kw)), **kw, **dict(getattr(configs[0], "kwargs", {}) if configs else {})}
        return _c_grid(grid(meta))

    return _sh.call(f"trident.jax.triton_call of kernel '{fn.__name__}'", rule, local, args, kwargs, bind,
                    info.names, grid, run, has_side_effect=bool(opts.get("has_side_effect")),
                    name=opts.get("name") or "", grid_of=grid_of)


def _c_grid(g: Any) -> tuple:
    """A grid as a tuple of ints, for comparing two."""
    return tuple(int(x) for x in (g if isinstance(g, (tuple, list)) else (g,)))


_DEFAULT_OPTIONS = ("num_warps", "num_stages", "num_ctas", "debug")


def _call(args: tuple, kernel: Any, grid: Any, opts: dict[str, Any], kwargs: dict[str, Any]) -> Any:
    fn = _c.jit_function(kernel)
    kname = fn.__name__
    if not callable(grid):
        normalize_grid(grid, kname)   # refused where the call is made (a function's grid: when it is lowered)
    info = _param_info(fn)
    names = info.names

    # ---- outputs given as out_shape (the fork) or out_type (jax-triton 0.4)
    out_shape = opts.get("out_shape")
    if "out_type" in opts and opts["out_type"] is not None:
        if out_shape is not None:
            raise TypeError(f"kernel '{kname}': give out_shape= or out_type=, not both")
        out_shape = opts["out_type"]

    # ---- one keyword namespace: kernel arguments and backend options
    ns = dict(kwargs)
    backend_options = dict(opts.get("backend_options") or {})
    for k, v in backend_options.items():
        try:
            hash(v)
        except TypeError:
            raise TypeError(f"backend_options[{k!r}] must be hashable, got {v!r}") from None
    explicit = {k: opts[k] for k in ("num_warps", "num_stages", "num_ctas", "debug", "enable_fp_fusion")
                if opts.get(k) is not None}
    for k, v in list(explicit.items()) + list(backend_options.items()):
        if k in backend_options and k in explicit:
            raise ValueError(f"kernel '{kname}': {k} is given both as an argument and in backend_options")
        if k in ns and k not in names:
            raise ValueError(f"kernel '{kname}': {k} is given twice (as a keyword and in backend_options)")
        ns[k] = v
    user_keys = set(ns)
    for k, v in _ro.defaults("cuda").items():   # what a grid function sees; each target compiles with its own
        ns.setdefault(k, v)                        # backend's (lowering)
    if "debug" not in ns:
        if fn.debug or _knobs.runtime.debug:
            ns["debug"] = True

    # ---- bind the arguments (the ones given) to parameters
    param_kw = {k: v for k, v in ns.items() if k in names}
    for k in list(param_kw):
        if k not in user_keys and names.index(k) < len(args):
            del param_kw[k]          # a preset option that the caller passed positionally
    try:
        ba = fn.signature.bind_partial(*args, **param_kw)
    except TypeError as e:
        raise TypeError(f"kernel '{kname}': {e}") from None
    user_named = dict(ba.arguments)
    inputs = _Inputs(kname)
    given = {n: inputs.convert(v, f"'{n}'") for n, v in user_named.items()}
    positional = set(names[:len(args)])

    aliases_spec = opts.get("input_output_aliases")
    if inputs.refs and aliases_spec:
        raise ValueError(f"kernel '{kname}': input_output_aliases cannot be combined with Ref arguments (a Ref "
                         f"is already read-write)")
    plan = _co.plan(info, given, out_shape, opts.get("out_names"), aliases_spec)
    for ref, op in inputs.refs:
        plan.results.append(inputs.leaves[op].array)
        plan.aliases[op] = len(plan.results) - 1
        plan.ref_writes.append((ref, len(plan.results) - 1))

    # keywords that are neither parameters nor options of any backend fail now (each platform's lowering checks
    # them against its own backends again)
    _ro.check_names(kname, names, {k: v for k, v in ns.items() if k not in names},
                    _ro.backends_of(_c.override() or ()) or ["cuda", "hip"])

    # ---- the call: a primitive whose lowering compiles, for the platform it is lowered for
    call = _lo.TritonCall(
        kernel=kernel, info=info, grid=grid, named=given, ns=ns, user_keys=frozenset(user_keys),
        positional=frozenset(positional), values=plan.values, results=tuple(plan.results), aliases=dict(plan.aliases),
        ordinals=tuple(plan.ordinals), inputs=tuple(leaf.array for leaf in inputs.leaves),
        zeroed_outputs=opts.get("zeroed_outputs"), compute_capability=opts.get("compute_capability"),
        explicit_targets=_c.override(), twin=_c.host_twin_of(fn), cpu=_c.cpu_choice())
    outs = _prim.bind(inputs.arrays, call, name=opts.get("name") or "", has_side_effect=bool(opts.get("has_side_effect")),
                      cost_estimate=opts.get("cost_estimate"), vmap_method=opts.get("vmap_method"),
                      metaparams=_metaparams(info, given, ns, set(explicit) | set(backend_options)))
    for ref, r in plan.ref_writes:
        ref[...] = outs[r]
    return plan.assemble(list(outs))


def _metaparams(info: _co.ParamInfo, given: dict[str, Any], ns: dict[str, Any], options: set[str]) -> dict[str, Any]:
    """jax-triton's `metaparams`: the constexpr parameters' values (defaults included) and the keywords that are
    neither parameters nor the call's explicit options; scalar arguments are not among them."""
    fn_params = dict(zip(info.names, info.constexpr))
    out = {}
    for n, is_constexpr in fn_params.items():
        if is_constexpr and n in given:
            out[n] = given[n]
    for k, v in ns.items():
        if (fn_params.get(k, True)) and k not in options and k not in _DEFAULT_OPTIONS:
            out.setdefault(k, v)
    return out
