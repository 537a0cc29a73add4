#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One MPI rank per GPU on a two-GPU host (issue 17; bench/results/distributed.md, "Two
# GPUs"): canopy-bench-dist-gravity with --backend gpu for a Plummer sphere of N bodies
# on 1 rank (1 GPU) and 2 ranks (2 GPUs), THREADS OpenMP threads per rank (the host
# builds the trees and exports the pieces), the strong-scaling efficiency
# T(1) / (2 T(2)) of the force evaluation (slowest rank, median of REPS; domains cut by
# measured work, as in an n-body step) and of the whole canopy_dist_gravity call; weak
# scaling (2N bodies on 2 GPUs against N on 1); an NBODY_STEPS-step canopy_dist_nbody run
# on 2 GPUs with its energy error; the same force evaluation on the CPU of one rank
# (THREADS threads, one repeat) as the peer; 1 and 2 GPUs again with the octrees built
# on the GPUs (CANOPY_DIST_GPU_BUILD=1), and 2 GPUs with the pieces sent GPU to GPU by
# NCCL (CANOPY_DIST_NCCL=1); kNN k=8 of KNN_N queries among KNN_N reference
# points in 3-D (canopy-bench-dist) on 1 and 2 GPUs, whose rows must be identical.
# Prints the runs' own tables, then one markdown table.
# usage: bench/run_dist_2gpu.sh BUILD_DIR [N]   (default 1000000)
#   env: THREADS (per rank, default 16), REPS (3), NBODY_STEPS (100), KNN_N (2000000),
#        CANOPY_COMMIT (printed; for a copy of the tree without .git)
# Prints one line and exits 0 when fewer than 2 GPUs are visible.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_dist_2gpu.sh BUILD_DIR [N]}
n=${2:-1000000}
threads=${THREADS:-16}
reps=${REPS:-3}
steps=${NBODY_STEPS:-100}
knn=${KNN_N:-2000000}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$ngpu" -lt 2 ]; then
    echo "dist2gpu: skipped: $ngpu GPU(s) visible, this bench needs 2"
    exit 0
fi
for p in canopy-bench-dist-gravity canopy-bench-dist; do
    [ -x "$build/$p" ] || { echo "dist2gpu: $build/$p missing (a build with CUDA and MPI)"; exit 1; }
done
# NVLink multicast (NVLS) stays off wherever NCCL is used.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive \
    NCCL_NVLS_ENABLE=0
tmp=$(mktemp -d /tmp/canopy-2gpu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
commit=${CANOPY_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "# $(date -u +%FT%TZ), commit $commit, $(nproc) cores:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)," \
    "$ngpu GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)," \
    "$threads threads per rank, reps $reps"

# mpirun NP PROGRAM ARGS...: one rank per GPU (gpu_bind: local rank % devices);
# --bind-to none lets each rank's OpenMP team spread over its cores.
run() {
    local np=$1
    shift
    mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -np "$np" \
        -x CANOPY_THREADS="$threads" -x OMP_NUM_THREADS="$threads" -x OMP_WAIT_POLICY \
        -x NCCL_NVLS_ENABLE -x CANOPY_DIST_GPU_BUILD="${gpu_build:-0}" \
        -x CANOPY_DIST_NCCL="${nccl:-0}" "$@"
}
# key LINE: the value after "key" in a bench's "result:" line
val() { echo "$2" | tr ' ' '\n' | awk -v k="$1" 'p { print; exit } $0 == k { p = 1 }'; }

declare -A res
grav() { # name np n backend [extra args]
    local name=$1 np=$2 nb=$3 be=$4
    shift 4
    echo "## $name: np $np, n $nb, backend $be"
    local out
    # a failed run is reported and the others still run
    out=$(run "$np" "$build/canopy-bench-dist-gravity" --n "$nb" --reps "$reps" --backend "$be" \
        "$@" 2>&1) || { echo "FAILED: $name"; failed=1; }
    echo "$out"
    res[$name]=$(echo "$out" | grep '^result:' || true)
}
failed=0
grav cpu1 1 "$n" cpu --reps 1
grav gpu1 1 "$n" gpu
grav gpu2 2 "$n" gpu --nbody "$steps"
grav weak2 2 "$((2 * n))" gpu
gpu_build=1 # the octrees built on the GPUs (CANOPY_DIST_GPU_BUILD, experimental)
grav gpu1b 1 "$n" gpu
grav gpu2b 2 "$n" gpu
gpu_build=0
nccl=1 # the pieces GPU to GPU by NCCL (CANOPY_DIST_NCCL)
grav gpu2n 2 "$n" gpu
nccl=0

declare -A kt
for np in 1 2; do
    echo "## kNN k=8: $knn reference + $knn query points, 3-D, np $np, backend gpu"
    out=$(run "$np" "$build/canopy-bench-dist" "$knn" "$knn" 3 8 "$reps" - gpu "$tmp/rows$np.bin" 2>&1) ||
        { echo "FAILED: kNN np $np"; failed=1; }
    echo "$out"
    kt[$np]=$(echo "$out" | awk -F'|' '/canopy_dist_knn/ { gsub(/ /, "", $5); gsub(/ /, "", $6); print $5 " (" $6 ")"; exit }')
done
if cmp -s "$tmp/rows1.bin" "$tmp/rows2.bin"; then same="identical rows"; else same="ROWS DIFFER"; fi

echo
echo "| run | ranks × GPUs | bodies | force evaluation s (balanced) | build s | of which octree s, moments s | local walk s | remote walk s | comm s | canopy_dist_gravity s, median (min–max) | efficiency | median error vs direct | n-body |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
row() { # name label ref-name(for efficiency) factor
    local r=${res[$1]} e="–"
    if [ -n "$3" ]; then
        e=$(awk -v a="$(val balanced "${res[$3]}")" -v b="$(val balanced "$r")" -v f="$4" \
            -v ja="$(val job "${res[$3]}")" -v jb="$(val job "$r")" \
            'function pct(x, y) { return y > 0 ? 100 * x * f / y : 0 }
             BEGIN { printf "%.0f %% (force), %.0f %% (call)", pct(a, b), pct(ja, jb) }')
    fi
    local nb="–" st
    st=$(val steps "$r")
    if [ -n "$st" ] && [ "$st" != 0 ]; then
        nb="$st steps, $(val step "$r") s/step, \|dE/E\| $(val de "$r")"
    fi
    echo "| $2 | $(val ranks "$r") × $([ "$(val gpu "$r")" = 1 ] && val ranks "$r" || echo 0) | $(val n "$r") |" \
        "$(val balanced "$r") | $(val build "$r") | $(val tree "$r"), $(val moments "$r") |" \
        "$(val lwalk "$r") | $(val rwalk "$r") | $(val comm "$r") |" \
        "$(val job "$r") ($(val jobmin "$r")–$(val jobmax "$r")) | $e | $(val err "$r") | $nb |"
}
row cpu1 "CPU peer ($threads threads, 1 rep)" "" 1
row gpu1 "1 GPU" "" 1
row gpu2 "2 GPUs, strong" gpu1 0.5
row weak2 "2 GPUs, weak (2× bodies)" gpu1 1
row gpu1b "1 GPU, octree built on the GPU" "" 1
row gpu2b "2 GPUs, octrees built on the GPUs, strong" gpu1b 0.5
row gpu2n "2 GPUs, pieces by NCCL $([ "$(val nccl "${res[gpu2n]}")" = 1 ] || echo '(NOT USED: fell back to MPI)'), strong" gpu1 0.5
echo
echo "| kNN k=8, 3-D | 1 GPU s, median (min–max) | 2 GPUs s, median (min–max) | 2 GPUs vs 1 GPU |"
echo "|---|---|---|---|"
echo "| $knn + $knn | ${kt[1]} | ${kt[2]} | $same |"
[ "$same" = "identical rows" ] && [ "$failed" = 0 ]
