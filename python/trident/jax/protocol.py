# SPDX-License-Identifier: Apache-2.0
"""The XLA protocol shared by every call: the custom-call target and state type, the attribute versions the
handlers read, the argument kinds and the layout of a `tma` record (docs/xla.md), and the handlers'
registration with JAX (once per process). The numbers are libtrident_xla's (xla/trident/xla.h); this module is
the one place trident.jax reads them from, and python/tests/test_protocol.py checks it against the header."""
from __future__ import annotations

import ctypes
import os
import threading

import jax

from .._lib import xla_lib

TARGET = "trident_kernel_call"   # TRD_XLA_TARGET
TARGET_RECORD = "trident_kernel_call_record"   # TRD_XLA_TARGET_RECORD: CUDA, with the RECORD stage
STATE_TYPE = "trident.call"      # TRD_XLA_STATE_TYPE
CALL_VERSION = 1                 # TRD_XLA_VERSION_CALL: a call of one kernel (read by every libtrident_xla)
AUTOTUNE_VERSION = 2             # TRD_XLA_VERSION_AUTOTUNE: an autotuned call, several candidate kernels

# arg_kind: where each launch parameter's value comes from (enum trd_xla_arg_kind)
ARG_OPERAND = 0       # operand arg_index's address
ARG_RESULT = 1        # result arg_index's address
ARG_SCALAR = 2        # the next bytes of the scalars attribute
ARG_NULL = 3          # a NULL pointer
ARG_TENSOR_MAP = 4    # a tensor map encoded from operand arg_index, described by a tma record

# a tma record: TMA_FIELDS s64 values, where each sits (enum trd_xla_tma_field)
TMA_BASE = 0          # 0: arg_index names an operand, 1: a result
TMA_ELEM_TYPE = 1     # CUtensorMapDataType
TMA_ELEM_SIZE = 2     # bytes per element of the base array
TMA_RANK = 3
TMA_SWIZZLE = 4       # CUtensorMapSwizzle
TMA_OOB_FILL = 5      # 0: zeros, 1: NaN
TMA_FP4_PADDED = 6
TMA_L2_PROMOTION = 7  # CUtensorMapL2promotion
TMA_SHAPE = 8         # TMA_MAX_RANK values each from here
TMA_STRIDES = 13
TMA_BLOCK = 18
TMA_RESERVED = 23     # 0
TMA_FIELDS = 24
TMA_MAX_RANK = 5      # TRD_TENSOR_MAP_MAX_RANK (trident.h)

# JAX platform name -> the handlers' symbol prefix
_PLATFORMS = {"cpu": "cpu", "CUDA": "cuda", "ROCM": "rocm"}
_lock = threading.Lock()
_registered: set[str] = set()
_record_why: list[str] = []   # why CUDA calls are not recorded as kernel nodes ([] while they are)


def _capsule(address: int):
    return jax.ffi.pycapsule(ctypes.c_void_p(address))


def register() -> list[str]:
    """Registers the state type and the handler bundle for every platform
    this JAX may run, and on CUDA the record target where this XLA has the RECORD stage (record_status);
    returns the platforms registered."""
    try:
        L = xla_lib()
    except OSError as e:
        raise RuntimeError(str(e)) from None
    with _lock:
        for platform, prefix in _PLATFORMS.items():
            if platform in _registered:
                continue
            try:
                # each platform's own type id: its registry numbers it (xla/trident/xla.h)
                type_id = getattr(L, f"trd_xla_{prefix}_type_id")()
                jax.ffi.register_ffi_type(STATE_TYPE, {"type_id": _capsule(type_id),
                                                       "type_info": _capsule(L.trd_xla_type_info())},
                                          platform=platform)
                inst = getattr(L, f"trd_xla_{prefix}_instantiate")
                exe = getattr(L, f"trd_xla_{prefix}_execute")
                jax.ffi.register_ffi_target(TARGET, {"instantiate": jax.ffi.pycapsule(inst),
                                                     "execute": jax.ffi.pycapsule(exe)}, platform=platform)
            except Exception as e:  # a platform this jaxlib lacks
                if platform == "cpu":
                    raise
                _registered.add(platform + ":unavailable")
                del e
                continue
            _registered.add(platform)
            if platform == "CUDA":
                _register_record(L)
        return sorted(p for p in _registered if ":" not in p)


def _register_record(L) -> None:
    """TARGET_RECORD on CUDA: the same handlers and the record one, registered by libtrident_xla through the API
    table of the XLA that just registered the CUDA handlers (jax.ffi.register_ffi_target drops a bundle's record
    handler). Where it cannot (an XLA older than FFI API 0.4, a libtrident_xla built without the RECORD stage or
    older than it, TRIDENT_XLA_RECORD=0), CUDA calls keep TARGET, which XLA captures into a child graph."""
    _record_why.clear()
    if os.environ.get("TRIDENT_XLA_RECORD", "1") == "0":
        _record_why.append("TRIDENT_XLA_RECORD=0")
        return
    fn = getattr(L, "trd_xla_cuda_record_register", None)
    if fn is None:
        _record_why.append(f"{L.path} predates the RECORD stage (TRIDENT_XLA_1.1)")
        return
    fn.restype, fn.argtypes = ctypes.c_char_p, []
    why = fn()
    if why is not None:
        _record_why.append(why.decode(errors="replace"))


def record_status() -> tuple[bool, str]:
    """(True, "") when CUDA calls are recorded as kernel nodes of XLA's command buffers (TARGET_RECORD), else
    (False, why not). Meaningful after register()."""
    with _lock:
        if "CUDA" not in _registered:
            return False, "the CUDA platform is not registered"
        return (not _record_why, _record_why[0] if _record_why else "")


_lowering = threading.local()   # .export: the call being lowered is lowered for jax.export


class exporting:
    """While a call is lowered for jax.export, target() names TARGET on every platform: an exported module
    names the target every trident registers (and the one `DisabledSafetyCheck.custom_call(TARGET)` allows),
    never TARGET_RECORD, which only a jaxlib with the RECORD stage has."""

    def __init__(self, on: bool):
        self.on = bool(on)

    def __enter__(self) -> None:
        self.before = getattr(_lowering, "export", False)
        _lowering.export = self.on or self.before

    def __exit__(self, *exc: object) -> None:
        _lowering.export = self.before


def target(platform: str) -> str:
    """The custom-call target a call lowered for `platform` ("cuda", "rocm", "cpu") names."""
    if platform != "cuda" or getattr(_lowering, "export", False):
        return TARGET
    on, why = record_status()
    if not on and why.startswith("the CUDA handlers are not registered yet"):
        # jax defers a registration until its CUDA client exists: it does now that a call is lowered for it
        with _lock:
            _register_record(xla_lib())
        on = record_status()[0]
    return TARGET_RECORD if on else TARGET
