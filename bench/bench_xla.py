#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_xla: the cost of one kernel call inside jax.jit, on a GPU.

A jitted chain of 256 calls of a tiny Triton add (one program of 1024
elements, 4 warps) through trident.jax.kernel_call (the committed sm90
fixture), through trident.jax.triton_call (compiled from source), through
jax-triton (jaxlib's triton_kernel_call_ffi) when it is importable, and XLA's
own add (kept unfused with optimization_barrier); per-call time = chain time /
256. With XLA's command buffers (CUDA graphs) on and off: XLA_FLAGS is read at
start-up, so each setting runs in fresh processes (3 each; BENCH_XLA_PROCESSES). Inside a process
every path is compiled once and the paths' runs are interleaved (50 rounds,
the order rotated each round), so that clock and placement drift between
processes falls on every path alike; a path's figure is the median of its
runs, ratios are taken within a process, and the table reports the median
over processes.

    python3 bench/bench_xla.py            # prints a markdown table
    python3 bench/bench_xla.py --ncu      # the kernels' own GPU time (Nsight Compute), command buffers on

--ncu runs one child under ncu (--clock-control none, every kernel node of the
graphs profiled) and prints each kernel's median gpu__time_duration: whether
the gap between a custom call and XLA's own add inside a command buffer is the
kernel itself or how the graph holds it (bench_graph measures the latter).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

CHAIN = 256
RUNS = int(os.environ.get("BENCH_XLA_RUNS", "50"))
PROCESSES = int(os.environ.get("BENCH_XLA_PROCESSES", "3"))   # per setting
N = 1024
ALL_PATHS = ("trident", "trident.jax", "jax-triton", "xla")
PATHS = tuple(os.environ.get("BENCH_XLA_PATHS", ",".join(ALL_PATHS)).split(","))   # a subset, for --ncu's children
HERE = Path(__file__).resolve().parent
SRC = HERE.parent


def build(which: str, sds):
    """The jitted chain of one path, or raises when the path is not available here."""
    import jax

    if which == "trident":
        sys.path.insert(0, str(SRC / "python"))
        import trident
        import trident.jax as tj
        k = trident.Kernel(SRC / "tests" / "fixtures" / "triton" / "cuda" / "add_out")

        def chain(x, y):
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

        def chain(x, y):
            for _ in range(CHAIN):
                x = jt.triton_call(x, y, N, kernel=kernels.add_out_kernel, out_shape=sds, grid=(1,), BLOCK=1024,
                                   num_warps=4)
            return x
    else:
        def chain(x, y):
            for _ in range(CHAIN):
                x = jax.lax.optimization_barrier(x + y)
            return x
    return jax.jit(chain)


def child() -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    x = jnp.asarray(np.random.default_rng(0).uniform(-1, 1, N).astype(np.float32))
    y = jnp.asarray(np.random.default_rng(1).uniform(-1, 1, N).astype(np.float32))
    sds = jax.ShapeDtypeStruct(x.shape, x.dtype)
    want = np.asarray(x) + CHAIN * np.asarray(y)  # the chain adds y CHAIN times
    fns, errors, max_err = {}, {}, {}
    for which in PATHS:
        try:
            f = build(which, sds)
            got = np.asarray(f(x, y))
        except Exception as e:  # a path this machine lacks (jax-triton not installed, no GPU image)
            errors[which] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
            continue
        max_err[which] = float(np.max(np.abs(got - want)))
        for _ in range(5):
            f(x, y).block_until_ready()
        fns[which] = f
    times = {w: [] for w in fns}
    order = list(fns)
    for r in range(RUNS):
        for which in order[r % len(order):] + order[:r % len(order)]:
            t0 = time.perf_counter()
            fns[which](x, y).block_until_ready()
            times[which].append((time.perf_counter() - t0) / CHAIN * 1e6)
    med = {w: sorted(t)[len(t) // 2] for w, t in times.items()}
    return {"median_us": med, "max_abs_err": max_err, "errors": errors, "device": str(jax.devices()[0])}


def ncu() -> int:
    """Each kernel's GPU time (command buffers on), measured by Nsight Compute: one child per path, so that every
    profiled kernel is that path's (in one child the first path's launches would fill the profiled count)."""
    import csv
    import io
    import shutil
    tool = shutil.which("ncu")
    if tool is None:
        print("SKIP: bench_xla --ncu: no ncu on PATH")
        return 77
    print("bench_xla --ncu: each kernel's GPU time (gpu__time_duration, Nsight Compute, command buffers on; one "
          "child per path, its first 64 kernel launches skipped)\n")
    print("| path | kernel | profiled | median | min |\n|---|---|---|---|---|")
    rc = 0
    for path in ("trident", "xla", "trident.jax"):
        env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", BENCH_XLA_RUNS="2", BENCH_XLA_PATHS=path)
        cmd = [tool, "--clock-control", "none", "--graph-profiling", "node", "--metrics", "gpu__time_duration.sum",
               "--launch-skip", "64", "--launch-count", "300", "--csv", "--page", "raw",
               sys.executable, __file__, "--child"]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        rows = [ln for ln in r.stdout.splitlines() if ln.startswith('"')]
        if r.returncode != 0 or not rows:
            print(f"| {path} | ncu failed (rc {r.returncode}): {(r.stderr or r.stdout).strip().splitlines()[-1:]} | | | |")
            rc = 1
            continue
        table = list(csv.DictReader(io.StringIO("\n".join(rows))))
        by: dict[str, list[float]] = {}
        for row in table:
            v = row.get("gpu__time_duration.sum", "").replace(",", "")
            if v.replace(".", "", 1).isdigit():
                by.setdefault(row.get("Kernel Name", "?")[:60], []).append(float(v))
        for name, v in sorted(by.items()):
            v.sort()
            print(f"| {path} | {name} | {len(v)} | {v[len(v) // 2]:.0f} ns | {v[0]:.0f} ns |")
    return rc


def main():
    unknown = [p for p in PATHS if p not in ALL_PATHS]
    if unknown:  # an unknown name would otherwise be benchmarked as XLA's add under that name
        print(f"bench_xla: BENCH_XLA_PATHS={os.environ.get('BENCH_XLA_PATHS')!r}: {', '.join(map(repr, unknown))} "
              f"is not one of {', '.join(ALL_PATHS)}", file=sys.stderr)
        sys.exit(2)
    if len(sys.argv) > 1 and sys.argv[1] == "--ncu":
        sys.exit(ncu())
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child()))
        return
    runs = {"on": [], "off": []}
    failures = {}
    for p in range(PROCESSES):
        for cb in ("on", "off"):
            env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
            if cb == "off":
                env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer=").strip()
            r = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True,
                               timeout=900)
            if r.returncode != 0:
                lines = [ln for ln in r.stderr.splitlines() if "Error" in ln] or r.stderr.strip().splitlines()
                failures[cb] = (lines or ["failed"])[-1][:200]
                continue
            runs[cb].append(json.loads(r.stdout.strip().splitlines()[-1]))
    print(f"bench_xla {time.strftime('%Y-%m-%d')}: jitted chain of {CHAIN} calls of a {N}-element add; per process "
          f"the median of {RUNS} interleaved runs per path; {PROCESSES} processes per setting")
    dev = next((r["device"] for rs in runs.values() for r in rs), "?")
    print(f"device: {dev}\n")
    print("| command buffers | path | per call (median of processes) | per process | vs jax-triton (median of "
          "per-process ratios) | max abs error |")
    print("|---|---|---|---|---|---|")

    def median(v):
        v = sorted(v)
        return v[len(v) // 2] if v else None

    for cb in ("on", "off"):
        if not runs[cb]:
            print(f"| {cb} | - | - | - | - | not run: {failures.get(cb, '?')} |")
            continue
        for which in PATHS:
            per = [r["median_us"][which] for r in runs[cb] if which in r["median_us"]]
            if not per:
                why = next((r["errors"][which] for r in runs[cb] if which in r["errors"]), "?")
                print(f"| {cb} | {which} | - | - | - | not run: {why} |")
                continue
            ratios = [r["median_us"][which] / r["median_us"]["jax-triton"] for r in runs[cb]
                      if which in r["median_us"] and "jax-triton" in r["median_us"]]
            ratio = f"{median(ratios):.2f}" if ratios else "-"
            err = max(r["max_abs_err"][which] for r in runs[cb] if which in r["max_abs_err"])
            print(f"| {cb} | {which} | {median(per):.2f} us | {' '.join(f'{v:.2f}' for v in per)} | {ratio} | "
                  f"{err:.2e} |")


if __name__ == "__main__":
    main()
