#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzzing on a many-core machine with prebuilt targets (e.g. build-fuzz/ copied to a host
# without clang): every target gets RUNS executions, split into chunks that a pool of
# JOBS processes works through, slowest targets first, all within SECONDS of wall time.
# Same limits as CI and fuzz-long.sh (2 s per input, 2 GB). Prints executions per target.
#   scripts/fuzz-pool.sh -b BINDIR -s SEEDDIR -o WORKDIR [-n RUNS] [-t SECONDS] [-j JOBS]
#                        [-c CHUNK] TARGET[:RUNS]...
# BINDIR holds fuzz_<name>; SEEDDIR holds corpus_<name>/; WORKDIR receives the grown
# corpora (a corpus_<name>/ already there is continued), logs and crash inputs. RUNS after
# a target overrides -n for it. Exits 1 if any chunk found a crash, leak or timeout.
set -euo pipefail
runs=10000000 seconds=540 jobs=$(nproc) chunk=2500000 bin="" seeds="" work=""
while getopts "b:s:o:n:t:j:c:" o; do
    case $o in
    b) bin=$OPTARG ;;
    s) seeds=$OPTARG ;;
    o) work=$OPTARG ;;
    n) runs=$OPTARG ;;
    t) seconds=$OPTARG ;;
    j) jobs=$OPTARG ;;
    c) chunk=$OPTARG ;;
    *) sed -n '7,11p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ -n "$bin" ] && [ -n "$seeds" ] && [ -n "$work" ] && [ $# -gt 0 ] ||
    { sed -n '7,11p' "$0" >&2; exit 2; }
mkdir -p "$work/crashes" "$work/logs"
deadline=$(($(date +%s) + seconds))

# One line per chunk: target, chunk number, executions. Targets in the order given.
units="$work/units"
: >"$units"
targets=()
for spec in "$@"; do
    t=${spec%%:*} total=$runs
    [ "$t" = "$spec" ] || total=${spec#*:}
    targets+=("$t")
    mkdir -p "$work/corpus_$t"
    for ((i = 1; total > 0; i++, total -= chunk)); do
        echo "$t $i $((total < chunk ? total : chunk))" >>"$units"
    done
done

run_chunk() {
    local t=$1 i=$2 n=$3 left=$((deadline - $(date +%s)))
    [ "$left" -gt 5 ] || return 0
    "$bin/fuzz_$t" -runs="$n" -max_total_time="$left" -rss_limit_mb=2048 \
        -malloc_limit_mb=2048 -timeout=2 -print_final_stats=1 \
        -artifact_prefix="$work/crashes/$t-$i-" "$work/corpus_$t" "$seeds/corpus_$t" \
        >"$work/logs/$t.$i.log" 2>&1 || echo "FAILED $t chunk $i" >>"$work/failed"
}
export -f run_chunk
export bin seeds work deadline
# One thread per fuzzer: JOBS processes each with an OpenMP team of nproc threads
# oversubscribe the cores many times over (graph builds run parallel loops).
export OMP_NUM_THREADS=1 CANOPY_THREADS=1
xargs -P "$jobs" -L 1 bash -c 'run_chunk "$@"' _ <"$units"

printf '%-14s %12s %8s %8s\n' target execs chunks corpus
for t in "${targets[@]}"; do
    logs=("$work/logs/$t".*.log)
    [ -e "${logs[0]}" ] || logs=()
    execs=$(cat "${logs[@]}" /dev/null |
        awk '/^stat::number_of_executed_units:/ {s += $2} END {print s + 0}')
    printf '%-14s %12s %8s %8s\n' "$t" "$execs" "${#logs[@]}" "$(ls "$work/corpus_$t" | wc -l)"
done
[ ! -s "$work/failed" ] || { cat "$work/failed"; exit 1; }
