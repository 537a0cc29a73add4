#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The distributed gravity's force error against one process's at the same options, over
# several Plummer spheres (issue 36's goal: median error <= 1.1x). One sphere is not
# enough: any change of the tree's cells (a rotation of the same bodies, four domain
# trees instead of one) moves the median error by up to ~5 % either way
# (bench/results/distributed.md), so a single pair of runs says little about ~5 %.
# For each seed: `canopy gen plummer --seed S`, then `canopy gravity --stats` as one
# process of CORES threads and as mpirun -np R of CORES / R threads, both measuring the
# median error on the same 1000 evenly spaced bodies against float64 direct summation.
# Prints a row per seed, then the mean errors and the ratio of the means, the median and
# range of the per-seed ratios.
# usage: bench/run_dist_gravity_error.sh [BUILD_DIR]   (default build-cpu; MPI build)
#   env: CORES (default nproc), RANKS (default 4), N (default 1000000),
#        SEEDS (default "1 2 3 4 5 6 7 8"), OPTS (default the goal's options:
#        "--order 2 --theta 0.5 --softening 0.05"), MPIRUN_ENV (as bench/run_dist_cli.sh)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-cpu}
cores=${CORES:-$(nproc)}
np=${RANKS:-4}
n=${N:-1000000}
seeds=${SEEDS:-1 2 3 4 5 6 7 8}
read -r -a opts <<<"${OPTS:---order 2 --theta 0.5 --softening 0.05}"
read -r -a run_env <<<"${MPIRUN_ENV:-}"
canopy=$build/canopy
if [ ! -x "$canopy" ] || [ ! -x "$build/canopy-mpi" ]; then
    echo "no canopy with MPI in $build" >&2
    exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t=$((cores / np > 0 ? cores / np : 1))
commit=${CANOPY_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "# $(date -u +%FT%TZ), commit $commit, $cores cores, $n Plummer bodies, ${opts[*]}," \
    "1 process x $cores against $np ranks x $t"
median_error() { sed -n 's/.*direct: median \([^,]*\),.*/\1/p' "$tmp/err"; }
echo "| seed | 1 process | $np ranks | ratio |"
echo "|---|---|---|---|"
for s in $seeds; do
    "$canopy" gen plummer --n "$n" --seed "$s" -o "$tmp/b.npy" >/dev/null
    env "${run_env[@]}" "$canopy" gravity --bodies "$tmp/b.npy" "${opts[@]}" --backend cpu \
        --threads "$cores" -o "$tmp/a1.npy" --stats 2>"$tmp/err" >/dev/null
    e1=$(median_error)
    env "${run_env[@]}" mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
        -np "$np" "$canopy" gravity --bodies "$tmp/b.npy" "${opts[@]}" --backend cpu \
        --threads "$t" -o "$tmp/a$np.npy" --stats 2>"$tmp/err" >/dev/null
    er=$(median_error)
    if [ -z "$e1" ] || [ -z "$er" ]; then
        cat "$tmp/err" >&2
        echo "seed $s: no error line in --stats" >&2
        exit 1
    fi
    echo "$s $e1 $er" >>"$tmp/rows"
    awk -v s="$s" -v a="$e1" -v b="$er" 'BEGIN { printf "| %s | %.3e | %.3e | %.3fx |\n", s, a, b, b / a }'
done
sort -k1,1 "$tmp/rows" | awk '{ a += $2; b += $3; r[NR] = $3 / $2 }
    END {
        for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
        m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
        printf "\nmean error: 1 process %.3e, ranks %.3e: ratio of the means %.3fx; per-seed ratios median %.3fx (%.3f-%.3f), %d seeds\n",
            a / NR, b / NR, b / a, m, r[1], r[NR], NR }'
