#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 30's GPU rows on the GPU machine: whole calls through the public C API from host
# arrays and from device pointers (index builds 200k, kNN k = 8 and NN on clust2, cities
# and rand7, plummer1m gravity; bench/bench_edges_gpu.c), in BUILD (a CUDA build), the
# markdown table to OUT/edges-gpu.md. bench/run_edges.sh calls it for the GPU section of
# bench/results/edges.md; scripts/gpu-check.sh runs it as stage edges.
# Usage: bench/run_edges_gpu.sh BUILD OUT [reps]   (default 15 reps)
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 BUILD OUT [reps]" >&2
    exit 2
fi
build="$1" out="$2" reps="${3:-15}"
bin="$build/canopy-bench-edges-gpu"
if [ ! -x "$bin" ]; then
    echo "$0: $bin not found (a CUDA build of canopy is needed)" >&2
    exit 1
fi
mkdir -p "$out"
CANOPY_THREADS="${CANOPY_THREADS:-$(nproc)}" "$bin" "$reps" >"$out/edges-gpu.md"
cat "$out/edges-gpu.md"
