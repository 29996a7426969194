# SPDX-License-Identifier: Apache-2.0
"""trident.jax.kernel_call: kernels inside jax.jit through libtrident's XLA
handlers. On CPU JAX the host driver runs the host twins of the kernels; on a
CUDA GPU the same tests run the Triton sm90 images of the same bundles."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import trident
import trident.jax as tj
from conftest import CLI, PACKAGE_ROOT, SRC, kernel, requires_gpu

rng = np.random.default_rng(1234)


def rand(n, dtype=np.float32):
    return jnp.asarray(rng.uniform(-1.0, 1.0, n).astype(dtype))


def sds(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def test_python_mirrors_the_c_api():
    devs = trident.devices()
    assert any(d["uri"] == "host:0" for d in devs)
    host = next(d for d in devs if d["uri"] == "host:0")
    assert host["kind"] == "cpu" and host["memory_bytes"] > 0 and host["pci_bus_id"] is None
    assert any(d["name"] == "host" and d["status"] == "loaded" for d in trident.drivers())
    names = [o["name"] for o in trident.options("cuda")]
    assert len(names) == 27 and names[0] == "num_warps" and "cluster_dims" not in names   # Triton 3.9's
    assert "cluster_dims" in trident.option_names("cuda", "3.5.1")
    assert len(trident.option_names("cuda", "3.8.0")) == 23 and "sched4reg" not in trident.option_names("cuda", "3.8")
    hint = {o["name"]: o["default"] for o in trident.options("hip", "3.7.1")}["schedule_hint"]
    assert hint == "none" and {o["name"]: o["default"] for o in trident.options("hip")}["schedule_hint"] == ""
    assert trident.option_releases("cuda") == {"product": "Triton", "oldest": "3.0", "newest": "3.9",
                                               "tested": ["3.6", "3.7", "3.8", "3.9"]}
    assert trident.is_option("hip", "waves_per_eu") and not trident.is_option("hip", "BLOCK")
    assert trident.check_option("cuda", "enable_fp_fusion", False) == "false"
    with pytest.raises(trident.TridentError, match="power of two"):
        trident.check_option("cuda", "num_warps", 3)


def test_a_kernel_collected_at_shutdown_is_destroyed_quietly(host_kernel):
    """At interpreter shutdown the package's globals may be None before a Kernel is collected (seen on the H200:
    "Exception ignored in Kernel.__del__ ... TypeError: 'NoneType' object does not support the context manager
    protocol"): its destroy function is the one it kept, so it is destroyed all the same and nothing is printed."""
    code = textwrap.dedent(f"""
        import gc, trident, trident._lib as L
        k = trident.Kernel({host_kernel("add_kernel")!r}, name="add_kernel")
        L._lib = L._lock = None   # what shutdown's teardown of the module leaves
        del k
        gc.collect()
        print("done")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    assert r.returncode == 0 and r.stdout.strip() == "done", r.stderr
    assert "Exception ignored" not in r.stderr, r.stderr


def test_devices_and_drivers_match_the_cli():
    """trident.devices() and trident.drivers() give the keys and values of `trident devices --json` and
    `trident drivers --json` (the CLI lacked index and ordinal, Python the launch features, and the UUIDs' forms
    differed)."""
    for command, py in (("devices", trident.devices()), ("drivers", trident.drivers())):
        out = subprocess.run([CLI, command, "--json"], capture_output=True, text=True, check=True).stdout
        assert json.loads(out) == py
    keys = set(trident.devices()[0])
    assert {"index", "ordinal", "uuid", "max_shared_per_block", "max_shared_per_block_optin", "cooperative_launch",
            "cluster_launch", "pci_bus_id", "driver"} <= keys


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="a host kernel's fault, under CPU JAX")
def test_faulting_host_kernel_raises(host_kernel):
    """A host kernel that reads outside its input fails the call with the kernel, program and signal named (it
    killed the Python process), pytest's faulthandler notwithstanding; the process computes on afterwards."""
    k = trident.Kernel(host_kernel("gather_kernel"), name="gather_kernel", signature="x:*fp32,idx:*i64,out:*fp32,n:i32")
    n = 1024
    with jax.enable_x64(True):
        x = rand(n)
        good = jnp.asarray(rng.integers(0, n, n), dtype=jnp.int64)
        bad = good.at[700].set(1 << 40)
        out = jnp.zeros(n, jnp.float32)
        call = jax.jit(lambda x, idx, o: tj.kernel_call(k, x, idx, o, n, grid=n // 256, out_shape=sds(o),
                                                        input_output_aliases={2: 0}))
        with pytest.raises(Exception, match=r"kernel 'gather_kernel'.*program \(2,0,0\).*faulted \(SIGSEGV"):
            jax.block_until_ready(call(x, bad, out))
        np.testing.assert_array_equal(np.asarray(call(x, good, out)), np.asarray(x)[np.asarray(good)])


def test_two_outputs():
    n = 100_003
    x, y = rand(n), rand(n)
    f = jax.jit(lambda x, y: tj.kernel_call(kernel("sum_diff_kernel"), x, y, n, grid=(n + 255) // 256,
                                            out_shape=(sds(x), sds(x))))
    s, d = f(x, y)
    np.testing.assert_array_equal(np.asarray(s), np.asarray(x) + np.asarray(y))
    np.testing.assert_array_equal(np.asarray(d), np.asarray(x) - np.asarray(y))


def test_alias_with_donation_makes_no_copy():
    n = 5000
    x, y = rand(n), rand(n)
    out = jnp.full((n,), jnp.nan, jnp.float32)
    ptr = out.unsafe_buffer_pointer()
    f = jax.jit(lambda x, y, o: tj.kernel_call(kernel("add_kernel"), x, y, o, n, grid=(n + 1023) // 1024,
                                               out_shape=sds(o), input_output_aliases={2: 0}), donate_argnums=2)
    r = f(x, y, out)
    assert r.unsafe_buffer_pointer() == ptr  # the kernel wrote into the donated buffer
    np.testing.assert_array_equal(np.asarray(r), np.asarray(x) + np.asarray(y))


def test_in_place_alias():
    n = 10_000
    x = rand(n)
    f = jax.jit(lambda x: tj.kernel_call(kernel("scale_inplace_kernel"), x, n, 2.5, grid=(n + 511) // 512,
                                         out_shape=sds(x), input_output_aliases={0: 0}))
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(x) * np.float32(2.5))


def test_zeroed_outputs():
    n = 70_001
    x = jnp.asarray(rng.integers(-1000, 1000, n, dtype=np.int32))
    shapes = (jax.ShapeDtypeStruct((1,), jnp.int64), jax.ShapeDtypeStruct((1,), jnp.int32))

    def acc(x):
        return tj.kernel_call(kernel("accumulate_kernel"), x, n, grid=(n + 127) // 128, out_shape=shapes,
                              zeroed_outputs=(0, 1))

    with jax.enable_x64(True):
        for _ in range(3):  # fresh buffers each time: zeroing must happen every call
            total, count = jax.jit(acc)(x)
            assert int(total[0]) == int(np.asarray(x, dtype=np.int64).sum())
            assert int(count[0]) == n


def test_autotuned_kernel_call(fresh_cache):
    """Several kernels in one call: the handler benchmarks them at the first execution on the call's buffers
    and launches the fastest. One candidate here runs the same kernel on a grid padded with 4 million programs
    that do nothing but be scheduled: the slower one wherever it runs."""
    n = 1 << 16
    x = rand(n)
    fast, slow = ((n + 511) // 512,), ((n + 511) // 512 + 4_000_000,)
    k = kernel("scale_inplace_kernel")
    for jit in (True, False):
        f = (lambda x: tj.kernel_call([k, k], x, n, 2.5, grid=[slow, fast], out_shape=sds(x),
                                      input_output_aliases={0: 0}, autotune_key="scale-twice"))
        out = jax.jit(f)(x) if jit else f(x)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * np.float32(2.5))   # once, not once a run
    assert len(list((fresh_cache / "tune").iterdir())) == 1
    dev = next(d for d in trident.devices() if d["kind"] == ("gpu" if jax.default_backend() != "cpu" else "cpu"))
    entry = tj.cache.load_choice("scale_inplace_kernel", "scale-twice", dev["arch"])   # as the tuner wrote it
    assert entry["variants"] == 2 and entry["choice"] == 1 and entry["times_ms"][0] > entry["times_ms"][1]
    assert entry["device"] == dev["uri"]
    # per-kernel zeroed outputs, the default key (a digest of the call)
    acc = kernel("accumulate_kernel")
    shapes = (jax.ShapeDtypeStruct((1,), jnp.int64), jax.ShapeDtypeStruct((1,), jnp.int32))
    xi = jnp.asarray(rng.integers(-1000, 1000, n, dtype=np.int32))
    with jax.enable_x64(True):
        total, count = jax.jit(lambda x: tj.kernel_call([acc, acc], x, n, grid=[((n + 127) // 128,)] * 2,
                                                        out_shape=shapes, zeroed_outputs=[[0, 1], [0, 1]]))(xi)
        assert int(total[0]) == int(np.asarray(xi, np.int64).sum()) and int(count[0]) == n
    assert len(list((fresh_cache / "tune").glob("accumulate_kernel-*.json"))) == 1
    with pytest.raises(tj.KernelCallError, match="candidate 1 .*does not take the parameters of candidate 0"):
        tj.kernel_call([k, kernel("add_kernel")], x, n, 2.5, grid=(1,), out_shape=sds(x), input_output_aliases={0: 0})
    with pytest.raises(tj.KernelCallError, match="2 kernels and 3 grids"):
        tj.kernel_call([k, k], x, n, 2.5, grid=[(1,), (2,), (3,)], out_shape=sds(x), input_output_aliases={0: 0})


def test_every_scalar_type():
    vals = [-100, -30000, -2_000_000_000, -9_000_000_000_000, 4_000_000_000, 2**60, -1.5, 0.15625, 3.25, 1e300, True]
    f64 = jax.ShapeDtypeStruct((11,), jnp.float64)
    with jax.enable_x64(True):
        # the output is the kernel's first parameter: it is passed as an input aliased to the output
        out = jax.jit(lambda o: tj.kernel_call(kernel("scalars_kernel"), o, *vals, grid=1, out_shape=f64,
                                               input_output_aliases={0: 0}))(jnp.full((11,), jnp.nan))
        want = [-100, -30000, -2e9, -9e12, 4e9, float(2**60), -1.5, 0.15625, 3.25, 1e300, 1.0]
        np.testing.assert_array_equal(np.asarray(out), np.array(want))
        # numpy scalars, and values that round in fp16/bf16 round as numpy does
        out = tj.kernel_call(kernel("scalars_kernel"), jnp.full((11,), jnp.nan), np.int8(7), np.int16(8), np.int32(9),
                             np.int64(10), np.uint32(11), np.uint64(12), 0.1, 0.1, np.float32(0.1), np.float64(0.1),
                             False, grid=1, out_shape=f64, input_output_aliases={0: 0})
        got = np.asarray(out)
        assert list(got[:6]) == [7, 8, 9, 10, 11, 12]
        assert got[6] == float(np.float16(0.1)) and got[7] == float(jnp.bfloat16(0.1))
        assert got[8] == float(np.float32(0.1)) and got[9] == 0.1 and got[10] == 0


def test_hundreds_of_calls_in_one_jit():
    n = 4096
    x = rand(n)

    def chain(x):
        for _ in range(300):
            x = tj.kernel_call(kernel("scale_inplace_kernel"), x, n, 1.0078125, grid=n // 512, out_shape=sds(x),
                               input_output_aliases={0: 0})
        return x

    got = np.asarray(jax.jit(chain)(x))
    want = np.asarray(x).copy()
    for _ in range(300):
        want = want * np.float32(1.0078125)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_vmap_runs_sequentially_when_asked():
    n = 2048
    xs, ys = rand((3, n)), rand((3, n))
    f = jax.vmap(lambda x, y: tj.kernel_call(kernel("sum_diff_kernel"), x, y, n, grid=n // 256,
                                             out_shape=(sds(x), sds(x)), vmap_method="sequential")[0])
    np.testing.assert_array_equal(np.asarray(f(xs, ys)), np.asarray(xs) + np.asarray(ys))
    g = jax.vmap(lambda x, y: tj.kernel_call(kernel("sum_diff_kernel"), x, y, n, grid=n // 256,
                                             out_shape=(sds(x), sds(x)))[0])
    with pytest.raises(NotImplementedError, match="trident.jax.kernel_call does not support batching with jax.vmap"):
        g(xs, ys)
    with pytest.raises(NotImplementedError, match="kernel_call does not support automatic differentiation.*"
                                                  "jax.custom_jvp or jax.custom_vjp"):
        jax.grad(lambda x: tj.kernel_call(kernel("sum_diff_kernel"), x, x, n, grid=n // 256,
                                          out_shape=(sds(x), sds(x)))[0].sum())(xs[0])


def test_errors_name_kernel_and_argument():
    n = 64
    x = rand(n)
    k = kernel("sum_diff_kernel")
    o = (sds(x), sds(x))
    with pytest.raises(tj.KernelCallError, match=r"kernel 'sum_diff_kernel' argument 1 'y' \(\*fp32\): given an array of int32"):
        tj.kernel_call(k, x, jnp.zeros(n, jnp.int32), n, grid=1, out_shape=o)
    with pytest.raises(tj.KernelCallError, match="takes 5 arguments"):
        tj.kernel_call(k, x, x, grid=1, out_shape=o)
    with pytest.raises(tj.KernelCallError, match=r"argument 2 'n' \(i32\): 4294967296 is out of range"):
        tj.kernel_call(k, x, x, 2**32, grid=1, out_shape=o)
    with pytest.raises(tj.KernelCallError, match=r"argument 2 'n' \(i32\): a scalar parameter, given an array"):
        tj.kernel_call(k, x, x, x, grid=1, out_shape=o)
    with pytest.raises(tj.KernelCallError, match=r"output 1 is int32"):
        tj.kernel_call(k, x, x, n, grid=1, out_shape=(sds(x), jax.ShapeDtypeStruct((n,), jnp.int32)))
    with pytest.raises(tj.KernelCallError, match="cannot alias output 0"):
        tj.kernel_call(kernel("add_kernel"), x, x, rand(n + 1), n, grid=1, out_shape=sds(x), input_output_aliases={2: 0})
    with pytest.raises(tj.KernelCallError, match="aliased to an input"):
        tj.kernel_call(kernel("add_kernel"), x, x, x, n, grid=1, out_shape=sds(x), input_output_aliases={2: 0},
                       zeroed_outputs=(0,))
    with pytest.raises(tj.KernelCallError, match="grid"):
        tj.kernel_call(k, x, x, n, grid=(1, 2, 3, 4), out_shape=o)
    with pytest.raises(trident.TridentError, match="not a trident bundle|not a kernel image"):
        tj.kernel_call(b"garbage bytes", x, grid=1, out_shape=sds(x))


def _scratch_meta(arch, num_ctas, glob, glob_align, prof=0, prof_align=1):
    return json.dumps({"name": "scratch_kernel", "target": {"backend": "host", "arch": arch}, "num_warps": 1,
                       "num_ctas": num_ctas, "global_scratch_size": glob, "global_scratch_align": glob_align,
                       "profile_scratch_size": prof, "profile_scratch_align": prof_align})


def test_scratch_bytes_are_libtrident_s(host_kernel):
    """Kernel.scratch_bytes asks libtrident (trd_kernel_scratch): programs x num_ctas x the size rounded up to its
    alignment, per target, and each kind's most over the targets without one."""
    so = host_kernel("scratch_kernel")
    k = trident.Kernel.combine([
        trident.Kernel(so, name="scratch_kernel", signature="x:*fp32,out:*fp32",
                       metadata=_scratch_meta("", 2, 12, 16, 20, 32)),       # 16 and 32 bytes a CTA
        trident.Kernel(so, name="scratch_kernel", signature="x:*fp32,out:*fp32",
                       metadata=_scratch_meta("riscv64", 4, 100, 64)),       # 128 bytes a CTA, no profile
    ])
    assert k.scratch_bytes((10, 2, 3), target=0) == (60 * 2 * 16, 60 * 2 * 32)
    assert k.scratch_bytes((10, 2, 3), target=1) == (60 * 4 * 128, 0)
    assert k.scratch_bytes((10, 2, 3)) == (60 * 4 * 128, 60 * 2 * 32)
    assert k.scratch_bytes(7) == k.scratch_bytes([7, 1]) == k.scratch_bytes(np.array([7, 1, 1])) == (3584, 448)
    assert k.scratch_bytes((0, 5)) == (0, 0)
    # 2^55 programs x 4 CTAs x 128 bytes is 2^64: target 1's bytes do not fit, target 0's (2^60, 2^61) do
    assert k.scratch_bytes((1 << 30, 1 << 25), target=0) == (1 << 60, 1 << 61)
    with pytest.raises(trident.TridentError, match=r"kernel 'scratch_kernel' on target 1 \(host:riscv64\): grid "
                       r"1073741824x33554432x1 x 4 CTAs x 128 bytes of global scratch a program is more than 2\^64 "
                       r"bytes \[TRD_ERR_LIMIT\]"):
        k.scratch_bytes((1 << 30, 1 << 25))
    with pytest.raises(trident.TridentError, match=r"has 2 targets, 0 .. 1: no target 2 \[TRD_ERR_NOT_FOUND\]"):
        k.scratch_bytes(1, target=2)
    with pytest.raises(trident.TridentError, match=r"grid 2147483648x1x1 has 2147483648 programs along x"):
        k.scratch_bytes(2**31)
    for bad in ((1, 2, 3, 4), (), -1, (2**32,), (1.5,), "12"):
        with pytest.raises(ValueError, match=r"kernel 'scratch_kernel': grid .* is not 1 to 3 integers"):
            k.scratch_bytes(bad)
    with pytest.raises(ValueError, match="target -1 is not an index"):
        k.scratch_bytes(1, target=-1)


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="a host kernel, under CPU JAX")
def test_kernel_call_scratch_sized_by_libtrident(host_kernel):
    """kernel_call's scratch result is the bytes libtrident computes (12 bytes aligned to 16, a program), the kernel
    sums through it; a grid whose scratch does not fit 64 bits, or that has more than 2^63-1 programs, fails the
    lowering naming the kernel and the grid (Python's copy of the rule asked MLIR for a 2^67-byte result, which
    failed with a TypeError of its own, and numpy's int64 product of the second grid wrapped negative: that call
    lowered, with a scratch result of negative size)."""
    k = trident.Kernel(host_kernel("scratch_kernel"), name="scratch_kernel", signature="x:*fp32,out:*fp32",
                       metadata=_scratch_meta("", 1, 12, 16))
    n = 100
    x = rand(4 * n)
    assert k.scratch_bytes(n) == (n * 16, 0)
    f = jax.jit(lambda x, grid: tj.kernel_call(k, x, grid=grid, out_shape=jax.ShapeDtypeStruct((n,), jnp.float32)),
                static_argnums=1)
    assert f"tensor<{n * 16}xui8>" in f.lower(x, n).as_text()
    np.testing.assert_allclose(np.asarray(f(x, n)), np.asarray(x).reshape(n, 4).sum(axis=1), rtol=1e-6)
    top = 2**31 - 1
    with pytest.raises(tj.KernelCallError, match=rf"kernel 'scratch_kernel' on target 0 \(host\): grid {top}x{top}x2 "
                       r"x 1 CTAs x 16 bytes of global scratch a program is more than 2\^64 bytes"):
        f.lower(x, (top, top, 2))
    with pytest.raises(tj.KernelCallError, match=rf"grid {top}x{top}x3 has more than 2\^63-1 programs"):
        f.lower(x, (top, top, 3))


def _raw_call(**attrs):
    """The custom call with attributes made by hand: what the C handler says about bad ones."""
    tj.register()
    k = kernel("sum_diff_kernel")
    x = jnp.ones(64, jnp.float32)
    base = dict(kernel=k.bundle(), grid=np.array([1, 1, 1], np.int64), arg_kind=np.array([0, 0, 2, 1, 1], np.int32),
                arg_index=np.array([0, 1, 0, 0, 1], np.int64), scalars=np.int32(64).tobytes(),
                zero=np.array([], np.int64), scratch=np.array([-1, -1], np.int64), options="{}", version=np.int32(1))
    base.update(attrs)
    call = jax.ffi.ffi_call(tj.TARGET, (sds(x), sds(x)))
    return jax.block_until_ready(call(x, x, **base))


def test_handler_errors():
    _raw_call()  # the hand-made call itself is fine
    with pytest.raises(Exception, match="attribute version 3"):
        _raw_call(version=np.int32(3))
    with pytest.raises(Exception, match="attribute 'kernel_offsets' is missing"):   # version 2: autotuned
        _raw_call(version=np.int32(2))
    with pytest.raises(Exception, match=r"kernel 'sum_diff_kernel' argument 1 'y'.*operand 5 does not exist"):
        _raw_call(arg_index=np.array([0, 5, 0, 0, 1], np.int64))
    with pytest.raises(Exception, match="the scalars attribute has 8 bytes"):
        _raw_call(scalars=np.int64(64).tobytes())
    with pytest.raises(Exception, match="argument 2 'n': it is a scalar, the call passes a buffer"):
        _raw_call(arg_kind=np.array([0, 0, 0, 1, 1], np.int32))
    with pytest.raises(Exception, match=r"takes 5 parameters .* the call describes 4"):
        _raw_call(arg_kind=np.array([0, 0, 2, 1], np.int32), arg_index=np.array([0, 1, 0, 0], np.int64))
    with pytest.raises(Exception, match="attribute 'grid' is missing|grid"):
        _raw_call(grid=np.array([1, 1], np.int64))
    with pytest.raises(Exception, match="option cuda.num_warps|power of two|'options'"):
        _raw_call(options='{"cuda": {"num_warps": 3}, "host": {"num_warps": 3}}')


def test_export_round_trip(tmp_path):
    """The exported HLO is self-contained: another process runs it."""
    n = 3000
    x, y = rand(n), rand(n)
    f = jax.jit(lambda x, y: tj.kernel_call(kernel("sum_diff_kernel"), x, y, n, grid=(n + 255) // 256,
                                            out_shape=(sds(x), sds(x))))
    # trident's call keeps its attributes versioned: it may be exported
    exp = jax.export.export(f, disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(tj.TARGET)])(x, y)
    (tmp_path / "call.bin").write_bytes(exp.serialize())
    np.save(tmp_path / "x.npy", np.asarray(x))
    np.save(tmp_path / "y.npy", np.asarray(y))
    script = textwrap.dedent(f"""
        import jax, numpy as np
        import trident.jax  # registers the handlers
        trident.jax.register()
        exp = jax.export.deserialize(open({str(tmp_path / 'call.bin')!r}, 'rb').read())
        x, y = np.load({str(tmp_path / 'x.npy')!r}), np.load({str(tmp_path / 'y.npy')!r})
        s, d = exp.call(x, y)
        assert np.array_equal(np.asarray(s), x + y) and np.array_equal(np.asarray(d), x - y)
        print("round trip ok")
    """)
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "round trip ok" in r.stdout


@requires_gpu()
def test_command_buffers_on_and_off():
    """The same chain with XLA's command buffers (CUDA graphs) and without."""
    kernel("scale_inplace_kernel")   # the child's kernel: skips here, visibly, where its host twin is not built
    script = textwrap.dedent("""
        import jax, jax.numpy as jnp, numpy as np, sys
        sys.path.insert(0, sys.argv[1])
        import trident.jax as tj
        from conftest import kernel
        n = 1 << 16
        x = jnp.asarray(np.random.default_rng(5).uniform(-1, 1, n).astype(np.float32))
        def chain(x):
            for _ in range(64):
                x = tj.kernel_call(kernel("scale_inplace_kernel"), x, n, 1.0078125, grid=n // 512,
                                   out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases={0: 0})
            return x
        f = jax.jit(chain)
        for _ in range(3):  # the first run captures, later runs replay the graph
            got = np.asarray(f(x))
        want = np.asarray(x) * np.float32(1.0078125) ** 64
        np.testing.assert_allclose(got, want, rtol=1e-5)
        print("ok")
    """)
    for flags in ("", "--xla_gpu_enable_command_buffer="):
        env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, XLA_FLAGS=flags, XLA_PYTHON_CLIENT_PREALLOCATE="false")
        r = subprocess.run([sys.executable, "-c", script, str(SRC / "python" / "tests")], env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0 and "ok" in r.stdout, (flags, r.stderr[-3000:])
