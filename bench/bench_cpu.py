#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_cpu: a Triton kernel on JAX's CPU platform three ways: through Triton's interpreter (trident.jax's
path for a kernel without a host twin), through its host twin (native code, examples/host/), and jnp's own
operation, each inside jax.jit on the same inputs.

Kernels: an fp32 add (BLOCK 1024, examples/host/add_kernel.c) and an fp32 matmul in 32 x 32 tiles
(examples/host/matmul_kernel.c). The three paths are compiled once, then run in interleaved rounds (the
interpreter once a round, the others REPEAT times), so that drift falls on every path alike; a path's
figure is the median of its runs, its ratio is against jnp's median of the same run. Every path's result is
checked against jnp's first.

    TRIDENT_LIBRARY=build/core/.libs/libtrident.so.1 PYTHONPATH=python JAX_PLATFORMS=cpu \\
        python3 bench/bench_cpu.py [BUILD_DIR]          # prints a markdown table
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import triton
import triton.language as tl

import trident.jax as jt

ROUNDS = int(os.environ.get("BENCH_CPU_ROUNDS", "7"))
REPEAT = 20
N_ADD = 1 << 16
MNK = 256


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & (k + rk < K)[None, :],
                    other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=(k + rk < K)[:, None] & (rn[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def add(x, y):
    return jt.triton_call(x, y, kernel=add_kernel, out_shape=x, grid=(triton.cdiv(x.size, 1024),), n=x.size,
                          BLOCK=1024)


def matmul(a, b):
    (m, k), (_, n) = a.shape, b.shape
    return jt.triton_call(a, b, kernel=matmul_kernel, out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
                          grid=(triton.cdiv(m, 32), triton.cdiv(n, 32)), M=m, N=n, K=k, BM=32, BN=32, BK=32)


def timed(f, args) -> float:
    t = time.perf_counter()
    jax.block_until_ready(f(*args))
    return time.perf_counter() - t


def main() -> None:
    build = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "build")
    host = build / "examples" / "host" / ".libs"
    jt.host_twin(add_kernel, host / "add_kernel.so")
    jt.host_twin(matmul_kernel, host / "matmul_kernel.so")
    rng = np.random.default_rng(0)
    x, y = (jnp.asarray(rng.standard_normal(N_ADD, np.float32)) for _ in range(2))
    a, b = (jnp.asarray(rng.standard_normal((MNK, MNK), np.float32)) for _ in range(2))
    cases = {"add": ((x, y), add, lambda x, y: x + y, f"fp32, {N_ADD} elements, 64 programs"),
             "matmul": ((a, b), matmul, lambda a, b: jnp.dot(a, b, precision=jax.lax.Precision.HIGHEST),
                        f"fp32, {MNK}^3, 32 x 32 tiles, 64 programs")}
    rows = []
    for name, (args, fn, ref, what) in cases.items():
        with jt.cpu_kernels("interpreter"):
            interpreted = jax.jit(lambda *a, fn=fn: fn(*a))
            jax.block_until_ready(interpreted(*args))   # traced (and compiled) under the setting
        with jt.cpu_kernels("host"):
            twin = jax.jit(lambda *a, fn=fn: fn(*a))
            jax.block_until_ready(twin(*args))
        xla = jax.jit(ref)
        want = np.asarray(xla(*args))
        for label, f in (("interpreter", interpreted), ("host twin", twin)):
            err = float(np.max(np.abs(np.asarray(f(*args)) - want)))
            if err > 1e-3:
                raise SystemExit(f"bench_cpu: {name} through the {label} is off by {err}")
        times = {"interpreter": [], "host twin": [], "jnp": []}
        for _ in range(ROUNDS):
            times["interpreter"].append(timed(interpreted, args))
            for _ in range(REPEAT):
                times["host twin"].append(timed(twin, args))
                times["jnp"].append(timed(xla, args))
        base = statistics.median(times["jnp"])
        for label, ts in times.items():
            med = statistics.median(ts)
            rows.append(f"| {name} ({what}) | {label} | {med * 1e3:.3f} ms | {med / base:.3g} |")
    print("| kernel | path | median | vs jnp |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    print(f"\n{ROUNDS} rounds; a round runs the interpreter once and the other paths {REPEAT} times each. "
          f"jax {jax.__version__}, Triton {triton.__version__}, {os.cpu_count()} CPUs.")


if __name__ == "__main__":
    main()
