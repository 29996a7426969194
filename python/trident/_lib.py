# SPDX-License-Identifier: Apache-2.0
"""ctypes bindings of libtrident's C ABI (abi/trident/trident.h).

Every struct here mirrors the C one field for field, and every enum the C
one (tests/test_c_abi.py holds both to the header); each struct begins with
its size, which is set from ctypes.sizeof so that libtrident reads only what
this module knows about."""
from __future__ import annotations

import ctypes
import ctypes.util
import enum
import os
import threading
from pathlib import Path

c_status = ctypes.c_int32


# trident.h's enums this package uses, each member named as in C less the prefix given (the C names are the
# owners: tests/test_c_abi.py holds every member, name and value, to the header)
class Status(enum.IntEnum):
    """enum trd_status_code (TRD_)."""
    OK = 0
    ERR_INVALID_ARGUMENT = 1
    ERR_NOT_FOUND = 2
    ERR_UNSUPPORTED = 3
    ERR_NO_MEMORY = 4
    ERR_DEVICE = 5
    ERR_IO = 6
    ERR_FORMAT = 7
    ERR_DRIVER = 8
    ERR_LIMIT = 9
    ERR_NO_DEVICE = 10
    ERR_VERSION = 11
    ERR_STATE = 12
    ERR_BUFFER_TOO_SMALL = 13
    ERR_INTERNAL = 14


class OptionStage(enum.IntEnum):
    """enum trd_option_stage (TRD_STAGE_)."""
    COMPILE = 1
    LOAD = 2
    LAUNCH = 3
    RUNTIME = 4


class OptionFlag(enum.IntFlag):
    """enum trd_option_flags (TRD_OPTION_)."""
    DERIVED = 1
    NOT_FIELD = 2


class DriverStatus(enum.IntEnum):
    """enum trd_driver_status (TRD_DRIVER_)."""
    LOADED = 0
    SKIPPED = 1
    FAILED = 2


class DeviceKind(enum.IntEnum):
    """enum trd_device_kind (TRD_DEVICE_)."""
    GPU = 1
    CPU = 2


class DeviceFlag(enum.IntFlag):
    """enum trd_device_flags (TRD_DEVICE_)."""
    HAS_UUID = 1
    COOPERATIVE_LAUNCH = 2
    CLUSTER_LAUNCH = 4


class KernelSource(enum.IntEnum):
    """enum trd_kernel_source (TRD_SOURCE_)."""
    AUTO = 0
    BUNDLE = 1
    TRITON_CACHE = 2
    IMAGE = 3


class Format(enum.IntEnum):
    """enum trd_image_format (TRD_FORMAT_)."""
    UNKNOWN = 0
    CUBIN = 1
    PTX = 2
    FATBIN = 3
    HSACO = 4
    SPIRV = 5
    ZEBIN = 6
    HOST_SO = 7


class ArgKind(enum.IntEnum):
    """enum trd_arg_kind (TRD_ARG_)."""
    INT = 1
    UINT = 2
    FLOAT = 3
    PTR = 4
    BUFFER = 5
    BITS = 6


class TridentError(RuntimeError):
    """A trident call failed: ``status`` is the C status name, the message says what failed."""

    def __init__(self, status: str, message: str):
        super().__init__(f"{message} [{status}]" if message else status)
        self.status = status
        self.message = message


class DeviceProps(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("index", ctypes.c_uint32), ("kind", ctypes.c_int32),
        ("flags", ctypes.c_uint32), ("uri", ctypes.c_char_p), ("driver", ctypes.c_char_p),
        ("backend", ctypes.c_char_p), ("name", ctypes.c_char_p), ("vendor", ctypes.c_char_p),
        ("arch", ctypes.c_char_p), ("pci_bus_id", ctypes.c_char_p), ("ordinal", ctypes.c_uint32),
        ("warp_size", ctypes.c_uint32), ("compute_units", ctypes.c_uint32),
        ("max_threads_per_block", ctypes.c_uint32), ("memory_bytes", ctypes.c_uint64),
        ("max_shared_per_block", ctypes.c_uint32), ("max_shared_per_block_optin", ctypes.c_uint32),
        ("uuid", ctypes.c_uint8 * 16),
    ]


class DriverInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("status", ctypes.c_int32), ("device_count", ctypes.c_uint32),
        ("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p), ("backend", ctypes.c_char_p),
        ("path", ctypes.c_char_p), ("reason", ctypes.c_char_p),
    ]


class OptionInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("type", ctypes.c_int32), ("stage", ctypes.c_int32),
        ("flags", ctypes.c_uint32), ("backend", ctypes.c_char_p), ("name", ctypes.c_char_p),
        ("type_name", ctypes.c_char_p), ("default_value", ctypes.c_char_p), ("derived", ctypes.c_char_p),
        ("values", ctypes.c_char_p), ("doc", ctypes.c_char_p), ("triton_since", ctypes.c_char_p),
        ("triton_until", ctypes.c_char_p), ("env", ctypes.c_char_p),
    ]


class OptionReleases(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("product", ctypes.c_char_p), ("oldest", ctypes.c_char_p),
                ("newest", ctypes.c_char_p), ("tested", ctypes.c_char_p)]


class KernelDesc(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("source", ctypes.c_int32), ("path", ctypes.c_char_p),
        ("data", ctypes.c_void_p), ("size", ctypes.c_uint64), ("name", ctypes.c_char_p),
        ("signature", ctypes.c_char_p), ("metadata", ctypes.c_char_p), ("format", ctypes.c_int32),
        ("target", ctypes.c_char_p), ("options", ctypes.c_void_p),
    ]


class KernelInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("num_params", ctypes.c_uint32), ("num_targets", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32), ("name", ctypes.c_char_p), ("signature", ctypes.c_char_p),
    ]


class TargetInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("format", ctypes.c_int32), ("size", ctypes.c_uint64),
        ("image", ctypes.c_void_p), ("backend", ctypes.c_char_p), ("arch", ctypes.c_char_p),
        ("metadata", ctypes.c_char_p), ("num_warps", ctypes.c_uint32), ("num_ctas", ctypes.c_uint32),
        ("shared", ctypes.c_uint32), ("warp_size", ctypes.c_uint32),
    ]


class BundleTarget(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("format", ctypes.c_int32), ("backend", ctypes.c_char_p),
        ("arch", ctypes.c_char_p), ("image", ctypes.c_void_p), ("image_size", ctypes.c_uint64),
        ("metadata", ctypes.c_char_p),
    ]


class BundleVariant(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("num_targets", ctypes.c_uint32),
                ("targets", ctypes.POINTER(BundleTarget)), ("config", ctypes.c_char_p), ("grid", ctypes.c_char_p)]


class ArgValue(ctypes.Union):
    _fields_ = [("i", ctypes.c_int64), ("u", ctypes.c_uint64), ("f", ctypes.c_double), ("ptr", ctypes.c_void_p),
                ("buffer", ctypes.c_void_p), ("bits", ctypes.c_uint64)]


class Arg(ctypes.Structure):
    """trd_arg_t: one launch argument (kind: an ArgKind)."""
    _fields_ = [("kind", ctypes.c_int32), ("reserved", ctypes.c_uint32), ("value", ArgValue)]


class Launch(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("flags", ctypes.c_uint32), ("grid", ctypes.c_uint32 * 3),
        ("num_args", ctypes.c_uint32), ("args", ctypes.POINTER(Arg)), ("stream", ctypes.c_void_p),
        ("device", ctypes.c_void_p), ("native_stream", ctypes.c_void_p), ("global_scratch", ctypes.c_void_p),
        ("profile_scratch", ctypes.c_void_p),
    ]


class VariantInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("index", ctypes.c_uint32), ("kernel", ctypes.c_void_p),
                ("config", ctypes.c_char_p), ("grid", ctypes.c_char_p)]


class TunerDesc(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("flags", ctypes.c_uint32), ("kernel", ctypes.c_void_p),
        ("variants", ctypes.POINTER(ctypes.c_void_p)), ("num_variants", ctypes.c_uint32),
        ("num_written", ctypes.c_uint32), ("written", ctypes.POINTER(ctypes.c_uint32)),
        # TRIDENT_1.6 (zero: as before)
        ("cache_dir", ctypes.c_char_p), ("identity", ctypes.c_void_p), ("identity_size", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32), ("log_name", ctypes.c_char_p), ("variant_noun", ctypes.c_char_p),
    ]


class TunedLaunch(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("key_size", ctypes.c_uint32), ("key", ctypes.c_void_p),
        ("launch", ctypes.POINTER(Launch)), ("grids", ctypes.POINTER(ctypes.c_uint32)),
        ("written_bytes", ctypes.POINTER(ctypes.c_uint64)),
        # TRIDENT_1.6 (NULL: the tuner launches each variant itself)
        ("launch_fn", ctypes.c_void_p), ("user", ctypes.c_void_p),
    ]


TENSOR_MAP_MAX_RANK = 5


class TensorMapDesc(ctypes.Structure):
    """trd_tensor_map_desc_t: a tiled tensor map (TMA), row-major, strides in elements (trd_tensor_map_check)."""
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("rank", ctypes.c_uint32), ("elem_type", ctypes.c_int32),
        ("elem_size", ctypes.c_uint32), ("base", ctypes.c_void_p),
        ("shape", ctypes.c_uint64 * TENSOR_MAP_MAX_RANK), ("strides", ctypes.c_uint64 * TENSOR_MAP_MAX_RANK),
        ("box", ctypes.c_uint32 * TENSOR_MAP_MAX_RANK), ("swizzle", ctypes.c_int32), ("oob_fill", ctypes.c_int32),
        ("l2_promotion", ctypes.c_int32), ("reserved", ctypes.c_uint32), ("label", ctypes.c_char_p),
    ]


def sized(cls):
    """A struct instance with struct_size set."""
    s = cls()
    s.struct_size = ctypes.sizeof(cls)
    return s


# name, restype, argtypes: every function this package calls
_PROTOTYPES = [
    ("trd_error_message", ctypes.c_char_p, []),
    ("trd_status_name", ctypes.c_char_p, [c_status]),
    ("trd_version_string", ctypes.c_char_p, []),
    ("trd_abi_version", ctypes.c_uint32, []),
    ("trd_runtime_shared", c_status, [ctypes.POINTER(ctypes.c_void_p)]),
    ("trd_runtime_cache_dir", c_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p)]),
    ("trd_runtime_device_count", c_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32)]),
    ("trd_runtime_device_get", c_status, [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p)]),
    ("trd_runtime_device_find", c_status, [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    ("trd_device_get_props", c_status, [ctypes.c_void_p, ctypes.POINTER(DeviceProps)]),
    ("trd_runtime_driver_count", c_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32)]),
    ("trd_runtime_driver_info", c_status, [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(DriverInfo)]),
    ("trd_backend_count", c_status, [ctypes.POINTER(ctypes.c_uint32)]),
    ("trd_backend_name", c_status, [ctypes.c_uint32, ctypes.POINTER(ctypes.c_char_p)]),
    ("trd_option_count", c_status, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint32)]),
    ("trd_option_info", c_status, [ctypes.c_char_p, ctypes.c_uint32, ctypes.POINTER(OptionInfo)]),
    ("trd_option_lookup", c_status, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(OptionInfo)]),
    ("trd_option_exists", c_status, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int32)]),
    ("trd_option_default", c_status, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.POINTER(ctypes.c_char_p)]),
    ("trd_option_releases", c_status, [ctypes.c_char_p, ctypes.POINTER(OptionReleases)]),
    ("trd_options_create", c_status, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    ("trd_options_destroy", None, [ctypes.c_void_p]),
    ("trd_options_set", c_status, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]),
    ("trd_options_get", c_status, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                   ctypes.POINTER(ctypes.c_size_t)]),
    ("trd_options_serialize", c_status, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                         ctypes.POINTER(ctypes.c_size_t)]),
    ("trd_kernel_create", c_status, [ctypes.c_void_p, ctypes.POINTER(KernelDesc), ctypes.POINTER(ctypes.c_void_p)]),
    ("trd_kernel_destroy", None, [ctypes.c_void_p]),
    ("trd_kernel_get_info", c_status, [ctypes.c_void_p, ctypes.POINTER(KernelInfo)]),
    ("trd_kernel_target_info", c_status, [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(TargetInfo)]),
    ("trd_kernel_scratch", c_status, [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32),
                                      ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64)]),
    ("trd_bundle_write", c_status, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(BundleTarget), ctypes.c_uint32,
                                    ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint64)]),
    ("trd_free", None, [ctypes.c_void_p]),
    # streams, events, buffers and launches (trident.jax's autotuner benchmarks with them)
    ("trd_stream_create", c_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
    ("trd_stream_destroy", None, [ctypes.c_void_p]),
    ("trd_stream_synchronize", c_status, [ctypes.c_void_p]),
    ("trd_event_create", c_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
    ("trd_event_destroy", None, [ctypes.c_void_p]),
    ("trd_event_record", c_status, [ctypes.c_void_p, ctypes.c_void_p]),
    ("trd_event_synchronize", c_status, [ctypes.c_void_p]),
    ("trd_event_elapsed", c_status, [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)]),
    ("trd_buffer_alloc", c_status, [ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_void_p)]),
    ("trd_buffer_free", None, [ctypes.c_void_p]),
    ("trd_buffer_address", c_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
    ("trd_buffer_write", c_status, [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p]),
    ("trd_buffer_read", c_status, [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p]),
    ("trd_buffer_fill", c_status, [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint8, ctypes.c_void_p]),
    ("trd_buffer_copy", c_status, [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p]),
    ("trd_kernel_supports", c_status, [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)]),
    ("trd_kernel_launch", c_status, [ctypes.c_void_p, ctypes.POINTER(Launch)]),
    # kernels of several variants and the tuner (TRIDENT_1.5)
    ("trd_kernel_variant_count", c_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32)]),
    ("trd_kernel_variant", c_status, [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(VariantInfo)]),
    ("trd_bundle_write_variants", c_status, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(BundleVariant),
                                             ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p),
                                             ctypes.POINTER(ctypes.c_uint64)]),
    ("trd_tuner_create", c_status, [ctypes.POINTER(TunerDesc), ctypes.POINTER(ctypes.c_void_p)]),
    ("trd_tuner_destroy", None, [ctypes.c_void_p]),
    ("trd_tuner_launch", c_status, [ctypes.c_void_p, ctypes.POINTER(TunedLaunch), ctypes.POINTER(ctypes.c_uint32)]),
    ("trd_tuner_benchmark", c_status, [ctypes.c_void_p, ctypes.POINTER(TunedLaunch), ctypes.POINTER(ctypes.c_double),
                                       ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]),
    # what a tensor map may be (TRIDENT_1.6): the CUDA driver's rule, which trident.jax checks descriptors by
    ("trd_tensor_map_check", c_status, [ctypes.POINTER(TensorMapDesc)]),
]

# libtrident_xla's (abi: xla/trident/xla.h)
_XLA_PROTOTYPES = [
    ("trd_xla_cuda_type_id", ctypes.c_void_p, []),
    ("trd_xla_rocm_type_id", ctypes.c_void_p, []),
    ("trd_xla_cpu_type_id", ctypes.c_void_p, []),
    ("trd_xla_type_info", ctypes.c_void_p, []),
    ("trd_xla_available", ctypes.c_int32, []),
]


# a wheel's own native part (scripts/build-wheel.sh): libtrident, libtrident_xla, the drivers beside them in
# trident/drivers and the CLI in bin/
NATIVE = Path(__file__).resolve().parent / "_native"


def _candidates():
    yield NATIVE / "libtrident.so.1"
    env = os.environ.get("TRIDENT_LIBRARY")
    if env:
        yield Path(env)
        return
    here = Path(__file__).resolve().parent
    # a build tree: the source tree itself, or build*/ beside it
    src = here.parent.parent
    for build in [src, *sorted(src.glob("build*")), *sorted(src.glob(".device/build"))]:
        yield build / "core" / ".libs" / "libtrident.so.1"
    found = ctypes.util.find_library("trident")
    if found:
        yield Path(found)
    for prefix in ("/usr/local/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu"):
        yield Path(prefix) / "libtrident.so.1"


def _xla_candidates(trident: Path):
    # the order of _candidates: a wheel's own first (its libtrident_xla belongs to its libtrident), then the variable
    if trident.parent == NATIVE:
        yield NATIVE / "libtrident_xla.so.1"
    env = os.environ.get("TRIDENT_XLA_LIBRARY")
    if env:
        yield Path(env)
        return
    # beside libtrident: installed in one directory, or a build tree's xla/.libs beside core/.libs
    yield trident.parent / "libtrident_xla.so.1"
    if trident.parent.name == ".libs" and trident.parent.parent.name == "core":
        yield trident.parent.parent.parent / "xla" / ".libs" / "libtrident_xla.so.1"
    found = ctypes.util.find_library("trident_xla")
    if found:
        yield Path(found)


def _load(candidates, prototypes):
    """The first of the candidates that loads, its functions typed; the list of what was tried otherwise."""
    tried = []
    for path in candidates:
        if not path.exists() and os.sep in str(path):
            tried.append(f"{path} (missing)")
            continue
        try:
            handle = ctypes.CDLL(str(path))
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        for name, res, args in prototypes:
            fn = getattr(handle, name)
            fn.restype, fn.argtypes = res, args
        handle.path = str(path)
        return handle, tried
    return None, tried


_lib = None
_xla_lib = None
_lock = threading.Lock()


def lib():
    """libtrident, loaded once: the wheel's own, else TRIDENT_LIBRARY, a build tree, or the system's."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        handle, tried = _load(_candidates(), _PROTOTYPES)
        if handle is None:
            raise OSError("libtrident not found; set TRIDENT_LIBRARY. Tried: " + "; ".join(tried))
        _lib = handle
        return _lib


def xla_lib():
    """libtrident_xla, the XLA handlers, loaded once after libtrident (whose soname it links, so that both share
    one runtime): TRIDENT_XLA_LIBRARY, beside libtrident (installed, or in its build tree), or the system's."""
    global _xla_lib
    if _xla_lib is not None:
        return _xla_lib
    trident = Path(lib().path)
    with _lock:
        if _xla_lib is None:
            handle, tried = _load(_xla_candidates(trident), _XLA_PROTOTYPES)
            if handle is None:
                raise OSError("libtrident_xla (the XLA handlers) not found: it is built where configure finds "
                              "jaxlib's FFI header (--enable-xla); set TRIDENT_XLA_LIBRARY. Tried: " + "; ".join(tried))
            _xla_lib = handle
        return _xla_lib


def check(status: int):
    """Raises TridentError for a failed call."""
    if status != Status.OK:
        L = lib()
        raise TridentError(L.trd_status_name(status).decode(), L.trd_error_message().decode(errors="replace"))


def s(value: bytes | None) -> str | None:
    return value.decode(errors="replace") if value is not None else None
