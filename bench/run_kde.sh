#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kernel density estimates against scikit-learn's KernelDensity in one process on the
# same float32 data (bench/kde_bench.py says what runs). Needs python3 with numpy and
# scikit-learn (bench/requirements.txt).
# Usage: bench/run_kde.sh BUILD_DIR OUT_DIR
#   CANOPY_BENCH_SIZES (default 20000,50000,100000,200000), CANOPY_BENCH_SK_MAX (largest
#   size scikit-learn runs whole, default 100000), CANOPY_BENCH_SK_SAMPLE (above that,
#   scikit-learn scores this many queries and its time is scaled; default 0: not run),
#   CANOPY_BENCH_KERNELS (default gaussian), CANOPY_BENCH_BACKEND (cpu, the default, or
#   gpu: canopy on the GPU in wall seconds), CANOPY_BENCH_REPS (default 3).
#   Writes OUT_DIR/kde.md and kde.jsonl.
set -euo pipefail
b="$(cd "$1" && pwd)"
out="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
# before OMP_NUM_THREADS, which nproc obeys
machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
export OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export PYTHONPATH="$root/python/src" CANOPY_LIBRARY="$b/libcanopy.so"
: >"$out/kde.jsonl"
{
    echo "- machine: $machine, load average $(cut -d' ' -f1-3 /proc/loadavg); date $(date -u +%Y-%m-%dT%H:%MZ);" \
        "commit ${CANOPY_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    python3 "$root/bench/kde_bench.py" --sizes "${CANOPY_BENCH_SIZES:-20000,50000,100000,200000}" \
        --sk-max "${CANOPY_BENCH_SK_MAX:-100000}" --sk-sample "${CANOPY_BENCH_SK_SAMPLE:-0}" \
        --kernels "${CANOPY_BENCH_KERNELS:-gaussian}" --backend "${CANOPY_BENCH_BACKEND:-cpu}" \
        --reps "${CANOPY_BENCH_REPS:-3}" --jsonl "$out/kde.jsonl"
} | tee "$out/kde.md"
