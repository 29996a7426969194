#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compiles a Triton fp32 matmul at several configurations for sm90 (no GPU needed) and bundles them as
variants of one kernel, for examples/tune_matmul (the tuner choosing among them at run time):

    python3 bench/make_tune_matmul.py OUT.trdb [TRIDENT]
    build/examples/tune_matmul OUT.trdb 4096 4096 4096

The kernel's launch parameters are the host twin's (a, b, c, M, N, K; row-major; program_id(0) over row
blocks, program_id(1) over column blocks), so the example's grid rule serves both.
"""
import os
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # the default Triton 3.9 warns about
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402


@triton.jit
def matmul_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ka = k0 + rk
        x = tl.load(a + rm[:, None] * K + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
        y = tl.load(b + ka[:, None] * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, y, input_precision="ieee")
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): a small, a middle and a large tile
CONFIGS = [(32, 32, 32, 4, 2), (64, 64, 32, 4, 3), (128, 128, 32, 8, 3)]
SIG = {"a": "*fp32", "b": "*fp32", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32",
       "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out, trident = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "build/tools/trident"
    work = tempfile.mkdtemp()
    entries, configs = [], []
    for i, (bm, bn, bk, warps, stages) in enumerate(CONFIGS):
        cache = os.path.join(work, f"cache{i}")
        os.environ["TRITON_CACHE_DIR"] = cache
        src = triton.compiler.ASTSource(fn=matmul_kernel, signature=SIG,
                                        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk})
        triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})
        (entry,) = os.listdir(cache)
        entries.append(os.path.join(cache, entry, "matmul_kernel.json"))
        configs.append(f"BLOCK_M={bm},BLOCK_N={bn},BLOCK_K={bk},num_warps={warps},num_stages={stages}")
    cmd = [trident, "bundle", "-o", out, "--variants"]
    for config in configs:  # the grid rule: trident run --tune needs no -g
        cmd += ["--config", config, "--grid", "cdiv(M,BLOCK_M),cdiv(N,BLOCK_N)"]
    subprocess.run(cmd + entries, check=True)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
