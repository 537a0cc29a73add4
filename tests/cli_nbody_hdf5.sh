#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy nbody` with Gadget/SWIFT HDF5 snapshots, checked by h5py: initial conditions
# written by h5py (per-body Masses, or MassTable and Gadget-2's uint32 counts) are
# read; snapshots written by canopy open in h5py with the layout's shapes, header
# and values equal to the .npy run's; hostile files (missing groups, wrong shapes,
# mismatched counts, NaN, other particle types, truncated) exit 1 with a message
# and leave the outputs untouched. Skips (77) without h5py or without HDF5 in canopy.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_nbody_hdf5.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-nbody-hdf5.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

need_h5py

# ic.py KIND PATH [KIND PATH ...]: initial-conditions files (n = 300) as analysis
# tools write them (one Python start for all: h5py's import takes most of a second).
cat >"$tmp/ic.py" <<'EOF'
import sys, h5py, numpy as np

def write(kind, path):
  rng = np.random.default_rng(7)
  n = 300
  pos = rng.normal(size=(n, 3))
  vel = 0.3 * rng.normal(size=(n, 3))
  mass = rng.uniform(0.5, 1.5, n).astype(np.float32) / n
  np.save(path + ".pos.npy", pos)
  np.save(path + ".vel.npy", vel)
  np.save(path + ".mass.npy", mass)
  with h5py.File(path, "w") as f:
      h = f.create_group("Header")
      counts = np.array([0, n, 0, 0, 0, 0])
      gadget2 = kind == "masstable"
      h.attrs["NumPart_ThisFile"] = counts.astype(np.uint32 if gadget2 else np.int64)
      h.attrs["NumPart_Total"] = counts.astype(np.uint32 if gadget2 else np.int64)
      h.attrs["MassTable"] = np.array([0, 1.0 / n if gadget2 else 0, 0, 0, 0, 0])
      h.attrs["Time"] = 0.0
      h.attrs["Redshift"] = 0.0
      h.attrs["BoxSize"] = 0.0
      g = f.create_group("PartType1")
      g["Coordinates"] = pos.astype(np.float32) if gadget2 else pos
      g["Velocities"] = vel
      g["ParticleIDs"] = np.arange(n, dtype=np.uint32 if gadget2 else np.uint64)
      if not gadget2:
          g["Masses"] = mass
      if kind == "nogroup":
          del f["PartType1"]
      elif kind == "noheader":
          del f["Header"]
      elif kind == "shape":
          del g["Coordinates"]; g["Coordinates"] = pos[:, :2]
      elif kind == "rows":
          del g["Velocities"]; g["Velocities"] = vel[:-1]
      elif kind == "count":
          h.attrs["NumPart_ThisFile"] = h.attrs["NumPart_Total"] = np.array([0, n + 1, 0, 0, 0, 0])
      elif kind == "total":
          h.attrs["NumPart_Total"] = np.array([0, 2 * n, 0, 0, 0, 0])
      elif kind == "nan":
          p = pos.copy(); p[5, 1] = np.nan
          del g["Coordinates"]; g["Coordinates"] = p
      elif kind == "gas":
          h.attrs["NumPart_ThisFile"] = np.array([10, n, 0, 0, 0, 0])
      elif kind == "nomass":
          del g["Masses"]
      elif kind == "text":
          del g["Velocities"]; g["Velocities"] = np.array([b"fast"] * n)
      elif kind == "novel":
          del g["Velocities"]

args = sys.argv[1:]
for k in range(0, len(args), 2):
    write(args[k], args[k + 1])
EOF
mkic() { "$PY" "$tmp/ic.py" "$1" "$tmp/$2" || bad "h5py could not write $2"; }

mkic good ic.hdf5
"$CANOPY" nbody --bodies "$tmp/ic.hdf5" --steps 0 --dt 0.01 -o "$tmp/probe" >/dev/null 2>"$tmp/err"
if grep -q "built without HDF5" "$tmp/err"; then
    echo "canopy built without HDF5: skipped"
    exit 77
fi

# The same bodies from HDF5 and from .npy: identical runs, identical final states.
common=(--steps 6 --dt 0.01 --softening 0.05 --theta 0.5 --order 2 --threads 1)
run 0 nbody --bodies "$tmp/ic.hdf5" "${common[@]}" -o "$tmp/h" --snapshot-format hdf5 \
    --snapshot-every 3
check "snapshots by step" test -s "$tmp/h/snapshot_000003.hdf5" -a -s "$tmp/h/snapshot_000006.hdf5"
check "no temporary files left" [ "$(ls "$tmp/h" | wc -l)" -eq 2 ]
run 0 nbody --bodies "$tmp/ic.hdf5.pos.npy" --velocities "$tmp/ic.hdf5.vel.npy" \
    --masses "$tmp/ic.hdf5.mass.npy" "${common[@]}" -o "$tmp/n"
cat >"$tmp/same.py" <<'EOF'
import sys, h5py, numpy as np
snap, npdir, src = sys.argv[1:4]
n = 300
with h5py.File(snap, "r") as f:
    h, g = f["Header"].attrs, f["PartType1"]
    assert list(h["NumPart_ThisFile"]) == [0, n, 0, 0, 0, 0], h["NumPart_ThisFile"]
    assert list(h["NumPart_Total"]) == [0, n, 0, 0, 0, 0]
    assert list(h["NumPart_Total_HighWord"]) == [0] * 6
    assert abs(h["Time"] - 0.06) < 1e-15 and h["Redshift"] == 0 and h["BoxSize"] == 0
    assert h["NumFilesPerSnapshot"] == 1 and list(h["MassTable"]) == [0] * 6
    assert g["Coordinates"].shape == (n, 3) and g["Coordinates"].dtype == np.float64
    assert g["Velocities"].shape == (n, 3) and g["Masses"].shape == (n,)
    assert np.array_equal(g["ParticleIDs"][:], np.arange(n))
    assert np.array_equal(g["Coordinates"][:], np.load(npdir + "/positions_000006.npy"))
    assert np.array_equal(g["Velocities"][:], np.load(npdir + "/velocities_000006.npy"))
    assert np.array_equal(g["Masses"][:], np.load(src + ".mass.npy"))
    # the run moved the bodies: the comparison above is not of two copies of the input
    assert not np.array_equal(g["Coordinates"][:], np.load(src + ".pos.npy"))
EOF
check "h5py reads canopy's snapshot: layout, header, values = the .npy run's" \
    "$PY" "$tmp/same.py" "$tmp/h/snapshot_000006.hdf5" "$tmp/n" "$tmp/ic.hdf5"

# Gadget-2 style: uint32 counts, float32 coordinates, masses from MassTable.
mkic masstable mt.h5
run 0 nbody --bodies "$tmp/mt.h5" --steps 2 --dt 0.01 --softening 0.05 -o "$tmp/mt" \
    --snapshot-format hdf5
check "MassTable masses used" "$PY" -c "
import h5py, numpy as np, sys
m = h5py.File(sys.argv[1], 'r')['PartType1/Masses'][:]
assert m.shape == (300,) and np.all(m == np.float32(1 / 300))" "$tmp/mt/snapshot_000002.hdf5"

# More rows than one read block (src/io/hdf5.c reads 32768 rows at a time), in the file
# types canopy converts itself (float32 Coordinates, float64 (n, 1) Masses): every row
# arrives, and a bad value in a later block is found and named by its body.
cat >"$tmp/big.py" <<'EOF'
import sys, h5py, numpy as np
n = 70001
rng = np.random.default_rng(11)
pos = rng.normal(size=(n, 3)).astype(np.float32)
vel = rng.normal(size=(n, 3))
mass = rng.uniform(0.5, 1.5, (n, 1)) / n
for kind in ("big", "bignan", "bigneg"):
    with h5py.File(sys.argv[1] + "/" + kind + ".hdf5", "w") as f:
        h = f.create_group("Header")
        h.attrs["NumPart_ThisFile"] = h.attrs["NumPart_Total"] = np.array([0, n, 0, 0, 0, 0])
        h.attrs["MassTable"] = np.zeros(6)
        g = f.create_group("PartType1")
        v, m = vel.copy(), mass.copy()
        if kind == "bignan": v[69999, 2] = np.inf
        if kind == "bigneg": m[40000, 0] = -1.0
        g["Coordinates"], g["Velocities"], g["Masses"] = pos, v, m
if len(sys.argv) > 2:
    with h5py.File(sys.argv[2], "r") as f:
        g = f["PartType1"]
        assert np.array_equal(g["Coordinates"][:], pos.astype(np.float64))
        assert np.array_equal(g["Velocities"][:], vel)
        assert np.array_equal(g["Masses"][:], mass[:, 0].astype(np.float32))
EOF
"$PY" "$tmp/big.py" "$tmp" || bad "h5py could not write the big files"
run 0 nbody --bodies "$tmp/big.hdf5" --steps 0 --dt 0.01 -o "$tmp/big" --snapshot-format hdf5
check "70001 bodies over 3 read blocks, converted by canopy: values exact" \
    "$PY" "$tmp/big.py" "$tmp" "$tmp/big/snapshot_000000.hdf5"
run 1 nbody --bodies "$tmp/bignan.hdf5" --steps 0 --dt 0.01
check "inf in the third block named" grep -q "PartType1/Velocities of body 69999 is inf" "$tmp/err"
run 1 nbody --bodies "$tmp/bigneg.hdf5" --steps 0 --dt 0.01
check "negative mass in the second block named" grep -q "PartType1/Masses of body 40000 is -1" \
    "$tmp/err"

# A snapshot of canopy's is initial conditions again.
run 0 nbody --bodies "$tmp/h/snapshot_000006.hdf5" --steps 1 --dt 0.01 --softening 0.05
check "restart from a snapshot: 300 bodies" grep -q "nbody: 300 bodies" "$tmp/out"

# Hostile files: exit 1, the problem named, the checkpoint and snapshot folder untouched.
echo keep >"$tmp/ck"
mkdir -p "$tmp/o"
kinds=(nogroup noheader shape rows count total nan gas nomass text novel)
pairs=()
for k in "${kinds[@]}"; do pairs+=("$k" "$tmp/bad_$k.hdf5"); done
"$PY" "$tmp/ic.py" "${pairs[@]}" || bad "h5py could not write the hostile files"
bad_ic() { # bad_ic KIND MESSAGE
    run 1 nbody --bodies "$tmp/bad_$1.hdf5" --steps 2 --dt 0.01 --softening 0.05 -o "$tmp/o" \
        --snapshot-format hdf5 --checkpoint "$tmp/ck"
    check "$1: message '$2'" grep -q "$2" "$tmp/err"
    check "$1: checkpoint untouched" [ "$(cat "$tmp/ck")" = keep ]
    check "$1: no snapshot written" [ -z "$(ls "$tmp/o")" ]
}
bad_ic nogroup "group PartType1 is missing"
bad_ic noheader "group Header is missing"
bad_ic shape "PartType1/Coordinates must have shape (n, 3)"
bad_ic rows "PartType1/Velocities has 299 rows but Header/NumPart_ThisFile\[1\] is 300"
bad_ic count "PartType1/Coordinates has 300 rows but Header/NumPart_ThisFile\[1\] is 301"
bad_ic total "NumPart_Total\[1\] (600) differs"
bad_ic nan "PartType1/Coordinates of body 5 is nan"
bad_ic gas "10 particles of PartType0"
bad_ic nomass "no PartType1/Masses and Header/MassTable\[1\] is 0"
bad_ic text "PartType1/Velocities is not numeric"
bad_ic novel "PartType1/Velocities is missing"
head -c 3000 "$tmp/ic.hdf5" >"$tmp/bad_trunc.hdf5"
run 1 nbody --bodies "$tmp/bad_trunc.hdf5" --steps 2 --dt 0.01 -o "$tmp/o" --snapshot-format hdf5
check "truncated file refused" grep -Eq "truncated|not an HDF5 file|cannot be read" "$tmp/err"
echo "not hdf5" >"$tmp/bad_text.h5"
run 1 nbody --bodies "$tmp/bad_text.h5" --steps 2 --dt 0.01
check "text file: not an HDF5 file" grep -q "is not an HDF5 file" "$tmp/err"
run 1 nbody --bodies "$tmp/missing.hdf5" --steps 2 --dt 0.01
check "missing file named" grep -q "cannot open '$tmp/missing.hdf5'" "$tmp/err"
check "snapshot folder still empty" [ -z "$(ls "$tmp/o")" ]

# An input inside the snapshot folder, under a name the run would replace.
run 1 nbody --bodies "$tmp/h/snapshot_000003.hdf5" --steps 3 --dt 0.01 -o "$tmp/h" \
    --snapshot-format hdf5
check "input in the snapshot folder refused" grep -q "lies in the snapshot folder" "$tmp/err"

usage_error nbody --bodies "$tmp/ic.hdf5" --velocities "$tmp/ic.hdf5.vel.npy" --steps 1 --dt 0.1
check "hdf5 + --velocities named" grep -q "do not give --velocities or --masses" "$tmp/err"
usage_error nbody --bodies "$tmp/ic.hdf5" --steps 1 --dt 0.1 -o "$tmp/x" --snapshot-format fits
usage_error nbody --bodies "$tmp/ic.hdf5" --steps 1 --dt 0.1 --snapshot-format hdf5
cli_finish
