#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Periodic boxes from the command line (`--box L`, `--periodic M`, `--ewald-grid N`,
# `--pm-grid N`): canopy gravity writes forces by each method and measures them against
# the Ewald sum; two bodies across a face pull each other through it; bodies far outside
# the box, bad box, method and grid values, and the combinations not built (GPU, body
# opening, the monopole traversal, TreePM at order 4) fail with a message and write
# nothing; canopy nbody keeps its bodies in the box and its checkpoint restarts with the
# box and the method.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_ewald.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-ewald.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

run 0 gen uniform --n 500 --seed 5 -o "$tmp/u.npy"
for m in ewald treepm auto; do
    run 0 gravity --bodies "$tmp/u.npy" --box 1 --periodic $m --softening 0.001 \
        -o "$tmp/acc.npy" --stats
    check "$m: forces written" test -s "$tmp/acc.npy"
    check "$m: summary says periodic" grep -q "periodic box" "$tmp/out"
    err=$(sed -n 's/.*vs float64 Ewald summation: median \([0-9.e+-]*\),.*/\1/p' "$tmp/err")
    check "$m: median error vs the Ewald sum ($err) <= 1e-3" \
        awk -v e="${err:-1}" 'BEGIN { exit !(e <= 1e-3) }'
done
check "auto: --stats names Ewald" grep -q "periodic box with Ewald corrections" "$tmp/err"
run 0 gravity --bodies "$tmp/u.npy" --box 1 --periodic treepm --pm-grid 64 -o "$tmp/acc.npy"
check "--pm-grid 64 runs" test -s "$tmp/acc.npy"
rm -f "$tmp/x.npy"
run 1 gravity --bodies "$tmp/u.npy" --box 1 --periodic treepm --order 4 --theta 0.5 \
    -o "$tmp/x.npy"
check "TreePM at order 4 refused" grep -q "order 0 or 2" "$tmp/err"
check "no output when TreePM is refused" test ! -e "$tmp/x.npy"
usage_error gravity --bodies "$tmp/u.npy" --box 1 --periodic fmm -o "$tmp/x.npy"
usage_error gravity --bodies "$tmp/u.npy" --box 1 --pm-grid 17 -o "$tmp/x.npy"
usage_error gravity --bodies "$tmp/u.npy" --box 1 --pm-grid 2048 -o "$tmp/x.npy"
usage_error gravity --bodies "$tmp/u.npy" --periodic treepm -o "$tmp/x.npy"

# two bodies near opposite faces: body 0 is pulled through x = 0, towards -x
printf '0.05,0.5,0.5\n0.95,0.5,0.5\n' >"$tmp/pair.csv"
run 0 gravity --bodies "$tmp/pair.csv" --box 1 --ewald-grid 64 -o "$tmp/pair.npy"
check "attracts through the boundary" python3 -c "
import numpy as np, sys
a = np.load('$tmp/pair.npy')
sys.exit(not (a[0, 0] < 0 < a[1, 0]))"

printf '0.5,0.5,0.5\n0.5,0.5,9.5\n' >"$tmp/far.csv"
run 1 gravity --bodies "$tmp/far.csv" --box 1 -o "$tmp/far.npy"
check "far body named" grep -q "more than 4 boxes" "$tmp/err"
check "no output for a far body" test ! -e "$tmp/far.npy"
run 1 gravity --bodies "$tmp/u.npy" --box 1 --opening body -o "$tmp/x.npy"
check "body opening refused" grep -q "list opening only" "$tmp/err"
run 1 gravity --bodies "$tmp/u.npy" --box 1 --backend gpu -o "$tmp/x.npy"
check "GPU refused" grep -q "not built for the GPU" "$tmp/err"
check "no output when refused" test ! -e "$tmp/x.npy"
usage_error gravity --bodies "$tmp/u.npy" --box -1 -o "$tmp/x.npy"
usage_error gravity --bodies "$tmp/u.npy" --box nan -o "$tmp/x.npy"
usage_error gravity --bodies "$tmp/u.npy" --box 1 --ewald-grid 7 -o "$tmp/x.npy"
usage_error gravity --bodies "$tmp/u.npy" --ewald-grid 32 -o "$tmp/x.npy"
usage_error gravity --bodies "$tmp/u.npy" --box 1 --variant dr -o "$tmp/x.npy"

python3 -c "
import numpy as np
rng = np.random.default_rng(1)
np.save('$tmp/v.npy', (rng.random((500, 3)) - 0.5).astype(np.float32))"
run 0 nbody --bodies "$tmp/u.npy" --velocities "$tmp/v.npy" --box 1 --softening 0.01 \
    --dt 0.01 --steps 2 --periodic treepm -o "$tmp/tpm" --checkpoint "$tmp/tpm.ckpt"
check "nbody summary says TreePM" grep -q "periodic box 1 (TreePM)" "$tmp/out"
run 0 nbody --restart "$tmp/tpm.ckpt" --steps 3
check "restart keeps TreePM" grep -q "periodic box 1 (TreePM)" "$tmp/out"
usage_error nbody --restart "$tmp/tpm.ckpt" --steps 4 --periodic ewald
run 0 nbody --bodies "$tmp/u.npy" --velocities "$tmp/v.npy" --box 1 --softening 0.01 \
    --dt 0.01 --steps 10 --periodic ewald -o "$tmp/run" --checkpoint "$tmp/run.ckpt"
check "nbody summary says periodic" grep -q "periodic box 1 (Ewald grid 32)" "$tmp/out"
check "bodies stay in the box" python3 -c "
import numpy as np, sys
x = np.load('$tmp/run/positions_000010.npy')
sys.exit(not ((x >= 0) & (x < 1)).all())"
run 0 nbody --restart "$tmp/run.ckpt" --steps 12
check "restart keeps the box" grep -q "periodic box 1" "$tmp/out"
usage_error nbody --restart "$tmp/run.ckpt" --steps 12 --box 2
usage_error nbody --bodies "$tmp/u.npy" --velocities "$tmp/v.npy" --dt 0.01 --steps 1 \
    --ewald-grid 16
run 1 nbody --bodies "$tmp/far.csv" --velocities "$tmp/far.csv" --box 1 --dt 0.01 --steps 1
check "nbody: far body named" grep -q "more than 4 boxes" "$tmp/err"
cli_finish
