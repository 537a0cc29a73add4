# SPDX-License-Identifier: MIT
"""Kernel density estimates: canopy.kde (ctypes, the Python package) against
scikit-learn's KernelDensity(...).fit(data).score_samples(queries), in one process on
the same float32 data (issue 31 item 6 / issue 37 item 3). Driven by bench/run_kde.sh;
a markdown table to stdout, JSON lines to --jsonl.

Cases: n data points and n queries uniform in the unit cube (d = 3, independent
draws), bandwidth 0.05 (Scott's rule for n ~ 2e5 in the unit cube), rtol from --rtol,
atol 0, gaussian kernel (and epanechnikov with --kernels). CPU time of this process
(time.process_time, so a loaded machine's waiting is not counted; both peers run on
one thread: canopy.set_threads(1), OPENBLAS/OMP threads 1 from run_kde.sh).
canopy: median (min-max) of --reps runs after a warm-up; scikit-learn: --sk-reps runs
(its single-tree walk costs minutes at large n), and none above --sk-max points.
Each row checks the bound: max over queries of |p_canopy - p_sklearn| / p_sklearn,
which may reach twice rtol (each is within rtol of the exact density).

--backend gpu: canopy on the GPU, timed in wall seconds (time.perf_counter: the host
waits on the device, so its CPU time says nothing), the warm-up taking CUDA's start.
--sk-sample S: above --sk-max points, scikit-learn scores only the first S queries
(against all n data points) and its time is scaled by n / S; it walks its tree once per
query, independently, so this is an extrapolation over a uniform sample of the queries,
marked "est." in the table."""
import argparse
import json
import statistics
import time

import numpy as np

import canopy


def timed(fn, reps, warm, clock=time.process_time):
    if warm:
        fn()
    ts, out = [], None
    for _ in range(reps):
        t0 = clock()
        out = fn()
        ts.append(clock() - t0)
    return out, ts


def fmt(ts):
    if len(ts) == 1:
        return f"{ts[0]:.3g} (1 run)"
    return f"{statistics.median(ts):.3g} ({min(ts):.3g}-{max(ts):.3g})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20000,50000,100000,200000")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--bandwidth", type=float, default=0.05)
    ap.add_argument("--kernels", default="gaussian")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sk-reps", type=int, default=1)
    ap.add_argument("--sk-max", type=int, default=100000)
    ap.add_argument("--sk-sample", type=int, default=0)
    ap.add_argument("--backend", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--jsonl", default=None)
    a = ap.parse_args()
    clock = time.perf_counter if a.backend == "gpu" else time.process_time
    unit = "wall seconds on the GPU" if a.backend == "gpu" else "CPU seconds, one thread"
    from sklearn.neighbors import KernelDensity
    import sklearn

    canopy.set_threads(1)
    jl = open(a.jsonl, "a") if a.jsonl else None
    print(f"scikit-learn {sklearn.__version__} (one thread, CPU seconds); d = 3, bandwidth "
          f"{a.bandwidth}, rtol {a.rtol}, atol 0; canopy backend {a.backend}: {unit}")
    print()
    print("| points = queries | kernel | canopy s | scikit-learn s | sklearn / canopy |"
          " max rel. difference |")
    print("|---|---|---|---|---|---|")
    for n in [int(s) for s in a.sizes.split(",")]:
        rng = np.random.default_rng(n)
        x = rng.random((n, 3), dtype=np.float32)
        q = rng.random((n, 3), dtype=np.float32)
        for kernel in a.kernels.split(","):
            got, tc = timed(lambda: canopy.kde(x, q, a.bandwidth, kernel, 0.0, a.rtol,
                                               backend=a.backend), a.reps, True, clock)
            row = {"n": n, "kernel": kernel, "bandwidth": a.bandwidth, "rtol": a.rtol,
                   "backend": a.backend, "canopy_s": tc}
            sk_s, ratio, diff = "not run (minutes)", "", ""
            m = n if n <= a.sk_max else min(a.sk_sample, n)
            if m > 0:
                kd = KernelDensity(bandwidth=a.bandwidth, kernel=kernel, rtol=a.rtol).fit(x)
                want, ts = timed(lambda: kd.score_samples(q[:m]), a.sk_reps, False)
                scale = n / m
                rel = float(np.max(np.abs(np.exp(got[:m]) - np.exp(want)) / np.exp(want)))
                row.update(sklearn_s=ts, sklearn_queries=m, sklearn_scale=scale, max_rel=rel)
                sk_s = fmt(ts) if m == n else f"est. {statistics.median(ts) * scale:.3g} " \
                    f"({statistics.median(ts):.3g} s on {m} queries x {scale:g})"
                ratio = f"{statistics.median(ts) * scale / statistics.median(tc):.1f}x"
                diff = f"{rel:.1e}"
            print(f"| {n} | {kernel} | {fmt(tc)} | {sk_s} | {ratio} | {diff} |", flush=True)
            if jl:
                jl.write(json.dumps(row) + "\n")
                jl.flush()


if __name__ == "__main__":
    main()
