#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 14's CPU goal: canopy against scipy's cKDTree on ONE thread, build + query and
query alone, kNN (k = 8) and NN (k = 1), on rand7 (uniform 7-D) and city2 (2-D, density
varying over 1e6x; also clust2 on request). Runs are interleaved (canopy, cKDTree,
canopy, ...) so that both see the same load; each canopy run is one `canopy-bench
--repeat 1` process with CANOPY_THREADS=1 (its warm-up run untimed), each cKDTree run
builds the tree and queries with workers=1 in this process.

Prints one JSON line per (workload, app, tool) with medians and min-max over --repeat
runs (the fields of bench/peers_cpu.py plus total = build + query), then a Markdown
table of the ratios cKDTree / canopy.

Usage: bench/knn_one_thread.py --build BUILD [--workloads rand7,city2] [--apps knn,nn]
       [--repeat 5] [--nq N] [--variant auto] [--data DIR] [--out FILE.jsonl]
--nq takes the first N queries of each workload (quick runs; the goal is on all)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import bench_meta


def ensure_workload(build, data, name):
    r, q = os.path.join(data, name + ".npy"), os.path.join(data, name + ".q.npy")
    if not (os.path.exists(r) and os.path.exists(q)):
        subprocess.run([os.path.join(build, "canopy"), "gen", name, "-o", r, "--query-out", q],
                       check=True, stdout=subprocess.DEVNULL)
    return r, q


def canopy_run(build, app, ref, query, variant):
    env = dict(os.environ, CANOPY_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([os.path.join(build, "canopy-bench"), "--app", app, "--ref", ref,
                          "--query", query, "-k", "8", "--backend", "cpu", "--variants", variant,
                          "--schedules", "auto", "--repeat", "1"],
                         env=env, check=True, capture_output=True, text=True).stdout
    j = json.loads(out.strip().splitlines()[-1])
    if "error" in j:
        sys.exit("canopy-bench: " + j["error"])
    # query time: the schedule (sort, auto's sample) and the traversal
    return j["build_med"], j["schedule_med"] + j["traverse_med"], j["variant"], j["schedule"]


def ckdtree_run(ref, qry, k):
    from scipy.spatial import cKDTree
    t0 = time.perf_counter()
    tree = cKDTree(ref)
    t1 = time.perf_counter()
    tree.query(qry, k=k, workers=1)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def summary(xs):
    return statistics.median(xs), min(xs), max(xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="build directory (canopy, canopy-bench)")
    ap.add_argument("--workloads", default="rand7,city2")
    ap.add_argument("--apps", default="knn,nn")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--nq", type=int, default=0, help="first NQ queries only (0: all)")
    ap.add_argument("--variant", default="auto", help="canopy variant (schedule is auto)")
    ap.add_argument("--data", default=os.environ.get("CANOPY_BENCH_DATA",
                                                     "/tmp/canopy-bench-data"))
    ap.add_argument("--out", help="also append the JSON lines to this file")
    a = ap.parse_args()
    os.makedirs(a.data, exist_ok=True)
    if a.repeat < 1:
        sys.exit("--repeat must be >= 1")
    out = open(a.out, "a") if a.out else None
    rows = []
    for w in a.workloads.split(","):
        rpath, qpath = ensure_workload(a.build, a.data, w)
        ref = np.load(rpath)
        qry = np.load(qpath)
        if a.nq:
            qry = qry[:a.nq]
            qpath = os.path.join(a.data, "%s.q%d.npy" % (w, a.nq))
            np.save(qpath, qry)
        for app in a.apps.split(","):
            k = 1 if app == "nn" else 8
            times = {"canopy": ([], []), "scipy.cKDTree": ([], [])}
            chosen = ""
            for _ in range(a.repeat):
                b, q, v, s = canopy_run(a.build, app, rpath, qpath, a.variant)
                chosen = v + "/" + s
                times["canopy"][0].append(b)
                times["canopy"][1].append(q)
                b, q = ckdtree_run(ref, qry, k)
                times["scipy.cKDTree"][0].append(b)
                times["scipy.cKDTree"][1].append(q)
            res = {}
            for tool, (bs, qs) in times.items():
                tot = [x + y for x, y in zip(bs, qs)]
                res[tool] = (summary(bs), summary(qs), summary(tot))
                line = bench_meta.json_line({
                    "label": w, "app": app, "variant": chosen if tool == "canopy" else tool,
                    "schedule": "-", "backend": "cpu", "n": len(ref), "nq": len(qry),
                    "d": ref.shape[1], "k": k, "threads": 1, "repeat": a.repeat,
                    "peer": tool != "canopy",
                    "build_med": res[tool][0][0], "build_min": res[tool][0][1],
                    "build_max": res[tool][0][2], "query_med": res[tool][1][0],
                    "query_min": res[tool][1][1], "query_max": res[tool][1][2],
                    "total_med": res[tool][2][0], "total_min": res[tool][2][1],
                    "total_max": res[tool][2][2]})
                print(line, flush=True)
                if out:
                    print(line, file=out, flush=True)
            rows.append((w, app, len(qry), chosen, res))
    fmt = lambda s: "%.0f (%.0f–%.0f)" % tuple(x * 1e3 for x in s)
    print("\n| workload | app | nq | canopy (variant) build / query / total ms | "
          "cKDTree build / query / total ms | total ratio | query ratio |")
    print("|---|---|---|---|---|---|---|")
    for w, app, nq, chosen, res in rows:
        c, p = res["canopy"], res["scipy.cKDTree"]
        print("| %s | %s | %d | (%s) %s / %s / %s | %s / %s / %s | **%.2fx** | %.2fx |" % (
            w, app, nq, chosen, fmt(c[0]), fmt(c[1]), fmt(c[2]), fmt(p[0]), fmt(p[1]),
            fmt(p[2]), p[2][0] / c[2][0], p[1][0] / c[1][0]))


if __name__ == "__main__":
    main()
