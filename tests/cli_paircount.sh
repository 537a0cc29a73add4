#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy paircount` end to end: hand-counted auto, weighted, cross and periodic
# cases, every CPU variant and schedule giving identical files, dtypes of the
# output, many bins streamed into the file, bad input exiting 1 with no output file
# (an existing one left as it was), usage errors exiting 2, --help.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_paircount.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-paircount.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

npy_descr() { head -c 200 "$1" | tr -d '\0' | grep -ao "'descr': '[^']*'" | cut -d"'" -f4; }
no_file() { check "$1 must not exist" test ! -e "$1"; }
same_lines() { check "$1" [ "$(tr '\n' ' ' <"$2")" = "$3" ]; }

printf '0.5\n1.5\n2.5\n9\n' >"$tmp/a.csv"
printf '0.5,2\n1.5,1\n2.5,3\n9,1\n' >"$tmp/aw.csv"
printf '1\n8.75\n' >"$tmp/b.csv"
# auto: pairs at 1, 1 (bin 1) and 2 (bin 2), each counted twice
run 0 paircount --data1 "$tmp/a.csv" --rmax 3 --nbins 3 -o "$tmp/auto.csv"
same_lines "auto counts" "$tmp/auto.csv" "0 4 2 "
check "auto summary" grep -q "auto, 4 x 4 points, 3 linear bins in \[0, 3), pairs 6" "$tmp/out"
run 0 paircount --data1 "$tmp/aw.csv" --rmax 3 --nbins 3 --weighted -o "$tmp/w.csv"
same_lines "weighted sums" "$tmp/w.csv" "0 10 12 "
# cross: 1 - {0.5, 1.5, 2.5, 9} = .5 .5 1.5 8; 8.75 - ... = 8.25 7.25 6.25 .25
run 0 paircount --data1 "$tmp/b.csv" --data2 "$tmp/a.csv" --rmin 0.25 --rmax 2 --nbins 2 -o "$tmp/x.csv"
same_lines "cross counts (0.25 is in, 2 is out)" "$tmp/x.csv" "3 1 "
# periodic box 9.5: 9 is 1, 2, 3 from 0.5, 1.5, 2.5
run 0 paircount --data1 "$tmp/a.csv" --rmax 4 --nbins 4 --boxsize 9.5 -o "$tmp/p.csv"
same_lines "periodic counts" "$tmp/p.csv" "0 6 4 2 "
run 0 paircount --data1 "$tmp/a.csv" --rmin 0.5 --rmax 4 --nbins 3 --log -o "$tmp/l.npy"
check "int64 output" [ "$(npy_descr "$tmp/l.npy")" = "<i8" ]
run 0 paircount --data1 "$tmp/aw.csv" --rmax 3 --weighted -o "$tmp/w.npy"
check "float64 output when weighted" [ "$(npy_descr "$tmp/w.npy")" = "<f8" ]

run 0 gen uniform --n 600 --d 3 --seed 9 -o "$tmp/r.npy" --nq 200 --query-out "$tmp/q.npy"
run 0 paircount --data1 "$tmp/r.npy" --rmax 0.3 --nbins 30 --log --rmin 0.01 -o "$tmp/ref.npy" --variant dr --schedule none --stats
check "--stats" grep -q "nodes visited per query" "$tmp/err"
for v in rec sr gdr simd_l auto; do
    for s in none tree hilbert hybrid auto; do
        run 0 paircount --data1 "$tmp/r.npy" --rmax 0.3 --nbins 30 --log --rmin 0.01 -o "$tmp/o_$v.npy" --variant $v --schedule $s
        check "$v/$s equals dr" cmp -s "$tmp/ref.npy" "$tmp/o_$v.npy"
    done
done
# counts streamed into the file as they are merged (several blocks of 8,192 bins): one
# and two threads, the single-tree walk (one block), standard output and .csv agree
run 0 paircount --data1 "$tmp/r.npy" --rmax 0.3 --nbins 20000 -o "$tmp/m1.npy" --threads 1
run 0 paircount --data1 "$tmp/r.npy" --rmax 0.3 --nbins 20000 -o "$tmp/m2.npy" --threads 2
check "20000 bins, two threads equal one" cmp -s "$tmp/m1.npy" "$tmp/m2.npy"
run 0 paircount --data1 "$tmp/r.npy" --rmax 0.3 --nbins 20000 -o "$tmp/m3.npy" --variant rec
check "20000 bins, rec equals the pair walk" cmp -s "$tmp/m1.npy" "$tmp/m3.npy"
"$CANOPY" paircount --data1 "$tmp/r.npy" --rmax 0.3 --nbins 20000 -o - >"$tmp/m4.npy" 2>"$tmp/err"
check "20000 bins to standard output" cmp -s "$tmp/m1.npy" "$tmp/m4.npy"
run 0 paircount --data1 "$tmp/r.npy" --rmax 0.3 --nbins 20000 -o "$tmp/m5.csv"
check "20000 bins as .csv: as many lines" [ "$(wc -l <"$tmp/m5.csv")" -eq 20000 ]
check "20000 bins as .csv: the same total" [ "$(paste -sd+ "$tmp/m5.csv" | bc)" = \
    "$(sed -n 's/.*pairs \([0-9]*\) ->.*/\1/p' "$tmp/out")" ]
for t in ball vp oct; do
    run 0 paircount --data1 "$tmp/r.npy" --data2 "$tmp/q.npy" --rmax 0.3 --nbins 8 -o "$tmp/t_$t.npy" --tree $t
    run 0 paircount --data1 "$tmp/r.npy" --data2 "$tmp/q.npy" --rmax 0.3 --nbins 8 -o "$tmp/t_kd.npy"
    check "tree $t equals kd" cmp -s "$tmp/t_kd.npy" "$tmp/t_$t.npy"
done

run 1 paircount --data1 "$tmp/a.csv" --rmax 2 --boxsize 5 -o "$tmp/bad1.npy"
check "box message" grep -q "outside the periodic box" "$tmp/err"
no_file "$tmp/bad1.npy"
cp "$tmp/l.npy" "$tmp/old.npy"
run 1 paircount --data1 "$tmp/a.csv" --rmax 2 --boxsize 5 -o "$tmp/old.npy"
check "a failed count leaves the existing output" cmp -s "$tmp/l.npy" "$tmp/old.npy"
check "and no temporary" [ -z "$(ls "$tmp" | grep '\.tmp\.')" ]
run 1 paircount --data1 "$tmp/a.csv" --rmax 3 --log -o "$tmp/bad2.npy"
check "log rmin message" grep -q "log bins need rmin > 0" "$tmp/err"
no_file "$tmp/bad2.npy"
run 1 paircount --data1 "$tmp/a.csv" --rmax 3 --weighted -o "$tmp/bad3.npy"
check "weight column message" grep -q "needs coordinates and a weight column" "$tmp/err"
no_file "$tmp/bad3.npy"
run 1 paircount --data1 "$tmp/a.csv" --data2 "$tmp/r.npy" --rmax 3 -o "$tmp/bad4.npy"
check "dimension message" grep -q "dimensions" "$tmp/err"
no_file "$tmp/bad4.npy"
run 1 paircount --data1 "$tmp/missing.npy" --rmax 3 -o "$tmp/bad5.npy"
no_file "$tmp/bad5.npy"
usage_error paircount --data1 "$tmp/a.csv" -o "$tmp/u.npy"
usage_error paircount --data1 "$tmp/a.csv" --rmax 3 --nbins 0 -o "$tmp/u.npy"
usage_error paircount --rmax 3 -o "$tmp/u.npy"
run 0 paircount --help
check "--help" grep -q "Corrfunc" "$tmp/out"
cli_finish
