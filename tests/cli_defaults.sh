#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every default that a --help states, checked where a run can show it: the run without
# the option writes the same bytes as the run that gives the stated value (issue 34:
# "docs match the CLI, including every default in every --help"). Each check first
# finds the sentence in --help, so a help text that changes a default fails here until
# this script follows. Defaults a CPU-only run cannot observe (GPU choices, thread
# counts) are left to the commands' own tests.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_defaults.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-defaults.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"
GRAPHS=$(cd "$(dirname "$0")/data/graph" && pwd)

# states CMD TEXT: `canopy CMD --help` contains TEXT (spaces as printed).
states() {
    if "$CANOPY" $1 --help 2>&1 | tr -s ' \n' ' ' | grep -qF -- "$2"; then
        ok
    else
        bad "canopy $1 --help no longer says '$2': check the default and update this test"
    fi
}
# agree WHAT A B: outputs A (option left out) and B (stated default given) are equal.
agree() { check "$1: leaving the option out differs from giving its stated default" cmp -s "$2" "$3"; }

# ---- gen: the generators' and a named workload's defaults ----
states gen "defaults: n 100000, d 3, seed 42, box 0:1, clusters 64, spread 0.01"
run 0 gen uniform -o "$tmp/u0.npy"
run 0 gen uniform --n 100000 --d 3 --seed 42 --box 0:1 -o "$tmp/u1.npy"
agree "gen uniform" "$tmp/u0.npy" "$tmp/u1.npy"
run 0 gen clusters -o "$tmp/c0.npy"
run 0 gen clusters --n 100000 --d 3 --seed 42 --clusters 64 --spread 0.01 -o "$tmp/c1.npy"
agree "gen clusters" "$tmp/c0.npy" "$tmp/c1.npy"
states gen "clust2 clusters, n 200000, nq 200000, d 2, clusters 64, spread 0.01, seed 2"
run 0 gen clust2 --n 3000 -o "$tmp/w0.npy"
run 0 gen clusters --n 3000 --d 2 --clusters 64 --spread 0.01 --seed 2 -o "$tmp/w1.npy"
agree "gen clust2" "$tmp/w0.npy" "$tmp/w1.npy"

# ---- knn, radius, index: kd trees with leaves of 16 ----
run 0 gen uniform --n 4000 --seed 5 -o "$tmp/r.npy"
for cmd in knn nn radius; do
    states $cmd "--tree K kd (default)"
    states $cmd "--leaf-size L points per leaf bucket (default: 16"
done
run 0 knn --ref "$tmp/r.npy" -k 5 --backend cpu --stats -o "$tmp/k0.npy"
grep -o "tree [a-z]* ([0-9]* nodes, depth [0-9]*)" "$tmp/err" >"$tmp/k0.tree"
run 0 knn --ref "$tmp/r.npy" -k 5 --backend cpu --stats --tree kd --leaf-size 16 -o "$tmp/k1.npy"
grep -o "tree [a-z]* ([0-9]* nodes, depth [0-9]*)" "$tmp/err" >"$tmp/k1.tree"
check "knn --stats names the tree" test -s "$tmp/k0.tree"
agree "knn --tree/--leaf-size (the tree)" "$tmp/k0.tree" "$tmp/k1.tree"
agree "knn --tree/--leaf-size (the result)" "$tmp/k0.npy" "$tmp/k1.npy"
# a kd index of d <= 3 splits along Morton-key bits, with leaves of 32
states index "--leaf-size L points per leaf bucket (default: 16; oct 8; kd with d <= 3, split along Morton-key bits: 32)"
run 0 index build --ref "$tmp/r.npy" -o "$tmp/i0.idx"
run 0 index info "$tmp/i0.idx"
cp "$tmp/out" "$tmp/i0.info"
check "index build: kd leaves of 32 at d = 3" grep -q "leaf size 32" "$tmp/i0.info"
run 0 index build --ref "$tmp/r.npy" --tree kd --leaf-size 32 -o "$tmp/i1.idx"
run 0 index info "$tmp/i1.idx"
sed "s/i1.idx/i0.idx/g" "$tmp/out" >"$tmp/i1.info"
agree "index build --tree/--leaf-size" "$tmp/i0.info" "$tmp/i1.info"

# ---- paircount: 10 linear bins from 0 ----
states paircount "--nbins N number of bins (default 10)"
states paircount "--log logarithmic bins (default linear)"
states paircount "--rmin R0 smallest edge, >= 0 (default 0; > 0 with --log)"
run 0 paircount --data1 "$tmp/r.npy" --rmax 0.2 --backend cpu -o "$tmp/p0.csv"
run 0 paircount --data1 "$tmp/r.npy" --rmax 0.2 --backend cpu --rmin 0 --nbins 10 -o "$tmp/p1.csv"
agree "paircount --rmin/--nbins" "$tmp/p0.csv" "$tmp/p1.csv"

# ---- gravity and nbody: list opening on the binary tree, median error 1e-3 ----
run 0 gen plummer --n 3000 --seed 9 -o "$tmp/b.npy" --velocities "$tmp/v.npy"
states gravity "--opening O list (default"
states gravity "--tree T list opening's tree: binary (default"
states gravity "--softening E Plummer softening length, >= 0 (default 0)"
run 0 gravity --bodies "$tmp/b.npy" --threads 1 --backend cpu -o "$tmp/g0.npy"
check "gravity's summary names list opening on the binary tree" \
    grep -q "list opening, binary tree, softening = 0," "$tmp/out"
run 0 gravity --bodies "$tmp/b.npy" --threads 1 --backend cpu --opening list --tree binary \
    --softening 0 -o "$tmp/g1.npy"
agree "gravity --opening/--tree/--softening" "$tmp/g0.npy" "$tmp/g1.npy"
states nbody "--accuracy A target median relative force error (default 1e-3)"
states nbody "--opening O list (default)"
states nbody "--tree T list opening's tree: binary (default)"
states nbody "--energy-every K"
states nbody "(0 = never; default 0)"
nb=(--bodies "$tmp/b.npy" --velocities "$tmp/v.npy" --steps 3 --dt 0.01 --softening 0.01
    --threads 1 --backend cpu)
run 0 nbody "${nb[@]}" -o "$tmp/n0"
sed 's/, [0-9.]* steps\/s//' "$tmp/out" >"$tmp/n0.stdout" # the rate varies
run 0 nbody "${nb[@]}" --accuracy 1e-3 --opening list --tree binary --energy-every 0 -o "$tmp/n1"
sed 's/, [0-9.]* steps\/s//' "$tmp/out" >"$tmp/n1.stdout"
for f in positions velocities; do
    agree "nbody --accuracy/--opening/--tree ($f)" "$tmp/n0/${f}_000003.npy" "$tmp/n1/${f}_000003.npy"
done
agree "nbody --energy-every (standard output)" "$tmp/n0.stdout" "$tmp/n1.stdout"

# ---- graph: source 0, omp-split with rows cut beyond 1024 entries ----
states graph "--source (default 0)"
states graph "--strategy; default omp-split"
states graph "--split-threshold (default 1024)"
run 0 graph sssp --graph "$GRAPHS/small.gr" -o "$tmp/s0.npy"
run 0 graph sssp --graph "$GRAPHS/small.gr" --source 0 --strategy omp-split --split-threshold 1024 \
    -o "$tmp/s1.npy"
agree "graph sssp --source/--strategy/--split-threshold" "$tmp/s0.npy" "$tmp/s1.npy"

# ---- bptree: absent keys read -1 ----
states bptree "--not-found V marker for absent keys (default -1)"
python3 -c "
import numpy as np
np.save('$tmp/keys.npy', np.arange(0, 2000, 2, dtype=np.int64))
np.save('$tmp/q.npy', np.arange(0, 400, dtype=np.int64))"
run 0 bptree --keys "$tmp/keys.npy" --queries "$tmp/q.npy" -o "$tmp/t0.npy"
run 0 bptree --keys "$tmp/keys.npy" --queries "$tmp/q.npy" --not-found -1 -o "$tmp/t1.npy"
agree "bptree --not-found" "$tmp/t0.npy" "$tmp/t1.npy"

cli_finish
