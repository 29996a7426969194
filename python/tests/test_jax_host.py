# SPDX-License-Identifier: Apache-2.0
"""triton_call end to end on CPU: each Triton kernel here has a host twin
(examples/host/*.c, built in the build tree) that trident's host driver runs,
so outputs, aliases, zeroing, Refs, autotuning and hooks are checked on real
buffers without a GPU. The Triton kernels are compiled too where a test sets
targets (sm90, gfx942)."""
import json
import logging
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import triton
import triton.language as tl

import trident.jax as jt

from conftest import PACKAGE_ROOT, SRC, fixture_kernels, host_kernel_path

# the committed fixtures' kernels (tests/fixtures/kernels.py), each with a host twin
add_kernel, sum_diff_kernel, accumulate_kernel, scale_inplace_kernel, transpose_kernel = (
    fixture_kernels.add_kernel, fixture_kernels.sum_diff_kernel, fixture_kernels.accumulate_kernel,
    fixture_kernels.scale_inplace_kernel, fixture_kernels.transpose_kernel)


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


def test_zeroing_an_aliased_input_by_coordinate_is_refused():
    """The ROCm fork's rule for coordinates: an input is not an output to zero."""
    x = rand(600)
    with pytest.raises(jt.CoordinateError, match="scale_inplace_kernel.*zeroed_outputs"):
        jt.triton_call(x, x.size, 2.0, kernel=scale_inplace_kernel, grid=(2,), BLOCK=512,
                       input_output_aliases="x_ptr", zeroed_outputs=["x_ptr"])


@pytest.mark.parametrize("jit", [False, True])
def test_zeroed_outputs_zero_an_aliased_output_in_the_original_form(jit):
    """Upstream jax-triton: output indices with the dict input_output_aliases zero the aliased buffer before the
    launch, so the kernel accumulates from zero instead of from the input's values."""
    x = jax.random.randint(jax.random.key(5), (900,), -100, 100, dtype=jnp.int32)
    with jax.enable_x64(True):
        acc = jax.random.randint(jax.random.key(6), (1,), 1000, 2000, dtype=jnp.int64)

        def f(x, acc, zeroed):
            return jt.triton_call(x, x.size, acc, kernel=accumulate_kernel, grid=(jt.cdiv(x.size, 128),), BLOCK=128,
                                  out_shape=(jax.ShapeDtypeStruct((1,), jnp.int64),
                                             jax.ShapeDtypeStruct((1,), jnp.int32)),
                                  input_output_aliases={2: 0}, zeroed_outputs=zeroed)
        run = (lambda *a: jax.jit(f, static_argnums=2)(*a)) if jit else f
        total, count = run(x, acc, (0, 1))
        assert int(total[0]) == int(np.asarray(x, np.int64).sum()) and int(count[0]) == x.size
        total, _ = run(x, acc, (1,))      # not zeroed: the kernel adds to the input's value
        assert int(total[0]) == int(acc[0]) + int(np.asarray(x, np.int64).sum())


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


def test_vmap_runs_sequentially_when_asked():
    x, y = rand(2048).reshape(2, 1024), rand(2048, seed=1).reshape(2, 1024)
    out = jax.vmap(lambda a, b: jt.triton_call(a, b, kernel=add_kernel, out_shape=a, grid=(1,), n_elements=1024,
                                               BLOCK=1024, vmap_method="sequential"))(x, y)
    np.testing.assert_array_equal(out, x + y)
    with pytest.raises(NotImplementedError, match=r"jax_triton.triton_call does not support batching with jax.vmap. "
                                                  r"Use jax.custom_batching.custom_vmap"):
        jax.vmap(lambda a, b: jt.triton_call(a, b, kernel=add_kernel, out_shape=a, grid=(1,), n_elements=1024,
                                             BLOCK=1024))(x, y)


def test_targets_compile_for_gpus_and_run_the_twin(fresh_cache):
    x, y = rand(1200), rand(1200, seed=1)
    with jt.targets("sm90", "gfx942", "host"):
        np.testing.assert_array_equal(add(x, y), x + y)
    names = sorted(os.listdir(fresh_cache / "triton"))
    assert len(names) == 2 and all(n.endswith(".trdb") for n in names)


# ---------------------------------------------------------------- autotune

# The first execution of an autotuned call benchmarks its configs in libtrident's handler, on the call's
# buffers. On the host a config is made slow by its grid: BLOCK=1 launches one program an element, where the
# twins (512 or 128 elements a program) need one a block; the extra programs only cost their scheduling.
AUTOTUNE_SCRIPT = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp, numpy as np, triton
import trident.jax as jt
from conftest import host_kernel_path
from test_jax_host import accumulate_kernel, scale_inplace_kernel

jt.host_twin(scale_inplace_kernel, host_kernel_path("scale_inplace_kernel"))
jt.host_twin(accumulate_kernel, host_kernel_path("accumulate_kernel"))
# the slow config first: choosing it by default, or on the wrong figures, fails
scale = triton.autotune([triton.Config({"BLOCK": 1}), triton.Config({"BLOCK": 512})], key=["n"])(
    scale_inplace_kernel)
acc = triton.autotune([triton.Config({"BLOCK": 1}), triton.Config({"BLOCK": 128})], key=["n"],
                      reset_to_zero=["out_ptr", "count_ptr"])(accumulate_kernel)

def f(x, ints):
    y = jt.triton_call(x, x.size, 1.75, kernel=scale, grid=lambda m: (jt.cdiv(x.size, m["BLOCK"]),),
                       input_output_aliases={0: 0}, out_shape=x)
    total, count = jt.triton_call(ints, ints.size, kernel=acc, grid=lambda m: (jt.cdiv(ints.size, m["BLOCK"]),),
                                  out_shape=(jax.ShapeDtypeStruct((1,), jnp.int64),
                                             jax.ShapeDtypeStruct((1,), jnp.int32)))
    return y, total, count

n = 300_000
rng = np.random.default_rng(int(sys.argv[2]))
x = jnp.asarray(rng.standard_normal(n).astype(np.float32))
ints = jnp.asarray(rng.integers(-1000, 1000, n).astype(np.int32))
x0, i0 = np.asarray(x).copy(), np.asarray(ints).copy()
for run in (jax.jit(f), jax.jit(lambda a, b: f(a, b))):    # two executables of the same calls
    y, total, count = run(x, ints)
    # the aliased input as one launch leaves it, every element; the caller's arrays untouched
    np.testing.assert_array_equal(np.asarray(y), x0 * np.float32(1.75))
    np.testing.assert_array_equal(np.asarray(x), x0)
    # reset_to_zero: zeroed before each launch, the benchmark's and the real one
    assert int(total[0]) == int(i0.astype(np.int64).sum()) and int(count[0]) == n, (total, count)
print("ok")
"""


def _autotune_run(tmp_path, seed):
    env = dict(os.environ, TRIDENT_CACHE_DIR=str(tmp_path / "trident"), TRIDENT_LOG="info",
               PYTHONPATH=PACKAGE_ROOT)
    r = subprocess.run([sys.executable, "-c", AUTOTUNE_SCRIPT, str(SRC / "python" / "tests"), str(seed)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout[-2000:] + r.stderr[-4000:]
    return r.stderr


def test_autotune_chooses_at_first_execution_and_keeps_the_choice(tmp_path):
    cache = tmp_path / "trident"
    log = _autotune_run(tmp_path, 1)
    # each call benchmarked once, in the first executable; the second took the choice from memory
    assert log.count("chosen by benchmark on the call's buffers") == 2, log
    assert log.count("from this process's memory") == 2, log
    # kept by libtrident's tuner (trd_tuner_*), in its files
    files = sorted((cache / "tune").iterdir())
    assert len(files) == 2 and all(f.name.endswith(f"-{trident_arch()}.json") for f in files)
    assert oct((cache / "tune").stat().st_mode & 0o777) == "0o700"
    assert not (cache / "autotune").exists()
    entries = {json.loads(f.read_text())["kernel"]: json.loads(f.read_text()) for f in files}
    assert sorted(entries) == ["accumulate_kernel", "scale_inplace_kernel"]
    for e in entries.values():
        assert e["format"] == "trident-tune" and e["variants"] == 2 and e["device"] == "host:0"
        assert e["choice"] == 1, e                       # the fast config, although listed second
        assert e["times_ms"][0] > e["times_ms"][1], e
    stamps = [f.stat().st_mtime_ns for f in files]
    # another process, other inputs of the same shapes: the files answer, nothing is benchmarked
    log = _autotune_run(tmp_path, 2)
    assert "chosen by benchmark" not in log, log
    for f in files:
        assert f"candidate 1 of 2, from {f}" in log, log
    assert [f.stat().st_mtime_ns for f in files] == stamps


def trident_arch():
    import trident
    return next(d["arch"] for d in trident.devices() if d["uri"] == "host:0")


def test_autotune_prunes_configs_contradicting_keywords(fresh_cache):
    kernel = triton.autotune([triton.Config({"BLOCK": 512}), triton.Config({"BLOCK": 1024})], key=[])(add_kernel)
    x, y = rand(3000), rand(3000, seed=1)
    # BLOCK=1024 leaves one config: no benchmark
    out = jt.triton_call(x, y, kernel=kernel, out_shape=x, grid=(3,), n_elements=x.size, BLOCK=1024)
    np.testing.assert_array_equal(out, x + y)
    assert not (fresh_cache / "tune").exists()


def test_autotune_with_aliasing_runs_the_kernel_once(fresh_cache):
    kernel = triton.autotune([triton.Config({"BLOCK": 512}, num_warps=1), triton.Config({"BLOCK": 512}, num_warps=4)],
                             key=["n"])(scale_inplace_kernel)
    x = rand(1500)
    out = jt.triton_call(x, x.size, 2.0, kernel=kernel, grid=(3,), input_output_aliases={0: 0}, out_shape=x)
    np.testing.assert_allclose(out, np.asarray(x) * 2.0, rtol=1e-6)


def test_autotune_hooks(fresh_cache):
    calls = []

    def pre_hook(nargs):
        calls.append((type(nargs["out_ptr"]).__name__, nargs["BLOCK"]))
        nargs["out_ptr"].zero_()
        nargs["count_ptr"].zero_()

    kernel = triton.autotune([triton.Config({"BLOCK": 128}, num_warps=1, pre_hook=pre_hook),
                              triton.Config({"BLOCK": 128}, num_warps=2, pre_hook=pre_hook)],
                             key=["n"])(accumulate_kernel)
    x = jax.random.randint(jax.random.key(4), (1000,), 0, 50, dtype=jnp.int32)
    with jax.enable_x64(True):
        for jit in (False, True):
            call = lambda x: jt.triton_call(x, x.size, kernel=kernel, grid=(8,),
                                            out_shape=(jax.ShapeDtypeStruct((1,), jnp.int64),
                                                       jax.ShapeDtypeStruct((1,), jnp.int32)))
            total, count = (jax.jit(call) if jit else call)(x)
            # each config's pre_hook zeroes both outputs before each of its launches, benchmarks included
            assert int(total[0]) == int(np.asarray(x, np.int64).sum()) and int(count[0]) == 1000
    # the hooks ran at trace time, on recording proxies, once per config and trace
    assert calls == [("_Recorder", 128)] * 4


def test_autotune_user_post_hook_is_not_called_and_says_so(fresh_cache):
    """Triton calls an autotuner's post_hook after each benchmark launch; trident benchmarks in C, where no Python
    runs: a warning says the hook is skipped, and the result is still right."""
    called = []
    kernel = triton.autotune([triton.Config({"BLOCK": 512}, num_warps=1), triton.Config({"BLOCK": 512}, num_warps=2)],
                             key=["n"], post_hook=lambda nargs, exception: called.append(1))(scale_inplace_kernel)
    x = rand(1500, seed=7)
    with pytest.warns(RuntimeWarning, match="kernel 'scale_inplace_kernel': the autotuner's post_hook is not called"):
        out = jt.triton_call(x, x.size, 3.0, kernel=kernel, grid=(3,), input_output_aliases={0: 0}, out_shape=x)
    np.testing.assert_allclose(out, np.asarray(x) * 3.0, rtol=1e-6)
    assert called == []


def test_autotune_pre_hooks_that_fill_inputs_differently_are_refused():
    def hook(v):
        return lambda nargs: nargs["x_ptr"].fill_(v)

    kernel = triton.autotune([triton.Config({"BLOCK": 512}, pre_hook=hook(1.0)),
                              triton.Config({"BLOCK": 512}, num_warps=2, pre_hook=hook(2.0))], key=[])(
        scale_inplace_kernel)
    x = rand(1000)
    with pytest.raises(NotImplementedError, match="fill inputs differently"):
        jt.triton_call(x, x.size, 2.0, kernel=kernel, grid=(2,), input_output_aliases={0: 0}, out_shape=x)
    same = triton.autotune([triton.Config({"BLOCK": 512}, pre_hook=hook(3.0)),
                            triton.Config({"BLOCK": 512}, num_warps=2, pre_hook=hook(3.0))], key=[])(
        scale_inplace_kernel)
    out = jt.triton_call(x, x.size, 2.0, kernel=same, grid=(2,), input_output_aliases={0: 0}, out_shape=x)
    np.testing.assert_array_equal(out, np.full(1000, 6.0, np.float32))


def test_autotune_pruning_runs_at_trace_time(fresh_cache):
    seen = []

    def early(configs, named, **kw):
        seen.append((len(configs), tuple(named["x_ptr"].shape)))
        return configs[1:]

    kernel = triton.autotune([triton.Config({"BLOCK": 512}, num_warps=1), triton.Config({"BLOCK": 1024}),
                              triton.Config({"BLOCK": 1024}, num_warps=2)], key=["n_elements"],
                             prune_configs_by={"early_config_prune": early,
                                               "perf_model": lambda **kw: kw["num_warps"], "top_k": 1})(add_kernel)
    x, y = rand(3000), rand(3000, seed=1)
    out = jax.jit(lambda x, y: jt.triton_call(x, y, kernel=kernel, out_shape=x,
                                              grid=lambda m: (jt.cdiv(3000, m["BLOCK"]),), n_elements=3000))(x, y)
    np.testing.assert_array_equal(out, x + y)
    assert seen == [(3, (3000,))]
    assert not (fresh_cache / "tune").exists()   # one config left: no benchmark


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


@triton.jit
def lonely(x_ptr, out_ptr):
    tl.store(out_ptr, tl.load(x_ptr) * 2)


def test_cpu_without_a_twin_interprets_unless_a_twin_is_required(caplog):
    x = rand(4)
    with jt.cpu_kernels("host"), pytest.raises(jt.CompileError, match="lonely.*cpu_kernels\\('host'\\) requires a "
                                                                       "host twin"):
        jt.triton_call(x, kernel=lonely, out_shape=x, grid=1)
    with caplog.at_level(logging.INFO, logger="trident.jax"):
        np.testing.assert_array_equal(jt.triton_call(x, kernel=lonely, out_shape=x, grid=1)[0], x[0] * 2)
        np.testing.assert_array_equal(jax.jit(lambda x: jt.triton_call(x, kernel=lonely, out_shape=x, grid=1))(x)[0],
                                      x[0] * 2)
    said = [r.getMessage() for r in caplog.records if "lonely" in r.getMessage()]
    assert said == ["kernel 'lonely' runs on JAX's CPU platform through Triton's interpreter (it has no host twin)"]
    with pytest.raises(ValueError, match="use must be one of 'auto', 'host', 'interpreter', not 'gpu'"):
        with jt.cpu_kernels("gpu"):
            pass
    with pytest.raises(ValueError, match="config must be an autotuner config's index"):
        with jt.cpu_kernels(config=-1):
            pass


def test_interpreter_on_request_even_with_a_twin(caplog):
    """A host twin wins when present; cpu_kernels("interpreter") runs Triton's interpreter instead. The twin
    (examples/host/add_kernel.c) and the kernel compute the same sum, so both runs give jnp's."""
    x, y = rand(3000), rand(3000, seed=1)
    with caplog.at_level(logging.INFO, logger="trident.jax"):
        np.testing.assert_array_equal(jt.triton_call(x, y, kernel=add_kernel, out_shape=x, grid=(3,),
                                                     n_elements=x.size, BLOCK=1024), x + y)
        assert not [r for r in caplog.records if "interpreter" in r.getMessage()]
        with jt.cpu_kernels("interpreter"):
            np.testing.assert_array_equal(jt.triton_call(x, y, kernel=add_kernel, out_shape=x, grid=(3,),
                                                         n_elements=x.size, BLOCK=1024), x + y)
    assert [r.getMessage() for r in caplog.records] == [
        "kernel 'add_kernel' runs on JAX's CPU platform through Triton's interpreter (cpu_kernels('interpreter'))"]


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


@triton.jit
def _one_per_program(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + pid, tl.sum(tl.load(x_ptr + offs), axis=0))


def test_outputs_too_small_for_the_kernel_are_refused_and_the_process_carries_on():
    """A twin writing 4096 floats into an out_shape of 4 killed the process ("double free or corruption": XLA's
    buffer is on the heap); the blocked store's bounds are read from the kernel and the call is refused, naming
    the kernel, the parameter and the sizes. Inputs too small for the blocked loads likewise; what is right, or
    what the kernel's source does not say plainly, runs."""
    x, y = rand(4096), rand(4096, seed=1)

    def call(x, y, out):
        return jt.triton_call(x, y, kernel=add_kernel, out_shape=out, grid=(4,), n_elements=4096, BLOCK=1024)
    for jit in (False, True):
        f = jax.jit(call, static_argnums=2) if jit else call
        with pytest.raises(jt.KernelCallError, match=r"kernel 'add_kernel': tl\.store through 'out_ptr' at "
                           r"kernels\.py:\d+ reaches element 4095 \(BLOCK 1024 x 4 programs, masked below 4096\), "
                           r"but 'out_ptr' is output 0, float32\[4\]: 4 elements"):
            f(x, y, jax.ShapeDtypeStruct((4,), jnp.float32))
        with pytest.raises(jt.KernelCallError, match=r"tl\.load through 'x_ptr' .* 'x_ptr' is input 0, "
                           r"float32\[100\]: 100 elements"):
            f(x[:100], y, jax.ShapeDtypeStruct((4096,), jnp.float32))
        np.testing.assert_array_equal(f(x, y, jax.ShapeDtypeStruct((4096,), jnp.float32)), x + y)
    # the mask bounds what is written: 3000 elements under a grid of 3 x 1024
    np.testing.assert_array_equal(
        jt.triton_call(x[:3000], y[:3000], kernel=add_kernel, out_shape=x[:3000], grid=(3,), n_elements=3000,
                       BLOCK=1024), x[:3000] + y[:3000])


def test_bounds_the_source_does_not_state_are_not_judged():
    """A store at out_ptr + pid writes one element a program: nothing says it passes the end, so a call the
    kernel's Triton launch accepts is not refused (the interpreter runs it and checks every access)."""
    from trident.jax import bounds, coords
    x = rand(4 * 256)
    vals = {"x_ptr": coords.In(jax.ShapeDtypeStruct(x.shape, x.dtype), 0),
            "out_ptr": coords.Out(0, jax.ShapeDtypeStruct((4,), jnp.float32)), "BLOCK": 256}
    bounds.check(_one_per_program, "_one_per_program", (4, 1, 1), vals)          # 4 programs, 4 outputs: fine
    with pytest.raises(jt.KernelCallError, match="tl.load through 'x_ptr'"):
        bounds.check(_one_per_program, "_one_per_program", (5, 1, 1), vals)      # loads elements up to 1279
