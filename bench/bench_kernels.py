#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_kernels: real kernels through trident.jax, jax-triton (when
importable) and XLA's own ops, in one process, on a GPU.

Kernels (bench/suite_kernels.py, one Triton source per kernel for both Triton
paths; only the import differs): a fp16 matmul (8192^3, BM 128 BN 256 BK 64,
8 warps, 3 stages), a row softmax (fp32, 16384 rows of 4096), a layer norm
(fp16, 16384 rows of 4096), a fused attention forward (fp16, batch*heads 64, seq 4096,
head dim 64) and a memory-bound elementwise chain (fp32, 2^28 elements). Every
path's output is checked against the jnp reference (the XLA row) before it is
timed; a path that fails prints its error in its row and the others go on.

Timing: each path jitted once, then ROUNDS rounds with the paths interleaved
(order rotated each round), each round the host time of REPS calls ended by
one block_until_ready, divided by REPS; a row gives the median over rounds,
TFLOP/s (matmul, attention) or GB/s (the others: bytes read + written once),
and the ratio to XLA's own op measured in the same process.

    python3 bench/bench_kernels.py [KERNEL...]     # prints a markdown table
    python3 bench/bench_kernels.py --compile-only  # no GPU: lowers the trident.jax paths for sm90
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "python"))

ROUNDS = int(os.environ.get("BENCH_KERNELS_ROUNDS", "15"))
REPS = int(os.environ.get("BENCH_KERNELS_REPS", "10"))
PATHS = ("trident.jax", "jax-triton", "xla")


def _modules():
    import jax
    import jax.numpy as jnp
    import numpy as np
    import triton
    import suite_kernels as kernels
    return jax, jnp, np, triton, kernels


def _api(path: str):
    if path == "jax-triton":
        cache = os.environ.get("TRITON_CACHE_DIR")
        import jax_triton as jt
        # jax-triton turns Triton's cache off for the whole process at import; trident.jax keeps its own cache
        if cache is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = cache
        return jt
    import trident.jax as jt
    return jt


# ------------------------------------------------------------------ kernels: (inputs, paths, measure)

def matmul():
    jax, jnp, np, triton, k = _modules()
    n = int(os.environ.get("BENCH_MATMUL_N", "8192"))
    meta = dict(BM=128, BN=256, BK=64, GROUP_M=8)
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal((n, n), np.float32).astype(np.float16))
    b = jnp.asarray(rng.standard_normal((n, n), np.float32).astype(np.float16))
    out = jax.ShapeDtypeStruct((n, n), jnp.float16)

    def triton_path(jt):
        return lambda x, y: jt.triton_call(x, y, n, n, n, n, 1, n, 1, n, 1, kernel=k.matmul_kernel, out_shape=out,
                                           grid=(triton.cdiv(n, meta["BM"]) * triton.cdiv(n, meta["BN"]),),
                                           num_warps=8, num_stages=3, **meta)

    ref = lambda x, y: jnp.dot(x, y, preferred_element_type=jnp.float32).astype(jnp.float16)  # noqa: E731
    return dict(args=(a, b), triton=triton_path, xla=ref, work=2.0 * n ** 3, unit="TFLOP/s",
                tol=dict(atol=0.5, rtol=0.02), what=f"matmul fp16 {n}^3 (BM 128 BN 256 BK 64, 8 warps, 3 stages)")


def softmax():
    jax, jnp, np, triton, k = _modules()
    rows, cols = 16384, 4096
    x = jnp.asarray(np.random.default_rng(1).standard_normal((rows, cols), np.float32))
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)

    def triton_path(jt):
        return lambda x: jt.triton_call(x, cols, cols, cols, kernel=k.softmax_kernel, out_shape=out, grid=(rows,),
                                        BLOCK=triton.next_power_of_2(cols), num_warps=8)

    return dict(args=(x,), triton=triton_path, xla=lambda x: jax.nn.softmax(x, axis=-1), work=2.0 * x.size * 4,
                unit="GB/s", tol=dict(atol=1e-6, rtol=1e-4), what=f"softmax fp32 {rows} x {cols}")


def layer_norm():
    jax, jnp, np, triton, k = _modules()
    rows, cols, eps = 16384, 4096, np.float32(1e-5)   # fp32 for both (jax-triton: a float is fp64)
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.standard_normal((rows, cols), np.float32).astype(np.float16))
    w = jnp.asarray(rng.uniform(0.5, 1.5, cols).astype(np.float16))
    b = jnp.asarray(rng.uniform(-0.5, 0.5, cols).astype(np.float16))
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)

    def triton_path(jt):
        return lambda x, w, b: jt.triton_call(x, w, b, cols, cols, eps, kernel=k.layer_norm_kernel, out_shape=out,
                                              grid=(rows,), BLOCK=triton.next_power_of_2(cols), num_warps=8)

    def ref(x, w, b):
        xf = x.astype(jnp.float32)
        mean = xf.mean(-1, keepdims=True)
        var = ((xf - mean) ** 2).mean(-1, keepdims=True)
        return ((xf - mean) * jax.lax.rsqrt(var + eps) * w + b).astype(jnp.float16)

    return dict(args=(x, w, b), triton=triton_path, xla=ref, work=2.0 * x.size * 2, unit="GB/s",
                tol=dict(atol=2e-2, rtol=1e-2), what=f"layer norm fp16 {rows} x {cols}")


def attention():
    jax, jnp, np, triton, k = _modules()
    bh, seq, d = 64, 4096, 64
    bm, bn = 128, 64
    scale = np.float32(1.0 / d ** 0.5)
    rng = np.random.default_rng(3)
    q, kk, v = (jnp.asarray(rng.standard_normal((bh, seq, d), np.float32).astype(np.float16)) for _ in range(3))
    out = jax.ShapeDtypeStruct(q.shape, q.dtype)

    def triton_path(jt):
        return lambda q, kk, v: jt.triton_call(q, kk, v, seq, scale, seq * d, d, kernel=k.attention_fwd_kernel,
                                               out_shape=out, grid=(triton.cdiv(seq, bm), bh), BM=bm, BN=bn, D=d,
                                               num_warps=8, num_stages=3)

    def ref(q, kk, v):
        s = jnp.einsum("bqd,bkd->bqk", q, kk, preferred_element_type=jnp.float32) * scale
        p = jax.nn.softmax(s, axis=-1)
        return jnp.einsum("bqk,bkd->bqd", p.astype(jnp.float16), v,
                          preferred_element_type=jnp.float32).astype(jnp.float16)

    return dict(args=(q, kk, v), triton=triton_path, xla=ref, work=4.0 * bh * seq * seq * d, unit="TFLOP/s",
                tol=dict(atol=2e-2, rtol=2e-2), what=f"attention fwd fp16 (batch*heads {bh}, seq {seq}, d {d})")


def elementwise():
    jax, jnp, np, triton, k = _modules()
    n = 1 << 28
    rng = np.random.default_rng(4)
    x = jnp.asarray(rng.uniform(-2, 2, n).astype(np.float32))
    y = jnp.asarray(rng.uniform(-2, 2, n).astype(np.float32))
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    block = 4096

    def triton_path(jt):
        return lambda x, y: jt.triton_call(x, y, n, kernel=k.elementwise_chain_kernel, out_shape=out,
                                           grid=(triton.cdiv(n, block),), BLOCK=block, num_warps=8)

    def ref(x, y):
        t = x * y + x
        return t * jax.nn.sigmoid(1.702 * t) * 0.5 + y

    return dict(args=(x, y), triton=triton_path, xla=ref, work=3.0 * n * 4, unit="GB/s",
                tol=dict(atol=1e-5, rtol=1e-5), what=f"elementwise chain fp32 2^28 (x*y+x, GELU, *0.5+y)")


KERNELS = {"matmul": matmul, "softmax": softmax, "layer_norm": layer_norm, "attention": attention,
           "elementwise": elementwise}


def _err(e: BaseException) -> str:
    s = str(e).strip().splitlines()
    return f"{type(e).__name__}: {s[-1] if s else ''}"[:160].replace("|", "/")


def run_kernel(name: str) -> list[dict]:
    import jax
    import numpy as np
    try:
        spec = KERNELS[name]()
    except Exception as e:
        return [{"kernel": name, "path": "-", "error": _err(e)}]
    rows, fns = {}, {}
    ref = jax.jit(spec["xla"])
    want = np.asarray(ref(*spec["args"]), dtype=np.float32)
    for path in PATHS:
        row = rows[path] = {"kernel": spec["what"], "path": path}
        try:
            f = ref if path == "xla" else jax.jit(spec["triton"](_api(path)))
            got = np.asarray(f(*spec["args"]), dtype=np.float32)
            err = float(np.max(np.abs(got - want)))
            row["max_err"] = err
            if not np.allclose(got, want, **spec["tol"]):
                row["error"] = f"wrong result: max abs error {err:.3g} (tolerance {spec['tol']})"
                continue
            for _ in range(3):
                f(*spec["args"]).block_until_ready()
            fns[path] = f
        except Exception as e:  # a path this machine lacks, or a failing compile: its row says why
            row["error"] = _err(e)
    times = {p: [] for p in fns}
    order = list(fns)
    for r in range(ROUNDS):
        for p in order[r % len(order):] + order[:r % len(order)] if order else []:
            t0 = time.perf_counter()
            for _ in range(REPS):
                o = fns[p](*spec["args"])
            o.block_until_ready()
            times[p].append((time.perf_counter() - t0) / REPS)
    for p, t in times.items():
        t.sort()
        med = t[len(t) // 2]
        rows[p].update(seconds=med, rate=spec["work"] / med / 1e12 if spec["unit"] == "TFLOP/s"
                       else spec["work"] / med / 1e9, unit=spec["unit"])
    base = rows["xla"].get("seconds")
    for p in rows.values():
        if base and "seconds" in p:
            p["vs_xla"] = p["seconds"] / base
    return list(rows.values())


def compile_only(names: list[str]) -> int:
    """Lowers every kernel's trident.jax path for sm90 (compiling it), on any machine."""
    import jax
    import trident.jax as tj
    failed = 0
    for name in names:
        try:
            spec = KERNELS[name]()
            args = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in spec["args"]]
            with tj.targets("sm90"):
                jax.jit(spec["triton"](tj)).lower(*args)
            print(f"{name}: compiled for sm90")
        except Exception as e:
            failed += 1
            print(f"{name}: {_err(e)}")
    return 1 if failed else 0


def main() -> int:
    import jax
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or list(KERNELS)
    if "--compile-only" in sys.argv:
        return compile_only(names)
    print(f"bench_kernels {time.strftime('%Y-%m-%d')}: {jax.devices()[0].device_kind} ({jax.devices()[0]}), "
          f"jax {jax.__version__}; per path the median of {ROUNDS} interleaved rounds of {REPS} calls\n")
    print("| kernel | path | time | rate | time vs XLA | max abs error vs jnp | note |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        for r in run_kernel(name):
            t = f"{r['seconds'] * 1e3:.3f} ms" if "seconds" in r else "-"
            rate = f"{r['rate']:.1f} {r['unit']}" if "rate" in r else "-"
            ratio = f"{r['vs_xla']:.2f}" if "vs_xla" in r else "-"
            err = f"{r['max_err']:.2e}" if "max_err" in r else "-"
            print(f"| {r['kernel']} | {r['path']} | {t} | {rate} | {ratio} | {err} | {r.get('error', '')} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
