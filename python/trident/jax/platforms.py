# SPDX-License-Identifier: Apache-2.0
"""Compile targets: a Triton backend and architecture (sm90, gfx942) or the
host, from a name, from a JAX device as trident sees it, or for the platform
a computation is being lowered for.

A call is compiled when it is lowered, for the platform being lowered: the
CUDA platform's rule compiles for every distinct architecture among JAX's
CUDA devices, the ROCm platform's for JAX's ROCm devices (each device then
runs its own image), and the CPU platform's runs host images. `targets(...)`
replaces the devices' architectures, e.g. to compile for GPUs on a machine
without one; it is read where the call is made (triton_call keeps it in the
call's description), so a later lowering sees it too. `cpu_kernels(...)`
chooses, the same way, between a kernel's host twin and Triton's interpreter
on the CPU platform.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import jax
import numpy as np
from triton.backends.compiler import GPUTarget

from .. import TridentError, option_value
from .errors import CompileError


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
        return Target("cuda", int(spec), _warp_size("cuda"))
    if isinstance(spec, str):
        s = spec.strip()
        backend, _, arch = s.rpartition(":")
        if s == "host":
            return Target("host", "", 1)
        m = re.fullmatch(r"sm_?(\d+)a?", arch)
        if backend in ("", "cuda") and (m or (backend == "cuda" and arch.isdigit())):
            return Target("cuda", int(m.group(1) if m else arch), _warp_size("cuda"))
        m = re.fullmatch(r"gfx([0-9a-f]+)(:.*)?", arch)
        if backend in ("", "hip", "rocm") and m:
            return Target("hip", "gfx" + m.group(1), _warp_size("hip", "gfx" + m.group(1)))
        if backend == "xpu" and arch:
            return Target("xpu", arch, _warp_size("xpu"))
    raise CompileError(f"target {spec!r}: expected sm<cc> (sm90), cuda:sm<cc>, gfx<arch> (gfx942), hip:gfx<arch>, "
                       f"xpu:<arch> or host")


@functools.lru_cache(maxsize=None)
def _warp_size(backend: str, arch: Optional[str] = None) -> int:
    """libtrident's warp size of a target: its option table's warp_size, derived from the arch where it depends on
    it (hip: RDNA, gfx10 and newer, runs wave32, CDNA wave64)."""
    try:
        return int(option_value(backend, "warp_size", arch))
    except TridentError:   # an arch the table refuses (gfx10): the table's default
        return int(option_value(backend, "warp_size"))


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
        return target(int(str(d.compute_capability).replace(".", "")))
    raise CompileError(f"JAX device {d} has no architecture trident knows (see `trident devices`); set the "
                       f"targets with trident.jax.targets(...)")


@dataclass(frozen=True)
class CpuKernels:
    """How JAX's CPU platform runs a Triton kernel (`cpu_kernels`)."""
    use: str = "auto"     # "auto": the host twin if registered, else Triton's interpreter; "host"; "interpreter"
    config: int = 0       # the autotuner config the interpreter runs, among those left after pruning


CPU_USES = ("auto", "host", "interpreter")
_cpu: contextvars.ContextVar[CpuKernels] = contextvars.ContextVar("trident_cpu_kernels", default=CpuKernels())


@contextlib.contextmanager
def cpu_kernels(use: str = "auto", *, config: int = 0):
    """How triton_call runs kernels on JAX's CPU platform, for the calls made inside:

        with trident.jax.cpu_kernels("interpreter", config=1):
            ...   # Triton's interpreter, even where a host twin is registered; autotuned kernels run config 1

    use: "auto" (the default): a kernel's host twin (`host_twin`) when one is registered, else Triton's
    interpreter; "host": the host twin, an error naming the kernel without one; "interpreter": always
    Triton's interpreter. config: which autotuner config the interpreter runs (an index among the configs
    left after pruning; 0, the first, by default)."""
    if use not in CPU_USES:
        raise ValueError(f"cpu_kernels: use must be one of {', '.join(map(repr, CPU_USES))}, not {use!r}")
    if isinstance(config, bool) or not isinstance(config, (int, np.integer)) or config < 0:
        raise ValueError(f"cpu_kernels: config must be an autotuner config's index (0 or more), not {config!r}")
    tok = _cpu.set(CpuKernels(use, int(config)))
    try:
        yield
    finally:
        _cpu.reset(tok)


def cpu_choice() -> CpuKernels:
    """The `cpu_kernels(...)` setting where this runs."""
    return _cpu.get()


def override() -> Optional[tuple[Target, ...]]:
    """The targets set with `targets(...)` where this runs, or None."""
    return _override.get()


# JAX's lowering platforms -> the Triton backend of their devices
PLATFORM_BACKENDS = {"cuda": "cuda", "rocm": "hip"}


def platform_targets(platform: str, compute_capability: Optional[int] = None,
                     explicit: Optional[Sequence[Target]] = None) -> list[Target]:
    """What a call lowered for `platform` ("cuda", "rocm", "cpu") compiles for: the explicit targets
    (`targets(...)`) when set, else the distinct architectures of JAX's devices of that platform (none for
    cpu, which runs host images). compute_capability replaces the CUDA architecture (jax-triton's keyword)."""
    if explicit is not None:
        out = list(explicit)
    elif platform not in PLATFORM_BACKENDS:
        out = []
    else:
        try:
            devs = jax.devices(platform)
        except RuntimeError as e:
            raise CompileError(f"lowering for {platform}: this JAX has no {platform} devices ({e}); set the targets "
                               f"with trident.jax.targets(...)") from None
        tri = _trident_devices()
        out = []
        for d in devs:
            t = target_of_device(d, tri)
            if t not in out:
                out.append(t)
    if compute_capability is not None:
        cc = target(int(compute_capability))
        out = [cc if t.backend == "cuda" else t for t in out]
        out = [t for i, t in enumerate(out) if t not in out[:i]]
    return out


def device_targets(compute_capability: Optional[int] = None, platform: Optional[str] = None) -> list[Target]:
    """The distinct targets among the devices of a JAX platform (default: JAX's default backend; none on
    CPU), or the ones set with `targets(...)`."""
    if platform is None:
        devs = jax.devices()
        platform = "cpu" if not devs or devs[0].platform == "cpu" else _jax_gpu_platform(devs[0])
    return platform_targets(platform, compute_capability, _override.get())


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
