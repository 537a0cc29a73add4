#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 14's "CLI whole process" row: wall time of one `canopy knn` process (start,
# read .npy, build, query, write) on the rand7 workload (200k reference + 200k queries,
# uniform 7-D, k = 8), GPU and CPU backends, REPS runs each after one warm-up; prints
# median (min-max) seconds and one --stats breakdown of the GPU run.
# usage: bench/cli_knn_gpu.sh BUILD_DIR [OUT_DIR]   env: REPS (default 7)
set -euo pipefail
build=${1:?build directory with the canopy CLI}
out=${2:-${TMPDIR:-/tmp}/canopy-cli-knn}
reps=${REPS:-7}
mkdir -p "$out"
cli="$build/canopy"
"$cli" gen rand7 -o "$out/ref.npy" --query-out "$out/q.npy" >/dev/null
run() { "$cli" knn --ref "$out/ref.npy" --query "$out/q.npy" -k 8 -o "$out/idx.npy" "$@"; }
time_runs() { # backend -> "median min max" seconds of REPS runs
    local t=() a b
    run --backend "$1" >/dev/null || return 1
    for _ in $(seq "$reps"); do
        a=$(date +%s.%N)
        run --backend "$1" >/dev/null
        b=$(date +%s.%N)
        t+=("$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')")
    done
    printf '%s\n' "${t[@]}" | sort -g |
        awk '{ v[NR] = $1 } END { printf "%.3f %.3f %.3f", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
echo "| backend | whole process s, median (min-max) of $reps |"
echo "|---|---|"
for b in gpu cpu; do
    r=$(time_runs "$b") || { echo "| $b | failed: $(run --backend "$b" 2>&1 >/dev/null | tail -n 1) |"; continue; }
    read -r med lo hi <<<"$r"
    echo "| $b | $med ($lo-$hi) |"
done
echo
echo "GPU run, --stats:"
run --backend gpu --stats 2>&1 | tail -n 25
