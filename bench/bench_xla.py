#!/usr/bin/env python3
"""bench_xla: the cost of one kernel call inside jax.jit, on a GPU.

A jitted chain of 256 calls of a tiny Triton add (one program of 1024
elements, 4 warps) through trident.jax.kernel_call (the committed sm90
fixture), through trident.jax.triton_call (compiled from source), through jax-triton
(jaxlib's triton_kernel_call_ffi) when it is importable, and XLA's own add
(kept unfused with optimization_barrier); per-call time = chain time / 256,
median of 50 runs, with XLA's command buffers (CUDA graphs) on and off.
Each configuration runs in 3 fresh processes (XLA_FLAGS is read at start-up),
the configurations interleaved; a row reports the median of its processes.

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
PROCESSES = 3
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
                x = jt.triton_call(x, y, N, kernel=kernels.add_out_kernel, out_shape=sds, grid=(1,), BLOCK=1024,
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
    configs = [(cb, which) for cb in ("on", "off") for which in ("trident", "trident.jax", "jax-triton", "xla")]
    results = {c: [] for c in configs}
    errors = {}
    # PROCESSES fresh processes per configuration, in rotated order, so that drift between processes (clocks,
    # placement) spreads over every configuration alike
    for rnd in range(PROCESSES):
        for cb, which in configs[rnd % len(configs):] + configs[:rnd % len(configs)]:
            if (cb, which) in errors:
                continue
            env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
            if cb == "off":
                env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer=").strip()
            r = subprocess.run([sys.executable, __file__, "--child", which], env=env, capture_output=True, text=True,
                               timeout=900)
            if r.returncode != 0:
                errs = [ln for ln in r.stderr.splitlines() if "Error" in ln] or r.stderr.strip().splitlines() or ["failed"]
                errors[(cb, which)] = errs[-1][:200]
                continue
            results[(cb, which)].append(json.loads(r.stdout.strip().splitlines()[-1]))
    print(f"bench_xla {time.strftime('%Y-%m-%d')}: jitted chain of {CHAIN} calls of a {N}-element add; per process the "
          f"median of {RUNS} runs, {PROCESSES} processes per row")
    dev = next((r[0]["device"] for r in results.values() if r), "?")
    print(f"device: {dev}\n")
    print("| command buffers | path | per call (median of processes) | process medians | vs jax-triton | max abs error |")
    print("|---|---|---|---|---|---|")

    def med(rs):
        v = sorted(r["median_us"] for r in rs)
        return v[len(v) // 2]

    base = {cb: med(results[(cb, "jax-triton")]) if results[(cb, "jax-triton")] else None for cb in ("on", "off")}
    for cb, which in configs:
        rs = results[(cb, which)]
        if not rs:
            print(f"| {cb} | {which} | - | - | - | not run: {errors.get((cb, which), '?')} |")
            continue
        m = med(rs)
        ratio = f"{m / base[cb]:.2f}" if base[cb] else "-"
        spread = " ".join(f"{r['median_us']:.2f}" for r in rs)
        err = max(r["max_abs_err"] for r in rs)
        print(f"| {cb} | {which} | {m:.2f} us | {spread} | {ratio} | {err:.2e} |")


if __name__ == "__main__":
    main()
