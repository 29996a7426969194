# SPDX-License-Identifier: Apache-2.0
"""Kernels of several compiled configurations (a bundle's variants) and libtrident's tuner from Python:
write_variants_bundle, Kernel.variants, Kernel.benchmark_variants and Kernel.tuned_launch, on host variants of one
in-place kernel at two speeds (tests/host/tune_kernel.c) and a broken one (an image without the kernel's symbol)."""
from __future__ import annotations

import math
import random
from array import array

import pytest

import trident

from conftest import BUILD

SIG = "x:*fp32,n:i32,alpha:fp32"
N, BLOCK = 3000, 256


def _target(path):
    p = BUILD / "tests" / "host" / ".libs" / path
    if not p.exists():
        pytest.skip(f"test host kernel {p} is not built (make check in the build tree)")
    return trident.Kernel(p, name="tune_kernel", signature=SIG, format="so", target="host:x86_64").targets


@pytest.fixture(scope="module")
def tuned():
    parts = [_target("tune_slow.so"), _target("undeclared_kernel.so"), _target("tune_fast.so")]
    return trident.Kernel(trident.write_variants_bundle("tune_kernel", SIG, parts, ["slow", "broken", "fast"]))


def _inputs(seed):
    rnd = random.Random(seed)
    x = array("f", (rnd.uniform(-1, 1) for _ in range(N)))
    want = array("f", x)  # fp32 arithmetic, as the kernel does it
    for i in range(N):
        want[i] = want[i] * 1.5
        want[i] = want[i] + 1.0
    return x, want


def test_variants_listed(tuned):
    vs = tuned.variants
    assert [(v.index, v.config) for v in vs] == [(0, "slow"), (1, "broken"), (2, "fast")]
    assert vs[0].kernel is tuned and all(v.kernel.signature == SIG for v in vs)
    assert [len(v.kernel.targets) for v in vs] == [1, 1, 1]
    assert len(trident.Kernel(BUILD / "examples" / "host" / ".libs" / "add_kernel.so", name="add_kernel").variants) == 1


def test_benchmark_and_tuned_launch(tuned):
    x, want = _inputs(1)
    grid = (N + BLOCK - 1) // BLOCK
    times = tuned.benchmark_variants([x, N, 1.5], grid=grid, written=[0], device="host:0")
    assert math.isinf(times[1]) and times[2] < times[0], times
    assert x == _inputs(1)[0]  # nothing kept, the buffer as given
    assert tuned.tuned_launch([x, N, 1.5], key="n=3000", grid=grid, written=[0], device="host:0") == 2
    assert x == want  # exact: one launch's output, the benchmark's launches undone
    assert tuned.tuned_launch([x, N, 1.5], key="n=3000", grids=[grid] * 3, written=[0], device="host:0") == 2


def test_grid_rules():
    parts = [_target("tune_slow.so"), _target("tune_fast.so")]
    k = trident.Kernel(trident.write_variants_bundle("tune_kernel", SIG, parts, ["BLOCK=256"] * 2,
                                                     ["cdiv(n, BLOCK)", "(n + BLOCK - 1) / BLOCK"]))
    assert [v.grid for v in k.variants] == ["cdiv(n, BLOCK)", "(n + BLOCK - 1) / BLOCK"]
    x, want = _inputs(3)
    assert k.tuned_launch([x, N, 1.5], key="rules", written=[0], device="host:0") == 1
    assert x == want  # every block: the rules' grids, not one program
    with pytest.raises(trident.TridentError, match="grid rule 'cdiv[(]n, B[)]': a name that is neither"):
        trident.write_variants_bundle("tune_kernel", SIG, parts[:1], ["BLOCK=256"], ["cdiv(n, B)"])


def test_bad_calls(tuned):
    x, _ = _inputs(2)
    with pytest.raises(ValueError, match="takes 3 arguments"):
        tuned.tuned_launch([x, N], key="k", grid=1)
    with pytest.raises(ValueError, match="not a pointer parameter"):
        tuned.tuned_launch([x, N, 1.5], key="k", grid=1, written=[1])
    with pytest.raises(ValueError, match="not every variant has a launch dimensions rule"):
        tuned.tuned_launch([x, N, 1.5], key="k")
    with pytest.raises(ValueError, match="3 variants, grids gives 2"):
        tuned.tuned_launch([x, N, 1.5], key="k", grids=[1, 1])
    with pytest.raises(ValueError, match="read-only"):
        tuned.tuned_launch([bytes(4 * N), N, 1.5], key="k", grid=1, written=[0], device="host:0")
    with pytest.raises(trident.TridentError, match="a tuning key has 1 .. 1024 bytes, not 1025"):
        tuned.tuned_launch([x, N, 1.5], key=b"k" * 1025, grid=1, written=[0], device="host:0")
