#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Models and rows for bench/run_forest_gpu.sh (Wu ch. 5 on the GPU).

Trains scikit-learn RandomForestClassifier models (100 trees, max depth given, n_jobs=-1)
on `synth` (1.5 M x 50, two classes, make_classification) and on the UCI shuttle and
satellite sets (gzip CSV, last column the label), converts them with
scripts/sklearn_to_canopy.py, and writes the rows to predict as float32 .npy.

    forest_gpu_models.py --data DIR_WITH_CSV_GZ --out DIR [--depths 8,10,12,15]
        [--sets synth,shuttle,satellite] [--synth-rows 1500000] [--rows 1000000]
        [--max-samples 0.25] [--trees 100]

Training uses a 70 % split (Wu's 7:3); `--max-samples` bounds each tree's bootstrap
sample to keep training inside the device time budget (the trees still reach the
requested depth). The rows predicted are the whole set, tiled to at least --rows rows
for the small UCI sets (a GPU batch of 6 k rows measures only launch overhead; --rows 0
predicts the set as it is). Depth `none` grows the trees to purity, and --max-samples 1
gives every tree a full bootstrap sample: with --trees 3584 that is Ren et al.'s forest.
Writes OUT/<set>.X.npy and OUT/<set>_d<depth>.json and prints one line per model.
"""
import argparse
import gzip
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import sklearn_to_canopy  # noqa: E402


def load_csv(path):
    with gzip.open(path, "rt") as fh:
        first = fh.readline()
        try:
            [float(v) for v in first.strip().split(",")]
            rows = [first]
        except ValueError:
            rows = []  # a header line
        rows.extend(fh.readlines())
    a = np.array([[float(v) for v in r.strip().split(",")] for r in rows if r.strip()])
    return a[:, :-1].astype(np.float32), a[:, -1].astype(np.int64)


def synth(n):
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=n, n_features=50, n_informative=20, n_redundant=10,
                               n_classes=2, random_state=7)
    return X.astype(np.float32), y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--depths", default="8,10,12,15")
    ap.add_argument("--sets", default="synth,shuttle,satellite")
    ap.add_argument("--synth-rows", type=int, default=1500000)
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--max-samples", type=float, default=0.25)
    ap.add_argument("--trees", type=int, default=100)
    a = ap.parse_args()
    from sklearn.ensemble import RandomForestClassifier
    os.makedirs(a.out, exist_ok=True)
    for name in a.sets.split(","):
        if name == "synth":
            X, y = synth(a.synth_rows)
        else:
            X, y = load_csv(os.path.join(a.data, name + ".csv.gz"))
        rng = np.random.default_rng(0)
        perm = rng.permutation(len(X))
        ntr = int(0.7 * len(X))
        Xtr, ytr = X[perm[:ntr]], y[perm[:ntr]]
        rows = X
        if len(rows) < a.rows:
            rows = np.tile(rows, (-(-a.rows // len(rows)), 1))[: a.rows]
        np.save(os.path.join(a.out, name + ".X.npy"), np.ascontiguousarray(rows, dtype=np.float32))
        for d in [None if v == "none" else int(v) for v in a.depths.split(",")]:
            t0 = time.time()
            ms = a.max_samples if a.max_samples < 1 else None
            m = RandomForestClassifier(n_estimators=a.trees, max_depth=d, n_jobs=-1,
                                       max_samples=ms, random_state=d or 0).fit(Xtr, ytr)
            doc = sklearn_to_canopy.convert(m)
            path = os.path.join(a.out, "%s_d%s.json" % (name, "none" if d is None else d))
            with open(path, "w") as fh:
                json.dump(doc, fh, separators=(",", ":"))
            nodes = sum(e.tree_.node_count for e in m.estimators_)
            print("%s depth %s, %d trees: %d nodes, trained in %.1f s, %d rows to predict, test "
                  "accuracy %.4f" % (name, d, a.trees, nodes, time.time() - t0, len(rows),
                            m.score(X[perm[ntr:]], y[perm[ntr:]])), flush=True)


if __name__ == "__main__":
    main()
