#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run_dist_cli.sh on a 2-core machine: `canopy gravity` (200k Plummer, order 2)
# and `canopy knn` (1M + 1M uniform 3-D, k 8), 2 ranks x 1 thread against 1 process x
# 2 threads. usage: bench/run_dist_2core.sh [BUILD_DIR]   (default build-cpu)
set -eu
CORES=2 RANKS=2 REPS=${REPS:-5} exec "$(dirname "$0")/run_dist_cli.sh" "$@"
