# SPDX-License-Identifier: Apache-2.0
"""Programmatic dependent launch for the kernels trident.jax compiles (pdl.py), unless TRIDENT_JAX_PDL=0: an
sm90 kernel whose caller chose no launch_pdl is compiled with it, lets the next kernel be scheduled and waits at
its entry before any instruction of its own; every other kernel, and every kernel with the variable 0, is
compiled as Triton compiles it; Triton's cache keeps the two apart. Compiled for sm90 with the installed Triton, without a GPU; the
last test runs trident's PDL kernels between XLA's on one."""
import re

import jax
import jax.numpy as jnp
import pytest
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

import trident.jax as jt
from trident.jax import pdl

X = jnp.zeros((1024,), jnp.float32)


@triton.jit
def pdl_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def compile_add(target="sm90", **kw):
    jt.triton_call(X, X, kernel=pdl_add_kernel, out_shape=X, grid=(4,), n_elements=X.size, BLOCK=256, **kw)


@pytest.fixture(autouse=True)
def pdl_default(monkeypatch):
    """TRIDENT_JAX_PDL unset: the default, PDL on (pdl.py)."""
    monkeypatch.delenv(pdl.ENV, raising=False)


def test_on_by_default(record, fresh_cache):
    with jt.targets("sm90"):
        compile_add(num_warps=1)
    meta, ptx = sm90_of(record[0].kernel)
    assert meta["launch_pdl"] is True and waits_first(ptx)


def sm90_of(kernel):
    """(metadata, PTX text) of the kernel's sm90 images."""
    ptx = next(t for t in kernel.targets if t.format == "ptx" and t.arch == "sm90")
    assert any(t.format == "cubin" and t.arch == "sm90" for t in kernel.targets)
    return ptx.metadata, ptx.image.decode()


def waits_first(ptx):
    """Whether the entry's first instructions are the trigger and the wait, before any load or store, each once."""
    body = ptx[ptx.index("{", ptx.index(".entry")) + 1:]
    instructions = [ln.strip() for ln in body.splitlines()
                    if ln.strip() and not re.match(r"(\.|//|\$|\{|\})", ln.strip())]
    return (instructions[:2] == ["griddepcontrol.launch_dependents;", "griddepcontrol.wait;"]
            and instructions.count("griddepcontrol.wait;") == 1)


def test_sm90_kernel_waits_at_its_entry_and_is_launched_with_pdl(record, fresh_cache, monkeypatch):
    monkeypatch.setenv(pdl.ENV, "1")   # as unset
    with jt.targets("sm90", "sm80"):
        compile_add()
    meta, ptx = sm90_of(record[0].kernel)
    assert meta["launch_pdl"] is True and waits_first(ptx)
    assert ptx.count("griddepcontrol.wait;") == 1
    sm80 = next(t for t in record[0].kernel.targets if t.format == "ptx" and t.arch == "sm80")
    assert sm80.metadata["launch_pdl"] is False and "griddepcontrol" not in sm80.image.decode()


@pytest.mark.parametrize("kw", [dict(launch_pdl=False), dict(launch_pdl=True), dict(launch_cooperative_grid=True)])
def test_the_callers_choice_stands(kw, record, fresh_cache):
    """launch_pdl given (either way: with True the kernel is the caller's to make safe, as in Triton) or a
    cooperative launch: compiled as Triton compiles it."""
    with jt.targets("sm90"):
        compile_add(**kw)
    meta, ptx = sm90_of(record[0].kernel)
    assert meta["launch_pdl"] is kw.get("launch_pdl", False) and "griddepcontrol" not in ptx


def test_env_turns_it_off_and_keys_the_cache(record, fresh_cache, monkeypatch):
    monkeypatch.setenv(pdl.ENV, "0")
    with jt.targets("sm90"):
        compile_add()
    meta, ptx = sm90_of(record[0].kernel)
    assert meta["launch_pdl"] is False and "griddepcontrol" not in ptx
    monkeypatch.setenv(pdl.ENV, "1")   # a new key: not served what was compiled without it
    jax.clear_caches()                 # (JAX keeps what it lowered for the eager call)
    with jt.targets("sm90"):
        compile_add()
    meta, ptx = sm90_of(record[1].kernel)
    assert meta["launch_pdl"] is True and waits_first(ptx)
    monkeypatch.setenv(pdl.ENV, "yes")
    with jt.targets("sm90"), pytest.raises(ValueError, match="TRIDENT_JAX_PDL='yes'.*expected 0"):
        compile_add(num_warps=2)
    # refused too where no kernel would get PDL: an older target, the caller's own choice (JAX's CPU platform
    # compiles no CUDA target: the variable is not read there)
    with jt.targets("sm80"), pytest.raises(ValueError, match="TRIDENT_JAX_PDL='yes'"):
        compile_add(num_warps=2)
    with jt.targets("sm90"), pytest.raises(ValueError, match="TRIDENT_JAX_PDL='yes'"):
        compile_add(num_warps=2, launch_pdl=False)


def set_user_hook(monkeypatch, key):
    """A stages hook of the caller's, set in Triton's knob: (the hook, the languages it was called for); asked for
    its part of a compile key (Triton 3.7+), it gives key."""
    from triton import knobs
    seen = []

    def user_hook(*args):
        if not args:
            return key
        seen.append(args[3])
    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook", user_hook)
    return user_hook, seen


def test_tritons_cache_keeps_patched_and_plain_apart(record, fresh_cache, monkeypatch):
    """Triton's own compilation of the same source with launch_pdl (the caller's promise that it waits) is not
    served trident's patched entry, nor trident Triton's; the stages hook is Triton's only while trident
    compiles, and a hook of the caller's is chained and left in place."""
    from triton import knobs
    user_hook, seen = set_user_hook(monkeypatch, ("", ""))
    monkeypatch.delenv("TRITON_ALWAYS_COMPILE", raising=False)
    with jt.targets("sm90"):
        compile_add(num_warps=8)
    _, ptx = sm90_of(record[0].kernel)
    assert waits_first(ptx) and seen and knobs.runtime.add_stages_inspection_hook is user_hook
    src = triton.compiler.ASTSource(pdl_add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                                     "n_elements": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256})
    plain = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"launch_pdl": True, "num_warps": 8})
    assert plain.metadata.launch_pdl and "griddepcontrol" not in plain.asm["ptx"]


PTX = """.version 8.4
.target sm_90a
.address_size 64

.visible .entry first(
\t.param .u64 first_param_0
)
.reqntid 128
{
\t.reg .b32 \t%r<3>;
\t.reg .b64 \t%rd<2>;

\t.loc\t1 4 0
$L__func_begin0:
\tld.param.u64 \t%rd1, [first_param_0];
\tret;
}
.entry second(
)
{
\tret;
}
"""


def test_patch_ptx():
    out = pdl.patch_ptx(PTX)
    assert pdl.is_patched(out) and not pdl.is_patched(PTX)
    first = out[out.index(".entry first"):out.index(".entry second")]
    # after the declarations, before the first instruction
    assert first.index("%rd<2>;") < first.index("griddepcontrol.wait;") < first.index("ld.param")
    assert out.count("griddepcontrol.wait;") == 2 and out.replace(pdl._PROLOGUE, "") == PTX
    # a declaration line with an instruction after it (inline asm) is not skipped: the wait comes before it
    asm = PTX.replace("\t.reg .b64 \t%rd<2>;\n", "\t.reg .b64 \t%rd<2>;\n\t.reg .u32 t; ld.global.u32 t, [%rd1];\n")
    first = pdl.patch_ptx(asm)
    assert first.index("griddepcontrol.wait;") < first.index("ld.global") < first.index("ld.param")
    with pytest.raises(jt.CompileError, match="no .entry"):
        pdl.patch_ptx(".version 8.4\n.func f()\n{\nret;\n}\n")
    with pytest.raises(jt.CompileError, match="'broken' has no body"):
        pdl.patch_ptx(".entry broken(\n)\n")


def test_is_patched_asks_each_entry_to_begin_with_the_prologue():
    """is_patched: every entry's first instructions are the prologue, not the prologue's text found as often as
    there are entries: one entry patched twice and the other not, or the two instructions (inline asm of the
    kernel's own) after a load, are not a compilation patch_ptx made."""
    out = pdl.patch_ptx(PTX)
    second = out.index(".entry second")
    twice_and_none = out[:second] + out[second:].replace(pdl._PROLOGUE, "")
    twice_and_none = twice_and_none.replace("$L__func_begin0:\n", "$L__func_begin0:\n" + pdl._PROLOGUE)
    assert not pdl.is_patched(twice_and_none)
    late = PTX.replace("\tret;\n}\n.entry", "\t" + pdl._PROLOGUE.strip() + "\n\tret;\n}\n.entry")
    late = late.replace("{\n\tret;\n}\n", "{\n\tret;\n" + pdl._PROLOGUE + "}\n")
    assert late.count(pdl._PROLOGUE) == 2 and not pdl.is_patched(late)
    assert not pdl.is_patched(".entry broken(\n)\n" + pdl._PROLOGUE)


def test_store_binary_only_compiles_without_pdl(record, fresh_cache, monkeypatch, tmp_path):
    """TRITON_STORE_BINARY_ONLY: Triton keeps no PTX that could show the wait, so no PDL (not a CompileError)."""
    monkeypatch.setenv(pdl.ENV, "1")
    # Triton's knobs through the environment: setting a knob writes os.environ too, which monkeypatch does not undo
    monkeypatch.setenv("TRITON_STORE_BINARY_ONLY", "1")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    with jt.targets("sm90"):
        compile_add(num_warps=2)
    cubin = next(t for t in record[0].kernel.targets if t.format == "cubin" and t.arch == "sm90")
    assert cubin.metadata["launch_pdl"] is False


def test_hook_taken_before_it_was_put_back_still_chains(monkeypatch):
    """A thread of Triton's may take trident's hook from the knob just before the last compilation with it ends
    (and the user's hook is put back): calling it then still calls the user's hook, and patches nothing."""
    from triton import knobs

    from trident.jax.triton_shims import ptx_patched
    user_hook, seen = set_user_hook(monkeypatch, ("user-key", "user-hash"))
    with ptx_patched(lambda ptx: ptx + "patched"):
        taken = knobs.runtime.add_stages_inspection_hook
    assert taken is not user_hook and knobs.runtime.add_stages_inspection_hook is user_hook
    stages = {"ptx": lambda src, metadata: src}
    taken(None, stages, None, "language", 90)
    assert seen == ["language"] and taken() == ("user-key", "user-hash")
    assert stages["ptx"]("ptx", {}) == "ptx"


def test_hook_put_back_by_another_is_not_chained_to_itself(monkeypatch):
    """Another tool that saved trident's hook while it was set, and put it back after trident's compilation
    ended, leaves trident's hook in the knob: the next compilation chains to the user's hook once and patches once
    (not to trident's old hook, which patched twice, or with a global prev, recursed), and the user's is put back."""
    from triton import knobs

    from trident.jax.triton_shims import ptx_patched
    user_hook, seen = set_user_hook(monkeypatch, ("", ""))
    with ptx_patched(lambda ptx: ptx + "+patched"):
        ours = knobs.runtime.add_stages_inspection_hook
        knobs.runtime.add_stages_inspection_hook = lambda *args: None   # the other tool's, saving ours
    knobs.runtime.add_stages_inspection_hook = ours                     # ... which it puts back
    with ptx_patched(lambda ptx: ptx + "+patched"):
        stages = {"ptx": lambda src, metadata: src}
        knobs.runtime.add_stages_inspection_hook(None, stages, None, "language", 90)
        assert stages["ptx"]("ptx", {}) == "ptx+patched" and seen == ["language"]
    assert knobs.runtime.add_stages_inspection_hook is user_hook


def test_compile_key_names_the_patch(monkeypatch):
    """trident's disk cache key names the patch's version (pdl.MARK), as Triton's does: a kernel patched by an
    older patch_ptx is not served after the patch changes."""
    from trident.jax import compile as tc
    from trident.jax.platforms import target
    monkeypatch.setenv(pdl.ENV, "1")
    args = (pdl_add_kernel, target("sm90"), {"x_ptr": "*fp32"}, {}, {}, {})
    key = tc.compile_key(*args)
    monkeypatch.setattr(pdl, "MARK", "trident-entry-pdl-test")
    assert tc.compile_key(*args) != key


def test_unpatched_compilation_is_refused_and_not_kept(record, fresh_cache, monkeypatch, tmp_path):
    """A compilation for PDL made while another hook replaced trident's is refused, and Triton's cache entry of it
    is forgotten: once the hook is trident's again, the kernel compiles (not refused again from the cache)."""
    from triton import knobs

    from trident.jax import compile as tc
    monkeypatch.setenv(pdl.ENV, "1")
    monkeypatch.delenv("TRITON_ALWAYS_COMPILE", raising=False)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook", None)   # put back after the test
    real = triton.compile

    def replaced(src, **kw):
        knobs.runtime.add_stages_inspection_hook = None   # another tool's, while trident compiles
        return real(src, **kw)
    monkeypatch.setattr(triton, "compile", replaced)
    with jt.targets("sm90"), pytest.raises(jt.CompileError, match="does not wait at its entry"):
        compile_add(num_warps=1)
    monkeypatch.setattr(triton, "compile", real)
    monkeypatch.setattr(tc, "_compiled", tc.LRU(512))
    jax.clear_caches()
    with jt.targets("sm90"):
        compile_add(num_warps=1)
    meta, ptx = sm90_of(record[-1].kernel)
    assert meta["launch_pdl"] is True and waits_first(ptx)


CHAIN_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import jax, jax.numpy as jnp, numpy as np
import trident.jax as jt
from test_jax_pdl import pdl_add_kernel

n = 1 << 22   # many programs: an add still running when what follows it is scheduled

def chain_of(add):
    def chain(x, y):
        for _ in range(8):   # the add and XLA's own kernels, each reading the other's result at once
            x = add(x, y)
            y = jnp.sqrt(jnp.abs(x)) - y
            x = jax.lax.optimization_barrier(x * np.float32(0.5))
        return x, y
    return jax.jit(chain)

def trident_add(**opts):
    return lambda x, y: jt.triton_call(x, y, kernel=pdl_add_kernel, out_shape=x, grid=(jt.cdiv(n, 1024),),
                                       n_elements=n, BLOCK=1024, **opts)

def reference(x, y):
    for _ in range(8):
        x = x + y
        y = np.sqrt(np.abs(x)) - y
        x = x * np.float32(0.5)
    return x, y

# the same program but for PDL, and with XLA's own add: the same bits (IEEE float32 adds)
pdl, plain = chain_of(trident_add()), chain_of(trident_add(launch_pdl=False))
xla = chain_of(lambda x, y: jax.lax.optimization_barrier(x + y))
rng = np.random.default_rng(24)
bad = []
for run in range(6):   # new inputs each run: new buffers, XLA updates its command buffer
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    got = [np.asarray(v) for v in pdl(jnp.asarray(x), jnp.asarray(y))]
    want = [np.asarray(v) for v in plain(jnp.asarray(x), jnp.asarray(y))]
    own = [np.asarray(v) for v in xla(jnp.asarray(x), jnp.asarray(y))]
    differ = sum(int(np.sum(g != w)) for g, w in zip(got, want))
    differ_xla = sum(int(np.sum(g != w)) for g, w in zip(got, own))
    # NumPy's float32 sqrt and XLA's differ in the last bit, which the chain's sqrt near 0 magnifies (0.0092 seen)
    err = max(float(np.max(np.abs(w - r))) for w, r in zip(want, reference(x, y)))
    print(f"run {run}: {differ} elements differ from the launch without PDL, {differ_xla} from XLA's own add; "
          f"without PDL vs NumPy max |d| {err:.3g}")
    if differ or differ_xla or err > 0.05:
        bad.append(run)
print("ok" if not bad else f"wrong in runs {bad}")
"""


@pytest.mark.parametrize("command_buffers", [True, False], ids=["command-buffers", "no-command-buffers"])
def test_pdl_kernels_between_xlas_give_right_results(gpu, tmp_path, command_buffers):
    """On the GPU: trident's sm90+ kernels (launched with PDL, triggering and waiting at their entry) between XLA's
    own kernels, each reading the other's result: every element the same bits as with launch_pdl=False and as with
    XLA's own add (and close to NumPy's), with XLA's command buffers (PDL edges where the call is a kernel node)
    and without."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", TRIDENT_CACHE_DIR=str(tmp_path / "trident"),
               PYTHONPATH=os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(os.path.dirname(jt.__file__))),
                                                      os.environ.get("PYTHONPATH", "")] if p))
    env.pop(pdl.ENV, None)   # the default
    if not command_buffers:
        env["XLA_FLAGS"] = "--xla_gpu_enable_command_buffer="
    r = subprocess.run([sys.executable, "-c", CHAIN_SCRIPT, os.path.dirname(os.path.abspath(__file__))], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().splitlines()[-1:] == ["ok"], (r.stdout[-2000:], r.stderr[-4000:])
