# SPDX-License-Identifier: Apache-2.0
# triton-venv.sh (sourced): triton_venv RELEASE prints the python of a venv with that Triton release
# and JAX: .venv when it has that release, else .venv-triton-<major.minor>, made (or remade for
# another patch release) on first use. Needs ROOT.
TRITON_VENV_DEPS=(jax==0.10.2 jaxlib==0.10.2 numpy pytest flatbuffers)   # JAX 0.10.2 runs with 3.6 .. 3.9
triton_venv() {
    local v=$1 dir
    for dir in "$ROOT/.venv" "$ROOT/.venv-triton-${1%.*}"; do
        if "$dir/bin/python3" -c "import sys, triton, jax, pytest; sys.exit(triton.__version__ != '$v')" 2>/dev/null; then
            echo "$dir/bin/python3"
            return
        fi
    done
    echo "triton-venv: installing triton==$v into ${dir#"$ROOT"/}" >&2
    python3 -m venv "$dir"
    "$dir/bin/python3" -m pip install -q "triton==$v" "${TRITON_VENV_DEPS[@]}" >&2
    echo "$dir/bin/python3"
}
