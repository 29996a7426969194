#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/test_layers.sh: scripts/check-layers.sh catches what goes upward: a lower layer's object that references a
# higher layer's symbol (or one no layer defines), a module that references what libtrident does not export, a
# source that includes a higher layer's header; and passes the same layers when every reference goes down.
set -u
CHECK="$TRD_SRCDIR/scripts/check-layers.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
CC=${CC:-cc}
fails=0
expect() { # rc message-or-empty command...
    want_rc=$1 want=$2
    shift 2
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -ne "$want_rc" ] || { [ -n "$want" ] && ! printf '%s' "$out" | grep -qF "$want"; }; then
        echo "FAIL: $* -> rc $rc (want $want_rc), output: $out (want: $want)"
        fails=$((fails + 1))
    else
        echo "ok: $want"
    fi
}
printf 'int trd_low(void);\nint trd_low(void) { return 1; }\n' > low.c
printf 'int trd_low(void);\nint trd_high(void);\nint trd_high(void) { return trd_low(); }\n' > high.c
printf 'int trd_high(void);\nint trd_up(void);\nint trd_up(void) { return trd_high(); }\n' > up.c
printf 'int trd_nowhere(void);\nint trd_lost(void);\nint trd_lost(void) { return trd_nowhere(); }\n' > lost.c
printf 'int trd_low(void);\nint trd_hidden(void);\nint trd_mod(void);\nint trd_mod(void) { return trd_low() + trd_hidden(); }\n' > mod.c
printf 'int trd_low(void) { return 1; }\n__attribute__((visibility("hidden"))) int trd_hidden(void) { return 2; }\n' > lib.c
$CC -c -fPIC low.c high.c up.c lost.c mod.c lib.c || exit 1
ar rc liblow.a low.o && ar rc libhigh.a high.o && ar rc libup.a low.o up.o && ar rc liblost.a low.o lost.o
$CC -shared -o libpublic.so lib.o && $CC -shared -o mod.so mod.o -L. -lpublic || exit 1
expect 0 "references go downward (low high)" "$CHECK" --symbols low=liblow.a high=libhigh.a:low
expect 1 "low references trd_high, which high defines" "$CHECK" --symbols low=libup.a high=libhigh.a:low
expect 1 "low references trd_nowhere, which no layer defines" "$CHECK" --symbols low=liblost.a
expect 1 "references trd_hidden, which libpublic.so does not export" "$CHECK" --symbols low=liblow.a -- \
    mod=mod.so@libpublic.so
# a self-contained driver module (NAME=SO without @EXPORTS): no trd_* reference, no libtrident at all
printf 'int trd_driver_entry(void);\nint trd_driver_entry(void) { return 2; }\n' > selfmod.c
$CC -c -fPIC selfmod.c && $CC -shared -o selfmod.so selfmod.o || exit 1
$CC -shared -o libtrident.so.1 lib.o -Wl,-soname,libtrident.so.1 && $CC -shared -o linked.so selfmod.o -L. -Wl,--no-as-needed -l:libtrident.so.1 || exit 1
expect 0 "references go downward" "$CHECK" --symbols low=liblow.a -- self=selfmod.so
expect 1 "mod (mod.so) references trd_low: a driver module reaches the core only through its services table" \
    "$CHECK" --symbols low=liblow.a -- mod=mod.so
expect 1 "links (linked.so) links libtrident: a driver module must not" "$CHECK" --symbols low=liblow.a -- links=linked.so
mkdir -p src/low src/high
printf '#include "low/a.h"\n#include <trident/trident.h>\n' > src/high/b.c
printf '#include "low/a.h"\n' > src/low/a.c
expect 0 "every include goes downward" "$CHECK" --includes SRCDIR=src low=low/ high=low/,high/
printf '#include "high/b.h"\n' >> src/low/a.c
expect 1 "low/a.c includes \"high/b.h\": low/ may include only low/" "$CHECK" --includes SRCDIR=src low=low/ \
    high=low/,high/
[ $fails -eq 0 ] || exit 1
