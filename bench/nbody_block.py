#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Block time steps vs one global step on a Hernquist or Plummer halo
(bench/results/nbody.md, "Block time steps"): `canopy nbody` over one dynamical time at
the half-mass radius, with --max-rung R for each eta and tree rebuild fraction and,
for the same bodies, global steps dt / 2^k for k in --global (default 0..R); each
run's relative energy error (float64 direct potential, start to end, or the walk's
above --direct-max bodies), body force evaluations (--stats=json), wall seconds of
the stepping and CPU seconds (user + sys) of the whole process. One raw JSON line per
run on stdout, then a markdown table on stderr.

    bench/nbody_block.py CANOPY [--halo hernquist|plummer] [--n N] [--dt DT]
                         [--max-rung R] [--etas E1,E2,...] [--rebuilds F1,F2,...]
                         [--global K1,K2,...] [--softening EPS] [--accuracy A]
                         [--threads T] [--direct-max D] [--no-global]

Hernquist (1990): G = M = a = 1, truncated at r = 100 (radii by the inverse
cumulative mass), isotropic velocities drawn from its distribution function f(E)
(Hernquist's eq. 17) by rejection against a per-body bound found on a grid;
r_h = (1 + sqrt 2) a. Plummer: G = M = a = 1, truncated at r = 100, velocities by
Aarseth, Henon and Wielen's (1974) rejection of q^2 (1 - q^2)^(7/2); r_h = 1.305 a.
Seed 1; t_dyn = sqrt(r_h^3 / (G M))."""
import argparse
import json
import math
import os
import subprocess
import resource
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

    pos = r[:, None] * iso(rng, n)
    vel = v[:, None] * iso(rng, n)
    pos -= pos.mean(axis=0)
    vel -= vel.mean(axis=0)
    return pos, vel


def iso(rng, k):
    z = rng.uniform(-1, 1, k)
    phi = rng.uniform(0, 2 * math.pi, k)
    s = np.sqrt(1 - z * z)
    return np.stack([s * np.cos(phi), s * np.sin(phi), z], axis=1)


def plummer(n, seed=1, rmax=100.0):
    rng = np.random.default_rng(seed)
    mmax = rmax**3 / (1 + rmax * rmax) ** 1.5
    x = rng.uniform(0, mmax, n)
    r = 1 / np.sqrt(x ** (-2 / 3) - 1)
    q = np.empty(n)
    todo = np.arange(n)
    while todo.size:  # q^2 (1 - q^2)^3.5 peaks below 0.1
        a = rng.uniform(0, 1, todo.size)
        b = rng.uniform(0, 0.1, todo.size)
        ok = b <= a * a * (1 - a * a) ** 3.5
        q[todo[ok]] = a[ok]
        todo = todo[~ok]
    v = q * np.sqrt(2) * (1 + r * r) ** -0.25
    pos = r[:, None] * iso(rng, n)
    vel = v[:, None] * iso(rng, n)
    pos -= pos.mean(axis=0)
    vel -= vel.mean(axis=0)
    return pos, vel


def run(canopy, files, steps, dt, extra, direct_max):
    cmd = [canopy, "nbody", "--bodies", files[0], "--velocities", files[1], "--steps", str(steps),
           "--dt", repr(dt), "--energy-every", str(steps), "--direct-max", str(direct_max),
           "--stats=json"]
    cmd += extra
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        sys.exit("canopy failed: " + " ".join(cmd) + "\n" + p.stderr)
    de = [float(l.split()[11]) for l in p.stdout.splitlines() if l.startswith("step ")]
    stats = json.loads([l for l in p.stderr.splitlines() if l.startswith("{")][-1])
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return abs(de[-1]), stats, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("canopy")
    ap.add_argument("--halo", choices=["hernquist", "plummer"], default="hernquist")
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--dt", type=float, default=0.25)
    ap.add_argument("--max-rung", type=int, default=5)
    ap.add_argument("--etas", default="0.2")
    ap.add_argument("--rebuilds", default="1")
    ap.add_argument("--global", dest="glob", default=None)
    ap.add_argument("--no-global", action="store_true")
    ap.add_argument("--direct-max", type=int, default=None)
    ap.add_argument("--softening", type=float, default=0.01)
    ap.add_argument("--accuracy", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    rh = 1 + math.sqrt(2) if a.halo == "hernquist" else 1.305
    tdyn = math.sqrt(rh**3)
    steps = max(1, round(tdyn / a.dt))
    pos, vel = (hernquist if a.halo == "hernquist" else plummer)(a.n)
    direct_max = a.n if a.direct_max is None else a.direct_max
    common = ["--softening", str(a.softening), "--accuracy", str(a.accuracy), "--threads",
              str(a.threads)]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        files = (os.path.join(d, "p.npy"), os.path.join(d, "v.npy"))
        np.save(files[0], pos)
        np.save(files[1], vel)
        etas = [float(e) for e in a.etas.split(",")]
        runs = [("block", steps, a.dt, ["--max-rung", str(a.max_rung), "--eta", str(e), "--rebuild",
                 str(f)], e, float(f)) for e in etas for f in a.rebuilds.split(",")]
        ks = range(a.max_rung + 1) if a.glob is None else [int(k) for k in a.glob.split(",")]
        if not a.no_global:
            runs += [("global", steps << k, a.dt / (1 << k), [], None, None) for k in ks]
        for kind, s, dt, extra, eta, rebuild in runs:
            de, st, cpu = run(a.canopy, files, s, dt, common + extra, direct_max)
            c = st["counts"]
            row = {"kind": kind, "halo": a.halo, "n": a.n, "steps": s, "dt": dt, "t_end": s * dt,
                   "energy_error": de, "force_evaluations": c["force_evaluations"],
                   "run_seconds": st["seconds"]["run"], "cpu_seconds": cpu, "eta": eta,
                   "rebuild": rebuild, "max_rung": a.max_rung if kind == "block" else 0,
                   "softening": a.softening, "accuracy": a.accuracy, "threads": a.threads,
                   "tree_builds": c.get("tree_builds", 0), "tree_refits": c.get("tree_refits", 0),
                   "load": os.getloadavg()[0]}
            print(json_line(row), flush=True)
            rows.append(row)
    print("| run | dt | steps | energy error | force evaluations | run seconds | CPU seconds |",
          file=sys.stderr)
    print("|---|---|---|---|---|---|---|", file=sys.stderr)
    for r in rows:
        name = ("block, max rung %d, eta %g, rebuild %g" % (r["max_rung"], r["eta"], r["rebuild"])
                if r["kind"] == "block" else "global")
        print("| %s | %g | %d | %.2e | %d | %.1f | %.1f |" % (name, r["dt"], r["steps"],
              r["energy_error"], r["force_evaluations"], r["run_seconds"], r["cpu_seconds"]),
              file=sys.stderr)


if __name__ == "__main__":
    main()
