#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# triton-release-kernels.sh: kernels compiled here (no GPU needed) by Triton releases other than the
# one a GPU machine has, for python/tests/test_triton_release_gpu.py to run there: each release's
# fixture kernels (add, scratch, scalars) for sm90 into .device/triton-<major.minor>/ (git ignores
# .device/), from the venvs scripts/triton-releases.sh uses.
#
#   scripts/triton-release-kernels.sh [RELEASE...]      default: 3.9.0 3.8.0 3.7.0
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/triton-venv.sh"
for v in ${*:-3.9.0 3.8.0 3.7.0}; do
    py=$(triton_venv "$v")
    "$py" "$ROOT/tests/fixtures/release_kernels.py" "$ROOT/.device/triton-${v%.*}"
done
