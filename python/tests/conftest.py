"""Shared fixtures: the build tree's host kernels and the Triton fixtures,
combined into bundles that run on the host (CPU JAX) and on CUDA GPUs alike."""
from __future__ import annotations

import os
from pathlib import Path

import jax
import pytest

import trident

SRC = Path(os.environ.get("TRD_SRCDIR", Path(__file__).resolve().parents[2]))


def _builddir() -> Path:
    env = os.environ.get("TRD_BUILDDIR")
    if env:
        return Path(env)
    lib = Path(trident.library_path()).resolve()
    return lib.parents[2]  # <build>/core/.libs/libtrident.so.1


BUILD = _builddir()

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
        parts = [trident.Kernel(host_kernel_path(so), name=name, signature=sig)]
        fixture = SRC / "tests" / "fixtures" / "triton" / "cuda" / variant
        if fixture.exists():
            parts.append(trident.Kernel(fixture, signature=sig))
        _cache[name] = trident.Kernel.combine(parts, signature=sig)
    return _cache[name]


@pytest.fixture
def platform() -> str:
    return jax.default_backend()


def requires_gpu():
    return pytest.mark.skipif(jax.default_backend() == "cpu", reason="needs a GPU (JAX's default backend is cpu)")
