#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# triton-releases.sh: trident against each Triton release it supports other than the default
# .venv's (the newest, under which make check runs the whole Python suite), each in a venv of its
# own, .venv-triton-<major.minor>, made on first use (a second run reuses it):
#   - the oldest supported release: the whole CPU Python suite;
#   - the releases between: tests/test_triton_release.py (the option tables against that release's
#     CUDAOptions/HIPOptions, every option by keyword, the fixture kernels compiled for sm90 and
#     gfx942 with their metadata and kernel parameters checked against what trident passes).
#
#   scripts/triton-releases.sh [BUILD_DIR]        (default: build/)
#   TRITON_SUITE_RELEASES / TRITON_CHECK_RELEASES  override the two lists ("" skips one)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
SUITE=${TRITON_SUITE_RELEASES-3.6.0}
CHECK=${TRITON_CHECK_RELEASES-3.7.0 3.8.0}
source "$ROOT/scripts/triton-venv.sh"

export TRD_BUILDDIR="$BUILD" TRD_SRCDIR="$ROOT"
for v in $SUITE; do
    py=$(triton_venv "$v")
    echo "== Python suite under Triton $v"
    PYTHON="$py" "$ROOT/tests/python.sh"
done
for v in $CHECK; do
    py=$(triton_venv "$v")
    echo "== Triton $v: option tables, every option, fixture kernels and their parameters"
    PYTHON="$py" "$ROOT/tests/python.sh" tests/test_triton_release.py
done
