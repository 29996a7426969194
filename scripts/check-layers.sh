#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-layers.sh: the layers depend only downward.
#
#   scripts/check-layers.sh [--symbols] LAYER... [-- MODULE...]
#
# A LAYER is NAME=ARCHIVE[:BELOW,...]: a convenience library (a static archive) and the layers it may use. Every
# trd_* symbol an archive's objects reference must be defined in it or in a layer it names (transitively). A
# MODULE is NAME=SHARED_OBJECT@EXPORTS: a module over libtrident (libtrident_xla, the host driver's module),
# whose undefined trd_* symbols must all be among those EXPORTS (a shared object: libtrident.so) exports; or
# NAME=SHARED_OBJECT alone: a driver module of driver ABI 2, which reaches the core only through the services
# table it is handed at init, and so may reference no trd_* symbol at all, nor link libtrident. Without --symbols, SRCDIR=... FOLDER=PREFIX,...
# entries check includes instead: every `#include "..."` of FOLDER's sources names a header under one of the
# prefixes (public headers, <trident/...>, and configure's config.h are for everyone).
#
#   scripts/check-layers.sh base=b.a options=o.a:base core=c.a:options,base -- cuda=trident_cuda.so xla=x.so@libtrident.so
#   scripts/check-layers.sh --includes SRCDIR=. base=base/ options=base/,options/
#
# Prints each reference that goes upward (or out) and exits 1; prints one line and exits 0 when there is none.
set -euo pipefail

fail=0
say() { echo "check-layers: $*" >&2; }

if [ "${1:-}" = "--includes" ]; then
    shift
    src=.
    for spec in "$@"; do
        case $spec in SRCDIR=*) src=${spec#SRCDIR=}; continue ;; esac
        folder=${spec%%=*}
        allowed=${spec#*=}
        IFS=, read -r -a prefixes <<< "$allowed"
        while IFS= read -r -d '' file; do
            while IFS= read -r inc; do
                ok=0
                [ "$inc" = config.h ] && continue # configure's, for everyone
                for p in "${prefixes[@]}"; do
                    case $inc in "$p"*) ok=1 ;; esac
                done
                if [ $ok -eq 0 ]; then
                    say "${file#"$src"/} includes \"$inc\": $folder/ may include only ${allowed//,/, } and the public headers"
                    fail=1
                fi
            done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
        done < <(find "$src/$folder" -maxdepth 1 -name '*.[ch]' -print0)
    done
    [ $fail -eq 0 ] && echo "check-layers: every include goes downward"
    exit $fail
fi
[ "${1:-}" = "--symbols" ] && shift

declare -A archive below defined
names=()
modules=()
for spec in "$@"; do
    if [ "$spec" = "--" ]; then
        modules=(__next__)
        continue
    fi
    if [ ${#modules[@]} -gt 0 ]; then
        modules+=("$spec")
        continue
    fi
    name=${spec%%=*}
    rest=${spec#*=}
    archive[$name]=${rest%%:*}
    below[$name]=
    [ "$rest" != "${rest#*:}" ] && below[$name]=${rest#*:}
    if [ ! -f "${archive[$name]}" ]; then
        say "$name: ${archive[$name]} does not exist (build first)"
        exit 1
    fi
    defined[$name]=$(nm --defined-only -g "${archive[$name]}" 2>/dev/null | awk 'NF == 3 && $3 ~ /^trd_/ { print $3 }' | sort -u)
    names+=("$name")
done

# the layers a layer may use: itself and everything below it
reach() {
    local seen=" $1 " todo=("$1") cur b
    while [ ${#todo[@]} -gt 0 ]; do
        cur=${todo[0]}
        todo=("${todo[@]:1}")
        IFS=, read -r -a bs <<< "${below[$cur]}"
        for b in "${bs[@]}"; do
            [ -z "$b" ] && continue
            case $seen in *" $b "*) continue ;; esac
            seen="$seen$b "
            todo+=("$b")
        done
    done
    echo "$seen"
}

owner() { # the layer that defines a symbol, or ""
    local n
    for n in "${names[@]}"; do
        grep -qx -- "$1" <<< "${defined[$n]}" && { echo "$n"; return; }
    done
    echo ""
}

for name in "${names[@]}"; do
    ok=$(reach "$name")
    allowed=$(for n in $ok; do echo "${defined[$n]}"; done | sort -u)
    while IFS= read -r sym; do
        [ -z "$sym" ] && continue
        grep -qx -- "$sym" <<< "$allowed" && continue
        o=$(owner "$sym")
        if [ -n "$o" ]; then
            say "$name references $sym, which $o defines: $name may use only" $ok
        else
            say "$name references $sym, which no layer defines"
        fi
        fail=1
    done < <(nm -u "${archive[$name]}" 2>/dev/null | awk '$1 == "U" && $2 ~ /^trd_/ { print $2 }' | sort -u)
done

for spec in "${modules[@]:1}"; do
    name=${spec%%=*}
    rest=${spec#*=}
    so=${rest%@*}
    if [ "$rest" = "$so" ]; then # a self-contained driver module
        if [ ! -f "$so" ]; then
            say "$name: $so does not exist (build first)"
            exit 1
        fi
        while IFS= read -r sym; do
            [ -z "$sym" ] && continue
            say "$name ($so) references $sym: a driver module reaches the core only through its services table"
            fail=1
        done < <(nm -D -u "$so" | awk '$1 == "U" && $2 ~ /^trd_/ { sub(/@.*/, "", $2); print $2 }' | sort -u)
        if objdump -p "$so" 2>/dev/null | awk '$1 == "NEEDED" { print $2 }' | grep -q '^libtrident\.so'; then
            say "$name ($so) links libtrident: a driver module must not"
            fail=1
        fi
        continue
    fi
    exports=${rest#*@}
    if [ ! -f "$so" ] || [ ! -f "$exports" ]; then
        say "$name: $so or $exports does not exist (build first)"
        exit 1
    fi
    public=$(nm -D --defined-only "$exports" | awk '$3 ~ /^trd_/ { sub(/@.*/, "", $3); print $3 }' | sort -u)
    while IFS= read -r sym; do
        [ -z "$sym" ] && continue
        grep -qx -- "$sym" <<< "$public" && continue
        say "$name ($so) references $sym, which $(basename "$exports") does not export"
        fail=1
    done < <(nm -D -u "$so" | awk '$1 == "U" && $2 ~ /^trd_/ { sub(/@.*/, "", $2); print $2 }' | sort -u)
done

[ $fail -eq 0 ] && echo "check-layers: every layer's references go downward (${names[*]}${modules[1]:+; modules over the public API})"
exit $fail
