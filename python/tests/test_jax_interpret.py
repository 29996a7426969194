# SPDX-License-Identifier: Apache-2.0
"""Triton's interpreter behind JAX's CPU platform (trident.jax.interpret): what it adds to running the GPU suite's
kernels there (test_jax_gpu.py, test_jax_examples.py, test_jax_tma.py run those on CPU too): faults in a kernel
reported naming the kernel (accesses outside the call's buffers, stores into inputs, failed device asserts,
exceptions), kernels it cannot run refused, the autotuner config it runs chosen, bfloat16 arithmetic, XLA's
buffers used in place, triton.language restored after every run (compiling for a GPU afterwards works), and
concurrent runs. Every output is checked against jnp on random inputs."""
from __future__ import annotations

import gc
import re
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import triton
import triton.language as tl

import trident.jax as jt
from trident.jax import host_ffi, interpret


LANGUAGE = (tl.load, tl.core.load, tl.core.reduce, getattr(tl.tensor, "__index__", None))   # as imported, before any run


@pytest.fixture(autouse=True)
def on_cpu():
    with jax.default_device(jax.devices("cpu")[0]):
        yield


def rand(shape, dtype=jnp.float32, seed=0):
    k = jax.random.key(seed)
    if jnp.issubdtype(dtype, jnp.integer):
        return jax.random.randint(k, shape, -100, 100, dtype=dtype)
    return jax.random.normal(k, shape, jnp.float32).astype(dtype)


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def unmasked_copy_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def writes_its_input_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x + 1)
    tl.store(out_ptr + offs, x)


@triton.jit
def asserting_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x < 100.0, "x below 100")
    tl.store(out_ptr + offs, x)


def copy(x, n, block=32, **kw):
    return jt.triton_call(x, kernel=copy_kernel, out_shape=x, grid=(triton.cdiv(x.size, block),), n=n, BLOCK=block,
                          **kw)


# ------------------------------------------------------------------ faults

def test_a_load_past_the_end_names_the_kernel_the_program_and_the_buffer():
    x = rand((100,))
    np.testing.assert_array_equal(copy(x, 100), x)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"INVALID_ARGUMENT: kernel 'copy_kernel' \(Triton's "
                       r"interpreter\), program \(3, 0, 0\) at .*test_jax_interpret.py:\d+: tl.load of 4-byte "
                       r"elements at 0x[0-9a-f]+, outside the buffer its pointer came from \(28 of 32 elements\): 0 bytes past "
                       r"the end of 'x_ptr' \(input 0: float32\[100\], 400 bytes\)"):
        jax.block_until_ready(jax.jit(lambda x: copy(x, 128))(x))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"kernel 'unmasked_copy_kernel'.*program \(1, 0, 0\).*"
                                                         r"tl.load.*past the end of 'x_ptr'"):
        jax.block_until_ready(jt.triton_call(x, kernel=unmasked_copy_kernel, out_shape=x, grid=(2,), BLOCK=64))
    # the language is whole again: the next call runs
    np.testing.assert_array_equal(copy(x, 100), x)


def test_a_store_into_an_unaliased_input_is_refused_and_an_aliased_one_runs():
    x = rand((16,))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"kernel 'writes_its_input_kernel'.*tl.store writes into "
                       r"'x_ptr' \(input 0: float32\[16\], 64 bytes\), an input not aliased to an output .*alias it "
                       r"\(input_output_aliases\) or pass a jax.Ref"):
        jax.block_until_ready(jt.triton_call(x, kernel=writes_its_input_kernel, out_shape=x, grid=1, BLOCK=16))
    copied, incremented = jt.triton_call(x, kernel=writes_its_input_kernel, out_shape=[x, x], grid=1, BLOCK=16,
                                         input_output_aliases={0: 1})
    np.testing.assert_array_equal(copied, x)
    np.testing.assert_array_equal(incremented, x + 1)


def test_device_asserts_run_with_debug_as_on_a_gpu():
    x = rand((16,)).at[5].set(1000.0)
    # without debug, tl.device_assert is compiled out: the kernel runs
    np.testing.assert_array_equal(jt.triton_call(x, kernel=asserting_kernel, out_shape=x, grid=1, BLOCK=16), x)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"kernel 'asserting_kernel' \(Triton's interpreter\), program "
                                                         r"\(0, 0, 0\) at .*test_jax_interpret.py:\d+: tl.device_assert failed: "
                                                         r"x below 100"):
        jax.block_until_ready(jt.triton_call(x, kernel=asserting_kernel, out_shape=x, grid=1, BLOCK=16, debug=True))
    small = rand((16,), seed=3)
    np.testing.assert_array_equal(jt.triton_call(small, kernel=asserting_kernel, out_shape=small, grid=1, BLOCK=16,
                                                 debug=True), small)


def test_an_exception_in_the_kernel_names_the_kernel_and_its_line():
    """Inline PTX, which Triton's interpreter cannot run: its NotImplementedError becomes the call's error."""
    @triton.jit
    def asm_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [tl.load(x_ptr + offs)], dtype=tl.int32,
                                      is_pure=True, pack=1)
        tl.store(out_ptr + offs, y)

    x = rand((8,), jnp.int32)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"UNKNOWN: kernel 'asm_kernel' \(Triton's interpreter\), "
                                                         r"program \(0, 0, 0\) at .*test_jax_interpret.py:\d+: "
                                                         r"NotImplementedError: inline_asm not supported"):
        jax.block_until_ready(jt.triton_call(x, kernel=asm_kernel, out_shape=x, grid=1, BLOCK=8))


def test_an_unknown_call_fails_naming_the_kernel():
    """A computation whose interpreted call this process did not lower (an exported one): NOT_FOUND, not a crash."""
    with pytest.raises(host_ffi.FfiError, match="kernel 'k': its interpreted call \\(elsewhere-1\\) is not known to "
                                                "this process"):
        interpret._execute([], [], {"call": b"elsewhere-1", "kernel": b"k"})


def _call_key(lowered) -> str:
    m = re.search(r'call = "([^"]+)"', lowered.as_text())
    assert m, lowered.as_text()
    return m.group(1)


def test_a_plan_outlives_the_executable_that_dispatched_it():
    """JAX dispatches asynchronously, and a jitted lambda's executable goes when the call returns: the execution
    may start after that, so the plan its custom call names must still be known (it was kept by the executable, and
    make check on a loaded 2-core machine saw 'its interpreted call ... is not known to this process' in test_add)."""
    x = rand((64,))
    compiled = jax.jit(lambda x: copy(x, 64)).lower(x).compile()
    key = _call_key(compiled)
    np.testing.assert_array_equal(compiled(x), x)
    del compiled
    gc.collect()
    assert key in interpret._plans


def test_equal_calls_share_one_plan_and_one_lowering():
    """Lowering the same call again names the same plan: the HLO is the same (JAX's caches reuse it) and the
    table of plans does not grow with re-jitted lambdas."""
    x = rand((64,))
    first = _call_key(jax.jit(lambda x: copy(x, 64)).lower(x))
    size = len(interpret._plans)
    for _ in range(3):
        assert _call_key(jax.jit(lambda x: copy(x, 64)).lower(x)) == first
    assert len(interpret._plans) == size
    assert _call_key(jax.jit(lambda x: copy(x, 32)).lower(x)) != first     # another n: another plan
    assert _call_key(jax.jit(lambda x: copy(x, 64)).lower(rand((96,)))) != first


@triton.jit
def offset_kernel(x_ptr, s, out_ptr, BLOCK: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs) + C).to(tl.float32) + s)


def offset(x, c, s=0.0):
    out = jax.ShapeDtypeStruct(x.shape, jnp.float32)
    return jt.triton_call(x, s, kernel=offset_kernel, out_shape=out, grid=1, BLOCK=x.size, C=c)


def test_values_equal_in_python_but_not_to_the_kernel_are_other_plans():
    """Python calls constexpr(1) and constexpr(1.0) equal, and 0.0 and -0.0: one plan for both would run the second
    call with the first one's value, a silently wrong result (int32 arithmetic wraps, float does not)."""
    x = jnp.full((16,), 2**31 - 1, jnp.int32)
    np.testing.assert_array_equal(jax.jit(lambda x: offset(x, 1))(x), np.full(16, -2.0**31, np.float32))
    np.testing.assert_array_equal(jax.jit(lambda x: offset(x, 1.0))(x), np.full(16, 2.0**31, np.float32))
    keys = {_call_key(jax.jit(lambda x, c=c: offset(x, c)).lower(x)) for c in (1, 1.0, True)}
    assert len(keys) == 3
    for zero, negative in ((0.0, -0.0), (np.float32(0.0), np.float32(-0.0))):
        assert (_call_key(jax.jit(lambda x: offset(x, 1, zero)).lower(x)) !=
                _call_key(jax.jit(lambda x: offset(x, 1, negative)).lower(x)))


# --------------------------------------------------------- what it refuses

def test_kernels_referring_to_their_enclosing_function_are_refused():
    scale = 3.0

    @triton.jit
    def closure_kernel(x_ptr, out_ptr):
        tl.store(out_ptr, tl.load(x_ptr) * scale)

    x = rand((1,))
    with pytest.raises(jt.CompileError, match="kernel 'closure_kernel' refers to variables of the function that "
                                              "defines it \\(scale\\)"):
        jt.triton_call(x, kernel=closure_kernel, out_shape=x, grid=1)


def test_gluon_kernels_are_refused():
    gluon = pytest.importorskip("triton.experimental.gluon")
    gl = gluon.language

    @gluon.jit
    def gl_copy(in_ptr, out_ptr, BLOCK: gl.constexpr):
        layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
        offs = gl.arange(0, BLOCK, layout=layout)
        gl.store(out_ptr + offs, gl.load(in_ptr + offs))

    x = rand((128,))
    with pytest.raises(jt.CompileError, match="kernel 'gl_copy' is a Gluon kernel, which Triton's interpreter does not "
                                              "run"):
        jt.triton_call(x, kernel=gl_copy, out_shape=x, grid=1, BLOCK=128)


# ------------------------------------------------------ autotuned kernels

@triton.jit
def scale_kernel(x_ptr, out_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * SCALE, mask=m)


def test_the_interpreter_runs_the_first_config_or_the_chosen_one(caplog):
    """The configs differ in what they compute, so the result says which one ran; pruning happens first."""
    configs = [triton.Config({"SCALE": s, "BLOCK": b}) for s, b in ((2, 32), (3, 64), (5, 16), (7, 128))]
    prune = lambda configs, named, **kw: [c for c in configs if c.kwargs["BLOCK"] <= 64]
    tuned = triton.autotune(configs, key=["n"], prune_configs_by={"early_config_prune": prune})(scale_kernel)
    x = rand((300,))

    def call(x):
        return jt.triton_call(x, kernel=tuned, out_shape=x, grid=lambda m: (triton.cdiv(300, m["BLOCK"]),), n=300)

    np.testing.assert_allclose(call(x), x * 2, rtol=1e-6)
    for i, scale in enumerate((2, 3, 5)):
        with jt.cpu_kernels(config=i):   # read when the call is traced: a new function each time, not jit's cache
            np.testing.assert_allclose(jax.jit(lambda x: call(x))(x), x * scale, rtol=1e-6)
    with jt.cpu_kernels(config=3), pytest.raises(jt.CompileError, match="kernel 'scale_kernel': "
                                                                        "cpu_kernels\\(config=3\\) names no config: "
                                                                        "the call has 3"):
        call(x)
    with jt.cpu_kernels(config=1), pytest.raises(jt.CompileError, match="the kernel is not autotuned"):
        copy(x, 300)


# --------------------------------------------------------------- bfloat16

@triton.jit
def bf16_kernel(x_ptr, y_ptr, sum_ptr, max_ptr, dot_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r[:, None] * BLOCK + r[None, :])
    y = tl.load(y_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(sum_ptr + r[:, None] * BLOCK + r[None, :], tl.maximum(x * y - 1.0, y / 2) + (x * 10).to(tl.int32))
    tl.store(max_ptr + r, tl.max(x, axis=1))
    tl.store(dot_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(x, y))


def test_bfloat16_arithmetic_reductions_and_dot():
    """Triton's interpreter keeps bf16 values as their bits; trident computes them in float32 and rounds back,
    as XLA does: the results equal jnp's."""
    x, y = rand((16, 16), jnp.bfloat16, 1), rand((16, 16), jnp.bfloat16, 2)
    s, m, d = jt.triton_call(x, y, kernel=bf16_kernel, grid=1, BLOCK=16, out_shape=[
        jax.ShapeDtypeStruct((16, 16), jnp.bfloat16), jax.ShapeDtypeStruct((16,), jnp.bfloat16),
        jax.ShapeDtypeStruct((16, 16), jnp.float32)])
    xf, yf = x.astype(jnp.float32), y.astype(jnp.float32)
    want = jnp.maximum(x * y - jnp.bfloat16(1), y / jnp.bfloat16(2)) + (x * jnp.bfloat16(10)).astype(jnp.int32)
    np.testing.assert_array_equal(s, want.astype(jnp.bfloat16))
    np.testing.assert_array_equal(m, jnp.max(x, axis=1))
    np.testing.assert_allclose(d, xf @ yf, rtol=1e-5, atol=1e-5)


@triton.jit
def histogram_kernel(x_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(counts_ptr + tl.load(x_ptr + offs, mask=m, other=0), tl.full([BLOCK], 1, counts_ptr.dtype.element_ty),
                  mask=m)


def test_atomics_into_a_zeroed_output_and_bf16_atomics_refused():
    x = jax.random.randint(jax.random.key(5), (1000,), 0, 37, jnp.int32)
    counts = jt.triton_call(x, kernel=histogram_kernel, out_shape=jax.ShapeDtypeStruct((37,), jnp.int32),
                            grid=(8,), n=1000, BLOCK=128, zeroed_outputs=(1,))
    np.testing.assert_array_equal(counts, np.bincount(np.asarray(x), minlength=37))
    with pytest.raises(jax.errors.JaxRuntimeError, match="kernel 'histogram_kernel'.*a bfloat16 atomic"):
        jax.block_until_ready(jt.triton_call(x, kernel=histogram_kernel, grid=(8,), n=1000, BLOCK=128,
                                             out_shape=jax.ShapeDtypeStruct((37,), jnp.bfloat16), zeroed_outputs=(1,)))
    with pytest.raises(jax.errors.JaxRuntimeError, match="an atomic of 4-byte elements at 0x[0-9a-f]+, outside the "
                                                         "buffer its pointer came from.*past the end of 'counts_ptr' \\(output 0"):
        jax.block_until_ready(jt.triton_call(x, kernel=histogram_kernel, grid=(8,), n=1000, BLOCK=128,
                                             out_shape=jax.ShapeDtypeStruct((30,), jnp.int32), zeroed_outputs=(1,)))


def test_the_benchmarks_kernels_through_their_twins_and_the_interpreter(host_kernel):
    """bench/bench_cpu.py's add and matmul: the host twins (examples/host/) and the interpreter both give jnp's
    results (the twin wins when registered; cpu_kernels("interpreter") overrides it)."""
    import importlib.util
    from conftest import SRC
    spec = importlib.util.spec_from_file_location("bench_cpu", SRC / "bench" / "bench_cpu.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    jt.host_twin(bench.add_kernel, host_kernel("add_kernel"))
    jt.host_twin(bench.matmul_kernel, host_kernel("matmul_kernel"))
    x, y = rand((3000,), seed=1), rand((3000,), seed=2)
    a, b = rand((70, 40), seed=3), rand((40, 100), seed=4)
    want = np.asarray(jnp.dot(a, b, precision=jax.lax.Precision.HIGHEST))
    for use in ("host", "interpreter"):
        with jt.cpu_kernels(use):
            np.testing.assert_array_equal(jax.jit(lambda x, y: bench.add(x, y))(x, y), x + y)
            np.testing.assert_allclose(jax.jit(lambda a, b: bench.matmul(a, b))(a, b), want, rtol=1e-5, atol=1e-4)


# ------------------------------------------------ buffers, language, threads

def test_the_kernel_updates_a_donated_buffer_in_place():
    @triton.jit
    def inc_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    f = jax.jit(lambda x: jt.triton_call(x, x.size, kernel=inc_kernel, grid=(4,), BLOCK=64, input_output_aliases=0),
                donate_argnums=0)
    x = rand((256,))
    want, ptr = np.asarray(x) + 1, x.unsafe_buffer_pointer()
    out = f(x)
    assert x.is_deleted() and out.unsafe_buffer_pointer() == ptr
    np.testing.assert_array_equal(out, want)


def test_the_language_is_restored_so_gpu_kernels_compile_afterwards(record):
    """The interpreter patches triton.language process-wide while it runs; a kernel compiled for sm90 after an
    interpreted run (including one that failed) compiles as in a fresh process."""
    x = rand((64,))
    np.testing.assert_array_equal(copy(x, 64), x)
    with pytest.raises(jax.errors.JaxRuntimeError, match="past the end of 'x_ptr'"):
        jax.block_until_ready(jt.triton_call(x, kernel=unmasked_copy_kernel, out_shape=x, grid=(2,), BLOCK=64))
    assert (tl.load, tl.core.load, tl.core.reduce, getattr(tl.tensor, "__index__", None)) == LANGUAGE
    assert not {"create_masked_load", "binary_op"} & set(vars(interpret._ti.interpreter_builder))
    with jt.targets("sm90"):
        jt.triton_call(x, kernel=copy_kernel, out_shape=x, grid=(2,), n=64, BLOCK=32)
    (call,) = record
    assert call.kernel.targets[0].metadata["name"] == "copy_kernel"


def test_concurrent_calls_and_compilations():
    """Interpreted calls from several threads (XLA may run them at once), while another thread compiles for a GPU:
    runs and compilations take turns (compile.LANGUAGE), and every result is right."""
    xs = [rand((200,), seed=s) for s in range(6)]
    errors, results = [], {}

    def run(i):
        try:
            results[i] = np.asarray(jax.jit(lambda x: copy(x, 200) * 2)(xs[i]))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def compile_for_sm90():
        try:
            with jt.targets("sm90"):
                jax.jit(lambda x: jt.triton_call(x, kernel=scale_kernel, out_shape=x, grid=(4,), n=200, SCALE=3,
                                                 BLOCK=64)).lower(xs[0]).as_text()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(6)] + [threading.Thread(target=compile_for_sm90)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, x in enumerate(xs):
        np.testing.assert_array_equal(results[i], np.asarray(x) * 2)
