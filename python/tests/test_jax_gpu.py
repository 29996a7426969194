# SPDX-License-Identifier: Apache-2.0
"""triton_call's GPU suite, in the style of jax-triton's own triton_call tests
(upstream and the ROCm fork): several outputs, aliasing by coordinates,
zeroing, autotune, heuristics, keywords, constexpr/None/tuple/callable
arguments, Refs, clusters, debug, a Gluon kernel; checked against jnp on
random inputs. The tests taking the `platform` fixture run twice: on JAX's
CPU platform, where these kernels (none has a host twin) run through
Triton's interpreter, and on its GPU (skipped without one), with smaller
sizes on CPU; the others need a GPU (the `gpu` fixture)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import triton
import triton.language as tl

import trident.jax as jt


def randn(shape, dtype=jnp.float32, seed=0):
    k = jax.random.key(seed)
    if jnp.issubdtype(dtype, jnp.integer):
        return jax.random.randint(k, shape, -100, 100, dtype=dtype)
    return jax.random.normal(k, shape, dtype=dtype)


@triton.jit
def add_kernel(x_ptr, y_ptr, n_elements, output_ptr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(output_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


@triton.jit
def add_inplace_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr, INPLACE_Y: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    out = tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)
    if INPLACE_Y:
        tl.store(y_ptr + offsets, out, mask=mask)
    else:
        tl.store(x_ptr + offsets, out, mask=mask)


def add(x, y, *, kernel=add_kernel, **kwargs):
    if kernel in (add_kernel, add_inplace_kernel):
        kwargs.setdefault("BLOCK_SIZE", 8)
    if kernel is add_inplace_kernel or getattr(kernel, "fn", None) is add_inplace_kernel:
        kwargs.setdefault("INPLACE_Y", False)
    grid = kwargs.pop("grid", lambda meta: triton.cdiv(x.size, meta["BLOCK_SIZE"]))
    return jt.triton_call(x, y, x.size, kernel=kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=grid,
                          **kwargs)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, c_ptr,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr, K_EXACTLY_DIVISIBLE_BY_BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k_remaining in range(K, 0, -BLOCK_SIZE_K):
        if K_EXACTLY_DIVISIBLE_BY_BLOCK:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            mask = tl.arange(0, BLOCK_SIZE_K) < k_remaining
            a = tl.load(a_ptrs, mask=mask[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=mask[:, None], other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def matmul(x, y, *, kernel=matmul_kernel, **kwargs):
    m, k = x.shape
    _, n = y.shape
    grid = lambda meta: triton.cdiv(m, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"])
    return jt.triton_call(x, y, m, n, k, k, 1, n, 1, n, 1, kernel=kernel,
                          out_shape=jax.ShapeDtypeStruct((m, n), dtype=jnp.float16), grid=grid, GROUP_SIZE_M=8,
                          **kwargs)


# ------------------------------------------------------------------- basics

@pytest.mark.parametrize("size", [1, 5, 100, 1024])
@pytest.mark.parametrize("dtype", [jnp.int32, jnp.float32, jnp.float16, jnp.bfloat16])
@pytest.mark.parametrize("block_size", [1, 32, 256])
def test_add(platform, size, dtype, block_size):
    if platform == "cpu" and size == 1024:
        size = 300   # a program takes the interpreter about 2 ms
    x, y = randn((size,), dtype), randn((size,), dtype, 1)
    out = jax.jit(lambda x, y: add(x, y, BLOCK_SIZE=block_size))(x, y)
    np.testing.assert_array_equal(out, x + y)


@pytest.mark.parametrize("dtype", [jnp.int64, jnp.float64])
def test_add_64_bit(platform, dtype):
    with jax.enable_x64(True):
        x, y = randn((300,), dtype), randn((300,), dtype, 1)
        np.testing.assert_array_equal(add(x, y, BLOCK_SIZE=64), x + y)


@pytest.mark.parametrize("m, n, k", [(512, 512, 512), (256, 384, 144)])
@pytest.mark.parametrize("block_m, block_n", [(64, 128), (128, 128)])
def test_matmul(platform, m, n, k, block_m, block_n):
    if platform == "cpu":   # smaller; n stays a multiple of block_n: the kernel reads b's columns unmasked
        m, k = m // 2, k // 2
    x, y = randn((m, k), jnp.float16), randn((k, n), jnp.float16, 1)
    out = matmul(x, y, BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n, BLOCK_SIZE_K=32,
                 K_EXACTLY_DIVISIBLE_BY_BLOCK=k % 32 == 0)
    np.testing.assert_allclose(out, jnp.matmul(x, y), atol=0.05, rtol=0.05)


@pytest.mark.parametrize("grid_type", ["int", "tuple", "function_int", "function_tuple"])
def test_grid_types(platform, grid_type):
    x, y = randn((8,)), randn((8,), seed=1)
    grid = {"int": 8, "tuple": (8,), "function_int": lambda m: 8 // m["BLOCK_SIZE"],
            "function_tuple": lambda m: (8 // m["BLOCK_SIZE"],)}[grid_type]
    np.testing.assert_array_equal(add(x, y, BLOCK_SIZE=1, grid=grid), x + y)


def test_pmap_over_devices(platform):
    n = jax.local_device_count("cpu" if platform == "cpu" else None)
    if n < 2:
        pytest.skip(f"needs two {platform} devices")
    x, y = randn((n, 256)), randn((n, 256), seed=1)
    np.testing.assert_array_equal(jax.pmap(lambda x, y: add(x, y, BLOCK_SIZE=64))(x, y), x + y)


@pytest.mark.parametrize("scalar", [42.0, np.float32(42.0), 3, np.int64(3)])
def test_scalar_argument(platform, scalar):
    @jt.kernel
    @triton.jit
    def add_scalar(x_ptr, y, output_ptr):
        tl.store(output_ptr, tl.load(x_ptr) + y)

    x = jnp.array([1.0])
    np.testing.assert_allclose(add_scalar[1](x, scalar, out_shape=x), x + float(scalar))


@pytest.mark.parametrize("mul", [None, 1, 1.0, 3.14])
@pytest.mark.parametrize("ofs", [None, 1, 2.71])
def test_scalars_before_arrays_and_special_values(platform, mul, ofs):
    @triton.jit
    def affine_kernel(mul, ofs, in_ptr, in_numel, out_ptr, BLOCK_SIZE: tl.constexpr):
        start = tl.program_id(0) * BLOCK_SIZE
        for i in range(start, min(start + BLOCK_SIZE, in_numel)):
            x = tl.load(in_ptr + i)
            if mul is not None:
                x *= mul
            if ofs is not None:
                x += ofs
            tl.store(out_ptr + i, x)

    x = jnp.arange(257, dtype=jnp.float32)
    y = jt.triton_call(mul, ofs, x, x.size, kernel=affine_kernel, out_shape=x, grid=(triton.cdiv(257, 32),),
                       BLOCK_SIZE=32)
    expected = np.asarray(x)
    expected = expected * mul if mul is not None else expected
    expected = expected + ofs if ofs is not None else expected
    np.testing.assert_allclose(y, expected, rtol=2e-7)


def test_kwarg_operands_in_any_order_and_constexpr_before_operand(platform):
    @triton.jit
    def kernel(x_ptr, BLOCK_SIZE: tl.constexpr, y_ptr, n_elements, output_ptr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        m = offs < n_elements
        tl.store(output_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    x, y = jnp.arange(8, dtype=jnp.float32), jnp.ones(8, jnp.float32)
    out = jt.triton_call(x, n_elements=x.size, y_ptr=y, kernel=kernel, out_type=jax.typeof(x), grid=(1,),
                         BLOCK_SIZE=8)
    np.testing.assert_allclose(out, x + y)
    with pytest.raises(TypeError, match="multiple values for argument 'x_ptr'"):
        jt.triton_call(x, x_ptr=x, kernel=kernel, out_type=jax.typeof(x), grid=(1,), BLOCK_SIZE=8)


# ---------------------------------------------------------------- outputs

def test_several_outputs_and_forms(platform):
    @jt.kernel
    @triton.jit
    def twin(in_ptr, n, out1_ptr, out2_ptr, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        m = offs < n
        x = tl.load(in_ptr + offs, mask=m)
        tl.store(out1_ptr + offs, x, mask=m)
        tl.store(out2_ptr + offs, x + 1, mask=m)

    x = randn((1000,))
    for out_shape, out_names in [((x, x), None), ([x, x], None), ({"out1_ptr": x, "out2_ptr": x}, None),
                                 ({3: x, 2: x}, None), ((x, x), ("out1_ptr", 3))]:
        o1, o2 = twin[(8,)](x, x.size, BLOCK_SIZE=128, out_shape=out_shape, out_names=out_names)
        np.testing.assert_array_equal(o1, x)
        np.testing.assert_array_equal(o2, x + 1)


def test_outputs_of_different_dtypes_and_a_tuple_parameter(platform):
    @jt.kernel
    @triton.jit
    def compound(in_ptr, Ptrs, single_out):
        x = tl.load(in_ptr)
        tl.store(Ptrs[0], x)
        tl.store(Ptrs[1][0], x.to(tl.int32) + 1)
        tl.store(Ptrs[1][1], x.to(tl.int16) + 2)
        tl.store(single_out, x * 2)

    x = jnp.array([5.25], jnp.float32)
    z = jnp.zeros((1,), jnp.float32)
    (a, (b, c)), d = compound[(1,)](x, out_shape=((z, (z.astype(jnp.int32), z.astype(jnp.int16))), z))
    assert (a.dtype, b.dtype, c.dtype) == (jnp.float32, jnp.int32, jnp.int16)
    np.testing.assert_array_equal([a[0], b[0], c[0], d[0]], [5.25, 6, 7, 10.5])


def test_output_between_scalars(platform):
    @jt.kernel
    @triton.jit
    def interleaved(in_ptr, out1_ptr, scale, out2_ptr):
        x = tl.load(in_ptr)
        tl.store(out1_ptr, x)
        tl.store(out2_ptr, x * scale)

    x = jnp.array([5.25], jnp.float32)
    o1, o2 = interleaved[(1,)](x, out_shape=[x, x], out_names=(1, 3), scale=3.0)
    np.testing.assert_array_equal(o2, x * 3)


# ---------------------------------------------------------------- aliasing

@triton.jit
def inc_inplace_kernel(x_in_out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(x_in_out_ptr + offsets, tl.load(x_in_out_ptr + offsets, mask=mask) + 1, mask=mask)


@pytest.mark.parametrize("aliases", [{0: 0}, 0, "x_in_out_ptr", ("x_in_out_ptr",), [0]])
@pytest.mark.parametrize("donate", [False, True])
def test_aliasing(platform, aliases, donate):
    x = randn((64,))
    kw = {"out_shape": x} if isinstance(aliases, dict) else {}
    f = lambda x: jt.triton_call(x, x.size, kernel=inc_inplace_kernel, grid=(8,), BLOCK_SIZE=8,
                                 input_output_aliases=aliases, **kw)
    if donate:
        f = jax.jit(f, donate_argnums=0)
        ptr = x.unsafe_buffer_pointer()
        expected = np.asarray(x) + 1
        out = f(x)
        assert x.is_deleted() and out.unsafe_buffer_pointer() == ptr
        np.testing.assert_allclose(out, expected)
    else:
        np.testing.assert_allclose(f(x), x + 1)


def test_aliasing_into_tuples_and_nested_structure(platform):
    @jt.kernel
    @triton.jit
    def k(ptr0, ptr1, ptr2, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(ptr0 + offs, tl.load(ptr0 + offs) + 1)
        tl.store(ptr1 + offs, tl.load(ptr1 + offs) + 2)
        tl.store(ptr2 + offs, tl.load(ptr2 + offs) + 3)

    a, b, c = jnp.array([10.0]), jnp.array([20.0]), jnp.array([30.0])
    r0, (r1, r2) = k[1](a, b, c, BLOCK=1, input_output_aliases=[0, [1, 2]])
    np.testing.assert_array_equal([r0[0], r1[0], r2[0]], [11, 22, 33])

    @jt.kernel
    @triton.jit
    def in_tuple(Ptrs, val_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(Ptrs[1] + offs, tl.load(Ptrs[1] + offs) + tl.load(val_ptr + offs))

    out = in_tuple[(1,)]((a, b), c, 1, input_output_aliases=[("Ptrs", 1)])
    np.testing.assert_array_equal(out, jnp.array([50.0]))


def test_pure_and_aliased_outputs(platform):
    @jt.kernel(out_names="out_ptr")
    @triton.jit
    def k(in_ptr, inout_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + offs)
        tl.store(out_ptr + offs, x * 2)
        tl.store(inout_ptr + offs, tl.load(inout_ptr + offs) + x)

    x, y = jnp.array([5.0]), jnp.array([10.0])
    pure, aliased = k[(1,)](x, y, BLOCK=1, out_shape=x, input_output_aliases="inout_ptr")
    np.testing.assert_array_equal([pure[0], aliased[0]], [10.0, 15.0])


def test_ref_arguments(platform):
    x = randn((64,))
    ref = jax.new_ref(x)
    assert jax.jit(lambda r: jt.triton_call(r, 64, kernel=inc_inplace_kernel, out_type=(), grid=(8,),
                                            BLOCK_SIZE=8))(ref) == ()
    np.testing.assert_allclose(ref[...], x + 1)


# ----------------------------------------------------------------- zeroing

def test_zeroed_outputs_on_dirty_buffers(platform):
    @jt.kernel
    @triton.jit
    def acc(x_ptr, n_elements, out_ptr, BLOCK_SIZE: tl.constexpr, CLEANUP: tl.constexpr = False):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        m = offs < n_elements
        if CLEANUP:
            tl.store(out_ptr + offs, 0, mask=m)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(out_ptr + offs, mask=m), mask=m)

    x = randn((4000,) if platform == "cpu" else (100000,))
    grid = triton.cdiv(x.size, 8)
    out = acc[grid](x, x.size, BLOCK_SIZE=8, CLEANUP=True, out_shape=x)
    np.testing.assert_allclose(out, x)
    del out
    for form in [("out_ptr",), (2,), (("out_ptr",),), lambda meta: ["out_ptr"]]:
        out = acc[grid](x, x.size, BLOCK_SIZE=8, out_shape=x, zeroed_outputs=form)
        np.testing.assert_allclose(out, x)


# ------------------------------------------------------- autotune, heuristics

def test_autotune(platform):
    configs = [triton.Config({"BLOCK_SIZE": 32}, num_warps=1), triton.Config({"BLOCK_SIZE": 64}, num_warps=1),
               triton.Config({"BLOCK_SIZE": 64}, num_warps=2)]
    kernel = triton.autotune(configs, key=("n_elements",))(add_kernel)
    x, y = randn((1024,)), randn((1024,), seed=1)
    np.testing.assert_allclose(add(x, y, kernel=kernel), x + y)
    np.testing.assert_allclose(jax.jit(lambda x, y: add(x, y, kernel=kernel))(x, y), x + y)


def test_autotune_regression_issue_128(platform):
    kernel = triton.autotune([triton.Config({"BLOCK_SIZE": 1024}, num_warps=1),
                              triton.Config({"BLOCK_SIZE": 32}, num_warps=1)], key=("n_elements",))(add_kernel)
    x, y = randn((1024,)), randn((1024,), seed=1)
    outs = []
    for _ in range(10):
        outs.append(add(x, y, kernel=kernel))
        np.testing.assert_allclose(outs[-1], x + y)


def test_autotune_with_aliasing_and_pre_hook(platform):
    def pre_hook(nargs):
        assert nargs["BLOCK_SIZE"] in (32, 64)
        nargs["y_ptr"].fill_(2.0)   # an effect trident replays: the input y is 2 for every config's launch

    kernel = triton.autotune([triton.Config({"BLOCK_SIZE": 32}, num_warps=1, pre_hook=pre_hook),
                              triton.Config({"BLOCK_SIZE": 64}, num_warps=1, pre_hook=pre_hook)],
                             key=("n_elements",), restore_value=["x_ptr"])(add_inplace_kernel)
    x, y = randn((1024,)), randn((1024,), seed=1)
    np.testing.assert_allclose(add(x, y, kernel=kernel, input_output_aliases={0: 0}), x + 2.0)


def test_heuristics_and_autotune_with_heuristics(platform):
    seen = []

    def divisible(args):
        seen.append(args["K"] % args["BLOCK_SIZE_K"] == 0)
        return seen[-1]

    kernel = triton.heuristics({"K_EXACTLY_DIVISIBLE_BY_BLOCK": divisible})(matmul_kernel)
    for k in (128, 144):
        x, y = randn((128, k), jnp.float16), randn((k, 128), jnp.float16, 1)
        out = matmul(x, y, kernel=kernel, BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32)
        np.testing.assert_allclose(out, jnp.matmul(x, y), atol=0.05, rtol=0.05)
    assert seen == [True, False]
    tuned = triton.autotune([triton.Config({"BLOCK_SIZE_K": 32}, num_warps=1),
                             triton.Config({"BLOCK_SIZE_K": 64}, num_warps=1)], key=("M", "N", "K"))(kernel)
    x, y = randn((128, 160), jnp.float16), randn((160, 128), jnp.float16, 1)
    np.testing.assert_allclose(matmul(x, y, kernel=tuned, BLOCK_SIZE_M=32, BLOCK_SIZE_N=32), jnp.matmul(x, y),
                               atol=0.05, rtol=0.05)


AUTOTUNE_GPU_SCRIPT = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
import jax, jax.numpy as jnp, numpy as np, triton
import trident.jax as jt
from test_jax_gpu import add_inplace_kernel, add_kernel

configs = [triton.Config({"BLOCK_SIZE": b}, num_warps=w) for b, w in ((128, 4), (256, 2), (1024, 4), (2048, 8))]
add = triton.autotune(configs, key=["n_elements"])(add_kernel)
add_inplace = triton.autotune(configs, key=["n_elements"], restore_value=["x_ptr"])(add_inplace_kernel)

def chain(x, y):
    outs = []
    grid = lambda m: (jt.cdiv(x.size, m["BLOCK_SIZE"]),)
    for _ in range(6):   # a dozen calls: more than a command buffer's minimum
        x = jt.triton_call(x, y, x.size, kernel=add_inplace, grid=grid, INPLACE_Y=False, input_output_aliases={0: 0},
                           out_shape=x)
        outs.append(jt.triton_call(x, y, x.size, kernel=add, grid=grid, out_shape=x))
    return x, outs

def reference(x, y):
    outs = []
    for _ in range(6):
        x = x + y
        outs.append(x + y)
    return x, outs

n = 3_000_017
rng = np.random.default_rng(11)
x = jnp.asarray(rng.standard_normal(n).astype(np.float32))
y = jnp.asarray(rng.standard_normal(n).astype(np.float32))
want_x, want = jax.jit(reference)(x, y)
f = jax.jit(chain)
for _ in range(3):   # with command buffers: the first run chooses, the second captures, the third replays
    got_x, got = f(x, y)
    np.testing.assert_allclose(np.asarray(got_x), np.asarray(want_x), rtol=1e-6, atol=1e-6)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)
files = sorted(os.listdir(os.path.join(os.environ["TRIDENT_CACHE_DIR"], "tune")))   # libtrident's tuner's files
assert len(files) == 2, files
for name in files:
    entry = json.load(open(os.path.join(os.environ["TRIDENT_CACHE_DIR"], "tune", name)))
    assert entry["variants"] == 4 and entry["device"].startswith("cuda:"), entry
    assert all(t is not None and t > 0 for t in entry["times_ms"]), entry
print("ok")
"""


@pytest.mark.parametrize("command_buffers", [True, False])
def test_autotune_chooses_at_the_first_execution(gpu, tmp_path, command_buffers):
    """Autotuned calls, one an aliased in-place update, chained under jax.jit: the handler benchmarks the configs
    at the first execution (before XLA captures anything into a command buffer), on the real inputs, and the
    aliased input comes out as one launch leaves it."""
    import os
    import subprocess
    import sys
    flags = "" if command_buffers else "--xla_gpu_enable_command_buffer="
    env = dict(os.environ, XLA_FLAGS=flags, XLA_PYTHON_CLIENT_PREALLOCATE="false", TRIDENT_LOG="info",
               TRIDENT_CACHE_DIR=str(tmp_path / "trident"),
               PYTHONPATH=os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(os.path.dirname(jt.__file__))),
                                                      os.environ.get("PYTHONPATH", "")] if p))
    tests = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", AUTOTUNE_GPU_SCRIPT, tests], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and "ok" in r.stdout, (flags, r.stdout[-2000:], r.stderr[-4000:])
    assert r.stderr.count("chosen by benchmark on the call's buffers") == 2, r.stderr[-4000:]
    assert "being captured" not in r.stderr, r.stderr[-4000:]


# ----------------------------------------------------- keywords and options

def test_one_namespace_for_kernel_and_backend(platform):
    @triton.jit
    def kernel(in_ptr, out_ptr, num_warps: tl.constexpr):
        tl.store(out_ptr, tl.load(in_ptr) * num_warps)

    x = jnp.array([2.5])
    for w in (1, 2, 4):
        np.testing.assert_allclose(jt.triton_call(x, kernel=kernel, out_shape=x, grid=1, num_warps=w), x * w)
    out = add(x, x, BLOCK_SIZE=8, maxnreg=64, enable_fp_fusion=False, backend_options={"num_stages": 2})
    np.testing.assert_allclose(out, x + x)
    with pytest.raises(jt.OptionError, match="add_kernel.*'num_warp'"):
        add(x, x, num_warp=4)


def test_debug_mode_device_asserts(platform):
    @triton.jit
    def checked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.device_assert(offs < BLOCK, "in range")
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    x = randn((64,))
    np.testing.assert_array_equal(jt.triton_call(x, kernel=checked, out_shape=x, grid=1, n=64, BLOCK=64, debug=True),
                                  x)


def test_num_ctas_cluster(gpu):
    if jt.get_compute_capability(0) < 90:
        pytest.skip("clusters need sm90")
    x, y = randn((4096,)), randn((4096,), seed=1)
    np.testing.assert_allclose(add(x, y, BLOCK_SIZE=256, num_ctas=2), x + y)


# ------------------------------------------------------- argument kinds

def test_callables_as_arguments(platform):
    @triton.jit
    def func1():
        return 1

    @triton.jit
    def func3(x):
        return x

    @triton.jit
    def func4(x, y):
        return x + y

    @triton.jit
    def kernel(fn_args, Y, fn: tl.constexpr):
        tl.store(Y, fn(*fn_args))

    @triton.jit
    def kernel2(fn_args, Y, fn):
        tl.store(Y, fn(*fn_args))

    for k in (kernel, kernel2):
        rets = [jt.triton_call(a, fn=f, kernel=k, out_shape=jax.ShapeDtypeStruct((), jnp.int32), grid=1)
                for f, a in [(func1, ()), (func3, (3,)), (func4, (3, 4))]]
        np.testing.assert_array_equal(rets, [1, 3, 7])


def test_tuples_none_strings_namedtuples(platform):
    class Tensor(NamedTuple):
        ptr: object
        shape: tuple
        stride: tuple

    @triton.jit
    def kernel(N1, tuple1, cst1: tl.constexpr, val1, tuple2, Ptr, MODE: tl.constexpr):
        tl.static_assert(N1 is None)
        tl.static_assert(tuple1[1][1] is None)
        tl.store(Ptr + 0, tl.load(tuple1[0]))
        tl.store(Ptr + 1, tuple1[1][0])
        tl.store(Ptr + 2, tl.load(tuple1[1][2]))
        tl.store(Ptr + 3, cst1 + val1)
        tl.store(Ptr + 4, tl.load(tuple2.ptr) * tuple2.shape[0])
        if MODE == "five":
            tl.store(Ptr + 5, 5)

    x0, x1, y0 = jnp.array([8], jnp.int32), jnp.array([12], jnp.int32), jnp.array([10], jnp.int32)
    z = jt.triton_call(None, (x0, (1, None, x1, tl.constexpr(4))), 20, 1, Tensor(y0, (3,), (1,)), MODE="five",
                       kernel=kernel, out_shape=jnp.zeros((6,), jnp.int32), grid=1)
    np.testing.assert_array_equal(z, [8, 1, 12, 21, 30, 5])


def test_kernel_default_arguments_and_int_annotations(platform):
    @jt.kernel
    @triton.jit
    def kernel(X, v: tl.uint8, i: tl.constexpr = 1):
        tl.store(X, v + i)

    np.testing.assert_array_equal(kernel[(1,)](v=250, out_shape=jnp.zeros(1, jnp.int32)), [251])


def test_gluon_kernel(gpu):
    gluon = pytest.importorskip("triton.experimental.gluon")
    gl = gluon.language

    @gluon.jit
    def gl_scale(in_ptr, out_ptr, n, alpha, BLOCK: gl.constexpr):
        layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
        offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
        m = offs < n
        gl.store(out_ptr + offs, gl.load(in_ptr + offs, mask=m) * alpha, mask=m)

    x = randn((1000,))
    out = jt.triton_call(x, kernel=gl_scale, out_shape=x, grid=(8,), n=x.size, alpha=1.5, BLOCK=128, num_warps=4)
    np.testing.assert_allclose(out, x * 1.5, rtol=1e-6)


def test_device_side_descriptor_uses_global_scratch(platform):
    @triton.jit
    def scratch_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        desc = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
        x = desc.load([tl.program_id(0) * BLOCK])
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, x * 2.0 + 1.0, mask=offs < n)

    if platform == "gpu" and jt.get_compute_capability(0) < 90:
        pytest.skip("device tensor descriptors need sm90")
    x = randn((4096,))
    out = jt.triton_call(x, kernel=scratch_kernel, out_shape=x, grid=(16,), n=x.size, BLOCK=256)
    np.testing.assert_allclose(out, x * 2 + 1, rtol=1e-6)


def test_vmap_and_threads(platform):
    x, y = randn((3, 256)), randn((3, 256), seed=1)
    np.testing.assert_allclose(jax.vmap(lambda a, b: add(a, b, BLOCK_SIZE=64, vmap_method="sequential"))(x, y), x + y)
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:
        outs = list(pool.map(lambda _: add(x[0], y[0], BLOCK_SIZE=64), range(4)))
    for o in outs:
        np.testing.assert_allclose(o, x[0] + y[0])


def test_every_device_runs_its_own_target(gpu):
    devs = jax.devices()
    if len(devs) < 2:
        pytest.skip("needs two GPUs")
    targets = jt.device_targets()
    assert targets   # one per distinct architecture
    x = randn((1024,))
    for d in devs:
        xd = jax.device_put(x, d)
        np.testing.assert_allclose(add(xd, xd, BLOCK_SIZE=128), x + x)
