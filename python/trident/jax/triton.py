"""triton_call and @kernel: jax-triton's API (upstream 0.4 and the ROCm fork's
0.5.1) over trident. A kernel is compiled with the installed Triton for every
target the computation may run on and called through trident's XLA handler
(kernel_call), inside or outside jax.jit:

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
(routing.py). Outputs, aliases and zeroing: coords.py. Autotuner and
heuristics: autotune.py.

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
import warnings
from typing import Any, Callable, Mapping, Optional

import jax
import jax.numpy as jnp
import numpy as np
import triton.language as tl
from triton import knobs as _knobs

from . import autotune as _at
from . import compile as _c
from . import coords as _co
from . import routing as _ro
from ._call import KernelCallError, kernel_call, normalize_grid
from .tensordesc import TensorDescriptor

_UNSET: Any = object()

try:  # jax.core.Tracer is public in the JAX releases this supports; keep working if it moves
    _Tracer = jax.core.Tracer
except AttributeError:  # pragma: no cover
    from jax._src.core import Tracer as _Tracer

# the explicit parameters of triton_call that @kernel(...) may preset
_CALL_PARAMS = ("out_shape", "out_type", "out_names", "input_output_aliases", "zeroed_outputs", "num_warps",
                "num_stages", "num_ctas", "debug", "name", "compute_capability", "enable_fp_fusion",
                "backend_options", "serialized_metadata", "cost_estimate", "has_side_effect",
                "custom_call_target_name")


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
    """The call's array arguments, numbered in signature order (the launch order)."""

    def __init__(self, kernel_name: str):
        self.kernel = kernel_name
        self.leaves: list[_co.In] = []
        self.refs: list[tuple[Any, int]] = []   # (Ref, operand)

    def convert(self, v: Any, where: str) -> Any:
        if _is_ref(v):
            leaf = _co.In(v[...], len(self.leaves))
            self.leaves.append(leaf)
            self.refs.append((v, leaf.operand))
            return leaf
        if isinstance(v, TensorDescriptor):
            return dataclasses.replace(v, base=self.convert(v.base, where + ".base"))
        if _is_array(v):
            if isinstance(v, _Tracer) and not hasattr(v, "shape"):
                raise TypeError(f"kernel '{self.kernel}' argument {where}: a traced value without a shape")
            leaf = _co.In(v, len(self.leaves))
            self.leaves.append(leaf)
            return leaf
        if isinstance(v, tuple):
            items = [self.convert(e, f"{where}[{i}]") for i, e in enumerate(v)]
            return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
        if isinstance(v, (np.bool_,)):
            return bool(v)
        if isinstance(v, np.integer) or (isinstance(v, int) and type(v) not in (int, bool)):
            return int(v)
        if isinstance(v, np.floating) or (isinstance(v, float) and type(v) is not float):
            return float(v)
        return v


class _BinderDtype(tl.dtype):
    """A Triton dtype with torch's is_floating_point, which Triton's TensorDescriptor checks for padding="nan"."""

    @property
    def is_floating_point(self) -> bool:
        return self.is_floating()


def _to_binder(v: Any) -> Any:
    """A value as Triton's binder should see it: arrays as ArgArray."""
    if isinstance(v, (_co.In, _co.Out)):
        arr = v.array if isinstance(v, _co.In) else v.shape
        nbytes = int(np.prod(arr.shape, dtype=np.int64)) * np.dtype(arr.dtype).itemsize
        return _c.ArgArray(_c.triton_dtype(arr.dtype), nbytes, v)
    if isinstance(v, TensorDescriptor):
        from triton.tools.tensor_descriptor import TensorDescriptor as TritonTD
        base = _to_binder(v.base)
        t = base.dtype   # Triton's type string ("u8", "fp16"); tl.dtype names integers "uint8", "int1"
        base.dtype = _BinderDtype(("int" if t[0] == "i" else "uint") + t[1:] if t[0] in "iu" else t)
        cls = TritonTD
        extra = {}
        if v.layout is not None:
            from triton.experimental.gluon.nvidia.hopper import TensorDescriptor as GluonTD
            cls, extra = GluonTD, {"layout": v.layout}
        td = cls(base, list(v.shape), list(v.strides), list(v.block_shape), padding=v.padding, **extra)
        td.round_f32_to_tf32 = v.round_f32_to_tf32   # Triton 3.6's class lacks the field; the tma record uses it
        return td
    if isinstance(v, tuple):
        items = [_to_binder(e) for e in v]
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
    return v


def _leaf_kind(v: Any) -> tuple:
    if isinstance(v, _c.ArgArray):
        return ("in", v.leaf.operand) if isinstance(v.leaf, _co.In) else ("out", v.leaf.result)
    if isinstance(v, _c.TmaArg):
        # a host descriptor lowered to TMA: kernel_call encodes it from its base, an input
        d = v.desc
        if not isinstance(d.base, _c.ArgArray) or not isinstance(d.base.leaf, _co.In):
            raise KernelCallError("a TensorDescriptor's base must be an input array")
        return ("tma", d.base.leaf.operand, tuple(d.shape), tuple(d.strides), tuple(d.block_shape), d.padding,
                bool(getattr(d, "round_f32_to_tf32", False)))
    if v is None:
        return ("null",)
    return ("scalar", v)


class _Recorder:
    """An array for the chosen config's pre_hook at the real launch: records zero_/fill_."""

    def __init__(self, leaf: Any, log: list):
        self.leaf, self.log = leaf, log
        arr = leaf.array if isinstance(leaf, _co.In) else leaf.shape
        self.shape, self.dtype = tuple(arr.shape), arr.dtype

    def zero_(self) -> "_Recorder":
        self.log.append((self.leaf, 0))
        return self

    def fill_(self, value: Any) -> "_Recorder":
        self.log.append((self.leaf, value))
        return self

    def clone(self) -> "_Recorder":
        return self

    def copy_(self, src: Any) -> "_Recorder":
        return self

    def data_ptr(self) -> int:
        return 16


def _hook_args(bound: dict[str, Any], conv: Callable[[Any], Any], extra: dict[str, Any]) -> dict[str, Any]:
    def walk(v: Any) -> Any:
        if isinstance(v, _c.ArgArray):
            return conv(v.leaf)
        if isinstance(v, tuple):
            items = [walk(e) for e in v]
            return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
        return v
    return {**{n: walk(v) for n, v in bound.items()}, **extra}


def _launch_args(leaves: list[tuple]) -> list[tuple]:
    """What a candidate's launch passes, as every candidate of one call must pass it: a tensor map's block shape
    is the candidate's own (kernel_call sends each candidate's encoding), the rest is the call's."""
    return [lk[:4] + lk[5:] if lk[0] == "tma" else lk for lk in leaves]


def _hook_effects(c: _at.Candidate, hooks: list, inputs_too: bool, kname: str) -> tuple[list[int], dict[int, Any]]:
    """What hooks do before a candidate's launch, recorded on proxies at trace time: the results they zero (with
    the candidate's own), and (inputs_too) the inputs they fill, as {operand: value}."""
    log: list = []
    nargs = _hook_args(c.names, lambda leaf: _Recorder(leaf, log), c.variant.kwargs)
    for hook in hooks:
        hook(nargs)
    zero, replaced = list(c.zero), {}
    for leaf, value in log:
        if isinstance(leaf, _co.Out):
            if value != 0:
                raise NotImplementedError(f"kernel '{kname}': a pre_hook fills output {leaf.result} with {value!r}; "
                                          f"outputs can only be zeroed before a launch")
            if leaf.result not in zero:
                zero.append(leaf.result)
        elif inputs_too:
            replaced[leaf.operand] = value
    return sorted(zero), replaced


def triton_call(*args: Any, kernel: Any, grid: Any, out_shape: Any = _UNSET, out_type: Any = _UNSET,
                out_names: Any = _UNSET, input_output_aliases: Any = _UNSET, zeroed_outputs: Any = _UNSET,
                num_warps: Optional[int] = _UNSET, num_stages: Optional[int] = _UNSET,
                num_ctas: Optional[int] = _UNSET, debug: Optional[bool] = _UNSET, name: str = _UNSET,
                compute_capability: Optional[int] = _UNSET, enable_fp_fusion: Optional[bool] = _UNSET,
                backend_options: Optional[Mapping[str, Any]] = _UNSET, serialized_metadata: bytes = _UNSET,
                cost_estimate: Any = _UNSET, has_side_effect: bool = _UNSET, custom_call_target_name: Any = _UNSET,
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
    num_warps (4), num_stages (3), num_ctas (1), debug, enable_fp_fusion,
        backend_options (jax-triton 0.4's dict) and any other keyword that names
        a backend option (maxnreg, extern_libs, waves_per_eu, ...) are compiler
        options; keywords naming kernel parameters are arguments.
    compute_capability: compile for this CUDA capability instead of the devices'.
    has_side_effect: keep the call when its results are unused.
    name, serialized_metadata, cost_estimate, custom_call_target_name: accepted
        for compatibility; trident's handler has no use for them.
    """
    given_call = {k: v for k, v in (
        ("out_shape", out_shape), ("out_type", out_type), ("out_names", out_names),
        ("input_output_aliases", input_output_aliases), ("zeroed_outputs", zeroed_outputs),
        ("num_warps", num_warps), ("num_stages", num_stages), ("num_ctas", num_ctas), ("debug", debug),
        ("name", name), ("compute_capability", compute_capability), ("enable_fp_fusion", enable_fp_fusion),
        ("backend_options", backend_options), ("serialized_metadata", serialized_metadata),
        ("cost_estimate", cost_estimate), ("has_side_effect", has_side_effect),
        ("custom_call_target_name", custom_call_target_name)) if v is not _UNSET}
    if isinstance(kernel, JTKernel):
        preset = dict(kernel.kwargs)
        for k in list(preset):
            if k not in _CALL_PARAMS:
                kwargs.setdefault(k, preset.pop(k))
        given_call = {**preset, **given_call}
        kernel = kernel.kernel
    return _call(args, kernel, grid, given_call, kwargs)


def _call(args: tuple, kernel: Any, grid: Any, opts: dict[str, Any], kwargs: dict[str, Any]) -> Any:
    fn = _c.jit_function(kernel)
    kname = fn.__name__
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
    explicit = {k: opts[k] for k in ("num_warps", "num_stages", "num_ctas", "debug", "enable_fp_fusion")
                if opts.get(k) is not None}
    for k, v in list(explicit.items()) + list(backend_options.items()):
        if k in backend_options and k in explicit:
            raise ValueError(f"kernel '{kname}': {k} is given both as an argument and in backend_options")
        if k in ns and k not in names:
            raise ValueError(f"kernel '{kname}': {k} is given twice (as a keyword and in backend_options)")
        ns[k] = v
    user_keys = set(ns)
    for k, v in (("num_warps", 4), ("num_stages", 3), ("num_ctas", 1)):
        ns.setdefault(k, v)
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
        plan.results.append(jax.ShapeDtypeStruct(tuple(inputs.leaves[op].array.shape), inputs.leaves[op].array.dtype))
        plan.aliases[op] = len(plan.results) - 1
        plan.ref_writes.append((ref, len(plan.results) - 1))

    # ---- targets
    targets = _c.device_targets(opts.get("compute_capability"))
    on_cpu = jax.devices()[0].platform == "cpu"
    twin = _c.host_twin_of(fn)
    gpu_targets = [t for t in targets if t.backend != "host"]
    want_host = twin is not None and (on_cpu or any(t.backend == "host" for t in targets))
    if on_cpu and twin is None and _c._override.get() is None:
        raise _c.CompileError(
            f"kernel '{kname}': JAX runs on CPU and the kernel has no host twin (trident.jax.host_twin); Triton "
            f"kernels run on GPUs. To compile for GPUs here, use trident.jax.targets('sm90', ...)")
    if want_host and gpu_targets and (twin[1] or kname) != kname:
        raise _c.CompileError(f"kernel '{kname}': its host twin's entry is '{twin[1]}'; bundled with GPU images it "
                              f"must have the kernel's name")
    backends = _ro.backends_of(gpu_targets) or ["cuda", "hip"]
    layout_target = gpu_targets[0] if gpu_targets else _c.Target("cuda", 90, 32)

    # ---- variants: heuristics and autotuner configs
    user_kw = {k: ns[k] for k in user_keys}
    variants = _at.variants(kernel, {**user_named, **{k: v for k, v in ns.items() if k in names}}, user_kw)
    zeroed_spec = opts.get("zeroed_outputs")
    aliased_results = set(plan.aliases.values())

    def candidate(var: _at.Variant) -> _at.Candidate:
        load_opts: dict[str, dict[str, Any]] = {}
        meta = {**user_named, **ns, **var.kwargs}
        g = normalize_grid(grid(meta) if callable(grid) else grid)
        zspec = zeroed_spec(meta) if callable(zeroed_spec) else zeroed_spec
        values = dict(plan.values)
        for k, v in meta.items():
            if k in names and k not in values:
                values[k] = _Inputs(kname).convert(v, f"'{k}'")
        # a keyword naming an option is an option, also when it names a parameter (positional args are not)
        option_ns = {k: v for k, v in meta.items() if k not in positional and (
            k not in names or _ro.is_backend_option(k, backends))}
        _ro.check_names(kname, names, {k: v for k, v in option_ns.items() if k not in names}, backends)
        bind_values = {n: _to_binder(v) for n, v in values.items()}
        cfg = var.config
        if cfg is not None and cfg.pre_hook is not None and any(
                isinstance(v, TensorDescriptor) for v in values.values()):
            # Triton's idiom for host descriptors: the config's pre_hook sets their block_shape
            # (nargs["a_desc"].block_shape = [BM, BK]) before the launch compiles; here on this candidate's own
            # descriptors, before it compiles (what the hook does to arrays is recorded later, _hook_effects)
            cfg.pre_hook(_hook_args(bind_values, lambda leaf: _Recorder(leaf, []), var.kwargs))
        per_target: dict[_c.Target, Any] = {}
        leaves = None
        sig_text = None
        for t in gpu_targets:
            topts = _ro.for_backend(t.backend, option_ns)
            if _knobs.compilation.instrumentation_mode and "instrumentation_mode" not in topts:
                topts["instrumentation_mode"] = _knobs.compilation.instrumentation_mode
            _ro.validate(kname, t, topts)
            spec = _c.specialize(fn, t, bind_values, {})
            compiled = _c.compile_for(fn, t, spec, topts)
            lv = _c.launch_leaves(fn, spec, compiled.metadata.get("tensordesc_meta"))
            text = _c.signature_text(lv)
            if sig_text is not None and text != sig_text:
                raise _c.CompileError(f"kernel '{kname}': the targets need different launch arguments ({sig_text} "
                                      f"for {gpu_targets[0]}, {text} for {t}); compile them in separate calls")
            sig_text, leaves = text, lv
            per_target[t] = compiled.kernel
            lo = _ro.load_stage(t.backend, topts)
            if lo:
                load_opts.setdefault(t.backend, {}).update(lo)
        if leaves is None:
            # no GPU target: the layout of a CUDA launch (the host twin takes the same parameters)
            for t0 in (layout_target, _c.Target("hip", "gfx942", 64)):
                try:
                    spec = _c.specialize(fn, t0, bind_values, {})
                    break
                except _c.CompileError:
                    continue
            leaves = _c.launch_leaves(fn, spec, None)
            sig_text = _c.signature_text(leaves)
        if want_host:
            per_target[_c.Target("host", "", 1)] = _c.host_kernel(fn, sig_text)
        if not per_target:
            raise _c.CompileError(f"kernel '{kname}': nothing to compile for (no GPU target and no host twin)")
        bundle = _c.combine(per_target.values(), sig_text, kname)
        zero = _co.zeroed(info, values, zspec, plan.ordinals, aliased_results)
        return _at.Candidate(
            variant=var, kernels=per_target, kernel=bundle, grid=g, zero=zero,
            leaves=[_leaf_kind(leaf.value) for leaf in leaves], names=dict(spec.bound), load_options=load_opts)

    candidates: list[_at.Candidate] = []
    failures: list[str] = []
    for var in variants:
        if len(variants) == 1:
            candidates.append(candidate(var))
            continue
        try:
            candidates.append(candidate(var))
        except (_c.CompileError, _ro.OptionError, NotImplementedError, TypeError):
            raise
        except Exception as e:   # Triton's autotuner skips a config that does not compile; so do we
            failures.append(f"{var.config}: {type(e).__name__}: {e}")
    if not candidates:
        raise _at.AutotuneError(f"kernel '{kname}': no autotuner config compiles:\n" + "\n".join(failures))
    if failures:
        warnings.warn(f"trident.jax: kernel '{kname}': autotuner configs skipped (they do not compile):\n"
                      + "\n".join(failures), RuntimeWarning, stacklevel=3)

    # ---- hooks, recorded at trace time: a config's pre_hook before every launch of its candidate; with several
    # candidates also the autotuner's (reset_to_zero, or the user's), whose zeroing of outputs the benchmark
    # needs (what it does to inputs is undone: the handler restores them after each candidate)
    tuner = _at.autotuner_of(kernel) if len(candidates) > 1 else None
    if tuner is not None and getattr(tuner, "user_defined_post_hook", False):
        # the benchmark runs in C at the first execution, where no Python runs; aliased inputs are restored there
        warnings.warn(f"trident.jax: kernel '{kname}': the autotuner's post_hook is not called (trident benchmarks "
                      f"the configs in its C runtime; aliased inputs are restored after each config)",
                      RuntimeWarning, stacklevel=3)
    zeros, replaced = [], None
    for c in candidates:
        cfg = c.variant.config
        hooks = ([cfg.pre_hook] if cfg is not None and cfg.pre_hook is not None else [])
        z, repl = _hook_effects(c, hooks, True, kname)
        if tuner is not None:
            z = sorted(set(z) | set(_hook_effects(c, [tuner.pre_hook], False, kname)[0]))
        if replaced is not None and repl != replaced:
            raise NotImplementedError(f"kernel '{kname}': the configs' pre_hooks fill inputs differently ({replaced} "
                                      f"and {repl}); an autotuned call launches every config on the same inputs")
        zeros.append(z)
        replaced = repl
    c = candidates[0]
    if any(_launch_args(other.leaves) != _launch_args(c.leaves) for other in candidates[1:]):
        raise KernelCallError(f"kernel '{kname}': the autotuner's configs pass different launch arguments (a config "
                              f"sets a parameter that is not a tl.constexpr?); an autotuned call passes one set")

    # ---- the call
    args_list: list[Any] = []
    out_at: dict[int, int] = {}
    arg_of_operand: dict[int, int] = {}
    for i, lk in enumerate(c.leaves):
        if lk[0] == "out":
            out_at[lk[1]] = i - 0
            continue
        if lk[0] in ("in", "tma"):
            arr = inputs.leaves[lk[1]].array
            if lk[1] in replaced:
                arr = jnp.full(arr.shape, replaced[lk[1]], arr.dtype)
            arg_of_operand[lk[1]] = len(args_list)
            args_list.append(arr if lk[0] == "in" else TensorDescriptor(arr, *lk[2:5], padding=lk[5],
                                                                         round_f32_to_tf32=lk[6]))
        elif lk[0] == "null":
            args_list.append(None)
        else:
            args_list.append(lk[1])
    # out_params index the launch parameters: leaves are exactly those
    unaliased = [r for r in range(len(plan.results)) if r not in aliased_results]
    missing = [r for r in unaliased if r not in out_at]
    if missing:
        raise KernelCallError(f"kernel '{kname}': outputs {missing} land on no launch parameter (a constexpr?)")
    aliases = {}
    for op, r in plan.aliases.items():
        if op not in arg_of_operand:
            raise KernelCallError(f"kernel '{kname}': an aliased input is not a launch parameter (a constexpr?)")
        aliases[arg_of_operand[op]] = r
    results = list(plan.results)
    side_effect = bool(opts.get("has_side_effect")) or not results
    tuned = len(candidates) > 1
    key = _choice_key(fn, kernel, candidates, inputs, plan, user_named, ns) if tuned else None
    outs = kernel_call([x.kernel for x in candidates] if tuned else c.kernel, *args_list,
                       grid=[x.grid for x in candidates] if tuned else c.grid, out_shape=results,
                       input_output_aliases=aliases, zeroed_outputs=zeros if tuned else zeros[0],
                       options=[x.load_options or None for x in candidates] if tuned else c.load_options or None,
                       name=opts.get("name") or kname, out_params=[out_at[r] for r in unaliased],
                       has_side_effect=side_effect, autotune_key=key)
    outs = list(outs)
    for ref, r in plan.ref_writes:
        ref[...] = outs[r]
    return plan.assemble(outs)


def _choice_key(fn: Any, kernel: Any, candidates: list[_at.Candidate], inputs: _Inputs, plan: _co.Plan,
                user_named: dict, ns: dict) -> str:
    """Triton's autotuning key (the autotuner's key arguments' values, with the arrays' dtypes and shapes)."""
    tuner = _at.autotuner_of(kernel)
    keys = [repr(user_named.get(k, ns.get(k))) for k in (tuner.keys if tuner is not None else [])]
    call_key = keys + [f"{np.dtype(leaf.array.dtype).name}{list(leaf.array.shape)}" for leaf in inputs.leaves] + \
        [f"{np.dtype(r.dtype).name}{list(r.shape)}" for r in plan.results]
    return _at.choice_key(fn, candidates, call_key)
