#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 15's CPU goal in one command, for the 16-core host: one force evaluation of
# plummer1m (1M-body Plummer sphere, seed 1, eps 0.05), tree build included, at median
# relative error <= 1.45e-4 in <= 1 s on 16 cores. Builds a CPU-only canopy-bench-nbody
# (bench/run_nbody_cores.sh does the build) and runs the list engine (binary tree) at
# the settings chosen on the development VM (bench/results/nbody.md, "plummer1m with
# softened moments"), printing per setting the median and rms relative error (1000
# bodies against float64 direct summation) and build, walk + kernel and total wall ms
# (median, min-max), then the 1-thread baseline (CPU time). About a minute to build on
# 16 cores and half a minute to run.
#   bash bench/run_plummer1m_16core.sh [THREADS]      (default 16; N=... for fewer bodies)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
threads=${1:-16}
n=${N:-1000000}
CANOPY_NBODY_CORES_ONLY_BUILD=1 bash "$root/bench/run_nbody_cores.sh" "$threads"
b="${TMPDIR:-/tmp}/canopy-nbody-cores"
run() { "$b/canopy-bench-nbody" --lists --n "$n" --softening 0.05 --tree binary "$@"; }
echo "## $threads threads (wall time), order 2 groups of 512 and 256, order 3"
run --threads "$threads" --reps 5 --order 2 --group 512 --thetas 0.55,0.6
run --threads "$threads" --reps 5 --order 2 --group 256 --thetas 0.55 | tail -n 1
run --threads "$threads" --reps 3 --order 3 --group 512 --thetas 0.6 | tail -n 1
echo "## 1 thread (CPU time)"
run --threads 1 --reps 1 --order 2 --group 512 --thetas 0.55 | tail -n 1
