# SPDX-License-Identifier: Apache-2.0
"""The RECORD stage from JAX: where this jaxlib has it (FFI API 0.4 with the record extension, jaxlib 0.11.2 and
newer) and libtrident_xla was built with it, CUDA calls name the record target, whose launches XLA's command
buffer holds as kernel nodes; elsewhere they keep the target XLA captures. The GPU test runs
scripts/record-probe.py (a jitted chain on the same and on moved buffers, the record route on and off, every
result checked) and reads its verdict."""
import os
import re
import subprocess
import sys

import pytest

from conftest import SRC

from trident.jax import protocol


def test_record_status_and_target():
    """The CPU and ROCm platforms name the plain target; CUDA names the record target exactly when the record
    route is active, and says why where it is not."""
    platforms = protocol.register()
    on, why = protocol.record_status()
    assert protocol.target("cpu") == protocol.target("rocm") == protocol.TARGET
    assert protocol.target("cuda") == (protocol.TARGET_RECORD if on else protocol.TARGET)
    if "CUDA" not in platforms:
        assert (on, why) == (False, "the CUDA platform is not registered")
    else:
        assert on or why, "an inactive record route says why"


def test_recorded_chain_matches(gpu):
    """On the GPU: the chain's results are right with the record route on and off; with command buffers on and
    the route active, XLA made kernel nodes of trident's launches and updated them for moved buffers (no
    launch left to stream capture); with the route inactive, it names why."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in [str(SRC / "python"), os.environ.get("PYTHONPATH", "")] if p))
    r = subprocess.run([sys.executable, str(SRC / "scripts" / "record-probe.py")], env=env, capture_output=True,
                       text=True, timeout=1200)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    verdict = r.stdout.strip().splitlines()[-1]
    flags = os.environ.get("XLA_FLAGS", "")
    if re.search(r"--xla_gpu_enable_command_buffer=(\s|$)", flags):
        return   # no command buffers: nothing is recorded, the results above are the test
    on, why = protocol.record_status()
    if not on:
        assert verdict.startswith("record route: not available:"), r.stdout
        return
    m = re.match(r"record route: works \((\d+) kernel nodes created, (\d+) updated, (\d+) left to stream capture; "
                 r"XLA updated its command buffer (\d+) times", verdict)
    assert m, r.stdout
    created, updated, captured, xla_updates = map(int, m.groups())
    assert created >= 16 and captured == 0, r.stdout
    # the moved buffers: every node takes y, so each update XLA logs gives each node its new address (the results
    # on the moved buffers, checked above, say the same where XLA's log format is not the one read)
    assert updated >= 16 * xla_updates, r.stdout
