#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy nbody` end to end: a two-body orbit conserving energy, snapshots named by
# step, a run restarted from a checkpoint ending bit-identical to an uninterrupted
# one, bad input (NaN, negative mass, dt <= 0, eps < 0, unwritable snapshot folder,
# corrupt checkpoint) exiting 1 without touching a good checkpoint, usage errors 2;
# block time steps (--max-rung, --eta): stats, restart, bad values.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_nbody.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-nbody.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

printf -- '-0.5,0,0\n0.5,0,0\n' >"$tmp/b.csv"
printf '0,-0.5,0\n0,0.5,0\n' >"$tmp/v.csv"
printf '0.5\n0.5\n' >"$tmp/m.csv"
# Two equal masses on a circular orbit (period 2 pi): 628 steps of 0.01 is one orbit.
run 0 nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --masses "$tmp/m.csv" \
    --steps 628 --dt 0.01 --energy-every 157 --variant dr --schedule none
check "energy lines every 157 steps" [ "$(grep -c '^step ' "$tmp/out")" -eq 5 ]
check "direct potential said" grep -q "(direct float64 potential)" "$tmp/out"
check "E0 = -1/8" grep -q "^step 0 t 0 E -0.125 " "$tmp/out"
worst=$(awk '/^step/ { d = $12 < 0 ? -$12 : $12; if (d > w) w = d } END { print w + 0 }' "$tmp/out")
check "two-body energy error $worst < 1e-6" awk -v w="$worst" 'BEGIN { exit !(w < 1e-6) }'
check "summary" grep -q "nbody: 2 bodies, steps 0 -> 628, dt 0.01" "$tmp/out"

run 0 gen plummer --n 600 --seed 3 -o "$tmp/p.npy" --velocities "$tmp/pv.npy"
common=(--softening 0.02 --dt 0.0078125 --accuracy 3e-4)
run 0 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" "${common[@]}" --steps 20 \
    --snapshot-every 10 -o "$tmp/full" --checkpoint "$tmp/full.ckpt"
for s in 000010 000020; do
    check "positions_$s.npy" test -s "$tmp/full/positions_$s.npy"
    check "velocities_$s.npy" test -s "$tmp/full/velocities_$s.npy"
done
check "no temporary files left" [ "$(ls "$tmp/full" | wc -l)" -eq 4 ]
run 0 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" "${common[@]}" --steps 10 \
    --checkpoint-every 5 --checkpoint "$tmp/half.ckpt"
cp "$tmp/half.ckpt" "$tmp/half-copy.ckpt"
run 0 nbody --restart "$tmp/half.ckpt" --steps 20 --snapshot-every 10 -o "$tmp/resumed" \
    --checkpoint "$tmp/resumed.ckpt" --variant simd_l --threads 1
check "summary says resumed at 10" grep -q "steps 10 -> 20" "$tmp/out"
check "restart: positions bit-identical" cmp -s "$tmp/full/positions_000020.npy" "$tmp/resumed/positions_000020.npy"
check "restart: velocities bit-identical" cmp -s "$tmp/full/velocities_000020.npy" "$tmp/resumed/velocities_000020.npy"
check "restart: checkpoints bit-identical" cmp -s "$tmp/full.ckpt" "$tmp/resumed.ckpt"

# Bad input: exit 1, message naming the problem.
printf 'nan,0,0\n0.5,0,0\n' >"$tmp/bn.csv"
printf '0.5\n-1\n' >"$tmp/mneg.csv"
run 1 nbody --bodies "$tmp/bn.csv" --velocities "$tmp/v.csv" --steps 1 --dt 0.01
check "NaN position named" grep -q "position of body 0 is nan" "$tmp/err"
run 1 nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --masses "$tmp/mneg.csv" --steps 1 --dt 0.01
check "negative mass named" grep -q "mass of body 1 is -1" "$tmp/err"
run 1 nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 1 --dt 0
check "dt = 0 named" grep -q "dt must be" "$tmp/err"
run 1 nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 1 --dt -1
run 1 nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 1 --dt 0.01 --softening -0.1
check "eps < 0 named" grep -q "softening must be" "$tmp/err"
touch "$tmp/afile"
run 1 nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 1 --dt 0.01 --snapshot-every 1 -o "$tmp/afile"
check "unwritable snapshot folder named" grep -q "snapshot folder" "$tmp/err"
run 1 nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 1 --dt 0.01 --snapshot-every 1 -o "$tmp/afile/sub"
run 1 nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 1 --dt 0.01 --checkpoint "$tmp/afile/x.ckpt"
check "unwritable checkpoint folder named" grep -q "cannot write" "$tmp/err"
# A failed run never replaces a good checkpoint.
run 1 nbody --bodies "$tmp/bn.csv" --velocities "$tmp/v.csv" --steps 1 --dt 0.01 --checkpoint "$tmp/half.ckpt"
check "good checkpoint untouched" cmp -s "$tmp/half.ckpt" "$tmp/half-copy.ckpt"
head -c 300 "$tmp/half.ckpt" >"$tmp/cut.ckpt"
run 1 nbody --restart "$tmp/cut.ckpt" --steps 20
check "truncated checkpoint named" grep -q "truncated" "$tmp/err"
cp "$tmp/half.ckpt" "$tmp/flip.ckpt"
printf '\x55' | dd of="$tmp/flip.ckpt" bs=1 seek=1000 conv=notrunc status=none
run 1 nbody --restart "$tmp/flip.ckpt" --steps 20
check "corrupt checkpoint named" grep -q "checksum" "$tmp/err"
run 1 nbody --restart "$tmp/p.npy" --steps 20
check "not a checkpoint" grep -q "not a canopy nbody checkpoint" "$tmp/err"
run 1 nbody --restart "$tmp/missing.ckpt" --steps 20

# Usage errors: exit 2.
usage_error nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --dt 0.01
usage_error nbody --bodies "$tmp/b.csv" --steps 3 --dt 0.01
usage_error nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 3
usage_error nbody --restart "$tmp/half.ckpt" --steps 3 --dt 0.1
usage_error nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 3 --dt 0.1 --accuracy 1e-3 --theta 0.5 --order 2
usage_error nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 3 --dt 0.1 --order 1 --theta 0.5
usage_error nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 3 --dt 0.1 --snapshot-every 2
usage_error nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 3 --dt 0.1 --opening sideways
run 0 nbody --help
check "--help lists --restart" grep -q -- "--restart FILE" "$tmp/out"

# canopy gravity's multipole options.
run 0 gravity --bodies "$tmp/p.npy" --softening 0.02 --order 2 --opening bucket -o "$tmp/acc.npy" --stats
check "gravity --stats measured error" grep -q "measured on 600 bodies vs float64 direct" "$tmp/err"
run 0 gravity --bodies "$tmp/p.npy" --softening 0.02 --accuracy 1e-4 -o "$tmp/acc.npy"
check "gravity --accuracy chose order 2" grep -q "order 2" "$tmp/out"
usage_error gravity --bodies "$tmp/p.npy" --order 1 -o "$tmp/acc.npy"
usage_error gravity --bodies "$tmp/p.npy" --accuracy 1e-4 --theta 0.3 -o "$tmp/acc.npy"
# The list engine on both trees reports its tree and the measured error; the
# binary tree with an octree opening and an unknown tree are usage errors.
for tree in binary oct; do
    run 0 gravity --bodies "$tmp/p.npy" --softening 0.02 --order 2 --opening list --tree $tree -o "$tmp/acc_$tree.npy" --stats
    check "gravity --tree $tree ran" grep -q "list opening, $tree tree" "$tmp/out"
    check "gravity --tree $tree measured error" grep -q "measured on 600 bodies" "$tmp/err"
done
run 0 nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 2 --dt 0.01 --softening 0.05 --tree oct
check "nbody --tree oct ran" grep -q "list opening, oct tree" "$tmp/out"
usage_error gravity --bodies "$tmp/p.npy" --tree binary --opening body -o "$tmp/acc.npy"
usage_error gravity --bodies "$tmp/p.npy" --tree pine -o "$tmp/acc.npy"
usage_error nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 3 --dt 0.1 --tree binary --opening bucket
# Orders 3 and 4 on every CPU opening; the GPU walk refuses them (exit 1, no output).
for op in list body bucket; do
    run 0 gravity --bodies "$tmp/p.npy" --softening 0.02 --order 4 --theta 0.7 --opening $op -o "$tmp/acc4_$op.npy"
    check "gravity --order 4 --opening $op ran" grep -q "order 4, $op opening" "$tmp/out"
done
run 1 gravity --bodies "$tmp/p.npy" --order 3 --backend gpu -o "$tmp/gpu3.npy"
check "gravity --order 3 --backend gpu refused" grep -q "order 2 at most" "$tmp/err"
check "no output after the refusal" test ! -e "$tmp/gpu3.npy"
usage_error gravity --bodies "$tmp/p.npy" --order 5 -o "$tmp/acc.npy"
run 0 nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 2 --dt 0.01 --softening 0.05 --theta 0.6 --order 3
check "nbody --order 3 ran" grep -q "order 3" "$tmp/out"
usage_error nbody --bodies "$tmp/b.csv" --velocities "$tmp/v.csv" --steps 2 --dt 0.01 --theta 0.6 --order 5

# -o DIR always holds the final state; snapshots and the final one equal the same run's.
run 0 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" "${common[@]}" --steps 5 -o "$tmp/final"
check "-o DIR alone: the final state" [ "$(ls "$tmp/final")" = "$(printf 'positions_000005.npy\nvelocities_000005.npy')" ]
run 0 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" "${common[@]}" --steps 5 \
    --snapshot-every 2 -o "$tmp/every2"
check "snapshots 2, 4 and the final 5" [ "$(ls "$tmp/every2" | grep -c '^positions_00000[245].npy$')" -eq 3 ]
check "the final state is the run's" cmp -s "$tmp/final/positions_000005.npy" "$tmp/every2/positions_000005.npy"
run 0 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" "${common[@]}" --steps 3 --stats
check "nbody --stats: phases" grep -q "load .* s, steps .* s (.* steps/s" "$tmp/err"
check "nbody --stats: what ran" grep -q "600 bodies, 3 steps; backend cpu, list opening, binary tree" "$tmp/err"
run 0 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" "${common[@]}" --steps 3 --stats=json
check "nbody --stats=json: one schema line" python3 -c "
import json, sys
j = json.loads(open(sys.argv[1]).read())
assert j['schema'] == 'canopy-stats/1' and j['command'] == 'nbody', j
assert j['counts']['steps'] == 3 and j['counts']['bodies'] == 600 and 'run' in j['seconds'], j
assert j['choices']['opening'] == 'list' and j['choices']['tree'] == 'binary', j" "$tmp/err"

# Block time steps: the stats name the rungs and the evaluations saved; a restart
# continues bit-identically; bad values exit 1 (library checks), --eta alone 2.
block=(--softening 0.02 --dt 0.0625 --theta 0.5 --order 2 --max-rung 5 --eta 0.1)
run 0 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" "${block[@]}" --steps 2 --stats \
    -o "$tmp/blk" --checkpoint "$tmp/blk.ckpt"
check "block: summary" grep -q "block steps (max rung 5, eta 0.1)" "$tmp/out"
check "block: rungs in --stats" grep -q "bodies per rung at the last synchronised point: .*:" "$tmp/err"
check "block: evaluations saved" grep -Eq "would make [0-9]+: [0-9.]+% saved" "$tmp/err"
run 0 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" "${block[@]}" --steps 1 \
    --checkpoint "$tmp/blk1.ckpt"
run 0 nbody --restart "$tmp/blk1.ckpt" --steps 2 -o "$tmp/blk_r"
check "block: restart bit-identical" cmp -s "$tmp/blk/positions_000002.npy" "$tmp/blk_r/positions_000002.npy"
for bad in "--max-rung 31" "--max-rung -1" "--max-rung 3 --eta 0" "--max-rung 3 --eta -2"; do
    # shellcheck disable=SC2086
    run 1 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --softening 0.02 --dt 0.1 --steps 1 $bad
    check "block $bad: named" grep -Eq "max rung must be in \[0, 30\]|eta must be finite and > 0" "$tmp/err"
done
run 1 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --dt 0.1 --steps 1 --max-rung 3
check "block steps need softening" grep -q "give a softening > 0" "$tmp/err"
run 1 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --softening 0.02 --dt 0.1 --steps 1 \
    --max-rung 3 --opening body
check "block steps need list opening" grep -q "CPU with list opening only" "$tmp/err"
run 1 nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --softening 0.02 --dt 0.1 --steps 1 \
    --max-rung 3 --backend gpu
check "block steps refused on the GPU" grep -q "not built for the GPU backend" "$tmp/err"
usage_error nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --softening 0.02 --dt 0.1 --steps 1 --eta 0.1
usage_error nbody --restart "$tmp/blk1.ckpt" --steps 3 --max-rung 2
usage_error nbody --bodies "$tmp/p.npy" --velocities "$tmp/pv.npy" --softening 0.02 --dt 0.1 --steps 1 --max-rung 3 --eta nan
cli_finish
