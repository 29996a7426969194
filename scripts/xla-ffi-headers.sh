#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# xla-ffi-headers.sh: puts the XLA FFI headers of a jaxlib release (default: the newest trident knows) in
# .xla-ffi/include of the source tree, where configure looks first (xla/configure.m4). libtrident_xla built against
# the newest header runs on every jaxlib from 0.10.2 on (it reports each runtime the older API version) and has the
# RECORD stage only where the header does (0.11.2 and newer). The wheel is downloaded, not installed (pip download,
# any Python, PyPI needed); the headers are never committed (.gitignore).
#
#   scripts/xla-ffi-headers.sh [VERSION]     # VERSION: a jaxlib release, default 0.12.0.1
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VERSION=${1:-0.12.0.1}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python3}
[ -x "$PYTHON" ] || PYTHON=python3
DEST=$ROOT/.xla-ffi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# any platform tag carries the same headers; cp312 manylinux exists for every release trident knows
if ! "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_27_x86_64 \
        -d "$tmp" "jaxlib==$VERSION" >"$tmp/pip.log" 2>&1; then
    echo "xla-ffi-headers: pip could not download jaxlib $VERSION:" >&2
    tail -3 "$tmp/pip.log" >&2
    exit 1
fi
whl=$(ls "$tmp"/jaxlib-*.whl)
"$PYTHON" - "$whl" "$tmp/x" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.startswith("jaxlib/include/xla/ffi/api/") and n.endswith(".h")]
    if not any(n.endswith("/c_api.h") for n in names):
        sys.exit(f"xla-ffi-headers: {sys.argv[1]} has no jaxlib/include/xla/ffi/api/c_api.h")
    for n in names:
        z.extract(n, sys.argv[2])
PY
rm -rf "$DEST"
mkdir -p "$DEST"
mv "$tmp/x/jaxlib/include" "$DEST/include"
echo "$VERSION" >"$DEST/jaxlib-version"
minor=$(sed -n 's/^#define XLA_FFI_API_MINOR \([0-9]*\).*/\1/p' "$DEST/include/xla/ffi/api/c_api.h")
echo "xla-ffi-headers: jaxlib $VERSION's XLA FFI headers (API 0.$minor) in $DEST/include"
