# SPDX-License-Identifier: Apache-2.0
"""triton.autotune and triton.heuristics kernels in triton_call.

Heuristics run when the call is traced, on the call's arguments (arrays are
JAX arrays or tracers: their shape and dtype are known) and keywords, as
Triton runs them at a launch. An autotuner's configs are pruned as jax-triton
does (a config that contradicts a keyword the caller gave is dropped, then
early_config_prune and perf_model/top_k as in Triton: none of them needs the
inputs' values), and each remaining config is compiled once for every target.

All of them go to libtrident's XLA handler in one autotuned call (attribute
version 2, docs/xla.md): the first execution on each device benchmarks them
there, on the call's real inputs, inside jax.jit or not, and launches the
fastest from then on. The aliased inputs are saved before the benchmark and
restored after each candidate, so they come out as one launch leaves them.
The choice is kept by the C side, per call (the autotuner's key values, the
shapes and dtypes: `choice_key`) and device arch, in the process's memory and
in the trident cache directory (libtrident's tuner: cache.py, tune/), so
another executable or process reuses it without benchmarking.

Hooks cannot run inside XLA's execution; they run at trace time on recording
proxies (triton.py): zero_() of an output by a config's pre_hook, by
reset_to_zero or by the autotuner's own pre_hook becomes a result that
candidate zeroes before each of its launches; zero_()/fill_() of an input by
a config's pre_hook replaces that input for the call (the same for every
candidate); restore_value needs nothing (the handler restores the aliased
inputs itself), and the autotuner's post_hook is not called. A config's
pre_hook also runs before that config compiles when the call has host tensor
descriptors: Triton's idiom sets their block_shape there, so each candidate
has its own blocks, and (lowered to TMA) its own tensor maps, which the
handler encodes per candidate.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import triton

from .. import Kernel
from . import compile as _c
from .errors import AutotuneError, KernelCallError
from .routing import OptionError


def _skipped_errors() -> tuple:
    from triton.compiler.errors import CompileTimeAssertionFailure
    from triton.runtime import errors
    return tuple(e for e in (errors.OutOfResources, CompileTimeAssertionFailure, getattr(errors, "PTXASError", None))
                 if e is not None)


# what Triton's Autotuner._bench catches (3.6 to 3.9): a config failing with one of these is skipped; any other
# error fails the call
SKIPPED_ERRORS = _skipped_errors()


def config_error(kname: str, config: Any, err: Exception) -> Exception:
    """err, raised while compiling one autotuner config, as an error that names the config: of err's own type
    where that takes a message alone, else AutotuneError."""
    msg = f"kernel '{kname}': autotuner config {config}: {type(err).__name__}: {err}"
    if type(err) in (_c.CompileError, OptionError, KernelCallError, NotImplementedError, TypeError, ValueError,
                     RuntimeError):
        return type(err)(msg)
    return AutotuneError(msg)


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
    leaves: list[tuple]   # per launch parameter: ("in", operand), ("out", result), ("scalar", v), ("null",),
    #                       ("tma", operand, shape, strides, block_shape, padding, round_f32_to_tf32)
    names: dict[str, Any] = field(default_factory=dict)   # parameter -> bound value, for hooks
    load_options: dict[str, dict[str, Any]] = field(default_factory=dict)   # backend -> load-stage options

    @property
    def label(self) -> str:
        return str(self.variant.config) if self.variant.config is not None else "default"


def choice_key(fn: Any, candidates: Sequence[Candidate], call_key: Sequence[Any]) -> str:
    """The name of an autotuned call's choice: the kernel's name and a digest of its source, the call (the
    autotuner's key values, shapes, dtypes) and the candidates. The handler adds the device's arch."""
    parts = [_c.source_key(fn), repr(list(call_key))] + [
        f"{c.label}|{sorted(c.variant.kwargs.items())!r}|{c.grid!r}" for c in candidates]
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:40]
    return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', fn.__name__)[:60].lstrip('.')}-{digest}"
