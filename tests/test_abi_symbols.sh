#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/test_abi_symbols.sh: libtrident exports exactly the symbols of its baseline (abi/libtrident.abi), each in
# its version node, in every build: with jaxlib's FFI header or without, the list is the same. libtrident_xla,
# where it is built, likewise against xla/libtrident_xla.abi.
set -u
fails=0
check() { # library baseline
    lib=$TRD_BUILDDIR/$1 base=$TRD_SRCDIR/$2
    if [ ! -f "$lib" ]; then
        echo "FAIL: $lib is missing"
        fails=$((fails + 1))
        return
    fi
    want=$(sed -n "s/.*<elf-symbol name='\([^']*\)' version='\([^']*\)'.*is-defined='yes'.*/\1@\2/p" "$base" | sort)
    got=$(nm -D --defined-only "$lib" | awk '$3 ~ /^trd_/ { sub(/@@/, "@", $3); print $3 }' | sort)
    if [ "$want" = "$got" ]; then
        echo "ok: $1 exports the $(echo "$want" | wc -l) symbols of $2"
    else
        echo "FAIL: $1's exports differ from $2's (< baseline, > built):"
        printf '%s\n' "$want" > "$TRD_BUILDDIR/tests/abi-symbols.want"
        printf '%s\n' "$got" | diff "$TRD_BUILDDIR/tests/abi-symbols.want" - | grep '^[<>]'
        fails=$((fails + 1))
    fi
}
check core/.libs/libtrident.so.1 abi/libtrident.abi
if [ -f "$TRD_BUILDDIR/xla/.libs/libtrident_xla.so.1" ]; then
    check xla/.libs/libtrident_xla.so.1 xla/libtrident_xla.abi
    # the handlers are libtrident_xla's only
    if nm -D --defined-only "$TRD_BUILDDIR/core/.libs/libtrident.so.1" | grep -q ' trd_xla_'; then
        echo "FAIL: libtrident exports trd_xla_* symbols"
        fails=$((fails + 1))
    fi
else
    echo "libtrident_xla is not built here (configure --enable-xla=no, or no jaxlib FFI header)"
fi
[ $fails -eq 0 ]
