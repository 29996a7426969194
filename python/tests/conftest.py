# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python suite: the build tree's host kernels and the Triton fixtures (combined into
bundles that run on the host under CPU JAX and on CUDA GPUs alike), private Triton and trident caches, and the
skip of GPU-only tests on CPU JAX; the `platform` fixture, which runs a test on JAX's CPU and GPU platforms
in turn."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Triton's and trident's disk caches in a private directory (unless the caller chose one), set before the
# packages that read them are imported
_tmp = tempfile.mkdtemp(prefix="trident-pytest-")
os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(_tmp, "triton"))
os.environ.setdefault("TRIDENT_CACHE_DIR", os.path.join(_tmp, "trident"))

import jax  # noqa: E402
import pytest  # noqa: E402

import trident  # noqa: E402

SRC = Path(os.environ.get("TRD_SRCDIR", Path(__file__).resolve().parents[2]))


def build_dir() -> Path:
    """The build tree: TRD_BUILDDIR, else the one holding the libtrident in use (<build>/core/.libs/)."""
    env = os.environ.get("TRD_BUILDDIR")
    if env:
        return Path(env)
    return Path(trident.library_path()).resolve().parents[2]


BUILD = build_dir()
# the directory holding the trident package this suite imported (the checkout's python/, or an installed
# wheel's site-packages or --target directory): the PYTHONPATH of the suite's child interpreters, which must
# import the same package
PACKAGE_ROOT = str(Path(trident.__file__).resolve().parents[1])
# the trident CLI over the same libtrident: a wheel's bundled one, else the build tree's
_BUNDLED_CLI = Path(trident.__file__).resolve().parent / "_native" / "bin" / "trident"
CLI = str(_BUNDLED_CLI if _BUNDLED_CLI.exists() else BUILD / "tools" / "trident")


def _load_fixture_kernels():
    """tests/fixtures/kernels.py: the Triton kernels whose compiled output is committed, so that the suite runs the
    same source it was compiled from."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("trident_fixture_kernels", SRC / "tests" / "fixtures" / "kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fixture_kernels = _load_fixture_kernels()

# name -> (host kernel .so, signature, CUDA Triton fixture variant): one kernel, two targets
KERNELS = {
    "add_kernel": ("add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", "add_fp32"),
    "sum_diff_kernel": ("sum_diff_kernel", "x:*fp32,y:*fp32,n:i32,s:*fp32,d:*fp32", "sum_diff"),
    "accumulate_kernel": ("accumulate_kernel", "x:*i32,n:i32,out:*i64,count:*i32", "accumulate"),
    "scale_inplace_kernel": ("scale_inplace_kernel", "x:*fp32,n:i32,alpha:fp32", "scale_inplace"),
    "scalars_kernel": ("scalars_kernel", "out:*fp64,a_i8:i8,a_i16:i16,a_i32:i32,a_i64:i64,a_u32:u32,a_u64:u64,"
                       "a_f16:fp16,a_bf16:bf16,a_f32:fp32,a_f64:fp64,a_i1:i1", "scalars"),
}

_cache: dict[str, trident.Kernel] = {}


def host_kernel_path(name: str) -> Path:
    return BUILD / "examples" / "host" / ".libs" / f"{name}.so"


def kernel(name: str) -> trident.Kernel:
    """The kernel with its host twin and (when the fixture exists) its Triton sm90 images."""
    if name not in _cache:
        so, sig, variant = KERNELS[name]
        if not host_kernel_path(so).exists():   # an installed wheel's run carries no build tree
            pytest.skip(f"host kernel {host_kernel_path(so)} is not built (make in the build tree, TRD_BUILDDIR)")
        parts = [trident.Kernel(host_kernel_path(so), name=name, signature=sig)]
        fixture = SRC / "tests" / "fixtures" / "triton" / "cuda" / variant
        if fixture.exists():
            parts.append(trident.Kernel(fixture, signature=sig))
        _cache[name] = trident.Kernel.combine(parts, signature=sig)
    return _cache[name]


@pytest.fixture(params=["cpu", "gpu"])
def platform(request):
    """The test once on JAX's CPU platform (Triton's interpreter runs kernels without a host twin) and once on
    its GPU (skipped where JAX has none): the arrays the test makes, and the computations they feed, go to that
    platform's first device."""
    if request.param == "gpu":
        devs = [d for d in jax.devices() if d.platform != "cpu"]
        if not devs:
            pytest.skip("needs a GPU: JAX's default backend is cpu (run on the GPU machine without JAX_PLATFORMS=cpu)")
    else:
        devs = jax.devices("cpu")
    with jax.default_device(devs[0]):
        yield request.param


def requires_gpu():
    return pytest.mark.skipif(jax.default_backend() == "cpu", reason="needs a GPU (JAX's default backend is cpu)")


@pytest.fixture
def undeclared_kernel() -> str:
    """The test host image that declares no signature (tests/host/undeclared_kernel.c): it takes any given."""
    p = BUILD / "tests" / "host" / ".libs" / "undeclared_kernel.so"
    if not p.exists():
        pytest.skip(f"{p} is not built (make check in the build tree)")
    return str(p)


@pytest.fixture
def host_kernel():
    def get(name: str) -> str:
        p = host_kernel_path(name)
        if not p.exists():
            pytest.skip(f"host kernel {p} is not built (make in the build tree)")
        return str(p)
    return get


@pytest.fixture
def record(monkeypatch):
    """triton_call without running: the custom call a lowering emits (lowering.emit) replaced by a recorder of
    what it was given; calls made eagerly are lowered for the CPU platform (with jt.targets set for GPUs)."""
    from types import SimpleNamespace

    import jax.numpy as jnp

    from trident.jax import lowering as jt_lowering
    calls = []

    def fake(kernel, *args, grid, out_shape, **kw):
        calls.append(SimpleNamespace(kernel=kernel, args=args, grid=grid, out_shape=out_shape, **kw))
        return [jnp.zeros(s.shape, s.dtype) for s in out_shape]

    monkeypatch.setattr(jt_lowering, "emit", fake)
    jax.clear_caches()   # what JAX compiled for an eager call before is not lowered again
    return calls


def on_gpu() -> bool:
    return jax.default_backend() != "cpu"


@pytest.fixture
def gpu():
    """Skips the test with a visible reason where JAX has no GPU."""
    if jax.default_backend() == "cpu":
        pytest.skip("needs a GPU: JAX's default backend is cpu (run on the GPU machine without JAX_PLATFORMS=cpu)")


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty trident disk cache and an empty in-memory kernel cache for the test (autotuning choices the
    handler keeps in memory are per cache file, so a new directory starts without them)."""
    from trident.jax import compile as tc
    from trident.jax import cache
    d = tmp_path / "trident"
    monkeypatch.setattr(cache, "cache_dir", lambda: d)   # libtrident's configuration is read once a process
    monkeypatch.setattr(tc, "_compiled", tc.LRU(512))
    return tmp_path / "trident"
