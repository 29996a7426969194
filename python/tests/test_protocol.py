# SPDX-License-Identifier: Apache-2.0
"""The call protocol has one description: trident.jax.protocol's numbers are xla/trident/xla.h's (the target,
the state type, the attribute versions, the argument kinds, the tma record's fields), and what trident.jax sends
is built from them: a record's values sit where the header says, a lowered call's kinds are the header's."""
import re

import numpy as np

from conftest import SRC, kernel

import trident.jax.protocol as P

XLA_H = SRC / "xla" / "trident" / "xla.h"
TRIDENT_H = SRC / "abi" / "trident" / "trident.h"


def _enum(text: str, name: str) -> dict[str, int]:
    body = re.search(r"enum\s+" + name + r"\s*\{(.*?)\};", text, re.S)
    assert body, f"enum {name} not in the header"
    body = re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S)
    return {k: int(v) for k, v in re.findall(r"(\w+)\s*=\s*(\d+)", body)}


def _defines(text: str) -> dict[str, str]:
    return dict(re.findall(r"^#define\s+(TRD_\w+)\s+(\S+)", text, re.M))


def test_protocol_module_is_the_header():
    text = XLA_H.read_text()
    d = _defines(text)
    assert P.TARGET == d["TRD_XLA_TARGET"].strip('"')
    assert P.TARGET_RECORD == d["TRD_XLA_TARGET_RECORD"].strip('"')
    assert P.STATE_TYPE == d["TRD_XLA_STATE_TYPE"].strip('"')
    assert P.CALL_VERSION == int(d["TRD_XLA_VERSION_CALL"])
    assert P.AUTOTUNE_VERSION == int(d["TRD_XLA_VERSION_AUTOTUNE"])
    assert d["TRD_XLA_CALL_VERSION"] == "TRD_XLA_VERSION_AUTOTUNE"   # the newest the handlers read
    kinds = _enum(text, "trd_xla_arg_kind")
    assert kinds == {f"TRD_XLA_ARG_{k}": getattr(P, f"ARG_{k}") for k in
                     ("OPERAND", "RESULT", "SCALAR", "NULL", "TENSOR_MAP")}
    fields = _enum(text, "trd_xla_tma_field")
    ours = {f"TRD_XLA_{k}": v for k, v in vars(P).items() if k.startswith("TMA_") and k != "TMA_MAX_RANK"}
    assert fields == ours
    assert P.TMA_MAX_RANK == int(_defines(TRIDENT_H.read_text())["TRD_TENSOR_MAP_MAX_RANK"])
    # the record's spans fit: shape, strides and block hold a value per dimension, the reserved field is last
    assert P.TMA_STRIDES - P.TMA_SHAPE == P.TMA_BLOCK - P.TMA_STRIDES == P.TMA_RESERVED - P.TMA_BLOCK == P.TMA_MAX_RANK
    assert P.TMA_FIELDS == P.TMA_RESERVED + 1


def test_tma_record_puts_each_value_where_the_header_says():
    from trident.jax.tensordesc import TensorDescriptor
    from trident.jax.tma import tma_record

    base = np.zeros((100, 80), np.float16)
    desc = TensorDescriptor(base, shape=[100, 72], strides=[80, 1], block_shape=[32, 64])
    meta = {"block_size": [32, 64], "elem_size": 2, "swizzle": 3, "elem_type": 6}
    r = tma_record("t", desc, meta)
    assert len(r) == P.TMA_FIELDS
    assert (r[P.TMA_BASE], r[P.TMA_ELEM_TYPE], r[P.TMA_ELEM_SIZE], r[P.TMA_RANK]) == (0, 6, 2, 2)
    assert (r[P.TMA_SWIZZLE], r[P.TMA_OOB_FILL], r[P.TMA_FP4_PADDED], r[P.TMA_L2_PROMOTION]) == (3, 0, 0, 2)
    assert r[P.TMA_SHAPE:P.TMA_SHAPE + 5] == [100, 72, 0, 0, 0]
    assert r[P.TMA_STRIDES:P.TMA_STRIDES + 5] == [80, 1, 0, 0, 0]
    assert r[P.TMA_BLOCK:P.TMA_BLOCK + 5] == [32, 64, 0, 0, 0]
    assert r[P.TMA_RESERVED] == 0


def test_handlers_come_from_libtrident_xla():
    from trident._lib import lib, xla_lib

    L = xla_lib()
    assert "libtrident_xla" in L.path
    assert L.trd_xla_available() == 1
    # libtrident itself exports no handler: it is the same library with or without jaxlib
    assert not hasattr(lib(), "trd_xla_available")
    assert "cpu" in P.register()


def test_lowered_kinds_are_the_headers():
    import jax
    import jax.numpy as jnp
    from trident.jax.call import _lower

    k = kernel("add_kernel")   # x:*fp32, y:*fp32, out:*fp32, n:i32
    x = jnp.ones(8, jnp.float32)
    low = _lower(k, (x, None, 8), jax.ShapeDtypeStruct((8,), jnp.float32), None, [2])
    assert low.kinds == [P.ARG_OPERAND, P.ARG_NULL, P.ARG_RESULT, P.ARG_SCALAR]
