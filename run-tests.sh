#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: set up and build, then the unit tests (C and Python;
# GPU tests skip with a visible line without a GPU; make check runs check-layers),
# the ABI check against the committed baselines (again in a build without
# libtrident_xla), the API reference (doxygen: a warning fails), the fuzz
# targets for a bounded time, and the unit tests again under valgrind, under
# AddressSanitizer + UBSan (the Python suite too) and under ThreadSanitizer.
# When a stage fails, the last lines printed name it and say what failed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")" && pwd)

STAGE="set-up"
FAILURE=""
stage() {
    STAGE="$1"
    FAILURE=""
    echo "== $STAGE"
}
# `make check` failed: print each failed test's log, and remember which tests failed for the summary.
check_failed() {
    local dir="$1" logs
    logs=$(sed -n 's/^\(FAIL\|ERROR\|XPASS\): \(.*\)$/\2/p' "$dir/test-suite.log" 2>/dev/null | sort -u)
    for t in $logs; do
        echo "---- $t.log"
        tail -60 "$dir/$t.log" 2>/dev/null || true
    done
    FAILURE="failed tests: $(echo "$logs" | tr '\n' ' ')"
    return 1
}
on_exit() {
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        echo
        echo "run-tests: FAILED in stage '$STAGE' (exit $rc)${FAILURE:+: $FAILURE}"
    fi
}
trap on_exit EXIT

"$ROOT/scripts/setup.sh"
cd "$ROOT/build"
stage "make check"
make -j"$(nproc)" check || check_failed .
stage "SPDX lines: make check-spdx"
make check-spdx
stage "make check-install (a DESTDIR install, moved, finds its driver modules)"
make check-install
stage "the wheel: scripts/test-wheel.sh (built, auditwheel-repaired and checked; the CPU Python suite over it in a fresh venv)"
"$ROOT/scripts/test-wheel.sh"
stage "pip install . from a clean clone: scripts/test-pip-install.sh (README's JAX path; installation checks and examples over the package; CMake and pkg-config consumers)"
"$ROOT/scripts/test-pip-install.sh"
cd "$ROOT/build"
stage "Triton releases other than .venv's"
"$ROOT/scripts/triton-releases.sh" "$ROOT/build"
stage "make check-abi"
make check-abi
# libtrident is the same library whatever configure finds: its ABI and exports without libtrident_xla too
stage "make check-abi without the XLA library (build-noxla: --enable-xla=no)"
mkdir -p "$ROOT/build-noxla"
cd "$ROOT/build-noxla"
[ -f Makefile ] || ../configure --enable-xla=no PYTHON="$ROOT/.venv/bin/python3" >/dev/null
make -j"$(nproc)" core/libtrident.la >/dev/null
make check-abi
TRD_BUILDDIR="$ROOT/build-noxla" TRD_SRCDIR="$ROOT" "$ROOT/tests/test_abi_symbols.sh"
# one libtrident_xla for every jaxlib: build/ has the newest FFI header (.xla-ffi, scripts/xla-ffi-headers.sh);
# the venv's jaxlib 0.10.2 header (API 0.3) builds it without the RECORD stage, the same exports and ABI
stage "libtrident_xla against jaxlib 0.10.2's FFI header (build-xla03: API 0.3, no RECORD stage)"
mkdir -p "$ROOT/build-xla03"
cd "$ROOT/build-xla03"
[ -f Makefile ] || ../configure --with-xla-ffi="$("$ROOT/.venv/bin/python3" -c 'import jax.ffi; print(jax.ffi.include_dir())')" \
    PYTHON="$ROOT/.venv/bin/python3" >/dev/null
make -j"$(nproc)" >/dev/null
make -j"$(nproc)" check TESTS=tests/test_xla || check_failed .
make check-abi
TRD_BUILDDIR="$ROOT/build-xla03" TRD_SRCDIR="$ROOT" "$ROOT/tests/test_abi_symbols.sh"
cd "$ROOT/build"
stage "API reference: make check-docs (doxygen, no warning allowed)"
make check-docs
stage "fuzz targets (bounded)"
"$ROOT/scripts/fuzz.sh" "${FUZZ_SECONDS:-20}"
stage "make check-valgrind"
make check-valgrind
stage "AddressSanitizer + UBSan: unit tests"
mkdir -p "$ROOT/build-asan"
cd "$ROOT/build-asan"
[ -f Makefile ] || ../configure --enable-sanitizers PYTHON="$ROOT/.venv/bin/python3" >/dev/null
make -j"$(nproc)" >/dev/null
# the sanitizer runtime's options for the unit tests live in tests/Makefile.include (the sanitized test environment)
make -j"$(nproc)" check TESTS="\$(UNIT_TESTS)" || check_failed .
# The Python suite drives the XLA handlers: run it over the sanitized libtrident, with the sanitizer runtimes
# preloaded into CPython (whose own allocations at exit are not leaks of ours: valgrind and the C tests cover
# trident's).
stage "AddressSanitizer + UBSan: Python suite over the sanitized libtrident"
CC_USED=$(sed -n 's/^CC = //p' Makefile)
LD_PRELOAD="$($CC_USED -print-file-name=libasan.so) $($CC_USED -print-file-name=libubsan.so)" \
    ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TRD_BUILDDIR="$ROOT/build-asan" TRD_SRCDIR="$ROOT" PYTHON="$ROOT/.venv/bin/python3" "$ROOT/tests/python.sh"
# libtrident built with ThreadSanitizer in build-tsan/, the unit tests over it (tests/test_concurrency: 16 threads
# launching, loading, creating and destroying at once). halt_on_error makes any report end its test program
# with status 66, which fails the stage.
stage "ThreadSanitizer: unit tests"
mkdir -p "$ROOT/build-tsan"
cd "$ROOT/build-tsan"
[ -f Makefile ] || ../configure --enable-tsan PYTHON="$ROOT/.venv/bin/python3" >/dev/null
make -j"$(nproc)" >/dev/null
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$ROOT/tests/tsan.supp ${TSAN_OPTIONS:-}" \
    make -j"$(nproc)" check TESTS="\$(UNIT_TESTS)" || check_failed .
STAGE="done"
echo "run-tests: all passed"
