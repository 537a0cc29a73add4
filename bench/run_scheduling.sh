#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Scheduling benchmark (issue 5, the shape of Liu Table 3.2): for each application and
# workload, fixed (variant, schedule) pairs beside auto/auto, sorted by nothing (the
# generator's order), by the tree, and by the hybrid inspector-executor; plus shuffled
# copies of clust2 and plummer1m. Times are schedule + traverse (the scheduling
# overhead counts), medians of CANOPY_BENCH_REPEAT runs after a warm-up.
# Usage: bench/run_scheduling.sh BUILD_DIR OUT_DIR [gpu|cpu]...  (default: gpu cpu)
# Writes OUT_DIR/sched-<backend>.jsonl; bench/report_scheduling.py makes the tables.
set -uo pipefail
b="$1"
out="$2"
shift 2
backends="${*:-gpu cpu}"
data="${CANOPY_BENCH_DATA:-/tmp/canopy-bench-data}"
repeat="${CANOPY_BENCH_REPEAT:-3}"
mkdir -p "$data" "$out"
gen() { [ -f "$data/$1.npy" ] || "$b/canopy" gen "$1" -o "$data/$1.npy" ${2:+--query-out "$data/$1.q.npy"}; }
gen rand7 q
gen clust2 q
gen plummer1m
gen rand1m3

run() { # backend label app variants schedules [extra args]
    local be="$1" label="$2" app="$3" vs="$4" ss="$5"
    shift 5
    "$b/canopy-bench" --app "$app" --backend "$be" --variants "$vs" --schedules "$ss" \
        --repeat "$repeat" --label "$label" "$@"
}

for be in $backends; do
    j="$out/sched-$be.jsonl"
    : >"$j"
    if [ "$be" = gpu ]; then
        guided_v="gdr,dr_l,fsm_l"
        unguided_v="sr,dr_l,fsm_l"
        grav_v="sr,dr_l,fsm_l"
    else
        guided_v="dr,gdr"
        unguided_v="dr,sr,simd_l"
        grav_v="sr,simd_l"
    fi
    scheds="none,tree,hybrid"
    for w in rand7 clust2; do
        for sh in "" 1; do
            [ "$w" = rand7 ] && [ -n "$sh" ] && continue # rand7 queries are already random
            label="$w${sh:+-shuffled}"
            args=(--ref "$data/$w.npy" --query "$data/$w.q.npy" ${sh:+--shuffle 12345})
            for app in knn nn; do
                run "$be" "$label" $app "$guided_v" "$scheds" "${args[@]}" -k 8 >>"$j"
                run "$be" "$label" $app auto auto "${args[@]}" -k 8 >>"$j"
            done
            run "$be" "$label" radius "$unguided_v" "$scheds" "${args[@]}" --mean-neighbours 100 >>"$j"
            run "$be" "$label" radius auto auto "${args[@]}" --mean-neighbours 100 >>"$j"
        done
    done
    [ "$be" = cpu ] && [ -z "${CANOPY_BENCH_CPU_GRAVITY:-}" ] && continue # minutes per run on few cores
    for w in plummer1m rand1m3; do
        for sh in "" 1; do
            [ "$w" = rand1m3 ] && [ -n "$sh" ] && continue
            label="$w${sh:+-shuffled}"
            args=(--ref "$data/$w.npy" --theta 0.5 --softening 0.05 ${sh:+--shuffle 12345})
            run "$be" "$label" gravity "$grav_v" "$scheds" "${args[@]}" >>"$j"
            run "$be" "$label" gravity auto auto "${args[@]}" >>"$j"
        done
    done
done
