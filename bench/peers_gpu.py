#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""GPU peer for canopy-bench: brute-force kNN / radius counts with torch on the same
GPU (chunked torch.cdist in the direct-difference form, then topk or a count), timed
with CUDA events after a warm-up, data already on the device (transfers excluded)."""
import argparse
import statistics

import numpy as np
import torch

import bench_meta


def run(ref, qry, app, k, radius, chunk):
    out = []
    for s in range(0, qry.shape[0], chunk):
        d = torch.cdist(qry[s:s + chunk], ref, compute_mode="donot_use_mm_for_euclid_dist")
        if app == "radius":
            out.append((d <= radius).sum(1))
        else:
            out.append(torch.topk(d, k, dim=1, largest=False).indices)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--app", required=True, choices=["knn", "nn", "radius"])
    ap.add_argument("--ref", required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("-k", type=int, default=8)
    ap.add_argument("-r", "--radius", type=float)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--label", default="")
    ap.add_argument("--chunk", type=int, default=4096)
    ap.add_argument("--max-queries", type=int, default=20000,
                    help="time this many queries and scale linearly (brute force is linear)")
    a = ap.parse_args()
    dev = torch.device("cuda")
    ref = torch.from_numpy(np.load(a.ref).astype(np.float32)).to(dev)
    qry = torch.from_numpy(np.load(a.query).astype(np.float32)).to(dev)
    k = 1 if a.app == "nn" else a.k
    nq = qry.shape[0]
    qry = qry[:a.max_queries]
    scale = nq / qry.shape[0]
    run(ref, qry, a.app, k, a.radius, a.chunk)
    times = []
    for _ in range(a.repeat):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        run(ref, qry, a.app, k, a.radius, a.chunk)
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3 * scale)
    print(bench_meta.json_line({
        "label": a.label, "app": a.app, "variant": "torch.cdist brute force" + (
            f" (timed on {qry.shape[0]} queries, scaled)" if scale > 1 else ""), "schedule": "-",
        "backend": "gpu", "n": ref.shape[0], "nq": nq, "d": ref.shape[1], "k": k,
        "radius": a.radius, "build_med": 0.0, "build_min": 0.0, "build_max": 0.0,
        "traverse_med": statistics.median(times), "traverse_min": min(times),
        "traverse_max": max(times), "peer": True}), flush=True)


if __name__ == "__main__":
    main()
