# SPDX-License-Identifier: Apache-2.0
"""Several devices in one JAX program (issue 8): each device loads its own
module and runs its shard. Without several GPUs: two host-driver devices under
two XLA CPU devices, and (on a GPU machine) one GPU and the host in one program.
The multi-GPU cases skip with the reason where fewer than two GPUs exist."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import jax
import pytest

from conftest import PACKAGE_ROOT, SRC, kernel

SHARD_MAP = textwrap.dedent("""
    import jax, jax.numpy as jnp, numpy as np, sys
    from functools import partial
    sys.path.insert(0, sys.argv[1])
    import trident.jax as tj
    from conftest import kernel
    from jax.sharding import Mesh, PartitionSpec as P
    try:
        from jax import shard_map
    except ImportError:
        from jax.experimental.shard_map import shard_map
    devs = jax.devices(sys.argv[2]) if sys.argv[2] != "default" else jax.devices()
    ndev = int(sys.argv[3])
    assert len(devs) >= ndev, devs
    mesh = Mesh(np.array(devs[:ndev]), ("d",))
    n = 4096 * ndev
    rng = np.random.default_rng(7)
    x = jnp.asarray(rng.uniform(-1, 1, n).astype(np.float32))
    y = jnp.asarray(rng.uniform(-1, 1, n).astype(np.float32))

    def local(x, y):
        m = x.shape[0]
        sds = jax.ShapeDtypeStruct(x.shape, x.dtype)
        s, d = tj.kernel_call(kernel("sum_diff_kernel"), x, y, m, grid=(m + 255) // 256, out_shape=(sds, sds))
        return s, d

    f = jax.jit(shard_map(local, mesh=mesh, in_specs=(P("d"), P("d")), out_specs=(P("d"), P("d"))))
    for _ in range(3):
        s, d = f(x, y)
    assert np.array_equal(np.asarray(s), np.asarray(x) + np.asarray(y))
    assert np.array_equal(np.asarray(d), np.asarray(x) - np.asarray(y))
    print("shards ok", [str(d) for d in devs[:ndev]])
""")


def _run(script, args, env_extra):
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, XLA_PYTHON_CLIENT_PREALLOCATE="false", **env_extra)
    return subprocess.run([sys.executable, "-c", script, str(SRC / "python" / "tests"), *args], env=env,
                          capture_output=True, text=True, timeout=600)


def test_two_host_devices_under_shard_map():
    """Two XLA CPU devices map onto two host-driver devices, each loading its own module."""
    kernel("sum_diff_kernel")   # the child's kernel: skips here, visibly, where its host twin is not built
    r = _run(SHARD_MAP, ["cpu", "2"], {"JAX_PLATFORMS": "cpu", "TRIDENT_DRIVER_HOST_DEVICES": "2",
                                       "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "TRIDENT_LOG": "info"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert "shards ok" in r.stdout
    # each device loaded the kernel itself: per-device state, nothing shared across devices
    assert "loaded kernel 'sum_diff_kernel' on host:0" in r.stderr, r.stderr[-2000:]
    assert "loaded kernel 'sum_diff_kernel' on host:1" in r.stderr, r.stderr[-2000:]


@pytest.mark.skipif(jax.default_backend() == "cpu", reason="needs a GPU (JAX's default backend is cpu)")
def test_gpu_and_host_in_one_program():
    """One bundle, two devices of two vendors' drivers in one process: the GPU runs the
    Triton image, the CPU computation the host twin."""
    kernel("sum_diff_kernel")
    script = textwrap.dedent("""
        import jax, jax.numpy as jnp, numpy as np, sys
        sys.path.insert(0, sys.argv[1])
        import trident.jax as tj
        from conftest import kernel
        n = 10000
        x = np.random.default_rng(3).uniform(-1, 1, n).astype(np.float32)
        y = np.random.default_rng(4).uniform(-1, 1, n).astype(np.float32)
        def f(x, y):
            sds = jax.ShapeDtypeStruct(x.shape, x.dtype)
            return tj.kernel_call(kernel("sum_diff_kernel"), x, y, n, grid=(n + 255) // 256, out_shape=(sds, sds))
        outs = []
        for dev in (jax.devices("cpu")[0], jax.devices()[0]):
            xs, ys = jax.device_put(x, dev), jax.device_put(y, dev)
            s, d = jax.jit(f)(xs, ys)
            assert list(s.devices())[0] == dev
            outs.append((np.asarray(s), np.asarray(d)))
        for s, d in outs:
            assert np.array_equal(s, x + y) and np.array_equal(d, x - y)
        print("gpu and host ok")
    """)
    r = _run(script, [], {"TRIDENT_LOG": "info"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert "gpu and host ok" in r.stdout
    assert "on host:0" in r.stderr and "on cuda:0" in r.stderr, r.stderr[-2000:]


def _gpus():
    try:
        return [d for d in jax.devices() if d.platform == "gpu"]
    except RuntimeError:
        return []


@pytest.mark.skipif(len(_gpus()) < 2, reason="needs 2 or more GPUs")
def test_shard_map_over_gpus():
    ngpu = len(_gpus())
    r = _run(SHARD_MAP, ["gpu", str(ngpu)], {"TRIDENT_LOG": "info"})
    assert r.returncode == 0, r.stderr[-3000:]
    for i in range(ngpu):
        assert f"loaded kernel 'sum_diff_kernel' on cuda:{i}" in r.stderr


DISTRIBUTED = textwrap.dedent("""
    import jax, jax.numpy as jnp, numpy as np, os, sys
    sys.path.insert(0, sys.argv[1])
    pid, nproc, port = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=nproc, process_id=pid,
                               local_device_ids=[pid])
    import trident.jax as tj
    from conftest import kernel
    n = 8192
    rng = np.random.default_rng(100 + pid)
    x = jnp.asarray(rng.uniform(-1, 1, n).astype(np.float32))
    y = jnp.asarray(rng.uniform(-1, 1, n).astype(np.float32))
    sds = jax.ShapeDtypeStruct(x.shape, x.dtype)
    s, d = jax.jit(lambda x, y: tj.kernel_call(kernel("sum_diff_kernel"), x, y, n, grid=n // 256,
                                               out_shape=(sds, sds)))(x, y)
    assert np.array_equal(np.asarray(s), np.asarray(x) + np.asarray(y))
    print(f"process {pid} ok on {jax.local_devices()[0]}")
""")


@pytest.mark.skipif(len(_gpus()) < 2, reason="needs 2 or more GPUs")
def test_one_process_per_gpu_with_jax_distributed():
    ngpu = len(_gpus())
    port = str(20000 + os.getpid() % 10000)
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    procs = [subprocess.Popen([sys.executable, "-c", DISTRIBUTED, str(SRC / "python" / "tests"), str(i), str(ngpu),
                               port], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(ngpu)]
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        assert f"process {i} ok" in out
