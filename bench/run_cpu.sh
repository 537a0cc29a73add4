#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU benchmark suite for the traversal engine: each CPU variant and schedule on the
# design's workloads (kNN k=8, NN and radius ~100 neighbours on rand7, clust2 and city2;
# Barnes-Hut on plummer1m and rand1m3), beside scipy cKDTree (workers=-1) and
# scikit-learn KDTree/BallTree (n_jobs=-1) on the same data and cores.
# Usage: bench/run_cpu.sh BUILD_DIR OUT_DIR   (writes OUT_DIR/cpu-*.jsonl)
set -uo pipefail
b="$1"
out="$2"
data="${CANOPY_BENCH_DATA:-/tmp/canopy-bench-data}"
repeat="${CANOPY_BENCH_REPEAT:-3}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$data" "$out"
gen() { [ -f "$data/$1.npy" ] || "$b/canopy" gen "$1" -o "$data/$1.npy" ${2:+--query-out "$data/$1.q.npy"}; }
for w in ${CANOPY_BENCH_WORKLOADS:-rand7 clust2 city2 plummer1m rand1m3}; do
    case $w in
    rand7 | clust2 | city2)
        gen $w q
        r="$data/$w.npy"
        q="$data/$w.q.npy"
        j="$out/cpu-$w.jsonl"
        : >"$j"
        for app in knn nn radius; do
            rad=()
            [ $app = radius ] && rad=(--mean-neighbours 100)
            variants="rec,dr,gdr,simd_l"
            [ $app = radius ] && variants="rec,dr,sr,gdr,simd_l"
            "$b/canopy-bench" --app $app --ref "$r" --query "$q" -k 8 "${rad[@]}" --backend cpu \
                --variants "$variants" --schedules none,tree --repeat "$repeat" --label "$w" >>"$j"
            [ $app = radius ] && rad=(-r "$(grep -o '"radius":[0-9.e-]*' "$j" | tail -1 | cut -d: -f2)")
            "$b/canopy-bench" --app $app --ref "$r" --query "$q" -k 8 "${rad[@]}" --backend cpu \
                --variants dr --schedules morton,hilbert --repeat "$repeat" --label "$w" >>"$j"
            python3 "$here/peers_cpu.py" --app $app --ref "$r" --query "$q" -k 8 "${rad[@]}" \
                --repeat "$repeat" --label "$w" >>"$j"
        done
        ;;
    plummer1m | rand1m3)
        gen $w
        j="$out/cpu-$w.jsonl"
        "$b/canopy-bench" --app gravity --ref "$data/$w.npy" --theta 0.5 --softening 0.05 \
            --backend cpu --variants dr,simd_l --schedules tree --repeat 1 --label "$w" >"$j"
        ;;
    esac
done
