#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 36 item 2 (bench/results/distributed.md, "One GPU through the distributed path"):
# an n-body step of N Plummer bodies (theta 0.5, order 2, softening 0.01, dt 1/128) on
# one GPU, by `canopy nbody --backend gpu` (one process, --stats "s per step") and by
# canopy_dist_nbody on one MPI rank (canopy-bench-dist-gravity --nbody STEPS): bucket
# opening (the single-GPU engine, state on the device) and body opening (the host-built
# octree, the path before). Prints the runs, then one markdown table; the goal is a
# ratio <= 1.2 for the bucket row.
# usage: bench/run_dist_1gpu.sh BUILD_DIR [N]   (default 1000000)
#   env: STEPS (100), REPS (3), THREADS (16), BODY_STEPS (10: the body-opening row, one
#        run: a step there takes about 0.3 s), CANOPY_COMMIT (printed)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_dist_1gpu.sh BUILD_DIR [N]}
n=${2:-1000000}
steps=${STEPS:-100}
reps=${REPS:-3}
threads=${THREADS:-16}
for p in canopy canopy-bench-dist-gravity; do
    [ -x "$build/$p" ] || { echo "dist1gpu: $build/$p missing (a build with CUDA and MPI)"; exit 1; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive \
    CANOPY_THREADS="$threads" OMP_NUM_THREADS="$threads"
tmp=$(mktemp -d /tmp/canopy-1gpu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
commit=${CANOPY_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "# $(date -u +%FT%TZ), commit $commit, $(nproc) cores," \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), n $n, $steps steps, reps $reps"
"$build/canopy" gen plummer --n "$n" -o "$tmp/b.npy" --velocities "$tmp/v.npy" >/dev/null
# median (min-max) of the arguments
med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { printf "%s (%s-%s)", a[int((NR + 1) / 2)], a[1], a[NR] }'; }
single=()
for r in $(seq "$reps"); do
    out=$("$build/canopy" nbody --bodies "$tmp/b.npy" --velocities "$tmp/v.npy" --steps "$steps" \
        --dt 0.0078125 --softening 0.01 --theta 0.5 --order 2 --backend gpu --stats 2>&1) ||
        { echo "FAILED: canopy nbody"; echo "$out"; touch "$tmp/failed"; }
    echo "$out" | grep -i "per step" || true
    single+=("$(echo "$out" | sed -n 's/.*steps\/s, \([0-9.e+-]*\) s per step.*/\1/p' | head -1)")
done
dist() { # opening runs steps: the median of that many runs' s per step
    local v=()
    for r in $(seq "$2"); do
        out=$(mpirun --bind-to none -np 1 -x CANOPY_THREADS -x OMP_NUM_THREADS -x OMP_WAIT_POLICY \
            "$build/canopy-bench-dist-gravity" --n "$n" --reps 1 --backend gpu --opening "$1" \
            --theta 0.5 --order 2 --eps 0.01 --nbody "$3" 2>&1) ||
            { echo "FAILED: distributed $1" >&2; echo "$out" >&2; touch "$tmp/failed"; }
        echo "$out" | grep -E "^n-body|median error" >&2 || true
        v+=("$(echo "$out" | sed -n 's/^n-body: .* \([0-9.e+-]*\) s per step.*/\1/p')")
    done
    med "${v[@]}"
}
s1=$(med "${single[@]}")
db=$(dist bucket "$reps" "$steps")
dh=$(dist body 1 "${BODY_STEPS:-10}")
ratio() { awk -v a="${1%% *}" -v b="${s1%% *}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
echo
echo "| n-body step, $n Plummer bodies, 1 GPU | s per step, median (min-max) of $reps | vs canopy nbody --backend gpu |"
echo "|---|---|---|"
echo "| canopy nbody --backend gpu (one process) | $s1 | 1 |"
echo "| canopy_dist_nbody, 1 rank, bucket opening (device build, state on the device) | $db | $(ratio "$db") |"
echo "| canopy_dist_nbody, 1 rank, body opening (host-built octree; ${BODY_STEPS:-10} steps, 1 run) | $dh | $(ratio "$dh") |"
[ ! -e "$tmp/failed" ]
