#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Train small forests with the real frameworks and save, per fixture, under OUT
(default tests/data/forest): NAME.<json|txt> (the model), NAME.X.npy (float32 input
rows, some with NaNs), NAME.raw.npy (the framework's margin / raw score) and
NAME.prob.npy (its probabilities or predictions), both float64.

Usage: make_fixtures.py [OUT] [--only xgboost,lightgbm,sklearn]
Data: ../shared/data (CANOPY_SHARED_DATA overrides). Deterministic (fixed seeds)."""
import gzip
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
DATA = os.environ.get("CANOPY_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data"))


def load(name, rows=None):
    with gzip.open(os.path.join(DATA, name + ".csv.gz"), "rt") as fh:
        a = np.loadtxt(fh, delimiter=",", skiprows=1, max_rows=rows)
    X = a[:, :-1].astype(np.float32)  # canopy predicts float32 rows, so train on them too
    y = a[:, -1].astype(int)
    return X, y


def with_nans(X, rng, frac):
    X = X.copy()
    m = rng.random(X.shape) < frac
    X[m] = np.nan
    return X


def test_rows(X, rng, n=120):
    idx = rng.choice(len(X), size=min(n, len(X)), replace=False)
    T = X[idx].copy()
    # a third of the rows get missing values, a few whole rows are all-NaN
    T[: n // 3] = with_nans(T[: n // 3], rng, 0.3)
    T[:2] = np.nan
    return T


def save(out, name, ext, model_text, X, raw, prob):
    with open(os.path.join(out, name + ext), "w") as fh:
        fh.write(model_text)
    np.save(os.path.join(out, name + ".X.npy"), X.astype(np.float32))
    np.save(os.path.join(out, name + ".raw.npy"), np.asarray(raw, dtype=np.float64))
    np.save(os.path.join(out, name + ".prob.npy"), np.asarray(prob, dtype=np.float64))


def xgboost_fixtures(out, rng):
    import xgboost as xgb
    Xb, yb = load("breast_cancer")
    Xs, ys = load("satellite", 1500)
    _, ys = np.unique(ys, return_inverse=True)
    cases = [
        ("xgb_binary", xgb.XGBClassifier(n_estimators=8, max_depth=4, random_state=1),
         with_nans(Xb, rng, 0.05), yb, Xb),
        ("xgb_multi", xgb.XGBClassifier(n_estimators=3, max_depth=4, random_state=2),
         Xs, ys, Xs),
        ("xgb_reg", xgb.XGBRegressor(n_estimators=10, max_depth=5, random_state=3),
         with_nans(np.delete(Xb, 3, axis=1), rng, 0.05), Xb[:, 3], np.delete(Xb, 3, axis=1)),
        ("xgb_poisson", xgb.XGBRegressor(n_estimators=6, max_depth=3, objective="count:poisson",
                                         random_state=4),
         np.delete(Xs, 0, axis=1), ys.astype(float), np.delete(Xs, 0, axis=1)),
    ]
    for name, m, X, y, pool in cases:
        m.fit(X, y)
        T = test_rows(pool, rng)
        b = m.get_booster()
        raw = b.predict(xgb.DMatrix(T, missing=np.nan), output_margin=True)
        prob = b.predict(xgb.DMatrix(T, missing=np.nan))
        path = os.path.join(out, name + ".json")
        b.save_model(path)
        with open(path) as fh:
            text = fh.read()
        save(out, name, ".json", text, T, raw, prob)


def lightgbm_fixtures(out, rng):
    import lightgbm as lgb
    Xb, yb = load("breast_cancer")
    Xs, ys = load("satellite", 1500)
    _, ys = np.unique(ys, return_inverse=True)
    Xsh, ysh = load("shuttle", 3000)
    common = dict(verbose=-1, min_child_samples=5)
    Xz = np.delete(Xsh, 0, axis=1)
    Xz[rng.random(Xz.shape) < 0.2] = 0.0  # zeros for zero_as_missing
    cases = [
        ("lgb_binary", lgb.LGBMClassifier(n_estimators=8, num_leaves=12, max_depth=5, **common),
         with_nans(Xb, rng, 0.05), yb, Xb),
        ("lgb_multi", lgb.LGBMClassifier(n_estimators=3, num_leaves=8, **common), Xs, ys, Xs),
        ("lgb_reg", lgb.LGBMRegressor(n_estimators=10, num_leaves=16, max_depth=6, **common),
         with_nans(np.delete(Xb, 3, axis=1), rng, 0.05), Xb[:, 3], np.delete(Xb, 3, axis=1)),
        ("lgb_zero", lgb.LGBMRegressor(n_estimators=6, num_leaves=8, zero_as_missing=True,
                                       **common), Xz, Xsh[:, 0], Xz),
        ("lgb_rf", lgb.LGBMRegressor(boosting_type="rf", n_estimators=5, num_leaves=8,
                                     bagging_freq=1, bagging_fraction=0.7, **common),
         np.delete(Xb, 3, axis=1), Xb[:, 3], np.delete(Xb, 3, axis=1)),
    ]
    for name, m, X, y, pool in cases:
        m.fit(X, y)
        T = test_rows(pool, rng)
        if name == "lgb_zero":
            T[5:15, :] = 0.0
        b = m.booster_
        raw = b.predict(T, raw_score=True)
        prob = b.predict(T)
        save(out, name, ".txt", b.model_to_string(), T, raw, prob)


def sklearn_fixtures(out, rng):
    from sklearn.ensemble import (ExtraTreesRegressor, GradientBoostingClassifier,
                                  GradientBoostingRegressor, RandomForestClassifier)
    from sklearn_to_canopy import convert
    Xb, yb = load("breast_cancer")
    Xs, ys = load("satellite", 1500)
    Xsh, ysh = load("shuttle", 3000)
    cases = [
        ("sk_rf_clf", RandomForestClassifier(n_estimators=6, max_depth=6, random_state=1),
         with_nans(Xsh, rng, 0.05), ysh, Xsh),
        ("sk_et_reg", ExtraTreesRegressor(n_estimators=5, max_depth=6, random_state=2),
         np.delete(Xb, 3, axis=1), Xb[:, 3], np.delete(Xb, 3, axis=1)),
        ("sk_gb_bin", GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=3),
         Xb, yb, Xb),
        ("sk_gb_multi", GradientBoostingClassifier(n_estimators=3, max_depth=3, random_state=4),
         Xs, ys, Xs),
        ("sk_gb_reg", GradientBoostingRegressor(n_estimators=8, max_depth=4, random_state=5),
         np.delete(Xb, 3, axis=1), Xb[:, 3], np.delete(Xb, 3, axis=1)),
    ]
    for name, m, X, y, pool in cases:
        m.fit(X, y)
        T = test_rows(pool, rng)
        try:
            m.predict(T)
        except ValueError:  # this estimator refuses NaN: test finite rows only
            T = pool[rng.choice(len(pool), size=120, replace=False)]
        if hasattr(m, "predict_proba"):
            prob = m.predict_proba(T)
            raw = m.decision_function(T) if hasattr(m, "decision_function") else prob
        else:
            prob = raw = m.predict(T)
        save(out, name, ".json", json.dumps(convert(m), separators=(",", ":")), T, raw, prob)


def main(argv):
    out = os.path.join(ROOT, "tests", "data", "forest")
    only = {"xgboost", "lightgbm", "sklearn"}
    args = list(argv[1:])
    if "--only" in args:
        i = args.index("--only")
        only = set(args[i + 1].split(","))
        del args[i:i + 2]
    if args:
        out = args[0]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20240607)
    for fam, fn in (("xgboost", xgboost_fixtures), ("lightgbm", lightgbm_fixtures),
                    ("sklearn", sklearn_fixtures)):
        if fam in only:
            fn(out, rng)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
