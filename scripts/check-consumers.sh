#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check-consumers.sh PREFIX: C and C++ programs build against the trident installed at PREFIX (a DESTDIR tree or a
# moved one: the package's paths are its own) and run: tests/cmake's consumers configured with CMake's
# find_package(trident <its version>) and built, consumer.c built with cc and `pkg-config --define-prefix`; each
# prints the library's version and the host device the runtime found through the installed driver modules. A
# newer major version asked of find_package is refused, naming the installed one. (scripts/check-install.sh and
# scripts/test-pip-install.sh run it.)
set -eu
S=$(cd "$(dirname "$0")/.." && pwd)
P=$(cd "${1:?usage: check-consumers.sh PREFIX}" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/trident-consumers.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "check-consumers: FAIL: $*"; exit 1; }
command -v cmake >/dev/null || fail "cmake not found (Debian: apt-get install cmake)"
version=$(sed -n 's/^Version: //p' "$P/lib/pkgconfig/trident.pc")
next="$((${version%%.*} + 1)).0"
{ cmake -S "$S/tests/cmake" -B "$T/cmake" -DCMAKE_PREFIX_PATH="$P" -DTRIDENT_VERSION_WANTED="$version" &&
  cmake --build "$T/cmake"; } >"$T/cmake.log" 2>&1 || { tail -30 "$T/cmake.log"; fail "the CMake consumer of $P failed"; }
# shellcheck disable=SC2046  # pkg-config's flags are words
cc -std=c11 -o "$T/consumer_pc" "$S/tests/cmake/consumer.c" \
    $(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --define-prefix --cflags --libs trident) ||
    fail "consumer.c with pkg-config --define-prefix --cflags --libs trident at $P failed"
for exe in "$T/cmake/consumer_c" "$T/cmake/consumer_cxx" "$T/consumer_pc"; do
    out=$(env -u TRIDENT_DRIVER_PATH -u TRIDENT_CONFIG LD_LIBRARY_PATH="$P/lib" "$exe") ||
        fail "$(basename "$exe") (built against $P) failed: $out"
    case $out in "trident $version: "*" devices, host:0 "*) ;; *) fail "$(basename "$exe") printed: $out" ;; esac
done
if cmake -S "$S/tests/cmake" -B "$T/refused" -DCMAKE_PREFIX_PATH="$P" -DTRIDENT_VERSION_WANTED="$next" \
    >"$T/cmake.log" 2>&1; then fail "find_package(trident $next) accepted version $version"; fi
grep -q "version: $version" "$T/cmake.log" || { cat "$T/cmake.log"; fail "CMake's refusal of $next names no version"; }
echo "check-consumers: C and C++ programs build and run against $P (CMake's find_package(trident $version), pkg-config)"
