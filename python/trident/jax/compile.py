"""Compiling a @triton.jit or Gluon kernel for every target a JAX computation
may run on, with the installed Triton, into one trident bundle.

Binding and specialization are Triton's own: the binder Triton generates for
a kernel (triton.runtime.jit.create_function_from_signature) sees arrays as
objects with a dtype and a 16-byte aligned address, like the tensors it sees
at a launch, so defaults, annotations, do_not_specialize, the value 1,
divisibility, tuples, callables and strings behave as in Triton. Each target
is compiled with triton.compile(ASTSource(...), target=GPUTarget(...)),
turned into a trident kernel (its cubin/PTX or HSACO, its metadata and the
launch signature) and kept in memory and on disk (cache.py); the targets of
one call are combined into one bundle, and each device runs its own image.

Targets: every distinct architecture among the devices of JAX's default
backend, as trident sees them (trident runs the kernel), or the ones set with
`targets(...)`. On CPU-only JAX there is no GPU to run on: a kernel runs there
only through a host twin (a native implementation registered with
`host_twin`), and `targets` still compiles for GPU targets (sm90, gfx942).
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence

import jax
import numpy as np
import triton
import triton.language as tl
from triton.backends.compiler import BaseBackend, GPUTarget
from triton.runtime.jit import JITFunction, create_function_from_signature

from .. import Kernel
from .. import version as trident_version
from . import cache as _cache
from ._call import DTYPE_TO_TRITON

try:  # Gluon (Triton >= 3.4)
    from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction
except ImportError:  # pragma: no cover - older Triton
    GluonASTSource = GluonJITFunction = None

TRITON_VERSION = triton.__version__
# (major, minor) of the installed release: the launch layout of host tensor descriptors follows it
TRITON_RELEASE = tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in (TRITON_VERSION.split(".") + ["0"])[:2])
if TRITON_RELEASE < (3, 6):
    raise ImportError(f"trident.jax needs Triton 3.6 or newer (CI tests it with 3.6, 3.7, 3.8 and 3.9); "
                      f"Triton {TRITON_VERSION} is installed: pip install 'triton>=3.6'")

# the binary formats of a compiled kernel, best first, per Triton backend
_IMAGES = {"cuda": ("cubin", "ptx"), "hip": ("hsaco",), "xpu": ("zebin", "spv")}
_FORMAT_OF_EXT = {"cubin": "cubin", "ptx": "ptx", "hsaco": "hsaco", "spv": "spirv", "zebin": "zebin"}


class CompileError(ValueError):
    """A kernel that cannot be compiled or bound for a target."""


# ----------------------------------------------------------------- targets

@dataclass(frozen=True)
class Target:
    """One compile target: a Triton backend and architecture, or the host (a registered twin)."""
    backend: str          # "cuda", "hip", "xpu" or "host"
    arch: Any             # 90, "gfx942", ...; "" for the host
    warp_size: int

    @property
    def name(self) -> str:
        if self.backend == "cuda":
            return f"sm{self.arch}"
        if self.backend == "host":
            return "host"
        return str(self.arch)

    @property
    def trident_target(self) -> str:
        """trident's "<backend>:<arch>" for a raw image."""
        return f"{self.backend}:{self.name}"

    def gpu_target(self) -> GPUTarget:
        return GPUTarget(self.backend, self.arch, self.warp_size)

    def __str__(self) -> str:
        return self.name


def target(spec: Any) -> Target:
    """A Target from "sm90", "cuda:sm90", 90 (a CUDA compute capability), "gfx942",
    "hip:gfx942", "xpu:<arch>", "host", a triton GPUTarget or a Target."""
    if isinstance(spec, Target):
        return spec
    if isinstance(spec, GPUTarget):
        return Target(spec.backend, spec.arch, spec.warp_size)
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        return Target("cuda", int(spec), 32)
    if isinstance(spec, str):
        s = spec.strip()
        backend, _, arch = s.rpartition(":")
        if s == "host":
            return Target("host", "", 1)
        m = re.fullmatch(r"sm_?(\d+)a?", arch)
        if backend in ("", "cuda") and (m or (backend == "cuda" and arch.isdigit())):
            return Target("cuda", int(m.group(1) if m else arch), 32)
        m = re.fullmatch(r"gfx([0-9a-f]+)(:.*)?", arch)
        if backend in ("", "hip", "rocm") and m:
            # RDNA (gfx10 and newer) runs wave32, CDNA wave64
            return Target("hip", "gfx" + m.group(1), 32 if len(m.group(1)) >= 4 and m.group(1)[:2] >= "10" else 64)
        if backend == "xpu" and arch:
            return Target("xpu", arch, 32)
    raise CompileError(f"target {spec!r}: expected sm<cc> (sm90), cuda:sm<cc>, gfx<arch> (gfx942), hip:gfx<arch>, "
                       f"xpu:<arch> or host")


_override: contextvars.ContextVar[Optional[tuple[Target, ...]]] = contextvars.ContextVar("trident_targets",
                                                                                        default=None)


@contextlib.contextmanager
def targets(*specs: Any):
    """Compile for these targets instead of the devices JAX may run on:

        with trident.jax.targets("sm90", "gfx942"):
            ...   # triton_call compiles for both

    Used for ahead-of-time compilation and on machines without the GPU."""
    tok = _override.set(tuple(target(s) for s in specs))
    try:
        yield
    finally:
        _override.reset(tok)


def _jax_gpu_platform(dev: Any) -> str:
    p = str(getattr(dev, "platform", "")).lower()
    if p in ("cuda", "rocm"):
        return p
    version = str(getattr(getattr(dev, "client", None), "platform_version", "")).lower()
    return "rocm" if "rocm" in version or "hip" in version else "cuda"


def _trident_devices() -> list[dict]:
    from .. import devices
    try:
        return devices()
    except Exception:  # a broken driver must not stop compilation for the others
        return []


def target_of_device(d: Any, tri: Optional[list[dict]] = None) -> Target:
    """The target of one JAX GPU device, as trident sees it (else its compute capability)."""
    tri = _trident_devices() if tri is None else tri
    backend = "cuda" if _jax_gpu_platform(d) == "cuda" else "hip"
    ordinal = getattr(d, "local_hardware_id", None)
    ordinal = d.id if ordinal is None else ordinal
    for td in tri:
        if td["backend"] == backend and td["ordinal"] == ordinal and td["arch"]:
            t = target(f"{backend}:{td['arch']}")
            if backend == "hip" and td.get("warp_size"):
                t = Target("hip", t.arch, int(td["warp_size"]))
            return t
    if backend == "cuda" and getattr(d, "compute_capability", None):
        return Target("cuda", int(str(d.compute_capability).replace(".", "")), 32)
    raise CompileError(f"JAX device {d} has no architecture trident knows (see `trident devices`); set the "
                       f"targets with trident.jax.targets(...)")


def device_targets(compute_capability: Optional[int] = None) -> list[Target]:
    """The distinct targets among the devices of JAX's default backend (none on CPU)."""
    ov = _override.get()
    if ov is not None:
        return list(ov)
    devs = jax.devices()
    if not devs or devs[0].platform == "cpu":
        return []
    tri = _trident_devices()
    out: list[Target] = []
    for d in devs:
        t = target_of_device(d, tri)
        if t.backend == "cuda" and compute_capability is not None:
            t = Target("cuda", int(compute_capability), 32)
        if t not in out:
            out.append(t)
    return out


def get_compute_capability(device: int = 0) -> int:
    """The compute capability of CUDA device `device` as trident sees it (90 for sm90)."""
    cuda = [d for d in _trident_devices() if d["backend"] == "cuda"]
    for d in cuda:
        if d["ordinal"] == device:
            return int(d["arch"][2:].rstrip("a"))
    devs = [d for d in jax.devices() if d.platform != "cpu" and getattr(d, "compute_capability", None)]
    if device < len(devs):
        return int(str(devs[device].compute_capability).replace(".", ""))
    raise CompileError(f"no CUDA device {device} (trident sees {len(cuda)})")


_host_twins: dict[Any, tuple[str, Optional[str]]] = {}


def host_twin(kernel: Any, path: "str | os.PathLike", name: Optional[str] = None) -> None:
    """Registers a native host implementation (a trident host kernel .so, see
    examples/host/) of a Triton kernel: on CPU, triton_call runs it. It takes
    the same launch parameters as the Triton kernel (constexprs removed); its
    entry symbol is `name`, else the kernel's name (which it must be when the
    call also compiles GPU images: one bundle holds one kernel name)."""
    _host_twins[jit_function(kernel)] = (os.fspath(path), name)


def host_twin_of(fn: Any) -> Optional[tuple[str, Optional[str]]]:
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


class _NoTorchHipBackend:
    """Triton's HIPBackend, except that the buffer-ops range check of a tensor
    uses its ptr_range() without importing torch (Triton 3.6 imports torch there)."""

    def __init__(self, backend: Any):
        self._b = backend

    def __getattr__(self, name: str) -> Any:
        return getattr(self._b, name)

    def get_tensor_specialization(self, arg: Any, **kwargs: Any) -> str:
        ret = BaseBackend.get_tensor_specialization(arg, **kwargs)
        try:
            from triton import knobs
            use = knobs.amd.use_buffer_ops
        except Exception:  # pragma: no cover
            use = False
        if use and hasattr(arg, "ptr_range") and arg.ptr_range() <= 2**31 - 1:
            ret += "S"
        return ret


_backends: dict[Target, Any] = {}


def backend_of(t: Target) -> Any:
    b = _backends.get(t)
    if b is None:
        try:
            b = triton.compiler.make_backend(t.gpu_target())
        except Exception as e:
            raise CompileError(f"target {t}: this Triton ({TRITON_VERSION}) has no backend for it: {e}") from e
        if t.backend == "hip":
            b = _NoTorchHipBackend(b)
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


def triton_dtype(dtype: Any) -> str:
    t = DTYPE_TO_TRITON.get(np.dtype(dtype))
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

def _canonical(v: Any) -> Any:
    """A stable, hashable description of a constexpr or option value."""
    from triton.runtime.jit import JITCallable
    if isinstance(v, JITCallable):
        return ("jit", v.cache_key)
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
        "trident-jax-1", TRITON_VERSION, trident_version(), fn.cache_key, "gluon" if is_gluon(fn) else "triton",
        repr(_canonical(signature)), repr(sorted((k, _canonical(v)) for k, v in constexprs.items())),
        repr(sorted((k, _canonical(v)) for k, v in attrs.items())),
        repr(sorted((k, _canonical(v)) for k, v in opts.items())),
        repr(_extern_libs_digest(options.get("extern_libs"))),
        t.backend, repr(t.arch), str(t.warp_size), repr(env),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


@dataclass
class Compiled:
    """One kernel compiled for one target: the trident kernel and its metadata."""
    kernel: Kernel
    metadata: dict
    key: str


_compiled: dict[str, Compiled] = {}


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


def compile_for(fn: Any, t: Target, spec: Specialization, options: dict[str, Any]) -> Compiled:
    """fn compiled for t (memory, then disk cache, then Triton)."""
    backend = backend_of(t)
    signature = spec.signature(fn)
    constexprs = spec.constexprs()
    attrs = spec.attrs(backend)
    key = compile_key(fn, t, signature, constexprs, attrs, options)
    hit = _compiled.get(key)
    if hit is not None:
        return hit
    data = _cache.load_kernel(key)
    if data is not None:
        try:
            k = Kernel(data)
            c = Compiled(k, k.targets[0].metadata, key)
            _compiled[key] = c
            return c
        except Exception:
            pass  # a damaged entry: compile again
    src_cls = GluonASTSource if is_gluon(fn) else triton.compiler.ASTSource
    src = src_cls(fn, signature, constexprs, attrs)
    ck = triton.compile(src, target=t.gpu_target(), options=dict(options))
    _dump(fn, key, ck)
    json_path = next(p for n, p in ck.metadata_group.items() if n.endswith(".json") and not n.startswith("__grp"))
    with open(json_path) as f:
        meta_text = f.read()
    meta = json.loads(meta_text)
    sig = signature_text(launch_leaves(fn, spec, meta.get("tensordesc_meta")))
    kernels = []
    for ext in _IMAGES.get(t.backend, ()):
        path = ck.metadata_group.get(f"{meta['name']}.{ext}")
        if path is None:
            continue
        with open(path, "rb") as f:
            image = f.read()
        kernels.append(Kernel(image, name=meta["name"], signature=sig, metadata=meta_text,
                              format=_FORMAT_OF_EXT[ext], target=t.trident_target))
    if not kernels:
        raise CompileError(f"kernel '{fn.__name__}' for {t}: Triton produced no image trident loads "
                           f"({sorted(ck.metadata_group)})")
    k = Kernel.combine(kernels) if len(kernels) > 1 else kernels[0]
    _cache.store_kernel(key, k.bundle())
    c = Compiled(k, meta, key)
    _compiled[key] = c
    return c


def host_kernel(fn: Any, signature: str) -> Kernel:
    """The registered host twin of fn as a trident kernel with the launch signature."""
    path, name = _host_twins[fn]
    key = ("host", path, name, signature)
    hit = _compiled.get(key)  # type: ignore[arg-type]
    if hit is None:
        k = Kernel(path, name=name or fn.__name__, signature=signature)
        hit = Compiled(k, k.targets[0].metadata, repr(key))
        _compiled[key] = hit  # type: ignore[index]
    return hit.kernel


_combined: dict[tuple, tuple[list[Kernel], Kernel]] = {}


def combine(kernels: Iterable[Kernel], signature: str, name: str) -> Kernel:
    """One bundle of every target's image (the same object for the same parts, so
    that kernel_call's bundle bytes are made once)."""
    ks = list(kernels)
    if len(ks) == 1:
        return ks[0]
    key = (tuple(id(k) for k in ks), signature, name)
    hit = _combined.get(key)
    if hit is None or any(a is not b for a, b in zip(hit[0], ks)):
        hit = (ks, Kernel.combine(ks, name=name, signature=signature))   # the parts stay alive with it
        _combined[key] = hit
    return hit[1]
