#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# man-commands.sh TRIDENT: a help2man include file whose COMMANDS section holds each command's own --help
# (the commands are those `trident --help` lists), so that trident(1) documents every command as the CLI does.
set -eu
T=${1:?usage: man-commands.sh TRIDENT}
echo "[COMMANDS]"
"$T" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' | while read -r cmd; do
    echo ".SS \"trident $cmd\""
    echo ".nf"
    # roff: a leading dot or quote would be read as a request, a backslash as an escape
    "$T" "$cmd" --help | sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
    echo ".fi"
done
