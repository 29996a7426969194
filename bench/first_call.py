#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""first_call: where the seconds of a first jitted call go, in fresh processes.

Each row is one process per repetition (FIRST_CALL_PROCESSES, default 3), the
rows interleaved, timing the stages of a first call of a jitted Triton add
(1024 fp32, one program) against the same function written with jnp:

    import    import of the API (trident.jax, jax_triton; nothing for jnp)
    backend   jax.devices() and the inputs put on the device (JAX's client start)
    lower     jax.jit(f).lower(x, y)   (trident.jax and jax-triton compile here)
    compile   .compile()               (XLA)
    execute   the first call of the compiled function, to the result on the host
    first call = lower + compile + execute (what a user waits for at the first call)

Caches: "cold" runs with empty trident and Triton cache directories, "warm"
runs in a second process on the directories the cold one filled (jax-triton
keeps no kernel cache, and XLA's compilation cache is off). "no torch" runs
with `import torch` refused, as on a machine without torch. The autotuned
rows call an 8-config autotuned kernel (bench/first_call.py's
autotuned_add): cold, they compile and benchmark; warm, trident reuses the
choice it kept (the row says whether it benchmarked again).

Each child also times the calls that could cost seconds (Triton's compile and
its source hash, trident's runtime start, target lookup, the disk cache,
Triton's runtime driver) and writes a cProfile of its lower stage when
FIRST_CALL_PROFILE is a directory.

    python3 bench/first_call.py          # prints the tables; on a CPU-only machine the GPU rows say why not
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent
PROCESSES = int(os.environ.get("FIRST_CALL_PROCESSES", "3"))
N = 1024

# (row name, API, kernel, caches, torch allowed)
ROWS = [
    ("jnp", "jnp", "add", "cold", True),
    ("trident.jax cold", "trident.jax", "add", "cold", True),
    ("trident.jax warm", "trident.jax", "add", "warm", True),
    ("trident.jax warm, no torch", "trident.jax", "add", "warm", False),
    ("jnp, no torch", "jnp", "add", "cold", False),
    ("jax-triton cold", "jax-triton", "add", "cold", True),
    ("jax-triton warm", "jax-triton", "add", "warm", True),
    ("trident.jax autotuned (8) cold", "trident.jax", "autotuned", "cold", True),
    ("trident.jax autotuned (8) warm", "trident.jax", "autotuned", "warm", True),
    ("jax-triton autotuned (8) cold", "jax-triton", "autotuned", "cold", True),
    ("jax-triton autotuned (8) warm", "jax-triton", "autotuned", "warm", True),
]


# --------------------------------------------------------------------------- child

class _NoTorch:
    """A meta-path finder that refuses torch, as a machine without it would."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named '{name}' (refused by first_call.py)", name=name)
        return None


class Timers:
    """Wall time spent in named functions (wrapped in place), and how often each ran."""

    def __init__(self):
        self.spent: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, owner, attr: str, label: str) -> None:
        fn = getattr(owner, attr, None)
        if fn is None or getattr(fn, "_first_call_timer", False):
            return

        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.spent[label] = self.spent.get(label, 0.0) + time.perf_counter() - t0
                self.calls[label] = self.calls.get(label, 0) + 1
        timed._first_call_timer = True
        try:
            setattr(owner, attr, timed)
        except (AttributeError, TypeError):
            pass


def _wrap_common(tm: Timers) -> None:
    import jax
    import triton
    import triton.runtime.cache as trc
    tm.wrap(triton, "compile", "triton.compile (Triton's own compile)")
    tm.wrap(trc, "triton_key", "triton_key (Triton hashes its installation)")
    tm.wrap(jax, "devices", "jax.devices")


def _wrap_trident(tm: Timers) -> None:
    import trident
    from trident.jax import cache, compile as c, platforms, protocol, triton_cache
    tm.wrap(trident, "_runtime", "trident runtime (drivers, devices)")
    tm.wrap(platforms, "_trident_devices", "trident.devices (target lookup)")
    tm.wrap(c, "compile_for", "compile_for (memory, disk, Triton)")
    tm.wrap(c, "backend_of", "Triton backend object")
    tm.wrap(c, "binder", "Triton binder")
    tm.wrap(cache, "load_kernel", "disk cache read")
    tm.wrap(cache, "store_kernel", "disk cache write")
    tm.wrap(triton_cache, "_check_group", "Triton cache entry check (before Triton)")
    tm.wrap(triton_cache, "take", "Triton files check (after Triton)")
    tm.wrap(protocol, "register", "FFI target registration")


def _wrap_jax_triton(tm: Timers) -> None:
    import jax_triton.triton_lib as jtl
    tm.wrap(jtl, "get_or_create_triton_kernel", "jax-triton compile")
    tm.wrap(jtl, "compile_ttir_inplace", "jax-triton TTIR -> PTX")


def autotuned_add():
    """An add behind an 8-config autotuner (BLOCK 128..1024 x 4/8 warps)."""
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (128, 256, 512, 1024) for w in (4, 8)],
                     key=["n"])
    @triton.jit
    def add_tuned(x_ptr, y_ptr, n, out_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
    return add_tuned


def child(api: str, kernel: str) -> dict:
    t_start = time.perf_counter()
    out: dict = {"stages": {}}
    st = out["stages"]
    import numpy as np
    import jax
    import jax.numpy as jnp
    st["import jax"] = time.perf_counter() - t_start
    tm = Timers()
    t0 = time.perf_counter()
    if api == "trident.jax":
        sys.path.insert(0, str(SRC / "python"))
        import trident.jax as jt
    elif api == "jax-triton":
        import jax_triton as jt
    else:
        jt = None
    st["import"] = time.perf_counter() - t0
    if jt is not None:
        sys.path.insert(0, str(SRC / "tests" / "fixtures"))
        _wrap_common(tm)
        (_wrap_trident if api == "trident.jax" else _wrap_jax_triton)(tm)
    import triton.runtime as tr
    t0 = time.perf_counter()
    dev = jax.devices()[0]
    x = jax.device_put(np.random.default_rng(0).uniform(-1, 1, N).astype(np.float32))
    y = jax.device_put(np.random.default_rng(1).uniform(-1, 1, N).astype(np.float32))
    x.block_until_ready()
    st["backend"] = time.perf_counter() - t0
    sds = jax.ShapeDtypeStruct((N,), jnp.float32)
    if jt is None:
        f = jax.jit(lambda x, y: x + y)
    elif kernel == "autotuned":
        k = autotuned_add()
        import triton
        f = jax.jit(lambda x, y: jt.triton_call(x, y, N, kernel=k, out_shape=sds,
                                                grid=lambda m: (triton.cdiv(N, m["BLOCK"]),)))
    else:
        import kernels
        f = jax.jit(lambda x, y: jt.triton_call(x, y, N, kernel=kernels.add_out_kernel, out_shape=sds, grid=(1,),
                                                BLOCK=1024, num_warps=4))
    prof = os.environ.get("FIRST_CALL_PROFILE")
    t0 = time.perf_counter()
    if prof:
        import cProfile
        pr = cProfile.Profile()
        pr.enable()
    # on a machine without a GPU: trident.jax lowers for sm90 (compiling the kernel), nothing executes
    cpu = dev.platform == "cpu" and api == "trident.jax"
    import contextlib
    with jt.targets("sm90") if cpu else contextlib.nullcontext():
        lowered = f.lower(x, y)
    if prof:
        pr.disable()
        pr.dump_stats(os.path.join(prof, f"lower-{api}-{kernel}-{os.getpid()}.prof"))
    st["lower"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    compiled = lowered.compile()
    st["compile"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    got = np.asarray(x) + np.asarray(y) if cpu else np.asarray(compiled(x, y))
    st["execute"] = time.perf_counter() - t0
    out["not executed"] = cpu
    st["first call"] = st["lower"] + st["compile"] + st["execute"]
    st["process to result"] = time.perf_counter() - t_start
    out["max_err"] = float(np.max(np.abs(got - (np.asarray(x) + np.asarray(y)))))
    out["calls"] = {k: [round(v, 4), tm.calls[k]] for k, v in sorted(tm.spent.items(), key=lambda kv: -kv[1])}
    out["torch imported"] = "torch" in sys.modules and sys.modules["torch"] is not None
    out["triton driver initialised"] = getattr(tr.driver, "_default", None) is not None
    out["device"] = f"{dev.device_kind} ({dev.platform})"
    return out


# --------------------------------------------------------------------------- parent

def _median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else None


def _run(api: str, kernel: str, torch_ok: bool, dirs: dict) -> dict:
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", TRITON_CACHE_DIR=dirs["triton"],
               XDG_CACHE_HOME=dirs["xdg"], FIRST_CALL_TORCH="1" if torch_ok else "0", PYTHONUNBUFFERED="1")
    for v in [v for v in env if v.startswith("TRIDENT_") and v != "TRIDENT_LIBRARY"]:
        del env[v]
    try:
        r = subprocess.run([sys.executable, __file__, "--child", api, kernel], env=env, capture_output=True,
                           text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after 600 s"}
    if r.returncode != 0:
        lines = [ln for ln in r.stderr.splitlines() if "Error" in ln or "error" in ln] or r.stderr.splitlines()
        return {"error": (lines or ["failed"])[-1][:200].replace("|", "/")}
    return json.loads(r.stdout.strip().splitlines()[-1])


def _choice_files(xdg: str) -> list[str]:
    return sorted(str(p) for p in Path(xdg, "trident", "autotune").glob("*.json")) if Path(xdg).exists() else []


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        if os.environ.get("FIRST_CALL_TORCH") == "0":
            sys.meta_path.insert(0, _NoTorch())
        print(json.dumps(child(sys.argv[2], sys.argv[3])))
        return 0
    only = [a for a in sys.argv[1:]]
    rows = [r for r in ROWS if not only or any(o in r[0] for o in only)]
    results: dict[str, list[dict]] = {r[0]: [] for r in rows}
    base = Path(tempfile.mkdtemp(prefix="first_call-"))
    for p in range(PROCESSES):
        # one set of cache directories per repetition and API+kernel: cold fills them, warm reuses them
        dirs: dict = {}
        for name, api, kernel, caches, torch_ok in rows:
            key = (api, kernel)
            if caches == "cold" or key not in dirs:
                d = base / f"{p}-{api}-{kernel}-{len(dirs)}"
                dirs[key] = {"triton": str(d / "triton"), "xdg": str(d / "xdg")}
            before = {f: os.path.getmtime(f) for f in _choice_files(dirs[key]["xdg"])}
            r = _run(api, kernel, torch_ok, dirs[key])
            if kernel == "autotuned" and api == "trident.jax" and "stages" in r:
                after = {f: os.path.getmtime(f) for f in _choice_files(dirs[key]["xdg"])}
                r["benchmarked"] = not before or after != before   # a kept choice is read, not written again
            results[name].append(r)
    dev = next((r["device"] for rs in results.values() for r in rs if "device" in r), "?")
    import jax
    print(f"first_call {time.strftime('%Y-%m-%d')}: {dev}, jax {jax.__version__}, {PROCESSES} fresh processes per "
          f"row (medians), add of {N} fp32\n")
    stages = ["import", "backend", "lower", "compile", "execute", "first call", "process to result"]
    print("| row | " + " | ".join(stages) + " | torch imported | Triton driver initialised | note |")
    print("|---|" + "---|" * (len(stages) + 3))
    med: dict[str, dict] = {}
    for name, rs in results.items():
        ok = [r for r in rs if "stages" in r]
        if not ok:
            print(f"| {name} | " + " | ".join("-" for _ in stages) + f" | - | - | not run: "
                  f"{rs[0].get('error', '?') if rs else '?'} |")
            continue
        med[name] = {s: _median([r["stages"][s] for r in ok]) for s in stages}
        note = []
        if len(ok) < len(rs):
            note.append(f"{len(rs) - len(ok)} failed: {next(r['error'] for r in rs if 'error' in r)}")
        errs = max(r["max_err"] for r in ok)
        if errs > 1e-6:
            note.append(f"WRONG RESULT (max abs error {errs:.2e})")
        if any(r.get("not executed") for r in ok):
            note.append("CPU: lowered for sm90, not executed")
        if "benchmarked" in ok[0]:
            note.append("benchmarked" if any(r["benchmarked"] for r in ok) else "reused the kept choice")
        print(f"| {name} | " + " | ".join(f"{med[name][s]:.3f} s" for s in stages) +
              f" | {'yes' if any(r['torch imported'] for r in ok) else 'no'} | "
              f"{'yes' if any(r['triton driver initialised'] for r in ok) else 'no'} | {'; '.join(note)} |")
    print("\nWhere the time goes (median over processes of the seconds spent in each call; calls per process):\n")
    print("| row | call | seconds | calls |")
    print("|---|---|---|---|")
    for name, rs in results.items():
        ok = [r for r in rs if "calls" in r]
        labels = sorted({k for r in ok for k in r["calls"]})
        for k in sorted(labels, key=lambda k: -_median([r["calls"].get(k, [0, 0])[0] for r in ok])):
            print(f"| {name} | {k} | {_median([r['calls'].get(k, [0, 0])[0] for r in ok]):.4f} | "
                  f"{_median([r['calls'].get(k, [0, 0])[1] for r in ok])} |")
    # the goals, from the medians of this run
    print("\nGoals (this run):\n")

    def fc(n):
        return med.get(n, {}).get("first call")
    jnp_fc, jnp_nt = fc("jnp"), fc("jnp, no torch")
    checks = [
        ("1: warm first call <= 1.2x jnp (torch installed)", fc("trident.jax warm"), jnp_fc, 1.2),
        ("1: warm first call <= 1.2x jnp (no torch)", fc("trident.jax warm, no torch"), jnp_nt, 1.2),
        ("4: autotuned cold first call <= jax-triton's", fc("trident.jax autotuned (8) cold"),
         fc("jax-triton autotuned (8) cold"), 1.0),
        ("4: autotuned warm first call <= 1.2x jnp", fc("trident.jax autotuned (8) warm"), jnp_fc, 1.2),
    ]
    print("| goal | trident.jax | baseline | ratio | met |")
    print("|---|---|---|---|---|")
    for what, got, ref, limit in checks:
        if got is None or ref is None:
            print(f"| {what} | - | - | - | not measured |")
            continue
        print(f"| {what} | {got:.3f} s | {ref:.3f} s | {got / ref:.2f} | {'yes' if got <= limit * ref else 'NO'} |")
    cold = [r for r in results.get("trident.jax cold", []) if "calls" in r]
    if cold:
        # Triton's own compile: triton.compile and the key of its installation, which trident makes just before
        # (once, for threads compiling side by side) and Triton would make inside
        tc = _median([sum(r["calls"].get(k, [0, 0])[0] for k in ("triton.compile (Triton's own compile)",
                                                                  "triton_key (Triton hashes its installation)"))
                      for r in cold])
        got = fc("trident.jax cold")
        print(f"| 1: cold first call <= Triton's own compile + 0.3 s | {got:.3f} s | {tc:.3f} s + 0.3 s | "
              f"{got - tc:.3f} s over Triton | {'yes' if got <= tc + 0.3 else 'NO'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
