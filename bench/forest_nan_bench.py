# SPDX-License-Identifier: MIT
"""One core, rows with missing values: canopy_forest_predict (default options) against
XGBoost's inplace_predict on the same XGBoost model (issue 20's goal: >= 3x on
depth-8 boosted models with 5 % NaN).

Each round runs every predictor once, in turn; medians with min-max over the rounds
after a warm-up whose predictions are checked against XGBoost's. Times are wall and
process CPU seconds (both predictors on one thread, or --threads N each; CPU time
leaves out other processes' time slices on a shared machine, and with N threads sums
them). Several canopy libraries may be given
(--lib label=path/libcanopy.so), e.g. a build of the commit before a change.

--predictor adds, per library, canopy_predictor_predict on a predictor compiled once
(the layout built outside the timing, as XGBoost's Booster holds its model ready);
canopy_forest_predict builds the layout in every call.

Usage: forest_nan_bench.py --model M.json --lib label=path [...] [--rows N]
       [--nan 0.05] [--rounds R] [--threads N] [--predictor] [--out results.jsonl]
"""
import argparse
import ctypes
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from forest_bench import Canopy, Points  # noqa: E402


def compiled(cp, f, X, want):
    """canopy_predictor_predict on a predictor compiled once with the default options
    (the layout built before the timing, as XGBoost's Booster holds its model ready)."""
    lib = cp.lib
    lib.canopy_predictor_compile.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.canopy_predictor_predict.argtypes = [ctypes.c_void_p, Points, ctypes.c_int,
                                             ctypes.c_void_p, ctypes.c_void_p]
    o = lib.canopy_predict_options_default()
    o.backend = 1  # cpu
    pred = ctypes.c_void_p()
    if lib.canopy_predictor_compile(f, ctypes.byref(o), ctypes.byref(pred)):
        raise RuntimeError(lib.canopy_last_error().decode())
    out = np.empty((X.shape[0], 1), dtype=np.float64)
    pts = Points(X.ctypes.data, X.shape[0], X.shape[1], X.shape[1])

    def run():
        if lib.canopy_predictor_predict(pred, pts, 1, out.ctypes.data, None):
            raise RuntimeError(lib.canopy_last_error().decode())
        return out
    if not np.allclose(run()[:, 0], want, rtol=1e-5, atol=1e-6):
        raise SystemExit("canopy predictor: predictions differ from XGBoost")
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--lib", action="append", default=[], help="label=path/libcanopy.so")
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--nan", type=float, default=0.05)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="for canopy and XGBoost alike")
    ap.add_argument("--predictor", action="store_true",
                    help="also time each library's compiled predictor (canopy_predictor_*)")
    ap.add_argument("--out")
    a = ap.parse_args()
    os.environ["CANOPY_THREADS"] = str(a.threads)
    import xgboost as xgb
    b = xgb.Booster()
    b.load_model(a.model)
    b.set_param({"nthread": a.threads})
    rng = np.random.default_rng(0)
    X = rng.standard_normal((a.rows, b.num_features()), dtype=np.float32)
    X[rng.random(X.shape) < a.nan] = np.nan
    want = b.inplace_predict(X)
    runs = [(f"xgboost {xgb.__version__} inplace_predict", lambda: b.inplace_predict(X))]
    for spec in a.lib:
        label, path = spec.split("=", 1)
        cp = Canopy(os.path.dirname(os.path.abspath(path)))
        cp.lib.canopy_set_threads(a.threads)
        f = cp.load(a.model)
        out, st = cp.predict(f, X, 1, output=1)
        if not np.allclose(out[:, 0], want, rtol=1e-5, atol=1e-6):
            raise SystemExit(f"canopy {label}: predictions differ from XGBoost")
        runs.append((f"canopy {label} ({st.note.decode()})",
                     lambda cp=cp, f=f: cp.predict(f, X, 1, output=1)))
        if a.predictor:
            runs.append((f"canopy {label} predictor", compiled(cp, f, X, want)))
    wall = {w: [] for w, _ in runs}
    cpu = {w: [] for w, _ in runs}
    for w, fn in runs:
        fn()  # warm-up
    for _ in range(a.rounds):
        for w, fn in runs:
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall[w].append(time.perf_counter() - t0)
            cpu[w].append(time.process_time() - c0)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=HERE).stdout.strip()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    ref = runs[0][0]
    print(f"# {a.model}: {b.num_boosted_rounds()} rounds, {a.rows} rows, {a.nan:.0%} NaN, "
          f"{a.threads} thread(s); {platform.node()}; commit {commit}; {stamp}")
    print("| predictor | wall median s | min-max | CPU median s | min-max | XGBoost / this (CPU) |")
    print("|---|---|---|---|---|---|")
    for w, _ in runs:
        cm = statistics.median(cpu[w])
        print(f"| {w} | {statistics.median(wall[w]):.4f} | {min(wall[w]):.4f}-{max(wall[w]):.4f} "
              f"| {cm:.4f} | {min(cpu[w]):.4f}-{max(cpu[w]):.4f} | "
              f"{statistics.median(cpu[ref]) / cm:.2f}x |")
        if a.out:
            with open(a.out, "a") as fh:
                fh.write(json.dumps({"bench": "forest-nan-1core" if a.threads == 1 else
                                     f"forest-nan-{a.threads}threads", "who": w, "rows": a.rows,
                                     "nan": a.nan, "med": statistics.median(wall[w]),
                                     "min": min(wall[w]), "max": max(wall[w]),
                                     "cpu_med": cm, "cpu_min": min(cpu[w]),
                                     "cpu_max": max(cpu[w]), "rounds": a.rounds,
                                     "commit": commit, "machine": platform.node(),
                                     "date": stamp}) + "\n")


if __name__ == "__main__":
    sys.exit(main())
