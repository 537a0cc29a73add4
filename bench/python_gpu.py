#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 32's goals table: the Python package on CUDA tensors against the C
device-pointer entries it calls (through ctypes, no Python around them) and PyTorch brute
force, and on NumPy against scikit-learn's kneighbors_graph; all in one run.

Whole-call wall times (torch.cuda.synchronize after each), median and min-max of
CANOPY_BENCH_REPS runs (default 5) after one warm-up; brute force runs once (it takes
seconds; CANOPY_BENCH_BRUTE=0 leaves it out). CANOPY_BENCH_N (default 1M) and
CANOPY_BENCH_N_CPU (200k) size the first rows, CANOPY_BENCH_THREADS the CPU row. Rows
whose peers are missing (no torch or CUDA module: the GPU rows; no scikit-learn: the CPU
row) say so. Markdown on stdout, one JSON line per row on stderr.
With --profile, after the table: where each GPU case's package time goes (the C entries
it calls, timed inside the package, and the rest: the Python side), and the Python
functions that take the most of it (cProfile). With --before DIR (a copy of an older
python/src/canopy), the GPU cases of that package and of this one, interleaved in the
same process (CANOPY_BENCH_REPS rounds), with their results checked equal.
Usage: bench/python_gpu.py [--cpu-only | --gpu-only] [--profile] [--before DIR]
(CANOPY_LIBRARY picks the libcanopy)."""
import cProfile
import ctypes
import importlib.util
import io
import json
import pstats
import os
import statistics
import sys
import time

import numpy as np

import canopy
from canopy import _lib

REPS = int(os.environ.get("CANOPY_BENCH_REPS", "5"))
N_GPU = int(os.environ.get("CANOPY_BENCH_N", "1000000"))
N_CPU = int(os.environ.get("CANOPY_BENCH_N_CPU", "200000"))
THREADS = int(os.environ.get("CANOPY_BENCH_THREADS", str(os.cpu_count())))
# 0: leave PyTorch brute force out (about 15 s a GPU row at 1M points)
BRUTE = os.environ.get("CANOPY_BENCH_BRUTE", "1") != "0"
rows = []


def timed(fn, sync, reps=REPS, warm=True):
    if warm:
        fn()
    ts = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts), max(ts)


def fmt(t):
    med, lo, hi = t
    return f"{med * 1e3:.1f} ms ({lo * 1e3:.1f}-{hi * 1e3:.1f})"


def row(case, canopy_t, c_t=None, peer=None, peer_t=None, goal=""):
    r = {"case": case, "canopy_s": canopy_t, "c_s": c_t, "peer": peer, "peer_s": peer_t}
    print(json.dumps(r), file=sys.stderr)
    ratio_c = f"{canopy_t[0] / c_t[0]:.2f}x" if c_t else "-"
    speedup = f"{peer_t[0] / canopy_t[0]:.0f}x" if peer_t else "-"
    rows.append(f"| {case} | {fmt(canopy_t)} | {fmt(c_t) if c_t else '-'} | {ratio_c} | "
                f"{(peer or '-')}: {fmt(peer_t) if peer_t else '-'} | {speedup} | {goal} |")


def c_knn(torch, x, q, k, leaf=0):
    """The C device-pointer build + kNN, called directly: the floor the package adds to."""
    n, d = x.shape
    idx = torch.empty((q.shape[0], k), dtype=torch.int64, device=x.device)
    d2 = torch.empty((q.shape[0], k), dtype=torch.float32, device=x.device)
    opt = _lib.index_options_default(_lib.TREE_KD)
    opt.leaf_size = leaf
    ro = _lib.run_options_default()
    stream = torch.cuda.current_stream().cuda_stream
    h = ctypes.c_void_p()
    assert _lib.index_build_device(_lib.Points(x.data_ptr(), n, d, d), ctypes.byref(opt),
                                   stream, ctypes.byref(h)) == 0, _lib.last_error()
    try:
        assert _lib.index_knn_device(h, q.data_ptr(), q.shape[0], k, ctypes.byref(ro),
                                     idx.data_ptr(), d2.data_ptr(), stream, None) == 0
    finally:
        _lib.index_free(h)
    return idx, d2


def brute_time(fn, sync):
    return timed(fn, sync, reps=1, warm=False) if BRUTE else None


def brute_knn(torch, x, q, k, r=None, chunk=2048):
    """PyTorch brute force as its users write it and as issue 32 timed it: torch.cdist in
    its default mode (the matrix-product form for large inputs: fast, not exact, so a speed
    peer only; the exact mode takes minutes a row at 1M points), top k per row."""
    out = []
    for s in range(0, q.shape[0], chunk):
        dist = torch.cdist(q[s:s + chunk], x)
        dv, iv = torch.topk(dist, k, dim=1, largest=False)
        if r is not None:
            iv = torch.where(dv <= r, iv, -1)
        out.append(iv)
    return torch.cat(out)


class CTimer:
    """Wraps the package's C device entries: the seconds spent inside them (each is
    synchronous: it returns when its work is done)."""

    NAMES = ("index_build_device", "index_knn_device", "index_free")

    def __init__(self, sync):
        self.sync, self.seconds, self.real = sync, 0.0, {}

    def __enter__(self):
        for name in self.NAMES:
            f = self.real[name] = getattr(_lib, name)
            setattr(_lib, name, self._wrap(f))
        return self

    def __exit__(self, *exc):
        for name, f in self.real.items():
            setattr(_lib, name, f)

    def _wrap(self, f):
        def timed_call(*a):
            self.sync()
            t0 = time.perf_counter()
            r = f(*a)
            self.seconds += time.perf_counter() - t0
            return r
        return timed_call


def profile(cases, sync, reps=20):
    """Per case: whole call, inside the C entries, the rest; then cProfile's top lines."""
    print("\n## Where the package's time goes\n")
    print("| case | whole call | in the C entries | Python side (rest) |")
    print("|---|---|---|---|")
    tops = []
    for name, fn in cases:
        fn()
        whole, inside = [], []
        for _ in range(reps):
            with CTimer(sync) as ct:
                sync()
                t0 = time.perf_counter()
                fn()
                sync()
                whole.append(time.perf_counter() - t0)
            inside.append(ct.seconds)
        rest = [w - i for w, i in zip(whole, inside)]
        print(f"| {name} | {fmt((statistics.median(whole), min(whole), max(whole)))} | "
              f"{fmt((statistics.median(inside), min(inside), max(inside)))} | "
              f"{fmt((statistics.median(rest), min(rest), max(rest)))} |")
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(reps):
            fn()
            sync()
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(12)
        tops.append(f"### {name} ({reps} calls, cProfile by own time)\n\n```\n"
                    + out.getvalue().strip() + "\n```")
    print("\n" + "\n\n".join(tops))


def load_before(path):
    """The package at path, imported as canopy_before beside this canopy."""
    spec = importlib.util.spec_from_file_location(
        "canopy_before", os.path.join(path, "__init__.py"), submodule_search_locations=[path])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["canopy_before"] = mod
    spec.loader.exec_module(mod)
    return mod


def before_after(torch, path, sync):
    """The GPU cases, the older package against this one, alternating call by call."""
    old = load_before(path)
    g = torch.Generator(device="cuda").manual_seed(3)
    x = torch.rand((N_GPU, 3), device="cuda", generator=g)
    r = float((20 / (N_GPU * 4 / 3 * np.pi)) ** (1 / 3))
    b = torch.sort(torch.randint(0, 64, (N_GPU,), device="cuda", generator=g)).values
    x2 = torch.rand((200_000, 2), device="cuda", generator=g)
    q2 = torch.rand((200_000, 2), device="cuda", generator=g)
    cases = [(f"knn_graph k=16, {N_GPU} 3-D", lambda c: c.knn_graph(x, 16)),
             (f"radius_graph ~20 neighbours, max 32, {N_GPU} 3-D",
              lambda c: c.radius_graph(x, r)),
             (f"knn_graph k=16, {N_GPU} 3-D, 64 examples", lambda c: c.knn_graph(x, 16, b)),
             ("Index(x).query(q, k=8), 200k + 200k 2-D",
              lambda c: c.Index(x2).query(q2, k=8)[1])]
    print(f"\n## Before and after (before: {path})\n")
    print("| case | before | after | after / before | same result |")
    print("|---|---|---|---|---|")
    for name, fn in cases:
        same = bool(torch.equal(fn(old), fn(canopy)))
        ts = {old: [], canopy: []}
        for _ in range(REPS):
            for mod in (old, canopy):
                sync()
                t0 = time.perf_counter()
                fn(mod)
                sync()
                ts[mod].append(time.perf_counter() - t0)
        tb, ta = [(statistics.median(v), min(v), max(v)) for v in (ts[old], ts[canopy])]
        print(f"| {name} | {fmt(tb)} | {fmt(ta)} | {ta[0] / tb[0]:.2f} | {same} |")


def gpu_rows():
    try:
        import torch
    except ImportError:
        rows.append("| GPU rows | skipped: no torch | | | | | |")
        return None
    if "cuda" not in canopy.info()["backends"] or not torch.cuda.is_available():
        rows.append(f"| GPU rows | skipped: {canopy.info()['gpu_why_not'] or 'no GPU'} "
                    "| | | | | |")
        return None
    sync = torch.cuda.synchronize
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.rand((N_GPU, 3), device="cuda", generator=g)
    k = 16
    t = timed(lambda: canopy.knn_graph(x, k), sync)
    tc = timed(lambda: c_knn(torch, x, x, k + 1, leaf=0), sync)
    tb = brute_time(lambda: brute_knn(torch, x, x, k + 1), sync)
    row(f"knn_graph k={k}, {N_GPU} uniform 3-D, torch CUDA", t, tc, "torch cdist+topk", tb,
        "<= 1.2x C, >= 150x torch, <= 110 ms")
    r = float((20 / (N_GPU * 4 / 3 * np.pi)) ** (1 / 3))  # about 20 neighbours
    deg = canopy.radius_graph(x, r, max_num_neighbors=64).shape[1] / N_GPU
    t = timed(lambda: canopy.radius_graph(x, r, max_num_neighbors=32), sync)
    tc = timed(lambda: c_knn(torch, x, x, 33), sync)
    tb = brute_time(lambda: brute_knn(torch, x, x, 33, r), sync)
    row(f"radius_graph r={r:.4f} (mean degree {deg:.1f}), {N_GPU} 3-D, max 32", t, tc,
        "torch cdist+topk", tb, "<= 1.2x C, >= 100x torch")
    x2 = torch.rand((200_000, 2), device="cuda", generator=g)
    q2 = torch.rand((200_000, 2), device="cuda", generator=g)

    def both():
        return canopy.Index(x2).query(q2, k=8)
    t = timed(both, sync)
    tc = timed(lambda: c_knn(torch, x2, q2, 8), sync)
    tb = brute_time(lambda: brute_knn(torch, x2, q2, 8), sync)
    row("Index(x).query(q, k=8), 200k + 200k 2-D, torch CUDA (build + query)", t, tc,
        "torch cdist+topk", tb, "<= 1.2x C, no host copy")
    return sync, [("knn_graph 1M k=16", lambda: canopy.knn_graph(x, k)),
                  ("radius_graph 1M max 32", lambda: canopy.radius_graph(x, r)),
                  ("Index(x).query(q, k=8) 200k", both)]


def cpu_row():
    rng = np.random.default_rng(2)
    x = rng.random((N_CPU, 3)).astype(np.float32)
    canopy.set_threads(THREADS)
    case = f"CPU knn_graph k=16, {N_CPU} 3-D NumPy, {THREADS} threads"
    try:
        from sklearn.neighbors import kneighbors_graph
    except ImportError:
        t = timed(lambda: canopy.knn_graph(x, 16), lambda: None, reps=3)
        row(case, t, None, "scikit-learn (not installed)", None, ">= 2x scikit-learn")
        return
    # alternating call by call: a shared or throttling machine slows both alike
    fns = (lambda: canopy.knn_graph(x, 16), lambda: kneighbors_graph(x, 16, n_jobs=THREADS))
    ts = [[], []]
    for f in fns:
        f()
    for _ in range(3):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            f()
            ts[i].append(time.perf_counter() - t0)
    t, tp = [(statistics.median(v), min(v), max(v)) for v in ts]
    row(case, t, None, "sklearn kneighbors_graph", tp, ">= 2x scikit-learn")


def main():
    info = canopy.info()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"canopy {info['version']} ({info['library']}), backends {info['backends']}, "
          f"GPU {info['gpu']}, {os.cpu_count()} CPUs; {when}")
    print()
    print("| case | canopy (package, whole call) | C device entries (ctypes) | package / C | "
          "peer | canopy speed-up | goal |")
    print("|---|---|---|---|---|---|---|")
    prof = gpu_rows() if "--cpu-only" not in sys.argv else None
    if "--gpu-only" not in sys.argv:
        cpu_row()
    print("\n".join(rows))
    if prof and "--profile" in sys.argv:
        profile(prof[1], prof[0])
    if prof and "--before" in sys.argv:
        import torch
        before_after(torch, sys.argv[sys.argv.index("--before") + 1], prof[0])


if __name__ == "__main__":
    main()
