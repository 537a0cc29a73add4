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
#        queries), CANOPY_COMMIT (printed; for a copy of the tree without .git)
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
commit=${CANOPY_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "# $(date -u +%FT%TZ), commit $commit," \
    "$cores cores:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg), reps $reps"
"$canopy" gen plummer --n "$ng" -o "$tmp/b.npy" >/dev/null
"$canopy" gen uniform --n "$nk" --d 3 -o "$tmp/r.npy" --query-out "$tmp/q.npy" --nq "$nk" >/dev/null

# Wall and CPU (user + system, the ranks included) seconds of one command (its stderr
# kept in $tmp/err).
secs() {
    /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" ||
        { cat "$tmp/err" >&2; exit 1; }
    awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$tmp/time"
}
one() { CANOPY_THREADS=$cores OMP_NUM_THREADS=$cores secs "$canopy" "$@"; }
many() { # ranks, then the command's arguments
    local np=$1 t=$((cores / $1 > 0 ? cores / $1 : 1))
    shift
    secs mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -np "$np" \
        -x CANOPY_THREADS="$t" -x OMP_NUM_THREADS="$t" -x OMP_WAIT_POLICY \
        -x OMPI_MCA_btl_vader_single_copy_mechanism "$canopy" "$@"
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
    local e1 er s1 sr c1 cr f1 fr
    e1=$(median_error)
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
        echo "  $name, $np ranks:" >>"$tmp/phases"
        grep -E "rank [0-9]+|ranks, load" "$tmp/err" | sed 's/^/    /' >>"$tmp/phases"
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
echo "Phases of the last distributed runs (--stats):"
cat "$tmp/phases"
