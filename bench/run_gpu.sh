#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Short GPU benchmark suite (the shape of Goldfarb Table 1): every GPU variant on the
# design's workloads, sorted (schedule tree) and unsorted (none), beside our best CPU
# variant on all cores, torch brute force on the same GPU and scipy's cKDTree on all
# cores. Usage: bench/run_gpu.sh BUILD_DIR OUT_DIR. Writes OUT_DIR/bench-*.jsonl.
set -uo pipefail
b="$1"
out="$2"
data="${CANOPY_BENCH_DATA:-/tmp/canopy-bench-data}"
repeat="${CANOPY_BENCH_REPEAT:-5}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$data"
gen() { [ -f "$data/$1.npy" ] || "$b/canopy" gen "$1" -o "$data/$1.npy" ${2:+--query-out "$data/$1.q.npy"}; }
gen rand7 q
gen clust2 q
gen plummer1m
gen rand1m3

gpu_variants="rec,dr,gdr,dr_l,fsm_l"
workloads="${CANOPY_BENCH_WORKLOADS:-rand7 clust2 plummer1m rand1m3 accuracy}"
has() { case " $workloads " in *" $1 "*) return 0 ;; esac; return 1; }
for w in rand7 clust2; do
    has $w || continue
    r="$data/$w.npy"
    q="$data/$w.q.npy"
    j="$out/bench-$w.jsonl"
    : >"$j"
    for app in knn nn; do
        "$b/canopy-bench" --app $app --ref "$r" --query "$q" -k 8 --backend gpu \
            --variants "$gpu_variants" --schedules none,tree --repeat "$repeat" --label "$w" >>"$j"
        "$b/canopy-bench" --app $app --ref "$r" --query "$q" -k 8 --backend cpu \
            --variants dr,simd_l --schedules tree --repeat 3 --label "$w" >>"$j"
        python3 "$here/peers_gpu.py" --app $app --ref "$r" --query "$q" -k 8 --label "$w" \
            --repeat 3 >>"$j"
        python3 "$here/peers_cpu.py" --app $app --ref "$r" --query "$q" -k 8 --label "$w" \
            --repeat 3 --peers ckdtree >>"$j"
    done
    "$b/canopy-bench" --app radius --ref "$r" --query "$q" --mean-neighbours 100 --backend gpu \
        --variants "rec,dr,sr,gdr,dr_l,sr_l,fsm_l" --schedules none,tree --repeat "$repeat" \
        --label "$w" >>"$j"
    rad="$(grep -o '"radius":[0-9.e-]*' "$j" | tail -1 | cut -d: -f2)"
    "$b/canopy-bench" --app radius --ref "$r" --query "$q" -r "$rad" --backend cpu \
        --variants dr,simd_l --schedules tree --repeat 3 --label "$w" >>"$j"
    python3 "$here/peers_gpu.py" --app radius --ref "$r" --query "$q" -r "$rad" --label "$w" \
        --repeat 3 >>"$j"
    python3 "$here/peers_cpu.py" --app radius --ref "$r" --query "$q" -r "$rad" --label "$w" \
        --repeat 3 --peers ckdtree >>"$j"
done
for w in plummer1m rand1m3; do
    has $w || continue
    j="$out/bench-$w.jsonl"
    : >"$j"
    "$b/canopy-bench" --app gravity --ref "$data/$w.npy" --theta 0.5 --softening 0.05 \
        --backend gpu --variants "dr,sr,gdr,dr_l,sr_l,fsm_l" --schedules none,tree \
        --repeat 3 --label "$w" >>"$j"
    "$b/canopy-bench" --app gravity --ref "$data/$w.npy" --theta 0.5 --softening 0.05 \
        --backend cpu --variants dr --schedules tree --repeat 1 --label "$w" >>"$j"
done
# Gravity accuracy against a float64 direct sum on 10,000 bodies, per opening angle:
# the goal compares codes at equal error, not equal theta.
j="$out/gravity-accuracy.jsonl"
has accuracy && : >"$j"
for theta in 0.3 0.4 0.5 0.6 0.7; do
    has accuracy || break
    "$b/canopy" gravity --bodies "$data/plummer1m.npy" --theta $theta --softening 0.05 \
        --backend gpu --variant sr_l -o "$data/acc.npy" --stats 2>"$data/stats.txt" >/dev/null
    python3 "$here/gravity_accuracy.py" --bodies "$data/plummer1m.npy" --acc "$data/acc.npy" \
        --softening 0.05 --label "theta $theta, $(grep -o 'build [0-9.]* s\|traverse [0-9.]* s' "$data/stats.txt" | tr '\n' ' ')" >>"$j"
done
