# SPDX-License-Identifier: MIT
"""Model loading: canopy_forest_load against XGBoost's Booster.load_model on the same
file (issue 19: "model loading >= 5x faster than XGBoost's own load_model").

Each round loads the file once with every loader, in turn (interleaved, so a busy
machine slows all of them alike); the table gives medians with min-max over the
rounds, after one warm-up load each (the file is then in the page cache for all),
of wall time and of the process's CPU time (which leaves out other processes' time
slices on a shared machine; both loaders read on one thread).
Several canopy libraries may be given (--lib label=path/libcanopy.so), e.g. the
current build beside a build of the commit before a change.

--make N writes a depth-8 binary:logistic XGBoost model of about N MB (a small
trained model whose trees are repeated: training the full size takes many minutes
on a shared 2-core machine, and the parser's work depends on the text, not on
whether trees repeat) to MODEL (JSON) and MODEL.ubj.

Usage: forest_load_bench.py --model PATH [--make MB] [--lib label=path ...]
       [--rounds R] [--out results.jsonl]
"""
import argparse
import copy
import ctypes
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time


def make_model(path, mb):
    import numpy as np
    import xgboost as xgb
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20000, 50)).astype(np.float32)
    y = ((X[:, :10] ** 2).sum(1) + rng.standard_normal(20000) > 10).astype(np.float32)
    base = xgb.train({"max_depth": 8, "eta": 0.1, "objective": "binary:logistic",
                      "tree_method": "hist", "nthread": 1}, xgb.DMatrix(X, label=y), 40)
    with tempfile.TemporaryDirectory() as tmp:
        small = os.path.join(tmp, "small.json")
        base.save_model(small)
        m = json.load(open(small))
        reps = max(1, round(mb * 1e6 / os.path.getsize(small)))
        model = m["learner"]["gradient_booster"]["model"]
        trees = []
        for _ in range(reps):
            for t in model["trees"]:
                t = copy.deepcopy(t)
                t["id"] = len(trees)
                trees.append(t)
        model["trees"] = trees
        model["tree_info"] = [0] * len(trees)
        model["iteration_indptr"] = list(range(len(trees) + 1))
        model["gbtree_model_param"]["num_trees"] = str(len(trees))
        big = os.path.join(tmp, "big.json")
        json.dump(m, open(big, "w"), separators=(",", ":"))
        b = xgb.Booster()
        b.load_model(big)  # XGBoost itself writes the files the benchmark reads
    b.save_model(path)
    b.save_model(path + ".ubj")
    print(f"# wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB, {len(trees)} trees) and .ubj")


def canopy_loader(lib_path, path):
    lib = ctypes.CDLL(lib_path)
    lib.canopy_last_error.restype = ctypes.c_char_p
    lib.canopy_forest_free.argtypes = [ctypes.c_void_p]

    def load():
        f = ctypes.c_void_p()
        if lib.canopy_forest_load(path.encode(), 0, ctypes.byref(f)):
            raise RuntimeError(lib.canopy_last_error().decode())
        lib.canopy_forest_free(f)
    return load


def xgboost_loader(path):
    import xgboost as xgb

    def load():
        xgb.Booster().load_model(path)
    return load


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--make", type=float, help="write a model of about this many MB first")
    ap.add_argument("--lib", action="append", default=[], help="label=path/libcanopy.so")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--out", help="append JSON lines here")
    a = ap.parse_args()
    if a.make:
        make_model(a.model, a.make)
    import xgboost as xgb
    loaders = []
    for spec in a.lib:
        label, lib = spec.split("=", 1)
        loaders.append((f"canopy {label}", "json", canopy_loader(os.path.abspath(lib), a.model)))
        if os.path.exists(a.model + ".ubj"):
            loaders.append((f"canopy {label}", "ubj",
                            canopy_loader(os.path.abspath(lib), a.model + ".ubj")))
    loaders.append((f"xgboost {xgb.__version__}", "json", xgboost_loader(a.model)))
    if os.path.exists(a.model + ".ubj"):
        loaders.append((f"xgboost {xgb.__version__}", "ubj", xgboost_loader(a.model + ".ubj")))
    usable = []
    for who, fmt, fn in loaders:
        try:
            fn()  # warm-up; a loader that refuses the file is reported, not timed
            usable.append((who, fmt, fn))
        except RuntimeError as e:
            print(f"# {who} {fmt}: {e}")
    times = {(w, f): [] for w, f, _ in usable}
    cpu = {(w, f): [] for w, f, _ in usable}
    for _ in range(a.rounds):
        for who, fmt, fn in usable:
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            times[(who, fmt)].append(time.perf_counter() - t0)
            cpu[(who, fmt)].append(time.process_time() - c0)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    size = os.path.getsize(a.model)
    xgb_med = statistics.median(times[(f"xgboost {xgb.__version__}", "json")])
    xgb_cpu = statistics.median(cpu[(f"xgboost {xgb.__version__}", "json")])
    print(f"# {a.model}: {size / 1e6:.1f} MB; {a.rounds} rounds; {platform.node()}; "
          f"commit {commit}; {stamp}")
    print("| loader | file | wall median s | min-max s | xgboost JSON / this | CPU median s | "
          "min-max s | xgboost JSON / this |")
    print("|---|---|---|---|---|---|---|---|")
    for (who, fmt), ts in times.items():
        med, cs = statistics.median(ts), cpu[(who, fmt)]
        cmed = statistics.median(cs)
        print(f"| {who} | {fmt} | {med:.4f} | {min(ts):.4f}-{max(ts):.4f} | {xgb_med / med:.2f}x | "
              f"{cmed:.4f} | {min(cs):.4f}-{max(cs):.4f} | {xgb_cpu / cmed:.2f}x |")
        if a.out:
            with open(a.out, "a") as fh:
                fh.write(json.dumps({"bench": "forest-load", "who": who, "file": fmt,
                                     "bytes": size, "med": med, "min": min(ts), "max": max(ts),
                                     "cpu_med": cmed, "cpu_min": min(cs), "cpu_max": max(cs),
                                     "rounds": a.rounds, "commit": commit,
                                     "machine": platform.node(), "date": stamp}) + "\n")


if __name__ == "__main__":
    sys.exit(main())
