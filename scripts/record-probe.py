#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""record-probe: does XLA put trident's launches into its command buffer as kernel nodes (the RECORD stage)?

On a CUDA GPU with JAX: a jitted chain of 16 trident calls (a Triton add, y added to x each time) runs 4 times
on the same buffers and 3 times on new ones (XLA then updates its command buffer for the moved parameters),
every result checked against NumPy, in fresh processes: the record route on (trident.jax's default where
jaxlib has the RECORD stage) and off (TRIDENT_XLA_RECORD=0: XLA captures EXECUTE into a child graph), command
buffers on. From each process's own log (TRIDENT_LOG=debug, XLA's command-buffer logging) it counts what XLA
asked of the record handler and what XLA did, and ends with one verdict line:

    record route: works (N kernel nodes created, M updated, 0 re-traced)
    record route: XLA never called the record handler ...   (where XLA drops it)
    record route: not available: <why>                      (jaxlib older than 0.11.2, a build without it)

    python3 scripts/record-probe.py          # exit 1 when a result is wrong or a process fails
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import triton
import triton.language as tl

SRC = Path(__file__).resolve().parent.parent
CHAIN = 16
N = 4099   # elements: 5 programs of 1024, the last one partial


@triton.jit
def add_kernel(x_ptr, y_ptr, n, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def child() -> None:
    sys.path.insert(0, str(SRC / "python"))
    import jax
    import jax.numpy as jnp
    import numpy as np

    import trident.jax as jt
    from trident._lib import xla_lib
    from trident.jax import protocol

    def chain(x, y):
        for _ in range(CHAIN):
            x = jt.triton_call(x, y, N, kernel=add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                               grid=(triton.cdiv(N, 1024),), BLOCK=1024)
        return x

    f = jax.jit(chain)
    rng = np.random.default_rng(7)
    x, y = (rng.standard_normal(N).astype(np.float32) for _ in range(2))
    hlo = f.lower(jnp.asarray(x), jnp.asarray(y)).as_text()
    targets = sorted({a or b for a, b in re.findall(r'custom_call_target="([^"]+)"|custom_call @([\w.$]+)', hlo)})
    wrong = 0
    runs = [(x, y)] * 4 + [tuple(rng.standard_normal(N).astype(np.float32) for _ in range(2)) for _ in range(3)]
    for i, (a, b) in enumerate(runs):
        got = np.asarray(f(jnp.asarray(a), jnp.asarray(b)))   # new device arrays: new buffers from run 4 on
        want = a.copy()
        for _ in range(CHAIN):
            want = want + b
        if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
            wrong += 1
            print(f"record-probe: run {i}: {int(np.sum(~np.isclose(got, want, rtol=1e-5, atol=1e-5)))} of {N} "
                  "elements wrong", file=sys.stderr)
    on, why = protocol.record_status()
    import jaxlib
    print(json.dumps({"jax": jax.__version__, "jaxlib": jaxlib.__version__, "ffi_built": xla_lib().trd_xla_ffi_version()
                      if hasattr(xla_lib(), "trd_xla_ffi_version") else None,
                      "record": on, "why": why, "targets": targets, "wrong": wrong, "runs": len(runs)}))


COUNTS = {
    "created": re.compile(r"record: kernel .* recorded as a kernel node"),
    "updated": re.compile(r"record: kernel .*: kernel node updated"),
    "captured": re.compile(r"record: kernel .*; XLA captures its stream instead"),
    "xla_exec": re.compile(r"Execute command buffer"),
    "xla_record": re.compile(r"(?:Initialized|Recorded) command buffer"),
    "xla_update": re.compile(r"Updated command buffer in"),
}


def run(label: str, extra: dict) -> tuple[dict, dict, list]:
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", TRIDENT_LOG="debug", TF_CPP_MIN_LOG_LEVEL="0",
               TF_CPP_VMODULE="command_buffer_thunk=3,command_executor=1,command_buffer_cmd=1,"
                              "command_buffer_cmd_executor=1", **extra)
    r = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout.strip().splitlines()
    if r.returncode != 0 or not out:
        print(f"record-probe: {label}: the process failed (rc {r.returncode}):\n{r.stderr[-3000:]}", file=sys.stderr)
        return {}, {}, []
    lines = r.stderr.splitlines()
    counts = {k: sum(1 for ln in lines if p.search(ln)) for k, p in COUNTS.items()}
    reasons = sorted({ln[ln.find("record: "):][:200] for ln in lines if COUNTS["captured"].search(ln)})[:3]
    return json.loads(out[-1]), counts, reasons


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child()
        return 0
    rc = 0
    print("| record route | custom-call target | results | record handler: created / updated / captured | "
          "XLA: executions / recordings / updates |\n|---|---|---|---|---|")
    verdict = None
    for label, extra in (("on", {"TRIDENT_XLA_RECORD": "1"}), ("off (TRIDENT_XLA_RECORD=0)", {"TRIDENT_XLA_RECORD": "0"})):
        res, c, reasons = run(label, extra)
        if not res:
            print(f"| {label} | - | process failed | - | - |")
            rc = 1
            continue
        ok = "all right" if not res["wrong"] else f"{res['wrong']} of {res['runs']} runs wrong"
        rc |= bool(res["wrong"])
        print(f"| {label} ({'active' if res['record'] else 'inactive: ' + res['why']}) | {', '.join(res['targets'])} "
              f"| {ok} | {c['created']} / {c['updated']} / {c['captured']} | {c['xla_exec']} / {c['xla_record']} / "
              f"{c['xla_update']} |")
        if label == "on":
            head = f"jax {res['jax']}, jaxlib {res['jaxlib']}, libtrident_xla built against FFI API " \
                   f"0.{res['ffi_built'] % 1000 if res['ffi_built'] is not None else '?'}"
            if not res["record"]:
                verdict = f"record route: not available: {res['why']} ({head})"
            elif c["created"]:
                verdict = (f"record route: works ({c['created']} kernel nodes created, {c['updated']} updated, "
                           f"{c['captured']} left to stream capture; XLA updated its command buffer "
                           f"{c['xla_update']} times; {head})")
            elif c["captured"]:
                verdict = f"record route: XLA called the record handler, which fell back to capture: {reasons} ({head})"
            else:
                verdict = (f"record route: XLA never called the record handler: {', '.join(res['targets'])} was "
                           f"registered through the CUDA plugin's XLA_FFI_Handler_Register with a record handler, "
                           f"compiled into the program and executed {c['xla_exec']} times in command buffers, and no "
                           f"RECORD stage reached trident ({head})")
    print()
    print(verdict or "record route: unknown (the record-route process failed)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
