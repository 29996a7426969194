#!/usr/bin/env bash
# spdx.sh [--check] [DIR]: every tracked source file of the git checkout at DIR (default: this one) carries
# `SPDX-License-Identifier: Apache-2.0` as its first comment line (after a #! line), in its own comment syntax:
# /* */ for C, OpenCL and linker scripts, dnl for autoconf, # for Python, shell, make and the rest. Idempotent:
# a file that has the line in its first lines is left alone. Skipped: LICENSE, documentation, data (JSON, ini
# files, fuzz seeds, compiled kernels and Triton's fixtures), binary files. --check changes nothing: it lists
# each file that lacks the line and exits 1 if any does.
set -euo pipefail
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
case ${1:-} in -*) echo "spdx.sh: unknown option '$1' (usage: spdx.sh [--check] [DIR])" >&2; exit 2 ;; esac
cd "${1:-$(dirname "$0")/..}"
ID="SPDX-License-Identifier: Apache-2.0"

# the comment line a file takes, or nothing for a file that is not source
comment_for() {
    case $1 in
        LICENSE | */LICENSE | *.md | *.json | *.ini | *.abi | *.abignore | .gitignore | */.gitignore | \
            *.ttir | *.ptx | *.cubin | *.hsaco | *.spv | *.zebin | *.so | fuzz/seeds/* | tests/fixtures/triton/* | \
            docs/Doxyfile) return ;;
        *.c | *.h | *.cl | *.h.in | *.map) echo "/* $ID */" ;;
        *.m4 | *.ac) echo "dnl $ID" ;;
        *.py | *.sh | *.am | *.include | Makefile* | */Makefile* | *.toml | *.supp | *.pc.in | *.cfg) echo "# $ID" ;;
        *) head -c 2 "$1" | grep -q '^#!' && echo "# $ID" ;;   # a script without an extension
    esac
    return 0
}

missing=0
while IFS= read -r f; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    line=$(comment_for "$f")
    [ -n "$line" ] || continue
    grep -Iq . "$f" || [ ! -s "$f" ] || continue              # binary
    head -n 3 "$f" | grep -q "SPDX-License-Identifier:" && continue
    if [ $check -eq 1 ]; then
        echo "$f"
        missing=1
        continue
    fi
    tmp=$(mktemp "$f.spdx.XXXXXX")
    if head -n 1 "$f" | grep -q '^#!'; then
        { head -n 1 "$f"; echo "$line"; tail -n +2 "$f"; } > "$tmp"
    else
        { echo "$line"; cat "$f"; } > "$tmp"
    fi
    chmod --reference="$f" "$tmp"
    mv "$tmp" "$f"
done < <(git ls-files)
if [ $check -eq 1 ] && [ $missing -eq 1 ]; then
    echo "spdx: the files above lack '$ID' (scripts/spdx.sh adds it)" >&2
    exit 1
fi
exit 0
