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
# what the scripts read from the source tree (not what they make: build trees, venvs, .device, configure)
while IFS= read -r p; do
    case $p in .device* | .peers* | .venv* | build* | dist | dist/* | configure) continue ;; esac
    if [ ! -e "$p" ]; then
        echo "check-dist: $p is missing (a script needs it)" >&2
        fail=1
    fi
done < <(cat scripts/*.sh run-*.sh .ci/run tests/*.sh 2>/dev/null | grep -oE '\$ROOT/[A-Za-z0-9_./-]+' |
    sed 's|^\$ROOT/||; s|/$||' | sort -u)
[ $fail -eq 0 ] && echo "check-dist: no build leftovers, every file the scripts need"
exit $fail
