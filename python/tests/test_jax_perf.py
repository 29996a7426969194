# SPDX-License-Identifier: Apache-2.0
"""What trident.jax's speed rests on, checked without a GPU: the matmul of the benchmark suite (bench/suite_kernels.py),
compiled for sm90 as trident.jax compiles it, keeps Triton's own specialization of its arguments (16-divisible
pointers and integers) and so the TTGIR the 3.5x over jax-triton comes from (bench/NOTES.md, bench/matmul_spec.py):
vectorized loads, a pipeline of asynchronous copies and wgmma."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
import triton
import triton.language as tl

import trident.jax as jt
from trident.jax import compile as jt_compile

from conftest import PACKAGE_ROOT, SRC  # noqa: E402

sys.path.insert(0, str(SRC / "bench"))
import matmul_spec  # noqa: E402


@pytest.fixture(scope="module")
def stages(tmp_path_factory):
    return matmul_spec.compile_trident(tmp_path_factory.mktemp("matmul"))


def test_matmul_integers_and_pointers_are_specialized_divisible_by_16(stages):
    attrs = matmul_spec.arg_attrs(stages["ttir"])
    for p in ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"):
        assert attrs[p] == "tt.divisibility = 16 : i32", (p, attrs)
    for p in ("stride_ak", "stride_bn", "stride_cn"):   # equal to 1: compiled in, as Triton's launcher does
        assert attrs[p] == "constexpr 1", (p, attrs)


def test_matmul_ttgir_is_pipelined_with_vector_loads_and_wgmma(stages):
    facts = matmul_spec.ttgir_facts(stages["ttgir"])
    assert int(facts["wgmma (ttng.warp_group_dot)"]) >= 1, facts
    assert int(facts["async copies (ttg.async_copy_global_to_local)"]) >= 2, facts   # both operands, pipelined
    assert int(facts["plain tt.load in the loop"]) == 0, facts
    assert "8" in facts["blocked layouts' innermost sizePerThread"].split(","), facts  # 8 fp16 = 16-byte loads


@triton.jit
def target_kernel(out_ptr):
    # what the kernel was compiled for, as Triton's front end tells it (tl.target_info asks the runtime driver)
    if tl.target_info.cuda_capability_geq(9, 0):
        tl.store(out_ptr, 90)
    elif tl.target_info.is_hip():
        tl.store(out_ptr, 942)
    else:
        tl.store(out_ptr, -1)


@pytest.mark.parametrize("target,want", [("sm90", 90), ("gfx942", 942)])
def test_compiling_never_initialises_tritons_runtime_driver(target, want, tmp_path, monkeypatch):
    """Triton's driver (triton.runtime.driver.active) imports torch where it is installed, builds its C utilities
    and asks the GPU: seconds of a first call, for nothing, since trident only compiles. The kernel sees the target
    it is compiled for instead (on the old code: no driver here, so neither CUDA nor HIP: -1)."""
    import triton.runtime as tr

    def never(self):
        raise AssertionError("Triton's runtime driver was initialised while compiling")
    monkeypatch.setattr(type(tr.driver), "default", property(never))
    monkeypatch.setenv("JAX_TRITON_DUMP_DIR", str(tmp_path))
    monkeypatch.setenv("TRIDENT_JAX_CACHE", "0")
    jt_compile._compiled.clear()
    out = jax.ShapeDtypeStruct((1,), jnp.int32)
    with jt.targets(target):
        jax.jit(lambda: jt.triton_call(kernel=target_kernel, out_shape=out, grid=(1,))).lower()
    ttir = next(tmp_path.rglob("*.ttir")).read_text()
    assert f"arith.constant {want} : i32" in ttir, ttir


def test_lowering_never_imports_torch(tmp_path):
    """Where torch is installed, the native specialization of Triton 3.6 and 3.7 imports it at its first run
    (seconds of a first call on a GPU machine; 3.8 and 3.9 no longer do, and the test passes there either way). A stand-in torch package that records its import: a lowering for sm90 in a fresh
    process must not import it; importing it afterwards still works."""
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("import os\nopen(os.environ['TORCH_MARK'], 'w').write('imported')\n")
    mark = tmp_path / "imported"
    code = textwrap.dedent("""
        import jax, jax.numpy as jnp, triton, triton.language as tl, os, sys
        import trident.jax as jt
        @triton.jit
        def add(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(o_ptr + i, tl.load(x_ptr + i, mask=i < n) * 2, mask=i < n)
        x = jnp.ones(1000, jnp.float32)
        with jt.targets("sm90"):
            jax.jit(lambda x: jt.triton_call(x, n=x.size, kernel=add, out_shape=x, grid=(1,), BLOCK=1024)).lower(x)
        assert not os.path.exists(os.environ["TORCH_MARK"]), "lowering imported torch"
        import torch
        assert os.path.exists(os.environ["TORCH_MARK"])
        print("ok")
    """)
    env = dict(os.environ, TORCH_MARK=str(mark), TRIDENT_JAX_CACHE="0",
               PYTHONPATH=os.pathsep.join([str(tmp_path), PACKAGE_ROOT] + [p for p in sys.path if p]))
    script = tmp_path / "lower.py"     # (@triton.jit needs its source in a file)
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
