#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy knn|nn|radius|gravity|search` end to end: outputs and their shapes,
# every CPU variant giving identical files, bad input (missing file, NaN, wrong
# shape, k > n, negative radius, unsorted keys) exiting 1 with no output file,
# usage errors exiting 2, --help; the CUDA start-up thread (none for the CPU backend,
# CANOPY_CLI_EARLY_CUDA=0 off: same files, same errors).
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_traverse.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-traverse.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

# npy_shape FILE: the shape tuple from a .npy header, e.g. "(500, 4)".
npy_shape() { head -c 200 "$1" | tr -d '\0' | grep -ao "'shape': ([0-9, ]*)" | cut -d: -f2 | tr -d ' '; }
no_file() { check "$1 must not exist" test ! -e "$1"; }
absent() { ! grep -q "$1" "$2"; } # absent TEXT FILE

run 0 gen uniform --n 500 --d 3 --seed 5 -o "$tmp/r.npy" --nq 120 --query-out "$tmp/q.npy"
run 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 4 -o "$tmp/i.npy" --distances "$tmp/d.npy" --stats
check "knn summary" grep -q "120 queries, k = 4" "$tmp/out"
check "knn --stats" grep -q "nodes visited per query" "$tmp/err"
check "knn idx shape" [ "$(npy_shape "$tmp/i.npy")" = "(120,4)" ]
check "knn dist shape" [ "$(npy_shape "$tmp/d.npy")" = "(120,4)" ]
for v in rec dr gdr simd_l; do
    for s in none tree morton hilbert; do
        run 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 4 -o "$tmp/i_$v.npy" --variant $v --schedule $s
        check "knn $v/$s equals the default" cmp -s "$tmp/i.npy" "$tmp/i_$v.npy"
    done
done
for t in ball vp; do
    run 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 4 -o "$tmp/i_$t.npy" --tree $t
    check "knn tree $t equals kd" cmp -s "$tmp/i.npy" "$tmp/i_$t.npy"
done
run 0 nn --ref "$tmp/r.npy" -o "$tmp/nn.npy" --threads 1
check "nn self shape" [ "$(npy_shape "$tmp/nn.npy")" = "(500,1)" ]
run 0 knn --ref "$tmp/r.npy" -k 499 -o "$tmp/all.npy"     # self: 499 candidates
run 1 knn --ref "$tmp/r.npy" -k 500 -o "$tmp/toomany.npy" # k > candidates
check "k > n message" grep -q "exceeds the 499 candidate points" "$tmp/err"
no_file "$tmp/toomany.npy"
run 1 knn --ref "$tmp/missing.npy" -k 2 -o "$tmp/x.npy"
check "missing file message" grep -q "missing.npy" "$tmp/err"
no_file "$tmp/x.npy"
printf '0,0\n1,nan\n2,2\n' >"$tmp/nan.csv"
run 1 knn --ref "$tmp/nan.csv" -k 1 -o "$tmp/x.npy"
check "NaN named with its row" grep -q "row 1" "$tmp/err"
no_file "$tmp/x.npy"
printf '0,0\n1,1\n' >"$tmp/two.csv"
run 1 knn --ref "$tmp/r.npy" --query "$tmp/two.csv" -k 1 -o "$tmp/x.npy"
check "dimension mismatch named" grep -q "columns" "$tmp/err"
no_file "$tmp/x.npy"
run 1 knn --ref "$tmp/r.npy" -k 2 -o "$tmp/nodir/x.npy"
run 1 knn --ref "$tmp/r.npy" -k 2 --variant sr -o "$tmp/x.npy"
check "sr on knn explained" grep -q "unguided" "$tmp/err"
no_file "$tmp/x.npy"
usage_error knn --ref "$tmp/r.npy" -o "$tmp/x.npy"
usage_error knn --ref "$tmp/r.npy" -k 0 -o "$tmp/x.npy"
usage_error knn --ref "$tmp/r.npy" -k 2
usage_error knn --ref "$tmp/r.npy" -k 2 -o "$tmp/x.npy" --variant nosuch
usage_error knn --ref "$tmp/r.npy" -k 2 -o "$tmp/x.npy" --schedule nosuch
usage_error knn --ref "$tmp/r.npy" -k 2 -o "$tmp/x.npy" --tree nosuch
usage_error nn --ref "$tmp/r.npy" -k 2 -o "$tmp/x.npy"
no_file "$tmp/x.npy"

run 0 radius --ref "$tmp/r.npy" --query "$tmp/q.npy" -r 0.2 -o "$tmp/c.npy"
check "radius shape" [ "$(npy_shape "$tmp/c.npy")" = "(120,)" ]
for v in rec dr sr gdr simd_l; do
    run 0 radius --ref "$tmp/r.npy" --query "$tmp/q.npy" -r 0.2 -o "$tmp/c_$v.npy" --variant $v
    check "radius $v equals the default" cmp -s "$tmp/c.npy" "$tmp/c_$v.npy"
done
usage_error radius --ref "$tmp/r.npy" -r -1 -o "$tmp/x.npy"
usage_error radius --ref "$tmp/r.npy" -o "$tmp/x.npy"
no_file "$tmp/x.npy"

run 0 gen plummer --n 2000 --seed 3 -o "$tmp/b.npy"
run 0 gravity --bodies "$tmp/b.npy" --softening 0.01 -o "$tmp/a.npy"
check "gravity shape" [ "$(npy_shape "$tmp/a.npy")" = "(2000,3)" ]
check "gravity runs nbody's defaults" grep -q "list opening, binary tree" "$tmp/out"
run 0 gravity --bodies "$tmp/b.npy" --softening 0.01 --variant dr -o "$tmp/a.npy"
run 0 gravity --bodies "$tmp/b.npy" --softening 0.01 --variant sr -o "$tmp/a_sr.npy"
check "gravity sr equals dr" cmp -s "$tmp/a.npy" "$tmp/a_sr.npy"
run 1 gravity --bodies "$tmp/two.csv" -o "$tmp/x.npy"
check "gravity shape message" grep -q "expected 3" "$tmp/err"
no_file "$tmp/x.npy"
usage_error gravity --bodies "$tmp/b.npy" --theta 0 -o "$tmp/x.npy"
usage_error gravity --bodies "$tmp/b.npy" --tree kd -o "$tmp/x.npy"

printf '1\n2\n2\n5\n' >"$tmp/keys.csv"
printf '0\n2\n3\n9\n' >"$tmp/x.csv"
run 0 search --keys "$tmp/keys.csv" --queries "$tmp/x.csv" -o "$tmp/s.csv"
check "search answers (searchsorted left)" [ "$(tr '\n' ' ' <"$tmp/s.csv")" = "0 1 3 4 " ]
printf '3\n1\n' >"$tmp/unsorted.csv"
run 1 search --keys "$tmp/unsorted.csv" --queries "$tmp/x.csv" -o "$tmp/y.npy"
check "unsorted keys named" grep -q "sorted" "$tmp/err"
no_file "$tmp/y.npy"

# Idle OpenMP threads sleep (the CLI sets OMP_WAIT_POLICY=passive before libgomp reads
# it) unless the user chose a policy.
policy() { # policy ENV...: the wait policy `canopy info` reports under env -u OMP_WAIT_POLICY ENV
    env -u OMP_WAIT_POLICY "$@" "$CANOPY" info | sed -n 's/^threads: .*wait policy \(.*\))$/\1/p'
}
check "info: passive waiting by default" [ "$(policy)" = passive ]
check "info: the user's policy kept" [ "$(policy OMP_WAIT_POLICY=active)" = active ]

# Small calls stay small: a 500-point kNN starts no thread even when 4 are allowed; a
# 30,000-point one does (strace counts the clones, where ptrace is allowed; LeakSanitizer
# cannot run under ptrace, so an ASan build's leak check is off for these runs).
run 0 gen uniform --n 30000 --d 3 --seed 6 -o "$tmp/big.npy"
if command -v strace >/dev/null && strace -f -o /dev/null true 2>/dev/null; then
    clones() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" CANOPY_THREADS=4 \
        strace -f -e trace=clone,clone3 -o "$tmp/trace" "$CANOPY" "$@" >/dev/null 2>&1 &&
        grep -c clone "$tmp/trace"; }
    check "small knn: no thread started" [ "$(clones knn --ref "$tmp/r.npy" -k 4 -o "$tmp/s.npy")" = 0 ]
    check "30,000-point knn: threads started" [ "$(clones knn --ref "$tmp/big.npy" -k 4 -o "$tmp/s.npy")" -gt 0 ]
else
    echo "strace missing or not allowed: thread counts not checked"
fi
# --stats names the team the traversal ran on, not the most it could have had.
CANOPY_THREADS=4 run 0 knn --ref "$tmp/r.npy" -k 4 -o "$tmp/s.npy" --backend cpu --stats
check "small knn: stats say one thread of 4" grep -q "threads 1 of 4$" "$tmp/err"
CANOPY_THREADS=4 run 0 knn --ref "$tmp/big.npy" -k 4 -o "$tmp/s.npy" --backend cpu --stats=json
check "30,000-point knn: stats say a team of 4" grep -q '"team_threads":4' "$tmp/err"

for c in knn nn radius gravity search; do
    run 0 $c --help
    check "$c --help has usage" grep -q "usage: canopy $c" "$tmp/out"
done
# CUDA's start-up runs on a thread for backend auto and gpu only; the CPU backend starts
# none, and CANOPY_CLI_EARLY_CUDA=0 leaves it to the first GPU call: same files, same errors.
run 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 4 -o "$tmp/i_cpu.npy" --backend cpu --stats
check "knn --backend cpu starts no CUDA" absent "CUDA start-up" "$tmp/err"
check "knn --backend cpu equals auto" cmp -s "$tmp/i.npy" "$tmp/i_cpu.npy"
CANOPY_CLI_EARLY_CUDA=0 run 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 4 \
    -o "$tmp/i_late.npy" --stats
check "knn without the early start equals auto" cmp -s "$tmp/i.npy" "$tmp/i_late.npy"
check "knn without the early start says none" absent "CUDA start-up" "$tmp/err"
if "$CANOPY" info | grep -q "^gpu: *none"; then
    run 1 knn --ref "$tmp/r.npy" -k 2 --backend gpu -o "$tmp/x.npy"
    check "no GPU explained" grep -qi "cuda" "$tmp/err"
    no_file "$tmp/x.npy"
    cp "$tmp/err" "$tmp/err_early"
    CANOPY_CLI_EARLY_CUDA=0 run 1 knn --ref "$tmp/r.npy" -k 2 --backend gpu -o "$tmp/x.npy"
    check "no GPU: the same error without the early start" cmp -s "$tmp/err" "$tmp/err_early"
    no_file "$tmp/x.npy"
else
    run 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 4 --backend gpu -o "$tmp/i_gpu.npy" \
        --stats
    check "knn on the GPU equals the CPU" cmp -s "$tmp/i.npy" "$tmp/i_gpu.npy"
    check "knn on the GPU: CUDA started on a thread" grep -q "CUDA start-up" "$tmp/err"
    check "knn on the GPU: built there, pinned staging" grep -q "built on the GPU" "$tmp/err"
    CANOPY_CLI_EARLY_CUDA=0 run 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 4 \
        --backend gpu -o "$tmp/i_gpu_late.npy"
    check "knn on the GPU without the early start" cmp -s "$tmp/i.npy" "$tmp/i_gpu_late.npy"
fi
cli_finish
