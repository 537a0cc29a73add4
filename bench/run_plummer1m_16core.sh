#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 15's CPU goal in one command, for the 16-core host: one force evaluation of
# plummer1m (1M-body Plummer sphere, seed 1, eps 0.05), tree build included, at median
# relative error <= 1.45e-4 in <= 1 s on 16 cores. Builds a CPU-only canopy-bench-nbody
# (bench/run_nbody_cores.sh does the build) and runs the list engine (binary tree,
# groups of 512) at the settings chosen on the development VM (bench/results/nbody.md,
# "plummer1m ... softened moments"), printing per setting the median and rms error
# (1000 bodies against float64 direct summation) and build, walk + kernel and total
# wall ms (median, min-max of 5), then the 1-thread baseline (CPU time).
#   bash bench/run_plummer1m_16core.sh [THREADS]      (default 16)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
threads=${1:-16}
CANOPY_NBODY_CORES_ONLY_BUILD=1 bash "$root/bench/run_nbody_cores.sh" "$threads"
b="${TMPDIR:-/tmp}/canopy-nbody-cores"
run() { "$b/canopy-bench-nbody" --lists --n 1000000 --softening 0.05 --tree binary --group 512 "$@"; }
echo "## $threads threads (wall time)"
run --threads "$threads" --reps 5 --order 2 --thetas 0.5,0.55,0.6
run --threads "$threads" --reps 5 --order 3 --thetas 0.6,0.65 | tail -n 2
run --threads "$threads" --reps 5 --order 4 --thetas 0.75 | tail -n 1
echo "## 1 thread (CPU time)"
run --threads 1 --reps 1 --order 2 --thetas 0.55 | tail -n 1
