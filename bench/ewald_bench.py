#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Periodic (Ewald summation and TreePM) vs open-boundary force evaluation of the list
engine, and the periodic median force error against the float64 Ewald sum on a sample
of bodies.

    CANOPY_LIBRARY=build-cpu/libcanopy.so PYTHONPATH=python/src \\
        python3 bench/ewald_bench.py --n 100000 --reps 5 --sample 200 --threads 2

Bodies: "uniform" in the unit box, and "clustered" (canopy gen clusters: 64 Gaussians of
spread 0.01, wrapped into the box; --sets picks). Every run uses the default options
(accuracy 1e-3: binary tree, theta and order from the list table of its boundary and
method: the open one, the Ewald one read at n (canopy_gravity_choose_for_n) or
TreePM's), softening 1e-3; --methods picks the periodic methods (default ewald,treepm).
The Ewald table is built by one untimed call first (it is computed once per process and
grid). The CPU backend throughout (auto takes the GPU for open runs from 200k bodies).
Times: wall and process CPU (user + sys, all threads) per call. Prints one JSON
line per (set, run) and a Markdown row per (set, periodic method).

--before LIB: instead, this library (CANOPY_LIBRARY) and LIB, another build of it, side
by side in this process, calls alternated (open and periodic of each, the order reversed
every round) for --reps rounds: CPU seconds (process_time) per call, median (min-max),
so that a loaded machine disturbs both builds alike. Prints a line per (set, build)."""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

from canopy import _lib

lib = _lib.lib
lib.canopy_gravity_multipole.argtypes = [_lib.Points, ctypes.c_void_p,
                                         ctypes.POINTER(_lib.GravityOptions), ctypes.c_void_p,
                                         ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
lib.canopy_gravity_ewald_direct_sample.argtypes = [_lib.Points, ctypes.c_void_p, ctypes.c_float,
                                                   ctypes.c_float, ctypes.c_void_p,
                                                   ctypes.c_int64, ctypes.c_void_p,
                                                   ctypes.c_void_p]
lib.canopy_gravity_choose_for.argtypes = [ctypes.POINTER(_lib.GravityOptions), ctypes.c_double,
                                          ctypes.POINTER(ctypes.c_float),
                                          ctypes.POINTER(ctypes.c_int32), ctypes.c_void_p]
lib.canopy_gravity_choose_for_n.argtypes = [ctypes.POINTER(_lib.GravityOptions),
                                            ctypes.c_double, ctypes.c_int64,
                                            ctypes.POINTER(ctypes.c_float),
                                            ctypes.POINTER(ctypes.c_int32), ctypes.c_void_p]
lib.canopy_last_error.restype = ctypes.c_char_p
lib.canopy_set_threads.argtypes = [ctypes.c_int32]


def bodies(kind, n, canopy):
    if kind == "uniform":
        return np.random.default_rng(33).random((n, 3), dtype=np.float32)
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([canopy, "gen", "clusters", "--n", str(n), "-o", d + "/c.npy"],
                       check=True, capture_output=True)
        x = np.load(d + "/c.npy").astype(np.float64)
    return np.ascontiguousarray((x - np.floor(x)).astype(np.float32))


METHODS = {"auto": 0, "ewald": 1, "treepm": 2}


def options(box, n, on=lib, method="auto"):
    g = _lib.gravity_options_default()
    g.softening = 1e-3
    g.box = box
    g.periodic = METHODS[method]
    th, order = ctypes.c_float(), ctypes.c_int32()
    if hasattr(on, "canopy_gravity_choose_for_n"):  # builds before it: the table's n
        on.canopy_gravity_choose_for_n.argtypes = lib.canopy_gravity_choose_for_n.argtypes
        s = on.canopy_gravity_choose_for_n(ctypes.byref(g), 1e-3, n, th, order, None)
    else:
        s = on.canopy_gravity_choose_for(ctypes.byref(g), 1e-3, th, order, None)
    assert s == 0
    g.theta, g.order = th.value, order.value
    return g


# The CPU backend for both boundaries: auto would take the GPU for large open runs.
CPU = _lib.run_options_default()
CPU.backend = 1


def evaluate(x, g, on=lib):
    n = x.shape[0]
    acc = np.empty((n, 3), np.float32)
    pts = _lib.Points(x.ctypes.data, n, 3, 3)
    t0, c0 = time.perf_counter(), os.times()
    s = on.canopy_gravity_multipole(pts, None, ctypes.byref(g), ctypes.byref(CPU),
                                    acc.ctypes.data, None, None)
    t, c1 = time.perf_counter() - t0, os.times()
    if s:
        raise RuntimeError(lib.canopy_last_error().decode())
    return acc, t, (c1.user - c0.user) + (c1.system - c0.system)


def side_by_side(before, n, rounds, threads, canopy, sets):
    other = ctypes.CDLL(before)
    for name in ("canopy_gravity_multipole", "canopy_gravity_choose_for"):
        getattr(other, name).argtypes = getattr(lib, name).argtypes
    if threads:
        other.canopy_set_threads(threads)
    builds = {"after": lib, "before": other}
    for kind in sets:
        x = bodies(kind, n, canopy)
        runs = [(b, box) for box in (0.0, 1.0) for b in builds]
        opts = {r: options(r[1], n, builds[r[0]]) for r in runs}
        cpu = {r: [] for r in runs}
        for r in runs:  # untimed: the Ewald table, page faults
            evaluate(x, opts[r], builds[r[0]])
        for k in range(rounds):
            for r in runs if k % 2 == 0 else runs[::-1]:
                t0 = time.process_time()
                evaluate(x, opts[r], builds[r[0]])
                cpu[r].append(time.process_time() - t0)
        for b in ("before", "after"):
            o, p = cpu[(b, 0.0)], cpu[(b, 1.0)]
            print(f"{kind} {b}: open {statistics.median(o):.3f} ({min(o):.3f}-{max(o):.3f}) "
                  f"periodic {statistics.median(p):.3f} ({min(p):.3f}-{max(p):.3f}) ratio "
                  f"{statistics.median(p) / statistics.median(o):.2f}x [periodic order "
                  f"{opts[(b, 1.0)].order}, theta {opts[(b, 1.0)].theta:.2f}]", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--canopy", default="build-cpu/canopy")
    ap.add_argument("--threads", type=int, default=0, help="0: canopy's default")
    ap.add_argument("--before", help="another build's libcanopy.so: side by side, --reps rounds")
    ap.add_argument("--sets", default="uniform,clustered", help="comma-separated sets to run")
    ap.add_argument("--methods", default="ewald,treepm",
                    help="periodic methods to time beside the open run (auto, ewald, treepm)")
    a = ap.parse_args()
    sets = a.sets.split(",")
    assert all(k in ("uniform", "clustered") for k in sets), a.sets
    methods = a.methods.split(",")
    assert all(m in METHODS for m in methods), a.methods
    if a.threads:
        lib.canopy_set_threads(a.threads)
    if a.before:
        side_by_side(a.before, a.n, a.reps, a.threads, a.canopy, sets)
        return
    for kind in sets:
        x = bodies(kind, a.n, a.canopy)
        row = {}
        runs = [("open", 0.0, "auto")] + [("periodic " + m, 1.0, m) for m in methods]
        for name, box, method in runs:
            g = options(box, a.n, method=method)
            evaluate(x, g)  # untimed: the Ewald table, page faults
            times, cpus = [], []
            for _ in range(a.reps):
                acc, t, c = evaluate(x, g)
                times.append(t)
                cpus.append(c)
            rec = {"bench": "ewald", "set": kind, "n": a.n, "boundary": name.split()[0],
                   "method": method if box > 0.0 else None,
                   "threads": a.threads, "theta": g.theta, "order": g.order,
                   "median_s": statistics.median(times), "min_s": min(times),
                   "max_s": max(times), "cpu_median_s": statistics.median(cpus),
                   "cpu_min_s": min(cpus), "cpu_max_s": max(cpus)}
            if box > 0.0:
                idx = np.linspace(0, a.n - 1, a.sample).astype(np.int64)
                ref = np.empty((a.sample, 3))
                s = lib.canopy_gravity_ewald_direct_sample(_lib.Points(x.ctypes.data, a.n, 3, 3),
                                                           None, 1e-3, 1.0, idx.ctypes.data,
                                                           a.sample, ref.ctypes.data, None)
                assert s == 0, lib.canopy_last_error()
                rel = np.linalg.norm(acc[idx] - ref, axis=1) / np.linalg.norm(ref, axis=1)
                rec["median_error"] = float(np.median(rel))
            row[name] = rec
            print(json.dumps(rec), flush=True)
        o = row["open"]
        for m in methods:
            p = row["periodic " + m]
            print(f"| {kind} | {m} | {a.n} | {a.threads} | "
                  f"{o['median_s']:.3f} ({o['min_s']:.3f}-{o['max_s']:.3f}) | "
                  f"{p['median_s']:.3f} ({p['min_s']:.3f}-{p['max_s']:.3f}) | "
                  f"{p['median_s'] / o['median_s']:.2f}x | "
                  f"{o['cpu_median_s']:.3f} ({o['cpu_min_s']:.3f}-{o['cpu_max_s']:.3f}) | "
                  f"{p['cpu_median_s']:.3f} ({p['cpu_min_s']:.3f}-{p['cpu_max_s']:.3f}) | "
                  f"{p['cpu_median_s'] / o['cpu_median_s']:.2f}x | "
                  f"{p['order']} / {p['theta']:.2f} | {p['median_error']:.2e} |", flush=True)


if __name__ == "__main__":
    main()
