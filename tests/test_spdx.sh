#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/test_spdx.sh: scripts/spdx.sh puts the SPDX line first in each kind of source file's own comment
# syntax (after a #! line), leaves data, documentation, LICENSE and binaries alone, changes nothing on a second
# run, and --check lists what lacks the line (exit 1) and passes once nothing does.
set -u
SPDX="$TRD_SRCDIR/scripts/spdx.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" && git init -q . || exit 1
mkdir -p src .ci fuzz/seeds/x
printf 'int x;\n' > src/a.c
printf '#!/usr/bin/env python3\n"""doc"""\n' > src/b.py
printf 'AC_INIT([x], [1])\n' > configure.ac
printf 'x = 1\n' > src/Makefile.include
printf '#!/bin/sh\necho hi\n' > .ci/run
chmod +x .ci/run
printf '{"a": 1}\n' > src/d.json
printf 'text\n' > LICENSE
printf 'seed' > fuzz/seeds/x/s
printf '\177ELF\000\001' > src/k.so.c
git add -A
fails=0
expect() { # file first-lines...
    f=$1; shift
    want=$(printf '%s\n' "$@")
    got=$(head -n $# "$f")
    [ "$got" = "$want" ] || { echo "FAIL: $f begins '$got', want '$want'"; fails=1; }
}
out=$("$SPDX" --check "$T") && { echo "FAIL: --check passed a tree without the lines"; fails=1; }
for f in src/a.c src/b.py configure.ac src/Makefile.include .ci/run; do
    echo "$out" | grep -qx "$f" || { echo "FAIL: --check does not list $f: $out"; fails=1; }
done
for f in src/d.json LICENSE fuzz/seeds/x/s src/k.so.c; do
    echo "$out" | grep -qx "$f" && { echo "FAIL: --check lists $f, which is not source"; fails=1; }
done
"$SPDX" "$T" || { echo "FAIL: spdx.sh failed"; fails=1; }
expect src/a.c "/* SPDX-License-Identifier: Apache-2.0 */" "int x;"
expect src/b.py "#!/usr/bin/env python3" "# SPDX-License-Identifier: Apache-2.0" '"""doc"""'
expect configure.ac "dnl SPDX-License-Identifier: Apache-2.0" "AC_INIT([x], [1])"
expect src/Makefile.include "# SPDX-License-Identifier: Apache-2.0" "x = 1"
expect .ci/run "#!/bin/sh" "# SPDX-License-Identifier: Apache-2.0" "echo hi"
expect src/d.json '{"a": 1}'
expect LICENSE text
[ -x .ci/run ] || { echo "FAIL: .ci/run lost its mode"; fails=1; }
before=$(cat src/a.c src/b.py .ci/run | cksum)
"$SPDX" "$T"
[ "$(cat src/a.c src/b.py .ci/run | cksum)" = "$before" ] || { echo "FAIL: a second run changed files"; fails=1; }
"$SPDX" --check "$T" || { echo "FAIL: --check refuses a tree with every line"; fails=1; }
[ $fails -eq 0 ] && echo "ok: spdx.sh adds, skips, is idempotent and checks"
[ $fails -eq 0 ]
