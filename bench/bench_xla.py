#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_xla: the cost of one kernel call inside jax.jit, on a GPU.

A jitted chain of 256 calls (BENCH_XLA_CHAIN) of a tiny Triton add (one
program of 1024 elements, 4 warps) through trident.jax.kernel_call (the
committed sm90 fixture), through trident.jax.triton_call (compiled from
source: for sm90 with PDL, triggering and waiting at its entry, as
trident.jax compiles it by default, trident/jax/pdl.py; `trident.jax-nopdl`
with TRIDENT_JAX_PDL=0, as Triton compiles it), through jax-triton (jaxlib's triton_kernel_call_ffi) when it is
importable, through `floor` (the same cubin launched by the least an FFI
handler can do, bench/ffi_floor.c: what any custom call costs; XLA's command
buffers stream-capture it), through `floor+record` (the same handler with the
least a RECORD-stage handler can do: one create_launch, one update_launch when
the buffers move; what any custom call recorded as a kernel node costs, and
the yardstick of trident's own record handler's update cost; with command
buffers off it is `floor`), through `floor+record+bundle` (floor+record's
call carrying the attribute trident's does, the kernel's bundle, which its
handler ignores: what XLA's handling of a call's attributes costs), through
`floor+record+pdl` (floor+record with the add made for PDL as trident.jax
makes it, recorded with uses_pdl: the yardstick of trident.jax's update cost,
as XLA joins such a node with PDL edges), through `floor+record+state`
(floor+record keeping the add's count in a per-call state of one cache line,
fetched with XLA_FFI_State_Get on each record: the least a handler that serves
many kernels, as trident's does, can do), and XLA's own
add (kept unfused with optimization_barrier); per-call time = chain time /
256, and the time until the jitted call returned (before its result is
ready). Then the same runs with inputs that move: each execution gets one of
20 input sets (BENCH_XLA_MOVING_SETS; more than XLA's trace cache holds), so
XLA must update every command of its command buffer (a kernel node's
arguments, or a custom call traced again) before each execution; a path's
update cost is its moving per-call time less its static one, compared with
XLA's own kernel's (floor+record's: the least any record handler's update
costs, the rest being XLA's own per-custom-call update work). With XLA's
command buffers (CUDA graphs) on and off:
XLA_FLAGS is read
at start-up, so each setting runs in fresh processes (3 each;
BENCH_XLA_PROCESSES). Inside a process
every path is compiled once and the paths' runs are interleaved (50 rounds,
the order rotated each round), so that clock and placement drift between
processes falls on every path alike; a path's figure is the median of its
runs, ratios are taken within a process, and the table reports the median
over processes.

    python3 bench/bench_xla.py            # prints a markdown table
    python3 bench/bench_xla.py --ncu      # the kernels' own GPU time (Nsight Compute), command buffers on
    python3 bench/bench_xla.py --updates  # XLA's own account of its command-buffer updates

--updates runs one child per path with XLA's command-buffer logging on and
reports what XLA says of its own updates: how often the command buffer was
updated (an allocation a command uses had moved since the last execution),
how many commands each update recorded again and skipped, and the time XLA
measured for each update. XLA updates its own kernels with new kernel-node
parameters and traces a custom call again (its handler under stream capture,
a new child graph); bench_graph's second table times both mechanisms alone.

--ncu runs one child per path under ncu (--clock-control none, caches kept,
every kernel node of the graphs profiled) and prints each kernel's median
gpu__time_duration and launch configuration: whether the gap between a custom
call and XLA's own add inside a command buffer is the kernel itself or how the
graph holds it (bench_graph measures the latter). The profiler runs the nodes
one at a time, so these are the kernels' durations, not the chain's.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def env_count(name: str, default: int) -> int:
    """A positive integer from the environment; exit 2 naming the variable otherwise (an empty or zero count would
    fail later as a traceback, or divide by zero)."""
    text = os.environ.get(name, str(default))
    if not (text.isascii() and text.isdigit()) or int(text) == 0:
        print(f"bench_xla: {name}={text!r} is not a positive integer", file=sys.stderr)
        sys.exit(2)
    return int(text)


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else None


CHAIN = env_count("BENCH_XLA_CHAIN", 256)   # calls per jitted chain
# inputs cycled by the moving run: more sets than XLA's trace cache holds (--xla_cmd_buffer_trace_cache_size, 16),
# so that a command XLA traces is traced again at every execution and a kernel node is updated at every execution
MOVING_SETS = env_count("BENCH_XLA_MOVING_SETS", 20)
RUNS = env_count("BENCH_XLA_RUNS", 50)
PROCESSES = env_count("BENCH_XLA_PROCESSES", 3)   # per setting
N = 1024
ALL_PATHS = ("trident", "trident.jax", "trident.jax-nopdl", "trident.jax+pdl", "jax-triton", "floor", "floor+record",
             "floor+record+bundle", "floor+record+pdl", "floor+record+state", "xla")
# --ncu's and --updates' children, one path each
CHILD_PATHS = ("trident", "floor", "floor+record", "floor+record+bundle", "xla", "trident.jax", "floor+record+pdl",
               "floor+record+state")
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
    elif which in ("jax-triton", "trident.jax", "trident.jax-nopdl"):
        # the same source and call through both packages: only the import differs (-nopdl: compiled with
        # TRIDENT_JAX_PDL=0, as Triton compiles it: trident/jax/pdl.py)
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
        if which != "jax-triton":   # the variable is read when the call is lowered: compiled now, as the path says
            from trident.jax import pdl
            before = os.environ.get(pdl.ENV)
            os.environ[pdl.ENV] = "0" if which == "trident.jax-nopdl" else "1"
            try:
                return jax.jit(chain).lower(sds, sds).compile()
            finally:   # the caller's value back
                if before is None:
                    del os.environ[pdl.ENV]
                else:
                    os.environ[pdl.ENV] = before
    elif which == "trident.jax+pdl":
        # the add made safe for programmatic dependent launch and compiled for it: whether a custom call's kernel
        # gets the overlap XLA gives its own kernels (each custom call is a child graph of its own)
        sys.path.insert(0, str(HERE))
        sys.path.insert(0, str(SRC / "python"))
        import trident.jax as tj
        import pdl_kernels

        def chain(x, y):
            for _ in range(CHAIN):
                x = tj.triton_call(x, y, N, kernel=pdl_kernels.add_out_pdl_kernel, out_shape=sds, grid=(1,),
                                   BLOCK=1024, num_warps=4, launch_pdl=True)
            return x
    elif which in ("floor", "floor+record", "floor+record+bundle", "floor+record+pdl", "floor+record+state"):
        # the same kernel through the least an FFI handler can do (bench/ffi_floor.c): the yardstick of what XLA
        # does for any custom call; floor+record adds the least a RECORD-stage handler can do (a kernel node of
        # XLA's command buffer, updated in place when the buffers move), the yardstick of trident's record handler;
        # +bundle passes the attribute trident's call carries, the kernel's bundle (which the handler ignores):
        # what XLA's handling of a call's attributes costs; +pdl records the add made for PDL as trident.jax makes
        # it (floor_load_pdl) with uses_pdl, the yardstick of trident.jax's record handler; +state keeps the add's
        # count in a state of one cache line per call (made at INSTANTIATE, fetched with XLA_FFI_State_Get on each
        # record): the least a record handler that serves many kernels, as trident's, can do
        lib = floor_lib()
        target = "bench_ffi_floor_add"
        if which != "floor":
            kind = {"floor+record+pdl": 1, "floor+record+state": 2}.get(which, 0)
            if kind == 1:
                floor_load_pdl(lib)
            if kind == 2:
                floor_state_type(lib)
            why = lib.ffi_floor_record_register(kind)
            if why is not None:
                raise RuntimeError(f"ffi_floor_record_register: {why.decode(errors='replace')}")
            target = ("bench_ffi_floor_add_record", "bench_ffi_floor_add_record_pdl",
                      "bench_ffi_floor_add_record_state")[kind]
        attrs = {}
        if which == "floor+record+bundle":
            sys.path.insert(0, str(SRC / "python"))
            import trident
            attrs["kernel"] = trident.Kernel(SRC / "tests" / "fixtures" / "triton" / "cuda" / "add_out").bundle()
        add = jax.ffi.ffi_call(target, sds)

        def chain(x, y):
            for _ in range(CHAIN):
                x = add(x, y, **attrs)
            return x
    else:
        def chain(x, y):
            for _ in range(CHAIN):
                x = jax.lax.optimization_barrier(x + y)
            return x
    return jax.jit(chain)


_floor_lib = []


def floor_lib():
    """bench/ffi_floor.c's module with the add kernel loaded and bench_ffi_floor_add registered on CUDA (whose
    metadata query gives the module XLA's API table, for ffi_floor_record_register): once a process."""
    if _floor_lib:
        return _floor_lib[0]
    import ctypes
    import jax
    lib = ctypes.CDLL(str(floor_module()))
    lib.ffi_floor_record_register.restype, lib.ffi_floor_record_register.argtypes = ctypes.c_char_p, [ctypes.c_int]
    jax.devices()  # XLA's client first: the module goes into its (primary) context
    cubin = SRC / "tests" / "fixtures" / "triton" / "cuda" / "add_out" / "add_out_kernel.cubin"
    rc = lib.ffi_floor_load(str(cubin).encode(), b"add_out_kernel", N, 4, 0)
    if rc:
        why = {-1: "no libcuda.so.1, or the cubin cannot be read", -2: "loaded already (its registration failed "
               "after the load)"}.get(rc, f"CUresult {rc}")
        raise RuntimeError(f"ffi_floor_load({cubin}): {why}")
    jax.ffi.register_ffi_target("bench_ffi_floor_add", jax.ffi.pycapsule(lib.ffi_floor_add), platform="CUDA")
    _floor_lib.append(lib)
    return lib


def floor_load_pdl(lib) -> None:
    """Loads the PDL image of the floor's add into the module (once a process): the fixture's PTX with the prologue
    trident.jax puts first in sm90 kernels (trident/jax/pdl.py's patch_ptx: trigger, then wait), assembled by
    Triton's ptxas for sm_90a."""
    if _floor_lib_pdl:
        return
    import tempfile
    sys.path.insert(0, str(SRC / "python"))
    from triton import knobs
    from trident.jax import pdl
    ptx = (SRC / "tests" / "fixtures" / "triton" / "cuda" / "add_out" / "add_out_kernel.ptx").read_text()
    with tempfile.TemporaryDirectory() as d:
        src, cubin = Path(d) / "add_out_pdl.ptx", Path(d) / "add_out_pdl.cubin"
        src.write_text(pdl.patch_ptx(ptx))
        r = subprocess.run([knobs.nvidia.ptxas.path, "--gpu-name", "sm_90a", str(src), "-o", str(cubin)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ptxas of the PDL add: {r.stderr.strip()[-300:]}")
        rc = lib.ffi_floor_load_pdl(str(cubin).encode(), b"add_out_kernel")
    if rc:
        raise RuntimeError(f"ffi_floor_load_pdl: {'cannot read the cubin' if rc == -1 else f'rc {rc}'}")
    _floor_lib_pdl.append(True)


_floor_lib_pdl = []


def floor_state_type(lib) -> None:
    """Registers the floor's state type on CUDA (XLA's registry numbers it), once a process."""
    if _floor_state:
        return
    import ctypes
    import jax
    for fn in (lib.ffi_floor_state_type_id, lib.ffi_floor_state_type_info):
        fn.restype, fn.argtypes = ctypes.c_void_p, []
    jax.ffi.register_ffi_type("bench_ffi_floor_state",
                              {"type_id": jax.ffi.pycapsule(ctypes.c_void_p(lib.ffi_floor_state_type_id())),
                               "type_info": jax.ffi.pycapsule(ctypes.c_void_p(lib.ffi_floor_state_type_info()))},
                              platform="CUDA")
    _floor_state.append(True)


_floor_state = []


def floor_module() -> Path:
    """bench/.libs/ffi_floor.so of the build tree (TRD_BUILDDIR, else build/ in the source tree)."""
    build = Path(os.environ.get("TRD_BUILDDIR", SRC / "build"))
    path = build / "bench" / ".libs" / "ffi_floor.so"
    if not path.exists():
        raise FileNotFoundError(f"{path}: build with CUDA and XLA (the floor paths' module)")
    return path


def child() -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    x = jnp.asarray(np.random.default_rng(0).uniform(-1, 1, N).astype(np.float32))
    y = jnp.asarray(np.random.default_rng(1).uniform(-1, 1, N).astype(np.float32))
    sds = jax.ShapeDtypeStruct(x.shape, x.dtype)
    want = np.asarray(x) + CHAIN * np.asarray(y)  # the chain adds y CHAIN times
    # the moving run: each execution gets inputs at other addresses (y feeds every call of the chain, so every
    # command of the command buffer must be updated); each set's result is checked once
    sets = [(jnp.asarray(np.random.default_rng(10 + 2 * i).uniform(-1, 1, N).astype(np.float32)),
             jnp.asarray(np.random.default_rng(11 + 2 * i).uniform(-1, 1, N).astype(np.float32)))
            for i in range(MOVING_SETS)]
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
    for which, f in fns.items():
        for sx, sy in sets:
            got = np.asarray(f(sx, sy))
            err = float(np.max(np.abs(got - (np.asarray(sx) + CHAIN * np.asarray(sy)))))
            max_err[which] = max(max_err[which], err)
    times = {w: [] for w in fns}
    moving = {w: [] for w in fns}
    dispatch = {w: [] for w in fns}
    order = list(fns)
    for r in range(RUNS if order else 0):
        for which in order[r % len(order):] + order[:r % len(order)]:
            t0 = time.perf_counter()
            out = fns[which](x, y)
            t1 = time.perf_counter()  # the jitted call returned (JAX dispatches asynchronously: not yet ready)
            out.block_until_ready()
            times[which].append((time.perf_counter() - t0) / CHAIN * 1e6)
            dispatch[which].append((t1 - t0) / CHAIN * 1e6)
            del out
    # after the static rounds (whose inputs must stay put), the same interleaving with inputs that move
    for r in range(RUNS if order else 0):
        for which in order[r % len(order):] + order[:r % len(order)]:
            sx, sy = sets[r % len(sets)]
            t0 = time.perf_counter()
            fns[which](sx, sy).block_until_ready()
            moving[which].append((time.perf_counter() - t0) / CHAIN * 1e6)
    return {"median_us": {w: median(t) for w, t in times.items()},
            "moving_us": {w: median(t) for w, t in moving.items()},
            "dispatch_us": {w: median(t) for w, t in dispatch.items()}, "max_abs_err": max_err, "errors": errors,
            "device": str(jax.devices()[0])}


NCU_LAUNCH = ("launch__grid_size", "launch__block_size", "launch__registers_per_thread",
              "launch__shared_mem_per_block_dynamic", "launch__shared_mem_config_size")


def ncu() -> int:
    """Each kernel's GPU time (command buffers on), measured by Nsight Compute: one child per path, so that every
    profiled kernel is that path's (in one child the first path's launches would fill the profiled count). Caches
    are not flushed between kernels (--cache-control none), as in the chain, where each kernel reads what the one
    before it wrote; with the launch configuration each node was given (whether two paths launch the same kernel
    the same way)."""
    import collections
    import csv
    import io
    import shutil
    tool = shutil.which("ncu")
    if tool is None:
        print("SKIP: bench_xla --ncu: no ncu on PATH")
        return 77
    print("bench_xla --ncu: each kernel's GPU time (gpu__time_duration, Nsight Compute, command buffers on, caches "
          "kept; one child per path, its first 64 kernel launches skipped) and launch configuration (the most common "
          "value)\n")
    print("| path | kernel | profiled | median | min | grid | block | registers | dynamic shared | shared config |\n"
          "|---|---|---|---|---|---|---|---|---|---|")
    rc = 0
    for path in CHILD_PATHS:
        env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", BENCH_XLA_RUNS="2", BENCH_XLA_PATHS=path)
        cmd = [tool, "--clock-control", "none", "--cache-control", "none", "--graph-profiling", "node", "--metrics",
               ",".join(("gpu__time_duration.sum",) + NCU_LAUNCH), "--launch-skip", "64", "--launch-count", "300",
               "--csv", "--page", "raw", sys.executable, __file__, "--child"]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        rows = [ln for ln in r.stdout.splitlines() if ln.startswith('"')]
        if r.returncode != 0 or not rows:
            tail = [ln for ln in (r.stderr or r.stdout).strip().splitlines() if "==PROF==" not in ln][-3:]
            print(f"| {path} | ncu failed (rc {r.returncode}): {tail} | | | | | | | | |")
            rc = 1
            continue
        table = list(csv.DictReader(io.StringIO("\n".join(rows))))
        by: dict[str, list[dict]] = {}
        for row in table:
            v = row.get("gpu__time_duration.sum", "").replace(",", "")
            if v.replace(".", "", 1).isdigit():
                by.setdefault(row.get("Kernel Name", "?")[:60], []).append(row)
        for name, got in sorted(by.items()):
            t = sorted(float(g["gpu__time_duration.sum"].replace(",", "")) for g in got)
            launch = [collections.Counter(g.get(m, "?") for g in got).most_common(1)[0][0] for m in NCU_LAUNCH]
            print(f"| {path} | {name} | {len(t)} | {t[len(t) // 2]:.0f} ns | {t[0]:.0f} ns | {' | '.join(launch)} |")
    return rc


def updates() -> int:
    """What XLA logs of its command buffers (TF_CPP_VMODULE), one child per path: executions, recordings and
    updates with the times XLA measured for them. The logging slows the runs, so no time of this program's own is
    a figure here."""
    import re
    pats = {
        "warmup": re.compile(r"Executing warm up iteration"),
        "exec": re.compile(r"Execute command buffer"),
        "first": re.compile(r"(?:Initialized|Recorded) command buffer(?: on device #\d+)? in (\d+)"),
        "update": re.compile(r"Updated command buffer in (\d+) \S+; num_commands=(\d+)"),
        "needs": re.compile(r"needs_update=1"),
        "allocs": re.compile(r"updated_allocs=(\d+)(?!.*is_first_record=1)"),
        "cmds": re.compile(r"Updated (\d+) commands in (\d+) \S+ \(skipped (\d+) command updates\)"),
    }
    print("bench_xla --updates: XLA's log of its command buffers (command_buffer_thunk at level 3, the command "
          f"executor at level 1), {RUNS} timed runs + 6 warm-up calls of the {CHAIN}-chain per path (a warm-up "
          "execution: XLA ran the command buffer's thunks one by one, as it may the first time)\n")
    print("| path | warm-up executions | command-buffer executions | recordings (XLA's time) | updates | allocations "
          "moved (median) | commands recorded again / skipped (median) | XLA's update time (median) | per command "
          "recorded again |\n|---|---|---|---|---|---|---|---|---|")
    rc = 0
    blank = " | | | | | | | |"
    for path in CHILD_PATHS:
        env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", BENCH_XLA_PATHS=path, TF_CPP_MIN_LOG_LEVEL="0",
                   TF_CPP_VMODULE="command_buffer_thunk=3,command_executor=1,command_buffer_cmd=1,"
                                  "command_buffer_cmd_executor=1")
        r = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, timeout=900)
        out = r.stdout.strip().splitlines()
        if r.returncode != 0 or not out:
            print(f"| {path} | child failed (rc {r.returncode}): {r.stderr.strip().splitlines()[-1:]}{blank}")
            rc = 1
            continue
        res = json.loads(out[-1])
        if path in res["errors"]:
            print(f"| {path} | not run: {res['errors'][path]}{blank}")
            rc = 1
            continue
        found = {k: [m for m in map(p.search, r.stderr.splitlines()) if m] for k, p in pats.items()}
        if not found["exec"]:
            sample = [ln for ln in r.stderr.splitlines() if "command buffer" in ln.lower()][:3]
            print(f"| {path} | XLA logged no command-buffer execution (log lines seen: {sample}){blank}")
            rc = 1
            continue
        first = ", ".join(f"{m.group(1)} us" for m in found["first"]) or "-"
        upd_us = [int(m.group(1)) for m in found["update"]]
        again = [int(m.group(1)) - int(m.group(3)) for m in found["cmds"]]
        skipped = [int(m.group(3)) for m in found["cmds"]]
        allocs = [int(m.group(1)) for m in found["allocs"]]
        per = (f"{median(upd_us) / median(again):.3f} us" if upd_us and again and median(again) else "-")
        upd_time = f"{median(upd_us)} us" if upd_us else "-"
        print(f"| {path} | {len(found['warmup'])} | {len(found['exec'])} | {len(found['first'])} ({first}) | "
              f"{max(len(found['needs']), len(found['update']))} | {median(allocs) if allocs else '-'} | "
              f"{median(again) if again else '-'} / {median(skipped) if skipped else '-'} | {upd_time} | {per} |")
    return rc


def main():
    unknown = [p for p in PATHS if p not in ALL_PATHS]
    if unknown:  # an unknown name would otherwise be benchmarked as XLA's add under that name
        print(f"bench_xla: BENCH_XLA_PATHS={os.environ.get('BENCH_XLA_PATHS')!r}: {', '.join(map(repr, unknown))} "
              f"is not one of {', '.join(ALL_PATHS)}", file=sys.stderr)
        sys.exit(2)
    if len(sys.argv) > 1 and sys.argv[1] == "--ncu":
        sys.exit(ncu())
    if len(sys.argv) > 1 and sys.argv[1] == "--updates":
        sys.exit(updates())
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
            out = r.stdout.strip().splitlines()
            if r.returncode != 0 or not out:
                lines = [ln for ln in r.stderr.splitlines() if "Error" in ln] or r.stderr.strip().splitlines()
                failures.setdefault(cb, []).append((lines or ["failed"])[-1][:200])
                continue
            runs[cb].append(json.loads(out[-1]))
    print(f"bench_xla {time.strftime('%Y-%m-%d')}: jitted chain of {CHAIN} calls of a {N}-element add; per process "
          f"the median of {RUNS} interleaved runs per path; {PROCESSES} processes per setting")
    dev = next((r["device"] for rs in runs.values() for r in rs), "?")
    print(f"device: {dev}")
    for cb, whys in failures.items():
        for why in whys:
            print(f"a child with command buffers {cb} failed: {why}")
    print(f"processes that ran: command buffers on {len(runs['on'])}, off {len(runs['off'])}")
    print()
    print("| command buffers | path | per call (median of processes) | per process | returned after, per call | "
          "vs xla | vs jax-triton | inputs moving: per call | update cost a call | vs xla's | max abs error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")

    def ratio(cb, which, base):  # the median of the per-process ratios
        v = [r["median_us"][which] / r["median_us"][base] for r in runs[cb]
             if which in r["median_us"] and base in r["median_us"]]
        return f"{median(v):.2f}" if v else "-"

    def update_cost(r, which):  # what moving inputs add to a call: XLA updating (or tracing again) its commands
        return r["moving_us"][which] - r["median_us"][which]

    def update_ratio(cb, which):  # the median of the per-process ratios of update costs
        v = [update_cost(r, which) / update_cost(r, "xla") for r in runs[cb]
             if which in r["moving_us"] and "xla" in r["moving_us"] and update_cost(r, "xla") > 0]
        return f"{median(v):.2f}" if v else "-"

    for cb in ("on", "off"):
        if not runs[cb]:
            print(f"| {cb} | - | - | - | - | - | - | - | - | - | not run: {(failures.get(cb) or ['?'])[-1]} |")
            continue
        for which in PATHS:
            per = [r["median_us"][which] for r in runs[cb] if which in r["median_us"]]
            if not per:
                why = next((r["errors"][which] for r in runs[cb] if which in r["errors"]), "?")
                print(f"| {cb} | {which} | - | - | - | - | - | - | - | - | not run: {why} |")
                continue
            err = max(r["max_abs_err"][which] for r in runs[cb] if which in r["max_abs_err"])
            disp = median([r["dispatch_us"][which] for r in runs[cb] if which in r["dispatch_us"]])
            mov = median([r["moving_us"][which] for r in runs[cb] if which in r["moving_us"]])
            upd = median([update_cost(r, which) for r in runs[cb] if which in r["moving_us"]])
            print(f"| {cb} | {which} | {median(per):.2f} us | {' '.join(f'{v:.2f}' for v in per)} | {disp:.2f} us | "
                  f"{ratio(cb, which, 'xla')} | {ratio(cb, which, 'jax-triton')} | {mov:.2f} us | {upd:.2f} us | "
                  f"{update_ratio(cb, which)} | {err:.2e} |")


if __name__ == "__main__":
    main()
