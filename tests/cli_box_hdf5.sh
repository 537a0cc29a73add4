#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The periodic box of an HDF5 snapshot (issue 33): canopy gravity and canopy nbody take
# Header/BoxSize > 0 as --box (the forces equal those of the same bodies from .npy with
# --box), an explicit --box wins (--box 0: open), BoxSize 0 is open, --stats names the
# source; nbody's HDF5 snapshots record the box they ran with; a bad BoxSize or bodies
# far outside the snapshot's box fail with a message and write nothing. The files are
# written by h5py. Skips (77) without h5py or without HDF5 in canopy.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_box_hdf5.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-box-hdf5.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

need_h5py

# ic.py BOX PATH [SCALE]: 400 bodies uniform in [0, SCALE)^3 (default BOX, 1 for box 0),
# BoxSize BOX (a list: as given), and the same bodies as PATH.npy (x y z m, float32).
cat >"$tmp/ic.py" <<'EOF'
import sys, json, h5py, numpy as np
box, path = json.loads(sys.argv[1]), sys.argv[2]
scale = float(sys.argv[3]) if len(sys.argv) > 3 else (box if np.isscalar(box) and box else 1.0)
rng = np.random.default_rng(11)
n = 400
pos = rng.random((n, 3)) * scale
mass = rng.uniform(0.5, 1.5, n).astype(np.float32) / n
np.save(path + ".npy", np.column_stack([pos.astype(np.float32), mass]).astype(np.float32))
with h5py.File(path, "w") as f:
    h = f.create_group("Header")
    h.attrs["NumPart_ThisFile"] = h.attrs["NumPart_Total"] = np.array([0, n, 0, 0, 0, 0])
    h.attrs["MassTable"] = np.zeros(6)
    h.attrs["Time"] = 0.0
    h.attrs["Redshift"] = 0.0
    h.attrs["BoxSize"] = np.array(box, dtype=np.float64)
    g = f.create_group("PartType1")
    g["Coordinates"] = pos
    g["Velocities"] = 0.1 * rng.normal(size=(n, 3))
    g["ParticleIDs"] = np.arange(n, dtype=np.uint64)
    g["Masses"] = mass
EOF
mkic() { "$PY" "$tmp/ic.py" "$@" || bad "h5py could not write $2"; }
mkic 2.0 "$tmp/box.hdf5"
"$CANOPY" gravity --bodies "$tmp/box.hdf5" -o "$tmp/probe.npy" >/dev/null 2>"$tmp/err"
if grep -q "built without HDF5" "$tmp/err"; then
    echo "canopy built without HDF5: skipped"
    exit 77
fi
# same A B: the two force files are equal (the same float32 bodies, the same walk)
same() { "$PY" -c "
import numpy as np, sys
a, b = np.load('$1'), np.load('$2')
sys.exit(not (a.shape == b.shape and np.array_equal(a, b)))"; }

common=(--softening 0.01 --threads 1)
run 0 gravity --bodies "$tmp/box.hdf5" "${common[@]}" -o "$tmp/h.npy" --stats
check "gravity: the snapshot's box is used" grep -q "periodic box" "$tmp/out"
check "gravity --stats names Header/BoxSize" grep -q "periodic box 2 (Header/BoxSize" "$tmp/err"
run 0 gravity --bodies "$tmp/box.hdf5.npy" "${common[@]}" --box 2 -o "$tmp/n.npy"
check "gravity: HDF5 box forces equal .npy --box 2" same "$tmp/h.npy" "$tmp/n.npy"

run 0 gravity --bodies "$tmp/box.hdf5" "${common[@]}" --box 0 -o "$tmp/h0.npy" --stats
check "gravity --box 0: open" bash -c "! grep -q 'periodic box' '$tmp/out' '$tmp/err'"
run 0 gravity --bodies "$tmp/box.hdf5.npy" "${common[@]}" -o "$tmp/n0.npy"
check "gravity --box 0 forces equal the open .npy run" same "$tmp/h0.npy" "$tmp/n0.npy"

run 0 gravity --bodies "$tmp/box.hdf5" "${common[@]}" --box 3 -o "$tmp/h3.npy" --stats
check "gravity: an explicit --box wins" grep -q "periodic box 3 (--box)" "$tmp/err"
run 0 gravity --bodies "$tmp/box.hdf5.npy" "${common[@]}" --box 3 -o "$tmp/n3.npy"
check "gravity --box 3 forces equal .npy --box 3" same "$tmp/h3.npy" "$tmp/n3.npy"

mkic 0.0 "$tmp/open.hdf5"
run 0 gravity --bodies "$tmp/open.hdf5" "${common[@]}" -o "$tmp/o.npy" --stats
check "gravity: BoxSize 0 is open" bash -c "! grep -q 'periodic box' '$tmp/out' '$tmp/err'"
run 0 gravity --bodies "$tmp/open.hdf5.npy" "${common[@]}" -o "$tmp/on.npy"
check "gravity: BoxSize 0 forces equal the open .npy run" same "$tmp/o.npy" "$tmp/on.npy"
run 0 gravity --bodies "$tmp/open.hdf5" "${common[@]}" --box 1 -o "$tmp/o1.npy"
check "gravity: --box on a BoxSize 0 file is periodic" grep -q "periodic box" "$tmp/out"

# bad boxes: not a cube, negative, bodies far outside it; nothing written
mkic '[1.0, 2.0, 1.0]' "$tmp/rect.hdf5" 1.0
mkic -1.0 "$tmp/neg.hdf5" 1.0
mkic 0.01 "$tmp/small.hdf5" 1.0
for f in rect neg small; do
    run 1 gravity --bodies "$tmp/$f.hdf5" -o "$tmp/bad.npy"
    check "gravity: $f BoxSize refused, nothing written" test ! -e "$tmp/bad.npy"
    run 1 nbody --bodies "$tmp/$f.hdf5" --steps 1 --dt 0.01 --softening 0.01 -o "$tmp/badrun"
    check "nbody: $f BoxSize refused, no snapshot" test ! -e "$tmp/badrun/snapshot_000001.hdf5" \
        -a ! -e "$tmp/badrun/positions_000001.npy"
done
check "not a cube named" bash -c "$CANOPY gravity --bodies $tmp/rect.hdf5 -o $tmp/x.npy 2>&1 |
    grep -q 'BoxSize is not a cube'"
check "negative box named" bash -c "$CANOPY gravity --bodies $tmp/neg.hdf5 -o $tmp/x.npy 2>&1 |
    grep -q 'BoxSize is negative'"
check "far bodies named" bash -c "$CANOPY gravity --bodies $tmp/small.hdf5 -o $tmp/x.npy 2>&1 |
    grep -q 'more than 4 boxes'"

# nbody: the snapshot's box, recorded in its HDF5 snapshots; --box 0 runs open
nb=(--steps 2 --dt 0.01 --softening 0.01 --threads 1 --snapshot-format hdf5)
run 0 nbody --bodies "$tmp/box.hdf5" "${nb[@]}" -o "$tmp/r" --stats
check "nbody: the snapshot's box is used" grep -q "periodic box 2 (Ewald grid 32)" "$tmp/out"
check "nbody --stats names Header/BoxSize" grep -q "periodic box 2 (Header/BoxSize" "$tmp/err"
run 0 nbody --bodies "$tmp/box.hdf5" "${nb[@]}" -o "$tmp/r0" --box 0
check "nbody --box 0: open" bash -c "! grep -q 'periodic box' '$tmp/out'"
run 0 nbody --bodies "$tmp/box.hdf5" "${nb[@]}" -o "$tmp/r3" --box 3 --stats
check "nbody --stats: an explicit --box wins" grep -q "periodic box 3 (--box)" "$tmp/err"
check "snapshots record the box run with" "$PY" -c "
import h5py, numpy as np, sys
def box(p):
    with h5py.File(p, 'r') as f:
        x = f['PartType1/Coordinates'][:]
        return f['Header'].attrs['BoxSize'], x
b2, x2 = box('$tmp/r/snapshot_000002.hdf5')
b0, _ = box('$tmp/r0/snapshot_000002.hdf5')
b3, x3 = box('$tmp/r3/snapshot_000002.hdf5')
sys.exit(not (b2 == 2 and b0 == 0 and b3 == 3 and (x2 >= 0).all() and (x2 < 2).all()
              and (x3 >= 0).all() and (x3 < 3).all()))"
# a snapshot written with a box restarts a run in that box
run 0 nbody --bodies "$tmp/r/snapshot_000002.hdf5" "${nb[@]}" -o "$tmp/rr" --stats
check "nbody: its own snapshot's box is used again" grep -q "periodic box 2 (Header/BoxSize" \
    "$tmp/err"
cli_finish
