"""The XLA protocol shared by every call: the custom-call target and state type libtrident_xla registers, the
attribute versions its handlers read (docs/xla.md), and their registration with JAX (once per process)."""
from __future__ import annotations

import ctypes
import threading

import jax

from .._lib import xla_lib

TARGET = "trident_kernel_call"
STATE_TYPE = "trident.call"
CALL_VERSION = 1          # a call of one kernel (read by every libtrident)
AUTOTUNE_VERSION = 2      # an autotuned call: several candidate kernels

# JAX platform name -> the handlers' symbol prefix
_PLATFORMS = {"cpu": "cpu", "CUDA": "cuda", "ROCM": "rocm"}
_lock = threading.Lock()
_registered: set[str] = set()


def _capsule(address: int):
    return jax.ffi.pycapsule(ctypes.c_void_p(address))


def register() -> list[str]:
    """Registers the state type and the handler bundle for every platform
    this JAX may run; returns the platforms registered."""
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
        return sorted(p for p in _registered if ":" not in p)
