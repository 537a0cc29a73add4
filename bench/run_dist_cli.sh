#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Whole `canopy` processes over MPI ranks against the fastest single process on the
# same cores (issue 36): `canopy gravity` on a Plummer sphere (order 2, the default
# list opening and binary tree, softening 0.05) and `canopy knn` (N uniform 3-D
# queries against N uniform points, k 8), both --backend cpu (a GPU build would walk a
# single process on the GPU), each as one process of CORES threads and
# as mpirun -np R of CORES / R threads per rank, REPS times interleaved. Prints the
# wall seconds of each (median, min-max), the time ratio and the efficiency
# T(1 process) / T(R ranks) (the same cores, so 100 % means distributing cost nothing),
# and the CPU seconds of each (user + system, all ranks; on a loaded machine the wall
# times follow what the other processes leave, the CPU seconds much less),
# the median force error of each gravity run and the phases of a distributed run (one
# more untimed run of each with --stats: the error is measured on rank 0 alone, 1000
# bodies vs float64 direct summation, and would weigh on the ranks' time).
# Where a distributed run's wall time goes outside the command (one more untimed run of
# each, the ranks with an LD_PRELOAD shim built here that stamps each process's start,
# MPI_Init_thread, MPI_Finalize and exit): from mpirun's start to the last rank's start,
# to its MPI_Init_thread, the slowest MPI_Init_thread, the command between the last
# rank's return from it and the first MPI_Finalize, the slowest MPI_Finalize, the last
# exit, and mpirun's return after it. The phases of the single process's --stats run
# (load, build, schedule, traverse, write; kNN) are printed beside the ranks'.
# Beside them, the launch floor measured in the same run, interleaved: `mpirun -np R
# canopy --version` (mpirun, MPI_Init/Finalize, exit: what any distributed command
# pays before and after its work) and `canopy --version` for one process, and the
# ratio past the floor (T(R ranks) - floor(R)) / (T(1 process) - floor(1)): what
# canopy's own work costs over ranks, apart from mpirun's start (docs/distributed.md,
# "The launch floor").
# usage: bench/run_dist_cli.sh [BUILD_DIR]   (default build-cpu; needs canopy with MPI)
#   env: CORES (default nproc), RANKS (default 2; a list such as "4 16" gives a row per
#        rank count against the same single-process runs), REPS (default 5), N_GRAV
#        (default 200000), N_KNN (default 1000000 reference points and as many
#        queries), CANOPY_COMMIT (printed; for a copy of the tree without .git),
#        MPIRUN_ENV (VAR=VALUE words put in the environment of every timed command, mpirun
#        and the single process alike, e.g. hwloc's GPU plugins off: docs/distributed.md,
#        "The launch floor")
# The kNN inputs and outputs are .npy: each rank reads and writes its own rows.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-cpu}
cores=${CORES:-$(nproc)}
rank_list=${RANKS:-2}
reps=${REPS:-5}
ng=${N_GRAV:-200000}
nk=${N_KNN:-1000000}
canopy=$build/canopy
if [ ! -x "$canopy" ] || [ ! -x "$build/canopy-mpi" ]; then
    echo "no canopy with MPI in $build" >&2
    exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
export OMPI_MCA_btl_vader_single_copy_mechanism=none
read -r -a run_env <<<"${MPIRUN_ENV:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
commit=${CANOPY_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "# $(date -u +%FT%TZ), commit $commit," \
    "$cores cores:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg), reps $reps${MPIRUN_ENV:+, environment $MPIRUN_ENV}"
"$canopy" gen plummer --n "$ng" -o "$tmp/b.npy" >/dev/null
"$canopy" gen uniform --n "$nk" --d 3 -o "$tmp/r.npy" --query-out "$tmp/q.npy" --nq "$nk" >/dev/null

cc -O2 -shared -fPIC -x c -o "$tmp/mark.so" - -ldl <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void mark(const char *what) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = getenv("PMI_RANK");
    fprintf(stderr, "@mark %s %s %.6f\n", r ? r : "0", what, (double)t.tv_sec + 1e-9 * (double)t.tv_nsec);
}
__attribute__((constructor)) static void started(void) { mark("start"); }
__attribute__((destructor)) static void exiting(void) { mark("exit"); }
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int (*real)(int *, char ***, int, int *) =
        (int (*)(int *, char ***, int, int *))dlsym(RTLD_NEXT, "MPI_Init_thread");
    mark("init");
    int rc = real(argc, argv, required, provided);
    mark("inited");
    return rc;
}
int MPI_Finalize(void) {
    int (*real)(void) = (int (*)(void))dlsym(RTLD_NEXT, "MPI_Finalize");
    mark("finalize");
    int rc = real();
    mark("finalized");
    return rc;
}
C

# Wall and CPU (user + system, the ranks included) seconds of one command (its stderr
# kept in $tmp/err).
secs() {
    /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" ||
        { cat "$tmp/err" >&2; exit 1; }
    awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$tmp/time"
}
one() { CANOPY_THREADS=$cores OMP_NUM_THREADS=$cores secs env "${run_env[@]}" "$canopy" "$@"; }
many() { # ranks, then the command's arguments
    local np=$1 t=$((cores / $1 > 0 ? cores / $1 : 1))
    shift
    secs env "${run_env[@]}" mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -np "$np" \
        -x CANOPY_THREADS="$t" -x OMP_NUM_THREADS="$t" -x OMP_WAIT_POLICY \
        -x OMPI_MCA_btl_vader_single_copy_mechanism "$canopy" "$@"
}
# One run of `many` with the shim: seconds of each stretch outside the command (above).
timeline() { # ranks, then the command's arguments
    local np=$1 t=$((cores / $1 > 0 ? cores / $1 : 1)) s e
    shift
    s=$(date +%s.%N)
    env "${run_env[@]}" mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -np "$np" \
        -x CANOPY_THREADS="$t" -x OMP_NUM_THREADS="$t" -x OMP_WAIT_POLICY \
        -x OMPI_MCA_btl_vader_single_copy_mechanism -x LD_PRELOAD="$tmp/mark.so" \
        "$canopy" "$@" >/dev/null 2>"$tmp/marks" || { cat "$tmp/marks" >&2; exit 1; }
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" '$1 == "@mark" {
        r = $2; w = $3; t = $4
        if (w == "start") { if (!(r in st) || t < st[r]) st[r] = t } else if (w == "exit") ex[r] = t
        else v[r, w] = t }
    END {
        for (r in st) {
            if (st[r] > ls) ls = st[r]; if (v[r, "init"] - st[r] > pre) pre = v[r, "init"] - st[r]
            if (v[r, "inited"] - v[r, "init"] > ini) ini = v[r, "inited"] - v[r, "init"]
            if (v[r, "inited"] > li) li = v[r, "inited"]
            if (ff == "" || v[r, "finalize"] < ff) ff = v[r, "finalize"]
            if (v[r, "finalized"] - v[r, "finalize"] > fin) fin = v[r, "finalized"] - v[r, "finalize"]
            if (v[r, "finalized"] > lf) lf = v[r, "finalized"]; if (ex[r] > le) le = ex[r] }
        printf "mpirun to the last rank start %.3f, start to MPI_Init_thread %.3f, MPI_Init_thread %.3f, command %.3f, MPI_Finalize %.3f, to the last exit %.3f, mpirun returns %.3f; whole %.3f s\n",
            ls - s, pre, ini, ff - li, fin, le - lf, e - le, e - s }' "$tmp/marks"
}
# median (min-max) of column $1 of stdin
stat() { cut -d' ' -f"$1" | sort -g | awk '{ v[NR] = $1 } END { printf "%.3f (%.3f-%.3f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
median_error() { sed -n 's/.*direct: median \([^,]*\),.*/\1/p' "$tmp/err"; }

run_case() { # name, then the command's arguments
    local name=$1 np
    shift
    : >"$tmp/one"
    : >"$tmp/floor1"
    for np in $rank_list; do : >"$tmp/many$np"; : >"$tmp/floor$np"; done
    for _ in $(seq "$reps"); do # interleaved, so load changes hit all alike
        one "$@" >>"$tmp/one"
        one --version >>"$tmp/floor1"
        for np in $rank_list; do
            many "$np" "$@" >>"$tmp/many$np"
            many "$np" --version >>"$tmp/floor$np"
        done
    done
    # --stats only once each, untimed: its error check runs on rank 0 alone
    one "$@" --stats >/dev/null
    local e1 er s1 sr c1 cr f1 fr p1
    e1=$(median_error)
    p1=$(grep -m1 -E "^ *load [0-9.]+ s, build" "$tmp/err" | sed 's/^ *//')
    s1=$(stat 1 <"$tmp/one")
    c1=$(stat 2 <"$tmp/one")
    f1=$(stat 1 <"$tmp/floor1")
    for np in $rank_list; do
        many "$np" "$@" --stats >/dev/null
        er=$(median_error)
        sr=$(stat 1 <"$tmp/many$np")
        cr=$(stat 2 <"$tmp/many$np")
        fr=$(stat 1 <"$tmp/floor$np")
        awk -v n="$name" -v r="$np x $((cores / np > 0 ? cores / np : 1))" -v s1="$s1" -v sr="$sr" \
            -v c1="$c1" -v cr="$cr" -v e1="$e1" -v er="$er" -v f1="$f1" -v fr="$fr" \
            'BEGIN { split(s1, a, " "); split(sr, b, " "); split(c1, p, " "); split(cr, q, " ");
            split(f1, g, " "); split(fr, h, " ");
            past = (a[1] - g[1] > 0) ? sprintf("%.2fx", (b[1] - h[1]) / (a[1] - g[1])) : "-";
            printf "| %s | %s | %s | %s | %.2fx | %.0f %% | %s | %.3f | %s | %s | %s | %.2fx | %s | %s |\n",
                   n, r, s1, sr, b[1] / a[1], 100 * a[1] / b[1], fr, g[1], past, c1, cr,
                   q[1] / p[1], e1 == "" ? "-" : e1, er == "" ? "-" : er }'
        {
            echo "  $name, $np ranks:"
            if [ -n "$p1" ]; then echo "    one process: $p1"; fi
            grep -E "rank [0-9]+|ranks, load" "$tmp/err" | sed 's/^/    /'
            echo "    outside the command (wall s): $(timeline "$np" "$@")"
        } >>"$tmp/phases"
    done
}
echo
echo "| run | ranks x threads | 1 process x $cores threads, wall s | ranks, wall s | ratio | efficiency | launch floor of the ranks, wall s | floor of 1 process | ratio past the floor | 1 process, CPU s | ranks, CPU s | CPU ratio | median error, 1 process | median error, ranks |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
: >"$tmp/phases"
run_case "gravity $ng Plummer, order 2" gravity --bodies "$tmp/b.npy" --order 2 --softening 0.05 --backend cpu \
    -o "$tmp/a.npy"
run_case "knn $nk + $nk uniform 3-D, k 8" knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 8 --backend cpu \
    -o "$tmp/i.npy"
echo
echo "Phases of the last distributed runs (--stats) and the stretches outside the command:"
cat "$tmp/phases"
