#!/bin/sh
# SPDX-License-Identifier: MIT
# CPU gravity tables of bench/results/nbody.md (issue 15): Liu ch. 4's comparisons on
# the interaction-list engine (local walk vs lists, hot/cold vs fused records, bucket vs
# particle opening, octree vs binary tree), one thread, 100k-body Plummer sphere, and
# the REBOUND comparison. Usage: bench/run_nbody_cpu.sh [BUILD_DIR] (default build).
set -eu
B=${1:-build}
N=${N:-100000}
R=${REPS:-3}
L="$B/canopy-bench-nbody --lists --n $N --reps $R --threads 1"
echo "## local walk vs interaction lists (octree, bucket 16)"
$L --tree oct --bucket 16 --group 16 --local-walk --thetas 0.5,0.7
$L --tree oct --bucket 16 --group 256 --thetas 0.5,0.7 | tail -n +3
echo "## hot/cold vs fused records"
$L --tree both --thetas 0.5,0.7
$L --tree both --fused --thetas 0.5,0.7 | tail -n +3
echo "## bucket vs particle opening (binary, bucket 16)"
$L --tree both --bucket 16 --group 16 --thetas 0.5,0.7
$L --tree both --bucket 16 --per-body --thetas 0.5,0.7 | tail -n +3
echo "## REBOUND"
python3 "$(dirname "$0")/rebound_compare.py" --build "$B" --n "$N" --reps "$R"
