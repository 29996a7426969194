# SPDX-License-Identifier: Apache-2.0
"""trident against the installed Triton, whatever its release: CI runs this file under each release it
supports (scripts/triton-releases.sh), so that a new release shows up here as a failing test, not as a
user's bug report.

- The option tables (options/cuda.c, hip.c) against the installed CUDAOptions and HIPOptions: the
  fields of this release in dataclass order, their types, their defaults, and what parse_options
  derives for real targets.
- Every backend option of this release reaches the compiler by keyword through triton_call.
- The launch ABI: the parameters trident passes (its launch signature and the two scratch pointers)
  against the parameters of the kernel Triton compiled (its PTX entry, its AMDGPU kernel arguments),
  for the fixture kernels and for host tensor descriptors; the metadata of each fixture kernel reads
  in libtrident.
"""
from __future__ import annotations

import ctypes
import dataclasses
import json
import re
import sys
import warnings

import jax.numpy as jnp
import pytest
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

import trident
import trident.jax as jt
from trident._lib import check, lib
from trident.jax import compile as jt_compile
from trident.jax import routing

from conftest import SRC

REL = triton.__version__
TABLES = {"cuda": "CUDAOptions", "hip": "HIPOptions"}
# targets whose derived defaults are compared: what Triton's parse_options gives for each
TARGETS = [GPUTarget("cuda", 80, 32), GPUTarget("cuda", 90, 32), GPUTarget("cuda", 100, 32),
           GPUTarget("hip", "gfx942", 64), GPUTarget("hip", "gfx950", 64), GPUTarget("hip", "gfx1100", 32)]


def option_class(table):
    module = {"cuda": "triton.backends.nvidia.compiler", "hip": "triton.backends.amd.compiler"}[table]
    return getattr(__import__(module, fromlist=[TABLES[table]]), TABLES[table])


def type_text(t) -> str:
    return t.__name__ if isinstance(t, type) else str(t).replace("typing.", "")


def default_of(f: dataclasses.Field):
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else None


def text(v) -> str:
    """A Python value as trident's tables print it."""
    if isinstance(v, tuple) and v and all(isinstance(x, tuple) for x in v):   # llvm_fn_attrs as Triton parses it
        return ",".join(f"{a}={b}" if b else a for a, b in v)
    return trident._option_text(v)


@pytest.fixture
def fp_fusion_unset(monkeypatch):
    """parse_options as a user gets it: TRITON_DEFAULT_FP_FUSION unset (Triton 3.9 warns about it then)."""
    monkeypatch.delenv("TRITON_DEFAULT_FP_FUSION", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ------------------------------------------------------------------ tables

@pytest.mark.parametrize("table", TABLES)
def test_table_has_exactly_this_releases_fields_in_order(table):
    fields = [f.name for f in dataclasses.fields(option_class(table))]
    assert trident.option_names(table, REL) == fields, f"trident's {table} table for Triton {REL}"
    rel = trident.option_releases(table)
    assert ".".join(REL.split(".")[:2]) in rel["tested"], \
        f"Triton {REL} is not among the releases the {table} table says CI tests ({rel['tested']})"


@pytest.mark.parametrize("table", TABLES)
def test_table_types_and_defaults(table):
    rows = {o["name"]: o for o in trident.options(table, REL)}
    for f in dataclasses.fields(option_class(table)):
        row = rows[f.name]
        assert row["type"].startswith(type_text(f.type)), f"{table}.{f.name}: {row['type']} vs {type_text(f.type)}"
        want = text(default_of(f))
        # a default the table states otherwise must say why: parse_options replaces the dataclass's
        if row["default"] != want:
            assert row["derived"], f"{table}.{f.name} in {REL}: default {row['default']!r}, the dataclass {want!r}"


def trident_values(table: str, arch: str) -> dict[str, str]:
    """trident's defaults for this release and a target: the release's static defaults, and what the
    tables derive from the target (an options object, which follows the newest release, with arch set)."""
    L = lib()
    o = ctypes.c_void_p()
    check(L.trd_options_create(table.encode(), ctypes.byref(o)))
    try:
        check(L.trd_options_set(o, b"arch", arch.encode()))
        out = {}
        for row in trident.options(table, REL):
            out[row["name"]] = row["default"]
            if row["derived"]:
                buf = ctypes.create_string_buffer(4096)
                n = ctypes.c_size_t()
                check(L.trd_options_get(o, row["name"].encode(), buf, len(buf), ctypes.byref(n)))
                out[row["name"]] = buf.value.decode()
        return out
    finally:
        L.trd_options_destroy(o)


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: f"{t.backend}-{t.arch}")
def test_defaults_are_what_parse_options_gives(target, fp_fusion_unset):
    table = target.backend
    opts = triton.compiler.make_backend(target).parse_options({})
    arch = f"sm{target.arch}" if table == "cuda" else target.arch
    mine = trident_values(table, arch)
    for f in dataclasses.fields(opts):
        if f.name == "extern_libs":
            continue   # Triton always adds its own libraries (libdevice, ocml, ockl); trident adds none
        theirs = text(getattr(opts, f.name))
        assert mine[f.name] == theirs, f"{table}.{f.name} for {arch} in Triton {REL}: trident {mine[f.name]!r}"
    if table == "hip":   # not a field: the launcher's block size follows it
        assert mine["warp_size"] == str(opts.warp_size)


# ---------------------------------------------------------- every option

@triton.jit
def rel_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


X = jnp.zeros((1024,), jnp.float32)
# a value other than the default, where one compiles the add kernel and reaches the metadata unchanged
VALUES = {
    "cuda": {"num_warps": 8, "num_stages": 2, "maxnreg": 128, "enable_fp_fusion": False, "enable_reflect_ftz": False,
             "launch_cooperative_grid": True, "launch_pdl": True, "debug": True, "sanitize_overflow": False,
             "sched4reg": True, "fpsan_homomorphic_casts": True, "min_shared_mem": 65536,
             "default_dot_input_precision": "ieee"},
    "hip": {"num_warps": 8, "waves_per_eu": 2, "num_stages": 1, "debug": True, "sanitize_overflow": False,
            "enable_fp_fusion": False, "matrix_instr_nonkdim": 16, "kpack": 2, "allow_flush_denorm": True,
            "fpsan_homomorphic_casts": True, "wgp_cu_mode": "cu", "default_dot_input_precision": "bf16x3"},
}


def release_fields():
    return [(t, f.name) for t in TABLES for f in dataclasses.fields(option_class(t))]


@pytest.mark.parametrize("table, name", release_fields(), ids=lambda v: v)
def test_every_option_of_this_release_passes_by_keyword(table, name, record, fp_fusion_unset):
    f = next(f for f in dataclasses.fields(option_class(table)) if f.name == name)
    value = VALUES[table].get(name, default_of(f))
    with jt.targets("sm90" if table == "cuda" else "gfx942"):
        jt.triton_call(X, X, kernel=rel_add_kernel, out_shape=X, grid=(4,), n_elements=1024, BLOCK=256,
                       **{name: value})
    meta = record[-1].kernel.targets[0].metadata
    if name in VALUES[table]:
        assert meta[name] == value, f"{table}.{name}={value!r} compiled into {meta.get(name)!r}"


def test_an_option_of_another_release_is_an_unknown_keyword_naming_this_one():
    # sched4reg is 3.9's; llvm_fn_attrs 3.8's (HIP): each is unknown to the releases before
    name, since = ("sched4reg", (3, 9)) if jt_compile.TRITON_RELEASE < (3, 9) else ("cluster_dims", (3, 0))
    with jt.targets("sm90"), pytest.raises(jt.OptionError) as e:
        jt.triton_call(X, X, kernel=rel_add_kernel, out_shape=X, grid=(4,), n_elements=1024, BLOCK=256,
                       **{name: True})
    assert f"unknown keyword argument '{name}'" in str(e.value)
    assert f"nor a backend option of Triton {REL}" in str(e.value)


def test_a_field_the_tables_do_not_know_goes_to_triton_with_one_warning(record, monkeypatch):
    # a release newer than the tables: its CUDAOptions has a field trident has never seen
    real = routing.installed_fields("cuda")
    monkeypatch.setattr(routing, "installed_fields", lambda table: real + ("brand_new_knob",) if table == "cuda"
                        else routing.installed_fields.__wrapped__(table))
    routing.untabled.cache_clear()
    monkeypatch.setattr(routing, "_warned", set())
    seen = {}
    real_compile = triton.compile

    def spy(src, target=None, options=None):
        seen.update(options or {})
        return real_compile(src, target=target, options=options)

    monkeypatch.setattr(triton, "compile", spy)
    try:
        with jt.targets("sm90"), pytest.warns(UserWarning, match="do not know: brand_new_knob; they are passed to "
                                                                 "Triton unchecked"):
            for block in (128, 64):
                jt.triton_call(X, X, kernel=rel_add_kernel, out_shape=X, grid=(4,), n_elements=1024, BLOCK=block,
                               brand_new_knob=3)
        assert seen["brand_new_knob"] == 3
        assert len(record) == 2
    finally:
        routing.untabled.cache_clear()


# -------------------------------------------------------------- launch ABI

_PTX_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8}


def ptx_param_sizes(ptx: str) -> list[int]:
    body = re.search(r"\.entry\s+\w+\s*\((.*?)\)", ptx, re.S).group(1)
    sizes = []
    for p in body.split(","):
        bits = re.search(r"\.[usbf](8|16|32|64)\b", p).group(1)
        n = re.search(r"\[(\d+)\]", p)
        sizes.append(_PTX_BYTES[bits] * (int(n.group(1)) if n else 1))
    return sizes


def amdgpu_arg_sizes(amdgcn: str) -> list[int]:
    args = re.search(r"\.args:\n(.*?)\n\s{4}\.\w", amdgcn, re.S).group(1)
    return [int(v) for v in re.findall(r"\.size:\s+(\d+)", args)]


_TRIDENT_BYTES = {"i1": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "fp16": 2, "bf16": 2, "i32": 4, "u32": 4, "fp32": 4,
                  "i64": 8, "u64": 8, "fp64": 8, "nvTmaDesc": 128}


def launch_sizes(signature: str) -> list[int]:
    """What libtrident passes for a signature: each parameter, then the global and profile scratch pointers."""
    types = [p.split(":")[1] for p in signature.split(",")]
    return [8 if t.startswith("*") else _TRIDENT_BYTES[t] for t in types] + [8, 8]


sys.path.insert(0, str(SRC / "tests" / "fixtures"))
import make_fixtures  # noqa: E402

FIXTURES = [(v, b) for v, spec in make_fixtures.VARIANTS.items() for b in spec[4]]


@pytest.mark.parametrize("variant, backend", FIXTURES, ids=lambda v: v)
def test_fixture_kernel_compiles_and_its_metadata_and_parameters_are_what_trident_reads(variant, backend,
                                                                                       fp_fusion_unset):
    fn, sig, consts, opts, _, _ = make_fixtures.VARIANTS[variant]
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=consts)
    ck = triton.compile(src, target=make_fixtures.TARGETS[backend], options=dict(opts))
    name = ck.metadata.name
    signature = ",".join(f"{p}:{t}" for p, t in sig.items() if t != "constexpr")
    fmt, image = ("cubin", ck.asm["cubin"]) if backend == "cuda" else ("hsaco", ck.asm["hsaco"])
    meta = json.loads(next(open(p).read() for n, p in ck.metadata_group.items()
                           if n.endswith(".json") and not n.startswith("__grp")))
    assert meta["triton_version"] == REL
    # libtrident reads what this release wrote
    k = trident.Kernel(image, name=name, signature=signature, metadata=json.dumps(meta), format=fmt,
                       target=f"{backend}:{'sm90' if backend == 'cuda' else 'gfx942'}")
    t = k.targets[0]
    assert t.metadata["num_warps"] == opts["num_warps"] and t.metadata["num_ctas"] == opts.get("num_ctas", 1)
    assert t.metadata["shared"] == ck.metadata.shared
    for key in ("global_scratch_size", "profile_scratch_size"):
        assert t.metadata.get(key, 0) == getattr(ck.metadata, key, 0)
    if variant == "scratch":
        assert meta["global_scratch_size"] == 128 and meta["global_scratch_align"] >= 1
    # the kernel's parameters are what trident passes
    got = ptx_param_sizes(ck.asm["ptx"]) if backend == "cuda" else amdgpu_arg_sizes(ck.asm["amdgcn"])
    assert got == launch_sizes(signature), f"{backend}/{variant} compiled by Triton {REL}"


@triton.jit
def rel_desc_kernel(desc, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    x = desc.load([pid * BLOCK, 0])
    r = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + r[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :], x * 3)


@pytest.mark.parametrize("target", ["sm80", "sm90", "gfx942"])
def test_host_descriptor_parameters_match_the_kernels(target, record, monkeypatch, tmp_path, fp_fusion_unset):
    # sm80 and gfx942 take the descriptor decomposed (base, shape, strides, padding, from 3.7 tf32 rounding,
    # shape, strides); sm90 a CUtensorMap: trident's signature must be the kernel's parameter list
    monkeypatch.setenv("JAX_TRITON_DUMP_DIR", str(tmp_path))
    monkeypatch.setattr(jt_compile, "_compiled", jt_compile.LRU(8))
    monkeypatch.setattr(jt_compile._cache, "load_kernel", lambda key, identity: None)
    a = jnp.zeros((64, 16), jnp.float32)
    with jt.targets(target):
        jt.triton_call(jt.TensorDescriptor.from_array(a, [16, 16]), kernel=rel_desc_kernel, out_shape=a, grid=(4,),
                       BLOCK=16)
    sig = record[-1].kernel.signature
    ext = "amdgcn" if target.startswith("gfx") else "ptx"
    asm = next(p for p in tmp_path.rglob(f"*.{ext}")).read_text()
    got = amdgpu_arg_sizes(asm) if ext == "amdgcn" else ptx_param_sizes(asm)
    assert got == launch_sizes(sig), f"{sig} for {target} compiled by Triton {REL}"
