#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy gen`: outputs (sizes, .npy headers, determinism, the query-half scheme),
# usage errors (exit 2), runtime errors (exit 1, no file left), --help.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_gen.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-gen.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

# npy_header FILE: sets header to the header dictionary and hdr_len to the bytes
# before the data.
npy_header() {
    local major
    major=$(od -An -tu1 -j6 -N1 "$1" | tr -d ' ')
    if [ "$major" = 1 ]; then
        hdr_len=$((10 + $(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')))
    else
        hdr_len=$((12 + $(od -An -tu4 -j8 -N4 "$1" | tr -d ' ')))
    fi
    header=$(head -c "$hdr_len" "$1" | tail -c +11)
}
# npy_is FILE DESCR SHAPE: the header says DESCR and SHAPE, and the size matches.
npy_is() {
    local file=$1 descr=$2 shape=$3 itemsize=$4 count=$5
    if [ ! -f "$file" ]; then
        bad "$file was not written"
        return
    fi
    npy_header "$file"
    check "$file: header '$header' lacks '$descr'" grep -q "'descr': '$descr'" <<<"$header"
    check "$file: header '$header' lacks shape $shape" grep -qF "'shape': $shape" <<<"$header"
    local size
    size=$(stat -c %s "$file")
    check "$file: $size bytes, want $hdr_len + $count * $itemsize" \
        [ "$size" -eq $((hdr_len + count * itemsize)) ]
}

# --- outputs ------------------------------------------------------------------
cd "$tmp" || exit 1
run 0 gen rand7 --n 1000 --nq 500 -o r.npy --query-out q.npy
npy_is r.npy '<f4' '(1000, 7)' 4 7000
npy_is q.npy '<f4' '(500, 7)' 4 3500
check "summary lines" grep -qF "wrote r.npy: float32 (1000, 7), uniform [0,1), seed 7," out
check "query summary line" grep -qF "wrote q.npy: float32 (500, 7), uniform [0,1) query rows 1000-1499, seed 7," out
check "two summary lines" [ "$(grep -c '^wrote ' out)" -eq 2 ]

# Same points for any thread count; the query half is rows n.. of one generation.
run 0 gen rand7 --n 1000 --nq 500 --threads 1 -o r1.npy --query-out q1.npy
check "rand7: 1 thread differs" cmp -s r.npy r1.npy
check "rand7 query: 1 thread differs" cmp -s q.npy q1.npy
run 0 gen rand7 --n 1500 --threads 2 -o all.npy
check "query half is not rows 1000-1499" cmp -s <(tail -c 14000 all.npy) <(tail -c 14000 q.npy)
npy_header all.npy
check "reference half is not rows 0-999" \
    cmp -s <(head -c $((hdr_len + 28000)) all.npy | tail -c 28000) <(tail -c 28000 r.npy)
run 0 gen rand7 --n 1000 --seed 8 -o r8.npy
check "--seed 8 gives the same points as seed 7" bash -c '! cmp -s r.npy r8.npy'

run 0 gen clust2 --n 300 --nq 100 -o c.npy --labels l.npy --query-out cq.npy
npy_is c.npy '<f4' '(300, 2)' 4 600
npy_is l.npy '<i4' '(300,)' 4 300
npy_is cq.npy '<f4' '(100, 2)' 4 200
run 0 gen clusters --n 200 --d 5 --clusters 3 --spread 0.5 --seed 1 -o c5.npy
run 0 gen city2 --n 300 --nq 100 -o t.npy --labels tl.npy --query-out tq.npy
npy_is t.npy '<f4' '(300, 2)' 4 600
npy_is tl.npy '<i4' '(300,)' 4 300
npy_is tq.npy '<f4' '(100, 2)' 4 200
check "cities and clusters give the same points" bash -c '! cmp -s t.npy c.npy'
npy_is c5.npy '<f4' '(200, 5)' 4 1000
run 0 gen plummer --n 100 -o p.npy --velocities v.npy
npy_is p.npy '<f4' '(100, 3)' 4 300
npy_is v.npy '<f4' '(100, 3)' 4 300
run 0 gen uniform --n 10 --d 2 --box -3:5 -o u.csv
check "u.csv: 10 rows" [ "$(grep -c . u.csv)" -eq 10 ]
check "u.csv: 2 columns" bash -c '! grep -qv "^[^,]*,[^,]*$" u.csv'
# shellcheck disable=SC2016 # awk fields, not shell variables
check "u.csv: outside [-3,5)" awk -F, '{ for (i = 1; i <= NF; i++) if ($i < -3 || $i >= 5) exit 1 }' u.csv

# Shapes and dtypes through NumPy itself, where it is there.
if python3 -c 'import numpy' 2>/dev/null; then
    check "numpy.load disagrees" python3 - <<'EOF'
import numpy as np
for name, shape, dtype in [("r.npy", (1000, 7), np.float32), ("q.npy", (500, 7), np.float32),
                           ("l.npy", (300,), np.int32), ("v.npy", (100, 3), np.float32)]:
    a = np.load(name)
    assert a.shape == shape and a.dtype == dtype, (name, a.shape, a.dtype)
r = np.load("r.npy")
assert r.min() >= 0 and r.max() < 1
l = np.load("l.npy")
assert l.min() >= 0 and l.max() < 64
EOF
else
    echo "numpy check skipped: python3 with numpy is not available"
fi

# --- usage errors -----------------------------------------------------------------
usage_error gen nosuch -o x.npy
usage_error gen rand7 --n abc -o x.npy
usage_error gen rand7 --n -5 -o x.npy
usage_error gen rand7 --n 0 -o x.npy
usage_error gen rand7 --spread 0.1 -o x.npy
usage_error gen uniform --velocities v2.npy -o x.npy
usage_error gen uniform --labels l2.npy -o x.npy
usage_error gen clusters --box 0:2 -o x.npy
usage_error gen clusters --clusters 0 -o x.npy
usage_error gen clusters --spread -1 -o x.npy
usage_error gen plummer --d 2 -o x.npy
usage_error gen plummer --query-out q2.npy -o x.npy
usage_error gen uniform --nq 5 -o x.npy
usage_error gen uniform --box 2:1 -o x.npy
usage_error gen uniform --box 2 -o x.npy
usage_error gen uniform -o x.txt
usage_error gen uniform -o x.npy --query-out x.npy
usage_error gen uniform
usage_error gen -o x.npy
usage_error gen uniform extra -o x.npy
usage_error gen uniform --bogus -o x.npy
check "a usage error wrote a file" bash -c '! ls x.* q2.npy v2.npy l2.npy 2>/dev/null | grep -q .'

# --- runtime errors: exit 1, nothing written, nothing replaced ------------------------
echo old >keep.npy
before=$(ls)
run 1 gen uniform --n 10 -o "$tmp/no/such/dir/x.npy"
check "error message names the file" grep -q "no/such/dir" err
run 1 gen rand7 --n 10 -o keep.npy --query-out "$tmp/no/such/dir/q.npy"
check "failed run replaced keep.npy" grep -qx old keep.npy
run 1 gen rand7 --n 10 -o fresh.npy --query-out "$tmp/no/such/dir/q.npy"
check "failed run left fresh.npy" [ ! -e fresh.npy ]
check "failed runs left files: $(ls)" [ "$(ls)" = "$before" ]

# --- help -------------------------------------------------------------------------
run 0 gen --help
for name in uniform clusters cities plummer rand7 clust2 city2 plummer1m rand1m3; do
    check "--help does not list $name" grep -q "^  $name " out
done
run 0 help gen
check "'canopy help gen' is not the gen help" grep -q "canopy gen NAME" out

cli_finish
