#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Parallel efficiency of distributed gravity on one many-core host (issue 16's goal:
# >= 70 % at 4 ranks for a plummer1m force evaluation; bench/results/distributed.md).
# Builds a CPU-only MPI build if BUILD_DIR has none, then runs canopy-bench-dist-gravity
# with mpirun -np 1, 2, 4 and CORES / np OpenMP threads per rank (the same cores in all),
# and prints each run's table and the parallel efficiency of the whole
# canopy_dist_gravity call (one-shot: equal-count domains; median of REPS) and of the
# force evaluation alone (slowest rank), on equal-count domains and on domains cut by
# the interactions measured in the evaluation before (an n-body step's situation).
# Efficiency is in core-seconds, T(1) c(1) / (T(np) c(np)) with c = np x threads per
# rank: every rank count uses the same cores, so 100 % means distributing cost nothing.
# usage: bench/run_dist_16core.sh [BUILD_DIR] [N]   (default build-dist16, 1000000)
# Then the whole `canopy gravity` and `canopy knn` processes on R = 4 ranks against one
# process on the same cores (bench/run_dist_cli.sh: N Plummer bodies, 2N + 2N kNN).
#   env: CORES (default nproc), RANKS (default "1 2 4"), REPS (default 1),
#        OPENING (list, the default: the single-process list engine; or body),
#        CMAKE_ARGS (extra configure arguments, e.g. -DCMAKE_PREFIX_PATH=<json-c>),
#        CANOPY_COMMIT (printed; for a copy of the tree without .git)
# Any existing build with the MPI layer will do as BUILD_DIR (gpu-check's build-gpu:
# the bench runs on the CPU only). Time: 3 force evaluations per rank count, about
# 1-2 minutes for 1M bodies on 16 cores.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-dist16}
n=${2:-1000000}
cores=${CORES:-$(nproc)}
ranks=${RANKS:-1 2 4}
reps=${REPS:-1}
opening=${OPENING:-list}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
if [ ! -x "$build/canopy-bench-dist-gravity" ]; then
    # shellcheck disable=SC2086 # CMAKE_ARGS are words
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCANOPY_CUDA=OFF \
        -DCANOPY_MPI=ON ${CMAKE_ARGS:-} >"$build.cmake.log" 2>&1 || { cat "$build.cmake.log"; exit 1; }
    cmake --build "$build" --target canopy-bench-dist-gravity -j "$cores" >"$build.build.log" 2>&1 ||
        { tail -n 40 "$build.build.log"; exit 1; }
fi
commit=${CANOPY_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "# $(date -u +%FT%TZ), commit $commit," \
    "$cores cores:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), n $n, reps $reps"
declare -A job force bal
for np in $ranks; do
    t=$((cores / np > 0 ? cores / np : 1))
    echo "## np $np, $t threads per rank"
    # --bind-to none: each rank's OpenMP team spreads over its share of the cores; a
    # rank waiting in MPI yields its core rather than spinning on it.
    out=$(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -np "$np" \
        -x CANOPY_THREADS="$t" \
        -x OMP_NUM_THREADS="$t" -x OMP_WAIT_POLICY "$build/canopy-bench-dist-gravity" \
        --n "$n" --reps "$reps" --opening "$opening")
    echo "$out"
    job[$np]=$(echo "$out" | sed -n 's/.*canopy_dist_gravity \([0-9.]*\) s median.*/\1/p')
    force[$np]=$(echo "$out" | sed -n 's/.*slowest rank: equal counts \([0-9.]*\) s.*/\1/p')
    bal[$np]=$(echo "$out" | sed -n 's/.*balanced by measured work \([0-9.]*\) s.*/\1/p')
done
echo
echo "| ranks | threads / rank | canopy_dist_gravity s | efficiency | force evaluation s, equal counts | efficiency | force evaluation s, balanced by work | efficiency |"
echo "|---|---|---|---|---|---|---|---|"
first=${ranks%% *}
for np in $ranks; do
    awk -v np="$np" -v t="$((cores / np > 0 ? cores / np : 1))" -v r1="$first" \
        -v j="${job[$np]}" -v j1="${job[$first]}" -v f="${force[$np]}" -v f1="${force[$first]}" \
        -v b="${bal[$np]}" -v b1="${bal[$first]}" \
        -v c="$((np * (cores / np > 0 ? cores / np : 1)))" -v c1="$((first * (cores / first > 0 ? cores / first : 1)))" \
        'function eff(x1, x) { return x > 0 ? 100 * x1 * c1 / (c * x) : 0 }
         BEGIN { printf "| %d | %d | %.3f | %.0f %% | %.3f | %.0f %% | %.3f | %.0f %% |\n",
                 np, t, j, eff(j1, j), f, eff(f1, f), b, eff(b1, b) }'
done
echo
cmake --build "$build" --target canopy canopy-mpi -j "$cores" >"$build.build.log" 2>&1 ||
    { tail -n 40 "$build.build.log"; exit 1; }
CORES=$cores RANKS=4 REPS=${CLI_REPS:-3} N_GRAV=$n N_KNN=$((2 * n)) "$root/bench/run_dist_cli.sh" "$build"
