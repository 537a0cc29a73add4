# SPDX-License-Identifier: MIT
"""Gadget/SWIFT snapshots as h5py writes them (contiguous datasets, no compression: h5py's
defaults), for `canopy-bench-nbody-io --file` (bench/results/nbody.md, "HDF5 snapshots").

    python3 bench/nbody_io_h5py.py DIR [--n N]

DIR/h5py_full.hdf5: float64 Coordinates and Velocities, float32 Masses, uint64 IDs, int64
counts. DIR/h5py_gadget2.hdf5: Gadget-2 style, float32 Coordinates, uint32 IDs and counts,
masses from MassTable (the two layouts tests/cli_nbody_hdf5.sh reads)."""
import argparse

import h5py
import numpy as np


def write(path, n, gadget2, rng):
    pos, vel = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    counts = np.array([0, n, 0, 0, 0, 0], dtype=np.uint32 if gadget2 else np.int64)
    with h5py.File(path, "w") as f:
        h = f.create_group("Header")
        h.attrs["NumPart_ThisFile"] = h.attrs["NumPart_Total"] = counts
        h.attrs["MassTable"] = np.array([0, 1.0 / n if gadget2 else 0, 0, 0, 0, 0])
        h.attrs["Time"], h.attrs["Redshift"], h.attrs["BoxSize"] = 0.0, 0.0, 0.0
        g = f.create_group("PartType1")
        g["Coordinates"] = pos.astype(np.float32) if gadget2 else pos
        g["Velocities"] = vel
        g["ParticleIDs"] = np.arange(n, dtype=np.uint32 if gadget2 else np.uint64)
        if not gadget2:
            g["Masses"] = np.full(n, 1.0 / n, dtype=np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--n", type=int, default=1000000)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    write(a.dir + "/h5py_full.hdf5", a.n, False, rng)
    write(a.dir + "/h5py_gadget2.hdf5", a.n, True, rng)


if __name__ == "__main__":
    main()
