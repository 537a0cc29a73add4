#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `mpirun -np R canopy knn|nn|radius` for R = 1 to 4 writes the same files, byte for
# byte, as one process (uniform, clustered, d = 1 and duplicate-heavy CSV inputs, the
# self form, distances; .npy inputs read in parallel and .npy outputs written in place
# by every rank, .csv ones through rank 0, and the two mixed; odd sizes, fewer points
# or queries than ranks, so empty slices); a bad setup (missing, truncated or NaN
# input, k too large, --index, a command without a distributed path) exits 1 (2 for
# usage) on every rank with a message, within a timeout, and writes nothing (no
# temporary left either).
# Arguments: as tests/mpi/mpi_harness.sh says.
set -u
source "$(dirname "$0")/mpi_harness.sh" "$@"
# same NAME ARGS...: one process, then R in $nps (2 4 unless set); outputs -o and
# (when dist_ref is set) --distances compared byte for byte.
same() {
    local name=$1
    shift
    run 0 "$@" -o "$tmp/ref_i.npy" $dist_ref
    for np in ${nps:-2 4}; do
        mrun $np 0 "$@" -o "$tmp/got_i.npy" $dist_got
        check "$name: -np $np indices/counts equal one process" cmp -s "$tmp/ref_i.npy" "$tmp/got_i.npy"
        if [ -n "$dist_ref" ]; then
            check "$name: -np $np distances equal one process" cmp -s "$tmp/ref_d.npy" "$tmp/got_d.npy"
        fi
        rm -f "$tmp/got_i.npy" "$tmp/got_d.npy"
    done
}

run 0 gen uniform --n 3000 --d 3 --seed 5 -o "$tmp/r.npy" --nq 1000 --query-out "$tmp/q.npy"
run 0 gen clusters --n 2000 --d 2 --clusters 5 --spread 0.01 --seed 6 -o "$tmp/c.npy" \
    --nq 500 --query-out "$tmp/cq.npy"
run 0 gen uniform --n 800 --d 1 --seed 7 -o "$tmp/line.csv" --nq 300 --query-out "$tmp/lineq.csv"
# duplicates: 40 distinct points, each 10 times (ties everywhere)
for i in $(seq 0 399); do echo "$((i % 40 % 7)),$((i % 40 / 7)),1"; done >"$tmp/dup.csv"

dist_ref="--distances $tmp/ref_d.npy" dist_got="--distances $tmp/got_d.npy"
nps="1 2 4" same "knn uniform" knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 8
same "knn self" knn --ref "$tmp/r.npy" -k 5
nps="3" same "knn self, 3 ranks" knn --ref "$tmp/r.npy" -k 5
same "knn clusters ball" knn --ref "$tmp/c.npy" --query "$tmp/cq.npy" -k 6 --tree ball
same "knn d=1" knn --ref "$tmp/line.csv" --query "$tmp/lineq.csv" -k 4
same "knn duplicates" knn --ref "$tmp/dup.csv" -k 12
same "knn all candidates" knn --ref "$tmp/dup.csv" --query "$tmp/dup.csv" -k 400
same "nn" nn --ref "$tmp/c.npy" --query "$tmp/cq.npy"
dist_ref="" dist_got=""
nps="1 2 4" same "radius uniform" radius --ref "$tmp/r.npy" --query "$tmp/q.npy" -r 0.08
same "radius self" radius --ref "$tmp/c.npy" -r 0.01
same "radius duplicates" radius --ref "$tmp/dup.csv" -r 0
same "radius d=1" radius --ref "$tmp/line.csv" --query "$tmp/lineq.csv" -r 0.002

# odd sizes on 3 ranks; fewer points and queries than ranks (empty slices); a .csv
# input beside a .npy one; .csv outputs (gathered on rank 0)
run 0 gen uniform --n 1001 --d 3 --seed 8 -o "$tmp/odd.npy" --nq 333 --query-out "$tmp/oddq.npy"
run 0 gen uniform --n 3 --d 2 --seed 9 -o "$tmp/three.npy" --nq 2 --query-out "$tmp/twoq.npy"
run 0 gen uniform --n 50 --d 2 --seed 10 -o "$tmp/fifty.csv"
dist_ref="--distances $tmp/ref_d.npy" dist_got="--distances $tmp/got_d.npy"
nps="2 3" same "knn odd sizes" knn --ref "$tmp/odd.npy" --query "$tmp/oddq.npy" -k 7
nps="3" same "knn self odd sizes" knn --ref "$tmp/odd.npy" -k 3
nps="3 4" same "knn fewer points and queries than ranks" knn --ref "$tmp/three.npy" \
    --query "$tmp/twoq.npy" -k 3
nps="3 4" same "knn self, fewer points than ranks" knn --ref "$tmp/three.npy" -k 2
nps="3" same "knn csv reference, npy queries" knn --ref "$tmp/fifty.csv" --query "$tmp/twoq.npy" -k 4
dist_ref="" dist_got=""
nps="3 4" same "radius fewer points than ranks" radius --ref "$tmp/three.npy" --query "$tmp/twoq.npy" -r 0.5
nps="3" same "radius self odd sizes" radius --ref "$tmp/odd.npy" -r 0.1
run 0 knn --ref "$tmp/odd.npy" --query "$tmp/oddq.npy" -k 4 -o "$tmp/ref_i.csv" --distances "$tmp/ref_d.csv"
mrun 3 0 knn --ref "$tmp/odd.npy" --query "$tmp/oddq.npy" -k 4 -o "$tmp/got_i.csv" --distances "$tmp/got_d.csv"
check "csv outputs (gathered) equal one process" cmp -s "$tmp/ref_i.csv" "$tmp/got_i.csv"
check "csv distances (gathered) equal one process" cmp -s "$tmp/ref_d.csv" "$tmp/got_d.csv"
mrun 3 0 knn --ref "$tmp/odd.npy" --query "$tmp/oddq.npy" -k 4 -o "$tmp/got_i.npy" --distances "$tmp/got_d.csv"
check "npy beside csv output equal one process" cmp -s "$tmp/got_d.csv" "$tmp/ref_d.csv"
rm -f "$tmp"/got_* "$tmp"/ref_*

mrun 2 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 3 -o "$tmp/s.npy" --stats
check "--stats: a line per rank with bytes sent" grep -q "rank 1: queries sent [0-9]* bytes" "$tmp/err"
check "summary names the ranks" grep -q "2 ranks" "$tmp/out"
mrun 2 0 radius --ref "$tmp/r.npy" -r 0.05 -o "$tmp/s.npy" --stats=json
check "--stats=json: the common schema" grep -q '"schema": *"canopy-stats' "$tmp/err"
check "--stats=json: ranks and bytes" grep -q '"ranks": *2, *"bytes_sent"' "$tmp/err"

# bad setups: every rank stops, exit 1, no output
mrun 3 1 knn --ref "$tmp/missing.npy" --query "$tmp/q.npy" -k 3 -o "$tmp/x.npy"
check "missing input named" grep -q "missing.npy" "$tmp/err"
check "other ranks say why they stop" grep -q "rank 2 of 3 stopping: rank 0 failed" "$tmp/err"
head -c 100 "$tmp/r.npy" >"$tmp/trunc.npy"
mrun 2 1 radius --ref "$tmp/trunc.npy" -r 0.1 -o "$tmp/x.npy"
check "truncated input named" grep -q "trunc.npy" "$tmp/err"
# the last row's bytes cut: only the last rank's rows are missing, every rank sees it
size=$(stat -c %s "$tmp/r.npy")
head -c $((size - 4)) "$tmp/r.npy" >"$tmp/trunc.npy"
mrun 3 1 knn --ref "$tmp/trunc.npy" --query "$tmp/q.npy" -k 2 -o "$tmp/x.npy"
check "a truncated last row named" grep -q "trunc.npy: truncated" "$tmp/err"
# a NaN in the last rank's rows (row 2990 of 3000, column 1): named by its row in the file
cp "$tmp/r.npy" "$tmp/nan.npy"
printf '\x00\x00\xc0\x7f' | dd of="$tmp/nan.npy" bs=1 seek=$((size - 3000 * 12 + 2990 * 12 + 4)) \
    conv=notrunc status=none
run 1 knn --ref "$tmp/nan.npy" -k 2 -o "$tmp/x.npy"
check "one process names the NaN" grep -q "row 2990, column 1 is NaN" "$tmp/err"
mrun 3 1 knn --ref "$tmp/nan.npy" -k 2 -o "$tmp/x.npy"
check "the ranks name the NaN by its row in the file" grep -q "row 2990, column 1 is NaN" "$tmp/err"
check "the other ranks say which rank failed" grep -q "rank 0 of 3 stopping: rank 2 failed" "$tmp/err"
mrun 2 1 knn --ref "$tmp/three.npy" -k 3 -o "$tmp/x.npy"
check "k too large" grep -q "k = 3 exceeds the 2 candidate points" "$tmp/err"
mrun 2 1 knn --ref "$tmp/r.npy" --query "$tmp/three.npy" -k 3 -o "$tmp/x.npy"
check "dimension mismatch" grep -q "has 2 columns" "$tmp/err"
mrun 2 2 knn --index "$tmp/r.idx" -k 3 -o "$tmp/x.npy"
check "--index refused" grep -q "does not run on several MPI ranks" "$tmp/err"
mrun 2 1 gen uniform --n 10 -o "$tmp/x.npy"
check "gen has no distributed path" grep -q "has no distributed path" "$tmp/err"
check "no output after failures" test ! -e "$tmp/x.npy"
check "no temporary left" sh -c "! ls '$tmp' | grep -q '\.tmp\.'"
cli_finish
