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


def _must_record(version: str) -> bool:
    """Whether a jaxlib of this version has the RECORD stage with its record extension: a release from 0.11.2 on
    (0.11.2.post1, 0.12.0.1, 0.11.3.dev...), not a pre-release of 0.11.2 (0.11.2.dev..., 0.11.2rc1: PEP 440 puts
    them before 0.11.2, and a nightly may predate the extension)."""
    from packaging.version import InvalidVersion, Version   # pytest's own dependency
    try:
        return Version(version) >= Version("0.11.2")
    except InvalidVersion:
        return False


def test_must_record_reads_the_jaxlib_version(monkeypatch):
    """The GPU test's judgement of a probe that found no record route: a jaxlib release from 0.11.2 on must have
    it; a pre-release of 0.11.2 (a nightly built before the RECORD stage came) need not. The probe runs its
    record-route process with TRIDENT_XLA_RECORD=1 whatever this process's value, so that value excuses nothing."""
    for v in ("0.11.2", "0.11.2.post1", "0.11.2+cuda12", "0.11.3.dev20251201", "0.11.10", "0.12", "0.12.0.1", "1.0.0"):
        assert _must_record(v), v
    for v in ("0.11.2.dev20251201", "0.11.2rc1", "0.11.2a0", "0.11.1", "0.11", "0.10.2", "0.9.9", "unknown"):
        assert not _must_record(v), v
    monkeypatch.setenv("TRIDENT_XLA_RECORD", "0")
    assert _must_record("0.12.0")


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
    if verdict.startswith("record route: not available:"):
        # the probe's own process says why (its table); a jaxlib with the RECORD stage must have it (the probe
        # runs that process with TRIDENT_XLA_RECORD=1, whatever this one's; this process's status is not asked: a
        # lone xdist worker that lowered no call yet once read it as off while the probe's route worked)
        import jaxlib
        assert not _must_record(jaxlib.__version__), r.stdout
        return
    m = re.match(r"record route: works \((\d+) kernel nodes created, (\d+) updated, (\d+) left to stream capture; "
                 r"XLA updated its command buffer (\d+) times", verdict)
    assert m, r.stdout
    created, updated, captured, xla_updates = map(int, m.groups())
    assert created >= 16 and captured == 0, r.stdout
    # the moved buffers: every node takes y, so each update XLA logs gives each node its new address (the results
    # on the moved buffers, checked above, say the same where XLA's log format is not the one read)
    assert updated >= 16 * xla_updates, r.stdout


def _floor_module():
    """bench/ffi_floor.c's module (bench_xla's floor paths) in the build tree, or skips saying why."""
    from conftest import BUILD
    path = BUILD / "bench" / ".libs" / "ffi_floor.so"
    if not path.exists():
        pytest.skip(f"{path} is not built (a build with CUDA and XLA makes it)")
    return path


def test_bench_floor_record_register_needs_the_table_first():
    """bench_xla's floor+record target is registered through the API table ffi_floor_add's metadata query keeps:
    before any registration the register function says so instead of registering (or crashing)."""
    import ctypes
    lib = ctypes.CDLL(str(_floor_module()))
    fn = lib.ffi_floor_record_register
    fn.restype, fn.argtypes = ctypes.c_char_p, [ctypes.c_int]
    for which in (0, 1, 2):
        why = fn(which)
        assert why is not None
        why = why.decode()
        assert why.startswith("no API table yet") or "no RECORD stage" in why, why
    # the PDL image goes with the add's count and launch: after the first image only
    assert lib.ffi_floor_load_pdl(str(SRC / "no-such.cubin").encode(), b"add_out_kernel") == -3
    assert lib.ffi_floor_load(str(SRC / "no-such.cubin").encode(), b"add_out_kernel", 1024, 4, 0) == -1


def test_bench_floor_record_chain_matches(gpu):
    """On the GPU: bench_xla's floor, floor+record, floor+record+pdl and floor+record+state paths (the least an FFI
    handler and the least a record handler can do, the latter also for the add made for PDL and with a state per
    call) give the chain's right results, also on inputs that move between executions (for
    floor+record: XLA's kernel nodes updated by update_launch). floor+record needs the RECORD stage: where this
    jaxlib or the module's header lacks it, the path says why and the test skips."""
    import json
    _floor_module()
    from conftest import BUILD
    env = dict(os.environ, BENCH_XLA_PATHS="floor,floor+record,floor+record+pdl,floor+record+state,xla", BENCH_XLA_CHAIN="16",
               BENCH_XLA_RUNS="2",
               XLA_PYTHON_CLIENT_PREALLOCATE="false", TRD_BUILDDIR=str(BUILD))
    r = subprocess.run([sys.executable, str(SRC / "bench" / "bench_xla.py"), "--child"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert "floor" not in res["errors"], res["errors"]
    if "no RECORD stage" in res["errors"].get("floor+record", ""):
        pytest.skip(f"floor+record: {res['errors']['floor+record']}")
    for path in ("floor+record", "floor+record+pdl", "floor+record+state"):
        assert path not in res["errors"], res["errors"]
    for path in ("floor", "floor+record", "floor+record+pdl", "floor+record+state", "xla"):
        assert res["max_abs_err"][path] < 1e-4, res["max_abs_err"]
