#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite from a fresh clone: install deps, then
#   1. Release build (with CUDA when nvcc exists; GPU tests skip visibly without a GPU), ctest
#   2. ASan + UBSan build (CPU only), ctest
#   3. libFuzzer smoke run of every parser (clang)
#   4. install to a temporary prefix; build and run examples/knn.c with find_package and pkg-config
#   5. the README quick start, run as written (scripts/quickstart.sh)
#   6. the Python package: pip install ./python in a fresh venv, then pytest
# Exits non-zero if anything fails.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CANOPY_ROOT/scripts/install-deps.sh"
fuzz_seconds="${CANOPY_FUZZ_SECONDS:-10}"

echo "== 1/6 release build and tests"
configure_and_build "$CANOPY_ROOT/build" -DCMAKE_BUILD_TYPE=Release -DCANOPY_WERROR=ON
ctest --test-dir "$CANOPY_ROOT/build" --output-on-failure -j "$CANOPY_JOBS"

echo "== 2/6 sanitizer build (ASan + UBSan) and tests"
configure_and_build "$CANOPY_ROOT/build-san" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCANOPY_SANITIZE=ON -DCANOPY_CUDA=OFF -DCANOPY_WERROR=ON
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$CANOPY_ROOT/build-san" --output-on-failure -j "$CANOPY_JOBS" -LE gpu \
    -E retrain

echo "== 3/6 fuzz smoke (${fuzz_seconds}s per target)"
CC=clang configure_and_build "$CANOPY_ROOT/build-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCANOPY_FUZZ=ON -DCANOPY_CUDA=OFF -DCANOPY_WERROR=ON
fuzzers=0
for f in "$CANOPY_ROOT"/build-fuzz/fuzz_*; do
    [ -x "$f" ] || continue
    name="$(basename "$f")"
    corpus="$CANOPY_ROOT/tests/fuzz/corpus_${name#fuzz_}"
    work="$(mktemp -d)"
    [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
    echo "-- $name"
    # Limits of issue 21: no input may take 2 s or allocate 2 GB.
    "$f" -max_total_time="$fuzz_seconds" -print_final_stats=0 -rss_limit_mb=2048 \
        -malloc_limit_mb=2048 -timeout=2 "$work" 2>"$work.log" ||
        { tail -n 40 "$work.log"; exit 1; }
    fuzzers=$((fuzzers + 1))
    rm -rf "$work" "$work.log"
done
echo "fuzz: $fuzzers targets ran ${fuzz_seconds}s each without a crash (longer: scripts/fuzz-long.sh)"

echo "== 4/6 install to a prefix, then a user's build with find_package and pkg-config"
"$CANOPY_ROOT/tests/install/run.sh" "$CANOPY_ROOT/build"

echo "== 5/6 README quick start, as written"
"$CANOPY_ROOT/scripts/quickstart.sh" >"$CANOPY_ROOT/build/quickstart.log" 2>&1 ||
    { cat "$CANOPY_ROOT/build/quickstart.log"; exit 1; }
tail -n 1 "$CANOPY_ROOT/build/quickstart.log"

echo "== 6/6 Python package: fresh venv, pip install ./python, pytest"
"$CANOPY_ROOT/python/run_tests.sh"
echo "== all test stages passed"
