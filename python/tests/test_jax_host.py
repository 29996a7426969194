"""triton_call end to end on CPU: each Triton kernel here has a host twin
(examples/host/*.c, built in the build tree) that trident's host driver runs,
so outputs, aliases, zeroing, Refs, autotuning and hooks are checked on real
buffers without a GPU. The Triton kernels are compiled too where a test sets
targets (sm90, gfx942)."""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import triton
import triton.language as tl

import trident.jax as jt
from trident.jax import autotune as jt_autotune

from conftest import host_kernel_path


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def sum_diff_kernel(x_ptr, y_ptr, n, s_ptr, d_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(s_ptr + offs, x + y, mask=m)
    tl.store(d_ptr + offs, x - y, mask=m)


@triton.jit
def accumulate_kernel(x_ptr, n, out_ptr, count_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=m, other=0).to(tl.int64), axis=0))
    tl.atomic_add(count_ptr, tl.sum(m.to(tl.int32), axis=0))


@triton.jit
def scale_inplace_kernel(x_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


@triton.jit
def transpose_kernel(in_ptr, out_ptr, M, N, alpha, TILE: tl.constexpr):
    c = tl.program_id(0) * TILE + tl.arange(0, TILE)
    r = tl.program_id(1) * TILE + tl.arange(0, TILE)
    mask = (r[:, None] < M) & (c[None, :] < N)
    tile = tl.load(in_ptr + r[:, None] * N + c[None, :], mask=mask)
    tl.store(out_ptr + c[None, :] * M + r[:, None], alpha * tile, mask=mask)


@triton.jit
def scalars_kernel(out_ptr, a_i8: tl.int8, a_i16: tl.int16, a_i32: tl.int32, a_i64: tl.int64, a_u32: tl.uint32,
                   a_u64: tl.uint64, a_f16: tl.float16, a_bf16: tl.bfloat16, a_f32: tl.float32, a_f64: tl.float64,
                   a_i1: tl.int1):
    tl.store(out_ptr + 0, a_i8.to(tl.float64))
    tl.store(out_ptr + 1, a_i16.to(tl.float64))
    tl.store(out_ptr + 2, a_i32.to(tl.float64))
    tl.store(out_ptr + 3, a_i64.to(tl.float64))
    tl.store(out_ptr + 4, a_u32.to(tl.float64))
    tl.store(out_ptr + 5, a_u64.to(tl.float64))
    tl.store(out_ptr + 6, a_f16.to(tl.float64))
    tl.store(out_ptr + 7, a_bf16.to(tl.float64))
    tl.store(out_ptr + 8, a_f32.to(tl.float64))
    tl.store(out_ptr + 9, a_f64)
    tl.store(out_ptr + 10, a_i1.to(tl.float64))


TWINS = [(add_kernel, "add_kernel"), (sum_diff_kernel, "sum_diff_kernel"), (accumulate_kernel, "accumulate_kernel"),
         (scale_inplace_kernel, "scale_inplace_kernel"), (transpose_kernel, "transpose_kernel"),
         (scalars_kernel, "scalars_kernel")]


@pytest.fixture(autouse=True, scope="module")
def twins():
    if jax.default_backend() != "cpu":
        pytest.skip("host twins run where JAX runs on CPU")
    for fn, name in TWINS:
        p = host_kernel_path(name)
        if not p.exists():
            pytest.skip(f"host kernel {p} is not built")
        jt.host_twin(fn, p)


def rand(n, dtype=jnp.float32, seed=0):
    return jax.random.normal(jax.random.key(seed), (n,), dtype=dtype)


def add(x, y, **kw):
    return jt.triton_call(x, y, kernel=add_kernel, out_shape=x, grid=lambda m: (jt.cdiv(x.size, m["BLOCK"]),),
                          n_elements=x.size, BLOCK=1024, **kw)


@pytest.mark.parametrize("jit", [False, True])
def test_add_output_before_a_keyword_argument(jit):
    x, y = rand(3000), rand(3000, seed=1)
    f = jax.jit(add) if jit else add
    np.testing.assert_array_equal(f(x, y), x + y)


def test_add_launch_syntax_and_out_names():
    x, y = rand(2500), rand(2500, seed=1)
    k = jt.kernel(out_names="out_ptr")(add_kernel)
    grid = (jt.cdiv(x.size, 1024),)
    np.testing.assert_array_equal(k[grid](x, y, n_elements=x.size, BLOCK=1024, out_shape=x), x + y)
    # the output by index, the kwargs by position
    k2 = jt.kernel(add_kernel)
    np.testing.assert_array_equal(k2[grid](x, y, BLOCK=1024, n_elements=x.size, out_shape={2: x}), x + y)
    np.testing.assert_array_equal(
        jt.triton_call(x, y, kernel=add_kernel, out_type=jax.typeof(x), grid=grid, n_elements=x.size, BLOCK=1024),
        x + y)


@pytest.mark.parametrize("form", ["tuple", "list", "dict", "dict_reversed", "out_names", "positional_names"])
def test_two_outputs(form):
    x, y = rand(1000), rand(1000, seed=1)
    sd = jax.ShapeDtypeStruct(x.shape, x.dtype)
    kw = dict(kernel=sum_diff_kernel, grid=(jt.cdiv(x.size, 256),), BLOCK=256)
    if form == "tuple":
        s, d = jt.triton_call(x, y, x.size, out_shape=(sd, sd), **kw)
    elif form == "list":
        out = jt.triton_call(x, y, x.size, out_shape=[sd, sd], **kw)
        assert isinstance(out, list)
        s, d = out
    elif form == "dict":
        s, d = jt.triton_call(x, y, x.size, out_shape={"s_ptr": sd, "d_ptr": sd}, **kw)
    elif form == "dict_reversed":
        s, d = jt.triton_call(x, y, x.size, out_shape={"d_ptr": sd, 3: sd}, **kw)
    elif form == "out_names":
        s, d = jt.triton_call(x, y, n=x.size, out_shape=(sd, sd), out_names=("s_ptr", "d_ptr"), **kw)
    else:
        s, d = jt.triton_call(x, y, x.size, out_shape=[x, x], out_names=[3, 4], **kw)
    np.testing.assert_array_equal(s, x + y)
    np.testing.assert_array_equal(d, x - y)


@pytest.mark.parametrize("zeroed", [("out_ptr", "count_ptr"), (0, 1), [(2,), (3,)], (2, 3),
                                    lambda meta: ["out_ptr", "count_ptr"] if meta["BLOCK"] == 128 else []])
@pytest.mark.parametrize("jit", [False, True])
def test_zeroed_outputs(zeroed, jit):
    x = jax.random.randint(jax.random.key(3), (1000,), -100, 100, dtype=jnp.int32)

    def f(x):
        return jt.triton_call(x, x.size, kernel=accumulate_kernel, grid=(jt.cdiv(x.size, 128),), BLOCK=128,
                              out_shape=(jax.ShapeDtypeStruct((1,), jnp.int64) if jax.config.jax_enable_x64 else
                                         jax.ShapeDtypeStruct((1,), jnp.int64),
                                         jax.ShapeDtypeStruct((1,), jnp.int32)),
                              zeroed_outputs=zeroed)
    with jax.enable_x64(True):
        total, count = (jax.jit(f) if jit else f)(x)
        assert int(total[0]) == int(np.asarray(x, np.int64).sum())
        assert int(count[0]) == x.size


@pytest.mark.parametrize("aliases", [{0: 0}, "x_ptr", 0, ("x_ptr",), [0], [("x_ptr",)]])
@pytest.mark.parametrize("donate", [False, True])
def test_aliasing_forms(aliases, donate):
    x = rand(1500)
    expected = np.asarray(x) * 2.5

    def f(x):
        kw = dict(out_shape=x) if isinstance(aliases, dict) else {}
        return jt.triton_call(x, x.size, 2.5, kernel=scale_inplace_kernel, grid=(jt.cdiv(x.size, 512),), BLOCK=512,
                              input_output_aliases=aliases, **kw)
    out = jax.jit(f, donate_argnums=0)(x) if donate else f(x)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    if not donate:
        np.testing.assert_array_equal(x, rand(1500))   # the caller's array is unchanged


def test_aliased_and_pure_outputs_together():
    x, y = rand(700), rand(700, seed=1)
    # s_ptr is an output; x is aliased (the kernel does not write it: its values come back)
    out = jt.triton_call(x, y, x.size, kernel=sum_diff_kernel, grid=(jt.cdiv(x.size, 256),), BLOCK=256,
                         out_shape={"s_ptr": x, "d_ptr": x}, input_output_aliases=["x_ptr"])
    s, d, x_back = out
    np.testing.assert_array_equal(s, x + y)
    np.testing.assert_array_equal(d, x - y)
    np.testing.assert_array_equal(x_back, x)


def test_zeroing_an_aliased_buffer_is_refused():
    x = rand(600)
    with pytest.raises(jt.CoordinateError, match="scale_inplace_kernel.*zeroed_outputs"):
        jt.triton_call(x, x.size, 2.0, kernel=scale_inplace_kernel, grid=(2,), BLOCK=512,
                       input_output_aliases="x_ptr", zeroed_outputs=["x_ptr"])
    with pytest.raises(jt.CoordinateError, match="aliased"):
        jt.triton_call(x, x.size, 2.0, kernel=scale_inplace_kernel, grid=(2,), BLOCK=512, out_shape=x,
                       input_output_aliases={0: 0}, zeroed_outputs=[0])


@pytest.mark.parametrize("jit", [False, True])
def test_ref_argument_is_read_write(jit):
    x = rand(900)
    ref = jax.new_ref(x)

    def f(r):
        return jt.triton_call(r, 900, 3.0, kernel=scale_inplace_kernel, grid=(2,), BLOCK=512, out_type=())
    assert (jax.jit(f) if jit else f)(ref) == ()
    np.testing.assert_allclose(ref[...], np.asarray(x) * 3.0, rtol=1e-6)


def test_scalar_types_are_packed_as_annotated():
    with jax.enable_x64(True):
        names = ["a_i8", "a_i16", "a_i32", "a_i64", "a_u32", "a_u64", "a_f16", "a_bf16", "a_f32", "a_f64", "a_i1"]
        vals = (-7, -300, -70000, -2**40, 2**32 - 5, 2**63 + 11, 1.5, -2.75, 3.25, 1e300, True)
        out = jt.triton_call(kernel=scalars_kernel, out_shape=jax.ShapeDtypeStruct((11,), jnp.float64),
                             grid=1, num_warps=1, **dict(zip(names, vals)))
        out = np.asarray(out)
    expected = [-7, -300, -70000, -2**40, 2**32 - 5, float(2**63 + 11), 1.5, -2.75, 3.25, 1e300, 1]
    np.testing.assert_array_equal(out, np.array(expected, dtype=np.float64))


def test_numpy_scalars_and_float_as_fp32():
    x = jnp.arange(64 * 96, dtype=jnp.float32).reshape(64, 96)
    out = jt.triton_call(x, out_shape=jax.ShapeDtypeStruct((96, 64), jnp.float32), kernel=transpose_kernel,
                         grid=(jt.cdiv(96, 32), jt.cdiv(64, 32)), M=np.int32(64), N=96, alpha=np.float32(0.5),
                         TILE=32)
    np.testing.assert_array_equal(out, np.asarray(x).T * 0.5)


def test_vmap_runs_sequentially():
    x, y = rand(2048).reshape(2, 1024), rand(2048, seed=1).reshape(2, 1024)
    out = jax.vmap(lambda a, b: jt.triton_call(a, b, kernel=add_kernel, out_shape=a, grid=(1,), n_elements=1024,
                                               BLOCK=1024))(x, y)
    np.testing.assert_array_equal(out, x + y)


def test_targets_compile_for_gpus_and_run_the_twin(fresh_cache):
    x, y = rand(1200), rand(1200, seed=1)
    with jt.targets("sm90", "gfx942", "host"):
        np.testing.assert_array_equal(add(x, y), x + y)
    names = sorted(os.listdir(fresh_cache / "triton"))
    assert len(names) == 2 and all(n.endswith(".trdb") for n in names)


# ---------------------------------------------------------------- autotune

def _tuned_add(**kw):
    return triton.autotune([triton.Config({"BLOCK": 1024}, num_warps=1), triton.Config({"BLOCK": 1024}, num_warps=2)],
                           key=["n_elements"], **kw)(add_kernel)


def test_autotune_benchmarks_real_inputs_once_then_caches(fresh_cache, monkeypatch):
    kernel = _tuned_add()
    x, y = rand(4000), rand(4000, seed=1)
    call = lambda x, y: jt.triton_call(x, y, kernel=kernel, out_shape=x, grid=(jt.cdiv(x.size, 1024),),
                                       n_elements=x.size)
    seen = []
    real = jt_autotune.benchmark
    monkeypatch.setattr(jt_autotune, "benchmark", lambda *a, **k: seen.append(a[-1]) or real(*a, **k))
    np.testing.assert_array_equal(call(x, y), x + y)
    assert seen == [True]                        # concrete: the real arrays
    entries = list((fresh_cache / "autotune").iterdir())
    assert len(entries) == 1
    entry = json.loads(entries[0].read_text())
    assert entry["inputs"] == "real" and entry["device"] == "host:0" and len(entry["times_ms"]) == 2
    np.testing.assert_array_equal(jax.jit(call)(x, y), x + y)   # same shapes: no new benchmark
    assert seen == [True]
    x2, y2 = rand(5000), rand(5000, seed=1)
    np.testing.assert_array_equal(jax.jit(call)(x2, y2), x2 + y2)
    assert seen == [True, False]                 # traced: arrays of the same shapes
    # a new process: the memory cache is empty, the disk holds the choice
    monkeypatch.setattr(jt_autotune, "_choices", {})
    monkeypatch.setattr(jt_autotune, "benchmark", lambda *a, **k: pytest.fail("benchmarked again"))
    np.testing.assert_array_equal(call(x, y), x + y)


def test_autotune_prunes_configs_contradicting_keywords(fresh_cache):
    kernel = triton.autotune([triton.Config({"BLOCK": 512}), triton.Config({"BLOCK": 1024})], key=[])(add_kernel)
    x, y = rand(3000), rand(3000, seed=1)
    # BLOCK=1024 leaves one config: no benchmark
    out = jt.triton_call(x, y, kernel=kernel, out_shape=x, grid=(3,), n_elements=x.size, BLOCK=1024)
    np.testing.assert_array_equal(out, x + y)
    assert not (fresh_cache / "autotune").exists()


def test_autotune_with_aliasing_runs_the_kernel_once(fresh_cache):
    kernel = triton.autotune([triton.Config({"BLOCK": 512}, num_warps=1), triton.Config({"BLOCK": 512}, num_warps=4)],
                             key=["n"])(scale_inplace_kernel)
    x = rand(1500)
    out = jt.triton_call(x, x.size, 2.0, kernel=kernel, grid=(3,), input_output_aliases={0: 0}, out_shape=x)
    np.testing.assert_allclose(out, np.asarray(x) * 2.0, rtol=1e-6)


def test_autotune_hooks(fresh_cache, monkeypatch):
    calls = []

    def pre_hook(nargs):
        calls.append(type(nargs["out_ptr"]).__name__)
        nargs["out_ptr"].zero_()
        nargs["count_ptr"].zero_()

    kernel = triton.autotune([triton.Config({"BLOCK": 128}, num_warps=1, pre_hook=pre_hook),
                              triton.Config({"BLOCK": 128}, num_warps=2, pre_hook=pre_hook)],
                             key=["n"], reset_to_zero=["out_ptr"])(accumulate_kernel)
    zeroed = []
    real_zero = jt_autotune.BenchArray.zero_
    monkeypatch.setattr(jt_autotune.BenchArray, "zero_", lambda self: zeroed.append(1) or real_zero(self))
    x = jax.random.randint(jax.random.key(4), (1000,), 0, 50, dtype=jnp.int32)
    with jax.enable_x64(True):
        total, count = jt.triton_call(x, x.size, kernel=kernel, grid=(8,),
                                      out_shape=(jax.ShapeDtypeStruct((1,), jnp.int64),
                                                 jax.ShapeDtypeStruct((1,), jnp.int32)))
        # the chosen config's pre_hook zeroes both outputs for the real launch
        assert int(total[0]) == int(np.asarray(x, np.int64).sum()) and int(count[0]) == 1000
    assert "BenchArray" in calls and "_Recorder" in calls
    assert zeroed   # pre_hook and reset_to_zero ran on the benchmark buffers


def test_heuristics_and_autotune_layers(fresh_cache):
    seen = []

    def block(args):
        seen.append(args["n_elements"])
        return 1024

    kernel = triton.heuristics({"BLOCK": block})(add_kernel)
    x, y = rand(2100), rand(2100, seed=1)
    np.testing.assert_array_equal(
        jt.triton_call(x, y, kernel=kernel, out_shape=x, grid=(3,), n_elements=x.size), x + y)
    assert seen == [2100]
    tuned = triton.autotune([triton.Config({}, num_warps=1), triton.Config({}, num_warps=2)], key=["n_elements"])(
        kernel)
    np.testing.assert_array_equal(
        jt.triton_call(x, y, kernel=tuned, out_shape=x, grid=(3,), n_elements=x.size), x + y)


# ---------------------------------------------------------------- errors

def test_unknown_keyword_names_the_kernel_and_the_options():
    x = rand(10)
    with pytest.raises(jt.OptionError) as e:
        jt.triton_call(x, x, kernel=add_kernel, out_shape=x, grid=1, n_elements=10, BLOCK=1024, BLOK=3)
    msg = str(e.value)
    assert "add_kernel" in msg and "'BLOK'" in msg and "num_warps" in msg and "x_ptr" in msg


def test_cpu_without_a_twin_says_so():
    @triton.jit
    def lonely(x_ptr, out_ptr):
        tl.store(out_ptr, tl.load(x_ptr))

    x = rand(4)
    with pytest.raises(jt.CompileError, match="lonely.*host twin"):
        jt.triton_call(x, kernel=lonely, out_shape=x, grid=1)


def test_kernel_call_out_params_place_outputs(host_kernel):
    import trident
    k = trident.Kernel(host_kernel("add_kernel"), name="add_kernel", signature="x:*fp32,y:*fp32,out:*fp32,n:i32")
    x, y = rand(3000), rand(3000, seed=2)
    out = jt.kernel_call(k, x, y, x.size, grid=(3,), out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), out_params=[2])
    np.testing.assert_array_equal(out, x + y)
    with pytest.raises(jt.KernelCallError, match="out_params"):
        jt.kernel_call(k, x, y, x.size, grid=(3,), out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), out_params=[7])


def _add_checked():
    # named add_kernel: bundled with GPU images, the twin's entry symbol is the kernel's name
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK == 1024, "the host twin's block")
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n_elements
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
    return add_kernel


add_checked = _add_checked()


def test_autotune_skips_configs_that_do_not_compile(fresh_cache):
    jt.host_twin(add_checked, host_kernel_path("add_kernel"))
    tuned = triton.autotune([triton.Config({"BLOCK": 512}), triton.Config({"BLOCK": 1024}),
                             triton.Config({"BLOCK": 1024}, num_warps=8)], key=["n_elements"])(add_checked)
    x, y = rand(3000), rand(3000, seed=1)
    with jt.targets("sm90", "host"), pytest.warns(RuntimeWarning, match="BLOCK: 512"):
        out = jt.triton_call(x, y, kernel=tuned, out_shape=x, grid=(3,), n_elements=x.size)
    np.testing.assert_array_equal(out, x + y)
