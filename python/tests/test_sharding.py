# SPDX-License-Identifier: Apache-2.0
"""Sharded arrays (issue 29): calls with a sharding_rule partition themselves under jax.jit. On 8 XLA CPU devices
over 8 host-driver devices (a child process: JAX's device count is fixed when it starts), each case runs under
jax.jit over sharded operands (sharding_cases.py) and is checked here: every output element equal to the unsharded
call's, the result's sharding, no gathering collective in the compiled HLO, each device loading its own module.
On a GPU machine the same cases run over the GPUs JAX has (a one-GPU mesh on one GPU)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import trident.jax as jt
from conftest import PACKAGE_ROOT, SRC, host_kernel_path

NDEV = 8
TESTS = str(SRC / "python" / "tests")


def _children(platform, ndev, env_extra):
    # a cache directory of its own: an autotuning choice another run left on disk would be taken from there
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PACKAGE_ROOT, TESTS]), XLA_PYTHON_CLIENT_PREALLOCATE="false",
               TRIDENT_LOG="info", TRIDENT_CACHE_DIR=tempfile.mkdtemp(prefix="trident-sharding-"), **env_extra)
    r = subprocess.run([sys.executable, os.path.join(TESTS, "sharding_cases.py"), platform, str(ndev)], env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    results = {}
    for line in r.stdout.splitlines():
        if line.startswith("CASE "):
            res = json.loads(line[5:])
            results[res["case"]] = res
    return results, r.stderr


@pytest.fixture(scope="module")
def cpu_cases():
    for name in ("add_kernel", "matmul_kernel", "scale_inplace_kernel"):
        if not host_kernel_path(name).exists():
            pytest.skip(f"host kernel {host_kernel_path(name)} is not built (make in the build tree)")
    return _children("cpu", NDEV, {"JAX_PLATFORMS": "cpu", "TRIDENT_DRIVER_HOST_DEVICES": str(NDEV),
                                   "XLA_FLAGS": f"--xla_force_host_platform_device_count={NDEV}"})


PARTITIONED = ["add_twin", "add_interp", "softmax", "layer_norm", "matmul_twin", "matmul_interp", "attention",
               "kernel_decorator", "aliases", "autotuned"]


def _check(res):
    assert "error" not in res, res.get("error", "") + res.get("trace", "")
    assert res["exact"], f"{res['case']}: max abs error {res['max_err']} against the unsharded call"
    assert res["spec_ok"], f"{res['case']}: result sharding {res['spec']}"


@pytest.mark.parametrize("case", PARTITIONED)
def test_partitioned_call_on_8_host_devices(cpu_cases, case):
    results, _ = cpu_cases
    res = results[case]
    _check(res)
    assert res["collectives"] == [], f"{case}: the compiled HLO gathers: {res['collectives']}"
    # each device ran its shard: the local shape is the global one divided along the split factors
    assert res["local_shape"] != [], res


def test_every_device_loads_its_own_module(cpu_cases):
    _, log = cpu_cases
    for k in range(NDEV):
        assert f"loaded kernel 'add_kernel' on host:{k}" in log, log[-3000:]
        assert f"loaded kernel 'matmul_kernel' on host:{k}" in log, log[-3000:]


def test_an_autotuned_call_is_benchmarked_once_for_every_shard(cpu_cases):
    """Eight devices of one arch start the autotuned call at once: one benchmarks, the others take its choice."""
    _, log = cpu_cases
    lines = [line for line in log.splitlines() if "autotune: kernel 'add_kernel'" in line]
    assert len(lines) == NDEV, lines
    assert sum("chosen by benchmark" in line for line in lines) == 1, lines
    assert sum("from this process's memory" in line for line in lines) == NDEV - 1, lines


def test_a_factor_the_rule_keeps_whole_is_resharded_first(cpu_cases):
    """The input arrives split along the columns, which the softmax needs whole: XLA moves the data, the result is
    exact."""
    results, _ = cpu_cases
    res = results["softmax_resharded"]
    _check(res)
    assert res["collectives"], "expected XLA to reshard the column-split input"


def test_export_refuses_and_names_the_way_that_exports(cpu_cases):
    results, _ = cpu_cases
    res = results["export"]
    assert "error" not in res, res.get("trace")
    assert res["refused"].startswith("NotImplementedError"), res["refused"]
    assert "cannot be exported" in res["refused"] and "jax.shard_map" in res["refused"]
    assert res["round_trip_exact"]


@pytest.mark.parametrize("case, words", [
    ("scalar_not_local", ["scalar argument 'n'", "factor 'i'", "local_args"]),
    ("local_args_raises", ["local_args raised ZeroDivisionError", "local shapes: (2048,)"]),
    ("grid_not_integer", ["grid", "dimension 0", "not an integer"]),
    ("fixed_grid", ["the grid (2,) is fixed", "'i' 8 ways"]),
    ("rank_mismatch", ["operand 0 'x_ptr' has rank 1", "2 factor(s)"]),
    ("operand_count", ["has 1 operand(s)", "2 array argument(s) (x_ptr, y_ptr)"]),
    ("unknown_factor", ["need_replication_factors names 'j', an unknown factor"]),
    ("unknown_local_arg", ["local_args returned 'm'", "not a parameter"]),
    ("grid_of_global_size", ["grid callable gives (16,) for a shard as for the whole call", "'i' 8 ways"]),
    ("out_names", ["out_names or a dict out_shape is not supported"]),
])
def test_bad_rules_and_local_values_name_the_call_and_the_problem(cpu_cases, case, words):
    results, _ = cpu_cases
    msg = results["errors"][case]
    assert msg, f"{case}: nothing was raised"
    assert "triton_call of kernel" in msg, msg
    for w in words:
        assert w in msg, msg


# ---- in this process (one device): what needs no mesh

def test_without_a_mesh_a_rule_changes_nothing():
    import sharding_cases as sc
    x, y = (jnp.asarray(a) for a in sc.rng_arrays(20, 3000, 3000))
    got = jax.jit(lambda x, y: sc.add(x, y, sc.add_interp, **sc.add_rule(x, y)))(x, y)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(x) + np.asarray(y))


def test_grad_and_vmap_refuse_with_guidance():
    import sharding_cases as sc
    x, y = (jnp.asarray(a) for a in sc.rng_arrays(21, 256, 256))
    f = lambda x: sc.add(x, y, sc.add_interp, **sc.add_rule(x, y)).sum()  # noqa: E731
    with pytest.raises(NotImplementedError, match="does not support automatic differentiation"):
        jax.grad(f)(x)
    with pytest.raises(NotImplementedError, match="does not support batching"):
        jax.vmap(lambda x: sc.add(x, y, sc.add_interp, **sc.add_rule(x, y)))(jnp.stack([x, x]))


def test_a_rule_of_the_wrong_kind_or_without_shardy_is_refused():
    import sharding_cases as sc
    x, y = (jnp.asarray(a) for a in sc.rng_arrays(22, 256, 256))
    with pytest.raises(jt.ShardingRuleError, match="sharding_rule must be a string"):
        sc.add(x, y, sc.add_interp, sharding_rule=("i", "i"))
    with pytest.raises(jt.ShardingRuleError, match="expected one '->'"):
        sc.add(x, y, sc.add_interp, sharding_rule="i, i")
    with pytest.raises(jt.ShardingRuleError, match="compound factors are not supported"):
        sc.add(x, y, sc.add_interp, sharding_rule="(i j), i -> i")
    with pytest.raises(ValueError, match="local_args is given without sharding_rule"):
        sc.add(x, y, sc.add_interp, local_args=lambda x, y: {})
    before = jax.config.jax_use_shardy_partitioner
    jax.config.update("jax_use_shardy_partitioner", False)
    try:
        with pytest.raises(jt.ShardingRuleError, match="Shardy"):
            sc.add(x, y, sc.add_interp, **sc.add_rule(x, y))
    finally:
        jax.config.update("jax_use_shardy_partitioner", before)


def _gpus():
    try:
        return [d for d in jax.devices() if d.platform == "gpu"]
    except RuntimeError:
        return []


@pytest.mark.skipif(not _gpus(), reason="needs a GPU (JAX's default backend is cpu)")
def test_partitioned_calls_on_the_gpus():
    """The same cases over every GPU JAX has (a one-GPU mesh on one GPU: the rule changes nothing, results exact;
    on several GPUs each launches its shard). The matmul and attention compare to the unsharded GPU call."""
    ngpu = len(_gpus())
    results, _ = _children("gpu", ngpu, {})
    for case in ("add", "softmax", "layer_norm", "matmul", "attention", "softmax_resharded"):
        _check(results[case])
        if ngpu > 1 and case != "softmax_resharded":
            assert results[case]["collectives"] == [], results[case]


@pytest.mark.skipif(len(_gpus()) < 2, reason="needs 2 or more GPUs")
def test_each_gpu_loads_its_own_module():
    ngpu = len(_gpus())
    _, log = _children("gpu", ngpu, {})
    for k in range(ngpu):
        assert f"on cuda:{k}" in log, log[-3000:]
