# SPDX-License-Identifier: Apache-2.0
"""What triton_call compiles and passes, without running it: kernels compiled
for sm90 and gfx942 with the installed Triton (no GPU needed), Triton's
specialization, arguments of every kind, option routing and validation, the
disk cache. The custom call a lowering emits (lowering.emit) is replaced by a
recorder; the calls are lowered for the CPU platform, with targets set."""
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import triton
import triton.language as tl

import trident
import trident.jax as jt
from trident.jax import compile as jt_compile
from trident.jax import lowering as jt_lowering

SM90, GFX942 = "sm90", "gfx942"


def targets_of(kernel):
    return sorted((t.format, t.backend, t.arch) for t in kernel.targets)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def call_add(x, y, n=None, **kw):
    return jt.triton_call(x, y, kernel=add_kernel, out_shape=x, grid=(4,), n_elements=x.size if n is None else n,
                          BLOCK=kw.pop("BLOCK", 256), **kw)


X = jnp.zeros((1024,), jnp.float32)


def test_compiles_for_sm90_and_gfx942_into_one_bundle(record):
    with jt.targets(SM90, GFX942):
        call_add(X, X)
    c = record[0]
    assert targets_of(c.kernel) == [("cubin", "cuda", "sm90"), ("hsaco", "hip", "gfx942"), ("ptx", "cuda", "sm90")]
    assert c.kernel.signature == "x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n_elements:i32"
    assert c.out_params == [2] and c.grid == (4, 1, 1) and [a.shape for a in c.args[:2]] == [(1024,), (1024,)]
    assert c.args[2] == 1024
    meta = {t.arch: t.metadata for t in c.kernel.targets}
    assert meta["sm90"]["num_warps"] == 4 and meta["gfx942"]["num_warps"] == 4
    # what the caller leaves unset is each target's backend's default in trident's tables (HIPOptions' num_stages is
    # 2, CUDAOptions' 3), not CUDA's for every target
    for arch, backend in (("sm90", "cuda"), ("gfx942", "hip")):
        table = {o["name"]: o["default"] for o in trident.options(backend, triton.__version__)}
        for k in ("num_warps", "num_stages", "num_ctas"):
            assert meta[arch][k] == int(table[k]), (arch, k)
    assert (meta["sm90"]["num_stages"], meta["gfx942"]["num_stages"]) == (3, 2)


def test_tracing_never_compiles_lowering_does(record, monkeypatch, fresh_cache):
    compiled = []
    real = triton.compile
    monkeypatch.setattr(triton, "compile", lambda src, **kw: compiled.append(src) or real(src, **kw))
    f = lambda x, y: call_add(x, y, BLOCK=128)  # noqa: E731
    with jt.targets(SM90):
        jax.make_jaxpr(f)(X, X)
        jax.eval_shape(f, X, X)
        assert not compiled and not record
        jax.jit(f).lower(X, X)
    assert len(compiled) == 1 and record and targets_of(record[0].kernel)[0] == ("cubin", "cuda", "sm90")


def test_specialization_is_tritons(record):
    with jt.targets(SM90):
        call_add(X, X, n=1)        # the value 1 becomes a constexpr: not a launch argument
        call_add(X, X, n=2**40)    # i64
    assert record[0].kernel.signature == "x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32"
    assert record[1].kernel.signature.endswith("n_elements:i64")


def test_divisibility_and_do_not_specialize(monkeypatch, record, fresh_cache):
    compiled = []
    real = triton.compile
    monkeypatch.setattr(triton, "compile", lambda src, **kw: compiled.append(dict(src.attrs)) or real(src, **kw))
    with jt.targets(SM90):
        call_add(X, X, n=1024)
        call_add(X, X, n=1000)
        call_add(X, X, n=2048)     # divisible by 16 like 1024: the same kernel
    assert len(compiled) == 2
    assert compiled[0][(3,)] == [["tt.divisibility", 16]] and compiled[1][(3,)] == []

    @triton.jit(do_not_specialize=["n"])
    def dns(x_ptr, out_ptr, n):
        tl.store(out_ptr, tl.load(x_ptr) + n)

    compiled.clear()
    with jt.targets(SM90):
        jt.triton_call(X, n=1, kernel=dns, out_shape=X, grid=1)
        jt.triton_call(X, n=16, kernel=dns, out_shape=X, grid=1)
    assert len(compiled) == 1 and record[-1].kernel.signature == "x_ptr:*fp32,out_ptr:*fp32,n:i32"


def test_python_float_is_fp32_and_bool_is_u1(record):
    @triton.jit
    def scalars(x_ptr, out_ptr, a, flag):
        tl.store(out_ptr, tl.load(x_ptr) * a + flag)

    with jt.targets(SM90):
        jt.triton_call(X, a=2.5, flag=True, kernel=scalars, out_shape=X, grid=1, out_names="out_ptr")
        jt.triton_call(X, a=np.float32(2.5), flag=np.bool_(False), kernel=scalars, out_shape=X, grid=1)
    assert record[0].kernel.signature == "x_ptr:*fp32,out_ptr:*fp32,a:fp32,flag:u1"
    assert record[0].out_params == [1] and record[0].args[1:] == (2.5, True)
    assert record[1].args[1:] == (2.5, False)


Pair = namedtuple("Pair", ["ptr", "scale"])


@triton.jit
def tuple_kernel(Ptrs, p, nothing, out_ptr, fn: tl.constexpr, MODE: tl.constexpr, K: tl.constexpr = 3):
    v = tl.load(Ptrs[0]) + tl.load(Ptrs[1][0]) * Ptrs[1][1]
    v = v + tl.load(p.ptr) * p.scale
    tl.static_assert(nothing is None)
    if MODE == "double":
        v = v * 2
    tl.store(out_ptr, fn(v) + K)


@triton.jit
def negate(x):
    return -x


def test_tuples_namedtuples_none_strings_and_callables(record):
    a, b, c = jnp.ones((4,)), jnp.ones((4,), jnp.float16), jnp.ones((4,))
    with jt.targets(SM90, GFX942):
        jt.triton_call((a, (b, 3.0)), Pair(c, 7), None, kernel=tuple_kernel, out_shape=a, grid=1, fn=negate,
                       MODE="double")
    sig = record[0].kernel.signature
    assert sig == "Ptrs_0:*fp32,Ptrs_1_0:*fp16,Ptrs_1_1:fp32,p_0:*fp32,p_1:i32,out_ptr:*fp32"
    assert record[0].out_params == [5]
    assert [getattr(v, "dtype", v) for v in record[0].args] == [jnp.float32, jnp.float16, 3.0, jnp.float32, 7]


def test_output_lands_before_a_keyword_scalar(record):
    @triton.jit
    def interleaved(in_ptr, out1_ptr, scale, out2_ptr):
        x = tl.load(in_ptr)
        tl.store(out1_ptr, x)
        tl.store(out2_ptr, x * scale)

    with jt.targets(SM90):
        jt.triton_call(X, kernel=interleaved, out_shape=[X, X], out_names=(1, 3), scale=3.0, grid=1)
    assert record[0].out_params == [1, 3] and record[0].args[1:] == (3.0,)


def test_kernel_parameter_named_like_an_option_gets_both(record):
    @triton.jit
    def k(in_ptr, out_ptr, num_warps: tl.constexpr):
        tl.store(out_ptr, tl.load(in_ptr) * num_warps)

    with jt.targets(SM90):
        jt.triton_call(X, kernel=k, out_shape=X, grid=1, num_warps=2)
    assert record[0].kernel.targets[0].metadata["num_warps"] == 2


def test_options_reach_the_compiler(record):
    import os
    libdevice = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "lib", "libdevice.10.bc")
    with jt.targets(SM90, GFX942):
        call_add(X, X, num_warps=8, num_stages=2, debug=True, waves_per_eu=2, maxnreg=128,
                 extern_libs={"libdevice": libdevice})
    meta = {t.arch: t.metadata for t in record[0].kernel.targets}
    assert meta["sm90"]["num_warps"] == 8 and meta["sm90"]["debug"] and meta["sm90"]["maxnreg"] == 128
    assert meta["gfx942"]["waves_per_eu"] == 2 and meta["gfx942"]["num_stages"] == 2
    assert record[0].options["cuda"]["maxnreg"] == "128" and record[0].options["cuda"]["debug"] == "true"


def test_backend_options_dict(record):
    with jt.targets(SM90):
        call_add(X, X, backend_options={"num_warps": 2})
    assert record[0].kernel.targets[0].metadata["num_warps"] == 2
    with pytest.raises(ValueError, match="backend_options"):
        call_add(X, X, num_warps=4, backend_options={"num_warps": 2})


@pytest.mark.parametrize("kw, target, match", [
    (dict(num_warps=3), SM90, "num_warps=3.*power of two"),
    (dict(maxnreg=1000), SM90, "maxnreg=1000.*16 .. 255"),
    (dict(num_ctas=2), "sm80", "num_ctas=2.*compute capability 9.0"),
    (dict(default_dot_input_precision="fast"), SM90, "tf32"),
    (dict(waves_per_eu=2), SM90, "unknown keyword argument 'waves_per_eu'"),
    (dict(kpack=2), "gfx950", "kpack=2.*gfx950"),
])
def test_option_errors(kw, target, match, record):
    with jt.targets(target), pytest.raises(jt.OptionError, match=match) as e:
        call_add(X, X, **kw)
    assert "add_kernel" in str(e.value)


def test_unknown_keyword_lists_parameters_and_options():
    with jt.targets(SM90), pytest.raises(jt.OptionError) as e:
        call_add(X, X, BLOK=3)
    msg = str(e.value)
    assert "'BLOK'" in msg and "x_ptr, y_ptr, out_ptr, n_elements, BLOCK" in msg and "maxnreg" in msg


def test_num_ctas_cluster_on_sm90(record):
    with jt.targets(SM90):
        call_add(X, X, num_ctas=2)
    assert record[0].kernel.targets[0].metadata["num_ctas"] == 2


def test_disk_cache_serves_a_new_process(record, fresh_cache, monkeypatch):
    with jt.targets(SM90, GFX942):
        call_add(X, X)
    assert len(list((fresh_cache / "triton").iterdir())) == 2
    monkeypatch.setattr(jt_compile, "_compiled", jt_compile.LRU(8))
    monkeypatch.setattr(triton, "compile", lambda *a, **k: pytest.fail("compiled again"))
    jax.clear_caches()
    with jt.targets(SM90, GFX942):
        call_add(X, X)
    assert targets_of(record[1].kernel) == targets_of(record[0].kernel)


def test_mixed_host_gets_every_architecture(record):
    with jt.targets(SM90, "sm80"):
        call_add(X, X)
    assert targets_of(record[0].kernel) == [("cubin", "cuda", "sm80"), ("cubin", "cuda", "sm90"),
                                            ("ptx", "cuda", "sm80"), ("ptx", "cuda", "sm90")]


def test_cache_key_covers_options_and_target(fresh_cache, record):
    with jt.targets(SM90):
        call_add(X, X)
        call_add(X, X, num_warps=8)
    with jt.targets("sm80"):
        call_add(X, X)
    assert len(list((fresh_cache / "triton").iterdir())) == 3


def test_device_side_descriptor_gets_global_scratch(record):
    @triton.jit
    def scratch_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        desc = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
        x = desc.load([tl.program_id(0) * BLOCK])
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, x * 2.0, mask=offs < n)

    with jt.targets(SM90):
        jt.triton_call(X, kernel=scratch_kernel, out_shape=X, grid=(4,), n=1024, BLOCK=256)
    meta = record[0].kernel.targets[0].metadata
    assert meta["global_scratch_size"] > 0


@triton.jit
def desc_kernel(desc, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    x = desc.load([pid * BLOCK, 0])
    r = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + r[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :], x * 2)


def test_host_descriptor_decomposed_where_not_tma(record):
    a = jnp.zeros((64, 16), jnp.float32)
    with jt.targets("sm80", GFX942):
        jt.triton_call(jt.TensorDescriptor.from_array(a, [16, 16]), kernel=desc_kernel, out_shape=a, grid=(4,),
                       BLOCK=16)
    c = record[0]
    tf32 = "desc_tf32:i1," if jt_compile.TRITON_RELEASE >= (3, 7) else ""   # 3.7 passes round_f32_to_tf32 too
    assert c.kernel.signature.startswith("desc_base:*fp32,desc_shape0:i64,desc_shape1:i64,desc_stride0:i64,"
                                         f"desc_stride1:i64,desc_nan:i1,{tf32}desc_dim0:i32,desc_dim1:i32,")
    flags = (False, False) if tf32 else (False,)
    assert c.args[1:] == (64, 16, 16, 1, *flags, 64, 16, 16, 1)


def test_host_descriptor_lowered_to_tma_on_sm90(record):
    a = jnp.zeros((64, 16), jnp.float32)
    with jt.targets(SM90):
        jt.triton_call(jt.TensorDescriptor.from_array(a, [16, 16], padding="nan"), kernel=desc_kernel, out_shape=a,
                       grid=(4,), BLOCK=16)
    c = record[0]
    assert c.kernel.signature == ("desc_tma:nvTmaDesc,desc_dim0:i32,desc_dim1:i32,desc_dstride0:i64,"
                                  "desc_dstride1:i64,out_ptr:*fp32")
    d = c.args[0]
    assert isinstance(d, jt.TensorDescriptor) and d.base.shape == (64, 16) and d.padding == "nan"
    assert (d.shape, d.strides, d.block_shape) == ((64, 16), (16, 1), (16, 16))
    assert c.args[1:] == (64, 16, 16, 1) and c.out_params == [5]
    meta = c.kernel.targets[0].metadata["tensordesc_meta"]
    want = {"swizzle": 2, "elem_size": 4, "elem_type": 7, "block_size": [16, 16], "fp4_padded": False}
    if jt_compile.TRITON_RELEASE >= (3, 9):
        want["is_im2col"] = False     # 3.9 says which kind of tensor map each entry is
    assert meta == [want]


def test_gluon_kernel_compiles(record):
    gluon = pytest.importorskip("triton.experimental.gluon")
    gl = gluon.language

    @gluon.jit
    def gl_copy(in_ptr, out_ptr, n, BLOCK: gl.constexpr):
        layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
        offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
        m = offs < n
        gl.store(out_ptr + offs, gl.load(in_ptr + offs, mask=m) * 2, mask=m)

    with jt.targets(SM90):
        jt.triton_call(X, kernel=gl_copy, out_shape=X, grid=(8,), n=1024, BLOCK=128)
    assert targets_of(record[0].kernel)[0] == ("cubin", "cuda", "sm90")


def test_autotune_configs_compile_once_each(record, fresh_cache, monkeypatch):
    compiled = []
    real = triton.compile
    monkeypatch.setattr(triton, "compile", lambda src, **kw: compiled.append(kw["options"]["num_warps"])
                        or real(src, **kw))
    tuned = triton.autotune([triton.Config({"BLOCK": 128}, num_warps=2), triton.Config({"BLOCK": 256}, num_warps=4)],
                            key=["n_elements"])(add_kernel)
    with jt.targets(SM90):
        jt.triton_call(X, X, kernel=tuned, out_shape=X, grid=lambda m: (jt.cdiv(1024, m["BLOCK"]),),
                       n_elements=1024)
    # both go to the handler, which benchmarks them at the first execution
    assert sorted(compiled) == [2, 4]
    call = record[0]
    assert len(call.kernel) == 2 and call.grid == [(8, 1, 1), (4, 1, 1)]
    assert call.autotune_key.startswith("add_kernel-") and call.zeroed_outputs == [[], []]
    assert [targets_of(k) for k in call.kernel] == [[("cubin", "cuda", "sm90"), ("ptx", "cuda", "sm90")]] * 2


def test_autotune_configs_never_parse_side_by_side(record, fresh_cache, monkeypatch):
    # CPython 3.11's AST constructor keeps its recursion depth in state threads share: two threads in ast.parse
    # at once may raise "SystemError: AST constructor recursion depth mismatch" (CI saw it). The configs compile
    # on threads; what parses (the first cache_key, make_ir) must take turns.
    import ast
    import threading
    import time
    inside, most, lock = [0], [0], threading.Lock()
    real = ast.parse

    def parse(*a, **kw):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.02)   # widens the window two unserialized parses would share
        try:
            return real(*a, **kw)
        finally:
            with lock:
                inside[0] -= 1
    monkeypatch.setattr(ast, "parse", parse)

    @triton.jit
    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):   # a new function: nothing of it is parsed yet
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)
    configs = [triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256) for w in (1, 2)]
    tuned = triton.autotune(configs, key=["n"])(scale)
    monkeypatch.setattr(jt_lowering.os, "cpu_count", lambda: 4)   # threads even on a one-core machine
    with jt.targets(SM90):
        jt.triton_call(X, kernel=tuned, out_shape=X, grid=lambda m: (jt.cdiv(1024, m["BLOCK"]),), n=1024)
    assert len(record[0].kernel) == len(configs)
    assert most[0] == 1


def test_target_parsing():
    assert jt.target("sm90") == jt.Target("cuda", 90, 32) == jt.target("cuda:sm90") == jt.target(90)
    assert jt.target("gfx942") == jt.Target("hip", "gfx942", 64)
    assert jt.target("hip:gfx1100").warp_size == 32
    # the wave size is libtrident's rule (options/hip.c: RDNA, gfx10 and newer, wave32; CDNA wave64)
    for arch, wave in (("gfx90a", 64), ("gfx942", 64), ("gfx950", 64), ("gfx1030", 32), ("gfx1201", 32)):
        assert jt.target(arch).warp_size == int(trident.option_value("hip", "warp_size", arch)) == wave
    assert jt.target("gfx10").warp_size == 64   # an arch the table refuses: its default
    assert jt.target("host").backend == "host"
    with pytest.raises(jt.CompileError, match="expected sm"):
        jt.target("volta")
    if jax.default_backend() == "cpu":
        assert jt.device_targets() == []      # CPU JAX: nothing to compile for
    with jt.targets("sm80", "gfx942"):
        assert [str(t) for t in jt.device_targets()] == ["sm80", "gfx942"]


def test_utils():
    assert jt.cdiv(10, 4) == 3 and jt.cdiv(8, 4) == 2
    assert [jt.next_power_of_2(v) for v in (0, 1, 3, 64, 65)] == [1, 1, 4, 64, 128]
    assert jt.strides_from_shape((2, 3, 4)) == (12, 4, 1)
    assert jt.utils.cdiv is jt.cdiv


def test_triton_function_counts_its_own_specializations(record, monkeypatch):
    """jax-triton's names for the per-kernel cache: TritonFunction(kernel)._kernel_cache holds one entry per
    specialization the function object was lowered with (not per grid), and compile_ttir_inplace runs once per
    miss; a function defined again from the same source starts empty (its kernels come from the shared cache)."""
    fn = triton.jit(add_kernel.fn)
    assert jt.TritonFunction(fn) is jt.TritonFunction(fn) and len(jt.TritonFunction(fn)._kernel_cache) == 0
    misses = []
    real = jt.compile_ttir_inplace
    monkeypatch.setattr(jt, "compile_ttir_inplace", lambda *a, **k: misses.append(a[1]) or real(*a, **k))

    def lower(block, n=1024, grid=(4,)):
        jax.jit(lambda x: jt.triton_call(x, x, kernel=fn, out_shape=x, grid=grid, n_elements=n,
                                         BLOCK=block)).lower(X)

    with jt.targets(SM90):
        lower(256)
        lower(256, grid=(8,))          # another grid: the same kernel
        assert len(misses) == 1 and len(jt.TritonFunction(fn)._kernel_cache) == 1
        lower(128)
        lower(256, n=1000)             # 1000 is not a multiple of 16: Triton specializes n
        assert len(misses) == 3 and len(jt.TritonFunction(fn)._kernel_cache) == 3
    again = triton.jit(add_kernel.fn)
    assert len(jt.TritonFunction(again)._kernel_cache) == 0
    with pytest.raises(TypeError):
        del jt.TritonFunction(fn)._kernel_cache[next(iter(jt.TritonFunction(fn)._kernel_cache))]   # read-only
    jt.TritonFunction(fn).clear()
    assert len(jt.TritonFunction(fn)._kernel_cache) == 0
    with jt.targets(SM90):
        lower(128)
    assert len(misses) == 4
    assert {c.kernel.targets[0].metadata["name"] for c in jt.TritonFunction(fn)._kernel_cache.values()} == \
        {"add_kernel"}
