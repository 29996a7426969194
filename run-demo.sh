#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: set up, build, list the devices and drivers, and run the
# add_kernel example on the best device (a GPU when there is one, else the
# host CPU), checking every output element against C.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")" && pwd)
"$ROOT/scripts/setup.sh"
cd "$ROOT/build"
echo; echo "== trident devices"; ./tools/trident devices
echo; echo "== trident drivers"; ./tools/trident drivers
echo; echo "== add_kernel on the best device"; ./examples/vadd_demo examples/add_kernel.trdb
