# SPDX-License-Identifier: Apache-2.0
"""Triton's interpreter behind JAX's CPU platform: a Triton kernel with no
host twin runs unchanged, inside jax.jit or not, through Triton's own
interpreter (triton.runtime.interpreter, what TRITON_INTERPRET=1 runs), from
an XLA CPU custom call that hands it XLA's buffers.

Lowering (the cpu rule chose the interpreter, lowering.py): the call is
prepared exactly as for a GPU (Triton's binder, the autotuner's configs
pruned, heuristics applied, hooks recorded, outputs to zero, aliases), and
the chosen config's launch becomes a Plan: the kernel, its grid and every
parameter's value, arrays standing for operands and results. The plan is
registered under a key that the custom call (`trident_interpret`, host_ffi's
Python FFI handler) carries; the executable keeps the plan alive.

Execution: every array parameter becomes a view of an XLA buffer (its
address and Triton dtype, which is all the interpreter reads of a tensor: no
torch, no copy), an operand aliased to a result being the result's buffer
(XLA copied a non-donated operand there). The results to zero are cleared,
then the kernel runs program by program, as Triton's interpreter launcher
(GridExecutor) runs it, minus its copies of torch tensors to the host and
back; in addition to what it does:
  * every load, store and atomic is checked first against the buffer its
    pointer came from (_Bounds: pointers carry their argument's tag): an
    access outside it, even one inside another buffer of the call, or a store
    into an input that is not aliased to an output (XLA's buffer, which the
    call may not change), fails the call naming the kernel, the program, the
    address and the argument;
  * tl.device_assert checks run with debug=True, as compiled kernels do;
  * @triton.jit functions the kernel calls (its helpers, and triton.language's
    own such as tl.max) are interpreted too (Triton's interpreter expects them
    decorated under TRITON_INTERPRET=1);
  * every patch of triton.language the interpreter makes is undone when the
    run ends (it patches the language process-wide, so a run holds
    compile.LANGUAGE alone, which Triton's compilations share).
An exception in the kernel becomes the call's error (JaxRuntimeError), its
message naming the kernel, the program and the line.

An interpreted call runs only in the process that lowered it: an exported
computation carries the plan's key, not the Python kernel.
"""
from __future__ import annotations

import ctypes
import dataclasses
import itertools
import logging
import os
import struct
import threading
import traceback
import types
import uuid
from typing import Any, Mapping, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import triton
import triton.language as tl
from triton.runtime import interpreter as _ti
from triton.runtime.jit import JITFunction
from triton.tools.tensor_descriptor import TensorDescriptor as _TritonTD

from . import coords as _co
from . import compile as _c
from . import host_ffi as _ffi
from .call import cost_attribute
from .errors import InterpretError

TARGET = "trident_interpret"
log = logging.getLogger("trident.jax")

# what trident drives of Triton's interpreter (Triton 3.6 .. 3.9 have all of it)
_NEEDS = ("interpreter_builder", "_patch_lang", "_implicit_cvt", "InterpretedFunction")
_TRITON_HAS_TF32_FIELD = "round_f32_to_tf32" in {f.name for f in dataclasses.fields(_TritonTD)}


@dataclasses.dataclass(eq=False)
class Plan:
    """One interpreted launch: what the custom call runs (kept for the process: see _plans)."""
    kname: str
    fn: Any                           # the @triton.jit function
    grid: tuple                       # (x, y, z)
    args: dict                        # every parameter's value as Triton's binder saw it (arrays: compile.ArgArray)
    constexprs: frozenset             # the parameters passed to the kernel as they are
    zero: tuple                       # results cleared before the run
    aliases: dict                     # operand -> the result that is its buffer
    inputs: tuple                     # per operand: its ShapeDtypeStruct
    results: tuple                    # per result: its ShapeDtypeStruct
    debug: bool                       # tl.device_assert checks on
    key: str = ""


_PROCESS = uuid.uuid4().hex[:12]      # an exported call's key means nothing in another process
_counter = itertools.count()
# Plans live as long as the process: an execution may start after the executable that dispatched it is gone (JAX
# dispatches asynchronously, and a jitted lambda's executable goes when the call returns), so nothing tied to the
# executable's lifetime may hold them. Equal plans are one plan with one key (their lowerings are the same HLO,
# which JAX's caches then reuse), so re-lowering the same call does not grow the table.
_plans: dict = {}                     # key -> Plan
_interned: dict = {}                  # Plan's content -> Plan
_plans_lock = threading.Lock()
_logged: set = set()
_logged_lock = threading.Lock()


def check_interpretable(fn: Any, kname: str) -> None:
    """Refuses, naming the kernel, what Triton's interpreter cannot run."""
    missing = [n for n in _NEEDS if not hasattr(_ti, n)]
    if missing:
        raise InterpretError(f"kernel '{kname}': Triton {_c.TRITON_VERSION}'s interpreter lacks "
                             f"{', '.join(missing)}, which trident drives (Triton 3.6 .. 3.9 have them); register "
                             f"a host twin (trident.jax.host_twin)")
    if _c.is_gluon(fn):
        raise InterpretError(f"kernel '{kname}' is a Gluon kernel, which Triton's interpreter does not run; on "
                             f"JAX's CPU platform it needs a host twin (trident.jax.host_twin)")
    free = fn.fn.__code__.co_freevars
    if free:
        raise InterpretError(f"kernel '{kname}' refers to variables of the function that defines it "
                             f"({', '.join(free)}); Triton's interpreter runs a kernel's source with its module's "
                             f"globals only: make them globals or arguments")


def launch(call: Any, candidates: Sequence[Any], zeros: Sequence[Sequence[int]], replaced: Mapping[int, Any],
           operands: Sequence[Any], has_side_effect: bool, cost_estimate: Optional[Mapping[str, int]]) -> list:
    """The custom call of an interpreted triton_call (a lowering.TritonCall, its candidates made for no target),
    while the primitive is lowered for the cpu platform: the results, in call.results order."""
    kname = call.kname
    i, n = call.cpu.config, len(candidates)
    if i >= n:
        raise InterpretError(f"kernel '{kname}': cpu_kernels(config={i}) names no config: the call has {n} (the "
                             f"autotuner's configs left after pruning)" if n > 1 else
                             f"kernel '{kname}': cpu_kernels(config={i}), but the kernel is not autotuned (one config)")
    c = candidates[i]
    _log_once(call, c, i, n)
    fn = call.fn
    plan = Plan(kname=kname, fn=fn, grid=tuple(c.grid), args=dict(c.names),
                constexprs=frozenset(p.name for p in fn.params if p.is_constexpr), zero=tuple(zeros[i]),
                aliases=dict(call.aliases), inputs=tuple(call.inputs), results=tuple(call.results),
                debug=bool({**call.ns, **c.variant.kwargs}.get("debug")))
    plan = _intern(plan)
    _ffi.register_cpu_target(TARGET, _execute)
    ops = [jnp.full(a.shape, replaced[k], a.dtype) if k in replaced else a for k, a in enumerate(operands)]
    ffi = jax.ffi.ffi_call(TARGET, [jax.ShapeDtypeStruct(tuple(r.shape), r.dtype) for r in call.results],
                           input_output_aliases=dict(call.aliases) or None, has_side_effect=has_side_effect)
    return list(ffi(*ops, call=plan.key, kernel=kname, **cost_attribute(cost_estimate)))


def _frozen(v: Any) -> Any:
    """v as part of a plan's identity, such that two values freeze equal only where they mean the same to the
    kernel: numbers by their exact type and bits (0.0 and -0.0, 1, 1.0 and True differ), containers and
    dataclasses (Triton's constexpr and TensorDescriptor, trident's ArgArray and coordinates, JAX's shapes) by
    their parts, anything else by identity (the plan keeps it alive, so its id is never another's)."""
    if v is None or type(v) in (bool, int, str, bytes):
        return (type(v), v)
    if type(v) is float:
        return (float, struct.pack("<d", v))
    if type(v) is complex:
        return (complex, struct.pack("<dd", v.real, v.imag))
    if isinstance(v, np.generic):
        return ("numpy", v.dtype.str, v.tobytes())
    if isinstance(v, np.dtype):
        return ("dtype", v.str)
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(_frozen(x) for x in v))
    if isinstance(v, dict):
        return (type(v), tuple((_frozen(k), _frozen(x)) for k, x in v.items()))
    if isinstance(v, tl.constexpr):
        return ("constexpr", _frozen(v.value))
    if isinstance(v, _c.ArgArray):
        return ("array", _frozen(v.dtype), v.nbytes, _frozen(v.leaf))
    if isinstance(v, jax.ShapeDtypeStruct):
        return ("shape", tuple(v.shape), np.dtype(v.dtype).str, bool(getattr(v, "weak_type", False)),
                _frozen(getattr(v, "sharding", None)))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v), tuple((f.name, _frozen(getattr(v, f.name))) for f in dataclasses.fields(v)))
    return ("object", id(v))


def _intern(plan: Plan) -> Plan:
    """The process's plan equal to this one, or this one, registered under a new key."""
    content = (id(plan.fn), plan.kname, _frozen(plan.grid),
               tuple((k, _frozen(v)) for k, v in sorted(plan.args.items())), plan.constexprs, _frozen(plan.zero),
               tuple(sorted(plan.aliases.items())), _frozen(plan.inputs), _frozen(plan.results), plan.debug)
    with _plans_lock:
        known = _interned.get(content)
        if known is not None:
            return known
        plan.key = f"{_PROCESS}-{next(_counter)}"
        _interned[content] = plan     # the ids in content name objects this plan holds: never another's
        _plans[plan.key] = plan
        return plan


def _log_once(call: Any, c: Any, i: int, n: int) -> None:
    why = "cpu_kernels('interpreter')" if call.cpu.use == "interpreter" else "it has no host twin"
    tuned = f", autotuner config {i} of {n} ({c.label})" if n > 1 else ""
    key = (call.kname, why, i if n > 1 else None)
    with _logged_lock:
        if key in _logged:
            return
        _logged.add(key)
    log.info("kernel '%s' runs on JAX's CPU platform through Triton's interpreter (%s%s)",
             call.kname, why, tuned)


# ------------------------------------------------------------------ execution

class HostArray:
    """An XLA buffer as Triton's interpreter reads a tensor argument: its address and element type (and, for a
    TensorDescriptor's base, the dtype's itemsize and is_floating_point)."""
    __slots__ = ("address", "dtype", "nbytes", "label", "writable")

    def __init__(self, address: int, dtype: Any, nbytes: int, label: str, writable: bool):
        self.address, self.dtype, self.nbytes, self.label, self.writable = address, dtype, nbytes, label, writable

    def data_ptr(self) -> int:
        return self.address

    def __repr__(self) -> str:
        return f"HostArray({self.label} at {self.address:#x})"


class _Views:
    """The plan's arguments with its arrays as views of this execution's buffers."""

    def __init__(self, plan: Plan, operands: list[_ffi.Buffer], results: list[_ffi.Buffer]):
        self.plan, self.operands, self.results = plan, operands, results
        self.arrays: list[HostArray] = []

    def of(self, v: Any, path: str) -> Any:
        if isinstance(v, _c.ArgArray):
            return self._array(v, path)
        if isinstance(v, _TritonTD):
            extra = {"round_f32_to_tf32": bool(getattr(v, "round_f32_to_tf32", False))} if _TRITON_HAS_TF32_FIELD \
                else {}
            return _TritonTD(self._array(v.base, f"{path}.base"), list(v.shape), list(v.strides), list(v.block_shape),
                             v.padding, **extra)
        if isinstance(v, tuple):
            items = [self.of(e, f"{path}[{i}]") for i, e in enumerate(v)]
            return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
        return v

    def _array(self, a: Any, path: str) -> HostArray:
        leaf = a.leaf
        if isinstance(leaf, _co.In):
            r = self.plan.aliases.get(leaf.operand)
            buf = self.operands[leaf.operand] if r is None else self.results[r]
            spec, role = leaf.array, f"input {leaf.operand}" + (f" (aliased to output {r})" if r is not None else "")
        else:
            buf, spec, role = self.results[leaf.result], leaf.shape, f"output {leaf.result}"
        dtype = a.dtype if isinstance(a.dtype, _c.BinderDtype) else _c.binder_dtype(a.dtype)
        label = f"'{path}' ({role}: {np.dtype(spec.dtype).name}{list(spec.shape)}, {a.nbytes} bytes)"
        view = HostArray(buf.address, dtype, a.nbytes, label, not isinstance(leaf, _co.In) or r is not None)
        self.arrays.append(view)
        return view


def _execute(args: list[_ffi.Buffer], rets: list[_ffi.Buffer], attrs: dict) -> None:
    key = attrs.get("call", b"").decode(errors="replace")
    plan = _plans.get(key)
    if plan is None:
        kname = attrs.get("kernel", b"?").decode(errors="replace")
        raise _ffi.FfiError(_ffi.NOT_FOUND, f"kernel '{kname}': its interpreted call ({key}) is not known to this "
                            f"process: an interpreted kernel runs only in the process that lowered it (an exported "
                            f"computation does not carry Python kernels)")
    if len(args) != len(plan.inputs) or len(rets) != len(plan.results):
        raise _ffi.FfiError(_ffi.INTERNAL, f"kernel '{plan.kname}': the interpreted call got {len(args)} operands "
                            f"and {len(rets)} results, not {len(plan.inputs)} and {len(plan.results)}")
    run(plan, args, rets)


def run(plan: Plan, args: list[_ffi.Buffer], rets: list[_ffi.Buffer]) -> None:
    """Runs an interpreted launch on XLA's buffers (raises FfiError naming the kernel)."""
    for r in plan.zero:
        spec = plan.results[r]
        nbytes = int(np.prod(spec.shape, dtype=np.int64)) * np.dtype(spec.dtype).itemsize
        if nbytes and rets[r].address:
            ctypes.memset(rets[r].address, 0, nbytes)
    views = _Views(plan, args, rets)
    kwargs = {name: views.of(v, name) for name, v in plan.args.items()}
    with _c.LANGUAGE.exclusive():
        _interpret(plan, kwargs, _Bounds(views.arrays))


def _interpreted(jf: Any) -> Any:
    """The InterpretedFunction of a @triton.jit function, made once (kept on it: hashing one compiles its
    dependencies' key, which the interpreter's patched language refuses)."""
    f = jf.__dict__.get("_trident_interpreted")
    if f is None:
        f = jf.__dict__["_trident_interpreted"] = _ti.InterpretedFunction(jf.fn)
    return f


class _Scope:
    """Attributes set for a run and put back after it (an instance attribute over a class's method is
    removed again)."""

    def __init__(self) -> None:
        self.undo: list = []

    def set(self, obj: Any, name: str, value: Any) -> None:
        own = vars(obj)
        self.undo.append((obj, name, name in own, own.get(name)))
        setattr(obj, name, value)

    def restore(self) -> None:
        while self.undo:
            obj, name, had, old = self.undo.pop()
            if had:
                setattr(obj, name, old)
            else:
                delattr(obj, name)


def _interpret(plan: Plan, kwargs: dict, bounds: "_Bounds") -> None:
    builder = _ti.interpreter_builder
    fn = _interpreted(plan.fn).rewrite()          # before the language is patched
    lang: list = []                               # the interpreter's patches of triton.language, in order
    patched: set = set()

    def patch(f: Any) -> None:
        if id(f.__globals__) not in patched:
            patched.add(id(f.__globals__))
            scope = _ti._patch_lang(f)
            # Triton 3.6 .. 3.8 take a scalar's index with int() of its 1-element array, which NumPy 2.4 refuses
            scope.set_attr(tl.core.tensor, "__index__", lambda self: int(self.handle.data.item()))
            lang.append(scope)

    def call_helper(jf: Any, *args: Any, **kw: Any) -> Any:
        patch(jf.fn)
        return _interpreted(jf).rewrite()(*args, **kw)

    ours = _Scope()
    try:
        patch(fn)
        ours.set(JITFunction, "__call__", call_helper)
        # debug turns tl.device_assert on, and the overflow checks, which without it only cost time
        fields = {f.name for f in dataclasses.fields(builder.options)}
        ours.set(builder, "options", dataclasses.replace(builder.options, debug=plan.debug, **(
            {"sanitize_overflow": plan.debug} if "sanitize_overflow" in fields else {})))
        bounds.install(builder, ours)
        ours.set(builder, "create_assert", _device_assert)
        _Bf16.install(builder, ours)
        args = {n: v if n in plan.constexprs else _ti._implicit_cvt(v) for n, v in kwargs.items()}
        for n, v in kwargs.items():
            if n not in plan.constexprs:
                bounds.tag(v, args[n])
        gx, gy, gz = plan.grid
        builder.set_grid_dim(gx, gy, gz)
        for x in range(gx):
            for y in range(gy):
                for z in range(gz):
                    builder.set_grid_idx(x, y, z)
                    fn(**args)
    except Exception as e:
        raise _failure(plan, builder, e) from None
    finally:
        ours.restore()
        for scope in reversed(lang):
            scope.restore()


class _Fault(Exception):
    """A fault the checks found in an interpreted kernel (an access outside its buffers, a failed assert)."""


def _device_assert(condition: Any, message: Any, *_: Any) -> None:
    if not np.all(condition.data):
        raise _Fault(f"tl.device_assert failed: {message}")


_OURS = (os.path.dirname(os.path.abspath(triton.__file__)), os.path.dirname(os.path.abspath(__file__)))


def _failure(plan: Plan, builder: Any, e: BaseException) -> _ffi.FfiError:
    """The call's error for an exception in the kernel: the kernel, the program, the kernel's line, the cause."""
    root = e
    while isinstance(root, _ti.InterpreterError) and root.__cause__ is not None:
        root = root.__cause__
    where = ""
    for frame in reversed(traceback.extract_tb(root.__traceback__)):
        if not os.path.abspath(frame.filename).startswith(_OURS):
            where = f" at {frame.filename}:{frame.lineno}"
            break
    program = getattr(builder, "grid_idx", None)
    detail = str(root) if isinstance(root, _Fault) else f"{type(root).__name__}: {root}"
    return _ffi.FfiError(_ffi.INVALID_ARGUMENT if isinstance(root, _Fault) else _ffi.UNKNOWN,
                         f"kernel '{plan.kname}' (Triton's interpreter), program {program}{where}: {detail}")


_BUFFER = "trident.buffer"   # a pointer handle's attr: the regions (of _Bounds) its pointers came from


class _Bounds:
    """The call's buffers, and the checks of every memory access against them, installed on Triton's
    interpreter builder for a run (instance attributes over its methods; every load, store and atomic of
    Triton 3.6 .. 3.9's interpreter goes through these four).

    A pointer argument's handle is tagged with its buffer, and every builder operation that makes pointers from
    pointers (addptr, splat, broadcast, reshape, where, ...) passes the tags of its pointer operands on, as do
    the descriptors' and block pointers' materialized pointers: an access through a tagged pointer must lie
    within its own buffer, not merely within some buffer of the call (x_ptr + 300 reading the neighbouring
    array). A pointer made from an integer (tl.cast, int_to_ptr) or loaded from memory has no tag; its accesses
    are checked against every buffer."""

    # method -> (what, index of the pointers, index of the mask or None, whether it writes)
    _ACCESSES = {"create_masked_load": ("tl.load", 0, 1, False), "create_masked_store": ("tl.store", 0, 2, True),
                 "create_atomic_rmw": ("an atomic", 1, 3, True), "create_atomic_cas": ("tl.atomic_cas", 0, None, True)}

    def __init__(self, arrays: list[HostArray]):
        regions = sorted({(a.address, a.address + a.nbytes, a.label, a.writable) for a in arrays if a.nbytes},
                         key=lambda r: (r[0], r[3]))   # of one buffer, the writable view last: found
        self.lo = np.array([r[0] for r in regions], dtype=np.uint64)
        self.hi = np.array([r[1] for r in regions], dtype=np.uint64)
        self.writable = np.array([r[3] for r in regions], dtype=bool)
        self.labels = [r[2] for r in regions]
        where = {r: k for k, r in enumerate(regions)}
        self.region = {id(a): where.get((a.address, a.address + a.nbytes, a.label, a.writable)) for a in arrays}

    def install(self, builder: Any, scope: _Scope) -> None:
        for name, (what, p, m, writes) in self._ACCESSES.items():
            original = getattr(builder, name, None)
            if original is not None:
                scope.set(builder, name, self._checked(original, what, p, m, writes))
        for name in dir(type(builder)):
            # what makes values, not pointers from pointers: loads (a loaded pointer points anywhere), atomics
            if name.startswith("create_") and name not in self._ACCESSES and "load" not in name and \
                    "atomic" not in name and callable(getattr(builder, name, None)):
                scope.set(builder, name, _propagating(getattr(builder, name)))
        for cls_name in ("TensorDescHandle", "BlockPointerHandle"):   # their loads' pointers, from their base
            cls = getattr(_ti, cls_name, None)
            if cls is not None and hasattr(cls, "materialize_pointers"):
                scope.set(cls, "materialize_pointers", _from_base(cls.materialize_pointers))

    def tag(self, value: Any, converted: Any) -> None:
        """Tags the handles of a converted argument (an array's pointer, a host descriptor's base, in tuples too)
        with the buffers of the plan's views."""
        if isinstance(value, HostArray):
            k = self.region.get(id(value))
            handle = getattr(converted, "handle", None)
            if k is not None and isinstance(handle, _ti.TensorHandle):
                handle.attr[_BUFFER] = frozenset((k,))
        elif isinstance(value, _TritonTD):
            desc = getattr(converted, "handle", None)
            base = getattr(desc, "base", None)
            if base is not None:
                self.tag(value.base, types.SimpleNamespace(handle=base))
        elif isinstance(value, tuple):
            for v, c in zip(value, converted):
                self.tag(v, c)

    def _checked(self, original: Any, what: str, p: int, m: Optional[int], writes: bool) -> Any:
        def access(*args: Any, **kwargs: Any) -> Any:
            ptrs = args[p]
            mask = args[m] if m is not None and len(args) > m else None
            self.check(what, ptrs, mask, writes)
            return original(*args, **kwargs)
        return access

    def check(self, what: str, ptrs: Any, mask: Any, writes: bool) -> None:
        addr = np.asarray(ptrs.data, dtype=np.uint64)
        if mask is not None and getattr(mask, "data", None) is not None:
            addr = addr[np.broadcast_to(np.asarray(mask.data, dtype=bool), addr.shape)]
        addr = addr.ravel()
        if not addr.size:
            return
        elem = ptrs.get_element_ty()
        size = np.uint64(max(1, getattr(elem, "primitive_bitwidth", 8) // 8))
        own = getattr(ptrs, "attr", {}).get(_BUFFER)
        if own:
            return self._check_own(what, addr, size, sorted(own), writes)
        i = np.searchsorted(self.lo, addr, side="right").astype(np.int64) - 1
        j = np.maximum(i, 0)
        inside = (i >= 0) & (addr + size <= self.hi[j]) if len(self.lo) else np.zeros(addr.shape, bool)
        if inside.all() and (not writes or self.writable[j].all()):
            return
        if not inside.all():
            bad = int(addr[~inside][0])
            raise _Fault(f"{what} of {int(size)}-byte elements at {bad:#x}, outside every buffer of the call "
                         f"({int((~inside).sum())} of {addr.size} elements): {self._near(bad)}")
        self._read_only(what, int(j[~self.writable[j]][0]))

    def _check_own(self, what: str, addr: np.ndarray, size: np.uint64, own: list, writes: bool) -> None:
        """Every address within one of the buffers the pointers came from (almost always one)."""
        inside = np.zeros(addr.shape, bool)
        for k in own:
            here = (addr >= self.lo[k]) & (addr + size <= self.hi[k])
            if writes and here.any() and not self.writable[k]:
                self._read_only(what, k)
            inside |= here
        if inside.all():
            return
        bad = int(addr[~inside][0])
        k = own[0]
        lo, hi = int(self.lo[k]), int(self.hi[k])
        where = f"{lo - bad} bytes before" if bad < lo else \
            f"{bad - hi} bytes past the end of" if bad >= hi else "its last bytes past the end of"
        other = self._containing(bad, int(size))
        raise _Fault(f"{what} of {int(size)}-byte elements at {bad:#x}, outside the buffer its pointer came from "
                     f"({int((~inside).sum())} of {addr.size} elements): {where} {self.labels[k]}"
                     + (f", inside {self.labels[other]}" if other is not None else ""))

    def _containing(self, address: int, size: int) -> Optional[int]:
        i = int(np.searchsorted(self.lo, np.uint64(address), side="right")) - 1
        return i if i >= 0 and address + size <= int(self.hi[i]) else None

    def _read_only(self, what: str, k: int) -> None:
        raise _Fault(f"{what} writes into {self.labels[k]}, an input not aliased to an output (XLA's buffer, "
                     f"which the call may not change): alias it (input_output_aliases) or pass a jax.Ref")

    def _near(self, address: int) -> str:
        if not len(self.lo):
            return "the call has no buffers"
        i = int(np.searchsorted(self.lo, np.uint64(address), side="right")) - 1
        if i < 0:
            return f"{int(self.lo[0]) - address} bytes before {self.labels[0]}"
        past = address - int(self.hi[i])
        if past < 0:   # the element starts inside but runs past the end
            return f"its last bytes past the end of {self.labels[i]}"
        return f"{past} bytes past the end of {self.labels[i]}"


def _is_pointer(h: Any) -> bool:
    return isinstance(h, _ti.TensorHandle) and isinstance(h.dtype, tl.pointer_type)


def _buffers_of(args: Any) -> Optional[frozenset]:
    """The union of the tags of the pointer handles among args (lists and tuples included); None when there is
    none, or one has no tag (its origin is unknown)."""
    out: frozenset = frozenset()
    for a in args:
        if isinstance(a, (list, tuple)):
            sub = _buffers_of(a)
            if sub is None and any(_is_pointer(e) for e in a):
                return None
            out |= sub or frozenset()
        elif _is_pointer(a):
            tag = a.attr.get(_BUFFER)
            if tag is None:
                return None
            out |= tag
    return out or None


def _mark(out: Any, tag: frozenset) -> None:
    for h in out if isinstance(out, tuple) else (out,):
        if _is_pointer(h) and _BUFFER not in h.attr:
            h.attr[_BUFFER] = tag


def _propagating(original: Any) -> Any:
    """A builder method whose pointer results carry the tags of its pointer operands."""
    def op(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        if _is_pointer(out) or isinstance(out, tuple):
            tag = _buffers_of([*args, *kwargs.values()])
            if tag:
                _mark(out, tag)
        return out
    return op


def _from_base(original: Any) -> Any:
    """A descriptor's or block pointer's materialize_pointers: its pointers carry its base's tag."""
    def materialize(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, *args, **kwargs)
        tag = getattr(getattr(self, "base", None), "attr", {}).get(_BUFFER)
        if tag:
            _mark(out, tag)
        return out
    return materialize


class _Bf16:
    """Triton's interpreter keeps bfloat16 values as their 16 bits (uint16) and, but for conversions to and from
    float32, computes on those bits as integers. For a run, the builder's arithmetic, conversions, dot, fma and
    the reductions and scans compute bfloat16 operands in float32 and round float results back to bfloat16 (to
    nearest, ties to even), as compiled kernels compute bf16 values."""

    @staticmethod
    def is_bf16(h: Any) -> bool:
        return getattr(getattr(h, "dtype", None), "scalar", None) == tl.bfloat16 and h.data.dtype == np.uint16

    @staticmethod
    def widen(h: Any) -> Any:
        if not _Bf16.is_bf16(h):
            return h
        return _ti.TensorHandle((h.data.astype(np.uint32) << 16).view(np.float32), tl.float32)

    @staticmethod
    def narrow(h: Any) -> Any:
        """A float32 result as bfloat16 bits; other results as they are."""
        if h.data.dtype != np.float32:
            return h
        bits = h.data.view(np.uint32)
        rounded = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
        return _ti.TensorHandle(np.where(np.isnan(h.data), np.uint16(0x7FC0), rounded), tl.bfloat16)

    @classmethod
    def install(cls, builder: Any, scope: _Scope) -> None:
        def wrap(name: str, n: int, back: Any) -> None:
            """Method `name`: its first n arguments widened when any is bf16; the result narrowed when back()."""
            original = getattr(builder, name, None)
            if original is None:
                return

            def op(*args: Any, **kw: Any) -> Any:
                if not any(cls.is_bf16(a) for a in args[:n]):
                    return original(*args, **kw)
                out = original(*[cls.widen(a) for a in args[:n]], *args[n:], **kw)
                return cls.narrow(out) if back(args) else out
            scope.set(builder, name, op)

        wrap("binary_op", 2, lambda a: True)
        wrap("unary_op", 1, lambda a: True)
        wrap("create_rsqrt", 1, lambda a: True)
        wrap("create_erf", 1, lambda a: True)
        wrap("create_fma", 3, lambda a: cls.is_bf16(a[2]))
        wrap("create_dot", 3, lambda a: cls.is_bf16(a[2]))
        original_ternary = builder.ternary_op

        def ternary(lhs: Any, rhs: Any, other: Any, op: Any) -> Any:
            if op is np.where or not any(cls.is_bf16(h) for h in (lhs, rhs, other)):   # a select moves bits
                return original_ternary(lhs, rhs, other, op)
            return cls.narrow(original_ternary(cls.widen(lhs), cls.widen(rhs), cls.widen(other), op))
        scope.set(builder, "ternary_op", ternary)
        for name, v in (("create_atomic_rmw", 2), ("create_atomic_cas", 2)):
            scope.set(builder, name, cls._no_atomics(getattr(builder, name), v))
        original_cast = builder.cast_impl

        def cast(src: Any, dst_type: Any) -> Any:
            to_bf16 = dst_type.scalar == tl.bfloat16
            if cls.is_bf16(src) and not to_bf16:
                return original_cast(cls.widen(src), dst_type)
            if to_bf16 and not cls.is_bf16(src):   # the interpreter's float32 -> bf16 truncates; compiled code rounds
                return cls.narrow(src if src.data.dtype == np.float32 else original_cast(src, tl.float32))
            return original_cast(src, dst_type)
        scope.set(builder, "cast_impl", cast)
        if not hasattr(builder, "get_bf16"):   # Triton 3.6's interpreter has no bf16 constants
            scope.set(builder, "get_bf16", lambda value: cls.narrow(builder.get_fp32(value)))
        apply = _ti.ReduceScanOpInterface.apply

        def reduce_or_scan(self: Any, input: Any) -> Any:
            single = not isinstance(input, tuple)
            inputs = (input,) if single else input
            wide = [cls._widen_tensor(t) for t in inputs]
            if all(w is t for w, t in zip(wide, inputs)):
                return apply(self, input)
            out = apply(self, tuple(wide))
            out = tuple(cls._narrow_tensor(o) if w is not t else o for o, w, t in zip(out, wide, inputs))
            return out[0] if single else out
        scope.set(_ti.ReduceScanOpInterface, "apply", reduce_or_scan)

    @classmethod
    def _no_atomics(cls, original: Any, v: int) -> Any:
        def atomic(*args: Any, **kw: Any) -> Any:
            if cls.is_bf16(args[v]):
                raise _Fault("a bfloat16 atomic, which Triton's interpreter would compute on the values' bits: "
                             "use float32 (or a host twin)")
            return original(*args, **kw)
        return atomic

    @classmethod
    def _widen_tensor(cls, t: Any) -> Any:
        if not isinstance(t, tl.core.tensor) or not cls.is_bf16(t.handle):
            return t
        ty = t.type.with_element_ty(tl.float32) if isinstance(t.type, tl.block_type) else tl.float32
        return tl.core.tensor(cls.widen(t.handle), ty)

    @classmethod
    def _narrow_tensor(cls, t: Any) -> Any:
        if not isinstance(t, tl.core.tensor) or t.handle.data.dtype != np.float32:
            return t
        ty = t.type.with_element_ty(tl.bfloat16) if isinstance(t.type, tl.block_type) else tl.bfloat16
        return tl.core.tensor(cls.narrow(t.handle), ty)
