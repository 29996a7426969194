#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# jax-triton-suite.sh: jax-triton's own test suite run against trident.jax,
# with only the imports changed. The suite is fetched, never committed: it is
# exported into .peers/ (git-ignored), so that the prepared folder can travel
# to a machine without network and run there.
#
#   scripts/jax-triton-suite.sh prepare REPO REF   # REPO: a jax-triton checkout or a bare mirror
#   scripts/jax-triton-suite.sh run REF [PYTEST_ARG...]
#   scripts/jax-triton-suite.sh both REPO REF [PYTEST_ARG...]
#
# prepare exports REF's tests/ into .peers/jax-triton-REF/ and rewrites the
# imports only:
#     import jax_triton as jt                 -> import trident.jax as jt
#     import jax_triton.triton_lib as jttl    -> import trident.jax as jttl
#     from jax_triton import triton_lib [as X] -> import trident.jax as triton_lib (X)
# (nothing else of the suite changes; the file REWRITES lists each changed line).
#
# run needs no network: python3 -m pytest (PYTHON overrides python3) over the
# prepared folder, trident found through PYTHONPATH=<this checkout>/python and
# TRIDENT_LIBRARY (default: build/core/.libs/libtrident.so.1 here, else the one
# already set). It prints, and writes to .peers/jax-triton-REF/summary.txt (and
# $OUT/jax-triton-REF-summary.txt when OUT is set): the counts of passed,
# failed, skipped and errors, then every failing test id with its first line.
# The exit status is pytest's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS=$ROOT/.peers

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

dest_of() {
    local ref=$1
    case $ref in
    *[!A-Za-z0-9._-]*) echo "jax-triton-suite: ref '$ref': expected letters, digits, '.', '_' or '-'" >&2; exit 2 ;;
    esac
    echo "$PEERS/jax-triton-$ref"
}

prepare() {
    local repo=$1 ref=$2 dest
    dest=$(dest_of "$ref")
    git -C "$repo" rev-parse --verify --quiet "$ref^{commit}" >/dev/null ||
        { echo "jax-triton-suite: $repo has no commit '$ref'" >&2; exit 1; }
    rm -rf "$dest" && mkdir -p "$dest"
    git -C "$repo" archive "$ref" tests | tar -x -C "$dest"
    git -C "$repo" rev-parse "$ref^{commit}" > "$dest/COMMIT"
    : > "$dest/REWRITES"
    local f
    for f in "$dest"/tests/*.py; do
        cp "$f" "$f.orig"
        sed -i -E \
            -e 's/^([[:space:]]*)import jax_triton\.triton_lib as ([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1import trident.jax as \2/' \
            -e 's/^([[:space:]]*)import jax_triton as ([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1import trident.jax as \2/' \
            -e 's/^([[:space:]]*)from jax_triton import triton_lib as ([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1import trident.jax as \2/' \
            -e 's/^([[:space:]]*)from jax_triton import triton_lib[[:space:]]*$/\1import trident.jax as triton_lib/' \
            "$f"
        diff -U0 "$f.orig" "$f" | grep -E '^[-+][^-+]' | sed "s|^|${f#"$dest"/}: |" >> "$dest/REWRITES" || true
        rm "$f.orig"
        if grep -nE '^[[:space:]]*(import|from)[[:space:]]+jax_triton' "$f"; then
            echo "jax-triton-suite: ${f#"$dest"/} still imports jax_triton in a form this script does not rewrite" >&2
            exit 1
        fi
    done
    echo "jax-triton-suite: $ref ($(cat "$dest/COMMIT")) prepared in ${dest#"$ROOT"/}; rewritten lines:"
    sed 's/^/  /' "$dest/REWRITES"
}

run() {
    local ref=$1 dest rc=0
    shift
    dest=$(dest_of "$ref")
    [ -d "$dest/tests" ] || { echo "jax-triton-suite: $dest is not prepared (run: $0 prepare REPO $ref)" >&2; exit 1; }
    local lib=${TRIDENT_LIBRARY:-$ROOT/build/core/.libs/libtrident.so.1}
    [ -f "$lib" ] || { echo "jax-triton-suite: libtrident $lib is missing (build it, or set TRIDENT_LIBRARY)" >&2; exit 1; }
    export TRIDENT_LIBRARY=$lib PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
    local log=$dest/pytest.log summary=$dest/summary.txt
    (cd "$dest" && "${PYTHON:-python3}" -m pytest -p no:cacheprovider -q -rfE "$@" tests) > "$log" 2>&1 || rc=$?
    {
        echo "jax-triton $ref ($(cat "$dest/COMMIT" 2>/dev/null)) against trident.jax ($lib)"
        local last
        last=$(grep -E '^=*.*( passed| failed| skipped| error| no tests ran).* in [0-9.]+s' "$log" | tail -1 || true)
        for what in passed failed skipped error; do
            printf '%s: %s\n' "$what" "$(echo "$last" | grep -oE "[0-9]+ $what" | grep -oE '^[0-9]+' || echo 0)"
        done
        echo "failing:"
        grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/  /' || echo "  none"
        echo "pytest exit status: $rc"
    } | tee "$summary"
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT"
        cp "$summary" "$OUT/jax-triton-$ref-summary.txt"
        cp "$log" "$OUT/jax-triton-$ref-pytest.log"
    fi
    return $rc
}

case ${1:-} in
prepare) [ $# -eq 3 ] || usage; prepare "$2" "$3" ;;
run) [ $# -ge 2 ] || usage; shift; run "$@" ;;
both) [ $# -ge 3 ] || usage; prepare "$2" "$3"; ref=$3; shift 3; run "$ref" "$@" ;;
*) usage ;;
esac
