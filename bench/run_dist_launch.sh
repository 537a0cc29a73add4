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
# environment reaches mpirun, so canopy cannot set this for it; "canopy, no GPU topology"
# is `canopy --version` so launched), REPS times
# interleaved, with the same mpirun options as bench/run_dist_cli.sh. Prints the
# median and min-max of each; the difference between rows is where the floor goes.
# The bare program also runs with the PML canopy sets on one node (ob1) and with ob1 and
# the fewest components a one-node run needs (btl self,vader, coll and osc without the
# unused ones): if the last row's MPI_Init_thread is shorter on a large host, canopy
# could set those too. Then, where strace exists, one traced `mpirun -np R true`: from
# mpirun's exec to the first rank's (and within it the files read under /sys and /proc,
# hwloc's discovery of the node), the ranks' lives, and from the last rank's exit to
# mpirun's, with mpirun's longest quiet stretches (no system call in any of its threads)
# in the start and the end.
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
    case $label in bare*) echo "$label $(tail -1 "$tmp/err")" >>"$tmp/bare_calls" ;; esac
}
# shellcheck disable=SC2054 # the commas are inside the values
few_components=(OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_coll=basic,libnbc,self,sm,tuned
    OMPI_MCA_osc=sm)
for _ in $(seq "$reps"); do
    run true true
    pre=("${no_gpu_topology[@]}")
    run true-nogpu true
    pre=()
    run bare "$tmp/bare"
    pre=(OMPI_MCA_pml=ob1)
    run bare-ob1 "$tmp/bare"
    pre=("${few_components[@]}")
    run bare-few "$tmp/bare"
    pre=()
    run canopy-mpi "$build/canopy-mpi" --version
    run canopy "$build/canopy" --version
    pre=("${no_gpu_topology[@]}")
    run canopy-nogpu "$build/canopy" --version
    pre=()
    if [ -n "$base" ]; then run base "$base/canopy-mpi" --version; fi
done
stats() { sort -n | awk '{ v[NR] = $1 } END { printf "%.3f (%.3f-%.3f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
printf "%-34s %-22s %s\n" "mpirun -np $np ..." "wall s, median (min-max)" "CPU s (all processes)"
for l in true true-nogpu bare bare-ob1 bare-few canopy-mpi canopy canopy-nogpu ${base:+base}; do
    case $l in
        base) l2="base canopy-mpi" ;;
        true-nogpu) l2="true, no GPU topology" ;;
        canopy-nogpu) l2="canopy, no GPU topology" ;;
        bare-ob1) l2="bare, pml ob1" ;;
        bare-few) l2="bare, ob1 and few components" ;;
        *) l2=$l ;;
    esac
    printf "%-34s %-22s %s\n" "$l2" "$(awk -v l="$l" '$1 == l { print $2 }' "$tmp/rows" | stats)" \
        "$(awk -v l="$l" '$1 == l { print $3 }' "$tmp/rows" | stats)"
done
for l in bare bare-ob1 bare-few; do
    printf "%s, rank 0: MPI_Init_thread %s s, MPI_Finalize %s s\n" "$l" \
        "$(awk -v l="$l" '$1 == l { print $2 }' "$tmp/bare_calls" | stats)" \
        "$(awk -v l="$l" '$1 == l { print $3 }' "$tmp/bare_calls" | stats)"
done
command -v strace >/dev/null || { echo "strace not found: no trace of mpirun"; exit 0; }
# shellcheck disable=SC2086
strace -f -tt -o "$tmp/trace" mpirun --oversubscribe --bind-to none ${MCA:-} -np "$np" true \
    >/dev/null 2>&1 || { echo "mpirun under strace failed"; exit 0; }
awk -v np="$np" '
function sec(s, a) { split(s, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
NR == 1 { mp = $1; t0 = sec($2) }
{ t[NR] = sec($2); pid[NR] = $1; txt[NR] = substr($0, length($1) + length($2) + 3, 90) }
/execve\("[^"]*\/true"/ { rank[$1] = 1; if (!first) first = t[NR] }
/\+\+\+ exited/ && ($1 in rank) { last = t[NR] }
!first && /openat\(AT_FDCWD, "\/(sys|proc)\// { nsys++; if (!s0) s0 = t[NR]; s1 = t[NR] }
!first && /openat\(.*\.so[."]/ && !/ENOENT/ { nso++ }
END {
    printf "mpirun -np %d true under strace -f (slower than without): mpirun'"'"'s exec to the first rank'"'"'s %.3f s", np, first - t0
    printf " (%d files opened under /sys and /proc, first to last %.3f s; %d shared objects loaded),", nsys, s1 - s0, nso
    printf " the ranks'"'"' lives %.3f s, the last rank'"'"'s exit to mpirun'"'"'s %.3f s\n", last - first, t[NR] - last
    n = 0; prev = t0
    for (i = 1; i <= NR; i++) {
        if (pid[i] in rank) continue
        if ((t[i] <= first || t[i] >= last) && t[i] - prev > 0.002) {
            gap[++n] = t[i] - prev; at[n] = i; ph[n] = t[i] <= first ? "start" : "end"
        }
        prev = t[i]
    }
    for (m = 1; m <= 5 && m <= n; m++) {
        b = 0
        for (j = 1; j <= n; j++) if (!(j in done) && (!b || gap[j] > gap[b])) b = j
        done[b] = 1
        printf "  %s: mpirun quiet %.3f s, then %s\n", ph[b], gap[b], txt[at[b]]
    }
}' "$tmp/trace"
