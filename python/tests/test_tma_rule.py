# SPDX-License-Identifier: Apache-2.0
"""What a tensor map may be has one owner, libtrident (trd_tensor_map_check, base/tensor_map.c, the rule the CUDA
driver encodes by). trident.jax holds no copy of it: its ctypes descriptor is trident.h's struct field for field
(at the offsets core/abi.c pins), the descriptor it makes of a `tma` record is the XLA handler's, and what it
refuses while lowering a call is exactly what libtrident refuses of that descriptor, beside what only the array
and the metadata say."""
import ctypes
import re

import numpy as np
import pytest

from conftest import SRC

import trident.jax.protocol as P
from trident._lib import TENSOR_MAP_MAX_RANK, TensorMapDesc, lib, sized
from trident.jax.errors import KernelCallError
from trident.jax.tensordesc import TensorDescriptor
from trident.jax.tma import tensor_map_desc, tma_record

TRIDENT_H = SRC / "abi" / "trident" / "trident.h"
ABI_C = SRC / "core" / "abi.c"
_CTYPES = {"uint32_t": ctypes.c_uint32, "int32_t": ctypes.c_int32, "uint64_t": ctypes.c_uint64,
           "void *": ctypes.c_void_p, "const char *": ctypes.c_char_p}


def test_ctypes_descriptor_is_the_headers():
    body = re.search(r"typedef struct trd_tensor_map_desc \{(.*?)\} trd_tensor_map_desc_t;", TRIDENT_H.read_text(),
                     re.S)
    assert body, "trd_tensor_map_desc_t is not in trident.h"
    body = re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S)
    fields = re.findall(r"^\s*((?:const )?\w+ \*?)\s*(\w+)(?:\[(\w+)\])?;", body, re.M)
    assert [name for _, name, _ in fields] == [name for name, _ in TensorMapDesc._fields_]
    for ctype, name, count in fields:
        want = _CTYPES[ctype.strip()]
        if count:
            assert count == "TRD_TENSOR_MAP_MAX_RANK"
            want = want * TENSOR_MAP_MAX_RANK
        got = dict(TensorMapDesc._fields_)[name]
        assert ctypes.sizeof(got) == ctypes.sizeof(want) and getattr(got, "_type_", None) == getattr(
            want, "_type_", None), f"{name}: {got} is not {ctype}"
    assert TENSOR_MAP_MAX_RANK == P.TMA_MAX_RANK
    # the offsets and size core/abi.c pins with static assertions
    pinned = re.findall(r"ABI_ASSERT\(offsetof\(trd_tensor_map_desc_t, (\w+)\) == (\d+)\);", ABI_C.read_text())
    assert pinned
    for name, offset in pinned:
        assert getattr(TensorMapDesc, name).offset == int(offset), name
    size = re.search(r"ABI_ASSERT\(sizeof\(trd_tensor_map_desc_t\) == (\d+)\);", ABI_C.read_text())
    assert ctypes.sizeof(TensorMapDesc) == int(size.group(1))


def _desc(rank, elem_type, elem_size, shape, strides, box, swizzle=0, nan=False):
    """The descriptor as trd_tensor_map_desc_t documents it, built here by hand (not by trident.jax)."""
    d = sized(TensorMapDesc)
    d.rank, d.elem_type, d.elem_size, d.swizzle, d.oob_fill, d.l2_promotion = rank, elem_type, elem_size, swizzle, \
        int(nan), 2
    for i in range(rank):
        d.shape[i], d.strides[i], d.box[i] = shape[i], strides[i], box[i]
    return d


def _owner(d) -> str:
    """libtrident's verdict: "" or its message."""
    L = lib()
    return "" if L.trd_tensor_map_check(ctypes.byref(d)) == 0 else L.trd_error_message().decode()


_F16 = {"elem_size": 2, "elem_type": 6}
_U8 = {"elem_size": 1, "elem_type": 0}
_FP4 = {"elem_size": 1, "elem_type": 14, "fp4_padded": True}
# (dtype, array shape, descriptor shape, strides, its metadata (block_size, swizzle, ...), padding, the map's
# descriptor as CUDA sees it: shape (fp4: values), and libtrident's problem or "")
CASES = [
    (np.float16, (128, 256), (128, 256), (256, 1), dict(_F16, block_size=[64, 64], swizzle=3), "zero",
     (128, 256), ""),
    (np.float16, (128, 256), (128, 100), (100, 1), dict(_F16, block_size=[64, 64], swizzle=3), "zero",
     (128, 100), "strides[0] is 200 bytes, not a multiple of 16"),
    (np.float16, (128, 256), (128, 128), (256, 2), dict(_F16, block_size=[64, 64], swizzle=3), "zero",
     (128, 128), "the innermost stride (strides[1]) is 2"),
    (np.float16, (64, 64), (64, 64), (64, 1), dict(_F16, block_size=[16, 4], swizzle=0), "zero",
     (64, 64), "the innermost block is 8 bytes, not a multiple of 16"),
    (np.float16, (128, 256), (128, 256), (256, 1), dict(_F16, block_size=[64, 128], swizzle=3), "zero",
     (128, 256), "the innermost block is 256 bytes, more than the 128 bytes swizzle 3 spans"),
    (np.uint8, (64, 256), (64, 256), (256, 1), dict(_U8, block_size=[8, 128], swizzle=0), "nan",
     (64, 256), "NaN padding needs a floating-point element type, not UINT8"),
    (np.uint8, (64, 256), (64, 0), (256, 1), dict(_U8, block_size=[8, 128], swizzle=0), "zero",
     (64, 0), "shape[1] = 0 is outside 1 .. 2^32"),
    # fp4 two to a byte (16U4_ALIGN16B): rows 96 bytes apart are encoded, 80 (16-byte, not 32) are not: before
    # libtrident owned the rule trident.jax and the XLA handler accepted these, and the driver refused them
    (np.uint8, (4, 96), (4, 64), (96, 1), dict(_FP4, block_size=[4, 128], swizzle=0), "zero", (4, 128), ""),
    (np.uint8, (4, 80), (4, 64), (80, 1), dict(_FP4, block_size=[4, 128], swizzle=0), "zero",
     (4, 128), "strides[0] is 80 bytes, not a multiple of 32"),
    (np.uint8, (4, 96), (4, 32), (96, 1), dict(_FP4, block_size=[4, 128], swizzle=0), "zero",
     (4, 64), "16U4_ALIGN16B needs the innermost dimension a multiple of 128, not 64"),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_trident_jax_refuses_what_libtrident_refuses(case):
    dtype, array, shape, strides, meta, padding, map_shape, problem = CASES[case]
    d = _desc(len(shape), meta["elem_type"], meta["elem_size"], map_shape, strides, meta["block_size"],
              meta["swizzle"], padding == "nan")
    said = _owner(d)
    assert (problem in said) if problem else said == "", said
    desc = TensorDescriptor(np.zeros(array, dtype), shape, strides, meta["block_size"], padding=padding)
    if not problem:
        record = tma_record("t", desc, meta)
        assert bytes(tensor_map_desc(record, "t"))[:TensorMapDesc.label.offset] == bytes(d)[:TensorMapDesc.label.offset]
        return
    with pytest.raises(KernelCallError) as e:
        tma_record("t", desc, meta)
    assert str(e.value).startswith("t (shape [") and said.split(": ", 1)[1] in str(e.value)


def test_a_value_the_descriptor_cannot_hold_is_named():
    record = [0] * P.TMA_FIELDS
    record[P.TMA_RANK], record[P.TMA_ELEM_SIZE] = 2, 2
    record[P.TMA_STRIDES] = -80
    with pytest.raises(KernelCallError, match=r"t: strides\[0\] = -80 is outside 0 \.\. 9223372036854775807"):
        tensor_map_desc(record, "t")
    record[P.TMA_STRIDES], record[P.TMA_BLOCK + 1] = 80, 2**32
    with pytest.raises(KernelCallError, match=r"t: block\[1\] = 4294967296 is outside 0 \.\. 4294967295"):
        tensor_map_desc(record, "t")
