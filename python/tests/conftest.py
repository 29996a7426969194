"""Shared fixtures of the Python suite: the build tree's host kernels, private
Triton and trident caches, and the skip of GPU-only tests on CPU JAX."""
import os
import tempfile
from pathlib import Path

import pytest

# Triton's and trident's disk caches in a private directory (unless the caller chose one)
_tmp = tempfile.mkdtemp(prefix="trident-pytest-")
os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(_tmp, "triton"))
os.environ.setdefault("TRIDENT_CACHE_DIR", os.path.join(_tmp, "trident"))


def build_dir() -> Path:
    """The build tree: TRD_BUILDDIR, else three levels above TRIDENT_LIBRARY (core/.libs/libtrident.so.1)."""
    if os.environ.get("TRD_BUILDDIR"):
        return Path(os.environ["TRD_BUILDDIR"])
    lib = os.environ.get("TRIDENT_LIBRARY")
    if lib:
        return Path(lib).resolve().parents[2]
    return Path(__file__).resolve().parents[2]


def host_kernel_path(name: str) -> Path:
    return build_dir() / "examples" / "host" / ".libs" / f"{name}.so"


@pytest.fixture
def host_kernel():
    def get(name: str) -> str:
        p = host_kernel_path(name)
        if not p.exists():
            pytest.skip(f"host kernel {p} is not built (make in the build tree)")
        return str(p)
    return get


def on_gpu() -> bool:
    import jax
    return jax.default_backend() != "cpu"


@pytest.fixture
def gpu():
    """Skips the test with a visible reason where JAX has no GPU."""
    import jax
    if jax.default_backend() == "cpu":
        pytest.skip("needs a GPU: JAX's default backend is cpu (run on the GPU machine without JAX_PLATFORMS=cpu)")


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty trident disk cache and empty in-memory caches for the test."""
    from trident.jax import autotune, compile as tc
    monkeypatch.setenv("TRIDENT_CACHE_DIR", str(tmp_path / "trident"))
    monkeypatch.setattr(tc, "_compiled", {})
    monkeypatch.setattr(autotune, "_choices", {})
    return tmp_path / "trident"
