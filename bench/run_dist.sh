#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Distributed kNN (bench/bench_dist.c) on R = 1, 2, 4 ranks of this machine: k = 8,
# N reference + NQ query points, d = 3 (defaults 200000 each). The cores are shared
# out: each rank runs max(1, cores / R) threads. Prints a markdown table for
# bench/results/distributed.md.
# usage: bench/run_dist.sh BUILD_DIR [N NQ D K REPS [self]]
set -euo pipefail
build=${1:?usage: run_dist.sh BUILD_DIR [N NQ D K REPS [self]]}
shift
cores=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
echo "| program | ranks | threads/rank | median s | min–max s | per rank (last repeat): points, query-phase MB sent, remote queries, MB sent placing points, local and communication seconds |"
echo "| --- | --- | --- | --- | --- | --- |"
for np in 1 2 4; do
    t=$((cores / np))
    [ "$t" -lt 1 ] && t=1
    CANOPY_THREADS=$t mpirun --oversubscribe -np "$np" "$build/canopy-bench-dist" "$@"
done
