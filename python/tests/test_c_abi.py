# SPDX-License-Identifier: Apache-2.0
"""What Python restates of C is held to C: trident._lib's ctypes structs field by field (names in order, offset,
size) and its enums to abi/trident/trident.h, trident's table of image formats to base/formats.c's, and
trident.jax.host_ffi's structs and numbers to XLA's FFI C API (xla/ffi/api/c_api.h of the installed jaxlib).
The layouts come from a C program built against the header (c_probe.py)."""
import ctypes
import re
from pathlib import Path

import pytest

import c_probe
from conftest import BUILD, SRC

import trident
import trident._lib as L

TRIDENT_H = SRC / "abi" / "trident" / "trident.h"


@pytest.fixture(scope="module")
def trident_dirs(tmp_path_factory):
    """The include directories of trident.h: the source tree's abi/ and the build tree's (its trident/version.h);
    without a build tree (an installed wheel's suite on the GPU machine), a stand-in version.h (trident.h declares
    nothing with its numbers)."""
    if (BUILD / "abi" / "trident" / "version.h").exists():
        return [SRC / "abi", BUILD / "abi"]
    inc = tmp_path_factory.mktemp("include")
    (inc / "trident").mkdir()
    (inc / "trident" / "version.h").write_text(
        "".join(f"#define TRD_VERSION_{k} 0\n" for k in ("MAJOR", "MINOR", "PATCH"))
        + f"#define TRD_ABI_VERSION {L.lib().trd_abi_version()}\n")
    return [SRC / "abi", inc]


def _c_type(cls: type) -> str:
    """trd_device_props_t for DeviceProps: trident.h's name of a _lib struct."""
    return "trd_" + re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower() + "_t"


# the structs and unions of _lib: (C type, struct tag, union member) where the name does not say
_UNNAMED = {"ArgValue": ("__typeof__(((trd_arg_t *)0)->value)", "trd_arg", "value")}

# _lib's enums: C enum tag, prefix of its constants
_ENUMS = {L.Status: ("trd_status_code", "TRD_"), L.OptionStage: ("trd_option_stage", "TRD_STAGE_"),
          L.OptionFlag: ("trd_option_flags", "TRD_OPTION_"), L.DriverStatus: ("trd_driver_status", "TRD_DRIVER_"),
          L.DeviceKind: ("trd_device_kind", "TRD_DEVICE_"), L.DeviceFlag: ("trd_device_flags", "TRD_DEVICE_"),
          L.KernelSource: ("trd_kernel_source", "TRD_SOURCE_"), L.Format: ("trd_image_format", "TRD_FORMAT_"),
          L.ArgKind: ("trd_arg_kind", "TRD_ARG_")}


def _lib_classes(base: type) -> list[type]:
    return [c for c in vars(L).values()
            if isinstance(c, type) and issubclass(c, base) and c.__module__ == L.__name__]


def test_every_ctypes_struct_is_trident_h_field_by_field(trident_dirs):
    header = TRIDENT_H.read_text()
    structs = _lib_classes(ctypes.Structure) + _lib_classes(ctypes.Union)
    assert len(structs) >= 15
    exprs, expected = [], []
    for cls in structs:
        c_type, tag, union = _UNNAMED.get(cls.__name__, (_c_type(cls), _c_type(cls)[:-2], None))
        names = [f[0] for f in cls._fields_]
        assert names == c_probe.members(header, tag, union), f"{cls.__name__}: the members of {c_type}"
        exprs += c_probe.layout_exprs(c_type, names)
        expected += [(cls.__name__, what) for what in ["sizeof"] + [f"{n}.{k}" for n in names
                                                                   for k in ("offset", "size")]]
    got = c_probe.values(["<trident/trident.h>"], trident_dirs, exprs)
    ours = [v for cls in structs for v in c_probe.py_layout(cls)]
    wrong = [f"{cls}.{what}: C {c}, ctypes {p}" for (cls, what), c, p in zip(expected, got, ours) if c != p]
    assert not wrong, "\n".join(wrong)


def test_every_enum_is_trident_h(trident_dirs):
    header = TRIDENT_H.read_text()
    exprs, ours = [], []
    for enum, (tag, prefix) in _ENUMS.items():
        assert [prefix + m.name for m in enum] == c_probe.enumerators(header, tag), f"{enum.__name__}: enum {tag}"
        exprs += [prefix + m.name for m in enum]
        ours += [int(m) for m in enum]
    assert c_probe.values(["<trident/trident.h>"], trident_dirs, exprs) == ours


def test_status_names_are_libtridents():
    """Without a compiler too: libtrident names each status as Status does, and knows no other."""
    for st in L.Status:
        assert L.lib().trd_status_name(st).decode() == "TRD_" + st.name
    assert L.lib().trd_status_name(len(L.Status)).decode() == "TRD_ERR_UNKNOWN"


def test_format_table_is_base_formats_c():
    """trident's table of image formats is base/formats.c's (libtrident's and the CLI's), row by row (the enum
    constants by name)."""
    rows = re.findall(r'\{TRD_FORMAT_(\w+), "([^"]*)", "([^"]*)", "([^"]*)"\}', (SRC / "base" / "formats.c").read_text())
    assert rows, "base/formats.c has no format table"
    assert [(f.name, n, b, e) for f, n, b, e in trident._FORMAT_TABLE] == rows
    # every known format has a row; UNKNOWN has none
    assert {f for f, *_ in trident._FORMAT_TABLE} == set(L.Format) - {L.Format.UNKNOWN}


# trident.jax.host_ffi's structs: the C API's struct tag, and the C names of members named otherwise
# XLA_FFI_Extension_Base became XLA_FFI_InternalExtension in FFI API 0.4 (jaxlib 0.11), one layout under both
_FFI_STRUCTS = {"_ExtensionBase": (("XLA_FFI_InternalExtension", "XLA_FFI_Extension_Base"), {}), "_ApiVersion": ("XLA_FFI_Api_Version", {}),
                "_ErrorCreateArgs": ("XLA_FFI_Error_Create_Args", {}),
                "_Api": ("XLA_FFI_Api", {"Error_Create": "XLA_FFI_Error_Create"}),
                "_Buffer": ("XLA_FFI_Buffer", {}), "_ByteSpan": ("XLA_FFI_ByteSpan", {}),
                "_Scalar": ("XLA_FFI_Scalar", {}), "_Attrs": ("XLA_FFI_Attrs", {}),
                "_CallFrame": ("XLA_FFI_CallFrame", {}), "_Metadata": ("XLA_FFI_Metadata", {}),
                "_MetadataExtension": ("XLA_FFI_Metadata_Extension", {})}
# _List is both XLA_FFI_Args and XLA_FFI_Rets (one layout)
_FFI_LISTS = {"XLA_FFI_Args": {"items": "args"}, "XLA_FFI_Rets": {"items": "rets"}}


def _ffi_header():
    jax_ffi = pytest.importorskip("jax.ffi")
    inc = Path(jax_ffi.include_dir())
    h = inc / "xla" / "ffi" / "api" / "c_api.h"
    if not h.exists():
        pytest.skip(f"jaxlib's FFI header {h} is not installed")
    return inc, h.read_text()


def _xla_dtype(numpy_name: str) -> str:
    """XLA's name of a NumPy dtype: bool PRED, int32 S32, uint8 U8, bfloat16 BF16, complex64 C64, float8_e4m3fn
    F8E4M3FN."""
    if numpy_name == "bool":
        return "PRED"
    m = re.fullmatch(r"(uint|int|bfloat|float|complex)(\d+)(?:_(\w+))?", numpy_name)
    assert m, numpy_name
    kind = {"uint": "U", "int": "S", "bfloat": "BF", "float": "F", "complex": "C"}[m.group(1)]
    return kind + m.group(2) + (m.group(3) or "").upper()


def test_host_ffi_is_xlas_ffi_c_api():
    """host_ffi's structs begin as the C API's (which only grow at their end): the same members in order, at the
    same offsets, of the same sizes; its numbers are the C API's constants."""
    import numpy as np

    import trident.jax.host_ffi as F

    inc, header = _ffi_header()
    structs = [c for c in vars(F).values() if isinstance(c, type) and issubclass(c, ctypes.Structure)
               and c.__module__ == F.__name__]
    assert {c.__name__ for c in structs} == set(_FFI_STRUCTS) | {"_List"}
    checked = [(cls, tag, renames) for cls in structs for tag, renames in
               ([_FFI_STRUCTS[cls.__name__]] if cls.__name__ != "_List" else _FFI_LISTS.items())]
    exprs, ours, what = [], [], []
    for cls, tag, renames in checked:
        names = [renames.get(f[0], f[0]) for f in cls._fields_]
        if isinstance(tag, tuple):   # the name this header gives it
            tag = next((t for t in tag if re.search(r"struct\s+" + t + r"\s*\{", header)), tag[-1])
        c_members = c_probe.members(header, tag)
        assert names == c_members[:len(names)], f"{cls.__name__}: the first members of {tag}"
        layout = c_probe.layout_exprs(f"struct {tag}", names)
        exprs += layout[1:]
        ours += c_probe.py_layout(cls)[1:]
        what += [f"{cls.__name__} ({tag}).{n}.{k}" for n in names for k in ("offset", "size")]
        exprs.append(f"sizeof(struct {tag}) >= {ctypes.sizeof(cls)}")
        ours.append(1)
        what.append(f"{cls.__name__} ({tag}): no larger than the C struct")
    constants = {"XLA_FFI_Extension_Metadata": F._EXTENSION_METADATA,
                 "XLA_FFI_ExecutionStage_EXECUTE": F._STAGE_EXECUTE,
                 "XLA_FFI_AttrType_SCALAR": F._ATTR_SCALAR, "XLA_FFI_AttrType_STRING": F._ATTR_STRING,
                 **{f"XLA_FFI_Error_Code_{n}": getattr(F, n)
                    for n in ("OK", "INVALID_ARGUMENT", "NOT_FOUND", "FAILED_PRECONDITION", "INTERNAL", "UNKNOWN")},
                 **{f"XLA_FFI_DataType_{_xla_dtype(n)}": k for k, n in F.DTYPES.items()}}
    exprs += list(constants)
    ours += list(constants.values())
    what += list(constants)
    got = c_probe.values(['"xla/ffi/api/c_api.h"'], [inc], exprs)
    wrong = [f"{w}: C {c}, Python {p}" for w, c, p in zip(what, got, ours) if c != p]
    assert not wrong, "\n".join(wrong)
    # the scalars read as integers: dtypes host_ffi names, each of its size
    for k, ctype in F._INT_SCALARS.items():
        assert np.dtype(F.DTYPES[k]).itemsize == ctypes.sizeof(ctype), F.DTYPES[k]
