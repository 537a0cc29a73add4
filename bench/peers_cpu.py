#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Times CPU peers on the same data and cores as canopy-bench, printing the same JSON
line format: scipy cKDTree (workers=-1) and scikit-learn KDTree / BallTree through
NearestNeighbors(n_jobs=-1). Medians and min-max over --repeat runs after a warm-up."""
import argparse
import os
import statistics
import time

import numpy as np

import bench_meta


def timed(fn, repeat):
    fn()  # warm-up
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def emit(label, app, peer, n, nq, d, k, radius, build, query):
    print(bench_meta.json_line({
        "label": label, "app": app, "variant": peer, "schedule": "-", "backend": "cpu",
        "n": n, "nq": nq, "d": d, "k": k, "radius": radius, "threads": os.cpu_count(),
        "build_med": statistics.median(build), "build_min": min(build), "build_max": max(build),
        "traverse_med": statistics.median(query), "traverse_min": min(query),
        "traverse_max": max(query), "peer": True}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--app", required=True, choices=["knn", "nn", "radius"])
    ap.add_argument("--ref", required=True)
    ap.add_argument("--query")
    ap.add_argument("-k", type=int, default=8)
    ap.add_argument("-r", "--radius", type=float)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--label", default="")
    ap.add_argument("--peers", default="ckdtree,sklearn_kd,sklearn_ball")
    a = ap.parse_args()
    ref = np.load(a.ref).astype(np.float32)
    qry = np.load(a.query).astype(np.float32) if a.query else ref
    k = 1 if a.app == "nn" else a.k
    n, d = ref.shape
    nq = qry.shape[0]
    peers = a.peers.split(",")
    if "ckdtree" in peers:
        from scipy.spatial import cKDTree
        tree = cKDTree(ref)
        build = timed(lambda: cKDTree(ref), a.repeat)
        if a.app == "radius":
            query = timed(lambda: tree.query_ball_point(qry, a.radius, workers=-1,
                                                        return_length=True), a.repeat)
        else:
            query = timed(lambda: tree.query(qry, k=k, workers=-1), a.repeat)
        emit(a.label, a.app, "scipy.cKDTree", n, nq, d, k, a.radius, build, query)
    for name, algo in (("sklearn_kd", "kd_tree"), ("sklearn_ball", "ball_tree")):
        if name not in peers:
            continue
        from sklearn.neighbors import NearestNeighbors
        nn = NearestNeighbors(algorithm=algo, n_jobs=-1).fit(ref)
        build = timed(lambda: NearestNeighbors(algorithm=algo, n_jobs=-1).fit(ref), a.repeat)
        if a.app == "radius":
            # counts only; sklearn's tree counts without building neighbour lists
            query = timed(lambda: nn._tree.query_radius(qry, a.radius, count_only=True), a.repeat)
        else:
            query = timed(lambda: nn.kneighbors(qry, n_neighbors=k), a.repeat)
        emit(a.label, a.app, "sklearn." + ("KDTree" if algo == "kd_tree" else "BallTree"),
             n, nq, d, k, a.radius, build, query)


if __name__ == "__main__":
    main()
