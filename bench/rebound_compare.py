# SPDX-License-Identifier: MIT
"""canopy's CPU tree gravity against REBOUND's tree code on one core, at matched error.

Both codes get the same Plummer sphere (`canopy gen plummer --seed 1`), the same Plummer
softening and G = 1, masses 1/n. Errors: median and rms relative acceleration error on
the same 1000 evenly spaced bodies (index k * (n // 1000)) against a float64 direct sum.
Times: process CPU time of one force evaluation, tree build included, median (min-max)
of --reps fresh runs; REBOUND's is one leapfrog step of a fresh simulation (tree
construction + tree gravity; velocities are zero so the drift moves nothing), run with
OMP_NUM_THREADS=1. canopy's rows come from `canopy-bench-nbody --lists --threads 1` on the
same machine in the same run. REBOUND's opening angle is swept; for each REBOUND row the
canopy time at the same median error is interpolated (log time vs log error) between
the canopy thetas that bracket it.

    python3 bench/rebound_compare.py --build build [--n 100000] [--eps 0.01] [--reps 3]
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def direct_sample(x, m, eps, sample):
    """float64 accelerations of the sampled bodies from all others."""
    out = np.zeros((len(sample), 3))
    for k, i in enumerate(sample):
        d = x - x[i]
        r2 = (d * d).sum(1) + eps * eps
        r2[i] = np.inf
        out[k] = (d * (m / (r2 * np.sqrt(r2)))[:, None]).sum(0)
    return out


def errors(acc, ref):
    rel = np.sqrt(((acc - ref) ** 2).sum(1) / (ref**2).sum(1))
    return float(np.median(rel)), float(math.sqrt(((acc - ref) ** 2).sum() / (ref**2).sum()))


def rebound_run(x, m, eps, theta, sample):
    import rebound

    sim = rebound.Simulation()
    sim.G = 1.0
    sim.gravity = "tree"
    sim.opening_angle2 = theta * theta
    sim.softening = eps
    sim.integrator = "leapfrog"
    sim.dt = 1e-12
    sim.boundary = "open"
    sim.root_size = 2.02 * float(np.abs(x).max())
    sim.N_root_x = sim.N_root_y = sim.N_root_z = 1
    for i in range(len(x)):
        sim.add(m=float(m[i]), x=float(x[i, 0]), y=float(x[i, 1]), z=float(x[i, 2]))
    t0 = time.process_time()
    sim.steps(1)
    t = time.process_time() - t0
    if sim.N != len(x):
        sys.exit(f"rebound lost bodies ({sim.N} of {len(x)}): enlarge the box")
    acc = np.array([[sim.particles[int(i)].ax, sim.particles[int(i)].ay, sim.particles[int(i)].az]
                    for i in sample])
    return t, acc


def canopy_rows(build, n, eps, reps, thetas):
    cmd = [os.path.join(build, "canopy-bench-nbody"), "--lists", "--n", str(n), "--softening",
           str(eps), "--threads", "1", "--reps", str(reps), "--tree", "both", "--thetas",
           ",".join(str(t) for t in thetas)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        f = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(f) < 14 or f[0] not in ("oct", "binary"):
            continue
        med = float(f[13].split()[0])
        rows.append({"tree": f[0], "group": f[4], "theta": float(f[5]), "err": float(f[6]),
                     "rms": float(f[7]), "ms": med, "range": f[13].split()[1]})
    return rows


def at_error(rows, err):
    """canopy ms at median error err, log-log between bracketing thetas; None outside."""
    pts = sorted((r["err"], r["ms"]) for r in rows)
    for (e0, t0), (e1, t1) in zip(pts, pts[1:]):
        if e0 <= err <= e1:
            w = (math.log(err) - math.log(e0)) / (math.log(e1) - math.log(e0)) if e1 > e0 else 0
            return math.exp(math.log(t0) + w * (math.log(t1) - math.log(t0)))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--eps", type=float, default=0.01)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rebound-thetas", default="0.2,0.25,0.3,0.4,0.5")
    ap.add_argument("--canopy-thetas", default="0.4,0.5,0.6,0.7,0.8,1.0,1.3")
    a = ap.parse_args()
    import rebound

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "b.npy")
        subprocess.run([os.path.join(a.build, "canopy"), "gen", "plummer", "--n", str(a.n),
                        "--seed", "1", "-o", path, "--quiet"], check=True)
        x = np.load(path).astype(np.float64)
    n = len(x)
    m = np.full(n, 1.0 / n)
    ns = min(n, 1000)
    sample = np.arange(ns) * (n // ns)
    ref = direct_sample(x, m, a.eps, sample)

    crow = canopy_rows(a.build, n, a.eps, a.reps, [float(t) for t in a.canopy_thetas.split(",")])
    print(f"n = {n}, eps = {a.eps}, REBOUND {rebound.__version__}, 1 core, CPU seconds\n")
    print("| code | tree | theta | median err | rms err | time ms (median, min-max) |")
    print("|---|---|---|---|---|---|")
    for r in crow:
        print(f"| canopy | {r['tree']} {r['group']} | {r['theta']:.2f} | {r['err']:.2e} | "
              f"{r['rms']:.2e} | {r['ms']:.1f} {r['range']} |")
    rrows = []
    for th in [float(t) for t in a.rebound_thetas.split(",")]:
        ts = []
        for _ in range(a.reps):
            t, acc = rebound_run(x, m, a.eps, th, sample)
            ts.append(t * 1e3)
        ts.sort()
        med, rms = errors(acc, ref)
        rrows.append((th, med, rms, ts))
        print(f"| REBOUND | oct | {th:.2f} | {med:.2e} | {rms:.2e} | "
              f"{ts[len(ts) // 2]:.1f} ({ts[0]:.1f}-{ts[-1]:.1f}) |", flush=True)
    print("\nMatched median error (canopy interpolated between bracketing thetas):\n")
    print("| REBOUND theta | median err | REBOUND ms | canopy binary ms | ratio | "
          "canopy oct ms | ratio |")
    print("|---|---|---|---|---|---|---|")
    for th, med, rms, ts in rrows:
        t_r = ts[len(ts) // 2]
        cells = []
        for tree in ("binary", "oct"):
            t_c = at_error([r for r in crow if r["tree"] == tree], med)
            cells += ["out of range", "-"] if t_c is None else [f"{t_c:.1f}", f"{t_r / t_c:.1f}x"]
        print(f"| {th:.2f} | {med:.2e} | {t_r:.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
