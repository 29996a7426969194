#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/test_dist.sh: scripts/check-dist.sh (make distcheck's hook) refuses a tarball tree with build leftovers
# or without a file a script needs, and passes a clean one.
set -u
CHECK="$TRD_SRCDIR/scripts/check-dist.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/scripts" "$T/bench" "$T/python/trident" "$T/build-aux"   # build-aux is the tarball's own
printf 'python3 "$ROOT/bench/bench_xla.py"\nmkdir -p "$ROOT/.device/out" "$ROOT/build"\n' > "$T/scripts/x.sh"
: > "$T/bench/bench_xla.py"
fails=0
out=$("$CHECK" "$T" 2>&1) || { echo "FAIL: a clean tree refused: $out"; fails=1; }
mkdir -p "$T/python/build/lib" "$T/python/trident.egg-info" "$T/python/trident/__pycache__"
rm "$T/bench/bench_xla.py"
out=$("$CHECK" "$T" 2>&1) && { echo "FAIL: a tree with leftovers passed"; fails=1; }
for want in "python/build is a build leftover" "python/trident.egg-info is a build leftover" \
        "python/trident/__pycache__ is a build leftover" "bench/bench_xla.py is missing (a script needs it)"; do
    case $out in *"$want"*) echo "ok: $want" ;; *) echo "FAIL: '$out' lacks '$want'"; fails=1 ;; esac
done
[ $fails -eq 0 ]
