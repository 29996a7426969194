#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz.sh [SECONDS]: builds the libFuzzer targets (clang, ASan+UBSan) in
# build-fuzz/ and runs each for SECONDS (default 20), seeded with the test
# fixtures; fails on the first crash, leak or hang found.
#
# A long campaign (hours, every core, the corpus kept between runs) for one target:
#   scripts/fuzz.sh 0   # builds build-fuzz/ and seeds build-fuzz/corpus/ without running
#   cd build-fuzz && ./fuzz/fuzz_ini_file -jobs=$(nproc) -workers=$(nproc) -max_total_time=14400 \
#       -rss_limit_mb=2048 -timeout=10 corpus/fuzz_ini_file
# Crashes land as crash-<sha1> files in the current directory; replay one with ./fuzz/<target> crash-<sha1>.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-20}
mkdir -p "$ROOT/build-fuzz"
cd "$ROOT/build-fuzz"
[ -f Makefile ] || CC=clang "$ROOT/configure" --enable-fuzzers --with-xla-ffi=no --enable-cuda=no --enable-hip=no \
    --enable-levelzero=no >/dev/null
TARGETS="fuzz_bundle fuzz_metadata fuzz_signature fuzz_config fuzz_ini_file fuzz_options fuzz_host_image fuzz_grid_rule"
make -j"$(nproc)" $(for t in $TARGETS; do echo fuzz/$t; done) tools/trident examples/host/add_kernel.la >/dev/null
# seeds: real inputs of each parser
rm -rf corpus && mkdir -p corpus
for t in $TARGETS; do mkdir -p corpus/$t; done
F="$ROOT/tests/fixtures"
./tools/trident bundle -o corpus/fuzz_bundle/add.trdb "$F/triton/cuda/add_fp32/add_kernel.json" \
    examples/host/.libs/add_kernel.so >/dev/null
seed() { for f in "${@:2}"; do cp "$f" "corpus/$1/$(echo "$f" | md5sum | cut -c1-12)"; done; }
seed fuzz_metadata "$F"/triton/*/*/*.json
seed fuzz_signature "$F"/triton/cuda/*/*.ttir
cp "$ROOT"/fuzz/seeds/signature/* corpus/fuzz_signature/
cp "$ROOT"/fuzz/seeds/config/* corpus/fuzz_config/
./tools/trident options > corpus/fuzz_config/all.ini
cp corpus/fuzz_config/* corpus/fuzz_ini_file/
cp "$ROOT"/fuzz/seeds/options/* corpus/fuzz_options/
cp "$ROOT"/fuzz/seeds/grid_rule/* corpus/fuzz_grid_rule/
cp examples/host/.libs/add_kernel.so corpus/fuzz_host_image/
[ "$SECS" = 0 ] && { echo "fuzz: built and seeded (build-fuzz/corpus)"; exit 0; }
for t in $TARGETS; do
    echo "fuzz: $t for ${SECS}s"
    ./fuzz/$t -max_total_time="$SECS" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 corpus/$t \
        > "$t.log" 2>&1 || { tail -40 "$t.log"; echo "fuzz: $t FAILED"; exit 1; }
    grep -E "stat::number_of_executed_units" "$t.log" | sed "s/^/  /"
done
echo "fuzz: no crash in $SECS s per target"
