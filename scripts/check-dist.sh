#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-dist.sh DISTDIR: the tarball's tree (make distcheck runs it on $(distdir)) holds no build leftovers
# (python/build, *.egg-info, __pycache__, *.pyc, build trees, dist/, .device) and every source file the distributed
# scripts name as $ROOT/<path>. Prints what is wrong and exits 1; one line and 0 when nothing is.
set -uo pipefail
dir=${1:?usage: check-dist.sh DISTDIR}
cd "$dir" || exit 1
fail=0
while IFS= read -r p; do
    echo "check-dist: $p is a build leftover" >&2
    fail=1
done < <({ find . \( -path ./python/build -o -name '*.egg-info' -o -name __pycache__ -o -name '*.pyc' \) -prune -print
           find . -mindepth 1 -maxdepth 1 \( -name build -o -name 'build-*' -o -name dist -o -name .device -o -name '.venv*' \) \
               ! -name build-aux; } | sed 's|^\./||' | sort)
# what the scripts read from the source tree (not what they make: build trees, venvs, .device, the fetched
# .xla-ffi headers, configure)
while IFS= read -r p; do
    case $p in .device* | .peers* | .venv* | .xla-ffi* | build* | dist | dist/* | configure) continue ;; esac
    if [ ! -e "$p" ]; then
        echo "check-dist: $p is missing (a script needs it)" >&2
        fail=1
    fi
done < <(cat scripts/*.sh run-*.sh .ci/run tests/*.sh 2>/dev/null | grep -oE '\$ROOT/[A-Za-z0-9_./-]+' |
    sed 's|^\$ROOT/||; s|/$||' | sort -u)
# from a git checkout (make distcheck in one): every tracked file but git's and CI's own is in the tarball, so
# that a file a test reads (a bench script, a fixture) cannot be left out of EXTRA_DIST unnoticed
src=${TRD_DIST_SRCDIR:-}
if [ -n "$src" ] && git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    while IFS= read -r p; do
        case $p in .ci/* | .gitignore | */.gitignore) continue ;; esac
        [ -e "$p" ] || [ -L "$p" ] || { echo "check-dist: $p is tracked by git but not in the tarball (EXTRA_DIST)" >&2; fail=1; }
    done < <(git -C "$src" ls-files)
fi
[ $fail -eq 0 ] && echo "check-dist: no build leftovers, every file the scripts need"
exit $fail
