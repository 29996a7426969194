"""triton.autotune and triton.heuristics kernels in triton_call.

Heuristics run when the call is traced, on the call's arguments (arrays are
JAX arrays or tracers: their shape and dtype are known) and keywords, as
Triton runs them at a launch. An autotuner's configs are pruned as jax-triton
does (a config that contradicts a keyword the caller gave is dropped, then
early_config_prune and perf_model/top_k as in Triton), each remaining config
is compiled once for every target, and one is chosen by running them all:

    select() benchmarks the candidates with trident's C runtime (streams,
    events, trd_kernel_launch) on the device the call runs on, on copies of
    the call's real input arrays when the call is not being traced (the first
    concrete call), and on arrays of the same shapes and dtypes (normal
    random floats, zero integers) when it is traced under jax.jit. The choice
    is kept per kernel, configs, device model and call (shapes, dtypes, the
    autotuner's key values), in memory and on disk (cache.py), so a later
    trace or process reuses it without benchmarking. Benchmarks run on private
    buffers: the caller's arrays, aliased ones included, are never modified.

    Each config runs once to warm up and load, once timed to estimate, then
    clamp(10 ms / estimate, 1, 100) times between two events (jaxlib's
    schedule); the fastest mean wins. Around every benchmark launch the
    config's pre_hook and the autotuner's pre_hook/post_hook (reset_to_zero,
    restore_value, or the user's) run with the array arguments as Bench
    arrays: zero_(), fill_(v), clone(), copy_(src) work on the device buffers.
    For the real launch, the chosen config's pre_hook runs on recording
    proxies; zero_()/fill_() it applies to an output become zeroing of that
    output, and to an input become the call's input replaced by zeros/fill
    (the functional equivalent: the caller's array is immutable in JAX).

This is the fallback the C side allows today. Choosing at the first
*execution* of a jitted call, on the real inputs inside XLA, needs a handler
that receives every candidate; the interface it needs is in
`FIRST_EXECUTION_INTERFACE` below, and `select` is the one function that
would then move into C.
"""
from __future__ import annotations

import copy
import ctypes
import hashlib
import math
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np
import triton

from .. import Kernel
from .._lib import Arg, Launch, check, lib
from .. import _runtime
from . import cache as _cache
from ._call import pack_scalar

FIRST_EXECUTION_INTERFACE = """
XLA handler "trident_kernel_autotune" (or version 2 of trident_kernel_call's attributes), same
operands/results as trident_kernel_call plus:

  attributes
    candidates  s32        N >= 2
    kernels     string     N trident bundles concatenated (one per config; same launch signature)
    kernel_off  s64[N+1]   byte offsets of each bundle in `kernels`
    grid        s64[3N]    per config
    zero_off    s64[N+1]   offsets into `zero`; zero s64[]: per config, results to zero
    scratch     s64[2]     results holding global/profile scratch, sized for the largest config
    arg_kind, arg_index, scalars, options, version   as today (common to every config)
    aliased     s64[2M]    (operand, result) pairs: operands the kernel writes (saved/restored)
    choice_key  string     hex key; the choice is kept per (choice_key, device model)
    cache_dir   string     where to persist it ("" = memory only)

  stages
    INSTANTIATE  decode as today, once per candidate (per-device slots per candidate).
    INITIALIZE   (buffers available, before EXECUTE, outside command-buffer capture) on a device
                 with no choice yet: look up <cache_dir>/autotune/<choice_key>-<arch>.json; else
                 save every aliased operand (device copy), run each candidate: zero its `zero`
                 results, warm up once, time once with driver events, then clamp(10ms/t,1,100)
                 times; restore the aliased operands after each candidate; keep the fastest, write
                 the JSON. Failures of one candidate (launch resources) mark it infinitely slow.
    EXECUTE      launch the chosen candidate exactly as trident_kernel_call does: no lock, no
                 allocation, command-buffer compatible.

  C entry points (abi/trident/xla.h):
    void *trd_xla_<platform>_autotune_instantiate(void *call_frame);
    void *trd_xla_<platform>_autotune_initialize(void *call_frame);
    void *trd_xla_<platform>_autotune_execute(void *call_frame);
    int32_t trd_xla_autotune_available(void);   /* Python switches to it when present */
"""


class AutotuneError(RuntimeError):
    """No config could be benchmarked."""


class CannotBenchmark(RuntimeError):
    """The device the call runs on cannot run the candidates here (no device, no image for it)."""


# --------------------------------------------------------------- configs

def layers(kernel: Any) -> list[Any]:
    """The Autotuner/Heuristics wrappers around a JITFunction, outermost first."""
    out = []
    fn = kernel
    while isinstance(fn, (triton.runtime.Autotuner, triton.runtime.Heuristics)):
        out.append(fn)
        fn = fn.fn
    return out


@dataclass
class Variant:
    """One way to launch: the keywords a config and the heuristics add, and the config."""
    kwargs: dict[str, Any]
    config: Optional[triton.Config] = None


def variants(kernel: Any, named: dict[str, Any], user_kwargs: dict[str, Any]) -> list[Variant]:
    """Applies the kernel's heuristics and autotuner layers to the call.

    named: the call's parameter values by name (the arrays as given); user_kwargs: every keyword
    of the call (kernel and backend), which a config may not contradict."""
    out = [Variant({})]
    for layer in layers(kernel):
        if isinstance(layer, triton.runtime.Heuristics):
            for v in out:
                for name, h in layer.values.items():
                    v.kwargs[name] = h({**named, **user_kwargs, **v.kwargs})
        else:
            expanded = []
            for v in out:
                for cfg in prune(layer, named, {**user_kwargs, **v.kwargs}):
                    expanded.append(Variant({**v.kwargs, **cfg.all_kwargs()}, cfg))
            out = expanded
    return out


def prune(tuner: Any, named: dict[str, Any], kwargs: dict[str, Any]) -> list[triton.Config]:
    """The configs left after jax-triton's pruning, early_config_prune and perf_model/top_k."""
    configs = [c for c in tuner.configs if all(c.kwargs.get(k, v) == v for k, v in kwargs.items())]
    if not configs:
        given = ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if k in _config_keys(tuner))
        raise AutotuneError(f"kernel '{tuner.base_fn.__name__}': every autotuner config contradicts a keyword of "
                            f"the call ({given})")
    if tuner.early_config_prune:
        configs = tuner.early_config_prune(configs, named, **kwargs)
        if not configs:
            raise AutotuneError("No valid autotuner configs after pruning. `early_config_prune` should return at "
                                "least one config.")
    if tuner.perf_model:
        top_k = tuner.configs_top_k
        if isinstance(top_k, float) and top_k <= 1.0:
            top_k = int(len(configs) * top_k)
        if len(configs) > top_k > 0:
            est = {c: tuner.perf_model(**{**named, **kwargs, **c.all_kwargs()}) for c in configs}
            configs = sorted(configs, key=lambda c: est[c])[:top_k]
    return list(configs)


def _config_keys(tuner: Any) -> set[str]:
    return {k for c in tuner.configs for k in c.kwargs}


def autotuner_of(kernel: Any) -> Optional[Any]:
    for layer in layers(kernel):
        if isinstance(layer, triton.runtime.Autotuner):
            return layer
    return None


# -------------------------------------------------------------- candidates

@dataclass
class Candidate:
    """One variant, compiled: its bundle(s) and how it is launched."""
    variant: Variant
    kernels: dict[Any, Kernel]            # Target -> that target's kernel
    kernel: Kernel                        # every target, one bundle
    grid: tuple[int, int, int]
    zero: list[int]                       # results zeroed before the launch
    leaves: list[tuple]   # per launch parameter: ("in", operand), ("out", result), ("scalar", v), ("null",)
    names: dict[str, Any] = field(default_factory=dict)   # parameter -> bound value, for hooks
    load_options: dict[str, dict[str, Any]] = field(default_factory=dict)   # backend -> load-stage options

    @property
    def label(self) -> str:
        return str(self.variant.config) if self.variant.config is not None else "default"


# --------------------------------------------------------- trident runtime

class _Bufs:
    """Device buffers of one benchmark, freed together."""

    def __init__(self, dev: Any, stream: Any):
        self.dev, self.stream = dev, stream
        self.items: list[Any] = []

    def alloc(self, nbytes: int) -> Any:
        b = ctypes.c_void_p()
        check(lib().trd_buffer_alloc(self.dev, max(int(nbytes), 1), ctypes.byref(b)))
        self.items.append(b)
        return b

    def free(self) -> None:
        for b in self.items:
            lib().trd_buffer_free(b)
        self.items.clear()


class BenchArray:
    """An array argument during benchmarking, for Triton's hooks (the subset of
    torch.Tensor they use): zero_(), fill_(v), clone(), copy_(src)."""

    def __init__(self, bufs: _Bufs, buf: Any, shape: tuple, dtype: Any):
        self._bufs, self._buf = bufs, buf
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def data_ptr(self) -> int:
        a = ctypes.c_void_p()
        check(lib().trd_buffer_address(self._buf, ctypes.byref(a)))
        return a.value or 0

    def zero_(self) -> "BenchArray":
        check(lib().trd_buffer_fill(self._buf, 0, self.nbytes, 0, self._bufs.stream))
        return self

    def fill_(self, value: Any) -> "BenchArray":
        data = np.full(self.shape, value, dtype=self.dtype).tobytes()
        check(lib().trd_stream_synchronize(self._bufs.stream))
        check(lib().trd_buffer_write(self._buf, 0, data, len(data), None))
        return self

    def clone(self) -> "BenchArray":
        other = BenchArray(self._bufs, self._bufs.alloc(self.nbytes), self.shape, self.dtype)
        other.copy_(self)
        return other

    def copy_(self, src: "BenchArray") -> "BenchArray":
        check(lib().trd_buffer_copy(self._buf, 0, src._buf, 0, min(self.nbytes, src.nbytes), self._bufs.stream))
        return self

    def numpy(self) -> np.ndarray:
        out = np.empty(self.shape, self.dtype)
        check(lib().trd_stream_synchronize(self._bufs.stream))
        check(lib().trd_buffer_read(self._buf, 0, out.ctypes.data_as(ctypes.c_void_p), self.nbytes, None))
        return out


def trident_device_of(jax_device: Any) -> str:
    """trident's URI for a JAX device (the XLA handler maps them the same way)."""
    if jax_device.platform == "cpu":
        return "host:0"
    from .compile import _jax_gpu_platform
    ordinal = getattr(jax_device, "local_hardware_id", None)
    ordinal = jax_device.id if ordinal is None else ordinal
    return f"{'cuda' if _jax_gpu_platform(jax_device) == 'cuda' else 'hip'}:{ordinal}"


def _device(uri: str) -> Any:
    d = ctypes.c_void_p()
    check(lib().trd_runtime_device_find(_runtime(), uri.encode(), ctypes.byref(d)))
    return d


def _device_model(uri: str) -> str:
    from .. import devices
    for d in devices():
        if d["uri"] == uri:
            return f"{d['backend']}:{d['arch']}:{d['name']}"
    return uri


def _synthetic(shape: tuple, dtype: Any, seed: int) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "f" or dt.name in ("bfloat16",) or "float8" in dt.name:
        rng = np.random.default_rng(seed)
        return rng.standard_normal(shape).astype(dt)
    return np.zeros(shape, dt)


def _arg_bits(data: bytes) -> int:
    return int.from_bytes(data.ljust(8, b"\0")[:8], "little")


def _bench_one(c: Candidate, kernel: Kernel, dev: Any, stream: Any, bufs: _Bufs, ops: list[BenchArray],
               outs: list[Optional[BenchArray]], hooks: Callable[[Candidate, dict, str], None]) -> float:
    L = lib()
    params = kernel.launch_params
    args = (Arg * max(len(c.leaves), 1))()
    for i, leaf in enumerate(c.leaves):
        if leaf[0] == "in":
            args[i].kind, args[i].value.buffer = 5, ops[leaf[1]]._buf
        elif leaf[0] == "out":
            args[i].kind, args[i].value.buffer = 5, outs[leaf[1]]._buf
        elif leaf[0] == "null":
            args[i].kind, args[i].value.ptr = 4, None
        else:
            args[i].kind, args[i].value.bits = 6, _arg_bits(pack_scalar(kernel, i, params[i], leaf[1]))
    launch = Launch()
    launch.struct_size = ctypes.sizeof(Launch)
    launch.grid[:] = list(c.grid)
    launch.num_args = len(c.leaves)
    launch.args = args
    launch.stream = stream

    def run() -> None:
        hooks(c, {}, "pre")
        try:
            check(L.trd_kernel_launch(kernel._k, ctypes.byref(launch)))
        except Exception as e:
            hooks(c, {"exception": e}, "post")
            raise
        hooks(c, {"exception": None}, "post")

    for r in c.zero:
        if outs[r] is not None:
            outs[r].zero_()
    e0, e1 = ctypes.c_void_p(), ctypes.c_void_p()
    check(L.trd_event_create(dev, ctypes.byref(e0)))
    check(L.trd_event_create(dev, ctypes.byref(e1)))
    try:
        run()                                   # warm-up: loads the kernel
        check(L.trd_stream_synchronize(stream))

        def timed(n: int) -> float:
            check(L.trd_event_record(e0, stream))
            for _ in range(n):
                run()
            check(L.trd_event_record(e1, stream))
            check(L.trd_event_synchronize(e1))
            ms = ctypes.c_double()
            check(L.trd_event_elapsed(e0, e1, ctypes.byref(ms)))
            return ms.value / n

        est = max(timed(1), 1e-4)
        n = int(min(max(10.0 / est, 1), 100))
        return timed(n)
    finally:
        L.trd_event_destroy(e0)
        L.trd_event_destroy(e1)


def benchmark(name: str, candidates: Sequence[Candidate], target: Any, uri: str, inputs: Sequence[Any],
              results: Sequence[Any], aliases: dict[int, int], hooks: Callable[[Candidate, dict, str], Any],
              concrete: bool) -> list[float]:
    """Milliseconds per launch of each candidate on trident device `uri`."""
    L = lib()
    try:
        dev = _device(uri)
    except Exception as e:
        raise CannotBenchmark(f"trident has no device {uri}: {e}") from None
    runnable = []
    for c in candidates:
        ok = ctypes.c_int32()
        check(L.trd_kernel_supports(c.kernels.get(target, c.kernel)._k, dev, ctypes.byref(ok)))
        runnable.append(bool(ok.value))
    if not any(runnable):
        raise CannotBenchmark(f"no image of the kernel runs on {uri} (targets: "
                              f"{', '.join(str(t) for t in candidates[0].kernels)})")
    stream = ctypes.c_void_p()
    check(L.trd_stream_create(dev, ctypes.byref(stream)))
    bufs = _Bufs(dev, stream)
    try:
        ops = []
        for i, a in enumerate(inputs):
            data = np.ascontiguousarray(np.asarray(a)) if concrete else _synthetic(tuple(a.shape), a.dtype, i)
            b = bufs.alloc(data.nbytes)
            if data.nbytes:
                check(L.trd_buffer_write(b, 0, data.ctypes.data_as(ctypes.c_void_p), data.nbytes, None))
            ops.append(BenchArray(bufs, b, tuple(a.shape), a.dtype))
        aliased_results = {r: o for o, r in aliases.items()}
        outs: list[Optional[BenchArray]] = []
        for r, s in enumerate(results):
            if r in aliased_results:
                outs.append(ops[aliased_results[r]])
            else:
                nbytes = int(np.prod(s.shape, dtype=np.int64)) * np.dtype(s.dtype).itemsize
                outs.append(BenchArray(bufs, bufs.alloc(nbytes), tuple(s.shape), s.dtype))
        times = []
        for c in candidates:
            kernel = c.kernels.get(target, c.kernel)
            hooks(c, {"ops": ops, "outs": outs}, "bind")
            try:
                times.append(_bench_one(c, kernel, dev, stream, bufs, ops, outs, hooks))
            except Exception as e:  # out of resources etc.: this config cannot run here
                times.append(math.inf)
                hooks(c, {"error": e}, "failed")
        return times
    finally:
        L.trd_stream_synchronize(stream)
        bufs.free()
        L.trd_stream_destroy(stream)


_choices: dict[str, int] = {}
_lock = threading.Lock()


def choice_key(fn: Any, candidates: Sequence[Candidate], call_key: Sequence[Any], model: str) -> str:
    parts = [fn.cache_key, model, repr(list(call_key))] + [c.label + repr(c.grid) for c in candidates]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def select(fn: Any, candidates: Sequence[Candidate], target: Any, uri: str, call_key: Sequence[Any],
           inputs: Sequence[Any], results: Sequence[Any], aliases: dict[int, int],
           hooks: Callable[[Candidate, dict, str], Any], concrete: bool) -> int:
    """The index of the fastest candidate on device `uri` (cached in memory and on disk)."""
    key = choice_key(fn, candidates, call_key, _device_model(uri))
    hit = _choices.get(key)
    if hit is not None:
        return hit
    entry = _cache.load_choice(key)
    if entry is not None and 0 <= int(entry.get("choice", -1)) < len(candidates) and \
            entry.get("configs") == [c.label for c in candidates]:
        _choices[key] = int(entry["choice"])
        return _choices[key]
    with _lock:   # one benchmark at a time: they would disturb each other's timings
        if key in _choices:
            return _choices[key]
        times = benchmark(fn.__name__, candidates, target, uri, inputs, results, aliases, hooks, concrete)
        if all(math.isinf(t) for t in times):
            raise AutotuneError(f"kernel '{fn.__name__}': no autotuner config could run on {uri} "
                                f"({', '.join(c.label for c in candidates)})")
        best = min(range(len(times)), key=lambda i: times[i])
        _choices[key] = best
        _cache.store_choice(key, {"kernel": fn.__name__, "device": uri, "configs": [c.label for c in candidates],
                                  "times_ms": [t if math.isfinite(t) else None for t in times], "choice": best,
                                  "inputs": "real" if concrete else "synthetic"})
        if triton.knobs.autotuning.print if hasattr(triton, "knobs") else False:
            print(f"trident autotuning for {fn.__name__} on {uri}: {candidates[best].label} "
                  f"({times[best]:.4f} ms)")
        return best


def config_copy(cfg: triton.Config) -> triton.Config:
    return copy.copy(cfg)
