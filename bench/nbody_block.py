#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Block time steps vs one global step on a Hernquist halo (bench/results/nbody.md,
"Block time steps"): `canopy nbody` over one dynamical time at the half-mass radius,
with --max-rung R for each eta and, for the same bodies, global steps dt / 2^k for
k = 0..R; each run's relative energy error (float64 direct potential, start to end),
body force evaluations (--stats=json) and wall seconds of the stepping. One raw JSON
line per run on stdout, then a markdown table on stderr.

    bench/nbody_block.py CANOPY [--n N] [--dt DT] [--max-rung R] [--etas E1,E2,...]
                         [--softening EPS] [--accuracy A] [--threads T] [--no-global]

The halo: Hernquist (1990) profile, G = M = a = 1, truncated at r = 100 (radii by the
inverse cumulative mass), isotropic velocities drawn from its distribution function
f(E) (Hernquist's eq. 17) by rejection against a per-body bound found on a grid, seed 1.
t_dyn = sqrt(r_h^3 / (G M)), r_h = (1 + sqrt 2) a."""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_meta import json_line  # noqa: E402


def hernquist_f(q):
    """f(E) up to a constant factor, q = sqrt(-E) in units G = M = a = 1."""
    q = np.clip(q, 1e-12, 1 - 1e-12)
    s = 1 - q * q
    return (3 * np.arcsin(q) + q * np.sqrt(s) * (1 - 2 * q * q) * (8 * q**4 - 8 * q * q - 3)) / s**2.5


def hernquist(n, seed=1, rmax=100.0):
    rng = np.random.default_rng(seed)
    umax = (rmax / (1 + rmax)) ** 2
    u = rng.uniform(0, umax, n)
    r = np.sqrt(u) / (1 - np.sqrt(u))
    psi = 1 / (1 + r)
    vesc = np.sqrt(2 * psi)
    # the bound of v^2 f(psi - v^2/2) on [0, vesc], from a grid, with room
    grid = np.linspace(0, 1, 65)[1:]
    g = (grid * grid)[None, :] * hernquist_f(np.sqrt(psi[:, None] * (1 - grid * grid)[None, :]))
    bound = 1.2 * g.max(axis=1)
    v = np.empty(n)
    todo = np.arange(n)
    while todo.size:
        x = rng.uniform(0, 1, todo.size)
        y = rng.uniform(0, 1, todo.size) * bound[todo]
        ok = y <= x * x * hernquist_f(np.sqrt(psi[todo] * (1 - x * x)))
        v[todo[ok]] = x[ok] * vesc[todo[ok]]
        todo = todo[~ok]

    def iso(k):
        z = rng.uniform(-1, 1, k)
        phi = rng.uniform(0, 2 * math.pi, k)
        s = np.sqrt(1 - z * z)
        return np.stack([s * np.cos(phi), s * np.sin(phi), z], axis=1)

    pos = r[:, None] * iso(n)
    vel = v[:, None] * iso(n)
    pos -= pos.mean(axis=0)
    vel -= vel.mean(axis=0)
    return pos, vel


def run(canopy, files, steps, dt, extra, n):
    cmd = [canopy, "nbody", "--bodies", files[0], "--velocities", files[1], "--steps", str(steps),
           "--dt", repr(dt), "--energy-every", str(steps), "--direct-max", str(n), "--stats=json"]
    cmd += extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("canopy failed: " + " ".join(cmd) + "\n" + p.stderr)
    de = [float(l.split()[11]) for l in p.stdout.splitlines() if l.startswith("step ")]
    stats = json.loads([l for l in p.stderr.splitlines() if l.startswith("{")][-1])
    return abs(de[-1]), stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("canopy")
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--dt", type=float, default=0.25)
    ap.add_argument("--max-rung", type=int, default=5)
    ap.add_argument("--etas", default="0.2")
    ap.add_argument("--no-global", action="store_true")
    ap.add_argument("--softening", type=float, default=0.01)
    ap.add_argument("--accuracy", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    tdyn = math.sqrt((1 + math.sqrt(2)) ** 3)
    steps = max(1, round(tdyn / a.dt))
    pos, vel = hernquist(a.n)
    common = ["--softening", str(a.softening), "--accuracy", str(a.accuracy), "--threads",
              str(a.threads)]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        files = (os.path.join(d, "p.npy"), os.path.join(d, "v.npy"))
        np.save(files[0], pos)
        np.save(files[1], vel)
        etas = [float(e) for e in a.etas.split(",")]
        runs = [("block", steps, a.dt, ["--max-rung", str(a.max_rung), "--eta", str(e)], e)
                for e in etas]
        if not a.no_global:
            runs += [("global", steps << k, a.dt / (1 << k), [], None)
                     for k in range(a.max_rung + 1)]
        for kind, s, dt, extra, eta in runs:
            de, st = run(a.canopy, files, s, dt, common + extra, a.n)
            c = st["counts"]
            row = {"kind": kind, "n": a.n, "steps": s, "dt": dt, "t_end": s * dt,
                   "energy_error": de, "force_evaluations": c["force_evaluations"],
                   "run_seconds": st["seconds"]["run"], "eta": eta,
                   "max_rung": a.max_rung if kind == "block" else 0, "softening": a.softening,
                   "accuracy": a.accuracy, "threads": a.threads}
            print(json_line(row), flush=True)
            rows.append(row)
    print("| run | dt | steps | energy error | force evaluations | run seconds |", file=sys.stderr)
    print("|---|---|---|---|---|---|", file=sys.stderr)
    for r in rows:
        name = ("block, max rung %d, eta %g" % (r["max_rung"], r["eta"])) if r["kind"] == "block" \
            else "global"
        print("| %s | %g | %d | %.2e | %d | %.1f |" % (name, r["dt"], r["steps"], r["energy_error"],
              r["force_evaluations"], r["run_seconds"]), file=sys.stderr)


if __name__ == "__main__":
    main()
