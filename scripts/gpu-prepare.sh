#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpu-prepare.sh: makes, on the development machine, everything scripts/gpu-check.sh needs on a GPU
# machine that has no network and none of the build's libraries: a build tree configured against this
# checkout at its own path (.device/build, test programs and benchmarks built, not run), the shared
# libraries it links that such a machine may lack (.device/lib), and the kernels compiled by other Triton
# releases (.device/triton-*). Carry .device to the GPU machine and run scripts/gpu-check.sh there.
#
#   scripts/gpu-prepare.sh            # PYTHON= the interpreter whose jaxlib gives the XLA FFI header
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python3}
[ -x "$ROOT/configure" ] || (cd "$ROOT" && autoreconf -fi)
mkdir -p "$ROOT/.device/build" "$ROOT/.device/lib"
cd "$ROOT/.device/build"
[ -f Makefile ] || "$ROOT/configure" PYTHON="$PY" >/dev/null
make -j"$(nproc)" >/dev/null
make -j"$(nproc)" check TESTS= >/dev/null          # the test programs and test drivers, not run
# every non-system library a built object needs, from this machine
{ find . -name '*.so*' -o -type f -perm -u+x | xargs -r ldd 2>/dev/null || true; } |
    awk '/=> \// {print $3}' | sort -u | grep -E 'libinih|libjansson|libelf|libcheck|libsubunit|libINIReader' |
    while read -r lib; do cp -L "$lib" "$ROOT/.device/lib/"; done || true   # ldd fails on static files
"$ROOT/scripts/triton-release-kernels.sh" 3.9.0
# jax-triton for the comparisons (pure Python; jax-triton 0.3.1 is the release for Triton 3.6 and jax 0.8.2+, 0.4
# needs Triton 3.7): `pip download jax-triton==0.3.1 --no-deps -d .whl` first; gpu-check.sh puts .device/py on
# PYTHONPATH
for w in "$ROOT"/.whl/jax_triton-*.whl; do
    [ -f "$w" ] && mkdir -p "$ROOT/.device/py" && (cd "$ROOT/.device/py" && python3 -m zipfile -e "$w" .)
done
du -sh "$ROOT/.device"
