#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `mpirun -np R canopy gravity|nbody` against one process (gravity on 3 ranks, nbody
# on 2 and 4): gravity's error against float64 direct summation (the --stats line)
# within 2x of one process's with body opening, within 1.5x with the default list
# opening (2 and 3 ranks, each rank naming the opening and tree it ran); an n-body run whose largest |dE/E0| is within 2x of one
# process's and whose snapshot holds every body; bad setups (missing input, NaN body,
# dt <= 0, options without a distributed path) exit 1 or 2 within a timeout; with a GPU,
# --backend gpu on 2 ranks within the same bound and each rank naming its GPU (without
# one: refused with the reason); gravity's parallel input and output (each rank reads
# and writes its own rows of .npy files) giving the same bytes as rank 0 reading the
# same bodies from .csv and scattering them (2-4 ranks, with masses, more ranks than
# bodies), coincident bodies on different ranks and non-finite forces refused with
# nothing written.
# Arguments: as tests/mpi/mpi_harness.sh says.
set -u
source "$(dirname "$0")/mpi_harness.sh" "$@"
median() { sed -n 's/.*direct: median \([^,]*\),.*/\1/p' "$tmp/err"; }
max_de() { awk '/^step/ { d = $12 < 0 ? -$12 : $12; if (d > w) w = d } END { print w + 0 }' "$tmp/out"; }
within2() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= 2 * b && b <= 2 * a) }'; }

run 0 gen plummer --n 3000 --seed 4 -o "$tmp/b.npy" --velocities "$tmp/v.npy"
g=(gravity --bodies "$tmp/b.npy" --softening 0.01 --opening body --stats) # the distributed walk's opening
for opts in "--theta 0.6 --order 0" "--accuracy 3e-4"; do
    run 0 "${g[@]}" $opts -o "$tmp/a1.npy"
    one=$(median)
    for np in 3; do
        mrun $np 0 "${g[@]}" $opts -o "$tmp/a.npy"
        got=$(median)
        check "gravity $opts -np $np: median error $got vs one process $one" \
            awk -v a="$got" -v b="$one" 'BEGIN { exit !(a > 0 && a <= 2 * b) }'
        check "gravity -np $np: every rank's traffic" [ "$(grep -c 'gravity rank' "$tmp/err")" -eq $np ]
        check "gravity -np $np: output size" [ "$(stat -c %s "$tmp/a.npy")" -eq "$(stat -c %s "$tmp/a1.npy")" ]
    done
done

# The default (list opening, binary tree) and the oct tree at order 4: the single
# process's engine, so its error.
for opts in "" "--tree oct --theta 0.7 --order 4"; do
    run 0 gravity --bodies "$tmp/b.npy" --softening 0.01 --stats $opts -o "$tmp/a1.npy"
    one=$(median)
    tree=binary
    [ -n "$opts" ] && tree=oct
    for np in 2 3; do
        mrun $np 0 gravity --bodies "$tmp/b.npy" --softening 0.01 --stats $opts -o "$tmp/a.npy"
        got=$(median)
        check "gravity list $opts -np $np: median error $got vs one process $one" \
            awk -v a="$got" -v b="$one" 'BEGIN { exit !(a > 0 && a <= 1.5 * b) }'
        check "gravity list -np $np: ranks name the opening and tree" \
            [ "$(grep -c "gravity rank .*list opening, $tree tree" "$tmp/err")" -eq $np ]
        check "gravity list -np $np: summary" grep -q "list opening, $tree tree.*$np ranks" "$tmp/out"
    done
done

run 0 gen plummer --n 400 --seed 9 -o "$tmp/p.npy" --velocities "$tmp/pv.npy"
nb=(nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --steps 40 --dt 0.03125
    --softening 0.05 --theta 0.3 --order 2 --opening body --energy-every 5)
run 0 "${nb[@]}"
one=$(max_de)
for np in 2 4; do
    mrun $np 0 "${nb[@]}" --snapshot-every 40 -o "$tmp/snap$np"
    got=$(max_de)
    check "nbody -np $np: max |dE/E0| $got vs one process $one" within2 "$got" "$one"
    check "nbody -np $np: 9 energy lines" [ "$(grep -c '^step ' "$tmp/out")" -eq 9 ]
    check "nbody -np $np: snapshot" test -s "$tmp/snap$np/positions_000040.npy"
    check "nbody -np $np: summary" grep -q "nbody: 400 bodies, steps 0 -> 40.*$np ranks" "$tmp/out"
done
# the default over ranks is list opening, as in one process; block steps stay on one
nbl=(nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --steps 40 --dt 0.03125
    --softening 0.05 --energy-every 5)
run 0 "${nbl[@]}"
one=$(max_de)
mrun 2 0 "${nbl[@]}"
got=$(max_de)
check "nbody list -np 2: max |dE/E0| $got vs one process $one" within2 "$got" "$one"
check "nbody -np 2: list opening by default" grep -q "list opening, binary tree.*2 ranks" "$tmp/out"
# the summary names the theta and order the ranks ran (the list table's; the body
# table gives another choice for this accuracy)
nba=(nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --steps 2 --dt 0.03125
    --softening 0.05 --accuracy 2e-4)
run 0 "${nba[@]}"
choice=$(grep -o "theta [0-9.]*, order [0-9]" "$tmp/out")
mrun 2 0 "${nba[@]}"
check "nbody -np 2 --accuracy: the summary names the ranks' $choice" \
    grep -q "$choice, list opening, binary tree.*2 ranks" "$tmp/out"
mrun 2 2 "${nbl[@]}" --max-rung 2
check "nbody --max-rung over ranks refused" grep -q "max-rung.*not available over several" "$tmp/err"
check "snapshots of 2 and 4 ranks have one size" \
    [ "$(stat -c %s "$tmp/snap2/positions_000040.npy")" -eq "$(stat -c %s "$tmp/snap4/positions_000040.npy")" ]

# --backend gpu: one GPU per rank (where this machine has one), the same error.
if "$CANOPY" info | grep -q '^gpu: *none'; then
    echo "SKIP: --backend gpu over ranks (no GPU here)"
    mrun 2 1 "${g[@]}" --backend gpu -o "$tmp/x.npy"
    check "backend gpu without a GPU: refused, naming it" grep -q "no usable GPU" "$tmp/err"
    check "nothing written" test ! -e "$tmp/x.npy"
else
    run 0 "${g[@]}" --theta 0.6 --order 2 -o "$tmp/a1.npy"
    one=$(median)
    mrun 2 0 "${g[@]}" --theta 0.6 --order 2 --backend gpu -o "$tmp/a.npy"
    got=$(median)
    check "gravity --backend gpu -np 2: median error $got vs one process $one" \
        awk -v a="$got" -v b="$one" 'BEGIN { exit !(a > 0 && a <= 2 * b) }'
    check "gravity --backend gpu -np 2: each rank names its GPU" \
        [ "$(grep -c 'gravity rank .*(GPU [0-9]*, ' "$tmp/err")" -eq 2 ]
fi

# Parallel .npy input and in-place .npy output against rank 0 reading the same values
# from .csv (gen writes float32 exactly) and scattering the same blocks of rows: the
# same forces, byte for byte; masses (a fourth column) read by each rank too.
run 0 gen plummer --n 3000 --seed 4 -o "$tmp/b.csv"
run 0 gen uniform --n 1001 --d 4 --box 0.5:1.5 --seed 3 -o "$tmp/m.npy"
run 0 gen uniform --n 1001 --d 4 --box 0.5:1.5 --seed 3 -o "$tmp/m.csv"
run 0 gen plummer --n 3 --seed 2 -o "$tmp/three.npy"
run 0 gen plummer --n 3 --seed 2 -o "$tmp/three.csv"
for np in 2 3 4; do
    for set in b m three; do
        mrun $np 0 gravity --bodies "$tmp/$set.npy" --softening 0.01 -o "$tmp/pn.npy"
        mrun $np 0 gravity --bodies "$tmp/$set.csv" --softening 0.01 -o "$tmp/pc.npy"
        check "gravity $set -np $np: parallel .npy input and output equal rank 0's .csv read" \
            cmp -s "$tmp/pn.npy" "$tmp/pc.npy"
    done
done
run 0 gravity --bodies "$tmp/m.npy" --softening 0.01 --stats -o "$tmp/a1.npy"
one=$(median)
mrun 3 0 gravity --bodies "$tmp/m.npy" --softening 0.01 --stats -o "$tmp/a.npy"
got=$(median)
check "gravity with masses -np 3: median error $got vs one process $one" \
    awk -v a="$got" -v b="$one" 'BEGIN { exit !(a > 0 && a <= 1.5 * b) }'
check "gravity --stats -np 3: load and write times" grep -q "gravity: 3 ranks, load .* write" "$tmp/err"
# more ranks than bodies: empty blocks read and write nothing, the forces still right
mrun 4 0 gravity --bodies "$tmp/three.npy" --softening 0.1 --stats -o "$tmp/a.npy"
check "gravity 3 bodies -np 4: error below 1e-5" \
    awk -v a="$(median)" 'BEGIN { exit !(a != "" && a < 1e-5) }'
check "gravity 3 bodies -np 4: 3 rows" [ "$(stat -c %s "$tmp/a.npy")" -eq $((128 + 3 * 12)) ]
mrun 3 0 gravity --bodies "$tmp/b.npy" --softening 0.01 -o "$tmp/a.csv"
check "gravity .csv output (gathered) -np 3: 3000 rows" [ "$(wc -l <"$tmp/a.csv")" -eq 3000 ]

# Body 6 copied over body 2501 (rank 0's and rank 2's rows on 3 ranks): without
# softening both one process and the ranks name the pair; nothing is written.
size=$(stat -c %s "$tmp/b.npy")
hdr=$((size - 3000 * 12))
cp "$tmp/b.npy" "$tmp/dup.npy"
dd if="$tmp/b.npy" of="$tmp/dup.npy" bs=1 skip=$((hdr + 6 * 12)) seek=$((hdr + 2501 * 12)) \
    count=12 conv=notrunc status=none
run 1 gravity --bodies "$tmp/dup.npy" -o "$tmp/x.npy"
check "one process names the coincident bodies" grep -q "bodies 6 and 2501 are at the same" "$tmp/err"
mrun 3 1 gravity --bodies "$tmp/dup.npy" -o "$tmp/x.npy"
check "the ranks name the coincident bodies" grep -q "bodies 6 and 2501 are at the same" "$tmp/err"
check "the other ranks say which rank failed" [ "$(grep -c "stopping: rank [0-9] failed" "$tmp/err")" -eq 2 ]
mrun 3 0 gravity --bodies "$tmp/dup.npy" --softening 0.01 -o "$tmp/y.npy"
check "with softening the coincident bodies run" test -s "$tmp/y.npy"
# a force that overflows float32 (masses 1e30 at 1e-9) on rank 0 of 2: refused
printf '0,0,0,1e30\n1,1,1,1\n2,0,1,1\n1e-9,0,0,1e30\n' >"$tmp/big.csv"
mrun 2 1 gravity --bodies "$tmp/big.csv" -o "$tmp/x.npy"
check "a non-finite force named" grep -q "body 0 has a non-finite acceleration" "$tmp/err"
cp "$tmp/m.npy" "$tmp/m0.npy"
mrun 2 1 gravity --bodies "$tmp/m.npy" --softening 0.01 -o "$tmp/m.npy"
check "output over the input refused" grep -q "is the input" "$tmp/err"
check "the input kept" cmp -s "$tmp/m.npy" "$tmp/m0.npy"
check "nothing written, no temporary left" sh -c "! ls '$tmp' | grep -q '^x\.npy\|\.tmp\.'"

# Bad setups: every rank ends, with a message, and nothing is written.
mrun 2 1 gravity --bodies "$tmp/missing.npy" -o "$tmp/x.npy"
check "missing input named" grep -q "missing.npy" "$tmp/err"
printf '0,0,0\nnan,1,1\n1,0,0\n' >"$tmp/nan.csv"
mrun 2 1 gravity --bodies "$tmp/nan.csv" --softening 0.1 -o "$tmp/x.npy"
check "NaN body named" grep -qi "nan" "$tmp/err"
check "nothing written" test ! -e "$tmp/x.npy"
run 0 nbody --bodies "$tmp/b.npy" --velocities "$tmp/v.npy" --steps 1 --dt 0.01 \
    --softening 0.01 -o "$tmp/snap" --snapshot-format hdf5
mrun 2 2 gravity --bodies "$tmp/snap/snapshot_000001.hdf5" -o "$tmp/x.npy"
check "HDF5 bodies over ranks refused, naming .npy" grep -q "HDF5 bodies are read by one process" "$tmp/err"
check "nothing written" test ! -e "$tmp/x.npy"
mrun 2 2 gravity --bodies "$tmp/b.npy" --opening bucket -o "$tmp/x.npy"
check "bucket opening on CPU ranks refused" grep -q "opening bucket is the GPU ranks' engine" "$tmp/err"
mrun 2 1 gravity --bodies "$tmp/b.npy" --opening list --backend gpu -o "$tmp/x.npy"
check "list opening on GPU ranks refused" grep -q "GPU ranks walk with bucket or body opening" "$tmp/err"
check "nothing written" test ! -e "$tmp/x.npy"
mrun 2 1 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --steps 2 --dt 0
check "dt <= 0 named" grep -q "dt must be" "$tmp/err"
mrun 2 2 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --steps 2 --dt 0.1 \
    --checkpoint "$tmp/c.ckpt"
check "checkpoint refused" grep -q "not available over several ranks" "$tmp/err"
check "no checkpoint written" test ! -e "$tmp/c.ckpt"
cli_finish
