#!/usr/bin/env bash
# The whole test suite: set up and build, then the unit tests (C and Python;
# GPU tests skip with a visible line without a GPU), the ABI check against the
# committed baseline, the fuzz targets for a bounded time, and the unit tests
# again under AddressSanitizer + UBSan and under valgrind.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")" && pwd)
"$ROOT/scripts/setup.sh"
cd "$ROOT/build"
echo "== make check"
make -j"$(nproc)" check || { cat test-suite.log; exit 1; }
echo "== make check-abi"
make check-abi
echo "== fuzz targets (bounded)"
"$ROOT/scripts/fuzz.sh" "${FUZZ_SECONDS:-20}"
echo "== make check-valgrind"
make check-valgrind
echo "== AddressSanitizer + UBSan"
mkdir -p "$ROOT/build-asan"
cd "$ROOT/build-asan"
[ -f Makefile ] || ../configure --enable-sanitizers PYTHON="$ROOT/.venv/bin/python3" >/dev/null
make -j"$(nproc)" >/dev/null
# the Python suite is not run under ASan (a preloaded runtime in CPython): it ran above
make -j"$(nproc)" check TESTS="\$(UNIT_TESTS)" || { cat test-suite.log; exit 1; }
echo "run-tests: all passed"
