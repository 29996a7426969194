# SPDX-License-Identifier: Apache-2.0
"""Rule-partitioned calls on a mesh of devices (test_sharding.py runs this in a child process, since JAX's device
count is fixed when it starts): each case runs a kernel under jax.jit over sharded operands, compares every
output element with the unsharded call's, and reports the result's sharding and the collectives in the compiled
HLO, one JSON line a case.

    python sharding_cases.py PLATFORM NDEV [CASE ...]     # PLATFORM: cpu or gpu; prints JSON lines
"""
from __future__ import annotations

import json
import math
import re
import sys
import traceback

import jax
import jax.numpy as jnp
import numpy as np
import triton
import triton.language as tl
from jax.sharding import NamedSharding, PartitionSpec as P

import trident.jax as jt

GATHERS = ("all-gather", "all-to-all", "collective-permute", "all-reduce", "reduce-scatter")


# ---- kernels (each defined twice where one copy gets a host twin: a twin belongs to a function)

def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


add_twin = triton.jit(_add)
add_interp = triton.jit(_add)


def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


matmul_twin = triton.jit(_matmul)
matmul_interp = triton.jit(_matmul)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, d / tl.sqrt(var + eps) * w + b, mask=mask)


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, T, scale, D: tl.constexpr, BS: tl.constexpr,
                     BT: tl.constexpr):
    """One (batch, head) pair and BS queries a program; q (B, H, S, D), k and v (B, H, T, D), contiguous."""
    bh, sblk = tl.program_id(0), tl.program_id(1)
    rs = sblk * BS + tl.arange(0, BS)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + bh * S * D + rs[:, None] * D + rd[None, :], mask=rs[:, None] < S, other=0.0)
    m = tl.full((BS,), -float("inf"), tl.float32)
    l = tl.zeros((BS,), tl.float32)
    acc = tl.zeros((BS, D), tl.float32)
    for t0 in range(0, T, BT):
        rt = t0 + tl.arange(0, BT)
        k = tl.load(k_ptr + bh * T * D + rt[:, None] * D + rd[None, :], mask=rt[:, None] < T, other=0.0)
        v = tl.load(v_ptr + bh * T * D + rt[:, None] * D + rd[None, :], mask=rt[:, None] < T, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where(rt[None, :] < T, s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m = m_new
    tl.store(o_ptr + bh * S * D + rs[:, None] * D + rd[None, :], acc / l[:, None], mask=rs[:, None] < S)


# ---- the calls: each takes the arrays and a `rule` keyword dict (empty: the unsharded call)

def add(x, y, kernel, **rule):
    return jt.triton_call(x, y, kernel=kernel, out_shape=x, grid=lambda m: (triton.cdiv(m["n"], m["BLOCK"]),),
                          n=x.size, BLOCK=1024, **rule)


def add_rule(x, y):
    return dict(sharding_rule="i, i -> i", local_args=lambda x, y: {"n": x.size})


def matmul(a, b, kernel, **rule):
    m, k = a.shape
    n = b.shape[1]
    return jt.triton_call(a, b, kernel=kernel, out_shape=jax.ShapeDtypeStruct((m, n), a.dtype),
                          grid=lambda meta: (triton.cdiv(meta["M"], 32), triton.cdiv(meta["N"], 32)),
                          M=m, N=n, K=k, BM=32, BN=32, BK=32, **rule)


def matmul_rule(a, b):
    return dict(sharding_rule=jt.ShardingRule("m k, k n -> m n", need_replication_factors=("n",),
                                              reduction_factors=("k",)),
                local_args=lambda a, b: {"M": a.shape[0]})


def softmax(x, **rule):
    return jt.triton_call(x, kernel=softmax_kernel, out_shape=x, n_cols=x.shape[1],
                          BLOCK=triton.next_power_of_2(x.shape[1]), grid=x.shape[0], **rule)


def softmax_rule(x):
    return dict(sharding_rule=jt.ShardingRule("r c -> r c", need_replication_factors=("c",)),
                local_args=lambda x: {"grid": (x.shape[0],)})


def layer_norm(x, w, b, **rule):
    return jt.triton_call(x, w, b, kernel=layer_norm_kernel, out_shape=x, n_cols=x.shape[1], eps=1e-5,
                          BLOCK=triton.next_power_of_2(x.shape[1]), grid=(x.shape[0],), **rule)


def layer_norm_rule(x, w, b):
    return dict(sharding_rule=jt.ShardingRule("r c, c, c -> r c", need_replication_factors=("c",)),
                local_args=lambda x, w, b: {"grid": (x.shape[0],)})


def attention_grid(q):
    return (q.shape[0] * q.shape[1], triton.cdiv(q.shape[2], 16))


def attention(q, k, v, **rule):
    d = q.shape[3]
    return jt.triton_call(q, k, v, kernel=attention_kernel, out_shape=q, grid=attention_grid(q),
                          S=q.shape[2], T=k.shape[2], scale=1.0 / math.sqrt(d), D=d, BS=16, BT=16, **rule)


def attention_rule(q, k, v):
    return dict(sharding_rule=jt.ShardingRule("b h s d, b h t d, b h t d -> b h s d",
                                              need_replication_factors=("s", "t", "d")),
                local_args=lambda q, k, v: {"grid": attention_grid(q)})


# ---- the cases

def rng_arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]


def collectives(compiled_text):
    return sorted({op for op in GATHERS if re.search(rf"\b{op}(-start)?\(", compiled_text)})


def run_case(name, fn, rule_of, arrays, specs, mesh, expect_spec, exact=True):
    placed = [jax.device_put(a, NamedSharding(mesh, s)) for a, s in zip(arrays, specs)]
    sharded = jax.jit(lambda *xs: fn(*xs, **rule_of(*xs)))
    text = sharded.lower(*placed).compile().as_text()
    out = sharded(*placed)
    out = sharded(*placed)   # the executable again: the second execution's results too
    ref = jax.jit(fn)(*[jnp.asarray(a) for a in arrays])
    got, want = np.asarray(out), np.asarray(ref)
    same = bool(np.array_equal(got, want)) if exact else bool(np.allclose(got, want, rtol=1e-5, atol=1e-6))
    return {"case": name, "exact": same, "max_err": float(np.max(np.abs(got - want))),
            "spec": str(out.sharding.spec),
            "spec_ok": expect_spec is None or out.sharding.is_equivalent_to(NamedSharding(mesh, expect_spec), out.ndim),
            "collectives": collectives(text),
            "local_shape": list(out.sharding.shard_shape(out.shape))}


def cases(platform, ndev):
    devs = jax.devices(platform)[:ndev]
    mesh1 = jax.make_mesh((ndev,), ("d",), devices=devs)
    two = (2, ndev // 2) if ndev >= 4 else (ndev, 1)
    mesh2 = jax.make_mesh(two, ("x", "y"), devices=devs)
    twin = platform == "cpu"
    add_k, mm_k = (add_twin, matmul_twin) if twin else (add_interp, matmul_interp)
    n = 1024 * 2 * ndev
    yield "add_twin" if twin else "add", lambda: run_case(
        "add", lambda x, y, **r: add(x, y, add_k, **r), add_rule, rng_arrays(1, n, n), [P("d"), P("d")], mesh1,
        P("d"))
    if twin:
        yield "add_interp", lambda: run_case(
            "add_interp", lambda x, y, **r: add(x, y, add_interp, **r), add_rule, rng_arrays(2, n, n),
            [P("d"), P("d")], mesh1, P("d"))
    yield "softmax", lambda: run_case(
        "softmax", softmax, softmax_rule, rng_arrays(3, (4 * ndev, 40)), [P("d", None)], mesh1, P("d", None))
    yield "layer_norm", lambda: run_case(
        "layer_norm", layer_norm, layer_norm_rule, rng_arrays(4, (4 * ndev, 48), 48, 48),
        [P("d", None), P(None), P(None)], mesh1, P("d", None))
    yield "matmul_twin" if twin else "matmul", lambda: run_case(
        "matmul", lambda a, b, **r: matmul(a, b, mm_k, **r), matmul_rule, rng_arrays(5, (32 * ndev, 48), (48, 40)),
        [P("d", None), P(None, None)], mesh1, P("d", None))
    if twin:
        yield "matmul_interp", lambda: run_case(
            "matmul_interp", lambda a, b, **r: matmul(a, b, matmul_interp, **r), matmul_rule,
            rng_arrays(6, (32 * ndev, 48), (48, 40)), [P("d", None), P(None, None)], mesh1, P("d", None))
    yield "attention", lambda: run_case(
        "attention", attention, attention_rule, rng_arrays(7, *[(two[0] * 2, two[1] * 2, 32, 16)] * 3),
        [P("x", "y", None, None)] * 3, mesh2, P("x", "y", None, None))
    # the rule forbids splitting the columns the input arrives split on: XLA reshards first, still exact
    yield "softmax_resharded", lambda: run_case(
        "softmax_resharded", softmax, softmax_rule, rng_arrays(8, (8, 16 * ndev)), [P(None, "d")], mesh1,
        None)
    # @kernel with the rule preset, kernel[grid](...) with the per-shard values
    decorated = jt.kernel(add_interp, sharding_rule="i, i -> i")
    yield "kernel_decorator", lambda: run_case(
        "kernel_decorator", lambda x, y, **r: decorated[lambda m: (triton.cdiv(m["n"], 1024),)](
            x, y, n=x.size, BLOCK=1024, out_shape=x, **r) if r else add(x, y, add_interp),
        lambda x, y: dict(local_args=lambda x, y: {"n": x.size}), rng_arrays(13, n, n), [P("d"), P("d")], mesh1,
        P("d"))
    if twin:
        yield "aliases", lambda: aliases_case(mesh1)
        yield "autotuned", lambda: autotuned_case(mesh1)
        yield "export", lambda: export_case(mesh1)
    yield "errors", lambda: errors_case(mesh1)


def aliases_case(mesh):
    """input_output_aliases under a rule: the shard is scaled in place."""
    n = 1024 * 2 * len(mesh.devices.flat)
    (x,) = rng_arrays(9, n)

    def f(x, **rule):
        return jt.triton_call(x, kernel=scale_twin, grid=lambda m: (triton.cdiv(m["n"], 512),), n=x.size, alpha=2.5,
                              BLOCK=512, input_output_aliases="x_ptr", **rule)
    return run_case("aliases", f, lambda x: dict(sharding_rule="i -> i", local_args=lambda x: {"n": x.size}), [x],
                    [P("d")], mesh, P("d"))


def autotuned_case(mesh):
    """An autotuned kernel under a rule: the configs compiled once for the local shape; the XLA handler chooses on
    each device's first execution."""
    n = 1024 * 2 * len(mesh.devices.flat)
    tuned = triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=w) for w in (1, 2)], key=["n"])(add_twin)
    return run_case("autotuned", lambda x, y, **r: add(x, y, tuned, **r) if r else add(x, y, add_twin),
                    add_rule, rng_arrays(10, n, n), [P("d"), P("d")], mesh, P("d"))


def export_case(mesh):
    """jax.export: a rule-partitioned call refuses with the way that exports; that way (shard_map) round-trips."""
    n = 1024 * 2 * len(mesh.devices.flat)
    x, y = [jax.device_put(a, NamedSharding(mesh, P("d"))) for a in rng_arrays(11, n, n)]
    out = {}
    try:
        jax.export.export(jax.jit(lambda x, y: add(x, y, add_twin, **add_rule(x, y))))(x, y)
        out["refused"] = ""
    except Exception as e:
        out["refused"] = f"{type(e).__name__}: {e}"
    try:
        from jax import shard_map
    except ImportError:  # pragma: no cover
        from jax.experimental.shard_map import shard_map
    f = jax.jit(shard_map(lambda x, y: add(x, y, add_twin), mesh=mesh, in_specs=(P("d"), P("d")), out_specs=P("d")))
    exp = jax.export.export(f, disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(jt.TARGET)])(x, y)
    again = jax.export.deserialize(exp.serialize())
    got = again.call(x, y)
    out["round_trip_exact"] = bool(np.array_equal(np.asarray(got), np.asarray(x) + np.asarray(y)))
    return out


def errors_case(mesh):
    """What a bad rule or per-shard value says (each message, or '' where nothing was raised)."""
    n = 1024 * 2 * len(mesh.devices.flat)
    args = [jax.device_put(a, NamedSharding(mesh, P("d"))) for a in rng_arrays(12, n, n)]
    kernel = add_interp
    tries = {
        "scalar_not_local": lambda x, y: add(x, y, kernel, sharding_rule="i, i -> i"),
        "local_args_raises": lambda x, y: add(x, y, kernel, sharding_rule="i, i -> i", local_args=lambda x, y: {"n": 1 // 0}),
        "grid_not_integer": lambda x, y: jt.triton_call(x, y, kernel=kernel, out_shape=x, n=x.size, BLOCK=1024, grid=(2,),
                                                   sharding_rule="i, i -> i",
                                                   local_args=lambda x, y: {"n": x.size, "grid": (x.size / 1024,)}),
        "fixed_grid": lambda x, y: jt.triton_call(x, y, kernel=kernel, out_shape=x, n=x.size, BLOCK=1024, grid=(2,),
                                             sharding_rule="i, i -> i", local_args=lambda x, y: {"n": x.size}),
        "rank_mismatch": lambda x, y: add(x, y, kernel, sharding_rule="i j, i -> i"),
        "operand_count": lambda x, y: add(x, y, kernel, sharding_rule="i -> i"),
        "unknown_factor": lambda x, y: add(x, y, kernel, sharding_rule=jt.ShardingRule("i, i -> i",
                                                                                 need_replication_factors=("j",))),
        "unknown_local_arg": lambda x, y: add(x, y, kernel, sharding_rule="i, i -> i", local_args=lambda x, y: {"m": 1}),
        # the tutorial idiom with a captured global size: every shard would launch the whole call's programs
        "grid_of_global_size": lambda x, y: jt.triton_call(
            x, y, kernel=kernel, out_shape=x, n=x.size, BLOCK=1024, grid=lambda m: (triton.cdiv(n, m["BLOCK"]),),
            sharding_rule="i, i -> i", local_args=lambda x, y: {"n": x.size}),
        "out_names": lambda x, y: jt.triton_call(
            x, y, kernel=kernel, out_shape=x, out_names=("out_ptr",), n=x.size, BLOCK=1024,
            grid=lambda m: (triton.cdiv(m["n"], 1024),), sharding_rule="i, i -> i",
            local_args=lambda x, y: {"n": x.size}),
    }
    out = {}
    for name, call in tries.items():
        try:
            jax.block_until_ready(jax.jit(call)(*args))
            out[name] = ""
        except Exception as e:
            out[name] = f"{type(e).__name__}: {e}"   # whole: JAX puts the partitioner's error after its traceback
    return out


@triton.jit
def scale_twin(x_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def main(argv):
    platform, ndev = argv[0], int(argv[1])
    wanted = set(argv[2:])
    if platform == "cpu":
        from conftest import host_kernel_path
        jt.host_twin(add_twin, host_kernel_path("add_kernel"), name="add_kernel")
        jt.host_twin(matmul_twin, host_kernel_path("matmul_kernel"), name="matmul_kernel")
        jt.host_twin(scale_twin, host_kernel_path("scale_inplace_kernel"), name="scale_inplace_kernel")
    for name, run in cases(platform, ndev):
        if wanted and name not in wanted:
            continue
        try:
            res = run()
        except Exception as e:  # a case's failure is its result; the others still run
            res = {"case": name, "error": f"{type(e).__name__}: {e}"[:3000], "trace": traceback.format_exc()[-3000:]}
        res["case"] = name
        print("CASE " + json.dumps(res), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
