# SPDX-License-Identifier: Apache-2.0
"""A Python function as an XLA FFI handler on the CPU platform, through ctypes.

jax.pure_callback and io_callback hand a callback NumPy copies of nothing
worse than its inputs, but they return results by copying them into XLA's
buffers and know no input_output_aliases, so a kernel that updates an input
in place would get a copy to update. A typed-FFI handler sees XLA's own
buffers instead: the operands', and the results', which for an aliased result
are the operand's (XLA copies a non-donated operand into it first). So the
handler registered here is a ctypes function with the C signature XLA calls
(`XLA_FFI_Error *handler(XLA_FFI_CallFrame *)`, xla/ffi/api/c_api.h); it
decodes the call frame (buffers as addresses and shapes, string and integer
attributes), calls the Python function with the GIL held (ctypes takes it),
and turns an exception into an XLA FFI error, which JAX raises as
jax.errors.JaxRuntimeError with the message. The call frame's layout is the
C API's (version 0.x, whose structs only ever grow at their end); the
handler answers XLA's metadata query with the API version it was written
against and no traits.

The C handlers of libtrident are registered by protocol.py; this module is
for work that has to run Python at execution (Triton's interpreter,
interpret.py).
"""
from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import Any, Callable

import jax

_c_size, _c_void = ctypes.c_size_t, ctypes.c_void_p
_enum = ctypes.c_int                      # C enums are ints in the ABIs jaxlib ships for

# XLA_FFI_* constants (c_api.h; tests/test_c_abi.py holds them, DTYPES and the structs below to it)
_EXTENSION_METADATA = 1
_STAGE_EXECUTE = 3
_ATTR_SCALAR, _ATTR_STRING = 3, 4
_API_MAJOR, _API_MINOR = 0, 1             # what this decoding needs: Error_Create and the call frame
OK, INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, INTERNAL, UNKNOWN = 0, 3, 5, 9, 13, 2

# XLA_FFI_DataType -> NumPy dtype name
DTYPES = {1: "bool", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "uint8", 7: "uint16", 8: "uint32",
          9: "uint64", 10: "float16", 11: "float32", 12: "float64", 16: "bfloat16", 15: "complex64",
          18: "complex128", 19: "float8_e5m2", 20: "float8_e4m3fn", 24: "float8_e5m2fnuz", 25: "float8_e4m3fnuz"}
_INT_SCALARS = {2: ctypes.c_int8, 3: ctypes.c_int16, 4: ctypes.c_int32, 5: ctypes.c_int64, 6: ctypes.c_uint8,
                7: ctypes.c_uint16, 8: ctypes.c_uint32, 9: ctypes.c_uint64, 1: ctypes.c_bool}


class _ExtensionBase(ctypes.Structure):
    _fields_ = [("struct_size", _c_size), ("type", _enum), ("next", _c_void)]


class _ApiVersion(ctypes.Structure):
    _fields_ = [("struct_size", _c_size), ("extension_start", _c_void), ("major_version", ctypes.c_int),
                ("minor_version", ctypes.c_int)]


class _ErrorCreateArgs(ctypes.Structure):
    _fields_ = [("struct_size", _c_size), ("extension_start", _c_void), ("message", ctypes.c_char_p),
                ("errc", _enum)]


_ErrorCreate = ctypes.CFUNCTYPE(_c_void, ctypes.POINTER(_ErrorCreateArgs))


class _Api(ctypes.Structure):
    _fields_ = [("struct_size", _c_size), ("extension_start", _c_void), ("api_version", _ApiVersion),
                ("internal_api", _c_void), ("Error_Create", _ErrorCreate)]


class _Buffer(ctypes.Structure):
    _fields_ = [("struct_size", _c_size), ("extension_start", _c_void), ("dtype", _enum), ("data", _c_void),
                ("rank", ctypes.c_int64), ("dims", ctypes.POINTER(ctypes.c_int64))]


class _List(ctypes.Structure):
    """XLA_FFI_Args and XLA_FFI_Rets: the same layout."""
    _fields_ = [("struct_size", _c_size), ("extension_start", _c_void), ("size", ctypes.c_int64),
                ("types", ctypes.POINTER(_enum)), ("items", ctypes.POINTER(_c_void))]


class _ByteSpan(ctypes.Structure):
    _fields_ = [("ptr", _c_void), ("len", _c_size)]


class _Scalar(ctypes.Structure):
    _fields_ = [("dtype", _enum), ("value", _c_void)]


class _Attrs(ctypes.Structure):
    _fields_ = [("struct_size", _c_size), ("extension_start", _c_void), ("size", ctypes.c_int64),
                ("types", ctypes.POINTER(_enum)), ("names", ctypes.POINTER(ctypes.POINTER(_ByteSpan))),
                ("attrs", ctypes.POINTER(_c_void))]


class _CallFrame(ctypes.Structure):
    _fields_ = [("struct_size", _c_size), ("extension_start", ctypes.POINTER(_ExtensionBase)),
                ("api", ctypes.POINTER(_Api)), ("ctx", _c_void), ("stage", _enum), ("args", _List),
                ("rets", _List), ("attrs", _Attrs), ("future", _c_void)]


class _Metadata(ctypes.Structure):
    _fields_ = [("struct_size", _c_size), ("api_version", _ApiVersion), ("traits", ctypes.c_uint32),
                ("state_type_id", ctypes.c_int64)]


class _MetadataExtension(ctypes.Structure):
    _fields_ = [("extension_base", _ExtensionBase), ("metadata", ctypes.POINTER(_Metadata))]


_Handler = ctypes.CFUNCTYPE(_c_void, ctypes.POINTER(_CallFrame))


@dataclass(frozen=True)
class Buffer:
    """One of XLA's buffers as the handler sees it: its address (0 for an empty one), dtype and shape."""
    address: int
    dtype: str            # NumPy's name; "dtype<N>" for one this module does not name
    shape: tuple


class FfiError(Exception):
    """Raised by a handler's function: the call fails with this code (an XLA_FFI_Error_Code) and message."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _buffers(lst: _List) -> list[Buffer]:
    out = []
    for i in range(lst.size):
        b = ctypes.cast(lst.items[i], ctypes.POINTER(_Buffer)).contents
        out.append(Buffer(b.data or 0, DTYPES.get(b.dtype, f"dtype{b.dtype}"), tuple(b.dims[d] for d in range(b.rank))))
    return out


def _attributes(attrs: _Attrs) -> dict[str, Any]:
    """The string and integer attributes, by name (others are not decoded)."""
    out: dict[str, Any] = {}
    for i in range(attrs.size):
        span = attrs.names[i].contents
        name = ctypes.string_at(span.ptr, span.len).decode()
        if attrs.types[i] == _ATTR_STRING:
            s = ctypes.cast(attrs.attrs[i], ctypes.POINTER(_ByteSpan)).contents
            out[name] = ctypes.string_at(s.ptr, s.len) if s.len else b""
        elif attrs.types[i] == _ATTR_SCALAR:
            sc = ctypes.cast(attrs.attrs[i], ctypes.POINTER(_Scalar)).contents
            ctype = _INT_SCALARS.get(sc.dtype)
            if ctype is not None:
                out[name] = ctypes.cast(sc.value, ctypes.POINTER(ctype)).contents.value
    return out


def _metadata(address: int) -> None:
    """Answers XLA's query of the handler's API version and traits (none)."""
    m = ctypes.cast(address, ctypes.POINTER(_MetadataExtension)).contents.metadata.contents
    m.api_version = _ApiVersion(ctypes.sizeof(_ApiVersion), None, _API_MAJOR, _API_MINOR)
    m.traits = 0
    if m.struct_size >= ctypes.sizeof(_Metadata):
        m.state_type_id = 0


def _error(frame: _CallFrame, code: int, message: str) -> int:
    text = message.encode("utf-8", "replace")
    args = _ErrorCreateArgs(ctypes.sizeof(_ErrorCreateArgs), None, text, code)
    return frame.api.contents.Error_Create(ctypes.byref(args)) or 0   # XLA copies the message


def _handler_of(name: str, fn: Callable[[list[Buffer], list[Buffer], dict[str, Any]], None]) -> Any:
    def handler(frame_p: Any) -> int:
        try:
            frame = frame_p.contents
        except Exception:  # pragma: no cover - XLA always passes a frame
            return 0
        try:
            ext = frame.extension_start
            if ext and ext.contents.type == _EXTENSION_METADATA:
                _metadata(ctypes.addressof(ext.contents))
                return 0
            if frame.stage != _STAGE_EXECUTE:
                return 0
            fn(_buffers(frame.args), _buffers(frame.rets), _attributes(frame.attrs))
            return 0
        except FfiError as e:
            return _error(frame, e.code, str(e))
        except BaseException as e:  # noqa: BLE001 - nothing may unwind into XLA
            return _error(frame, UNKNOWN, f"{name}: {type(e).__name__}: {e}")
    return _Handler(handler)


_lock = threading.Lock()
_registered: dict[str, Any] = {}   # target -> its ctypes function, alive as long as the process (XLA keeps it)


def register_cpu_target(name: str, fn: Callable[[list[Buffer], list[Buffer], dict[str, Any]], None]) -> None:
    """Registers fn as the CPU platform's FFI target `name` (once a process; later calls do nothing). fn gets
    the operands' and the results' buffers and the attributes; it writes the results through their addresses,
    and raises FfiError (or any exception) to fail the call."""
    with _lock:
        if name in _registered:
            return
        h = _handler_of(name, fn)
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(h), platform="cpu")
        _registered[name] = h
