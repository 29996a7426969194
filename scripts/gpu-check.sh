#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpu-check.sh: trident's whole GPU check in one run, on a machine with an
# NVIDIA GPU, from a build tree made on a development machine and carried
# over (.device/build, configured against the sources at /work/main, plus the
# shared libraries in .device/lib). Runs the unit tests (the CUDA ones
# included), the demo, the CLI, the benchmark and the Python suite, writes the
# logs to $OUT (or .device/out), and prints a summary table last.
#
#   scripts/gpu-check.sh [STEP...]     steps: tests demo tune cli bench bench-cli python xla perf record-probe
#                                      record-python record-bench pytest-sel update-bench updates (default: tests
#                                      demo tune cli bench python xla)
#
# record-* (the RECORD stage, issue 24; each fits one device call): record-probe prints whether XLA made kernel
# nodes of trident's launches (scripts/record-probe.py's table and verdict); record-python runs the Python suite
# with command buffers on and then off; record-bench runs bench_xla with the record route on and off
# (TRIDENT_XLA_RECORD=0) and bench_xla --updates with it on. record-bench and update-bench (bench_xla's update-cost
# columns) time BENCH_XLA_PATHS (default trident,trident.jax,floor,floor+record,xla: floor+record is the least a
# record handler can do, the yardstick of trident's update cost).
# perf (a few minutes): bench_graph, bench_host, first_call, bench_kernels, matmul_spec, bench_xla --ncu and --updates,
# each under its own time limit; the tables land in $OUT/perf.log (bench/NOTES.md says what they mean).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${TRD_BUILD:-/work/main/.device/build}
LOGS=${OUT:-$ROOT/.device/out}
mkdir -p "$LOGS"
# The build tree names its sources /work/main: make that path this checkout.
if [ "$(readlink -f /work/main 2>/dev/null)" != "$ROOT" ] && [ ! -d /work/main/.git ]; then
    mkdir -p /work && rm -f /work/main && ln -s "$ROOT" /work/main
fi
export LD_LIBRARY_PATH="$ROOT/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TRD_BUILDDIR=$BUILD TRD_SRCDIR=/work/main CK_DEFAULT_TIMEOUT=600
export XDG_CONFIG_HOME=$BUILD/tests/home/config XDG_CACHE_HOME=$BUILD/tests/home/cache
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
for v in $(env | sed -n 's/^\(TRIDENT_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
# Python: the package from this checkout over the carried build; pure-Python extras (pytest, jax-triton
# for the comparison) from .device/py when the machine lacks them.
export TRIDENT_LIBRARY=$BUILD/core/.libs/libtrident.so.1
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}:$ROOT/.device/py"
STEPS=${*:-tests demo tune cli bench python xla}
LOGS_KEEP=$LOGS
LOGS=$(mktemp -d)   # one log a step here; $LOGS_KEEP gets all.log and the benchmark's
SUMMARY=()

record() { # name rc note
    local status=PASS
    [ "$2" -eq 77 ] && status=SKIP
    [ "$2" -ne 0 ] && [ "$2" -ne 77 ] && status="FAIL($2)"
    SUMMARY+=("| $1 | $status | $3 |")
}

step() { # name log command...
    local name=$1 log=$2
    shift 2
    local t0=$(date +%s.%N)
    "$@" > "$LOGS/$log" 2>&1
    local rc=$?
    { echo "===== $name (rc=$rc)"; cat "$LOGS/$log"; } >> "$LOGS_KEEP/all.log"   # as it goes: a cut-off run keeps it
    local secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
    local note=$(grep -E "Checks:|SKIP|verified|passed|failed|error" "$LOGS/$log" | tail -1 | cut -c1-110)
    record "$name" "$rc" "${secs}s ${note//|//}"
    echo "== $name: rc=$rc"
    tail -5 "$LOGS/$log"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$LOGS/gpu.txt" 2>&1 || true
echo "GPU: $(cat "$LOGS/gpu.txt")"

for s in $STEPS; do
    case $s in
    tests)
        for t in tests/cuda/test_cuda tests/cuda/test_cuda_tma tests/test_core tests/test_loader tests/test_host tests/test_options \
                 tests/test_config tests/test_cli tests/test_xla tests/test_prepared tests/test_drivers_common \
                 tests/test_null_driver tests/test_tune tests/doubles/test_double tests/hip/test_hip tests/hip/test_hip_real; do
            [ -x "$BUILD/$t" ] || continue
            step "$t" "$(basename "$t").log" bash -c "cd '$BUILD' && ./$t"
        done ;;
    demo)
        step "vadd_demo" demo.log bash -c "cd '$BUILD' && ./examples/vadd_demo examples/add_kernel.trdb 10000000" ;;
    tune) # a Triton fp32 matmul at three sm90 configurations, tuned at run time (issue 26)
        step "tune_matmul (sm90 variants)" tune.log bash -c "python3 '$ROOT/bench/make_tune_matmul.py' '$LOGS/mm.trdb' \
            '$BUILD/tools/trident' && cd '$BUILD' && ./examples/tune_matmul '$LOGS/mm.trdb' 2048 2048 2048 && \
            ./tools/trident run '$LOGS/mm.trdb' --tune buf:4194304:rand buf:4194304:rand buf:4194304 2048 2048 2048 -r 20" ;;
    cli)
        step "trident devices+drivers" cli.log bash -c "cd '$BUILD' && ./tools/trident devices && ./tools/trident drivers && ./tools/trident devices --json"
        step "trident run (cubin)" cli_run.log bash -c "cd '$BUILD' && ./tools/trident run examples/add_kernel.trdb -g 1000 buf:1024000:rand buf:1024000:seq buf:1024000 1024000 -r 100 -p 4 --check 'out_ptr==x_ptr+y_ptr'"
        step "trident devices -v, drivers -v" cli_detail.log bash -c "cd '$BUILD' && ./tools/trident devices -v && ./tools/trident drivers -v" ;;
    bench)
        [ -x "$BUILD/bench/bench_cuda" ] && step "bench_cuda" bench_cuda.log bash -c "cd '$BUILD' && ./bench/bench_cuda" ;;
    bench-cli) # only bench_cuda's trident run rows (the CLI's median vs raw cuLaunchKernel timed alike)
        [ -x "$BUILD/bench/bench_cuda" ] && step "bench_cuda --only cli" bench_cuda.log bash -c "cd '$BUILD' && ./bench/bench_cuda --only cli" ;;
    python)
        if [ -d "$ROOT/python/tests" ] && [ -f "$BUILD/core/.libs/libtrident.so.1" ]; then
            step "python tests (CUDA)" python.log bash -c "cd '$ROOT/python' && python3 -m pytest -q -rs tests"
        fi ;;
    xla)
        step "bench_xla" bench_xla.log python3 "$ROOT/bench/bench_xla.py" ;;
    record-probe)
        step "record-probe" record_probe.log python3 "$ROOT/scripts/record-probe.py" ;;
    record-python)
        step "python tests, command buffers on" python_cb_on.log bash -c "cd '$ROOT/python' && python3 -m pytest -q -rs tests"
        step "python tests, command buffers off" python_cb_off.log bash -c \
            "cd '$ROOT/python' && XLA_FLAGS=--xla_gpu_enable_command_buffer= python3 -m pytest -q -rs tests" ;;
    pytest-sel) # a chosen part of the Python suite: GPU_PYTEST="tests/test_x.py -k y"
        step "python tests: ${GPU_PYTEST:-tests}" python_sel.log bash -c "cd '$ROOT/python' && python3 -m pytest -q -rs ${GPU_PYTEST:-tests}" ;;
    update-bench) # bench_xla in one process a setting: its update-cost columns (inputs moving between executions)
        step "bench_xla, one process a setting" bench_xla_moving.log env BENCH_XLA_PROCESSES=1 \
            BENCH_XLA_RUNS=${BENCH_XLA_RUNS:-20} BENCH_XLA_PATHS=${BENCH_XLA_PATHS:-trident,trident.jax,floor,floor+record,xla} \
            python3 "$ROOT/bench/bench_xla.py" ;;
    updates) # bench_xla --updates alone: XLA's own account of its command-buffer updates, a child a path
        step "bench_xla --updates" bench_xla_updates.log timeout 300 python3 "$ROOT/bench/bench_xla.py" --updates ;;
    record-bench)
        paths=${BENCH_XLA_PATHS:-trident,trident.jax,floor,floor+record,xla}
        step "bench_xla, record route on" bench_xla_record.log env BENCH_XLA_PATHS=$paths python3 "$ROOT/bench/bench_xla.py"
        step "bench_xla, record route off" bench_xla_capture.log env BENCH_XLA_PATHS=$paths TRIDENT_XLA_RECORD=0 \
            python3 "$ROOT/bench/bench_xla.py"
        step "bench_xla --updates, record route on" bench_xla_updates.log timeout 300 python3 "$ROOT/bench/bench_xla.py" --updates ;;
    perf)
        step "bench_graph" perf_graph.log bash -c "cd '$BUILD' && timeout 120 ./bench/bench_graph '$ROOT/tests/fixtures/triton/cuda'"
        step "bench_host" perf_host.log bash -c "cd '$BUILD' && timeout 120 ./bench/bench_host '$BUILD/examples/host/.libs/add_kernel.so'"
        step "first_call" perf_first_call.log env FIRST_CALL_PROCESSES=${FIRST_CALL_PROCESSES:-2} timeout 300 python3 "$ROOT/bench/first_call.py"
        step "bench_kernels" perf_kernels.log timeout 240 python3 "$ROOT/bench/bench_kernels.py"
        step "matmul_spec" perf_matmul_spec.log timeout 120 python3 "$ROOT/bench/matmul_spec.py"
        step "bench_xla --ncu" perf_ncu.log timeout 180 python3 "$ROOT/bench/bench_xla.py" --ncu
        step "bench_xla --updates" perf_updates.log timeout 180 python3 "$ROOT/bench/bench_xla.py" --updates
        cat "$LOGS"/perf_*.log > "$LOGS/perf.log" ;;
    esac
done

RECORD_LOGS="record_probe.log bench_xla_record.log bench_xla_capture.log bench_xla_updates.log"
for f in bench_cuda.log bench_xla.log perf.log gpu.txt $RECORD_LOGS; do [ -f "$LOGS/$f" ] && cp "$LOGS/$f" "$LOGS_KEEP/"; done
echo
echo "| check | result | note |"
echo "|---|---|---|"
printf '%s\n' "${SUMMARY[@]}"
for f in bench_cuda.log bench_xla.log perf.log $RECORD_LOGS; do
    [ -f "$LOGS/$f" ] && { echo; echo "($f)"; grep -E '^\||^bench|^first_call|^matmul_spec|^[A-Za-z ]*\(this run\)|^Where|^record route' "$LOGS/$f"; }
done
