#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_sharding: a rule-partitioned call (sharding_rule=) against the same kernel under jax.shard_map and
against the unsharded call, on NDEV XLA CPU devices over as many host-driver devices.

Kernels: the host twins of an fp32 add (examples/host/add_kernel.c, over N elements a device) and of an fp32
matmul split along M (examples/host/matmul_kernel.c, M = 64 rows a device, N = K = 256). Each path is jitted
once, then run in interleaved rounds (REPEAT calls a path a round), so that drift falls on every path alike; a
path's figure is the median of its per-call times over the rounds, its ratio against shard_map's median of the
same run. Every path's result is checked element for element against the unsharded call's. The goal (issue
29): the rule-partitioned call within 1.05x of shard_map's per-call time (no extra copy).

    TRIDENT_LIBRARY=build/core/.libs/libtrident.so.1 PYTHONPATH=python:python/tests \\
        python3 bench/bench_sharding.py [BUILD_DIR]          # prints a markdown table
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

NDEV = int(os.environ.get("BENCH_SHARDING_DEVICES", "8"))
os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={NDEV}"
os.environ["TRIDENT_DRIVER_HOST_DEVICES"] = str(NDEV)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import triton  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import trident.jax as jt  # noqa: E402

try:
    from jax import shard_map  # noqa: E402
except ImportError:  # pragma: no cover
    from jax.experimental.shard_map import shard_map  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_SHARDING_ROUNDS", "15"))
REPEAT = 20
N = 1 << 18         # add: elements a device
ROWS, NK = 64, 256  # matmul: rows a device, N = K


def main() -> None:
    build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
    import sharding_cases as sc
    jt.host_twin(sc.add_twin, build / "examples/host/.libs/add_kernel.so", name="add_kernel")
    jt.host_twin(sc.matmul_twin, build / "examples/host/.libs/matmul_kernel.so", name="matmul_kernel")

    mesh = jax.make_mesh((NDEV,), ("d",))
    rng = np.random.default_rng(0)
    rows = P("d", None)

    def add(x, y, **r):
        return sc.add(x, y, sc.add_twin, **r)

    def matmul(a, b, **r):
        return sc.matmul(a, b, sc.matmul_twin, **r)

    benches = [
        ("add", add, sc.add_rule, [rng.uniform(-1, 1, N * NDEV).astype(np.float32) for _ in range(2)],
         (P("d"), P("d")), P("d")),
        ("matmul split on M", matmul, sc.matmul_rule,
         [rng.uniform(-1, 1, (ROWS * NDEV, NK)).astype(np.float32), rng.uniform(-1, 1, (NK, NK)).astype(np.float32)],
         (rows, P(None, None)), rows),
    ]
    print(f"bench_sharding: {NDEV} XLA CPU devices over {NDEV} host-driver devices, jax {jax.__version__}; per path "
          f"the median of {ROUNDS} interleaved rounds of {REPEAT} calls\n")
    print("| kernel | path | per call | vs shard_map |")
    print("|---|---|---|---|")
    for name, fn, rule_of, arrays, in_specs, out_spec in benches:
        placed = [jax.device_put(a, NamedSharding(mesh, s)) for a, s in zip(arrays, in_specs)]
        whole = [jax.device_put(a, jax.devices()[0]) for a in arrays]
        paths = {
            "sharding_rule": (jax.jit(lambda *xs: fn(*xs, **rule_of(*xs))), placed),
            "shard_map": (jax.jit(shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=out_spec)), placed),
            "unsharded, one device": (jax.jit(fn), whole),
        }
        ref = np.asarray(paths["unsharded, one device"][0](*whole))
        for label, (f, args) in paths.items():
            got = np.asarray(f(*args))
            if not np.array_equal(got, ref):
                raise SystemExit(f"bench_sharding: {name} through {label} differs from the unsharded call "
                                 f"(max abs error {np.max(np.abs(got - ref))})")
        times = {label: [] for label in paths}
        for _ in range(ROUNDS):
            for label, (f, args) in paths.items():
                jax.block_until_ready(f(*args))
                t0 = time.perf_counter()
                for _ in range(REPEAT):
                    out = f(*args)
                jax.block_until_ready(out)
                times[label].append((time.perf_counter() - t0) / REPEAT)
        base = statistics.median(times["shard_map"])
        for label, ts in times.items():
            med = statistics.median(ts)
            print(f"| {name} | {label} | {med * 1e6:.1f} us | {med / base:.3f} |")


if __name__ == "__main__":
    main()
