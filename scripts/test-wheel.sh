#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-wheel.sh: the wheel as a JAX user gets it. Builds it (scripts/build-wheel.sh, which also runs
# auditwheel show and scripts/check-wheel.py), installs it into a fresh venv outside the tree with the jax,
# jaxlib, Triton, numpy and pytest releases .venv has (from PyPI), and runs the Python suite on JAX's CPU
# platform (tests/python.sh's selection) from a copy of python/tests outside the tree, with no TRIDENT_*
# variable, no LD_LIBRARY_PATH and no PYTHONPATH: test_install.py checks that the package, libtrident, its XLA
# library and drivers and the `trident` command all come from the venv. The build tree (TRD_BUILDDIR, default
# build/) gives only the suite's data: its host kernels.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${TRD_BUILDDIR:-$ROOT/build}
"$ROOT/scripts/build-wheel.sh"
WHEEL=$(ls "$ROOT"/dist/trident_runtime-*.whl)
T=$(mktemp -d "${TMPDIR:-/tmp}/trident-wheel.XXXXXX")
trap 'rm -rf "$T"' EXIT
python3 -m venv "$T/venv"
mapfile -t pins < <("$ROOT/.venv/bin/python3" -m pip freeze 2>/dev/null |
    grep -iE '^(jax|jaxlib|triton|numpy|pytest|flatbuffers)==')
echo "test-wheel: pip install $(basename "$WHEEL") ${pins[*]} into a fresh venv"
"$T/venv/bin/python3" -m pip install -q "$WHEEL" "${pins[@]}"
cp -r "$ROOT/python/tests" "$T/tests"
cd "$T"
unset_args=(-u LD_LIBRARY_PATH -u PYTHONPATH)
for v in $(env | sed -n 's/^\(TRIDENT_[A-Za-z0-9_]*\)=.*/\1/p'); do unset_args+=(-u "$v"); done
env "${unset_args[@]}" PATH="$T/venv/bin:$PATH" TRD_SRCDIR="$ROOT" TRD_BUILDDIR="$B" TRD_INSTALLED_IN="$T/venv" \
    XDG_CONFIG_HOME="$T/config" XDG_CACHE_HOME="$T/cache" JAX_PLATFORMS=cpu \
    "$T/venv/bin/python3" -m pytest -q -rs -p no:cacheprovider tests "$@"
