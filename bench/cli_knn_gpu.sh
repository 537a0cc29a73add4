#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 14's "CLI whole process" row: wall time of one `canopy knn` process (start,
# read .npy, build, query, write) on the rand7 workload (200k reference + 200k queries,
# uniform 7-D, k = 8), REPS runs each after one warm-up, median (min-max) seconds:
#   gpu                 --backend gpu: kd tree built on the GPU, pinned staging, CUDA
#                       started on a thread while the input is read
#   gpu, no early CUDA  the same with CANOPY_CLI_EARLY_CUDA=0 (CUDA starts at the first
#                       GPU call): what the overlap saves
#   gpu, self-queries   no --query: the generic path (host build, tree upload)
#   cpu                 --backend cpu, all cores
#   canopy info         module load + device query as a whole process: CUDA's start-up
#                       floor on this machine
# then the --stats breakdown (phases) of one run of each GPU configuration.
# usage: bench/cli_knn_gpu.sh BUILD_DIR [OUT_DIR]   env: REPS (default 7)
set -euo pipefail
build=${1:?build directory with the canopy CLI}
out=${2:-${TMPDIR:-/tmp}/canopy-cli-knn}
reps=${REPS:-7}
mkdir -p "$out"
cli="$build/canopy"
"$cli" gen rand7 -o "$out/ref.npy" --query-out "$out/q.npy" >/dev/null
knn() { "$cli" knn --ref "$out/ref.npy" -k 8 -o "$out/idx.npy" "$@"; }
# configuration name -> the command line (a function of the extra arguments)
run_cfg() {
    local cfg=$1
    shift
    case $cfg in
    gpu) knn --query "$out/q.npy" --backend gpu "$@" ;;
    gpu-late) CANOPY_CLI_EARLY_CUDA=0 knn --query "$out/q.npy" --backend gpu "$@" ;;
    gpu-self) knn --backend gpu "$@" ;;
    cpu) knn --query "$out/q.npy" --backend cpu "$@" ;;
    info) "$cli" info "$@" ;;
    esac
}
time_runs() { # configuration -> "median min max" seconds of REPS runs
    local t=() a b
    run_cfg "$1" >/dev/null || return 1
    for _ in $(seq "$reps"); do
        a=$(date +%s.%N)
        run_cfg "$1" >/dev/null
        b=$(date +%s.%N)
        t+=("$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')")
    done
    printf '%s\n' "${t[@]}" | sort -g |
        awk '{ v[NR] = $1 } END { printf "%.3f %.3f %.3f", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
declare -A label=([gpu]="gpu (device build, pinned staging, early CUDA start)"
    [gpu-late]="gpu, no early CUDA start (CANOPY_CLI_EARLY_CUDA=0)"
    [gpu-self]="gpu, self-queries (generic path: host build + tree upload)"
    [cpu]="cpu (all cores)" [info]="canopy info (CUDA module + device query only)")
echo "| configuration | whole process s, median (min-max) of $reps |"
echo "|---|---|"
for c in gpu gpu-late gpu-self cpu info; do
    r=$(time_runs "$c") || {
        echo "| ${label[$c]} | failed: $(run_cfg "$c" 2>&1 >/dev/null | tail -n 1) |"
        continue
    }
    read -r med lo hi <<<"$r"
    echo "| ${label[$c]} | $med ($lo-$hi) |"
done
for c in gpu gpu-late gpu-self; do
    echo
    echo "${label[$c]}, --stats:"
    echo '```'
    run_cfg "$c" --stats 2>&1 | tail -n 25
    echo '```'
done
