# SPDX-License-Identifier: Apache-2.0
"""What Triton's launcher and autotuner accept, trident.jax accepts, and what
they refuse it refuses, with the reason: warp-specialized kernels (whose
metadata counts every partition's warps: num_warps=4 becomes 12), the
errors an autotuner skips, configuration hooks with nothing to do, grids of
integers only, and the interpreter's check of each access against the
buffer its pointer came from. The CPU tests compile for sm90 with the
installed Triton (no GPU needed); the `gpu` ones run the kernels on a GPU,
every element checked against jnp, and skip with the reason elsewhere."""
import json
import re
import subprocess
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import triton
import triton.language as tl

import trident
import trident.jax as jt

SM90 = "sm90"


def randn(shape, dtype=jnp.float32, seed=0):
    return jax.random.normal(jax.random.key(seed), shape, dtype=dtype)


# ------------------------------------------------------------ warp specialization

@triton.jit
def ws_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                     WS: tl.constexpr):
    """c = a @ b (fp16 in, fp32 out) through device tensor descriptors; WS warp-specializes the K loop (a
    producer partition loads, the default one computes), as Triton's persistent matmul tutorial does."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=WS):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([k, pid_n * BN]), acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


WS_CONFIGS = [triton.Config({"BM": 128, "BN": 128, "BK": 64, "WS": ws}, num_warps=4, num_stages=3)
              for ws in (False, True)]
ws_matmul = triton.autotune(WS_CONFIGS, key=["M", "N", "K"])(ws_matmul_kernel)


def call_ws_matmul(a, b, kernel=ws_matmul):
    (m, k), n = a.shape, b.shape[1]
    return jt.triton_call(a, b, kernel=kernel, out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
                          grid=lambda meta: (jt.cdiv(m, meta["BM"]), jt.cdiv(n, meta["BN"])), M=m, N=n, K=k)


def test_warp_specialized_kernel_compiles_and_loads(record, fresh_cache, tmp_path):
    """Triton compiles the WS config's num_warps=4 into 12 warps (384 threads, not a power of two); trident
    loads its metadata and keeps both configs (it refused the 12 and the autotuner dropped the config), and
    `trident info` shows the kernel."""
    a = jnp.zeros((256, 256), jnp.float16)
    with jt.targets(SM90), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)   # no config may be dropped
        call_ws_matmul(a, a)
    kernels = record[0].kernel
    assert len(kernels) == 2
    warps = [k.targets[0].metadata["num_warps"] for k in kernels]
    assert warps[0] == 4 and warps[1] > 4 and warps[1] & (warps[1] - 1), warps
    loaded = trident.Kernel(kernels[1].bundle())
    assert {t.metadata["num_warps"] for t in loaded.targets} == {warps[1]}
    assert loaded.scratch_bytes((2, 2))[0] > 0   # the device descriptors' scratch, computed by libtrident
    from conftest import CLI
    (tmp_path / "ws.trdb").write_bytes(kernels[1].bundle())
    info = json.loads(subprocess.run([CLI, "info", str(tmp_path / "ws.trdb"), "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    assert info["name"] == "ws_matmul_kernel" and {t["num_warps"] for t in info["targets"]} == {warps[1]}


@pytest.mark.parametrize("m, n, k", [(256, 256, 512), (384, 128, 256)])
def test_warp_specialized_matmul_on_the_gpu(gpu, m, n, k):
    if jt.get_compute_capability(0) < 90:
        pytest.skip("warp specialization and device tensor descriptors need sm90")
    a, b = randn((m, k), jnp.float16), randn((k, n), jnp.float16, seed=1)
    ref = jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32), precision="highest")
    for kernel in (ws_matmul, triton.autotune(WS_CONFIGS[1:], key=["M"])(ws_matmul_kernel)):   # tuned; WS alone
        c = jax.jit(lambda a, b: call_ws_matmul(a, b, kernel))(a, b)
        np.testing.assert_allclose(np.asarray(c), np.asarray(ref), rtol=1e-2, atol=1e-2)


# ------------------------------------------------------------ what an autotuner skips

@triton.jit
def bounded_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= 256, "BLOCK too large")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)   # BLOCK must be a power of two
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def call_bounded(blocks):
    kernel = triton.autotune([triton.Config({"BLOCK": b}, num_warps=1) for b in blocks], key=["n"])(bounded_copy)
    x = jnp.zeros((1024,), jnp.float32)
    with jt.targets(SM90):
        return jt.triton_call(x, kernel=kernel, out_shape=x, grid=lambda m: (jt.cdiv(1024, m["BLOCK"]),), n=1024)


def test_autotune_skips_a_compile_time_assertion(record, fresh_cache):
    with pytest.warns(RuntimeWarning, match=r"(?s)configs skipped.*BLOCK: 512.*CompileTimeAssertionFailure"):
        call_bounded([128, 512])
    assert isinstance(record[0].kernel, trident.Kernel)   # one candidate left: a plain call


def test_autotune_raises_any_other_error_naming_the_config(record, fresh_cache):
    """Triton's autotuner skips only OutOfResources, CompileTimeAssertionFailure and PTXASError; a config
    that fails otherwise (tl.arange of 96 elements) fails the call, named."""
    with pytest.raises(jt.AutotuneError, match=r"(?s)kernel 'bounded_copy': autotuner config BLOCK: 96.*"
                                               r"CompilationError.*power of 2"):
        call_bounded([128, 96])


# ------------------------------------------------------------ grids and launch values

@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@pytest.mark.parametrize("grid, shown", [
    ((1000 / 256,), r"dimension 0 is 3\.90625 \(float\)"),      # truncated to 3: 232 of 1000 elements wrong
    (("4",), r"dimension 0 is '4' \(str\)"),
    ((4, 1.5), r"dimension 1 is 1\.5 \(float\)"),
    (lambda meta: (1000 / meta["BLOCK"],), r"dimension 0 is 3\.90625 \(float\)"),   # what a grid function returns
    (None, r"grid is None"),
])
def test_a_grid_is_integers(grid, shown):
    x = randn((1000,))
    with pytest.raises(jt.KernelCallError, match=f"kernel 'double_kernel': .*{shown}"):
        jt.triton_call(x, kernel=double_kernel, out_shape=x, grid=grid, n=x.size, BLOCK=256)
    kernel = jt.kernel(double_kernel, out_shape=x)
    with pytest.raises(jt.KernelCallError, match=shown):
        kernel[grid](x, n=x.size, BLOCK=256)


@pytest.mark.parametrize("grid", [4, (np.int64(4),), np.array([4]), (4, True), [4, 1, 1]])
def test_integer_grids_of_any_kind(grid):
    x = randn((1000,))
    np.testing.assert_array_equal(jt.triton_call(x, kernel=double_kernel, out_shape=x, grid=grid, n=x.size,
                                                 BLOCK=256), x * 2)


def test_kernel_call_grid_is_integers():
    from conftest import kernel
    x, y = randn((1000,)), randn((1000,), seed=1)
    k = kernel("sum_diff_kernel")
    for grid, shown in (((1000 / 256,), "3.90625"), (None, "grid is None"), ([(4,), (2.0,)], "2.0")):
        ks = [k, k] if isinstance(grid, list) else k
        with pytest.raises(jt.KernelCallError, match=f"kernel 'sum_diff_kernel': .*{re.escape(shown)}"):
            jt.kernel_call(ks, x, y, x.size, grid=grid, out_shape=(x, x))
    s, d = jax.jit(lambda x, y: jt.kernel_call(k, x, y, x.size, grid=(np.int32(4),), out_shape=(x, x)))(x, y)
    np.testing.assert_array_equal(s, x + y)
    np.testing.assert_array_equal(d, x - y)


@pytest.mark.parametrize("kw, shown", [(dict(num_warps="4"), "'4' is a str; expected an int"),
                                       (dict(enable_fp_fusion="false"), "'false' is a str; expected True or False"),
                                       (dict(num_stages=2.5), "2.5 is a float; expected an int")])
def test_option_values_are_never_converted(record, kw, shown):
    """Option values are checked as text by trident's tables; a string that reads as a number or a bool would
    pass that check and reach Triton as a string ("false" is true there)."""
    x = jnp.zeros((1024,), jnp.float32)
    with jt.targets(SM90), pytest.raises(jt.OptionError, match=re.escape(shown)):
        jt.triton_call(x, kernel=double_kernel, out_shape=x, grid=(4,), n=x.size, BLOCK=256, **kw)


# ------------------------------------------------------------ configuration hooks

@triton.jit
def _desc_of(x, shape, strides, block_shape):
    """x itself when the caller passed a host tensor descriptor, else a device descriptor over the pointer."""
    if isinstance(x, tl.tensor_descriptor):
        return x
    return tl.make_tensor_descriptor(x, shape, strides, block_shape)


@triton.jit
def attention_kernel(desc_q, desc_k, desc_v, desc_o, sm_scale, BH, N_CTX, HEAD_DIM: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """softmax(q k^T * sm_scale) v per (batch*head) row block, online softmax in exp2, as the fused-attention
    tutorial's forward pass (no mask); q, k, v, o are [BH * N_CTX, HEAD_DIM], N_CTX a multiple of the blocks."""
    rows = BH * N_CTX
    desc_q = _desc_of(desc_q, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
    desc_k = _desc_of(desc_k, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    desc_v = _desc_of(desc_v, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    desc_o = _desc_of(desc_o, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
    base = tl.program_id(1) * N_CTX
    q = desc_q.load([base + tl.program_id(0) * BLOCK_M, 0])
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    scale = sm_scale * 1.44269504   # 1/ln(2): exp(x) = exp2(x / ln 2)
    for start in range(0, N_CTX, BLOCK_N):
        qk = tl.dot(q, tl.trans(desc_k.load([base + start, 0]))) * scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(q.dtype), desc_v.load([base + start, 0]))
        m_i = m_new
    desc_o.store([base + tl.program_id(0) * BLOCK_M, 0], (acc / l_i[:, None]).to(q.dtype))


def descriptor_blocks(nargs):
    """The tutorial's hook: block shapes for host descriptors; nothing to do for pointers."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    if not isinstance(nargs["desc_q"], TensorDescriptor):
        return
    for name, block in (("desc_q", "BLOCK_M"), ("desc_k", "BLOCK_N"), ("desc_v", "BLOCK_N"), ("desc_o", "BLOCK_M")):
        nargs[name].block_shape = [nargs[block], nargs["HEAD_DIM"]]


def attention(q, k, v, configs):
    bh, n, d = q.shape
    kernel = triton.autotune([triton.Config(c, num_warps=4, num_stages=2, pre_hook=descriptor_blocks)
                              for c in configs], key=["N_CTX", "HEAD_DIM"])(attention_kernel)
    flat = [a.reshape(bh * n, d) for a in (q, k, v)]
    o = jt.triton_call(*flat, kernel=kernel, out_shape=jax.ShapeDtypeStruct((bh * n, d), q.dtype),
                       grid=lambda meta: (n // meta["BLOCK_M"], bh), sm_scale=d ** -0.5, BH=bh, N_CTX=n,
                       HEAD_DIM=d)
    return o.reshape(bh, n, d)


def attention_reference(q, k, v):
    q, k, v = (a.astype(jnp.float32) for a in (q, k, v))
    s = jnp.einsum("bqd,bkd->bqk", q, k, precision="highest") * q.shape[-1] ** -0.5
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v, precision="highest")


def test_a_hook_with_nothing_to_do_for_arrays_is_accepted(platform):
    """The fused-attention tutorial's config pre_hook returns at once when given arrays; Triton calls it before
    each launch, harmlessly. It was refused ("zeroes or fills no argument and sets no descriptor's block_shape")."""
    if platform == "gpu" and jt.get_compute_capability(0) < 90:
        pytest.skip("device tensor descriptors need sm90")
    bh, n, d = (2, 64, 16) if platform == "cpu" else (8, 512, 64)
    configs = [{"BLOCK_M": 32, "BLOCK_N": 16}, {"BLOCK_M": 16, "BLOCK_N": 32}] if platform == "cpu" else \
        [{"BLOCK_M": bm, "BLOCK_N": bn} for bm in (64, 128) for bn in (32, 64)]
    q, k, v = (randn((bh, n, d), jnp.float16, seed=s) for s in range(3))
    o = jax.jit(lambda q, k, v: attention(q, k, v, configs))(q, k, v)
    np.testing.assert_allclose(np.asarray(o, np.float32), np.asarray(attention_reference(q, k, v)), atol=2e-2,
                               rtol=2e-2)


def test_a_hook_whose_effect_cannot_be_replayed_is_refused():
    def scale_input(nargs):
        nargs["x_ptr"].mul_(2)   # Triton would double x before each launch; trident's trace-time call cannot

    kernel = triton.autotune([triton.Config({"BLOCK": 256}, pre_hook=scale_input),
                              triton.Config({"BLOCK": 128}, pre_hook=scale_input)], key=["n"])(double_kernel)
    x = randn((1000,))
    with pytest.raises(NotImplementedError, match=r"`pre_hook` is not supported: kernel 'double_kernel': the "
                                                  r"pre_hook of config BLOCK: 256.* does mul_\(\) on argument "
                                                  r"'x_ptr', which trident cannot replay"):
        jt.triton_call(x, kernel=kernel, out_shape=x, grid=lambda m: (jt.cdiv(1000, m["BLOCK"]),), n=x.size)


def test_a_hook_that_only_checks_is_accepted():
    seen = []

    def check(nargs):
        assert nargs["x_ptr"].shape == (1000,) and nargs["BLOCK"] in (128, 256)
        seen.append(nargs["BLOCK"])

    kernel = triton.autotune([triton.Config({"BLOCK": 256}, pre_hook=check),
                              triton.Config({"BLOCK": 128}, pre_hook=check)], key=["n"])(double_kernel)
    x = randn((1000,))
    out = jt.triton_call(x, kernel=kernel, out_shape=x, grid=lambda m: (jt.cdiv(1000, m["BLOCK"]),), n=x.size)
    np.testing.assert_array_equal(out, x * 2)
    assert seen and set(seen) <= {128, 256}


# ------------------------------------------------------------ the interpreter's bounds, per argument

@triton.jit
def overread_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + tl.load(y_ptr + offs % 256), mask=offs < n)


@pytest.fixture
def on_cpu():
    """Triton's interpreter runs kernels on JAX's CPU platform: the test's arrays and computations go there (on a
    GPU machine too)."""
    with jax.default_device(jax.devices("cpu")[0]):
        yield


def test_interpreter_checks_an_access_against_its_own_argument(on_cpu):
    """x holds 256 elements and the kernel reads 512 of it: the last 256 lie in y, which XLA's CPU arena places
    right after x (both are temporaries of the computation). Every access lay within some buffer of the call, so
    the check passed it and the call returned y's values; each is checked against its pointer's own buffer."""
    def f(a):
        x, y = a * 2, a + 1000
        return jt.triton_call(x, y, kernel=overread_kernel, out_shape=jax.ShapeDtypeStruct((512,), jnp.float32),
                              grid=(2,), n=512, BLOCK=256)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"kernel 'overread_kernel' \(Triton's interpreter\), "
                       r"program \(1, 0, 0\).*tl\.load of 4-byte elements at 0x[0-9a-f]+, outside the buffer its "
                       r"pointer came from \(256 of 256 elements\): 0 bytes past the end of 'x_ptr' \(input 0: "
                       r"float32\[256\], 1024 bytes\)"):
        jax.block_until_ready(jax.jit(f)(jnp.arange(256, dtype=jnp.float32)))
    a = jnp.arange(256, dtype=jnp.float32)   # within bounds: every element right
    out = jax.jit(lambda a: jt.triton_call(a * 2, a + 1000, kernel=overread_kernel, out_shape=a, grid=(1,), n=256,
                                           BLOCK=256))(a)
    np.testing.assert_array_equal(out, a * 3 + 1000)


def test_interpreter_checks_descriptors_and_stores_against_their_buffers(on_cpu):
    """Pointers from a device descriptor carry its base's buffer; a store through one argument's pointer into
    another output is refused the same way."""
    @triton.jit
    def spill_kernel(x_ptr, out_ptr, other_ptr, BLOCK: tl.constexpr):
        desc = tl.make_tensor_descriptor(x_ptr, shape=[BLOCK], strides=[1], block_shape=[BLOCK])
        offs = tl.arange(0, BLOCK)
        tl.store(other_ptr + offs, tl.zeros([BLOCK], tl.float32))
        tl.store(out_ptr + BLOCK + offs, desc.load([0]))   # past out, into whatever follows it

    x = randn((64,))
    out_shape = (jax.ShapeDtypeStruct((64,), jnp.float32), jax.ShapeDtypeStruct((64,), jnp.float32))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"tl\.store of 4-byte elements .*outside the buffer its "
                       r"pointer came from \(64 of 64 elements\): 0 bytes past the end of 'out_ptr' \(output 0"):
        jax.block_until_ready(jt.triton_call(x, kernel=spill_kernel, out_shape=out_shape, grid=(1,), BLOCK=64))
