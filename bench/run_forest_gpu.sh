#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Wu ch. 5 on the GPU: scikit-learn random forests (100 trees, max depth 8-15) on synth,
# shuttle and satellite; every GPU engine x layout x mapping against the csr baseline,
# and the best CPU engines on all cores of the same machine, in one run.
# Usage: bench/run_forest_gpu.sh BUILD_DIR OUT_DIR CSV_DIR
#   CSV_DIR holds shuttle.csv.gz and satellite.csv.gz (../shared/data, staged).
# Env: FOREST_SETS (synth,shuttle,satellite), FOREST_DEPTHS (8,10,12,15; `none`: to
#      purity), FOREST_TREES (100), FOREST_MAX_SAMPLES (0.25; 1: full bootstrap),
#      FOREST_REPEAT (5; the CPU runs 3), FOREST_SYNTH_ROWS (1500000),
#      FOREST_ROWS (1000000: the UCI sets are tiled to this many rows; 0: as they are),
#      FOREST_GPU_SPECS (space-separated engine specs instead of the full grid; e.g.
#      without `enc`, whose NVRTC source grows with the forest).
# Ren et al.'s workload: FOREST_SETS=shuttle,satellite FOREST_DEPTHS=none
#      FOREST_TREES=3584 FOREST_MAX_SAMPLES=1 FOREST_ROWS=0.
# Writes OUT_DIR/forest-gpu.jsonl (one line per configuration) and models.log;
# bench/forest_gpu_report.py turns the JSON lines into the tables of
# bench/results/forests-gpu.md.
set -uo pipefail
b="$1"
out="$2"
csv="$3"
here="$(cd "$(dirname "$0")" && pwd)"
sets="${FOREST_SETS:-synth,shuttle,satellite}"
depths="${FOREST_DEPTHS:-8,10,12,15}"
repeat="${FOREST_REPEAT:-5}"
models="${FOREST_MODELS:-/tmp/canopy-forest-models}"
mkdir -p "$out" "$models"
python3 "$here/forest_gpu_models.py" --data "$csv" --out "$models" --sets "$sets" \
    --depths "$depths" --synth-rows "${FOREST_SYNTH_ROWS:-1500000}" \
    --rows "${FOREST_ROWS:-1000000}" --trees "${FOREST_TREES:-100}" \
    --max-samples "${FOREST_MAX_SAMPLES:-0.25}" >>"$out/models.log" 2>&1 || exit 1

gpu_specs=(gpu:iter:csr:0:atomic gpu:iter:csr:0:atomic_free)
for d in 3 4 5; do
    gpu_specs+=(gpu:iter:hier:$d:atomic gpu:iter:hier:$d:atomic_free)
done
gpu_specs+=(gpu:enc:hier:4:atomic gpu:enc:hier:5:atomic gpu:enc:hier:5:atomic_free
    gpu:collab:hier:4:atomic gpu:collab:hier:5:atomic gpu:collab:hier:5:atomic_free
    gpu:iter:sll:0:atomic gpu:ren:auto:0:atomic gpu:ren:auto:0:atomic_free)
if [ -n "${FOREST_GPU_SPECS:-}" ]; then read -r -a gpu_specs <<<"$FOREST_GPU_SPECS"; fi
cpu_specs=(cpu:auto:auto cpu:vm_simd:auto cpu:scalar:df)
j="$out/forest-gpu.jsonl"
IFS=, read -r -a set_list <<<"$sets"
IFS=, read -r -a depth_list <<<"$depths"
for s in "${set_list[@]}"; do
    for d in "${depth_list[@]}"; do
        m="$models/${s}_d$d.json"
        x="$models/$s.X.npy"
        "$b/canopy-forest-bench" --model "$m" --data "$x" --label "${s}_d$d" --repeat "$repeat" \
            "${gpu_specs[@]}" >>"$j"
        OMP_PROC_BIND=close "$b/canopy-forest-bench" --model "$m" --data "$x" \
            --label "${s}_d$d" --repeat 3 "${cpu_specs[@]}" >>"$j"
        echo "done ${s}_d$d" >&2
    done
done
