#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Distributed gravity measurements for bench/results/distributed.md: canopy-bench-
# dist-gravity on R ranks (one thread each) for a Plummer sphere, and the one-process
# multipole walk of the same bodies on one thread as the peer.
# usage: bench/run_dist_gravity.sh BUILD_DIR [N] [RANKS...]   (default 200000, 1 2 4)
set -eu
build=${1:?usage: run_dist_gravity.sh BUILD_DIR [N] [RANKS...]}
n=${2:-200000}
shift $(($# > 1 ? 2 : 1))
ranks=("${@:-1 2 4}")
export OMP_NUM_THREADS=1 CANOPY_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d /tmp/canopy-dist-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
"$build/canopy" gen plummer --n "$n" --seed 1 -o "$tmp/b.npy" >/dev/null
for i in 1 2 3; do
    "$build/canopy" gravity --bodies "$tmp/b.npy" --softening 0.01 --order 2 --theta 0.5 \
        --threads 1 -o "$tmp/a.npy" --stats 2>&1 | grep -E "traverse [0-9]"
done
for r in ${ranks[@]}; do
    reps=3
    [ "$r" -gt "$(nproc)" ] && reps=1 # oversubscribed: bytes and interactions only
    mpirun --oversubscribe -np "$r" "$build/canopy-bench-dist-gravity" --n "$n" --reps "$reps"
done
