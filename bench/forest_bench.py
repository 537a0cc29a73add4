#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU forest-inference benchmark: canopy against its peers in one run, on the same
data, the same cores and the same thread count.

Workloads
  ren    Ren et al. Figs. 6-10: scikit-learn random forests on shuttle and satellite
         (../shared/data), every linked layout x engine, compaction on/off, the cache
         model's predicted cost beside the measured time; peer: scikit-learn.
         --mode full: 3,584 trees, unlimited depth (the paper's size);
         --mode quick: 512 trees, max depth 12 (minutes, not hours, on 2 cores).
  batch  make_classification rows x 50: XGBoost, LightGBM and scikit-learn models; each
         framework predicts its own model (XGBoost predict / inplace_predict,
         LightGBM predict, scikit-learn predict_proba, Treelite -> TL2cgen compiled
         shared object), canopy predicts the same model imported.
         full: 1,000,000 rows, 500-tree XGBoost/LightGBM of depth 8, 200-tree RF depth 10;
         quick: 200,000 rows, 200 trees.

Treelite/TL2cgen compiles C for each model (minutes for big models on few cores), so
--tl2cgen names the model kinds to compile; the full Ren forests are never compiled.

canopy is timed two ways: in-process (the library through ctypes: predict only, the
model loaded once, what the peers' predict calls are compared with) and end to end
(the `canopy predict` CLI: model parse, .npy read, layout build, predict, write).
Every time is a median with min-max over --repeat runs after one warm-up (for canopy
the warm-up is the run whose predictions are checked against the framework's).

Usage: forest_bench.py --build BUILD --out OUT [--mode quick|full] [--threads N]
       [--repeat R] [--workloads ren,batch] [--ren-sets shuttle,satellite]
       (writes OUT/forest-*.jsonl)
"""
import argparse
import ctypes
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import bench_meta

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

LAYOUTS = ["auto", "csr", "hier", "df", "bf", "ll", "sll", "cc", "hybrid"]
ENGINES = ["auto", "scalar", "vm", "vm_simd", "simd"]
LINKED = ["df", "bf", "ll", "sll", "cc", "hybrid"]


class Points(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("n", ctypes.c_int64), ("d", ctypes.c_int32),
                ("stride", ctypes.c_int64)]


# Mirrors of canopy_predict_options / canopy_predict_stats (include/canopy.h): keep
# every field, in order; a short mirror lets the library write past Python's buffer.
class Options(ctypes.Structure):
    _fields_ = [("layout", ctypes.c_int), ("engine", ctypes.c_int), ("backend", ctypes.c_int),
                ("output", ctypes.c_int), ("hier_depth", ctypes.c_int32),
                ("switch_level", ctypes.c_int32), ("compaction", ctypes.c_int32),
                ("mapping", ctypes.c_int)]


class Stats(ctypes.Structure):
    _fields_ = [("layout", ctypes.c_int), ("engine", ctypes.c_int), ("isa", ctypes.c_int),
                ("switch_level", ctypes.c_int32), ("beta", ctypes.c_double),
                ("build_seconds", ctypes.c_double), ("predict_seconds", ctypes.c_double),
                ("layout_bytes", ctypes.c_size_t), ("model_cost", ctypes.c_double * len(LAYOUTS)),
                ("note", ctypes.c_char * 256), ("backend", ctypes.c_int), ("mapping", ctypes.c_int),
                ("upload_seconds", ctypes.c_double), ("compile_seconds", ctypes.c_double),
                ("kernel_seconds", ctypes.c_double), ("download_seconds", ctypes.c_double),
                ("kernel_cache", ctypes.c_int32), ("device_bytes", ctypes.c_size_t),
                ("model_layout", ctypes.c_int), ("model_switch_level", ctypes.c_int32)]


class Canopy:
    """The library through ctypes (only what the benchmark needs)."""

    def __init__(self, build):
        self.lib = ctypes.CDLL(os.path.join(build, "libcanopy.so"))
        self.lib.canopy_last_error.restype = ctypes.c_char_p
        self.lib.canopy_predict_options_default.restype = Options
        self.lib.canopy_forest_predict.argtypes = [ctypes.c_void_p, Points, ctypes.POINTER(Options),
                                                   ctypes.c_void_p, ctypes.POINTER(Stats)]

    def load(self, path):
        f = ctypes.c_void_p()
        if self.lib.canopy_forest_load(path.encode(), 0, ctypes.byref(f)):
            raise RuntimeError(self.lib.canopy_last_error().decode())
        return f

    def predict(self, f, X, K, layout="auto", engine="auto", compaction=1, output=0):
        o = self.lib.canopy_predict_options_default()
        o.layout, o.engine, o.output, o.compaction = (LAYOUTS.index(layout), ENGINES.index(engine),
                                                      output, compaction)
        o.backend = 1  # cpu: on a machine with a GPU, auto would move big batches there
        out = np.empty((X.shape[0], K), dtype=np.float64)
        st = Stats()
        p = Points(X.ctypes.data, X.shape[0], X.shape[1], X.shape[1])
        if self.lib.canopy_forest_predict(f, p, ctypes.byref(o), out.ctypes.data, ctypes.byref(st)):
            raise RuntimeError(self.lib.canopy_last_error().decode())
        return out, st


def timed(fn, repeat, warm=True):
    if warm:
        fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return ts


def emit(fp, **kw):
    ts = kw.pop("times")
    kw.update(med=statistics.median(ts), min=min(ts), max=max(ts), repeat=len(ts))
    line = bench_meta.json_line(kw)
    fp.write(line + "\n")
    fp.flush()
    print(line, flush=True)


def check(name, got, want):
    got = np.asarray(got, dtype=np.float64).reshape(len(got), -1)
    want = np.asarray(want, dtype=np.float64).reshape(len(want), -1)
    if want.shape[1] == 2 and got.shape[1] == 1:
        want = want[:, 1:]
    err = np.max(np.abs(got - want) / np.maximum(1, np.abs(want)))
    if not err <= 1e-5:
        raise SystemExit(f"{name}: canopy differs from the framework by {err:.3g}")


def run_canopy(cp, fp, label, model, X, want, configs, repeat, threads):
    f = cp.load(model)
    cp.lib.canopy_forest_output_width.restype = ctypes.c_int32
    K = cp.lib.canopy_forest_output_width(f, 1)
    try:
        for layout, engine, comp in configs:
            out, st = cp.predict(f, X, K, layout, engine, comp, output=1)  # also the warm-up
            check(f"{label} {layout}/{engine}", out, want)
            ts = timed(lambda: cp.predict(f, X, K, layout, engine, comp, output=1), repeat, False)
            rec = dict(label=label, who="canopy", how="in-process", layout=layout, engine=engine,
                       compaction=comp, ran=st.note.decode(), threads=threads, rows=len(X),
                       times=ts, model_cost=list(st.model_cost), beta=st.beta,
                       switch_level=st.switch_level, layout_bytes=st.layout_bytes)
            emit(fp, **rec)
    finally:
        cp.lib.canopy_forest_free(f)


def run_cli(build, fp, label, model, xpath, n, repeat, threads):
    with tempfile.TemporaryDirectory() as d:
        cmd = [os.path.join(build, "canopy"), "predict", "--model", model, "--data", xpath,
               "-o", os.path.join(d, "y.npy"), "--threads", str(threads), "--backend", "cpu"]
        ts = timed(lambda: subprocess.run(cmd, check=True), repeat)
    emit(fp, label=label, who="canopy", how="cli end to end", layout="auto", engine="auto",
         threads=threads, rows=n, times=ts)


def treelite_peer(a, fp, label, model_obj, kind, X, want, workdir):
    repeat, threads = a.repeat, a.threads
    if kind not in a.tl2cgen.split(","):
        print(f"# {label}: tl2cgen not run for {kind} models (--tl2cgen)", flush=True)
        return
    try:
        import tl2cgen
        import treelite
    except ImportError as e:
        print(f"# {label}: treelite/tl2cgen not installed ({e})", flush=True)
        return
    if kind == "xgboost":
        tm = treelite.frontend.from_xgboost(model_obj)
    elif kind == "lightgbm":
        tm = treelite.frontend.from_lightgbm(model_obj)
    else:
        tm = treelite.sklearn.import_model(model_obj)
    lib = os.path.join(workdir, f"{label}.so")
    t0 = time.perf_counter()
    tl2cgen.export_lib(tm, toolchain="gcc", libpath=lib, params={"parallel_comp": threads})
    compile_s = time.perf_counter() - t0
    pred = tl2cgen.Predictor(lib, nthread=threads)
    dm = tl2cgen.DMatrix(X)
    got = np.asarray(pred.predict(dm)).reshape(len(X), -1)
    check(f"{label} tl2cgen", got, want)
    ts = timed(lambda: pred.predict(dm), repeat)
    emit(fp, label=label, who="tl2cgen", how="compiled .so (DMatrix built once)", threads=threads,
         rows=len(X), times=ts, compile_seconds=compile_s)


def batch(a, cp, fp, workdir):
    import lightgbm as lgb
    import xgboost as xgb
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier
    from sklearn_to_canopy import convert

    full = a.mode == "full"
    n, trees = (1_000_000, 500) if full else (a.rows or 200_000, 200)
    X, y = make_classification(n_samples=n, n_features=50, n_informative=20, random_state=0)
    X = X.astype(np.float32)
    xpath = os.path.join(workdir, "batch.npy")
    np.save(xpath, X)
    ntrain = 100_000
    models = []
    b = xgb.train({"max_depth": 8, "eta": 0.1, "objective": "binary:logistic",
                   "tree_method": "hist", "nthread": a.threads},
                  xgb.DMatrix(X[:ntrain], label=y[:ntrain]), trees)
    b.save_model(os.path.join(workdir, "xgb.json"))
    models.append(("xgboost", b, os.path.join(workdir, "xgb.json")))
    m = lgb.train({"num_leaves": 255, "max_depth": 8, "objective": "binary",
                   "num_threads": a.threads, "verbose": -1},
                  lgb.Dataset(X[:ntrain], label=y[:ntrain]), trees)
    m.save_model(os.path.join(workdir, "lgb.txt"))
    models.append(("lightgbm", m, os.path.join(workdir, "lgb.txt")))
    rf = RandomForestClassifier(n_estimators=200 if full else 100, max_depth=10, n_jobs=a.threads,
                                random_state=0).fit(X[:ntrain], y[:ntrain])
    with open(os.path.join(workdir, "rf.json"), "w") as fh:
        json.dump(convert(rf), fh)
    models.append(("sklearn", rf, os.path.join(workdir, "rf.json")))
    for kind, obj, path in models:
        label = f"batch-{kind}-{n // 1000}k"
        try:
            batch_one(a, cp, fp, workdir, kind, obj, path, label, X, xpath)
        except (Exception, SystemExit) as e:
            # one model's failure (an importer refusing a newer framework's file, say)
            # must not lose the other models' rows of a long device run
            print(f"# {label}: FAILED: {e}", flush=True)


def batch_one(a, cp, fp, workdir, kind, obj, path, label, X, xpath):
    import xgboost as xgb

    n = len(X)
    if kind == "xgboost":
        want = obj.inplace_predict(X)
        ts = timed(lambda: obj.predict(xgb.DMatrix(X, nthread=a.threads)), a.repeat)
        emit(fp, label=label, who="xgboost", how="predict(DMatrix(X)) incl. DMatrix",
             threads=a.threads, rows=n, times=ts)
        ts = timed(lambda: obj.inplace_predict(X), a.repeat)
        emit(fp, label=label, who="xgboost", how="inplace_predict", threads=a.threads, rows=n,
             times=ts)
    elif kind == "lightgbm":
        want = obj.predict(X, num_threads=a.threads)
        ts = timed(lambda: obj.predict(X, num_threads=a.threads), a.repeat)
        emit(fp, label=label, who="lightgbm", how="predict", threads=a.threads, rows=n,
             times=ts)
    else:
        want = obj.predict_proba(X)
        ts = timed(lambda: obj.predict_proba(X), a.repeat)
        emit(fp, label=label, who="sklearn", how="predict_proba", threads=a.threads, rows=n,
             times=ts)
    treelite_peer(a, fp, label, obj, kind, X, want, workdir)
    configs = [("auto", "auto", 1)] + [(l, e, 1) for l in ["ll", "cc", "hybrid"]
                                         for e in ["scalar", "simd", "vm_simd"]]
    configs += [("bf", "scalar", 1), ("bf", "simd", 1), ("csr", "scalar", 1),
                ("hier", "scalar", 1)]
    run_canopy(cp, fp, label, path, X, want, configs, a.repeat, a.threads)
    run_cli(a.build, fp, label, path, xpath, n, a.repeat, a.threads)


def ren(a, cp, fp, workdir):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn_to_canopy import convert

    full = a.mode == "full"
    trees, depth = (3584, None) if full else (512, 12)
    for name in a.ren_sets.split(","):
        path = os.path.join(a.data, f"{name}.csv.gz")
        d = np.loadtxt(gzip.open(path), delimiter=",", skiprows=1)
        X = np.ascontiguousarray(d[:, :-1], dtype=np.float32)
        y = d[:, -1].astype(int)
        t0 = time.perf_counter()
        rf = RandomForestClassifier(n_estimators=trees, max_depth=depth, n_jobs=a.threads,
                                    random_state=0).fit(X, y)
        train_s = time.perf_counter() - t0
        mpath = os.path.join(workdir, f"rf_{name}.json")
        with open(mpath, "w") as fh:
            json.dump(convert(rf), fh)
        label = f"ren-{name}-{trees}t"
        want = rf.predict_proba(X)
        ts = timed(lambda: rf.predict_proba(X), a.repeat)
        emit(fp, label=label, who="sklearn", how="predict_proba", threads=a.threads, rows=len(X),
             times=ts, train_seconds=train_s)
        if a.mode != "full":  # 3,584 deep trees: gcc needs many minutes for the C code
            treelite_peer(a, fp, label, rf, "sklearn", X, want, workdir)
        configs = [("auto", "auto", 1)]
        for l in LINKED:
            configs += [(l, "scalar", 1), (l, "simd", 1), (l, "vm_simd", 1), (l, "vm_simd", 0)]
        configs += [("csr", "scalar", 1), ("hier", "scalar", 1)]
        run_canopy(cp, fp, label, mpath, X, want, configs, a.repeat, a.threads)
        xpath = os.path.join(workdir, f"{name}.npy")
        np.save(xpath, X)
        run_cli(a.build, fp, label, mpath, xpath, len(X), a.repeat, a.threads)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=["quick", "full"], default="quick")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workloads", default="ren,batch")
    ap.add_argument("--ren-sets", default="shuttle,satellite", help="data sets of the ren workload")
    ap.add_argument("--rows", type=int, help="quick batch rows (default 200,000)")
    ap.add_argument("--tl2cgen", default="xgboost,lightgbm,sklearn",
                    help="models to compile with Treelite/TL2cgen (compiling is slow)")
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "shared", "data"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    os.environ["CANOPY_THREADS"] = str(a.threads)
    cp = Canopy(a.build)
    cp.lib.canopy_set_threads(a.threads)
    with tempfile.TemporaryDirectory() as workdir:
        for w in a.workloads.split(","):
            with open(os.path.join(a.out, f"forest-{w}.jsonl"), "a") as fp:
                {"ren": ren, "batch": batch}[w](a, cp, fp, workdir)


if __name__ == "__main__":
    main()
