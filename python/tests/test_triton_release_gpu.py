# SPDX-License-Identifier: Apache-2.0
"""Kernels compiled by other Triton releases, run on this machine's GPU: scripts/triton-release-kernels.sh
compiles the fixture kernels (add, scratch, scalars) for sm90 with Triton 3.7, 3.8 and 3.9 on a machine
without a GPU into .device/triton-<release>/ (or TRIDENT_RELEASE_KERNELS=DIR[:DIR...]); here each runs
through `trident run` and through kernel_call, on random inputs, every output element checked. The
machine's own Triton plays no part: trident reads the metadata and launches the cubin itself."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import trident
import trident.jax as jt

from conftest import CLI, SRC


def release_dirs() -> list[Path]:
    env = os.environ.get("TRIDENT_RELEASE_KERNELS")
    dirs = [Path(p) for p in env.split(":")] if env else sorted((SRC / ".device").glob("triton-*"))
    return [d for d in dirs if (d / "manifest.json").is_file()]


DIRS = release_dirs()
pytestmark = [
    pytest.mark.skipif(not DIRS, reason="no kernels of other Triton releases: run scripts/triton-release-kernels.sh "
                                        "on the development machine and carry .device/triton-*"),
    pytest.mark.skipif(jax.default_backend() == "cpu", reason="needs a GPU (JAX's default backend is cpu)"),
]
N = 4000   # not a multiple of the blocks: the masks matter


def entry(d: Path, variant: str) -> tuple[Path, str]:
    """A kernel's Triton cache entry and its signature as compiled (the .ttir spells u32 as i32)."""
    k = json.loads((d / "manifest.json").read_text())["kernels"][variant]
    return d / variant / f"{k['name']}.json", k["signature"]


def load(d: Path, variant: str) -> trident.Kernel:
    path, sig = entry(d, variant)
    return trident.Kernel(str(path), signature=sig)


def cuda_ok():
    if not any(x["backend"] == "cuda" for x in trident.devices()):
        pytest.skip("trident sees no CUDA device")


def trident_run(tmp: Path, kernel: tuple[Path, str], grid: int, *args: str) -> list[Path]:
    path, sig = kernel
    tmp.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([CLI, "run", str(path), "-s", sig, "-g", str(grid), "--dump",
                        str(tmp), *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return sorted(tmp.glob("arg*.bin"), key=lambda p: int(p.stem[3:]))


def rand(seed: int, n: int = N) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-100, 100, n).astype(np.float32)


SCALARS = [("i8", 7, np.int8), ("i16", 300, np.int16), ("i32", 70000, np.int32), ("i64", 2**40 + 3, np.int64),
           ("u32", 3_000_000_000, np.uint32), ("u64", 2**40 + 7, np.uint64), ("fp16", 1.5, np.float16),
           ("bf16", 2.5, None), ("fp32", 3.25, np.float32), ("fp64", 4.125, np.float64), ("i1", 1, np.bool_)]
SCALARS_WANT = np.array([7, 300, 70000, 2**40 + 3, 3_000_000_000, 2**40 + 7, 1.5, 2.5, 3.25, 4.125, 1.0])


@pytest.mark.parametrize("d", DIRS, ids=lambda d: d.name)
def test_trident_run(d, tmp_path):
    cuda_ok()
    bufs = trident_run(tmp_path / "add", entry(d, "add_fp32"), 4, f"buf:{N}:rand:1", f"buf:{N}:rand:2", f"buf:{N}",
                       str(N))
    x, y, out = (np.fromfile(b, np.float32) for b in bufs[:3])
    assert len(out) == N and np.array_equal(out, x + y), d.name
    bufs = trident_run(tmp_path / "scratch", entry(d, "scratch"), -(-N // 256), f"buf:{N}:rand:3", f"buf:{N}", str(N))
    x, out = (np.fromfile(b, np.float32) for b in bufs[:2])
    assert np.array_equal(out, x * 2 + 1), d.name   # exact in fp32: x * 2 is
    bufs = trident_run(tmp_path / "scalars", entry(d, "scalars"), 1, "buf:11", *(str(v) for _, v, _ in SCALARS))
    assert np.array_equal(np.fromfile(bufs[0], np.float64), SCALARS_WANT), d.name


@pytest.mark.parametrize("d", DIRS, ids=lambda d: d.name)
def test_kernel_call(d):
    cuda_ok()
    x, y = jnp.asarray(rand(4)), jnp.asarray(rand(5))
    out_shape = jax.ShapeDtypeStruct((N,), jnp.float32)
    add = load(d, "add_fp32")
    got = jax.jit(lambda a, b: jt.kernel_call(add, a, b, N, grid=4, out_shape=out_shape, out_params=[2]))(x, y)
    assert np.array_equal(np.asarray(got), np.asarray(x) + np.asarray(y)), d.name
    scratch = load(d, "scratch")
    got = jt.kernel_call(scratch, x, N, grid=-(-N // 256), out_shape=out_shape, out_params=[1])
    assert np.array_equal(np.asarray(got), np.asarray(x) * 2 + 1), d.name
    scalars = load(d, "scalars")
    vals = [t(v) if t is not None else v for _, v, t in SCALARS]
    with jax.enable_x64(True):
        got = jt.kernel_call(scalars, jnp.full((11,), jnp.nan), *vals, grid=1,
                             out_shape=jax.ShapeDtypeStruct((11,), jnp.float64), input_output_aliases={0: 0})
        assert np.array_equal(np.asarray(got), SCALARS_WANT), d.name
