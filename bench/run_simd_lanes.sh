#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# simd_l with vector hooks against the scalar dr engine on one core (issue 18's goals:
# radius and gravity >= 2x, kNN on rand7/clust2 >= 1.5x): radius (~100 neighbours) and
# kNN (k = 8) on rand7 and clust2, Barnes-Hut on 200k-body Plummer and uniform sets;
# dr (and, for the unguided radius and gravity, sr: auto's scalar choice) and simd_l,
# each unsorted and tree-sorted, in one canopy-bench run per workload.
# Usage: bench/run_simd_lanes.sh BUILD_DIR OUT.jsonl   (bench/results/simt.md)
set -euo pipefail
b="$1"
out="$2"
data="${CANOPY_BENCH_DATA:-/tmp/canopy-bench-data}"
repeat="${CANOPY_BENCH_REPEAT:-3}"
mkdir -p "$data"
export CANOPY_THREADS=1 OMP_WAIT_POLICY=passive
: >"$out"
for w in rand7 clust2; do
    [ -f "$data/$w.npy" ] || "$b/canopy" gen $w -o "$data/$w.npy" --query-out "$data/$w.q.npy"
    for app in radius knn; do
        rad=()
        variants=dr,simd_l
        [ $app = radius ] && rad=(--mean-neighbours 100) && variants=dr,sr,simd_l
        "$b/canopy-bench" --app $app --ref "$data/$w.npy" --query "$data/$w.q.npy" -k 8 \
            "${rad[@]}" --backend cpu --variants $variants --schedules none,tree \
            --repeat "$repeat" --label "$w" >>"$out"
    done
done
for w in plummer1m rand1m3; do
    f="$data/$w-200k.npy"
    [ -f "$f" ] || "$b/canopy" gen $w --n 200000 -o "$f"
    "$b/canopy-bench" --app gravity --ref "$f" --theta 0.5 --softening 0.05 --backend cpu \
        --variants dr,sr,simd_l --schedules none,tree --repeat "$repeat" --label "$w-200k" >>"$out"
done
