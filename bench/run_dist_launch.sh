#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The launch floor of a distributed canopy run (issue 36): the wall and CPU seconds of
# `mpirun -np R` starting processes that do nothing (`true`), a bare C program that only
# calls MPI_Init_thread(FUNNELED) and MPI_Finalize (built here with mpicc, printing how
# long each call took on rank 0), `canopy-mpi --version` (MPI started and stopped as for
# every command), `canopy --version` (the plain CLI handing over to canopy-mpi), and
# `true` once more with hwloc's GPU and display plugins off in mpirun's own environment
# (the row "true, no GPU topology": mpirun discovers the node's topology before it starts
# a rank, and those plugins load GPU drivers to list devices; only the user's
# environment reaches mpirun, so canopy cannot set this for it), REPS times
# interleaved, with the same mpirun options as bench/run_dist_cli.sh. Prints the
# median and min-max of each; the difference between rows is where the floor goes.
# usage: bench/run_dist_launch.sh [BUILD_DIR [BASE_BUILD_DIR]]   (default build-cpu; needs
#   canopy with MPI; a BASE_BUILD_DIR, e.g. a build of an older commit, adds its
#   canopy-mpi --version, interleaved with the others, as the row "base canopy-mpi")
#   env: RANKS (default 2), REPS (default 7), MCA (extra mpirun arguments for every run,
#        e.g. "--mca btl self,vader --mca pml ob1")
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-cpu}
base=${2:-}
np=${RANKS:-2}
reps=${REPS:-7}
if [ ! -x "$build/canopy" ] || [ ! -x "$build/canopy-mpi" ]; then
    echo "no canopy with MPI in $build" >&2
    exit 1
fi
if [ -n "$base" ] && [ ! -x "$base/canopy-mpi" ]; then
    echo "no canopy-mpi in $base" >&2
    exit 1
fi
command -v mpicc >/dev/null || { echo "mpicc not found (install libopenmpi-dev)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
export OMPI_MCA_btl_vader_single_copy_mechanism=none
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/bare.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <time.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
int main(int argc, char **argv) {
    int provided, rank;
    double a = now();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    double b = now();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double c = now();
    MPI_Finalize();
    if (rank == 0) fprintf(stderr, "%.3f %.3f\n", b - a, now() - c);
    return 0;
}
C
mpicc -O2 "$tmp/bare.c" -o "$tmp/bare"
echo "# $(date -u +%FT%TZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
    "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), -np $np, reps $reps," \
    "$(mpirun --version | head -1)${MCA:+, $MCA}"
# shellcheck disable=SC2054 # the commas are inside the values
no_gpu_topology=(HWLOC_PLUGINS_BLACKLIST=hwloc_opencl,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero,hwloc_gl
    HWLOC_COMPONENTS=-opencl,-cuda,-nvml,-rsmi,-levelzero,-gl)
pre=() # mpirun's own extra environment
run() { # label, command...
    local label=$1
    shift
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S" -o "$tmp/time" env "${pre[@]}" mpirun --oversubscribe --bind-to none \
        ${MCA:-} -np "$np" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    awk -v l="$label" '{ printf "%s %.3f %.3f\n", l, $1, $2 + $3 }' "$tmp/time" >>"$tmp/rows"
    if [ "$label" = bare ]; then tail -1 "$tmp/err" >>"$tmp/bare_calls"; fi
}
for _ in $(seq "$reps"); do
    run true true
    pre=("${no_gpu_topology[@]}")
    run true-nogpu true
    pre=()
    run bare "$tmp/bare"
    run canopy-mpi "$build/canopy-mpi" --version
    run canopy "$build/canopy" --version
    if [ -n "$base" ]; then run base "$base/canopy-mpi" --version; fi
done
stats() { sort -n | awk '{ v[NR] = $1 } END { printf "%.3f (%.3f-%.3f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
printf "%-34s %-22s %s\n" "mpirun -np $np ..." "wall s, median (min-max)" "CPU s (all processes)"
for l in true true-nogpu bare canopy-mpi canopy ${base:+base}; do
    case $l in
        base) l2="base canopy-mpi" ;;
        true-nogpu) l2="true, no GPU topology" ;;
        *) l2=$l ;;
    esac
    printf "%-34s %-22s %s\n" "$l2" "$(awk -v l="$l" '$1 == l { print $2 }' "$tmp/rows" | stats)" \
        "$(awk -v l="$l" '$1 == l { print $3 }' "$tmp/rows" | stats)"
done
printf "bare, rank 0: MPI_Init_thread %s s, MPI_Finalize %s s\n" \
    "$(cut -d' ' -f1 "$tmp/bare_calls" | stats)" "$(cut -d' ' -f2 "$tmp/bare_calls" | stats)"
