#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/test_build_prereqs.sh: pip's first call into the build backend (python/build_backend,
# get_requires_for_build_wheel) stops a build that cannot succeed with one message naming every missing piece
# and its Debian package: here make (hidden from PATH) and libjansson (its .pc hidden from pkg-config); without
# pkg-config the libraries are looked for by their headers. With nothing hidden the system passes.
set -u
PY=${PYTHON:-python3}
[ "$PY" = none ] && PY=python3
PY=$("$PY" -c "import sys; print(sys.executable)") || { echo "SKIP: no Python interpreter"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin" "$T/pc"
for tool in cc strip pkg-config autoconf automake libtoolize; do
    p=$(command -v "$tool") || { echo "SKIP: $tool is not installed"; exit 77; }
    ln -s "$p" "$T/bin/$tool"
done
for d in $(pkg-config --variable pc_path pkg-config | tr : ' '); do
    for pc in "$d"/*.pc; do
        [ -e "$pc" ] && [ "$(basename "$pc")" != jansson.pc ] && ln -sf "$pc" "$T/pc/"
    done
done
hook() {
    env -u CC PATH="$1" PKG_CONFIG_LIBDIR="$T/pc" "$PY" -c "import sys; sys.path.insert(0, sys.argv[1])
import trident_backend; trident_backend.get_requires_for_build_wheel()" "$TRD_SRCDIR/python/build_backend" 2>&1
}
fails=0
expect() {  # OUTPUT WANTED... (a wanted string prefixed with ! must be absent)
    out=$1; shift
    for want in "$@"; do
        case $want in
        !*) case $out in *"${want#!}"*) echo "FAIL: names ${want#!}: $out"; fails=1 ;; esac ;;
        *) case $out in *"$want"*) echo "ok: $want" ;; *) echo "FAIL: lacks '$want': $out"; fails=1 ;; esac ;;
        esac
    done
}
out=$(hook "$T/bin") && { echo "FAIL: a build without make and libjansson went on"; fails=1; }
expect "$out" "trident's native build needs what this system lacks:" "make  " "(Debian: make)" \
    "libjansson >= 2.10  (Debian: libjansson-dev)" "On Debian or Ubuntu: sudo apt-get install make libjansson-dev" \
    "!libinih-dev" "!libelf-dev" "!build-essential" "!Traceback"
rm "$T/bin/pkg-config"
out=$(hook "$T/bin") && { echo "FAIL: a build without pkg-config went on"; fails=1; }
expect "$out" "pkg-config  (Debian: pkg-config)" "sudo apt-get install make pkg-config" "!libinih-dev" "!libelf-dev"
out=$(env -u CC "$PY" "$TRD_SRCDIR/python/build_backend/trident_backend.py" 2>&1) ||
    { echo "FAIL: this system, which builds trident, was refused: $out"; fails=1; }
[ $fails -eq 0 ]
