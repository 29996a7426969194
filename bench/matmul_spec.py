#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""matmul_spec: why the same Triton matmul runs 3.5x faster through
trident.jax than through jax-triton. Compiles bench/suite_kernels.py's matmul (fp16,
8192^3, BM 128 BN 256 BK 64, 8 warps, 3 stages) for sm90 through both
packages, on any machine (no GPU needed), and compares what each tells Triton
about the arguments (the specialization: tt.divisibility on pointers and
integers) and what Triton made of it (TTGIR: the loads' vector width, the
asynchronous copies of the software pipeline, wgmma).

    python3 bench/matmul_spec.py [OUT_DIR]     # prints a table; keeps both TTIRs and TTGIRs in OUT_DIR

jax-triton's path is its own compile function (jax_triton.triton_lib.
get_or_create_triton_kernel) with compute_capability=90; on a machine whose
jaxlib has no GPU support its jaxlib module is replaced by a recorder (the
function only needs TritonKernel from it). Without jax-triton installed that
column reads "not installed"."""
from __future__ import annotations

import os
import re
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "python"))

SIZE = 8192
META = dict(BM=128, BN=256, BK=64, GROUP_M=8)
NUM_WARPS, NUM_STAGES = 8, 3
INT_ARGS = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")


def _read_stages(d: Path) -> dict[str, str]:
    out = {}
    for ext in ("ttir", "ttgir"):
        files = sorted(d.rglob(f"*.{ext}"))
        if files:
            out[ext] = files[0].read_text()
    return out


def compile_trident(dump: Path) -> dict[str, str]:
    """TTIR and TTGIR of the matmul as trident.jax compiles it for sm90 (lowered for the CPU platform)."""
    import jax
    import jax.numpy as jnp
    import trident.jax as tj
    from trident.jax import compile as tjc
    import suite_kernels as kernels

    os.environ["JAX_TRITON_DUMP_DIR"] = str(dump)
    os.environ["TRIDENT_JAX_CACHE"] = "0"
    tjc._compiled.clear()
    a = jax.ShapeDtypeStruct((SIZE, SIZE), jnp.float16)

    def f(x, y):
        return tj.triton_call(x, y, SIZE, SIZE, SIZE, SIZE, 1, SIZE, 1, SIZE, 1, kernel=kernels.matmul_kernel,
                              out_shape=a, grid=((SIZE // META["BM"]) * (SIZE // META["BN"]),),
                              num_warps=NUM_WARPS, num_stages=NUM_STAGES, **META)
    try:
        with tj.targets("sm90"):
            jax.jit(f).lower(a, a)
    finally:
        del os.environ["JAX_TRITON_DUMP_DIR"]
        del os.environ["TRIDENT_JAX_CACHE"]
    return _read_stages(dump)


def _jax_triton(dump: Path):
    """jax_triton.triton_lib, importable on a CPU-only jaxlib (its jaxlib module replaced by a recorder)."""
    os.environ["JAX_TRITON_DUMP_DIR"] = str(dump)   # read when jax-triton is imported
    try:
        import jax_triton.triton_lib as jtl
        return jtl
    except ImportError as e:
        if "GPU support" not in str(e):
            raise
    from jax._src.lib import gpu_triton
    for n in ("get_serialized_metadata", "create_array_parameter", "create_scalar_parameter", "TritonKernelCall",
              "TritonAutotunedKernelCall", "get_compute_capability"):
        setattr(gpu_triton, n, lambda *a, **k: None)
    gpu_triton.TritonKernel = lambda *a: types.SimpleNamespace(args=a)
    for m in [m for m in sys.modules if m.startswith("jax_triton")]:
        del sys.modules[m]
    import jax_triton.triton_lib as jtl
    return jtl


def compile_jax_triton(dump: Path) -> dict[str, str]:
    """TTIR and TTGIR of the same call as jax-triton 0.3 compiles it (its lowering's arguments for this call)."""
    cache = os.environ.get("TRITON_CACHE_DIR")
    try:
        jtl = _jax_triton(dump)
    finally:
        # jax-triton turns Triton's cache off for the whole process when imported
        if cache is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = cache
    import suite_kernels as kernels
    ints = [SIZE, SIZE, SIZE, SIZE, 1, SIZE, 1, SIZE, 1]
    arg_dtypes = ["*fp16", "*fp16"] + [jtl.get_triton_type(v) for v in ints] + ["*fp16"]
    scalar_args = [(2 + i, n, v) for i, (n, v) in enumerate(zip(INT_ARGS, ints))]
    stages = {}

    def backend(device, cc):
        # jax-triton lowers its module in place, so the TTGIR it dumps is already LLVM IR: keep it here
        b = jtl.get_cuda_backend(device, cc)
        make_ttgir = b.make_ttgir

        def keep(*a):
            mod = make_ttgir(*a)
            stages["ttgir"] = str(mod)
            return mod
        b.make_ttgir = keep
        return b
    jtl.get_or_create_triton_kernel(backend, "cuda", kernels.matmul_kernel, arg_dtypes, scalar_args,
                                    num_warps=NUM_WARPS, num_stages=NUM_STAGES, num_ctas=1, compute_capability=90,
                                    enable_fp_fusion=True, metaparams=META, dump=False)
    (dump / "matmul_kernel.kept.ttgir").write_text(stages["ttgir"])
    return {**_read_stages(dump), **stages}


# ------------------------------------------------------------------ analysis

def arg_attrs(ttir: str) -> dict[str, str]:
    """The kernel's parameters as the TTIR declares them: name -> its attributes ('' when none; 'constexpr 1'
    for an integer Triton compiled in because it equals 1)."""
    m = re.search(r"tt\.func public @\w+\((.*?)\) attributes", ttir, re.S)
    if not m:
        return {}
    out = {n: "constexpr 1" for n in ("a_ptr", "b_ptr", "c_ptr", *INT_ARGS)}
    for name, attrs in re.findall(r"%(\w+): [^{l]*(?:\{([^}]*)\})?\s*loc", m.group(1)):
        out[name] = attrs.strip()
    return out


def ttgir_facts(ttgir: str) -> dict[str, str]:
    """What the TTGIR says about the main loop: wgmma, the pipeline's async copies and the loads' vector width."""
    vec = sorted({int(v) for v in re.findall(r"sizePerThread = \[(?:\d+, )*(\d+)\]", ttgir)})
    return {
        "wgmma (ttng.warp_group_dot)": str(len(re.findall(r"ttng\.warp_group_dot ", ttgir))),
        "async copies (ttg.async_copy_global_to_local)": str(len(re.findall(r"ttg\.async_copy_global_to_local", ttgir))),
        "TMA loads (async_tma_copy)": str(len(re.findall(r"async_tma_copy_global_to_local", ttgir))),
        "plain tt.load in the loop": str(len(re.findall(r"= tt\.load ", ttgir))),
        "blocked layouts' innermost sizePerThread": ",".join(map(str, vec)) or "-",
    }


def main() -> int:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="matmul_spec-"))
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    results: dict[str, dict[str, str] | str] = {}
    for name, fn in (("trident.jax", compile_trident), ("jax-triton", compile_jax_triton)):
        d = out_dir / name.replace(".", "_")
        d.mkdir(parents=True, exist_ok=True)
        try:
            results[name] = fn(d)
        except ModuleNotFoundError as e:
            results[name] = f"not installed ({e.name})"
        except Exception as e:  # a path that fails prints its row
            results[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160]
    names = list(results)
    print(f"matmul_spec: fp16 {SIZE}^3, BM {META['BM']} BN {META['BN']} BK {META['BK']}, {NUM_WARPS} warps, "
          f"{NUM_STAGES} stages, compiled for sm90; stages kept in {out_dir}\n")
    print("| what | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    attrs = {n: arg_attrs(r["ttir"]) if isinstance(r, dict) and "ttir" in r else {} for n, r in results.items()}
    facts = {n: ttgir_facts(r["ttgir"]) if isinstance(r, dict) and "ttgir" in r else {} for n, r in results.items()}
    for n, r in results.items():
        if not isinstance(r, dict):
            attrs[n] = {}
    for p in ["a_ptr", "b_ptr", "c_ptr", *INT_ARGS]:
        cells = [attrs[n].get(p, results[n] if isinstance(results[n], str) else "?") or "(none)" for n in names]
        print(f"| TTIR parameter {p} | " + " | ".join(cells) + " |")
    keys = next((list(f) for f in facts.values() if f), [])
    for k in keys:
        print(f"| TTGIR: {k} | " + " | ".join(facts[n].get(k, "-") for n in names) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
