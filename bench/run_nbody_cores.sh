#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 15's CPU goal: one force evaluation of plummer1m (1M-body Plummer sphere, seed 1,
# eps 0.05) at median error <= 1.45e-4 in <= 1 s on 16 host cores. Builds a CPU-only
# canopy-bench-nbody, then runs the list engine (binary tree) on THREADS cores (default:
# all) and on one core (the scaling baseline), printing the bench_nbody rows (median
# error, build, walk + kernel and total ms; wall time with several threads).
#   bash bench/run_nbody_cores.sh [THREADS]
# Needs no installs where json-c is present; elsewhere it unpacks .carry/debs/*.deb
# as scripts/gpu-check.sh does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
threads=${1:-$(nproc)}
prefix_args=()
if [ ! -e /usr/include/json-c/json.h ] && compgen -G "$root/.carry/debs/*.deb" >/dev/null; then
    jsonc="${TMPDIR:-/tmp}/canopy-jsonc"
    mkdir -p "$jsonc"
    for f in "$root"/.carry/debs/*.deb; do dpkg -x "$f" "$jsonc"; done
    prefix_args=(-DCMAKE_PREFIX_PATH="$jsonc/usr")
    export LD_LIBRARY_PATH="$jsonc/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
b="${TMPDIR:-/tmp}/canopy-nbody-cores"
cmake -S "$root" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCANOPY_CUDA=OFF \
    "${prefix_args[@]}" >/dev/null
cmake --build "$b" -j "$(nproc)" --target canopy-bench-nbody >/dev/null
echo "$(lscpu | grep 'Model name' | sed 's/  */ /g'); $(nproc) cores; commit" \
    "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown); $(date -u +%F)"
# bench/run_plummer1m_16core.sh reuses the build and the machine line only.
[ "${CANOPY_NBODY_CORES_ONLY_BUILD:-0}" = 1 ] && exit 0
run() { "$b/canopy-bench-nbody" --lists --n 1000000 --softening 0.05 --tree binary "$@"; }
echo "## $threads threads (wall time)"
run --threads "$threads" --reps 3 --group 512 --thetas 0.3,0.32
run --threads "$threads" --reps 3 --thetas 0.3 | tail -n 1
echo "## 1 thread (CPU time)"
run --threads 1 --reps 1 --group 512 --thetas 0.3 | tail -n 1
