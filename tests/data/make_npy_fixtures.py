# SPDX-License-Identifier: MIT
"""Writes the .npy fixtures of tests/data with NumPy (see README.md there).

Run from anywhere: python3 tests/data/make_npy_fixtures.py. The files are committed,
so the tests do not need NumPy; rerun this only to change them.
"""
import os

import numpy as np
from numpy.lib import format as npf

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, array):
    np.save(os.path.join(HERE, name), array, allow_pickle=False)


def save_version(name, array, version):
    with open(os.path.join(HERE, name), "wb") as f:
        npf.write_array(f, array, version=version, allow_pickle=False)


save("f4_2d.npy", (np.arange(12, dtype="<f4").reshape(3, 4) - 5) / 4)
save("f8_1d.npy", np.array([0.1, -2.5, 1e-300, np.inf, np.nan, -0.0], dtype="<f8"))
save("i8_2d.npy", np.array([[-(2**63), 0], [1, 2**63 - 1]], dtype="<i8"))
save("i4_3d.npy", np.array([-(2**31), -1, 0, 1, 2**31 - 1, 7] * 2, dtype="<i4").reshape(2, 3, 2))
save("u1_1d.npy", np.array([0, 1, 127, 128, 255], dtype="u1"))
save("f8_0d.npy", np.array(3.5, dtype="<f8"))
save("f4_empty.npy", np.zeros((0, 3), dtype="<f4"))
save_version("v2_f4.npy", np.array([[1.5, -2.0], [3.25, 4.0]], dtype="<f4"), (2, 0))
save_version("v3_i4.npy", np.array([10, -20, 30], dtype="<i4"), (3, 0))
save("fortran_f8.npy", np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3)))
save("bigendian_f4.npy", np.array([1.0, 2.0], dtype=">f4"))
save("bool_1d.npy", np.array([True, False]))
