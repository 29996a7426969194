# SPDX-License-Identifier: Apache-2.0
"""Kernels of several compiled configurations (a bundle's variants) and libtrident's tuner, which chooses among
them at run time: Kernel.variants, Kernel.tuned_launch, Kernel.benchmark_variants, write_variants_bundle."""
from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

from ._lib import (
    Arg, ArgKind, BundleVariant, DeviceKind, Launch, TunedLaunch, TunerDesc, VariantInfo, check, lib, s, sized,
)

if TYPE_CHECKING:
    from . import Kernel, Target


@dataclass(frozen=True)
class Variant:
    """One compiled configuration of a kernel: its index, its configuration text, the kernel that runs it and its
    launch dimensions rule ("" when none)."""
    index: int
    config: str
    kernel: "Kernel"
    grid: str = ""


def variants(k: "Kernel") -> list[Variant]:
    from . import Kernel
    L = lib()
    n = ctypes.c_uint32()
    check(L.trd_kernel_variant_count(k._k, ctypes.byref(n)))
    out = []
    for i in range(n.value):
        vi = sized(VariantInfo)
        check(L.trd_kernel_variant(k._k, i, ctypes.byref(vi)))
        out.append(Variant(i, s(vi.config) or "", k if i == 0 else Kernel._borrowed(ctypes.c_void_p(vi.kernel), k),
                           s(vi.grid) or ""))
    return out


def write_variants(name: str, signature: str, targets: Sequence[Sequence["Target"]],
                   configs: Optional[Sequence[Optional[str]]], grids: Optional[Sequence[Optional[str]]]) -> bytes:
    from . import _take_bytes, _target_array
    configs = list(configs) if configs is not None else [None] * len(targets)
    grids = list(grids) if grids is not None else [None] * len(targets)
    if len(configs) != len(targets) or len(grids) != len(targets):
        raise ValueError(f"{len(targets)} variants but {len(configs)} configs and {len(grids)} grids")
    arr = (BundleVariant * len(targets))()
    keep = []
    for i, (ts, config, grid) in enumerate(zip(targets, configs, grids)):
        tarr, tkeep = _target_array(ts)
        keep += [tarr, tkeep]
        arr[i].struct_size = ctypes.sizeof(BundleVariant)
        arr[i].num_targets = len(ts)
        arr[i].targets = tarr
        arr[i].config = config.encode() if config is not None else None
        arr[i].grid = grid.encode() if grid is not None else None
    data, size = ctypes.c_void_p(), ctypes.c_uint64()
    check(lib().trd_bundle_write_variants(name.encode(), signature.encode(), arr, len(targets), ctypes.byref(data),
                                          ctypes.byref(size)))
    return _take_bytes(data, size)


class _Tuner:
    """A trd_tuner_t over a kernel's variants, for one set of written parameters; closed before the kernel."""

    def __init__(self, k: "Kernel", written: tuple[int, ...]):
        w = (ctypes.c_uint32 * max(len(written), 1))(*written)
        d = sized(TunerDesc)
        d.kernel, d.num_written, d.written = k._k, len(written), w
        self._t = ctypes.c_void_p()
        check(lib().trd_tuner_create(ctypes.byref(d), ctypes.byref(self._t)))
        self._destroy = lib().trd_tuner_destroy

    def close(self):
        if self._t:
            self._destroy(self._t)
            self._t = None


def _device(k: "Kernel", selector: Optional[str]) -> ctypes.c_void_p:
    from . import _runtime
    from ._lib import DeviceProps
    L, rt, dev = lib(), _runtime(), ctypes.c_void_p()
    if selector is not None:
        check(L.trd_runtime_device_find(rt, selector.encode(), ctypes.byref(dev)))
        return dev
    n = ctypes.c_uint32()
    check(L.trd_runtime_device_count(rt, ctypes.byref(n)))
    best, best_gpu = None, False
    for i in range(n.value):  # a GPU before the host
        d, ok = ctypes.c_void_p(), ctypes.c_int32()
        check(L.trd_runtime_device_get(rt, i, ctypes.byref(d)))
        check(L.trd_kernel_supports(k._k, d, ctypes.byref(ok)))
        p = sized(DeviceProps)
        check(L.trd_device_get_props(d, ctypes.byref(p)))
        if ok.value and (best is None or (p.kind == DeviceKind.GPU and not best_gpu)):
            best, best_gpu = d, p.kind == DeviceKind.GPU
    if best is None:
        raise ValueError(f"kernel '{k.name}': no device has an image for it (see trident.devices())")
    return best


def _grids(k: "Kernel", nv: int, grid, grids) -> "Optional[ctypes.Array]":
    if grid is not None and grids is not None:
        raise ValueError(f"kernel '{k.name}': give grid (every variant's) or grids (one a variant), not both")
    if grid is None and grids is None:
        if all(v.grid for v in variants(k)):
            return None  # every variant's launch dimensions rule decides
        raise ValueError(f"kernel '{k.name}': give grid (every variant's) or grids (one a variant): not every "
                         "variant has a launch dimensions rule")
    rows = [grid] * nv if grids is None else list(grids)
    if len(rows) != nv:
        raise ValueError(f"kernel '{k.name}' has {nv} variants, grids gives {len(rows)}")
    flat = []
    for g in rows:
        dims = [g] if isinstance(g, int) else list(g)
        if not 1 <= len(dims) <= 3 or not all(isinstance(x, int) and 0 <= x < 2**32 for x in dims):
            raise ValueError(f"kernel '{k.name}': grid {g!r} is not 1 to 3 integers of 0 .. 2^32-1")
        flat += dims + [1] * (3 - len(dims))
    return (ctypes.c_uint32 * len(flat))(*flat)


def launch(k: "Kernel", args: Sequence[Any], key, grid, grids, written: Sequence[int], device: Optional[str],
           benchmark: bool):
    L = lib()
    params = k.launch_params
    if len(args) != len(params):
        raise ValueError(f"kernel '{k.name}' takes {len(params)} arguments ({k.signature}), {len(args)} given")
    written = tuple(int(w) for w in written)
    for w in written:
        if not 0 <= w < len(params) or not params[w].is_pointer:
            raise ValueError(f"kernel '{k.name}': written parameter {w} is not a pointer parameter ({k.signature})")
    if not benchmark:
        if isinstance(key, str):
            key = key.encode()
        elif isinstance(key, (bytes, bytearray, memoryview)):
            key = bytes(key)
        else:
            raise TypeError(f"kernel '{k.name}': a tuning key is a str or bytes, not {type(key).__name__}")
    nv = len(variants(k))
    g = _grids(k, nv, grid, grids)
    dev = _device(k, device)
    stream = ctypes.c_void_p()
    check(L.trd_stream_create(dev, ctypes.byref(stream)))
    bufs, views = [], {}
    try:
        cargs = (Arg * max(len(args), 1))()
        for i, (a, p) in enumerate(zip(args, params)):
            if p.is_pointer:
                mv = memoryview(a).cast("B")
                if i in written and mv.readonly:
                    raise ValueError(f"kernel '{k.name}': written argument {i} is a read-only buffer")
                b = ctypes.c_void_p()
                check(L.trd_buffer_alloc(dev, max(mv.nbytes, 1), ctypes.byref(b)))
                bufs.append(b)
                if mv.nbytes:
                    src = (ctypes.c_char * mv.nbytes).from_buffer_copy(mv)
                    check(L.trd_buffer_write(b, 0, src, mv.nbytes, None))
                views[i] = (mv, b)
                cargs[i].kind, cargs[i].value.buffer = ArgKind.BUFFER, b
            elif p.type.startswith("fp") or p.type == "bf16":
                cargs[i].kind, cargs[i].value.f = ArgKind.FLOAT, float(a)
            elif int(a) < 0:
                cargs[i].kind, cargs[i].value.i = ArgKind.INT, int(a)
            else:
                cargs[i].kind, cargs[i].value.u = ArgKind.UINT, int(a)
        lc = sized(Launch)
        lc.num_args, lc.args, lc.stream = len(args), cargs, stream
        tl = sized(TunedLaunch)
        tl.launch = ctypes.pointer(lc)
        if g is not None:
            lc.grid[:] = list(g[:3])
            tl.grids = g
        if key is not None:
            kb = ctypes.create_string_buffer(key, len(key))
            tl.key, tl.key_size = ctypes.cast(kb, ctypes.c_void_p), len(key)
        tuner = k._tuners.get(written)
        if tuner is None:
            tuner = k._tuners[written] = _Tuner(k, written)
        if benchmark:
            times = (ctypes.c_double * nv)()
            check(L.trd_tuner_benchmark(tuner._t, ctypes.byref(tl), times, nv, None))
            check(L.trd_stream_synchronize(stream))
            return [t if math.isfinite(t) else math.inf for t in times]
        chosen = ctypes.c_uint32()
        check(L.trd_tuner_launch(tuner._t, ctypes.byref(tl), ctypes.byref(chosen)))
        check(L.trd_stream_synchronize(stream))
        for w in written:  # the launch's output into the caller's buffer
            mv, b = views[w]
            if mv.nbytes:
                dst = (ctypes.c_char * mv.nbytes).from_buffer(mv)
                check(L.trd_buffer_read(b, 0, dst, mv.nbytes, None))
        return chosen.value
    finally:
        for b in reversed(bufs):
            L.trd_buffer_free(b)
        L.trd_stream_destroy(stream)
