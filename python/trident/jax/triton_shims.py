# SPDX-License-Identifier: Apache-2.0
"""What trident.jax changes in Triton's internals, or works around there: the module to audit on each Triton
release (the whole Python suite runs under the newest and the oldest supported release, and
tests/test_triton_release.py under those between: scripts/triton-releases.sh). Each shim reaches past
Triton's public API, so a release may move or change what it relies on; the releases named are those it was
written or checked against.

- Gluon's source and function classes, from the private triton.experimental.gluon._runtime (3.4 and later;
  None where a build has no Gluon).
- NoTorchHipBackend: wraps the HIP backend the binder asks for tensor specializations, because its
  buffer-ops range check (HIPBackend.is_within_2gb) imports torch (3.6 .. 3.9); it asks the array's
  ptr_range() instead.
- BinderDtype: a tl.dtype with torch's is_floating_point, which Triton's TensorDescriptor asserts for
  padding="nan" (triton/tools/tensor_descriptor.py, 3.6 .. 3.9), since the binder sees tl.dtypes, not torch's.
- native_specialize_without_torch: hides torch from the first run of Triton's native specialization, which
  imports it only to recognise torch.Tensor (3.6, 3.7).
- FRONT_END, SerialASTSource, SerialGluonASTSource: ASTSource/GluonASTSource whose make_ir holds one lock,
  because CPython before 3.13 cannot parse on two threads at once (any Triton release; CPython gh-106905).
- compiling_for: replaces the `driver` that triton.language.target_info and .semantic imported from
  triton.runtime (3.6 .. 3.9) with a view that, while trident compiles, answers the target being compiled
  for and refuses everything else, so compiling never initialises Triton's runtime driver (torch, its C
  utilities, the GPU).
- triton_key_once: triton.runtime.cache.triton_key, made by one thread (3.6 .. 3.9).
- ptx_patched: passes the PTX a compilation on this thread makes through a function before ptxas, through
  triton.knobs.runtime.add_stages_inspection_hook (3.6 .. 3.9; installed only while trident compiles with it,
  chained to a hook already set), and marks the source (its hash(), hence Triton's cache key: 3.6 calls the
  hook for the pipeline but not for the key) so that Triton's cache keeps the patched compilation apart.

compile.py holds the rest (binding, specialization, the compile key and the caches).
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import sys
import threading
from typing import Any, Callable, Optional

import triton
import triton.language as tl
from triton.backends.compiler import BaseBackend

from .platforms import CompileError, Target

try:  # Gluon (Triton >= 3.4)
    from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction
except ImportError:  # pragma: no cover - older Triton
    GluonASTSource = GluonJITFunction = None


class NoTorchHipBackend:
    """Triton's HIPBackend, except that the buffer-ops range check of a tensor
    uses its ptr_range() without importing torch (HIPBackend.is_within_2gb imports torch)."""

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


class BinderDtype(tl.dtype):
    """A Triton dtype with torch's is_floating_point, which Triton's TensorDescriptor checks for padding="nan"."""

    @property
    def is_floating_point(self) -> bool:
        return self.is_floating()


_native_ready = False
_native_lock = threading.Lock()


@contextlib.contextmanager
def native_specialize_without_torch():
    """Triton's native specialization (native_specialize_impl, behind the binder) of 3.6 and 3.7 imports torch the
    first time it runs, only to recognise torch.Tensor quickly: seconds of a first call where torch is installed,
    for nothing, since trident's arguments are never torch tensors. So its first run sees torch as not installed, unless torch
    is already imported. Triton falls back to the data_ptr() path for torch tensors then, which gives the same
    specialization (a program that uses torch with Triton directly later in the process loses only that fast path)."""
    global _native_ready
    if _native_ready:
        yield
        return
    with _native_lock:
        refuse = None if "torch" in sys.modules else _RefuseTorch()
        if refuse is not None:
            sys.meta_path.insert(0, refuse)
        try:
            yield
        finally:
            if refuse is not None:
                sys.meta_path.remove(refuse)
            _native_ready = True


class _RefuseTorch:
    """A meta path finder under which `import torch` fails as if torch were not installed."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named '{name}' (trident.jax: not while Triton specializes)",
                                      name=name)
        return None


# Triton's front end parses Python source (ast.parse) when it first hashes a function and in every make_ir.
# CPython before 3.13 keeps the AST constructor's recursion depth in state its threads share; on 3.11 two
# threads parsing at once may fail with "SystemError: AST constructor recursion depth mismatch" (CPython
# gh-106905; seen in CI compiling an autotuner's configs side by side). What parses holds this lock; the
# backend passes and ptxas, where compilation spends its time, still run side by side.
FRONT_END = threading.RLock()


def _serial(src_cls: Any) -> Any:
    """src_cls (ASTSource, GluonASTSource) whose make_ir, the step that parses the source, holds FRONT_END, and
    whose hash() names the patch ptx_patched applies (its `patch_mark`, None for none)."""
    def make_ir(self: Any, *args: Any, **kwargs: Any) -> Any:
        with FRONT_END:
            return src_cls.make_ir(self, *args, **kwargs)

    def hash(self: Any) -> str:
        h = src_cls.hash(self)
        return hashlib.sha256(f"{h}-{self.patch_mark}".encode()).hexdigest() if self.patch_mark else h
    return type(src_cls.__name__, (src_cls,), {"make_ir": make_ir, "hash": hash, "patch_mark": None,
                                               "__doc__": _serial.__doc__})


SerialASTSource = _serial(triton.compiler.ASTSource)
SerialGluonASTSource = _serial(GluonASTSource) if GluonASTSource is not None else None


class _TargetDriver:
    """Triton's runtime driver as the code that runs while trident compiles sees it: the target being compiled
    for is the current one (tl.target_info, the semantic's TMA check ask this), and nothing else is there."""

    def __init__(self, t: Target):
        self._target = t

    def get_current_target(self) -> Any:
        return self._target.gpu_target()

    def __getattr__(self, name: str) -> Any:
        raise CompileError(f"target {self._target}: the kernel asks Triton's runtime driver for '{name}' while it "
                           f"compiles; trident.jax compiles without a device (its lowering may run on a machine "
                           f"without the GPU)")


class _DriverView:
    """Stands for triton.runtime.driver in the modules of Triton's front end that ask it for the current target
    while compiling (triton.language.target_info, .semantic): inside compiling_for(t) on this thread the driver
    is _TargetDriver(t); elsewhere it is Triton's own. So trident never initialises Triton's runtime driver,
    which imports torch where it is installed, builds its C utilities and asks the GPU for its current device,
    and a kernel compiled for sm90 on another machine sees sm90."""

    def __init__(self, real: Any):
        self._real = real

    @property
    def active(self) -> Any:
        t = getattr(_compiling, "target", None)
        return self._real.active if t is None else _TargetDriver(t)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


_compiling = threading.local()
_view_lock = threading.Lock()


def _install_driver_view() -> None:
    import importlib
    with _view_lock:
        for name in ("triton.language.target_info", "triton.language.semantic"):
            try:
                mod = importlib.import_module(name)
            except ImportError:  # pragma: no cover - a release without the module
                continue
            real = getattr(mod, "driver", None)
            if real is not None and not isinstance(real, _DriverView):
                mod.driver = _DriverView(real)


_key_lock = threading.Lock()


def triton_key_once() -> None:
    """Triton's key of its own installation (a hash of its library and sources: about a second), made once per
    process and by one thread: Triton caches it, but threads compiling side by side would each make it."""
    with _key_lock:
        try:
            from triton.runtime.cache import triton_key
        except ImportError:  # pragma: no cover - a release that moved it
            return
        triton_key()


@contextlib.contextmanager
def compiling_for(t: Target):
    """Triton's front end sees t as the current target on this thread while the block runs (see _DriverView)."""
    _install_driver_view()
    prev = getattr(_compiling, "target", None)
    _compiling.target = t
    try:
        yield
    finally:
        _compiling.target = prev


# ------------------------------------------------------------- a PTX patch, through Triton's stages hook

_ptx_patch: contextvars.ContextVar[Optional[Callable[[str], str]]] = contextvars.ContextVar("trident_ptx_patch",
                                                                                          default=None)
_hook_lock = threading.Lock()
_hook_users = 0
_hook_prev: Any = None
_hook: Any = None   # the hook installed now (_stages_hook_over(_hook_prev)), None while trident's is not


def _stages_hook_over(prev: Any) -> Callable[..., Any]:
    """Trident's hook, chained to prev: bound in it, not read from a global, since a thread of Triton's that took
    the hook from the knob before trident put prev back still calls it after (and must still call prev)."""
    def hook(*args: Any) -> Any:
        if not args:
            # Triton 3.7+ asks what the pipeline adds to a compile key: nothing of ours (the source's hash names
            # the patch, for 3.6 too)
            return prev() if prev is not None else ("", "")
        if prev is not None:
            prev(*args)
        patch = _ptx_patch.get()
        stages = args[1]
        if patch is not None and "ptx" in stages:
            make_ptx = stages["ptx"]
            stages["ptx"] = lambda src, metadata: patch(make_ptx(src, metadata))
    hook.trident_prev = prev   # type: ignore[attr-defined]
    return hook


@contextlib.contextmanager
def ptx_patched(patch: Callable[[str], str]):
    """While it lasts, a triton.compile on this thread passes the PTX it makes through patch before ptxas; its
    source must carry a patch_mark (SerialASTSource), or Triton's cache mixes patched and plain compilations. The
    hook is Triton's only while some thread compiles with it (a hook set meanwhile by others is left in place)."""
    global _hook_users, _hook_prev, _hook
    from triton import knobs
    with _hook_lock:
        if _hook_users == 0:
            # one of trident's put back by another that saved it (and so left in place): chained to what it was
            # chained to, not to itself (which patches twice)
            cur = knobs.runtime.add_stages_inspection_hook
            _hook_prev = getattr(cur, "trident_prev", cur)
            _hook = _stages_hook_over(_hook_prev)
            knobs.runtime.add_stages_inspection_hook = _hook
        _hook_users += 1
    token = _ptx_patch.set(patch)
    try:
        yield
    finally:
        _ptx_patch.reset(token)
        with _hook_lock:
            _hook_users -= 1
            if _hook_users == 0:
                if knobs.runtime.add_stages_inspection_hook is _hook:
                    knobs.runtime.add_stages_inspection_hook = _hook_prev
                _hook_prev = _hook = None
