#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# wheel-gpu-check.sh [WHEEL]: on the GPU machine, with only the wheel carried (dist/trident_runtime-*.whl; no
# build tree, no libraries beside it): pip install --target a fresh directory (--no-deps: the machine's own
# jax, jaxlib and Triton serve), then from outside the checkout, with PYTHONPATH that directory and no
# TRIDENT_* or LD_LIBRARY_PATH, the bundled CLI's `trident devices`, the whole Python GPU suite, trident's
# examples (python/examples) and, where prepared, jax-triton's own examples with only the import changed
# (.peers/jax-triton-examples, git-ignored). Logs in $OUT (or .device/out-wheel).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHEEL=${1:-$(ls "$ROOT"/dist/trident_runtime-*.whl 2>/dev/null | head -1)}
[ -f "$WHEEL" ] || { echo "wheel-gpu-check: no wheel (scripts/build-wheel.sh makes dist/trident_runtime-*.whl)"; exit 1; }
LOGS=${OUT:-$ROOT/.device/out-wheel}
mkdir -p "$LOGS"
T=$(mktemp -d "${TMPDIR:-/tmp}/trident-wheel-gpu.XXXXXX")
trap 'rm -rf "$T"' EXIT
python3 -m pip install -q --no-deps --target "$T/site" "$WHEEL" || exit 1
cp -r "$ROOT/python/tests" "$T/tests"
cd "$T"
clean=(-u LD_LIBRARY_PATH)
for v in $(env | sed -n 's/^\(TRIDENT_[A-Za-z0-9_]*\)=.*/\1/p'); do clean+=(-u "$v"); done
# pytest, where the machine lacks it, from .device/py (pure Python, as gpu-check.sh carries it; never trident)
extra=
[ -d "$ROOT/.device/py" ] && [ ! -d "$ROOT/.device/py/trident" ] && extra=":$ROOT/.device/py"
run() { env "${clean[@]}" PYTHONPATH="$T/site$extra" PATH="$T/site/bin:$PATH" TRD_INSTALLED_IN="$T/site" \
        TRD_SRCDIR="$ROOT" TRD_BUILDDIR="$T/no-build-tree" XLA_PYTHON_CLIENT_PREALLOCATE=false "$@"; }
fails=0
step() { # name command...
    local name=$1
    shift
    run "$@" > "$LOGS/$name.log" 2>&1
    local rc=$?
    echo "== $name: rc=$rc  $(grep -E 'passed|failed|error' "$LOGS/$name.log" | tail -1)"
    [ $rc -eq 0 ] || { tail -20 "$LOGS/$name.log"; fails=$((fails + 1)); }
}
step devices "$T/site/bin/trident" devices
step drivers "$T/site/bin/trident" drivers
step python-gpu python3 -m pytest -q -rs -p no:cacheprovider tests
for ex in "$ROOT"/python/examples/*.py; do
    step "example-$(basename "$ex" .py)" python3 "$ex"
done
for ex in "$ROOT"/.peers/jax-triton-examples/*.py; do
    [ -f "$ex" ] && step "jax-triton-example-$(basename "$ex" .py)" python3 "$ex"
done
echo "wheel-gpu-check: $fails step(s) failed; logs in $LOGS"
[ $fails -eq 0 ]
