# SPDX-License-Identifier: Apache-2.0
"""What a triton_call becomes when it is lowered for a platform: its kernel
compiled for that platform's targets (every variant an autotuner or
heuristics make), the hooks' effects recorded, and the custom call emitted
(kernel_call.emit). The API (triton.py) hands over a TritonCall: the call's
static description, made when the call is traced, without compiling.

The rule per platform (`PLATFORM_RULES`): cuda and rocm compile for the
architectures of JAX's devices of that platform, or the explicit targets;
cpu runs a registered host twin (bundled with the explicit targets' images,
if any), else Triton's interpreter (interpret.py: nothing is compiled, the
chosen config's launch runs from a Python FFI handler), as `cpu_kernels(...)`
chooses where the call is made.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import warnings
from typing import Any, Callable, Mapping, Optional, Sequence

import jax.numpy as jnp
import numpy as np
from triton import knobs as _knobs

from . import autotune as _at
from . import bounds as _bounds
from . import compile as _c
from . import coords as _co
from . import interpret as _interp
from . import routing as _ro
from .errors import KernelCallError
from .call import emit, normalize_grid
from .tensordesc import TensorDescriptor
from .values import ByValue, plain


@dataclasses.dataclass(frozen=True, eq=False)
class TritonCall(ByValue):
    """A triton_call as traced: everything its lowering needs, no arrays (inputs are `coords.In` leaves whose
    `array` is the operand's ShapeDtypeStruct)."""
    kernel: Any                       # the @triton.jit / Gluon function, or an Autotuner / Heuristics around one
    info: _co.ParamInfo
    grid: Any                         # a grid or a function of the metaparameters
    named: dict                       # the arguments the caller gave, by parameter (In leaves for arrays)
    ns: dict                          # every keyword: kernel arguments and backend options, defaults applied
    user_keys: frozenset              # the keywords the caller gave
    positional: frozenset             # the parameters given positionally
    values: dict                      # every parameter with a value or an output (Out leaves)
    results: tuple                    # the call's results (ShapeDtypeStructs), aliased ones included
    aliases: dict                     # operand -> result
    ordinals: tuple                   # jax-triton's output index -> result index
    inputs: tuple                     # per operand: its ShapeDtypeStruct
    zeroed_outputs: Any               # a spec (coords.zeroed) or a function of the metaparameters returning one
    compute_capability: Optional[int]
    explicit_targets: Optional[tuple]  # targets(...) where the call was made
    twin: Optional[_c.HostTwin]
    cpu: _c.CpuKernels = _c.CpuKernels()   # cpu_kernels(...) where the call was made
    api: str = "jax_triton.triton_call"

    @property
    def fn(self) -> Any:
        return _c.jit_function(self.kernel)

    @property
    def kname(self) -> str:
        return self.fn.__name__

    @property
    def out_shapes(self) -> tuple:
        return self.results

    def key(self) -> Any:
        return (self.kernel, self.grid, self.named, self.ns, self.user_keys, self.positional, self.values,
                self.results, self.aliases, self.ordinals, self.inputs, self.zeroed_outputs, self.compute_capability,
                self.explicit_targets, self.twin, self.cpu)

    def expand(self, platform: str, operands: Sequence[Any], has_side_effect: bool,
               cost_estimate: Optional[Mapping[str, int]]) -> list:
        where = PLATFORM_RULES.get(platform, gpu_rule)(self, platform)
        candidates = _candidates(self, where)
        zeros, replaced = _hook_effects_of(self, candidates, where.interpret)
        effect = has_side_effect or not self.results
        if where.interpret:
            return _interp.launch(self, candidates, zeros, replaced, operands, effect, cost_estimate)
        return _launch(self, candidates, zeros, replaced, operands, effect, cost_estimate, platform)


@dataclasses.dataclass(frozen=True)
class Where:
    """What a call compiles for on one platform."""
    gpu_targets: tuple                # Triton targets
    host: bool                        # bundle the host twin
    backends: tuple                   # the backends whose options the keywords may name
    interpret: bool = False           # Triton's interpreter runs the kernel (nothing is compiled)


def gpu_rule(call: TritonCall, platform: str) -> Where:
    """cuda, rocm: the platform's devices' architectures (or the explicit targets), plus the host twin if a
    "host" target is among the explicit ones."""
    ts = _c.platform_targets(platform, call.compute_capability, call.explicit_targets)
    gpu = tuple(t for t in ts if t.backend != "host")
    if not gpu:
        raise _c.CompileError(f"kernel '{call.kname}': nothing to compile for on {platform} (no targets)")
    return _where(call, gpu, call.twin is not None and any(t.backend == "host" for t in ts))


def cpu_rule(call: TritonCall, platform: str) -> Where:
    """cpu: the host twin, with the explicit targets' GPU images beside it (the bundle then runs anywhere); with
    neither, or with cpu_kernels("interpreter"), Triton's interpreter; cpu_kernels("host") requires the twin."""
    explicit = call.explicit_targets
    use = call.cpu.use
    if use == "interpreter" or (use == "auto" and call.twin is None and explicit is None):
        _interp.check_interpretable(call.fn, call.kname)
        return Where((), False, ("cuda", "hip"), interpret=True)
    if call.twin is None and explicit is None:
        raise _c.CompileError(
            f"kernel '{call.kname}': JAX runs it on CPU, cpu_kernels('host') requires a host twin and it has none "
            f"(trident.jax.host_twin); without the requirement Triton's interpreter runs it. To compile for GPUs "
            f"here, use trident.jax.targets('sm90', ...)")
    ts = _c.platform_targets(platform, call.compute_capability, explicit)
    return _where(call, tuple(t for t in ts if t.backend != "host"), call.twin is not None)


PLATFORM_RULES: dict[str, Callable[[TritonCall, str], Where]] = {"cuda": gpu_rule, "rocm": gpu_rule,
                                                                    "cpu": cpu_rule}


def _where(call: TritonCall, gpu: tuple, host: bool) -> Where:
    if host and gpu and call.twin.entry != call.kname:
        raise _c.CompileError(f"kernel '{call.kname}': its host twin's entry is '{call.twin.entry}'; bundled with "
                              f"GPU images it must have the kernel's name")
    return Where(gpu, host, tuple(_ro.backends_of(gpu) or ["cuda", "hip"]))


def shapes_of(v: Any) -> Any:
    """A value as heuristics and prune functions see it: an input's ShapeDtypeStruct (shape and dtype) for
    its array."""
    if isinstance(v, _co.In):
        return v.array
    if isinstance(v, TensorDescriptor):
        return dataclasses.replace(v, base=shapes_of(v.base))
    if isinstance(v, tuple):
        items = [shapes_of(e) for e in v]
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
    return v


def _candidates(call: TritonCall, where: Where) -> list[_at.Candidate]:
    """Every variant (heuristics, autotuner configs left after pruning), compiled; a config that fails with one of
    the errors Triton's autotuner skips (_at.SKIPPED_ERRORS) is skipped, any other error is raised naming the
    config."""
    names = call.info.names
    named = {n: shapes_of(v) for n, v in call.named.items()}
    user_kw = {k: call.ns[k] for k in call.user_keys}
    variants = _at.variants(call.kernel, {**named, **{k: v for k, v in call.ns.items() if k in names}}, user_kw)
    if len(variants) == 1:
        return [_candidate(call, where, variants[0])]
    candidates: list[_at.Candidate] = []
    failures: list[str] = []
    for var, (cand, err) in zip(variants, _compile_all(call, where, variants)):
        if err is None:
            candidates.append(cand)
        elif isinstance(err, _at.SKIPPED_ERRORS):   # as Triton's autotuner skips them
            failures.append(f"{var.config}: {type(err).__name__}: {err}")
        else:
            raise _at.config_error(call.kname, var.config, err) from err
    if not candidates:
        raise _at.AutotuneError(f"kernel '{call.kname}': no autotuner config compiles:\n" + "\n".join(failures))
    if failures:
        warnings.warn(f"trident.jax: kernel '{call.kname}': autotuner configs skipped (they do not compile):\n"
                      + "\n".join(failures), RuntimeWarning, stacklevel=2)
    return candidates


def _compile_all(call: TritonCall, where: Where, variants: list) -> list[tuple[Any, Optional[Exception]]]:
    """Every variant compiled, side by side on up to one thread a core, as (candidate, None) or (None, what it
    raised), in order: Triton releases the GIL in its passes and ptxas is a process of its own, so an autotuner's
    configs compile in a fraction of the sum of their times (bench/first_call.py's autotuned rows)."""
    def one(var: _at.Variant) -> tuple[Any, Optional[Exception]]:
        try:
            return _candidate(call, where, var), None
        except Exception as e:
            return None, e
    workers = min(len(variants), os.cpu_count() or 1, _MAX_COMPILE_THREADS)
    if workers <= 1:
        return [one(v) for v in variants]
    with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="trident-compile") as ex:
        return list(ex.map(one, variants))


_MAX_COMPILE_THREADS = 16


def _candidate(call: TritonCall, where: Where, var: _at.Variant) -> _at.Candidate:
    fn, kname, names = call.fn, call.kname, call.info.names
    load_opts: dict[str, dict[str, Any]] = {}
    meta = {**{n: shapes_of(v) for n, v in call.named.items()}, **call.ns, **var.kwargs}
    g = normalize_grid(call.grid(meta) if callable(call.grid) else call.grid, kname)
    zspec = call.zeroed_outputs(meta) if callable(call.zeroed_outputs) else call.zeroed_outputs
    values = dict(call.values)
    for k, v in meta.items():
        if k in names and k not in values:
            values[k] = plain(v)
    # a keyword naming an option is an option, also when it names a parameter (positional args are not)
    option_ns = {k: v for k, v in meta.items() if k not in call.positional and (
        k not in names or _ro.is_backend_option(k, where.backends))}
    _ro.check_names(kname, names, {k: v for k, v in option_ns.items() if k not in names}, where.backends)
    bind_values = {n: _to_binder(v) for n, v in values.items()}
    cfg = var.config
    if cfg is not None and cfg.pre_hook is not None and any(isinstance(v, TensorDescriptor) for v in values.values()):
        # Triton's idiom for host descriptors: the config's pre_hook sets their block_shape
        # (nargs["a_desc"].block_shape = [BM, BK]) before the launch compiles; here on this candidate's own
        # descriptors, before it compiles (what the hook does to arrays is recorded later, _hook_effects)
        cfg.pre_hook(_hook_args(bind_values, lambda leaf, name: _Recorder(leaf, [], name), var.kwargs))
    per_target: dict[_c.Target, Any] = {}
    given = call.user_keys | call.positional | set(var.kwargs)
    leaves = sig_text = spec = None
    for t in where.gpu_targets:
        # the options triton_call defaulted (the caller and the config gave none): this backend's defaults
        topts = _ro.for_backend(t.backend, {**option_ns, **_ro.defaults(t.backend, given)})
        if _knobs.compilation.instrumentation_mode and "instrumentation_mode" not in topts:
            topts["instrumentation_mode"] = _knobs.compilation.instrumentation_mode
        _ro.validate(kname, t, topts)
        spec = _c.specialize(fn, t, bind_values, {})
        compiled = _c.TritonFunction(fn).get_or_create_kernel(t, spec, topts)
        lv = _c.launch_leaves(fn, spec, compiled.metadata.get("tensordesc_meta"))
        text = _c.signature_text(lv)
        if sig_text is not None and text != sig_text:
            raise _c.CompileError(f"kernel '{kname}': the targets need different launch arguments ({sig_text} "
                                  f"for {where.gpu_targets[0]}, {text} for {t}); compile them in separate calls")
        sig_text, leaves = text, lv
        per_target[t] = compiled.kernel
        lo = _ro.load_stage(t.backend, topts)
        if lo:
            load_opts.setdefault(t.backend, {}).update(lo)
    if leaves is None:
        # no GPU target: the layout of a CUDA launch (the host twin takes the same parameters)
        for t0 in (_c.Target("cuda", 90, 32), _c.Target("hip", "gfx942", 64)):
            try:
                spec = _c.specialize(fn, t0, bind_values, {})
                break
            except _c.CompileError:
                continue
        leaves = _c.launch_leaves(fn, spec, None)
        sig_text = _c.signature_text(leaves)
    zero = _co.zeroed(call.info, values, zspec, call.ordinals, set(call.aliases.values()))
    kinds = [_leaf_kind(leaf.value) for leaf in leaves]
    if where.interpret:   # Triton's interpreter runs the source: nothing to compile
        return _at.Candidate(variant=var, kernels={}, kernel=None, grid=g, zero=zero, leaves=kinds,
                             names=dict(spec.bound))
    if where.host:   # the twin runs on XLA's buffers: refuse what certainly passes their end (bounds.py)
        _bounds.check(fn, kname, g, values)
        per_target[_c.Target("host", "", 1)] = _c.host_kernel(fn, sig_text)
    if not per_target:
        raise _c.CompileError(f"kernel '{kname}': nothing to compile for (no GPU target and no host twin)")
    bundle = _c.combine(per_target.values(), sig_text, kname)
    return _at.Candidate(variant=var, kernels=per_target, kernel=bundle, grid=g, zero=zero, leaves=kinds,
                         names=dict(spec.bound), load_options=load_opts)


def _hook_effects_of(call: TritonCall, candidates: list[_at.Candidate],
                     interpreted: bool = False) -> tuple[list[list[int]], dict[int, Any]]:
    """Hooks, recorded here: a config's pre_hook before every launch of its candidate; with several candidates
    also the autotuner's (reset_to_zero, or the user's), whose zeroing of outputs the benchmark needs (what it
    does to inputs is undone: the handler restores them after each candidate). The interpreter runs one
    candidate, zeroing what that candidate's launches zero on a GPU."""
    kname = call.kname
    tuner = _at.autotuner_of(call.kernel) if len(candidates) > 1 else None
    if tuner is not None and getattr(tuner, "user_defined_post_hook", False) and not interpreted:
        # the benchmark runs in C at the first execution, where no Python runs; aliased inputs are restored there
        warnings.warn(f"trident.jax: kernel '{kname}': the autotuner's post_hook is not called (trident benchmarks "
                      f"the configs in its C runtime; aliased inputs are restored after each config)",
                      RuntimeWarning, stacklevel=2)
    zeros: list[list[int]] = []
    replaced: Optional[dict[int, Any]] = None
    for c in candidates:
        cfg = c.variant.config
        hooks = ([cfg.pre_hook] if cfg is not None and cfg.pre_hook is not None else [])
        # what a config's pre_hook does to the arguments is replayed before each launch (zeroing outputs, filling
        # inputs, a host descriptor's block_shape); a hook that does nothing to them (the fused-attention
        # tutorial's returns at once for plain arrays) needs nothing; one that does what cannot be replayed is
        # refused (_Recorder)
        z, repl = _hook_effects(c, hooks, True, kname)
        if tuner is not None:
            z = sorted(set(z) | set(_hook_effects(c, [tuner.pre_hook], False, kname)[0]))
        if replaced is not None and repl != replaced:
            raise NotImplementedError(f"kernel '{kname}': the configs' pre_hooks fill inputs differently ({replaced} "
                                      f"and {repl}); an autotuned call launches every config on the same inputs")
        zeros.append(z)
        replaced = repl
    first = candidates[0]
    if any(_launch_args(other.leaves) != _launch_args(first.leaves) for other in candidates[1:]):
        raise KernelCallError(f"kernel '{kname}': the autotuner's configs pass different launch arguments (a config "
                              f"sets a parameter that is not a tl.constexpr?); an autotuned call passes one set")
    return zeros, replaced or {}


def _launch(call: TritonCall, candidates: list[_at.Candidate], zeros: list[list[int]], replaced: dict[int, Any],
            operands: Sequence[Any], has_side_effect: bool, cost_estimate: Optional[Mapping[str, int]],
            platform: str) -> list:
    """The custom call for `platform`: the first candidate's launch parameters from the operands, then emit."""
    kname = call.kname
    c = candidates[0]
    args_list: list[Any] = []
    out_at: dict[int, int] = {}
    arg_of_operand: dict[int, int] = {}
    for i, lk in enumerate(c.leaves):
        if lk[0] == "out":
            out_at[lk[1]] = i
            continue
        if lk[0] in ("in", "tma"):
            arr = operands[lk[1]]
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
    aliased = set(call.aliases.values())
    unaliased = [r for r in range(len(call.results)) if r not in aliased]
    missing = [r for r in unaliased if r not in out_at]
    if missing:
        raise KernelCallError(f"kernel '{kname}': outputs {missing} land on no launch parameter (a constexpr?)")
    aliases = {}
    for op, r in call.aliases.items():
        if op not in arg_of_operand:
            raise KernelCallError(f"kernel '{kname}': an aliased input is not a launch parameter (a constexpr?)")
        aliases[arg_of_operand[op]] = r
    tuned = len(candidates) > 1
    outs = emit([x.kernel for x in candidates] if tuned else c.kernel, *args_list,
                grid=[x.grid for x in candidates] if tuned else c.grid, out_shape=list(call.results),
                input_output_aliases=aliases, zeroed_outputs=zeros if tuned else zeros[0],
                options=[x.load_options or None for x in candidates] if tuned else c.load_options or None,
                name=kname, out_params=[out_at[r] for r in unaliased], has_side_effect=has_side_effect,
                autotune_key=_choice_key(call, candidates) if tuned else None, cost_estimate=cost_estimate,
                zero_aliased=True, platform=platform)
    return list(outs)


def _choice_key(call: TritonCall, candidates: list[_at.Candidate]) -> str:
    """Triton's autotuning key (the autotuner's key arguments' values, with the arrays' dtypes and shapes)."""
    tuner = _at.autotuner_of(call.kernel)
    keys = [repr(shapes_of(call.named.get(k, call.ns.get(k)))) for k in (tuner.keys if tuner is not None else [])]
    call_key = keys + [f"{np.dtype(a.dtype).name}{list(a.shape)}" for a in call.inputs] + \
        [f"{np.dtype(r.dtype).name}{list(r.shape)}" for r in call.results]
    return _at.choice_key(call.fn, candidates, call_key)


# ------------------------------------------------- Triton's view of the values, and the hooks' recorders

def _to_binder(v: Any) -> Any:
    """A value as Triton's binder should see it: arrays as ArgArray."""
    if isinstance(v, (_co.In, _co.Out)):
        arr = v.array if isinstance(v, _co.In) else v.shape
        nbytes = int(np.prod(arr.shape, dtype=np.int64)) * np.dtype(arr.dtype).itemsize
        return _c.ArgArray(_c.triton_dtype(arr.dtype), nbytes, v)
    if isinstance(v, TensorDescriptor):
        from triton.tools.tensor_descriptor import TensorDescriptor as TritonTD
        base = _to_binder(v.base)
        base.dtype = _c.binder_dtype(base.dtype)   # Triton's type string ("u8", "fp16") as a tl.dtype
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


class _Unreplayable(Exception):
    """A hook did to an argument what trident cannot do before each launch."""

    def __init__(self, op: str, name: str):
        super().__init__(op, name)
        self.op, self.name = op, name


class _Recorder:
    """An argument as a hook sees it at trace time: its shape and dtype, and zero_()/fill_() recorded into log.
    Any other in-place method (copy_, add_, normal_, ...: torch's names end in '_') or an item assignment is an
    effect trident cannot replay at each launch: strict (a config's pre_hook, which Triton runs before every
    launch) raises _Unreplayable; otherwise (the autotuner's own hook, run only around benchmark launches, whose
    effects on inputs the handler undoes) it does nothing."""

    def __init__(self, leaf: Any, log: list, name: str = "", strict: bool = False):
        self.leaf, self.log, self._name, self._strict = leaf, log, name, strict
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

    def data_ptr(self) -> int:
        return 16

    def __getattr__(self, op: str) -> Any:
        if op.endswith("_") and not op.startswith("_"):
            return lambda *args, **kwargs: self._unreplayable(f"{op}()")
        raise AttributeError(f"trident.jax: a hook's view of argument '{self._name}' has no '{op}' (it has shape, "
                             f"dtype, zero_(), fill_(), clone(), data_ptr())")

    def __setitem__(self, index: Any, value: Any) -> None:
        self._unreplayable("an item assignment")

    def _unreplayable(self, op: str) -> "_Recorder":
        if self._strict:
            raise _Unreplayable(op, self._name)
        return self


def _hook_args(bound: dict[str, Any], conv: Callable[[Any, str], Any], extra: dict[str, Any]) -> dict[str, Any]:
    def walk(v: Any, name: str) -> Any:
        if isinstance(v, _c.ArgArray):
            return conv(v.leaf, name)
        if isinstance(v, tuple):
            items = [walk(e, name) for e in v]
            return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
        return v
    return {**{n: walk(v, n) for n, v in bound.items()}, **extra}


def _launch_args(leaves: list[tuple]) -> list[tuple]:
    """What a candidate's launch passes, as every candidate of one call must pass it: a tensor map's block shape
    is the candidate's own (kernel_call sends each candidate's encoding), the rest is the call's."""
    return [lk[:4] + lk[5:] if lk[0] == "tma" else lk for lk in leaves]


def _hook_effects(c: _at.Candidate, hooks: list, inputs_too: bool, kname: str) -> tuple[list[int], dict[int, Any]]:
    """What hooks do before a candidate's launch, recorded on proxies at trace time: the results they zero (with
    the candidate's own), and (inputs_too) the inputs they fill, as {operand: value}."""
    log: list = []
    nargs = _hook_args(c.names, lambda leaf, name: _Recorder(leaf, log, name, inputs_too), c.variant.kwargs)
    for hook in hooks:
        try:
            hook(nargs)
        except _Unreplayable as e:
            raise NotImplementedError(f"`pre_hook` is not supported: kernel '{kname}': the pre_hook of config "
                                      f"{c.variant.config} does {e.op} on argument '{e.name}', which trident cannot "
                                      f"replay before each launch (it replays zero_() and fill_() of an argument and "
                                      f"a host descriptor's block_shape; the hook runs once, at trace time)") from None
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


