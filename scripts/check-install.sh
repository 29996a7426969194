#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check-install.sh BUILDDIR: `make install DESTDIR=...` of that build, the installed tree then moved elsewhere:
# libtrident finds its driver modules beside itself (<libdir>/trident/drivers, through dladdr), so the moved
# CLI loads every installed module from the new place, and `trident drivers` names that directory; with the
# directory removed it reports it missing. (Run after make check, never beside it: libtool relinks the modules
# in the build tree while it installs them.) C and C++ programs build against the install with its CMake package
# and trident.pc, before and after the move (scripts/check-consumers.sh).
set -eu
S=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:?usage: check-install.sh BUILDDIR}" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/trident-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "check-install: FAIL: $*"; exit 1; }
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$B" install DESTDIR="$T/stage" >"$T/install.log" 2>&1 ||
    { tail -20 "$T/install.log"; fail "make install DESTDIR=$T/stage failed"; }
lib=$(find "$T/stage" -name libtrident.so.1 | head -1)
[ -n "$lib" ] || fail "make install put no libtrident.so.1 under $T/stage"
prefix=$(dirname "$(dirname "$lib")")       # <prefix>/lib/libtrident.so.1
"$S/scripts/check-consumers.sh" "$prefix"
mv "$prefix" "$T/moved"
M="$T/moved"
"$S/scripts/check-consumers.sh" "$M"
n=$(ls "$M"/lib/trident/drivers/*.so 2>/dev/null | wc -l)
[ "$n" -ge 1 ] || fail "no driver module installed in <libdir>/trident/drivers"
run() { env -u TRIDENT_DRIVER_PATH -u TRIDENT_CONFIG LD_LIBRARY_PATH="$M/lib" "$M/bin/trident" "$@"; }
out=$(run drivers) || fail "the moved trident drivers failed: $out"
echo "$out" | grep -q "^  $M/lib/trident/drivers .*: $n modules\?$" ||
    fail "trident drivers does not name $M/lib/trident/drivers with its $n modules: $out"
for so in "$M"/lib/trident/drivers/*.so; do
    echo "$out" | grep -q " $so " || fail "module $so was not tried: $out"
done
[ -f "$M/share/man/man1/trident.1" ] || [ -z "${CHECK_INSTALL_MAN:-}" ] || fail "no man page in share/man/man1"
rm -r "$M/lib/trident/drivers"
out=$(run drivers) || fail "trident drivers without the drivers directory failed: $out"
echo "$out" | grep -q "^  $M/lib/trident/drivers .*No such file or directory" ||
    fail "a missing drivers directory is not reported: $out"
echo "check-install: a moved install finds its $n modules in lib/trident/drivers and reports the directory missing"
