# SPDX-License-Identifier: Apache-2.0
"""trident: Python bindings of libtrident (pure Python over ctypes).

    import trident
    trident.devices()          # every device, as dicts
    trident.drivers()          # every driver module found, with its status
    trident.options("cuda")    # the option table of a backend
    k = trident.Kernel("add_kernel.trdb")   # a bundle, a Triton cache entry or a raw image
    k.bundle()                 # the kernel as bundle bytes (every target)

`trident.jax` runs kernels inside `jax.jit` through XLA custom calls.
"""
from __future__ import annotations

import ctypes
import json
import operator
import os
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from ._version import __version__
from ._lib import (
    BundleTarget, DeviceFlag, DeviceKind, DeviceProps, DriverInfo, DriverStatus, Format, KernelDesc, KernelInfo,
    KernelSource, OptionFlag, OptionInfo, OptionReleases, OptionStage, Status, TargetInfo, TridentError, check, lib, s,
    sized,
)

__all__ = ["__version__", "TridentError", "Kernel", "Param", "Variant", "write_variants_bundle", "devices", "drivers", "options", "option_names", "is_option",
           "option_releases", "version", "library_path", "cache_dir"]

# base/formats.c's table (the owner; tests/test_c_abi.py holds this copy to it): format, name, backend, file extension
_FORMAT_TABLE = (
    (Format.CUBIN, "cubin", "cuda", ".cubin"),
    (Format.PTX, "ptx", "cuda", ".ptx"),
    (Format.FATBIN, "fatbin", "cuda", ".fatbin"),
    (Format.HSACO, "hsaco", "hip", ".hsaco"),
    (Format.SPIRV, "spirv", "xpu", ".spv"),
    (Format.ZEBIN, "zebin", "xpu", ".zebin"),
    (Format.HOST_SO, "so", "host", ".so"),
)
_FORMATS = {Format.UNKNOWN: "unknown", **{f: name for f, name, _, _ in _FORMAT_TABLE}}
_FORMAT_IDS = {v: k for k, v in _FORMATS.items()}
_STAGES = {s.value: s.name.lower() for s in OptionStage}


def version() -> str:
    """libtrident's version."""
    return s(lib().trd_version_string())


def library_path() -> str:
    """The libtrident this package loaded."""
    return lib().path


def _runtime():
    rt = ctypes.c_void_p()
    check(lib().trd_runtime_shared(ctypes.byref(rt)))
    return rt


def cache_dir() -> Optional[str]:
    """The directory of trident's disk caches, from libtrident's configuration ([runtime] cache_dir, else
    $XDG_CACHE_HOME/trident, else ~/.cache/trident), or None when there is none."""
    d = ctypes.c_char_p()
    st = lib().trd_runtime_cache_dir(_runtime(), ctypes.byref(d))
    if st == Status.ERR_NOT_FOUND:
        return None
    check(st)
    return s(d.value)


def _uuid(raw) -> str:
    """The 8-4-4-4-12 form, as the CLI prints it."""
    h = bytes(raw).hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def devices() -> list[dict]:
    """Every device of the shared runtime (trd_runtime_device_* and trd_device_get_props), every property: the
    keys and values of `trident devices --json`."""
    L, rt = lib(), _runtime()
    n = ctypes.c_uint32()
    check(L.trd_runtime_device_count(rt, ctypes.byref(n)))
    out = []
    for i in range(n.value):
        d = ctypes.c_void_p()
        check(L.trd_runtime_device_get(rt, i, ctypes.byref(d)))
        p = sized(DeviceProps)
        check(L.trd_device_get_props(d, ctypes.byref(p)))
        out.append({
            "index": p.index, "uri": s(p.uri), "driver": s(p.driver), "backend": s(p.backend), "name": s(p.name),
            "vendor": s(p.vendor), "arch": s(p.arch), "kind": "gpu" if p.kind == DeviceKind.GPU else "cpu",
            "ordinal": p.ordinal, "warp_size": p.warp_size, "compute_units": p.compute_units,
            "max_threads_per_block": p.max_threads_per_block, "memory_bytes": p.memory_bytes,
            "max_shared_per_block": p.max_shared_per_block,
            "max_shared_per_block_optin": p.max_shared_per_block_optin, "pci_bus_id": s(p.pci_bus_id),
            "uuid": _uuid(p.uuid) if p.flags & DeviceFlag.HAS_UUID else None,
            "cooperative_launch": bool(p.flags & DeviceFlag.COOPERATIVE_LAUNCH),
            "cluster_launch": bool(p.flags & DeviceFlag.CLUSTER_LAUNCH),
        })
    return out


def drivers() -> list[dict]:
    """Every driver module found, with its status (loaded, skipped, failed) and why: the keys and values of
    `trident drivers --json`."""
    L, rt = lib(), _runtime()
    n = ctypes.c_uint32()
    check(L.trd_runtime_driver_count(rt, ctypes.byref(n)))
    out = []
    for i in range(n.value):
        d = sized(DriverInfo)
        check(L.trd_runtime_driver_info(rt, i, ctypes.byref(d)))
        out.append({"name": s(d.name), "backend": s(d.backend), "path": s(d.path),
                    "status": DriverStatus(d.status).name.lower(), "reason": s(d.reason) or None,
                    "devices": d.device_count, "abi_version": d.abi_version})
    return out


def _option_dict(backend: str, o: OptionInfo, default: Optional[str] = None) -> dict:
    return {"name": s(o.name), "backend": backend, "type": s(o.type_name),
            "default": s(o.default_value) if default is None else default,
            "stage": _STAGES.get(o.stage, "?"), "doc": s(o.doc), "derived": s(o.derived), "values": s(o.values),
            "since": s(o.triton_since), "until": s(o.triton_until), "env": s(o.env),
            "triton_field": not (o.flags & OptionFlag.NOT_FIELD)}


def options(backend: str, triton_version: Optional[str] = None) -> list[dict]:
    """The option table of a backend ("cuda", "hip", "xpu", "host", "runtime", "driver"), in the
    order of Triton's dataclass; with triton_version, the fields of that release and their defaults
    there (a release newer than the tables: the newest one's, see option_releases)."""
    L = lib()
    n = ctypes.c_uint32()
    check(L.trd_option_count(backend.encode(), ctypes.byref(n)))
    out = []
    for i in range(n.value):
        o = sized(OptionInfo)
        check(L.trd_option_info(backend.encode(), i, ctypes.byref(o)))
        field = not (o.flags & OptionFlag.NOT_FIELD)
        if triton_version is None and field and not is_option(backend, s(o.name)):
            continue
        if triton_version is not None and field and not is_option(backend, s(o.name), triton_version):
            continue
        default = None
        d = ctypes.c_char_p()
        if (triton_version is not None and field
                and L.trd_option_default(backend.encode(), o.name, triton_version.encode(), ctypes.byref(d))
                == Status.OK):
            default = s(d.value)   # else a release newer than the tables (or trident's own): the newest's
        out.append(_option_dict(backend, o, default))
    return out


def option_releases(backend: str) -> dict:
    """Which releases a backend's table knows: {"product": "Triton" (None for trident's own tables),
    "oldest": "3.0", "newest": "3.9", "tested": ["3.6", ...] (compared with the installed release in CI)}."""
    r = sized(OptionReleases)
    check(lib().trd_option_releases(backend.encode(), ctypes.byref(r)))
    return {"product": s(r.product), "oldest": s(r.oldest), "newest": s(r.newest),
            "tested": (s(r.tested) or "").split()}


def is_option(backend: str, name: str, triton_version: Optional[str] = None) -> bool:
    """Whether name is a field of the backend's options class in that Triton release (default: current)."""
    present = ctypes.c_int32()
    check(lib().trd_option_exists(backend.encode(), name.encode(),
                                  triton_version.encode() if triton_version else None, ctypes.byref(present)))
    return bool(present.value)


def option_names(backend: str, triton_version: Optional[str] = None) -> list[str]:
    """The names is_option accepts."""
    return [o["name"] for o in options(backend, triton_version) if o["triton_field"]]


def check_option(backend: str, name: str, value: Any) -> str:
    """Validates one option value with the C tables; returns its canonical text or raises TridentError."""
    return _option_value(backend, name, {name: _option_text(value)})


def option_value(backend: str, name: str, arch: Optional[str] = None) -> str:
    """An option's default in the backend's table, as text; with arch, the value derived for that target (the hip
    table's warp_size: 32 for gfx10 and newer, else 64). TridentError for an arch the table refuses."""
    return _option_value(backend, name, {"arch": arch} if arch is not None else {})


def _option_value(backend: str, name: str, given: dict[str, str]) -> str:
    """The text of option name in a fresh option set of the backend, after setting the given values."""
    L = lib()
    o = ctypes.c_void_p()
    check(L.trd_options_create(backend.encode(), ctypes.byref(o)))
    try:
        for k, v in given.items():
            check(L.trd_options_set(o, k.encode(), v.encode()))
        buf = ctypes.create_string_buffer(8192)
        n = ctypes.c_size_t()
        check(L.trd_options_get(o, name.encode(), buf, len(buf), ctypes.byref(n)))
        return buf.value.decode()
    finally:
        L.trd_options_destroy(o)


def _option_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class Param:
    """One kernel parameter: its name (or None) and Triton type ("*fp32", "i32", "constexpr")."""
    name: Optional[str]
    type: str

    @property
    def is_pointer(self) -> bool:
        return self.type.startswith("*")

    @property
    def is_constexpr(self) -> bool:
        return self.type == "constexpr"


def parse_signature(sig: str) -> list[Param]:
    out = []
    for entry in filter(None, (e.strip() for e in sig.split(","))):
        name, _, typ = entry.rpartition(":")
        out.append(Param(name or None, typ.strip()))
    return out


@dataclass
class Target:
    format: str
    backend: str
    arch: str
    size: int
    metadata: dict
    num_warps: int
    num_ctas: int
    shared: int
    warp_size: int
    image: bytes = field(repr=False, default=b"")


class Kernel:
    """A kernel for one or more targets, from a trident bundle, a Triton cache entry (its
    <name>.json or directory) or a raw image, given as a path or as bytes."""

    def __init__(self, source: "str | os.PathLike | bytes | None" = None, *, name: Optional[str] = None,
                 signature: Optional[str] = None, metadata: Optional[str] = None, format: Optional[str] = None,
                 target: Optional[str] = None):
        L = lib()
        d = sized(KernelDesc)
        keep = []
        if isinstance(source, (bytes, bytearray, memoryview)):
            buf = ctypes.create_string_buffer(bytes(source), len(source))
            keep.append(buf)
            d.data = ctypes.cast(buf, ctypes.c_void_p)
            d.size = len(source)
        elif source is not None:
            d.path = os.fsencode(source)
        else:
            raise TypeError("Kernel needs a path or bytes")
        d.name = name.encode() if name else None
        d.signature = signature.encode() if signature is not None else None  # "": no parameters
        d.metadata = metadata.encode() if metadata else None
        if format is not None:
            d.format = _FORMAT_IDS[format]
            d.source = KernelSource.IMAGE
        d.target = target.encode() if target else None
        self._k = ctypes.c_void_p()
        check(L.trd_kernel_create(_runtime(), ctypes.byref(d), ctypes.byref(self._k)))
        self._destroy = L.trd_kernel_destroy
        self._read()

    @classmethod
    def _borrowed(cls, handle: ctypes.c_void_p, owner: "Kernel") -> "Kernel":
        """A kernel that `owner` owns (one of its variants): kept alive by it, never destroyed here."""
        k = cls.__new__(cls)
        k._k, k._destroy, k._owner = handle, None, owner
        k._read()
        return k

    def _read(self):
        L = lib()
        self._tuners = {}
        info = sized(KernelInfo)
        check(L.trd_kernel_get_info(self._k, ctypes.byref(info)))
        self.name = s(info.name)
        self.signature = s(info.signature)
        self.params = parse_signature(self.signature)
        self.targets = []
        for i in range(info.num_targets):
            t = sized(TargetInfo)
            check(L.trd_kernel_target_info(self._k, i, ctypes.byref(t)))
            self.targets.append(Target(_FORMATS.get(t.format, "unknown"), s(t.backend), s(t.arch), t.size,
                                       json.loads(s(t.metadata)), t.num_warps, t.num_ctas, t.shared, t.warp_size,
                                       ctypes.string_at(t.image, t.size)))

    def __del__(self):
        # the function kept at creation: at interpreter shutdown this module's globals may already be None
        k, destroy = getattr(self, "_k", None), getattr(self, "_destroy", None)
        for tuner in getattr(self, "_tuners", {}).values():  # they borrow the kernel: first
            tuner.close()
        if k and destroy:
            destroy(k)
            self._k = None

    def __repr__(self):
        ts = ", ".join(f"{t.format} {t.backend}:{t.arch}" for t in self.targets)
        return f"Kernel({self.name}({self.signature}); {ts})"

    @property
    def launch_params(self) -> list[Param]:
        """The parameters a launch passes (constexpr ones removed)."""
        return [p for p in self.params if not p.is_constexpr]

    def scratch_bytes(self, grid: "int | Sequence[int]", target: Optional[int] = None) -> tuple[int, int]:
        """The bytes of global and profile scratch (Triton's two scratch buffers) a launch of `grid` (1 to 3
        dimensions) needs on self.targets[target], or with target None the most any target needs of each:
        libtrident's trd_kernel_scratch, which computes what a launch checks, from the metadata alone. TridentError
        for a grid a launch refuses, a target past the last, or bytes past 2^64."""
        try:
            dims = (operator.index(grid),)
        except TypeError:
            try:
                dims = tuple(map(operator.index, grid))
            except TypeError:
                dims = ()
        if not 1 <= len(dims) <= 3 or not all(0 <= g < 2**32 for g in dims):  # what a C uint32_t[3] holds
            raise ValueError(f"kernel '{self.name}': grid {grid!r} is not 1 to 3 integers of 0 .. 2^32-1")
        if target is not None and not 0 <= operator.index(target) < 2**32:
            raise ValueError(f"kernel '{self.name}': target {target!r} is not an index of its targets")
        g = (ctypes.c_uint32 * 3)(*dims, *(1,) * (3 - len(dims)))
        need = [0, 0]
        for i in range(len(self.targets)) if target is None else (target,):
            b, p = ctypes.c_uint64(), ctypes.c_uint64()
            check(lib().trd_kernel_scratch(self._k, i, g, ctypes.byref(b), ctypes.byref(p)))
            need = [max(need[0], b.value), max(need[1], p.value)]
        return need[0], need[1]

    @property
    def variants(self) -> "list[Variant]":
        """The kernel's compiled configurations (a bundle's variants; one, itself, for any other kernel): each a
        Variant(index, config, kernel). The kernel itself is variant 0."""
        return _tune.variants(self)

    def tuned_launch(self, args: Sequence[Any], *, key: "bytes | str", grid: "int | Sequence[int] | None" = None,
                     grids: "Sequence[Sequence[int]] | None" = None, written: Sequence[int] = (),
                     device: Optional[str] = None) -> int:
        """Launches the variant libtrident's tuner chooses for (key, the device's arch): the first launch of a key
        benchmarks every variant on these arguments (the `written` ones, indices of launch parameters, saved and
        restored around each), keeps the choice in memory and in the cache directory, and later launches run it.
        args: one a launch parameter, buffers (anything with the buffer protocol: a numpy array, a bytearray) for
        pointers, numbers for scalars; the written buffers get the launch's output. grid: every variant's, or
        grids: one a variant (their block sizes decide), or neither where every variant has a launch dimensions
        rule (Variant.grid). device: a selector ("host:0", "cuda:1"), default the
        best device with an image. Returns the variant launched."""
        return _tune.launch(self, args, key, grid, grids, written, device, benchmark=False)

    def benchmark_variants(self, args: Sequence[Any], *, grid: "int | Sequence[int] | None" = None,
                           grids: "Sequence[Sequence[int]] | None" = None, written: Sequence[int] = (),
                           device: Optional[str] = None) -> list[float]:
        """Every variant's milliseconds a launch on these arguments (inf where it cannot run), as a tuned launch's
        benchmark measures them; nothing kept, the buffers left as given."""
        return _tune.launch(self, args, None, grid, grids, written, device, benchmark=True)

    def bundle(self) -> bytes:
        """This kernel as a trident bundle (every target, its metadata and the signature)."""
        return write_bundle(self.name, self.signature, self.targets)

    @staticmethod
    def combine(kernels: Sequence["Kernel"], name: Optional[str] = None,
                signature: Optional[str] = None) -> "Kernel":
        """One kernel with the targets of several (e.g. a Triton sm90 entry and its host twin)."""
        first = kernels[0]
        targets = [t for k in kernels for t in k.targets]
        return Kernel(write_bundle(name or first.name, first.signature if signature is None else signature, targets))


def write_variants_bundle(name: str, signature: str, variants: Sequence[Sequence[Target]],
                          configs: Optional[Sequence[Optional[str]]] = None,
                          grids: Optional[Sequence[Optional[str]]] = None) -> bytes:
    """A bundle of several compiled configurations of one kernel (format version 2): variants[i] is variant i's
    targets, configs[i] its configuration text (shown by `trident info`), grids[i] its launch dimensions rule
    ("cdiv(M,BLOCK_M),cdiv(N,BLOCK_N)": integer parameters and the config's NAME=integer pairs)."""
    return _tune.write_variants(name, signature, variants, configs, grids)


def _target_array(targets: Sequence[Target]):
    """The targets as a C array of trd_bundle_target_t, and what its pointers point into (keep it alive)."""
    arr = (BundleTarget * len(targets))()
    keep = []
    for i, t in enumerate(targets):
        img = ctypes.create_string_buffer(t.image, len(t.image))
        meta = json.dumps(t.metadata).encode()
        keep += [img, meta]
        arr[i].struct_size = ctypes.sizeof(BundleTarget)
        arr[i].format = _FORMAT_IDS[t.format]
        arr[i].backend = t.backend.encode()
        arr[i].arch = t.arch.encode()
        arr[i].image = ctypes.cast(img, ctypes.c_void_p)
        arr[i].image_size = len(t.image)
        arr[i].metadata = meta
    return arr, keep


def _take_bytes(data: ctypes.c_void_p, size: ctypes.c_uint64) -> bytes:
    try:
        return ctypes.string_at(data, size.value)
    finally:
        lib().trd_free(data)


def write_bundle(name: str, signature: str, targets: Sequence[Target]) -> bytes:
    arr, _keep = _target_array(targets)
    data, size = ctypes.c_void_p(), ctypes.c_uint64()
    check(lib().trd_bundle_write(name.encode(), signature.encode(), arr, len(targets), ctypes.byref(data),
                                 ctypes.byref(size)))
    return _take_bytes(data, size)


from . import _tune  # noqa: E402  (it uses Kernel)
from ._tune import Variant  # noqa: E402
