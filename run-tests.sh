#!/usr/bin/env bash
# The whole test suite: set up and build, then the unit tests (C and Python;
# GPU tests skip with a visible line without a GPU), the ABI check against the
# committed baseline, the fuzz targets for a bounded time, and the unit tests
# again under valgrind and under AddressSanitizer + UBSan (the Python suite too).
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
make -j"$(nproc)" check TESTS="\$(UNIT_TESTS)" || { cat test-suite.log; exit 1; }
# The Python suite drives the XLA handlers: run it over the sanitized libtrident, with the sanitizer runtimes
# preloaded into CPython (whose own allocations at exit are not leaks of ours: valgrind and the C tests cover
# trident's).
echo "== Python suite over the sanitized libtrident"
CC_USED=$(sed -n 's/^CC = //p' Makefile)
LD_PRELOAD="$($CC_USED -print-file-name=libasan.so) $($CC_USED -print-file-name=libubsan.so)" \
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TRD_BUILDDIR="$ROOT/build-asan" TRD_SRCDIR="$ROOT" PYTHON="$ROOT/.venv/bin/python3" "$ROOT/tests/python.sh"
# ---- ThreadSanitizer stage (begin) ---------------------------------------------------------------------------
# libtrident built with ThreadSanitizer in build-tsan/, the unit tests over it (tests/test_concurrency: 16 threads
# launching, loading, creating and destroying at once). halt_on_error makes any report end its test program
# with status 66, which fails the stage.
echo "== ThreadSanitizer"
mkdir -p "$ROOT/build-tsan"
cd "$ROOT/build-tsan"
[ -f Makefile ] || ../configure --enable-tsan PYTHON="$ROOT/.venv/bin/python3" >/dev/null
make -j"$(nproc)" >/dev/null
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
    make -j"$(nproc)" check TESTS="\$(UNIT_TESTS)" || { cat test-suite.log; exit 1; }
# ---- ThreadSanitizer stage (end) -----------------------------------------------------------------------------
echo "run-tests: all passed"
