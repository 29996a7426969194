#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# setup.sh: installs what trident needs on Debian 12 (as root, or with sudo),
# makes a Python virtual environment with JAX and Triton, and builds trident in
# build/. Idempotent: a second run only rebuilds what changed.
#
#   scripts/setup.sh            # packages, venv, configure, make
#   SETUP_NO_APT=1 ...          # skip apt-get (packages already there)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

APT_PACKAGES=(
    build-essential autoconf automake libtool pkg-config            # the build
    libinih-dev libjansson-dev libelf-dev                           # libtrident's dependencies
    check valgrind abigail-tools clang libclang-rt-14-dev           # tests, ABI check, fuzzers
    doxygen                                                         # the API reference (make check-docs)
    help2man                                                        # trident(1), from the CLI's --help
    cmake                                                           # the CMake package's consumers (check-install)
    python3 python3-venv python3-dev                                # the Python package
    libze1 libze-dev                                                # Level Zero loader (driver + tests)
    libamdhip64-5 libamdhip64-dev                                   # HIP runtime (no-device test) and headers
)

if [ -z "${SETUP_NO_APT:-}" ]; then
    missing=()
    for p in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
        echo "setup: installing ${missing[*]}"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
fi

# Python: JAX (CPU) gives the XLA FFI header and runs the Python suite; Triton
# compiles kernels for sm90/gfx942 without a GPU. The newest release trident
# supports (3.6 .. 3.9, each tested: scripts/triton-releases.sh runs the others).
TRITON_RELEASE=3.9.0
PY_PACKAGES=(jax==0.10.2 jaxlib==0.10.2 "triton==$TRITON_RELEASE" numpy pytest flatbuffers)
if [ ! -x .venv/bin/python3 ]; then
    python3 -m venv .venv
fi
if ! .venv/bin/python3 -c "import jax, triton, pytest, flatbuffers, sys; sys.exit(triton.__version__ != '$TRITON_RELEASE')" \
        2>/dev/null; then
    echo "setup: installing ${PY_PACKAGES[*]} into .venv"
    .venv/bin/python3 -m pip install -q --upgrade pip >/dev/null
    .venv/bin/python3 -m pip install -q "${PY_PACKAGES[@]}"
fi

# The newest XLA FFI headers (jaxlib 0.12's), which libtrident_xla is built against: it then runs on every jaxlib
# from 0.10.2 on and has the RECORD stage. Without PyPI, configure takes the venv's jaxlib header (no RECORD stage).
if [ ! -f .xla-ffi/include/xla/ffi/api/c_api.h ] && ! PYTHON=.venv/bin/python3 scripts/xla-ffi-headers.sh; then
    echo "setup: no newer XLA FFI headers; libtrident_xla is built against the venv's jaxlib's"
fi

[ -x configure ] || autoreconf -fi
mkdir -p build
cd build
if [ ! -f Makefile ]; then
    ../configure PYTHON="$ROOT/.venv/bin/python3" ${CONFIGURE_FLAGS:-}
fi
make -j"$(nproc)"
