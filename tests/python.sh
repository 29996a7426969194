#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/python.sh: the Python suite (python/tests) against this build's
# libtrident. Skips (exit 77) with a visible line where JAX is not installed.
# Arguments, if any, replace the suite (e.g. tests/test_triton_release.py).
PY=${PYTHON:-python3}
[ "$PY" = none ] && PY=python3
if ! "$PY" -c "import jax, numpy, pytest" 2>/dev/null; then
    echo "SKIP: python tests: $PY cannot import jax, numpy and pytest (pip install jax jaxlib pytest)"
    exit 77
fi
TRIDENT_LIBRARY="$TRD_BUILDDIR/core/.libs/libtrident.so.1"
if [ ! -f "$TRIDENT_LIBRARY" ]; then
    echo "python tests: $TRIDENT_LIBRARY is missing"
    exit 1
fi
export TRIDENT_LIBRARY
export PYTHONPATH="$TRD_SRCDIR/python${PYTHONPATH:+:$PYTHONPATH}"
export JAX_PLATFORMS=${JAX_PLATFORMS:-cpu}
[ $# -gt 0 ] || set -- tests
cd "$TRD_SRCDIR/python" && exec "$PY" -m pytest -q -rs -p no:cacheprovider "$@"
