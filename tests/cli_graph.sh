#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy graph` and `canopy tree`: end-to-end runs on the sample graphs in
# tests/data/graph and small generated trees (values checked), strategies agreeing,
# usage errors (exit 2), runtime errors (exit 1, no output file), --help.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_graph.sh CANOPY_BINARY}
DATA=$(cd "$(dirname "$0")/data/graph" && pwd)
tmp=$(mktemp -d /tmp/canopy-cli-graph.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export OMP_WAIT_POLICY=passive
source "$(dirname "$0")/harness.sh"
# npy_values FILE TYPE: the data of a .npy file, one value per line (od type d8/f8).
npy_values() {
    local hdr
    hdr=$((10 + $(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')))
    od -An -v -t "$2" -j "$hdr" "$1" | tr -s ' ' '\n' | sed '/^$/d'
}
expect_values() { # expect_values FILE TYPE "v1 v2 ..."
    local got
    if [ ! -f "$1" ]; then
        bad "$1 was not written"
        return
    fi
    got=$(npy_values "$1" "$2" | tr '\n' ' ' | sed 's/ $//')
    if [ "$got" = "$3" ]; then ok; else bad "$1: got '$got', want '$3'"; fi
}

# ------------------------------------------------------------------ graph --
for g in small.mtx small.gr small.txt; do
    for s in serial omp-flat omp-split; do
        run 0 graph bfs --graph "$DATA/$g" --strategy $s -o "$tmp/bfs.npy"
        expect_values "$tmp/bfs.npy" d8 "0 1 1 2 3 -1"
        run 0 graph bfs --recursive --graph "$DATA/$g" --strategy $s --split-threshold 1 -o "$tmp/bfsr.npy"
        expect_values "$tmp/bfsr.npy" d8 "0 1 1 2 3 -1"
        run 0 graph sssp --graph "$DATA/$g" --strategy $s -o "$tmp/sssp.npy"
        expect_values "$tmp/sssp.npy" f8 "0 1.5 3.5 4 5 inf"
    done
done
run 0 graph sssp --graph "$DATA/small.mtx" --source 2 -o "$tmp/s2.npy" --threads 1
expect_values "$tmp/s2.npy" f8 "1 2.5 0 0.5 1.5 inf"
# A symmetric pattern file: a path 0-1-2-3 with a loop on 2, both directions.
run 0 graph bfs --graph "$DATA/small_sym.mtx" --source 3 -o "$tmp/sym.npy"
expect_values "$tmp/sym.npy" d8 "3 2 1 0"
run 0 graph color --graph "$DATA/small_sym.mtx" -o "$tmp/col.npy"
vals=$(npy_values "$tmp/col.npy" d8 | tr '\n' ' ')
read -r c0 c1 c2 c3 <<<"$vals"
check "colouring '$vals' joins equal colours" test "$c0" != "$c1" -a "$c1" != "$c2" -a "$c2" != "$c3"
# PageRank sums to 1 and matches between strategies.
run 0 graph pagerank --graph "$DATA/small.mtx" --strategy serial -o "$tmp/pr1.npy"
run 0 graph pagerank --graph "$DATA/small.mtx" --strategy omp-split -o "$tmp/pr2.npy" --stats
check "pagerank: --stats lacks the run time" grep -q "run [0-9.]* s" "$tmp/err"
sum=$(npy_values "$tmp/pr1.npy" f8 | awk '{s += $1} END {printf "%.9f", s}')
check "pagerank sums to $sum" test "$sum" = "1.000000000"
check "pagerank: serial and omp-split differ" cmp -s "$tmp/pr1.npy" "$tmp/pr2.npy"
# SpMV with an all-ones vector: row sums of the weights.
printf '\x93NUMPY\x01\x00\x76\x00' >"$tmp/x.npy"
printf "%-117s\n" "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }" >>"$tmp/x.npy"
for _ in 1 2 3 4 5 6; do printf '\x00\x00\x00\x00\x00\x00\xf0\x3f' >>"$tmp/x.npy"; done
run 0 graph spmv --graph "$DATA/small.mtx" --vector "$tmp/x.npy" -o "$tmp/y.npy"
expect_values "$tmp/y.npy" f8 "5.5 5 1.5 1 0 0"
# Writing the graph back out, and reading what was written.
run 0 graph bfs --graph "$DATA/small.gr" --save-graph "$tmp/copy.mtx" -o "$tmp/b.npy"
run 0 graph bfs --graph "$tmp/copy.mtx" -o "$tmp/b2.npy"
check "--save-graph round trip changed the result" cmp -s "$tmp/b.npy" "$tmp/b2.npy"

run 0 graph --help
check "graph --help lacks the GPU strategies" grep -q "cons-grid  *or per grid" "$tmp/out"
usage_error graph
usage_error graph walk --graph "$DATA/small.mtx" -o "$tmp/o.npy"
usage_error graph bfs -o "$tmp/o.npy"
usage_error graph bfs --graph "$DATA/small.mtx" --gen kron16 -o "$tmp/o.npy"
usage_error graph bfs --graph "$DATA/small.mtx"
usage_error graph bfs --graph "$DATA/small.mtx" --strategy warp -o "$tmp/o.npy"
usage_error graph pagerank --graph "$DATA/small.mtx" --source 1 -o "$tmp/o.npy"
usage_error graph spmv --graph "$DATA/small.mtx" -o "$tmp/o.npy"
usage_error graph sssp --graph "$DATA/small.mtx" --recursive -o "$tmp/o.npy"
usage_error graph bfs --gen kron17 -o "$tmp/o.npy"
usage_error graph bfs --graph "$DATA/small.mtx" --seed 3 -o "$tmp/o.npy"
usage_error graph bfs --graph "$DATA/small.mtx" --source -1 -o "$tmp/o.npy"
usage_error graph bfs --graph "$DATA/small.mtx" --split-threshold 0 -o "$tmp/o.npy"
usage_error graph bfs --graph "$DATA/small.mtx" --backend cpu --strategy cons-grid -o "$tmp/o.npy"
usage_error graph bfs --graph "$DATA/small.mtx" --strategy omp-split --dp-threshold 8 -o "$tmp/o.npy"
usage_error graph bfs --graph "$DATA/small.mtx" --strategy cons-grid --child-threads 33 -o "$tmp/o.npy"
usage_error graph bfs --graph "$DATA/small.mtx" --strategy cons-grid --child-form warp -o "$tmp/o.npy"
# Runtime errors: exit 1, a message, no output file.
for args in "bfs --graph $tmp/missing.mtx" "bfs --graph $DATA/bad_index.mtx" \
    "bfs --graph $DATA/small.mtx --source 6" \
    "spmv --graph $DATA/small.mtx --vector $tmp/y_missing.npy"; do
    # shellcheck disable=SC2086
    run 1 graph $args -o "$tmp/none.npy"
    check "graph $args left an output file" test ! -e "$tmp/none.npy"
done
run 1 graph bfs --graph "$DATA/bad_index.mtx" -o "$tmp/none.npy"
check "bad_index.mtx: message lacks file:line" grep -q "bad_index.mtx:4: index (4, 1) out of range" "$tmp/err"
# GPU strategies: a clear refusal without a GPU, the CPU's answers with one.
if "$CANOPY" info | grep -q "^gpu: *none"; then
    for args in "bfs --graph $DATA/small.mtx --strategy cons-grid" \
        "bfs --graph $DATA/small.mtx --backend gpu"; do
        # shellcheck disable=SC2086
        run 1 graph $args -o "$tmp/none.npy"
        check "graph $args left an output file" test ! -e "$tmp/none.npy"
    done
    run 1 graph bfs --graph "$DATA/small.mtx" --strategy basic-dp -o "$tmp/none.npy"
    check "GPU strategy: message lacks 'no usable CUDA device'" grep -q "runs on the GPU, and" "$tmp/err"
else
    for s in nodp-thread nodp-warp nodp-block nodp-split; do
        run 0 graph sssp --graph "$DATA/small.mtx" --strategy $s -o "$tmp/sssp.npy"
        expect_values "$tmp/sssp.npy" f8 "0 1.5 3.5 4 5 inf"
        run 0 graph spmv --graph "$DATA/small.mtx" --vector "$tmp/x.npy" --strategy $s -o "$tmp/y.npy"
        expect_values "$tmp/y.npy" f8 "5.5 5 1.5 1 0 0"
    done
    # Threshold 0: every row with an entry goes to a child kernel.
    for s in nodp-split basic-dp cons-warp cons-block cons-grid; do
        run 0 graph sssp --graph "$DATA/small.mtx" --strategy $s --dp-threshold 0 -o "$tmp/sssp.npy"
        expect_values "$tmp/sssp.npy" f8 "0 1.5 3.5 4 5 inf"
    done
    run 0 graph bfs --graph "$DATA/small.mtx" --backend gpu --stats -o "$tmp/bfs.npy"
    expect_values "$tmp/bfs.npy" d8 "0 1 1 2 3 -1"
    check "gpu --stats lacks the child launches" grep -q "child launches" "$tmp/err"
fi

# ------------------------------------------------------------------- tree --
for app in heights descendants mass; do
    run 0 tree $app --gen random2 --max-nodes 3000 --strategy rec -o "$tmp/ref_$app.npy"
    for s in flat crec hier; do
        run 0 tree $app --gen random2 --max-nodes 3000 --strategy $s -o "$tmp/$app.npy"
        if [ $app != mass ] || [ $s != flat ]; then
            check "tree $app: $s differs from rec" cmp -s "$tmp/ref_$app.npy" "$tmp/$app.npy"
        fi
    done
done
run 0 tree descendants --gen random1 --max-nodes 2000 --seed 7 --save-tree "$tmp/parents.npy" \
    -o "$tmp/d1.npy" --stats
check "tree --stats lacks the node count" grep -q "nodes, .* leaves, depth" "$tmp/err"
run 0 tree descendants --tree "$tmp/parents.npy" -o "$tmp/d2.npy"
check "tree: --tree of the saved parents differs" cmp -s "$tmp/d1.npy" "$tmp/d2.npy"
# A hand-made tree: 0 is the root of 1 and 2; 3 hangs below 2.
printf '\x93NUMPY\x01\x00\x76\x00' >"$tmp/t.npy"
printf "%-117s\n" "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }" >>"$tmp/t.npy"
for p in 255 0 0 2; do
    if [ $p = 255 ]; then printf '\xff\xff\xff\xff\xff\xff\xff\xff'; else printf "\\x0$p\\x00\\x00\\x00\\x00\\x00\\x00\\x00"; fi
done >>"$tmp/t.npy"
run 0 tree heights --tree "$tmp/t.npy" -o "$tmp/h.npy"
expect_values "$tmp/h.npy" d8 "2 0 1 0"
run 0 tree descendants --tree "$tmp/t.npy" --strategy flat -o "$tmp/h.npy"
expect_values "$tmp/h.npy" d8 "3 0 1 0"

run 0 tree --help
usage_error tree
usage_error tree sizes --gen random1 -o "$tmp/o.npy"
usage_error tree heights -o "$tmp/o.npy"
usage_error tree heights --gen random3 -o "$tmp/o.npy"
usage_error tree heights --gen random1 --strategy dp -o "$tmp/o.npy"
usage_error tree heights --gen random1
usage_error tree heights --tree "$tmp/t.npy" --max-nodes 5 -o "$tmp/o.npy"
run 1 tree heights --tree "$tmp/missing.npy" -o "$tmp/none.npy"
check "tree: missing file left an output" test ! -e "$tmp/none.npy"
run 1 tree heights --tree "$tmp/y.npy" -o "$tmp/none.npy"
check "tree: float parents accepted" grep -q "integer array of parents" "$tmp/err"
usage_error tree heights --gen random1 --backend cpu --strategy gpu-crec -o "$tmp/o.npy"
if "$CANOPY" info | grep -q "^gpu: *none"; then
    run 1 tree heights --gen random1 --max-nodes 100 --backend gpu -o "$tmp/none.npy"
    check "tree: gpu backend left an output" test ! -e "$tmp/none.npy"
    check "tree: gpu refusal lacks 'needs a GPU'" grep -q "needs a GPU" "$tmp/err"
else
    for s in rec flat crec hier; do
        run 0 tree heights --gen random2 --max-nodes 3000 --backend gpu --strategy $s -o "$tmp/h.npy"
        check "tree heights: gpu $s differs from rec" cmp -s "$tmp/ref_heights.npy" "$tmp/h.npy"
    done
fi

cli_finish
