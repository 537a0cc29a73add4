#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy kde` end to end: hand-computed log-densities (tophat, gaussian), queries
# defaulting to the data, variants and thread counts giving the same file when exact,
# float64 output, bad input (and backend gpu without the CUDA module) exiting 1 with no
# output file, usage errors exiting 2, --help.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_kde.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-kde.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

npy_descr() { head -c 200 "$1" | tr -d '\0' | grep -ao "'descr': '[^']*'" | cut -d"'" -f4; }
no_file() { check "$1 must not exist" test ! -e "$1"; }
same_lines() { check "$1" [ "$(tr '\n' ' ' <"$2")" = "$3" ]; }

printf '0\n1\n' >"$tmp/a.csv"
printf '0.5\n3\n' >"$tmp/q.csv"
# tophat, h 1, d 1: K = 1/2 within 1; at 0.5 both points: (1/2)(1/2 + 1/2); at 3 none
run 0 kde --data "$tmp/a.csv" --queries "$tmp/q.csv" --kernel tophat --bandwidth 1 -o "$tmp/t.csv"
same_lines "tophat log-densities" "$tmp/t.csv" "-0.6931471805599453 -inf "
check "summary" grep -q "kde: tophat, bandwidth 1, atol 0, rtol 0, 2 data points, 2 queries" "$tmp/out"
# gaussian: log((e^-0.125 + e^-0.125) / 2 / sqrt(2 pi)), log((e^-4.5 + e^-2) / 2 / sqrt(2 pi))
run 0 kde --data "$tmp/a.csv" --queries "$tmp/q.csv" --bandwidth 1 -o "$tmp/g.csv"
same_lines "gaussian log-densities" "$tmp/g.csv" "-1.0439385332046727 -3.5331959794720684 "
# queries = the data: the other point is at exactly h, outside (r < h, as scikit-learn)
run 0 kde --data "$tmp/a.csv" --kernel tophat --bandwidth 1 -o "$tmp/self.csv"
same_lines "queries default to the data" "$tmp/self.csv" "-1.3862943611198906 -1.3862943611198906 "

run 0 gen uniform --n 2000 --d 3 --seed 5 -o "$tmp/r.npy" --nq 300 --query-out "$tmp/rq.npy"
run 0 kde --data "$tmp/r.npy" --queries "$tmp/rq.npy" --bandwidth 0.1 --kernel epanechnikov -o "$tmp/ref.npy" --variant dr --threads 1 --stats
check "--stats" grep -q "pair walk" "$tmp/err"
check "float64 output" [ "$(npy_descr "$tmp/ref.npy")" = "<f8" ]
for v in rec auto; do
    run 0 kde --data "$tmp/r.npy" --queries "$tmp/rq.npy" --bandwidth 0.1 --kernel epanechnikov -o "$tmp/o_$v.npy" --variant $v --threads 1
    check "$v equals dr" cmp -s "$tmp/ref.npy" "$tmp/o_$v.npy"
done
run 0 kde --data "$tmp/r.npy" --queries "$tmp/rq.npy" --bandwidth 0.1 --rtol 1e-3 --atol 1e-6 -o "$tmp/tol.npy" --threads 2 --leaf-size 8
check "tolerances run" test -s "$tmp/tol.npy"

printf '0\nnan\n' >"$tmp/nan.csv"
run 1 kde --data "$tmp/nan.csv" --bandwidth 1 -o "$tmp/bad1.npy"
check "NaN message" grep -q "is NaN" "$tmp/err"
no_file "$tmp/bad1.npy"
run 1 kde --data "$tmp/missing.npy" --bandwidth 1 -o "$tmp/bad2.npy"
check "missing file message" grep -q "missing.npy" "$tmp/err"
no_file "$tmp/bad2.npy"
run 1 kde --data "$tmp/r.npy" --queries "$tmp/a.csv" --bandwidth 1 -o "$tmp/bad3.npy"
check "shape message" grep -q "3 dimensions but the queries have 1" "$tmp/err"
no_file "$tmp/bad3.npy"
head -c 100 "$tmp/r.npy" >"$tmp/trunc.npy"
run 1 kde --data "$tmp/trunc.npy" --bandwidth 1 -o "$tmp/bad4.npy"
no_file "$tmp/bad4.npy"
run 1 kde --data "$tmp/a.csv" --bandwidth 1 --variant sr -o "$tmp/bad5.npy"
check "variant message" grep -q "variants rec and dr" "$tmp/err"
no_file "$tmp/bad5.npy"

# without the CUDA module the GPU is refused at run time (exit 1, the reason named)
CANOPY_CUDA_MODULE="$tmp/nowhere/libcanopy_cuda.so" run 1 kde --data "$tmp/a.csv" --bandwidth 1 --backend gpu -o "$tmp/bad6.npy"
check "GPU refusal" grep -q "kde: " "$tmp/err"
no_file "$tmp/bad6.npy"
run 2 kde --data "$tmp/a.csv" --bandwidth 0 -o "$tmp/bad7.npy"
run 2 kde --data "$tmp/a.csv" --bandwidth 1 --kernel box -o "$tmp/bad8.npy"
check "kernel message" grep -q "unknown kernel 'box'" "$tmp/err"
run 2 kde --data "$tmp/a.csv" --bandwidth 1 --rtol -1 -o "$tmp/bad9.npy"
run 2 kde --data "$tmp/a.csv" -o "$tmp/bad10.npy"
check "bandwidth required" grep -q "bandwidth is required" "$tmp/err"
run 2 kde --bandwidth 1 -o "$tmp/bad11.npy"
run 2 kde --data "$tmp/a.csv" --bandwidth 1
run 0 kde --help
check "--help names the kernels" grep -q "epanechnikov, exponential" "$tmp/out"
cli_finish
