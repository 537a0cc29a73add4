#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy index build|info` and `knn|nn|radius --index`: the saved index answers as
# --ref does (identical files) with no build ("reused index" in --stats); truncated,
# corrupt and foreign files exit 1 naming the file and the problem; usage errors exit 2.
# Likewise `canopy forest compile` and `canopy predict --model M.cpf`.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_index.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-index.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"
no_file() { check "$1 must not exist" test ! -e "$1"; }

run 0 gen uniform --n 700 --d 4 --seed 9 -o "$tmp/r.npy" --nq 150 --query-out "$tmp/q.npy"
for t in kd ball vp; do
    run 0 index build --ref "$tmp/r.npy" --tree $t -o "$tmp/r_$t.idx"
    check "index build $t summary" grep -q "$t tree over 700 points, d = 4" "$tmp/out"
    run 0 index info "$tmp/r_$t.idx"
    check "index info $t" grep -q "tree: *$t" "$tmp/out"
    run 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 5 --tree $t -o "$tmp/a.npy" --distances "$tmp/ad.npy"
    run 0 knn --index "$tmp/r_$t.idx" --query "$tmp/q.npy" -k 5 -o "$tmp/b.npy" --distances "$tmp/bd.npy" --stats
    check "knn --index $t equals --ref" cmp -s "$tmp/a.npy" "$tmp/b.npy"
    check "knn --index $t distances" cmp -s "$tmp/ad.npy" "$tmp/bd.npy"
    check "knn --index $t: no build" grep -q "build 0.0000 s (reused index)" "$tmp/err"
    run 0 nn --ref "$tmp/r.npy" --tree $t -o "$tmp/a.npy"
    run 0 nn --index "$tmp/r_$t.idx" -o "$tmp/b.npy"
    check "nn --index $t self-query equals --ref" cmp -s "$tmp/a.npy" "$tmp/b.npy"
    run 0 radius --ref "$tmp/r.npy" --query "$tmp/q.npy" -r 0.3 --tree $t -o "$tmp/a.npy"
    run 0 radius --index "$tmp/r_$t.idx" --query "$tmp/q.npy" -r 0.3 -o "$tmp/b.npy"
    check "radius --index $t equals --ref" cmp -s "$tmp/a.npy" "$tmp/b.npy"
done

# wrong dimension of the queries
run 0 gen uniform --n 10 --d 3 --seed 1 -o "$tmp/q3.npy"
run 1 knn --index "$tmp/r_kd.idx" --query "$tmp/q3.npy" -k 2 -o "$tmp/x.npy"
check "dimension mismatch named" grep -q "has 3 columns" "$tmp/err"
no_file "$tmp/x.npy"

# bad files: truncated, corrupt, not an index, missing
head -c 1000 "$tmp/r_kd.idx" >"$tmp/trunc.idx"
run 1 knn --index "$tmp/trunc.idx" -k 2 -o "$tmp/x.npy"
check "truncated index named" grep -q "trunc.idx: truncated" "$tmp/err"
no_file "$tmp/x.npy"
cp "$tmp/r_kd.idx" "$tmp/flip.idx"
printf '\x55' | dd of="$tmp/flip.idx" bs=1 seek=5000 conv=notrunc 2>/dev/null
run 1 radius --index "$tmp/flip.idx" -r 0.1 -o "$tmp/x.npy"
check "corrupt index named" grep -q "flip.idx: checksum mismatch" "$tmp/err"
run 1 index info "$tmp/r.npy"
check "not an index" grep -q "not a CNPYIDX1 file" "$tmp/err"
run 1 index info "$tmp/none.idx"
check "missing index named" grep -q "none.idx" "$tmp/err"

# oct and bst build; usage errors
run 0 gen uniform --n 300 --d 3 --seed 2 -o "$tmp/b3.npy"
run 0 index build --ref "$tmp/b3.npy" --tree oct -o "$tmp/o.idx"
run 1 index build --ref "$tmp/r.npy" --tree oct -o "$tmp/o4.idx"
no_file "$tmp/o4.idx"
run 2 index build --ref "$tmp/r.npy"
check "index build: -o required" grep -q "\-o is required" "$tmp/err"
usage_error knn --ref "$tmp/r.npy" --index "$tmp/r_kd.idx" -k 2 -o "$tmp/x.npy"
usage_error radius -r 1 -o "$tmp/x.npy"
# compiled forests: canopy forest compile, canopy predict --model M.cpf
F="${CANOPY_TEST_DATA:-$(dirname "$0")/data}/forest"
for m in lgb_multi.txt sk_gb_bin.json; do
    X="$F/${m%.*}.X.npy"
    run 0 forest compile --model "$F/$m" -o "$tmp/m.cpf"
    check "forest compile summary" grep -q "trees" "$tmp/out"
    for out in raw prob class; do
        run 0 predict --model "$F/$m" --data "$X" --kind $out -o "$tmp/a.npy"
        run 0 predict --model "$tmp/m.cpf" --data "$X" --kind $out -o "$tmp/b.npy" --stats
        check "predict --model $m.cpf --kind $out equals the model" cmp -s "$tmp/a.npy" "$tmp/b.npy"
    done
done
head -c 3000 "$tmp/m.cpf" >"$tmp/short.cpf"
run 1 predict --model "$tmp/short.cpf" --data "$X" -o "$tmp/x.npy"
check "truncated compiled forest named" grep -q "short.cpf: truncated" "$tmp/err"
no_file "$tmp/x.npy"
run 2 forest compile --model "$F/lgb_multi.txt"
run 0 index --help
check "index --help" grep -q "canopy index build" "$tmp/out"
cli_finish
