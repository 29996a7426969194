# SPDX-License-Identifier: Apache-2.0
"""triton_kernel_call_p on CPU: the primitive in jaxprs (its parameters, never removed by DCE), jax.grad and
jax.vmap with jax-triton's errors, cost_estimate in the HLO, backend_options that must be hashable, compilation
when lowering (for the platform lowered for, not JAX's default backend), eager calls reusing what JAX compiled,
bounded caches, the cache directory from libtrident's configuration, and host twins checked against their
declared signature. Kernels run through their host twins (examples/host/)."""
import os
import re
import subprocess
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import triton
import triton.language as tl
from jax._src.interpreters import partial_eval as pe

import trident
import trident.jax as jt
from trident.jax import compile as jt_compile
from trident.jax import call as jt_call
from trident.jax import lowering as jt_lowering
from trident.jax import platforms as jt_platforms

from conftest import SRC, fixture_kernels, host_kernel_path

add_kernel = fixture_kernels.add_kernel          # (x_ptr, y_ptr, out_ptr, n_elements, BLOCK)


@pytest.fixture(autouse=True, scope="module")
def twin():
    p = host_kernel_path("add_kernel")
    if not p.exists():
        pytest.skip(f"host kernel {p} is not built")
    jt.host_twin(add_kernel, p)


def rand(n, seed=0):
    return jax.random.normal(jax.random.key(seed), (n,), jnp.float32)


def add(x, y, **kw):
    return jt.triton_call(x, y, kernel=add_kernel, out_shape=x, grid=(jt.cdiv(x.size, 1024),), n_elements=x.size,
                          BLOCK=1024, **kw)


def eqns(jaxpr):
    return [e for e in jaxpr.eqns if e.primitive is jt.triton_kernel_call_p]


def test_the_call_is_the_primitive_with_static_scalars_and_metaparams():
    x, y = rand(2048), rand(2048, 1)
    (eqn,) = eqns(jax.make_jaxpr(lambda a, b: add(a, b))(x, y))
    assert len(eqn.invars) == 2                                     # the arrays; the scalar n is static
    assert dict(eqn.params["metaparams"]) == {"BLOCK": 1024}
    assert eqn.params["has_side_effect"] is False
    (eqn,) = eqns(jax.make_jaxpr(lambda a, b: add(a, b, has_side_effect=True))(x, y))
    assert eqn.params["has_side_effect"] is True


def test_dce_never_removes_the_call():
    x, y = rand(1024), rand(1024, 1)
    jaxpr = jax.make_jaxpr(lambda a, b: add(a, b))(x, y)
    dced, used = pe.dce_jaxpr(jaxpr.jaxpr, [False])
    assert len(eqns(dced)) == 1 and used == [True, True]
    # a function that drops the result still traces the call
    assert len(eqns(jax.make_jaxpr(lambda a, b: (add(a, b), a)[1])(x, y))) == 1


def test_grad_and_vmap_raise_jax_tritons_errors():
    x, y = rand(1024).reshape(1, 1024), rand(1024, 1).reshape(1, 1024)
    with pytest.raises(NotImplementedError, match=r"jax_triton.triton_call does not support automatic "
                                                  r"differentiation.*jax\.custom_jvp or jax\.custom_vjp"):
        jax.grad(lambda a: add(a, y[0]).sum())(x[0])
    with pytest.raises(NotImplementedError, match=r"jax_triton.triton_call does not support batching.*"
                                                  r"jax\.custom_batching\.custom_vmap"):
        jax.vmap(add)(x, y)
    np.testing.assert_array_equal(jax.vmap(lambda a, b: add(a, b, vmap_method="sequential"))(x, y), x + y)
    with pytest.raises(ValueError, match="vmap_method"):
        add(x[0], y[0], vmap_method="parallel")


def test_cost_estimate_reaches_the_hlo_and_the_call_runs():
    x, y = rand(3000), rand(3000, 1)
    f = jax.jit(lambda a, b: add(a, b, cost_estimate={"flops": 123, "bytes_accessed": 456}))
    hlo = f.lower(x, y).compiler_ir("hlo").as_hlo_text()
    assert "cost_estimate_json" in hlo
    assert re.search(r"cost_estimate_json\s*=\s*.*flops\\22\s*:\s*123", hlo), hlo       # jax-triton's own check
    assert re.search(r"cost_estimate_json\s*=\s*.*bytes_accessed\\22\s*:\s*456", hlo), hlo
    np.testing.assert_array_equal(f(x, y), x + y)        # libtrident's handler ignores the attribute
    assert "cost_estimate_json" not in jax.jit(add).lower(x, y).as_text()
    with pytest.raises(TypeError, match="cost_estimate"):
        add(x, y, cost_estimate={"flops": 1.5})


def test_unhashable_backend_options_are_refused_before_any_file_is_opened(monkeypatch):
    monkeypatch.setattr(jt_compile, "_extern_libs_digest", lambda libs: pytest.fail(f"{libs} was read"))
    with pytest.raises(TypeError, match=r"backend_options\['extern_libs'\] must be hashable"):
        add(rand(8), rand(8), backend_options={"extern_libs": {"libdevice": "/path"}})


def test_compiles_when_lowered_never_when_traced(monkeypatch, fresh_cache):
    compiled = []
    real = jt_compile.compile_for
    monkeypatch.setattr(jt_compile, "compile_for", lambda *a, **k: compiled.append(a[1]) or real(*a, **k))
    x = jnp.zeros(1024, jnp.float32)
    f = lambda a: add(a, a)  # noqa: E731
    with jt.targets("sm90", "host"):
        jax.eval_shape(f, x)
        jax.make_jaxpr(f)(x)
        assert compiled == []
        jax.jit(f).lower(x)
    assert [str(t) for t in compiled] == ["sm90"]


def test_targets_come_from_the_platform_being_lowered(monkeypatch):
    """Lowering for cuda on a CPU-only JAX asks for JAX's cuda devices (there are none here: an error that says
    so); with cuda devices (a stand-in), their architecture; JAX's default backend (cpu) plays no part."""
    x = jnp.zeros(1024, jnp.float32)
    traced = jax.jit(lambda a: add(a, a)).trace(x)
    if not any(d.platform == "gpu" for d in jax.devices()):
        with pytest.raises(jt.CompileError, match="lowering for cuda: this JAX has no cuda devices"):
            traced.lower(lowering_platforms=("cuda",))
    seen = []
    monkeypatch.setattr(jt_lowering, "emit", lambda k, *a, out_shape, **kw: seen.append(k) or
                        [jnp.zeros(s.shape, s.dtype) for s in out_shape])
    real_devices = jax.devices
    fake = types.SimpleNamespace(platform="gpu", id=0, local_hardware_id=0, compute_capability="8.0",
                                 client=types.SimpleNamespace(platform_version="cuda 12"))
    monkeypatch.setattr(jax, "devices", lambda backend=None: [fake] if backend == "cuda" else real_devices(backend))
    monkeypatch.setattr(jt_platforms, "_trident_devices", lambda: [])
    jax.jit(lambda a: add(a, a)).trace(x).lower(lowering_platforms=("cuda",))
    assert sorted((t.format, t.arch) for t in seen[-1].targets) == [("cubin", "sm80"), ("ptx", "sm80")]
    jax.jit(lambda a: add(a, a)).trace(x).lower(lowering_platforms=("cpu",))   # cpu: the host twin alone
    assert [(t.format, t.backend) for t in seen[-1].targets] == [("so", "host")]


def test_eager_calls_reuse_what_jax_compiled_and_scalars_compare_by_type(monkeypatch):
    lowered = []
    real = jt_lowering.TritonCall.expand
    monkeypatch.setattr(jt_lowering.TritonCall, "expand", lambda self, *a: lowered.append(1) or real(self, *a))
    jax.clear_caches()
    x, y = rand(2048), rand(2048, 1)
    for _ in range(3):
        np.testing.assert_array_equal(add(x, y), x + y)
    assert len(lowered) == 1
    from trident.jax.values import freeze
    assert freeze(1) != freeze(1.0) and freeze(1) != freeze(True) and freeze((1, [2])) == freeze((1, [2]))


def test_caches_are_bounded_or_weak():
    lru = jt_compile.LRU(2)
    for i in range(5):
        lru.put(i, str(i))
    assert len(lru) == 2 and lru.get(0) is None and lru.get(4) == "4"
    import gc
    k = trident.Kernel(host_kernel_path("add_kernel"), name="add_kernel")
    jt_call._bundle_of(k)
    assert k in jt_call._bundles
    n = len(jt_call._bundles)
    del k
    gc.collect()
    assert len(jt_call._bundles) == n - 1


def test_cache_dir_comes_from_libtridents_configuration(tmp_path):
    """[runtime] cache_dir of a trident.ini (TRIDENT_CONFIG) decides where trident.jax's caches live."""
    ini = tmp_path / "trident.ini"
    ini.write_text(f"[runtime]\ncache_dir = {tmp_path / 'from-ini'}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("TRIDENT_CACHE_DIR", "TRIDENT_JAX_CACHE")}
    env["TRIDENT_CONFIG"] = str(ini)
    code = "import trident, trident.jax.cache as c; print(trident.cache_dir()); print(c.cache_dir())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == [str(tmp_path / "from-ini")] * 2
    env["TRIDENT_JAX_CACHE"] = "0"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == [str(tmp_path / "from-ini"), "None"]


def test_a_host_image_alone_takes_its_declared_signature():
    k = trident.Kernel(host_kernel_path("add_kernel"), name="add_kernel")
    assert k.signature == "x:*fp32,y:*fp32,out:*fp32,n:i32"


@triton.jit
def readme_add_kernel(x_ptr, y_ptr, n, out_ptr, BLOCK: tl.constexpr):
    """README.md's add_kernel: its scalar before its output, unlike examples/host/add_kernel.c."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < n) + tl.load(y_ptr + i, mask=i < n), mask=i < n)


def test_a_twin_with_other_parameters_is_refused_naming_both():
    jt.host_twin(readme_add_kernel, host_kernel_path("add_kernel"), name="add_kernel")
    x = rand(2048)
    with pytest.raises(jt.CompileError, match=r"kernel 'readme_add_kernel': its host twin .*add_kernel.so does not "
                                              r"take the kernel's launch parameters: .*declares "
                                              r"add_kernel\(x:\*fp32,y:\*fp32,out:\*fp32,n:i32\).*"
                                              r"x_ptr:\*fp32,y_ptr:\*fp32,n:i32,out_ptr:\*fp32"):
        # lowered for the cpu platform, where the twin runs, whatever JAX's default backend is
        jax.jit(lambda a: jt.triton_call(a, a, a.size, kernel=readme_add_kernel, out_shape=a, grid=(2,),
                                         BLOCK=1024)).trace(x).lower(lowering_platforms=("cpu",))


def test_a_twin_must_declare_its_signature(tmp_path):
    src = tmp_path / "undeclared.c"
    src.write_text("#include <trident/host_kernel.h>\nTRD_HOST_KERNEL(add_kernel) { (void)args; (void)program; }\n")
    so = tmp_path / "undeclared.so"
    try:
        subprocess.run(["cc", "-shared", "-fPIC", f"-I{SRC / 'abi'}", "-o", str(so), str(src)], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"no C compiler to build a host kernel: {e}")

    @triton.jit
    def other(x_ptr, out_ptr):
        tl.store(out_ptr, tl.load(x_ptr))
    with pytest.raises(jt.CompileError, match=r"declares no signature for 'add_kernel'.*TRD_HOST_KERNEL_SIGNATURE"):
        jt.host_twin(other, so, name="add_kernel")
