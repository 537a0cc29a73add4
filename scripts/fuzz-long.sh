#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Nightly-style fuzzing: every libFuzzer target (build-fuzz/fuzz_*) for SECONDS each, or
# RUNS executions each, with the issue-21 limits (2 s per input, 2 GB), keeping the
# grown corpora in fuzz-corpora/ (git-ignored; seeded from tests/fuzz/corpus_<name>)
# and printing the executions per target. Crash inputs land in fuzz-corpora/crashes/.
#   scripts/fuzz-long.sh [-t SECONDS] [-n RUNS] [-j JOBS] [TARGET...]
# Defaults: 600 s per target, 1 job, every target. Exits 1 if any target failed.
set -euo pipefail
source "$(dirname "$0")/env.sh"
seconds=600 runs=-1 jobs=1
while getopts "t:n:j:" o; do
    case $o in
    t) seconds=$OPTARG ;;
    n) runs=$OPTARG seconds=0 ;;
    j) jobs=$OPTARG ;;
    *) sed -n '2,7p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
fuzz="$CANOPY_ROOT/build-fuzz"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || for f in "$CANOPY_ROOT"/tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
# Only the fuzz targets: the rest of the project need not build with clang here.
CC=clang cmake -S "$CANOPY_ROOT" -B "$fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCANOPY_SANITIZE=ON -DCANOPY_FUZZ=ON -DCANOPY_CUDA=OFF \
    -DCANOPY_WERROR=ON >/dev/null
cmake --build "$fuzz" -j "$CANOPY_JOBS" --target "${targets[@]}" >/dev/null
store="$CANOPY_ROOT/fuzz-corpora"
mkdir -p "$store/crashes"
failed=0
printf '%-20s %12s %10s %8s  %s\n' target execs exec/s corpus result
for t in "${targets[@]}"; do
    name=${t#fuzz_}
    corpus="$store/$name"
    mkdir -p "$corpus"
    seeds="$CANOPY_ROOT/tests/fuzz/corpus_$name"
    log="$store/$t.log"
    args=(-rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=2 -print_final_stats=1
          -artifact_prefix="$store/crashes/$t-")
    [ "$seconds" -gt 0 ] && args+=(-max_total_time="$seconds")
    [ "$runs" -ge 0 ] && args+=(-runs="$runs")
    [ "$jobs" -gt 1 ] && args+=(-fork="$jobs" -ignore_crashes=0)
    result=ok
    "$fuzz/$t" "${args[@]}" "$corpus" $([ -d "$seeds" ] && echo "$seeds") >"$log" 2>&1 ||
        { result="FAILED (see $log)"; failed=1; }
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{print $2}' | tail -n 1)
    printf '%-20s %12s %10s %8s  %s\n' "$t" "$execs" "${rate:-?}" "$(ls "$corpus" | wc -l)" "$result"
done
exit $failed
