# SPDX-License-Identifier: Apache-2.0
"""Host tensor descriptors that Triton lowers to TMA (sm90): the tensor-map
parameter (arg_kind 4) and the `tma` attribute that kernel_call emits for
them, their checks and error messages, compiled for sm90 without a GPU (the
custom call is replaced by a recorder); the real handler refusing them on CPU;
and real kernels taking host TensorDescriptors, on JAX's CPU platform
(through Triton's interpreter, which reads the descriptors itself) and on a
GPU (skipped without one; TMA on sm90): tiled copies of several dtypes and
ranks, a matmul, NaN padding, under jax.jit (with XLA's command buffers on a
GPU), every element checked against jnp. Autotuned: the configs'
per-candidate records (their block shapes set by the configs' pre_hooks,
Triton's idiom); on a GPU every config benchmarked and run with its own
maps, on CPU every config run in turn (cpu_kernels(config=i))."""
from __future__ import annotations

import json
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import triton
import triton.language as tl

import trident.jax as jt
from conftest import kernel as fixture_kernel
from trident.jax import cache as jt_cache
from trident.jax import lowering as jt_lowering

SM90 = "sm90"
FIELDS = 24


def on_cpu() -> bool:
    return jax.default_backend() == "cpu"


@triton.jit
def copy2d(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    out_desc.store([m, n], in_desc.load([m, n]))


@triton.jit
def copy3d(in_desc, out_desc, BB: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    b = tl.program_id(2) * BB
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    out_desc.store([b, m, n], in_desc.load([b, m, n]))


@triton.jit
def matmul_desc(a_desc, b_desc, M, N, K, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([k, pid_n * BN])
        acc = tl.dot(a, b, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def load_padded(in_desc, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """Writes every block the descriptor reads, out-of-bounds elements included (as the padding gives them)."""
    m = tl.program_id(0) * BM
    x = in_desc.load([m, 0])
    rm = m + tl.arange(0, BM)
    tl.store(out_ptr + rm[:, None] * BN + tl.arange(0, BN)[None, :], x)


class FakeCall:
    """jax.ffi.ffi_call replaced: records the operands and attributes of each call."""

    def __init__(self):
        self.calls = []

    def __call__(self, target, results, **kw):
        def call(*operands, **attrs):
            self.calls.append(dict(operands=operands, attrs=attrs, **kw))
            return [jnp.zeros(r.shape, r.dtype) for r in results]
        return call


@pytest.fixture
def ffi(monkeypatch):
    fake = FakeCall()
    monkeypatch.setattr(jax.ffi, "ffi_call", fake)
    return fake


def records(attrs) -> list[list[int]]:
    t = [int(v) for v in attrs["tma"]]
    assert len(t) % FIELDS == 0
    return [t[i:i + FIELDS] for i in range(0, len(t), FIELDS)]


def record(elem_type, elem_size, swizzle, shape, strides, block, nan=0, fp4=0, base=0):
    five = lambda v: list(v) + [0] * (5 - len(v))  # noqa: E731
    return [base, elem_type, elem_size, len(shape), swizzle, nan, fp4, 2] + five(shape) + five(strides) + \
        five(block) + [0]


def compiled_copy(dtype, shape, block):
    """The sm90 kernel triton_call compiles for a tiled copy (its kernel_call replaced for the while)."""
    got = []
    real = jt_lowering.emit
    jax.clear_caches()
    jt_lowering.emit = lambda k, *a, out_shape, **kw: got.append(k) or [jnp.zeros(s.shape, s.dtype)
                                                                              for s in out_shape]
    try:
        x = jnp.zeros(shape, dtype)
        with jt.targets(SM90):
            jt.triton_call(jt.TensorDescriptor.from_array(x, block), jt.TensorDescriptor.from_array(x, block),
                           kernel=copy2d, out_shape=x, input_output_aliases={1: 0}, grid=(1, 1), BM=block[0],
                           BN=block[1])
    finally:
        jt_lowering.emit = real
    return got[0]


# ----------------------------------------------------------- attributes (CPU)

def test_tiled_copy_attributes(ffi):
    x = jnp.zeros((128, 256), jnp.float16)
    out = jnp.zeros((128, 256), jnp.float16)
    with jt.targets(SM90):
        jt.triton_call(jt.TensorDescriptor.from_array(x, [64, 128]), jt.TensorDescriptor.from_array(out, [64, 128]),
                       kernel=copy2d, out_shape=out, input_output_aliases={1: 0}, grid=(2, 2), BM=64, BN=128)
    c = ffi.calls[0]
    a = c["attrs"]
    assert list(a["arg_kind"]) == [4, 2, 2, 2, 2, 4, 2, 2, 2, 2]
    assert list(a["arg_index"]) == [0, 0, 0, 0, 0, 1, 0, 0, 0, 0]
    assert [o.shape for o in c["operands"]] == [(128, 256), (128, 256)]
    assert c["input_output_aliases"] == {1: 0}
    # Triton splits the 64 x 128 block into 64 x 64 boxes (128 bytes, the 128-byte swizzle): the box is the
    # metadata's block_size, not the descriptor's block_shape
    want = record(6, 2, 3, [128, 256], [256, 1], [64, 64])
    assert records(a) == [want, want]
    # the shape (i32) and strides (i64) after each map are plain scalars
    assert a["scalars"] == (np.array([128, 256], "<i4").tobytes() + np.array([256, 1], "<i8").tobytes()) * 2


@pytest.mark.parametrize("dtype, block, elem_type, elem_size, swizzle", [
    (jnp.bfloat16, [16, 64], 9, 2, 3),      # Triton's elem_type 10 (PTX numbering) is CUDA's BFLOAT16, 9
    (jnp.float32, [8, 8], 7, 4, 1),         # 32-byte rows: the 32-byte swizzle
    (jnp.uint8, [8, 128], 0, 1, 3),
])
def test_element_types_and_swizzle(ffi, dtype, block, elem_type, elem_size, swizzle):
    x = jnp.zeros((64, 256), dtype)
    with jt.targets(SM90):
        jt.triton_call(jt.TensorDescriptor.from_array(x, block), jt.TensorDescriptor.from_array(x, block),
                       kernel=copy2d, out_shape=x, input_output_aliases={1: 0}, grid=(1, 1), BM=block[0],
                       BN=block[1])
    assert records(ffi.calls[0]["attrs"])[0] == record(elem_type, elem_size, swizzle, [64, 256], [256, 1], block)


def test_nan_padding_tf32_rounding_and_strided_views(ffi):
    x = jnp.zeros((64, 48), jnp.float32)
    # a 40 x 32 window of x's rows: strides of the whole array, the shape of the window
    src = jt.TensorDescriptor(x, (40, 32), (48, 1), (8, 8), padding="nan", round_f32_to_tf32=True)
    with jt.targets(SM90):
        jt.triton_call(src, jt.TensorDescriptor.from_array(x, [8, 8]), kernel=copy2d, out_shape=x,
                       input_output_aliases={1: 0}, grid=(1, 1), BM=8, BN=8)
    recs = records(ffi.calls[0]["attrs"])
    assert recs[0] == record(11, 4, 1, [40, 32], [48, 1], [8, 8], nan=1)    # TFLOAT32, NaN fill
    assert recs[1] == record(7, 4, 1, [64, 48], [48, 1], [8, 8])


def test_rank_3(ffi):
    x = jnp.zeros((4, 32, 64), jnp.float16)
    with jt.targets(SM90):
        jt.triton_call(jt.TensorDescriptor.from_array(x, [2, 16, 64]), jt.TensorDescriptor.from_array(x, [2, 16, 64]),
                       kernel=copy3d, out_shape=x, input_output_aliases={1: 0}, grid=(1, 1, 1), BB=2, BM=16, BN=64)
    assert records(ffi.calls[0]["attrs"])[0] == record(6, 2, 3, [4, 32, 64], [2048, 64, 1], [2, 16, 64])


def test_kernel_call_checks_descriptors(ffi):
    k = compiled_copy(jnp.float16, (128, 256), [64, 128])
    assert k.signature.startswith("in_desc_tma:nvTmaDesc,")
    x = jnp.zeros((128, 256), jnp.float16)
    good = jt.TensorDescriptor.from_array(x, [64, 128])

    def call(src, dst=good):
        return jt.kernel_call(k, src, 128, 256, 256, 1, dst, 128, 256, 256, 1, grid=(2, 2), out_shape=[])

    call(good)
    assert records(ffi.calls[-1]["attrs"])[0] == record(6, 2, 3, [128, 256], [256, 1], [64, 64])
    bad = [
        (jt.TensorDescriptor.from_array(jnp.zeros((128, 256), jnp.float32), [64, 128]),
         "its base is an array of float32 (4-byte elements); the kernel reads 2-byte elements"),
        (jt.TensorDescriptor(x, (128, 100), (100, 1), (64, 128)), "(shape [128, 100], strides [100, 1], block [64, "
                                                                  "64], FLOAT16): strides[0] is 200 bytes, not a "
                                                                  "multiple of 16"),
        (jt.TensorDescriptor(x, (128, 128), (256, 2), (64, 128)), "TMA needs the last dimension contiguous"),
        (jt.TensorDescriptor(x, (256, 256), (256, 1), (64, 128)), "it reaches element 65535 of its base, an array "
                                                                  "of 32768 elements"),
        (jt.TensorDescriptor(x, (128,), (1,), (64,)), "the kernel was compiled for a 2-dimensional descriptor"),
        (jt.TensorDescriptor(x, (128, 256), (256, 1), (64, 128), round_f32_to_tf32=True),
         "round_f32_to_tf32 is for float32 descriptors"),
        (x, "a tensor map (a host descriptor lowered to TMA) takes a TensorDescriptor"),
    ]
    for src, msg in bad:
        with pytest.raises(jt.KernelCallError, match="kernel 'copy2d' argument 0 'in_desc_tma' \\(nvTmaDesc\\)") as e:
            call(src)
        assert msg in str(e.value)
    # a descriptor for a pointer parameter
    with pytest.raises(jt.KernelCallError, match="argument 0 'x' \\(\\*fp32\\): a TensorDescriptor goes to a "
                                                 "tensor-map parameter"):
        jt.kernel_call(fixture_kernel("add_kernel"), good, good, good, 4, grid=1, out_shape=[])


def test_rows_of_less_than_16_bytes_fail_at_trace_time(ffi):
    x = jnp.zeros((64, 64), jnp.float16)
    with jt.targets(SM90), pytest.raises(jt.KernelCallError, match="argument 0 'in_desc_tma' .*: the innermost block "
                                                                  "is 8 bytes, not a multiple of 16 \\(4 elements "
                                                                  "of 2 bytes\\)"):
        jt.triton_call(jt.TensorDescriptor.from_array(x, [16, 4]), jt.TensorDescriptor.from_array(x, [16, 4]),
                       kernel=copy2d, out_shape=x, input_output_aliases={1: 0}, grid=(1, 1), BM=16, BN=4)


def test_nan_padding_needs_a_float_array(ffi):
    k = compiled_copy(jnp.uint8, (64, 256), [8, 128])
    x = jnp.zeros((64, 256), jnp.uint8)
    src = jt.TensorDescriptor.from_array(x, [8, 128], padding="nan")
    with pytest.raises(jt.KernelCallError, match="NaN padding needs a floating-point element type, not UINT8"):
        jt.kernel_call(k, src, 64, 256, 256, 1, jt.TensorDescriptor.from_array(x, [8, 128]), 64, 256, 256, 1,
                       grid=(1, 1), out_shape=[])


def copy_blocks(nargs):
    """Triton's idiom for autotuning host descriptors: the config's pre_hook sets their block shapes."""
    for name in ("in_desc", "out_desc"):
        nargs[name].block_shape = [nargs["BM"], nargs["BN"]]


def tuned_copy2d(blocks):
    return triton.autotune([triton.Config({"BM": bm, "BN": bn}, pre_hook=copy_blocks) for bm, bn in blocks],
                           key=[])(copy2d)


def test_autotuned_tma_kernel_sends_each_candidates_records(ffi):
    """Every config goes to the handler (version 2), each with its own tma records: its block shape, as its
    compilation boxes it (a 32 x 128 fp16 block moves as 32 x 64 boxes)."""
    x = jnp.zeros((128, 256), jnp.float16)
    with jt.targets(SM90), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        jt.triton_call(jt.TensorDescriptor.from_array(x, [8, 8]), jt.TensorDescriptor.from_array(x, [8, 8]),
                       kernel=tuned_copy2d([(64, 64), (32, 128), (128, 32)]), out_shape=x,
                       input_output_aliases={1: 0}, grid=lambda m: (128 // m["BM"], 256 // m["BN"]))
    a = ffi.calls[0]["attrs"]
    assert int(a["version"]) == 2
    assert len(a["kernel_offsets"]) == 4
    assert list(a["grid"]) == [2, 4, 1, 4, 2, 1, 1, 8, 1]
    assert list(a["arg_kind"]) == [4, 2, 2, 2, 2, 4, 2, 2, 2, 2]
    want = [record(6, 2, swizzle, [128, 256], [256, 1], box)
            for box, swizzle in (([64, 64], 3), ([32, 64], 3), ([128, 32], 2)) for _ in range(2)]
    assert records(a) == want


def test_autotuned_kernel_call_with_tensor_maps(ffi):
    """kernel_call given several kernels: each candidate's records from its own metadata, checked against the
    descriptor (a candidate reading other elements fails at trace time, naming it)."""
    k64, k32 = compiled_copy(jnp.float16, (128, 256), [64, 128]), compiled_copy(jnp.float16, (128, 256), [32, 64])
    x = jnp.zeros((128, 256), jnp.float16)
    d = jt.TensorDescriptor.from_array(x, [64, 128])
    jt.kernel_call([k64, k32], d, 128, 256, 256, 1, d, 128, 256, 256, 1, grid=[(2, 2), (4, 4)], out_shape=[],
                   autotune_key="copy2d-tma")
    a = ffi.calls[-1]["attrs"]
    assert a["autotune_key"] == "copy2d-tma"
    assert records(a) == [record(6, 2, 3, [128, 256], [256, 1], box) for box in ([64, 64], [64, 64], [32, 64],
                                                                                [32, 64])]
    k_f32 = compiled_copy(jnp.float32, (128, 256), [32, 32])
    with pytest.raises(jt.KernelCallError, match="kernel_call: candidate 1: kernel 'copy2d' argument 0 "
                                                 "'in_desc_tma' \\(nvTmaDesc\\): .*its base is an array of float16 "
                                                 "\\(2-byte elements\\); the kernel reads 4-byte elements"):
        jt.kernel_call([k64, k_f32], d, 128, 256, 256, 1, d, 128, 256, 256, 1, grid=(2, 2), out_shape=[])


def test_the_handler_refuses_tensor_maps_on_cpu():
    if not on_cpu():
        pytest.skip("checks the CPU handler's refusal; on a GPU the GPU tests below run the kernels")
    k = compiled_copy(jnp.float16, (128, 256), [64, 128])
    x = jnp.zeros((128, 256), jnp.float16)
    d = jt.TensorDescriptor.from_array(x, [64, 128])
    f = jax.jit(lambda: jt.kernel_call(k, d, 128, 256, 256, 1, d, 128, 256, 256, 1, grid=(2, 2), out_shape=[],
                                       has_side_effect=True))
    # the attribute reached the handler and decoded; the CPU platform cannot encode maps
    with pytest.raises(Exception, match="kernel 'copy2d' argument 0 'in_desc_tma': tensor maps \\(TMA\\) need the "
                                        "CUDA platform, not cpu"):
        jax.block_until_ready(f())
    # an autotuned call's records, per candidate, decoded by the handler
    k32 = compiled_copy(jnp.float16, (128, 256), [32, 64])
    g = jax.jit(lambda: jt.kernel_call([k, k32], d, 128, 256, 256, 1, d, 128, 256, 256, 1, grid=[(2, 2), (4, 4)],
                                       out_shape=[], has_side_effect=True))
    with pytest.raises(Exception, match="kernel 'copy2d' candidate 0 argument 0 'in_desc_tma': tensor maps \\(TMA\\) "
                                        "need the CUDA platform, not cpu"):
        jax.block_until_ready(g())


# ----------------------------------------------------------- runs (CPU, GPU)

def rand(shape, dtype, seed):
    k = jax.random.key(seed)
    if jnp.issubdtype(dtype, jnp.integer):
        return jax.random.randint(k, shape, 0, 100).astype(dtype)
    return jax.random.normal(k, shape, jnp.float32).astype(dtype)


def tiled_copy(x, block):
    out = jnp.full(x.shape, jnp.nan if jnp.issubdtype(x.dtype, jnp.floating) else 7, x.dtype)
    grid = (triton.cdiv(x.shape[0], block[0]), triton.cdiv(x.shape[1], block[1]))
    return jt.triton_call(jt.TensorDescriptor.from_array(x, block), jt.TensorDescriptor.from_array(out, block),
                          kernel=copy2d, out_shape=out, input_output_aliases={1: 0}, grid=grid, BM=block[0],
                          BN=block[1])


@pytest.mark.parametrize("dtype, shape, block", [
    (jnp.float16, (200, 296), (64, 128)),   # partial blocks at both edges; boxes of 64 x 64
    (jnp.bfloat16, (130, 72), (32, 64)),
    (jnp.float32, (100, 36), (16, 32)),
    (jnp.uint8, (77, 160), (8, 128)),
])
def test_tiled_copy(platform, dtype, shape, block):
    x = rand(shape, dtype, 1)
    np.testing.assert_array_equal(np.asarray(tiled_copy(x, block)), np.asarray(x))


def test_tiled_copy_rank_3(platform):
    x = rand((6, 40, 64), jnp.float16, 2)
    out = jnp.zeros_like(x)
    y = jt.triton_call(jt.TensorDescriptor.from_array(x, [2, 16, 64]), jt.TensorDescriptor.from_array(out, [2, 16, 64]),
                       kernel=copy3d, out_shape=out, input_output_aliases={1: 0}, grid=(3, 1, 3), BB=2, BM=16, BN=64)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_matmul_through_descriptors(platform):
    M, N, K = 300, 200, 256
    a, b = rand((M, K), jnp.float16, 3), rand((K, N), jnp.float16, 4)
    c = jt.triton_call(jt.TensorDescriptor.from_array(a, [64, 64]), jt.TensorDescriptor.from_array(b, [64, 64]),
                       M, N, K, kernel=matmul_desc, out_shape=jax.ShapeDtypeStruct((M, N), jnp.float32),
                       grid=(triton.cdiv(M, 64), triton.cdiv(N, 64)), BM=64, BN=64, BK=64)
    want = jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32))
    np.testing.assert_allclose(np.asarray(c), np.asarray(want), rtol=2e-2, atol=5e-2)


def test_nan_and_zero_padding(platform):
    x = rand((50, 64), jnp.float32, 5)
    for padding, fill in (("nan", np.nan), ("zero", 0.0)):
        y = jt.triton_call(jt.TensorDescriptor.from_array(x, [32, 64], padding=padding), kernel=load_padded,
                           out_shape=jax.ShapeDtypeStruct((64, 64), jnp.float32), grid=(2,), BM=32, BN=64)
        want = np.full((64, 64), fill, np.float32)
        want[:50] = np.asarray(x)
        np.testing.assert_array_equal(np.asarray(y), want)


def matmul_blocks(nargs):
    nargs["a_desc"].block_shape = [nargs["BM"], nargs["BK"]]
    nargs["b_desc"].block_shape = [nargs["BK"], nargs["BN"]]


def test_autotuned_tma_kernels(platform, fresh_cache, tmp_path, monkeypatch):
    """Autotuned kernels taking host descriptors, their configs of different block shapes (Triton's pre_hook
    idiom), so each candidate has its own tensor maps, under jax.jit: the first execution benchmarks every
    config, each launched with its own maps, and the fastest runs from then on (captured and replayed); then
    each config in turn, forced by a kept choice naming it, gives jnp's result too. On CPU, Triton's interpreter
    runs each config in turn (cpu_kernels(config=i))."""
    M, N, K = 300, 200, 256
    a, b = rand((M, K), jnp.float16, 40), rand((K, N), jnp.float16, 41)
    x = rand((200, 296), jnp.float16, 42)
    mm = triton.autotune([triton.Config({"BM": bm, "BN": bn, "BK": bk}, pre_hook=matmul_blocks)
                          for bm, bn, bk in ((64, 64, 64), (128, 64, 32), (32, 128, 64))], key=["M", "N", "K"])(
        matmul_desc)
    cp = tuned_copy2d([(64, 64), (32, 128), (128, 32)])

    def body(a, b, x):
        c = jt.triton_call(jt.TensorDescriptor.from_array(a, [16, 16]), jt.TensorDescriptor.from_array(b, [16, 16]),
                           M, N, K, kernel=mm, out_shape=jax.ShapeDtypeStruct((M, N), jnp.float32),
                           grid=lambda m: (triton.cdiv(M, m["BM"]), triton.cdiv(N, m["BN"])))
        out = jnp.full(x.shape, jnp.nan, x.dtype)
        y = jt.triton_call(jt.TensorDescriptor.from_array(x, [16, 16]), jt.TensorDescriptor.from_array(out, [16, 16]),
                           kernel=cp, out_shape=out, input_output_aliases={1: 0},
                           grid=lambda m: (triton.cdiv(x.shape[0], m["BM"]), triton.cdiv(x.shape[1], m["BN"])))
        return c, y

    want = np.asarray(jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32)))

    def check(c, y):
        np.testing.assert_allclose(np.asarray(c), want, rtol=2e-2, atol=5e-2)
        np.testing.assert_array_equal(np.asarray(y), np.asarray(x))

    if platform == "cpu":
        for i in range(3):
            with jt.cpu_kernels(config=i):
                check(*jax.jit(lambda a, b, x: body(a, b, x))(a, b, x))
        return
    f = jax.jit(body)
    for _ in range(3):   # the first execution chooses; with command buffers the second captures, the third replays
        check(*f(a, b, x))
    kept = fresh_cache / "tune"   # libtrident's tuner's files
    entries = {name: json.loads((kept / name).read_text()) for name in sorted(os.listdir(kept))}
    assert len(entries) == 2, entries
    for e in entries.values():   # every candidate ran in the benchmark
        assert e["variants"] == 3 and all(t is not None and t > 0 for t in e["times_ms"]), e
    for i in range(3):
        forced = tmp_path / f"forced{i}"
        (forced / "tune").mkdir(parents=True)
        texts = {name: json.dumps({**e, "choice": i}) for name, e in entries.items()}
        for name, text in texts.items():
            (forced / "tune" / name).write_text(text)
        monkeypatch.setattr(jt_cache, "cache_dir", lambda forced=forced: forced)
        check(*jax.jit(lambda a, b, x: body(a, b, x))(a, b, x))   # a new executable, reading the forced choices
        for name, text in texts.items():   # used as they are, not benchmarked again
            assert (forced / "tune" / name).read_text() == text, name


def test_under_jit_new_buffers_each_time(platform):
    """jax.jit with XLA's default command buffers: the call is captured into a CUDA graph and replayed; each
    execution's maps are encoded from that execution's buffers."""
    f = jax.jit(lambda x: tiled_copy(x * 2, (64, 64)) + 1)
    for seed in range(4):
        x = rand((192, 320), jnp.float16, 10 + seed)
        np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(x * 2 + 1))
    g = jax.jit(lambda a, b: jt.triton_call(
        jt.TensorDescriptor.from_array(a, [64, 64]), jt.TensorDescriptor.from_array(b, [64, 64]), 128, 128, 128,
        kernel=matmul_desc, out_shape=jax.ShapeDtypeStruct((128, 128), jnp.float32), grid=(2, 2), BM=64, BN=64,
        BK=64))
    for seed in range(3):
        a, b = rand((128, 128), jnp.float16, 20 + seed), rand((128, 128), jnp.float16, 30 + seed)
        want = jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32))
        np.testing.assert_allclose(np.asarray(g(a, b)), np.asarray(want), rtol=2e-2, atol=5e-2)


def test_chain_of_tensor_map_calls_on_moving_buffers(platform):
    """A jitted chain of tiled copies between XLA's own ops, long enough for XLA's command buffer, on new inputs
    each run: on the GPU, where the record route makes each call a kernel node, XLA updates the nodes for the moved
    buffers, and a call of tensor maps is updated without a record plan, its maps encoded again from the new
    addresses (xla/record.c); every element the same bits as the chain with XLA's copy in their place."""
    def chain(copy):
        def f(x):
            for _ in range(6):
                x = copy(x) * np.float32(0.5) + np.float32(1)
            return x
        return jax.jit(f)
    got, want = chain(lambda x: tiled_copy(x, (16, 32))), chain(lambda x: x + np.float32(0))
    for seed in range(4):
        x = rand((130, 200), jnp.float32, 40 + seed)
        np.testing.assert_array_equal(np.asarray(got(x)), np.asarray(want(x)))
