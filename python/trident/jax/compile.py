# SPDX-License-Identifier: Apache-2.0
"""Compiling a @triton.jit or Gluon kernel for every target a JAX computation
may run on, with the installed Triton, into one trident bundle.

Binding and specialization are Triton's own: the binder Triton generates for
a kernel (triton.runtime.jit.create_function_from_signature) sees arrays as
objects with a dtype and a 16-byte aligned address, like the tensors it sees
at a launch, so defaults, annotations, do_not_specialize, the value 1,
divisibility, tuples, callables and strings behave as in Triton. Each target
is compiled with triton.compile(ASTSource(...), target=GPUTarget(...)), its
files checked (triton_cache.py: Triton serves its cache unchecked), turned
into a trident kernel (its cubin/PTX or HSACO, its metadata and the launch
signature) and kept in memory and on disk (cache.py); the targets of
one call are combined into one bundle, and each device runs its own image.

What trident changes in Triton's internals, or works around there (the
runtime driver its front end asks while compiling, torch imports, the
front end's parsing on several threads), is triton_shims.py's: the module
to audit on a Triton release.

Targets (platforms.py) are chosen when a call is lowered, for the platform it
is lowered for. On the CPU platform a kernel runs through a host twin (a
native implementation registered with `host_twin`, whose declared signature
must be the kernel's). Every cache here is bounded or weak: a long-running
process that compiles many kernels keeps the most recent ones.
"""
from __future__ import annotations

import collections
import contextlib
import hashlib
import os
import re
import shutil
import sys
import threading
import types
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Generic, Hashable, Iterable, Optional, Sequence, TypeVar

import numpy as np
import triton
import triton.language as tl
from triton.runtime.jit import JITFunction, create_function_from_signature

from .. import _FORMAT_TABLE, Kernel, TridentError
from .. import version as trident_version
from . import cache as _cache
from . import pdl as _pdl
from . import triton_cache as _triton_cache
from .dtypes import triton_dtype as _triton_dtype
# the targets' names, for the layers above that reach them through this module
from .platforms import CompileError, CpuKernels, Target, cpu_choice, override, platform_targets  # noqa: F401
# what trident changes in, or works around in, Triton's internals (BinderDtype also for interpret.py)
from .triton_shims import (FRONT_END, BinderDtype, GluonJITFunction, NoTorchHipBackend, SerialASTSource,
                           SerialGluonASTSource, compiling_for, native_specialize_without_torch, ptx_patched,
                           triton_key_once)

TRITON_VERSION = triton.__version__
# (major, minor) of the installed release: the launch layout of host tensor descriptors follows it
TRITON_RELEASE = tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in (TRITON_VERSION.split(".") + ["0"])[:2])
if TRITON_RELEASE < (3, 6):
    raise ImportError(f"trident.jax needs Triton 3.6 or newer (CI tests it with 3.6, 3.7, 3.8 and 3.9); "
                      f"Triton {TRITON_VERSION} is installed: pip install 'triton>=3.6'")

# the binary formats of a compiled kernel, best first, per Triton backend
_IMAGES = {"cuda": ("cubin", "ptx"), "hip": ("hsaco",), "xpu": ("zebin", "spv")}
# Triton's name of an image (its file extension) -> trident's format name
_FORMAT_OF_EXT = {ext[1:]: name for _, name, _, ext in _FORMAT_TABLE}

class _LanguageGate:
    """Triton's code generator reads triton.language; its interpreter (interpret.py) patches triton.language's
    builtins with its own, process-wide. Compilations may run side by side (autotune configs compile in threads)
    and share the gate; an interpreted run holds it alone."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared = 0
        self._exclusive: Optional[int] = None   # the holding thread
        self._depth = 0

    @contextlib.contextmanager
    def shared(self):
        me = threading.get_ident()
        with self._cond:
            if self._exclusive != me:     # (the interpreter compiles nothing; a compile inside its run is its own)
                while self._exclusive is not None:
                    self._cond.wait()
                self._shared += 1
            else:
                me = None
        try:
            yield
        finally:
            if me is not None:
                with self._cond:
                    self._shared -= 1
                    self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self):
        me = threading.get_ident()
        with self._cond:
            if self._exclusive == me:
                self._depth += 1
            else:
                while self._exclusive is not None or self._shared:
                    self._cond.wait()
                self._exclusive, self._depth = me, 1
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if self._depth == 0:
                    self._exclusive = None
                    self._cond.notify_all()


LANGUAGE = _LanguageGate()

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A bounded map that drops its least recently used entry (thread-safe)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._d: "collections.OrderedDict[K, V]" = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> Optional[V]:
        with self._lock:
            v = self._d.get(key)
            if v is not None:
                self._d.move_to_end(key)
            return v

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.capacity:
                self._d.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._d)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()


@dataclass(frozen=True)
class HostTwin:
    """A registered native implementation of a Triton kernel: its shared object, entry and declared signature."""
    path: str
    entry: str
    signature: str      # as the image declares it (TRD_HOST_KERNEL_SIGNATURE)


_host_twins: "weakref.WeakKeyDictionary[Any, HostTwin]" = weakref.WeakKeyDictionary()


def host_twin(kernel: Any, path: "str | os.PathLike", name: Optional[str] = None) -> None:
    """Registers a native host implementation (a trident host kernel .so, see
    examples/host/) of a Triton kernel: on CPU, triton_call runs it. Its entry
    symbol is `name`, else the kernel's name (which it must be when the call
    also compiles GPU images: one bundle holds one kernel name). The image must
    declare the entry's signature (TRD_HOST_KERNEL_SIGNATURE): each call checks
    it against the Triton kernel's launch parameters and refuses a mismatch,
    naming both, instead of letting the twin read its arguments wrongly."""
    fn = jit_function(kernel)
    entry = name or fn.__name__
    try:
        k = Kernel(path, name=entry, format="so", target="host")
    except TridentError as e:
        if "signature is unknown" in e.message:
            raise CompileError(f"host twin of kernel '{fn.__name__}': {os.fspath(path)} declares no signature for "
                               f"'{entry}': declare it beside the function, e.g. TRD_HOST_KERNEL_SIGNATURE({entry}, "
                               f"\"x:*fp32,n:i32\") (trident/host_kernel.h)") from None
        raise CompileError(f"host twin of kernel '{fn.__name__}': {e.message}") from None
    _host_twins[fn] = HostTwin(os.fspath(path), entry, k.signature)


def host_twin_of(fn: Any) -> Optional[HostTwin]:
    return _host_twins.get(fn)


# ----------------------------------------------------------------- binding

def jit_function(kernel: Any) -> Any:
    """The @triton.jit (or Gluon) function under autotuner/heuristics/trident wrappers."""
    fn = kernel
    for _ in range(16):
        if isinstance(fn, JITFunction):
            return fn
        inner = getattr(fn, "fn", None) or getattr(fn, "kernel", None)
        if inner is None:
            break
        fn = inner
    raise TypeError(f"kernel must be a @triton.jit or Gluon function (or an Autotuner/Heuristics around one, or a "
                    f"@trident.jax.kernel), not {type(kernel).__name__}")


def is_gluon(fn: Any) -> bool:
    return GluonJITFunction is not None and isinstance(fn, GluonJITFunction)


_backends: dict[Target, Any] = {}   # one per target this process compiles for: bounded by them


def backend_of(t: Target) -> Any:
    b = _backends.get(t)
    if b is None:
        try:
            b = triton.compiler.make_backend(t.gpu_target())
        except Exception as e:
            raise CompileError(f"target {t}: this Triton ({TRITON_VERSION}) has no backend for it: {e}") from e
        if t.backend == "hip":
            b = NoTorchHipBackend(b)
        _backends[t] = b
    return b


def _state(fn: Any) -> dict:
    st = fn.__dict__.get("_trident")
    if st is None:
        st = {"binders": {}, "kernels": {}}
        fn.__dict__["_trident"] = st
    return st


def binder(fn: Any, t: Target) -> Callable:
    """Triton's generated binder for fn, per backend (specialization depends on it)."""
    binders = _state(fn)["binders"]
    key = (t.backend, t.arch)
    b = binders.get(key)
    if b is None:
        b = create_function_from_signature(fn.signature, fn.params, backend_of(t))
        binders[key] = b
    return b


class ArgArray:
    """An array as Triton's binder sees it: a Triton element type and a 16-byte
    aligned address (XLA's buffers are), plus its size for HIP's buffer ops.
    `leaf` is what the caller placed there (an input or an output)."""
    __slots__ = ("dtype", "nbytes", "leaf")

    def __init__(self, dtype: Any, nbytes: int, leaf: Any):
        self.dtype = dtype
        self.nbytes = nbytes
        self.leaf = leaf

    def data_ptr(self) -> int:
        return 16

    def ptr_range(self) -> int:
        return self.nbytes

    def __repr__(self) -> str:
        return f"ArgArray(*{self.dtype})"


def binder_dtype(t: str) -> BinderDtype:
    """The tl.dtype of a Triton type name ("fp32", "i32"): tl.dtype names integers "int32", "uint8", "int1"."""
    return BinderDtype(("int" if t[0] == "i" else "uint") + t[1:] if t[0] in "iu" else t)


def triton_dtype(dtype: Any) -> str:
    t = _triton_dtype(dtype)
    if t is None:
        raise CompileError(f"arrays of {np.dtype(dtype).name} have no Triton type")
    return t


# ------------------------------------------------------- specialization

@dataclass
class Specialization:
    """The result of binding a call for one target."""
    bound: dict[str, Any]         # parameter -> the value the binder saw (defaults applied)
    sigvals: list[Any]            # per parameter: its Triton type (nested for tuples) or "constexpr"
    attrvals: list[Any]           # per parameter: the specialization key ("D", "", values)
    options: dict[str, Any]       # the keywords that are not parameters

    def signature(self, fn: Any) -> dict[str, Any]:
        return {p.name: v for p, v in zip(fn.params, self.sigvals)}

    def constexprs(self) -> dict[tuple, Any]:
        from triton._utils import find_paths_if, get_iterable_path
        paths = find_paths_if(self.sigvals, lambda _, v: v == "constexpr")
        values = list(self.bound.values())
        return {p: get_iterable_path(values, p) for p in paths}

    def attrs(self, backend: Any) -> dict[tuple, Any]:
        from triton._utils import find_paths_if, get_iterable_path
        paths = find_paths_if(self.attrvals, lambda _, x: isinstance(x, str))
        return {p: backend.parse_attr(get_iterable_path(self.attrvals, p)) for p in paths}


def specialize(fn: Any, t: Target, values: dict[str, Any], options: dict[str, Any]) -> Specialization:
    """Runs Triton's binder for target t on the call's values (arrays as ArgArray)."""
    try:
        with native_specialize_without_torch():
            bound, spec, rest = binder(fn, t)(**values, **options)
    except TypeError as e:
        raise TypeError(f"kernel '{fn.__name__}': {e}") from None
    return Specialization(bound=bound, sigvals=[s[0] for s in spec], attrvals=[s[1] for s in spec], options=rest)


# ------------------------------------------------------------ launch layout

@dataclass(frozen=True)
class Leaf:
    """One launch parameter: a value (an ArgArray, a scalar) and its Triton type."""
    name: str
    type: str
    value: Any


_TD = re.compile(r"tensordesc<([^\[>]*)\[([^\]]*)\]")


@dataclass(frozen=True)
class TmaArg:
    """A host tensor descriptor Triton lowered to TMA, for one launch parameter (nvTmaDesc): the descriptor as
    the binder saw it (its base an ArgArray) and its entry of the compiled metadata's tensordesc_meta."""
    desc: Any
    meta: dict


def launch_leaves(fn: Any, spec: Specialization, tensordesc_meta: Optional[Sequence[Any]]) -> list[Leaf]:
    """The launch parameters in order: tuples flattened, constexprs removed, host
    tensor descriptors expanded as this target's launcher expands them (a
    CUtensorMap + shape + strides where Triton lowered them to TMA, else base,
    shape, strides, padding, then from Triton 3.7 round_f32_to_tf32, then shape,
    strides). Triton 3.6 passes an fp4-padded descriptor's shape with the
    innermost dimension doubled (in fp4 values)."""
    out: list[Leaf] = []
    descs = iter(tensordesc_meta or [])
    have_meta = bool(tensordesc_meta)

    def walk(name: str, sig: Any, val: Any) -> None:
        if isinstance(sig, tuple):
            for i, (s, v) in enumerate(zip(sig, val)):
                walk(f"{name}_{i}", s, v)
            return
        if sig == "constexpr":
            return
        if isinstance(sig, str) and sig.startswith("tensordesc"):
            m = _TD.match(sig)
            meta = next(descs) if have_meta else None
            shape, strides = list(val.shape), list(val.strides)
            if meta is None:
                out.append(Leaf(f"{name}_base", "*" + m.group(1), val.base))
                out.extend(Leaf(f"{name}_shape{i}", "i64", int(s)) for i, s in enumerate(shape))
                out.extend(Leaf(f"{name}_stride{i}", "i64", int(s)) for i, s in enumerate(strides))
                out.append(Leaf(f"{name}_nan", "i1", val.padding == "nan"))
                if TRITON_RELEASE >= (3, 7):   # the kernel takes round_f32_to_tf32 too
                    out.append(Leaf(f"{name}_tf32", "i1", bool(getattr(val, "round_f32_to_tf32", False))))
            else:
                out.append(Leaf(f"{name}_tma", "nvTmaDesc", TmaArg(val, meta)))
                if meta.get("fp4_padded"):
                    shape[-1] *= 2
            out.extend(Leaf(f"{name}_dim{i}", "i32", int(s)) for i, s in enumerate(shape))
            out.extend(Leaf(f"{name}_dstride{i}", "i64", int(s)) for i, s in enumerate(strides))
            return
        typ = sig
        if typ.startswith("*k"):
            typ = "*" + typ[2:]        # const pointers are pointers at launch
        if typ in ("*u1", "u1") and isinstance(val, ArgArray):
            typ = "*i1"                # bool arrays: 1-byte elements
        out.append(Leaf(name, typ, val))

    for p, sig, val in zip(fn.params, spec.sigvals, spec.bound.values()):
        walk(p.name, sig, val)
    return out


def signature_text(leaves: Sequence[Leaf]) -> str:
    return ",".join(f"{leaf.name}:{leaf.type}" for leaf in leaves)


# ---------------------------------------------------------------- compiling

def source_key(fn: Any) -> str:
    """fn.cache_key (a digest of fn's source and of what it calls), made under the front end's lock: Triton
    parses the sources the first time it is asked."""
    with FRONT_END:
        return fn.cache_key


def _canonical(v: Any) -> Any:
    """A stable, hashable description of a constexpr or option value."""
    from triton.runtime.jit import JITCallable
    if isinstance(v, JITCallable):
        return ("jit", source_key(v))
    if isinstance(v, tl.constexpr):
        return ("constexpr", _canonical(v.value))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_canonical(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted((str(k), _canonical(x)) for k, x in v.items())))
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return (type(v).__name__, str(v))


def _extern_libs_digest(libs: Any) -> Any:
    """Triton hashes extern libraries by content: so does the key."""
    if not libs:
        return None
    out = []
    for name, path in sorted(dict(libs).items()):
        try:
            out.append((name, hashlib.sha256(_cache.read_regular(path, 1 << 30)).hexdigest()))
        except FileNotFoundError:
            out.append((name, str(path)))   # Triton reports the missing library
        except OSError as e:
            # a FIFO or device would hang or exhaust Triton's own read
            raise ValueError(f"extern_libs '{name}': {e}") from None
    return tuple(out)


def compile_key(fn: Any, t: Target, signature: dict, constexprs: dict, attrs: dict, options: dict) -> str:
    """sha256 over what decides the compiled code: the source (with what it
    calls and the globals it reads), the specialization, the options, the
    target, and the Triton and trident versions."""
    try:
        from triton._C.libtriton import get_cache_invalidating_env_vars
        env = sorted(get_cache_invalidating_env_vars().items())
    except Exception:  # pragma: no cover
        env = []
    opts = {k: v for k, v in options.items() if k != "extern_libs"}
    parts = [
        "trident-jax-1", TRITON_VERSION, trident_version(), source_key(fn), "gluon" if is_gluon(fn) else "triton",
        repr(_canonical(signature)), repr(sorted((k, _canonical(v)) for k, v in constexprs.items())),
        repr(sorted((k, _canonical(v)) for k, v in attrs.items())),
        repr(sorted((k, _canonical(v)) for k, v in opts.items())),
        repr(_extern_libs_digest(options.get("extern_libs"))),
        t.backend, repr(t.arch), str(t.warp_size), repr(env),
        _pdl.MARK if _pdl.wanted(t, options) else "",   # the patch's version, as in Triton's key
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


@dataclass
class Compiled:
    """One kernel compiled for one target: the trident kernel and its metadata."""
    kernel: Kernel
    metadata: dict
    key: str


_compiled: LRU[Any, Compiled] = LRU(512)     # compile key -> the kernel (the disk cache keeps the rest)


def _dump(fn: Any, key: str, ck: Any) -> None:
    """JAX_TRITON_DUMP_DIR (jax-triton's variable): every stage of each compilation."""
    base = os.environ.get("JAX_TRITON_DUMP_DIR")
    if not base:
        return
    d = os.path.join(base, key[:16])
    os.makedirs(d, exist_ok=True)
    for name, path in ck.metadata_group.items():
        if not name.startswith("__grp"):
            shutil.copy(path, os.path.join(d, name))


def spec_key(fn: Any, t: Target, spec: Specialization, options: dict[str, Any]) -> str:
    """The compile key of fn's specialization for t with these options (the grid is not part of it)."""
    backend = backend_of(t)
    return compile_key(fn, t, spec.signature(fn), spec.constexprs(), spec.attrs(backend), options)


def compile_for(fn: Any, t: Target, spec: Specialization, options: dict[str, Any],
                key: Optional[str] = None) -> Compiled:
    """fn compiled for t (memory, then disk cache, then Triton); key: spec_key's, when the caller has it."""
    backend = backend_of(t)
    signature = spec.signature(fn)
    constexprs = spec.constexprs()
    attrs = spec.attrs(backend)
    if key is None:
        key = compile_key(fn, t, signature, constexprs, attrs, options)
    hit = _compiled.get(key)
    if hit is not None:
        return hit
    identity = _identity(fn, t, options)
    kept = _cached(key, identity)
    if kept is not None:
        return _compiled.put(key, kept)
    src_cls = SerialGluonASTSource if is_gluon(fn) else SerialASTSource
    src = src_cls(fn, signature, constexprs, attrs)
    topts = dict(options)
    pdl = _pdl.wanted(t, options)
    if pdl:   # launched with PDL, waiting for what runs before it at its entry (pdl.py)
        topts["launch_pdl"] = True
        src.patch_mark = _pdl.MARK
    triton_key_once()

    def run() -> Any:
        with ptx_patched(_pdl.patch_ptx) if pdl else contextlib.nullcontext():
            return triton.compile(src, target=t.gpu_target(), options=dict(topts))

    with compiling_for(t), LANGUAGE.shared():
        ck, meta_text, meta, images = _triton_cache.compile_checked(run, src, t.gpu_target(), topts,
                                                                    fn.__name__, _IMAGES.get(t.backend, ()))
    if pdl:
        _check_pdl(ck, fn.__name__, t)
    _dump(fn, key, ck)
    sig = signature_text(launch_leaves(fn, spec, meta.get("tensordesc_meta")))
    kernels = [Kernel(image, name=meta["name"], signature=sig, metadata=meta_text, format=_FORMAT_OF_EXT[ext],
                      target=t.trident_target) for ext, image in images]
    if not kernels:
        raise CompileError(f"kernel '{fn.__name__}' for {t}: Triton produced no image trident loads "
                           f"({sorted(ck.metadata_group)})")
    k = Kernel.combine(kernels) if len(kernels) > 1 else kernels[0]
    _cache.store_kernel(key, dict(identity, triton_hash=str(meta.get("hash", ""))), k.bundle())
    return _compiled.put(key, Compiled(k, meta, key))


def _check_pdl(ck: Any, name: str, t: Target) -> None:
    """A kernel launched with PDL must wait at its entry: the PTX of the compilation Triton gave says so, or the
    compilation is refused (another stages hook replaced trident's while it compiled, or a damaged cache) and its
    entry in Triton's cache forgotten."""
    path = next((p for n, p in ck.metadata_group.items() if n.endswith(".ptx")), None)
    try:
        ptx = _cache.read_regular(path, 1 << 30).decode("utf-8", "replace") if path else ""
    except OSError:
        ptx = ""
    if not _pdl.is_patched(ptx):
        # not served again: once the hook is trident's again, Triton compiles it again
        if path:
            _triton_cache.forget_entry(path, name, "compiled for PDL without the wait at its entry")
        raise CompileError(f"kernel '{name}' for {t}: compiled for programmatic dependent launch, but its PTX "
                           f"({path or 'none in the compilation'}) does not wait at its entry: Triton's "
                           f"add_stages_inspection_hook was replaced while it compiled? Set {_pdl.ENV}=0 to compile "
                           f"without PDL")


def _identity(fn: Any, t: Target, options: dict[str, Any]) -> dict[str, str]:
    """What a disk cache entry of fn compiled for t must say it holds, beside its key: the kernel's name, Triton's
    key of its source, the target and a digest of the options."""
    opts = repr(sorted((k, _canonical(v)) for k, v in options.items() if k != "extern_libs"))
    return {"kernel": fn.__name__, "source": source_key(fn), "target": t.trident_target,
            "options": hashlib.sha256(opts.encode()).hexdigest()}


def _cached(key: str, identity: dict[str, str]) -> Optional[Compiled]:
    """The disk cache's kernel under key when it is the one identity names (its bundle's kernel too, with the hash
    Triton gave the compilation); None (compile again) otherwise."""
    kept = _cache.load_kernel(key, identity)
    if kept is None:
        return None
    data, held = kept
    try:
        k = Kernel(data)
    except Exception:
        return None   # a damaged entry: compile again
    meta = k.targets[0].metadata if k.targets else {}
    if k.name != identity["kernel"] or meta.get("name") != identity["kernel"] or \
            str(meta.get("hash", "")) != held.get("triton_hash"):
        _cache.warn_once(f"ignoring the cache entry of key {key}: its bundle holds kernel {k.name!r} "
                         f"(Triton hash {meta.get('hash')!r}), not what its identity says; compiling again")
        return None
    return Compiled(k, meta, key)


def compile_ttir_inplace(fn: Any, t: Target, spec: Specialization, options: dict[str, Any],
                         key: Optional[str] = None) -> Compiled:
    """What a kernel's cache miss runs (jax-triton's name for its compile step, which jax-triton's tests wrap
    to count compilations): compile_for, i.e. trident's memory and disk caches, then Triton."""
    return compile_for(fn, t, spec, options, key)


_function_lock = threading.Lock()


class TritonFunction:
    """A @triton.jit function's kernel cache, as jax-triton names it: TritonFunction(kernel) is the one object
    of that function (kept on it, so it lives as long as the function), and _kernel_cache maps the compile key
    of each specialization this function object was lowered with (target, signature, constexprs, attributes,
    options; not the grid) to its kernel. The kernels themselves live in the process-wide cache (compile_for),
    so an equal function defined again shares their compilations while its own TritonFunction starts empty.
    get_or_create_kernel is what each lowering calls."""

    fn: Any
    _keys: "collections.OrderedDict[str, None]"

    def __new__(cls, kernel: Any) -> "TritonFunction":
        fn = jit_function(kernel)
        with _function_lock:
            st = _state(fn)
            tf = st.get("function")
            if tf is None:
                tf = object.__new__(cls)
                tf.fn = fn
                tf._keys = collections.OrderedDict()
                st["function"] = tf
        return tf

    @property
    def _kernel_cache(self) -> "types.MappingProxyType[str, Compiled]":
        """This function's kernels still in the process-wide cache, by compile key (read-only: a snapshot, so a
        write would change nothing; clear() forgets them)."""
        with _function_lock:
            keys = list(self._keys)
        found = ((k, _compiled.get(k)) for k in keys)
        return types.MappingProxyType({k: c for k, c in found if c is not None})

    def clear(self) -> None:
        """Forget this function's kernels: its next lowering of each specialization goes through
        compile_ttir_inplace again (which serves it from trident's caches where they hold it)."""
        with _function_lock:
            self._keys.clear()

    def get_or_create_kernel(self, t: Target, spec: Specialization, options: dict[str, Any]) -> Compiled:
        key = spec_key(self.fn, t, spec, options)
        with _function_lock:
            known = key in self._keys
        hit = _compiled.get(key) if known else None
        if hit is not None:
            return hit
        # looked up on the package at each miss, where jax-triton's tests wrap it
        compiled = sys.modules[__package__].compile_ttir_inplace(self.fn, t, spec, options, key)
        with _function_lock:
            self._keys[key] = None
            self._keys.move_to_end(key)
            while len(self._keys) > _compiled.capacity:
                self._keys.popitem(last=False)
        return compiled


def host_kernel(fn: Any, signature: str) -> Kernel:
    """The registered host twin of fn as a trident kernel with the launch signature, which libtrident checks
    against the one the image declares."""
    twin = _host_twins[fn]
    key = ("host", twin.path, twin.entry, signature)
    hit = _compiled.get(key)
    if hit is None:
        try:
            k = Kernel(twin.path, name=twin.entry, signature=signature)
        except TridentError as e:
            hint = ""
            if len([p for p in signature.split(",") if p]) < len(twin.signature.split(",")):
                hint = (" (Triton compiles an integer argument equal to 1 into the kernel, and its launch then has "
                        "one parameter fewer: list it in do_not_specialize)")
            raise CompileError(f"kernel '{fn.__name__}': its host twin {twin.path} does not take the kernel's "
                               f"launch parameters: {e.message}{hint}") from None
        hit = _compiled.put(key, Compiled(k, k.targets[0].metadata, repr(key)))
    return hit.kernel


# combined bundles by their parts: each entry keeps its parts alive, so their ids stay theirs
_combined: LRU[tuple, tuple[list[Kernel], Kernel]] = LRU(256)


def combine(kernels: Iterable[Kernel], signature: str, name: str) -> Kernel:
    """One bundle of every target's image (the same object for the same parts, so
    that kernel_call's bundle bytes are made once)."""
    ks = list(kernels)
    if len(ks) == 1:
        return ks[0]
    key = (tuple(id(k) for k in ks), signature, name)
    hit = _combined.get(key)
    if hit is None:
        hit = _combined.put(key, (ks, Kernel.combine(ks, name=name, signature=signature)))
    return hit[1]
