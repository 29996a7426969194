#!/usr/bin/env python3
"""bench_xla: the cost of one kernel call inside jax.jit, on a GPU.

A jitted chain of 256 calls of a tiny Triton add (one program of 1024
elements, 4 warps) through trident.jax.kernel_call (the committed sm90
fixture), through trident.jax.triton_call (compiled from source), through jax-triton
(jaxlib's triton_kernel_call_ffi) when it is importable, and XLA's own add
(kept unfused with optimization_barrier); per-call time = chain time / 256,
median of many runs, with XLA's command buffers (CUDA graphs) on and off.
Each configuration runs in a fresh process (XLA_FLAGS is read at start-up).

    python3 bench/bench_xla.py            # prints a markdown table
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

CHAIN = 256
RUNS = 50
N = 1024
HERE = Path(__file__).resolve().parent
SRC = HERE.parent


def child(which: str) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    x = jnp.asarray(np.random.default_rng(0).uniform(-1, 1, N).astype(np.float32))
    y = jnp.asarray(np.random.default_rng(1).uniform(-1, 1, N).astype(np.float32))
    o = jnp.zeros_like(x)
    sds = jax.ShapeDtypeStruct(x.shape, x.dtype)
    if which == "trident":
        sys.path.insert(0, str(SRC / "python"))
        import trident
        import trident.jax as tj
        k = trident.Kernel(SRC / "tests" / "fixtures" / "triton" / "cuda" / "add_out")

        def chain(x, y, o):
            for _ in range(CHAIN):
                x = tj.kernel_call(k, x, y, N, grid=1, out_shape=sds)
            return x
    elif which in ("jax-triton", "trident.jax"):
        # the same source and call through both packages: only the import differs
        sys.path.insert(0, str(SRC / "tests" / "fixtures"))
        if which == "jax-triton":
            import jax_triton as jt
        else:
            sys.path.insert(0, str(SRC / "python"))
            import trident.jax as jt
        import kernels

        def chain(x, y, o):
            for _ in range(CHAIN):
                x = jt.triton_call(x, y, N, kernel=kernels.add_out_kernel, out_type=sds, grid=(1,), BLOCK=1024,
                                   num_warps=4)
            return x
    else:
        def chain(x, y, o):
            for _ in range(CHAIN):
                x = jax.lax.optimization_barrier(x + y)
            return x

    f = jax.jit(chain)
    want = np.asarray(x) + CHAIN * np.asarray(y)  # the chain adds y CHAIN times
    got = np.asarray(f(x, y, o))
    err = float(np.max(np.abs(got - want)))
    for _ in range(5):
        f(x, y, o).block_until_ready()
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        f(x, y, o).block_until_ready()
        times.append((time.perf_counter() - t0) / CHAIN * 1e6)
    times.sort()
    return {"which": which, "median_us": times[len(times) // 2], "min_us": times[0], "max_abs_err": err,
            "device": str(jax.devices()[0])}


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2])))
        return
    rows = []
    for cb in ("on", "off"):
        for which in ("trident", "trident.jax", "jax-triton", "xla"):
            env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
            if cb == "off":
                env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer=").strip()
            r = subprocess.run([sys.executable, __file__, "--child", which], env=env, capture_output=True, text=True,
                               timeout=900)
            if r.returncode != 0:
                errs = [ln for ln in r.stderr.splitlines() if "Error" in ln] or r.stderr.strip().splitlines() or ["failed"]
                rows.append((cb, which, None, errs[-1][:200]))
                continue
            rows.append((cb, which, json.loads(r.stdout.strip().splitlines()[-1]), None))
    print(f"bench_xla {time.strftime('%Y-%m-%d')}: jitted chain of {CHAIN} calls of a {N}-element add, "
          f"median of {RUNS} runs")
    dev = next((r[2]["device"] for r in rows if r[2]), "?")
    print(f"device: {dev}\n")
    print("| command buffers | path | per call (median) | min | vs jax-triton | max abs error |")
    print("|---|---|---|---|---|---|")
    base = {cb: next((r[2]["median_us"] for r in rows if r[0] == cb and r[1] == "jax-triton" and r[2]), None)
            for cb in ("on", "off")}
    for cb, which, res, err in rows:
        if res is None:
            print(f"| {cb} | {which} | - | - | - | not run: {err} |")
            continue
        ratio = f"{res['median_us'] / base[cb]:.2f}" if base[cb] else "-"
        print(f"| {cb} | {which} | {res['median_us']:.2f} us | {res['min_us']:.2f} us | {ratio} | "
              f"{res['max_abs_err']:.2e} |")


if __name__ == "__main__":
    main()
