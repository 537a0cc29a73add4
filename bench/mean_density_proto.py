#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Prototype (issue 33): would subtracting the mean density from the listed cells let a
cheaper order / theta meet the periodic 1e-3 goal? Measures the far field's truncation
error only, in float64, with and without the subtraction, on the list engine's geometry.

    CANOPY_LIBRARY=build-cpu/libcanopy.so PYTHONPATH=python/src \\
        python3 bench/mean_density_proto.py --n 100000 --sample 100

A binary tree as the list engine builds it (split at the middle of the tight box's
longest side, leaves of 16), sink groups of at most 256 bodies and 0.2 box, a cell
accepted at the image of its centre of mass nearest the group's centre when its
opening radius (side / theta + centre offset) is below its distance to the group's box
and its side at most 0.3 box. Each accepted cell's error at a sink is the exact
Newtonian force of its bodies minus their multipole series to `order` about the centre
of mass (a Legendre series per body, exact to that order). With the subtraction the
cell stands for its bodies minus a uniform background of the mean density over its
region (the split cuboids, which tile the box): the background's own series error (by
Gauss-Legendre points: 3 per axis integrate a series of order <= 5 exactly, 8 give the
exact force to ~1e-7 at an accepted distance) is taken off. The near field (the group's
bodies, opened leaves) is exact in both, so what remains is what the subtraction could
buy once the near field's background is paid for exactly. Errors: median over the
sample of |far-field error| / |force|, the force from the float64 Ewald sum
(canopy_gravity_ewald_direct_sample, softening 1e-3)."""
import argparse
import ctypes

import numpy as np

from canopy import _lib

lib = _lib.lib
lib.canopy_gravity_ewald_direct_sample.argtypes = [_lib.Points, ctypes.c_void_p, ctypes.c_float,
                                                   ctypes.c_float, ctypes.c_void_p,
                                                   ctypes.c_int64, ctypes.c_void_p,
                                                   ctypes.c_void_p]

LEAF, GROUP, GROUP_SIDE, CELL_SIDE = 16, 256, 0.2, 0.3


class Tree:
    """Nodes in arrays: body range, tight box, split region, centre of mass, children."""

    def __init__(self, x):
        self.x = x
        self.begin, self.end, self.lo, self.hi = [], [], [], []
        self.rlo, self.rhi, self.kids = [], [], []
        self.order = np.arange(len(x))
        self._split(0, len(x), np.zeros(3), np.ones(3))
        for name in ("begin", "end", "lo", "hi", "rlo", "rhi"):
            setattr(self, name, np.array(getattr(self, name)))
        self.x = self.x[self.order]
        self.com = np.array([self.x[b:e].mean(0) for b, e in zip(self.begin, self.end)])

    def _split(self, b, e, rlo, rhi):
        v = len(self.begin)
        p = self.x[self.order[b:e]]
        lo, hi = p.min(0), p.max(0)
        for lst, val in ((self.begin, b), (self.end, e), (self.lo, lo), (self.hi, hi),
                         (self.rlo, rlo), (self.rhi, rhi), (self.kids, [])):
            lst.append(val)
        if e - b <= LEAF:
            return v
        a = int(np.argmax(hi - lo))
        mid = lo[a] + 0.5 * (hi[a] - lo[a])
        left = p[:, a] <= mid
        self.order[b:e] = np.concatenate([self.order[b:e][left], self.order[b:e][~left]])
        m = b + int(left.sum())
        if m in (b, e):
            return v
        r1, r2 = rhi.copy(), rlo.copy()
        r1[a] = r2[a] = mid
        self.kids[v] = [self._split(b, m, rlo, r1), self._split(m, e, r2, rhi)]
        return v

    def side(self, v):
        return float(np.max(self.hi[v] - self.lo[v]))


def box_d2(lo, hi, c):
    e = np.maximum(np.maximum(lo - c, c - hi), 0.0)
    return float(e @ e)


def groups(t):
    out, stack = [], [0]
    while stack:
        v = stack.pop()
        if not t.kids[v] or (t.end[v] - t.begin[v] <= GROUP and t.side(v) <= GROUP_SIDE):
            out.append(v)
        else:
            stack.extend(t.kids[v])
    return out


def accepted(t, grp, theta):
    """The cells the group's walk lists, each with its image shift."""
    g = 0.5 * (t.lo[grp] + t.hi[grp])
    cells, stack = [], [0]
    while stack:
        v = stack.pop()
        if t.begin[v] >= t.begin[grp] and t.end[v] <= t.end[grp]:
            continue
        c = t.com[v]
        shift = np.rint(g - c)
        ext = t.hi[v] - t.lo[v]
        off = c - 0.5 * (t.lo[v] + t.hi[v])
        r = max(ext.max() / theta + np.linalg.norm(off), np.linalg.norm(np.abs(off) + 0.5 * ext))
        if box_d2(t.lo[grp], t.hi[grp], c + shift) > r * r and t.side(v) <= CELL_SIDE:
            cells.append((v, shift))
        elif t.kids[v]:
            stack.extend(t.kids[v])
    return cells


def legendre_pot(x, centre, s, w, order):
    """sum w 1/|x - y| with y = centre + s, as the series to `order`, and exactly (order
    None); x one point, centre and s (k, 3)."""
    R = x - centre
    if order is None:
        return float(np.sum(w / np.linalg.norm(R - s, axis=1)))
    r = np.linalg.norm(R, axis=1)
    sn = np.linalg.norm(s, axis=1)
    mu = np.einsum("ij,ij->i", R, s) / np.maximum(r * sn, 1e-300)
    p0, p1 = np.ones_like(mu), mu
    total = p0 / r
    if order >= 1:
        total = total + sn * p1 / r**2
    for n in range(2, order + 1):
        p0, p1 = p1, ((2 * n - 1) * mu * p1 - (n - 1) * p0) / n
        total = total + sn**n * p1 / r ** (n + 1)
    return float(np.sum(w * total))


def force(x, centre, s, w, order, h=1e-5):
    """The force of 1/r sources (gradient of sum w / r at x, central differences)."""
    f = np.empty(3)
    for a in range(3):
        d = np.zeros(3)
        d[a] = h
        f[a] = (legendre_pot(x + d, centre, s, w, order) -
                legendre_pot(x - d, centre, s, w, order)) / (2 * h)
    return f


def gauss_points(lo, hi, k):
    u, wt = np.polynomial.legendre.leggauss(k)
    p = [0.5 * (lo[a] + hi[a]) + 0.5 * (hi[a] - lo[a]) * u for a in range(3)]
    q = np.stack(np.meshgrid(*p, indexing="ij"), -1).reshape(-1, 3)
    ww = np.einsum("i,j,k->ijk", wt, wt, wt).reshape(-1) * np.prod(hi - lo) / 8.0
    return q, ww


def far_errors(t, grp, sinks, theta, orders, n):
    """Per sink and order: the far-field force error without and with the subtraction."""
    cells = accepted(t, grp, theta)
    rho = 1.0  # total mass 1 in the unit box
    cen, s, w, bcen, bs3, bw3, bs8, bw8 = ([] for _ in range(8))
    for v, sh in cells:
        c = t.com[v] + sh
        y = t.x[t.begin[v]:t.end[v]] + sh
        cen.append(np.repeat(c[None], len(y), 0))
        s.append(y - c)
        w.append(np.full(len(y), 1.0 / n))
        for k, bs, bw in ((3, bs3, bw3), (8, bs8, bw8)):
            q, ww = gauss_points(t.rlo[v] + sh, t.rhi[v] + sh, k)
            bs.append(q - c)
            bw.append(np.c_[np.repeat(c[None], len(q), 0), rho * ww])
    cen, s, w = np.concatenate(cen), np.concatenate(s), np.concatenate(w)
    b3, b8 = np.concatenate(bw3), np.concatenate(bw8)
    bs3, bs8 = np.concatenate(bs3), np.concatenate(bs8)
    out = []
    for x in sinks:
        exact = force(x, cen, s, w, None)
        bg_exact = force(x, b8[:, :3], bs8, b8[:, 3], None)
        row = {}
        for p in orders:
            err = exact - force(x, cen, s, w, p)
            bg_err = bg_exact - force(x, b3[:, :3], bs3, b3[:, 3], p)
            row[p] = (err, err - bg_err, bg_err)
        out.append(row)
    return out, len(cells)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--thetas", default="0.66,0.8,0.9")
    ap.add_argument("--orders", default="2,3,4")
    a = ap.parse_args()
    x = np.random.default_rng(33).random((a.n, 3), dtype=np.float32)
    t = Tree(x.astype(np.float64))
    idx = np.linspace(0, a.n - 1, a.sample).astype(np.int64)
    ref = np.empty((a.sample, 3))
    s = lib.canopy_gravity_ewald_direct_sample(_lib.Points(x.ctypes.data, a.n, 3, 3), None, 1e-3,
                                               1.0, idx.ctypes.data, a.sample, ref.ctypes.data,
                                               None)
    assert s == 0, lib.canopy_last_error()
    where = np.argsort(t.order)  # tree position of each caller index
    grp_of = np.empty(a.n, np.int64)
    for gv in groups(t):
        grp_of[t.begin[gv]:t.end[gv]] = gv
    orders = [int(o) for o in a.orders.split(",")]
    for theta in (float(v) for v in a.thetas.split(",")):
        rel = {p: ([], [], []) for p in orders}
        ncells = []
        for k, i in enumerate(idx):
            pos = where[i]
            rows, nc = far_errors(t, grp_of[pos], [t.x[pos]], theta, orders, a.n)
            ncells.append(nc)
            fnorm = np.linalg.norm(ref[k])
            for p in orders:
                for j in range(3):
                    # the gradient of sum m / r is the force's negative: norms alike
                    rel[p][j].append(np.linalg.norm(rows[0][p][j]) / fnorm)
        for p in orders:
            print(f"theta {theta:.2f} order {p}: far-field median error "
                  f"{np.median(rel[p][0]):.3e} plain, {np.median(rel[p][1]):.3e} mean density "
                  f"subtracted; the background's own error {np.median(rel[p][2]):.3e} "
                  f"({np.median(ncells):.0f} cells a group)", flush=True)


if __name__ == "__main__":
    main()
