#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Convert a scikit-learn forest to canopy JSON (schema: docs/forests.md).

Supported: RandomForestClassifier/Regressor, ExtraTreesClassifier/Regressor,
GradientBoostingClassifier/Regressor (single-output). Usage:

    python3 scripts/sklearn_to_canopy.py model.joblib model.json   # joblib or pickle file

or, from Python, ``convert(model)`` returns the JSON-ready dict.
"""
import json
import sys


def _tree(est, output, scale, proba):
    t = est.tree_
    left = t.children_left.tolist()
    right = t.children_right.tolist()
    feature = t.feature.tolist()
    thr = t.threshold.tolist()
    mgl = getattr(t, "missing_go_to_left", None)
    value = t.value
    n = t.node_count
    vals = []
    for i in range(n):
        if left[i] != -1:
            vals.append(0)
            continue
        if proba:
            v = value[i, 0, :]
            s = float(v.sum())
            vals.append([float(x) / s for x in v])
        else:
            vals.append(float(value[i, 0, 0]) * scale)
    out = {
        "comparison": "<=",
        "feature": [f if left[i] != -1 else -1 for i, f in enumerate(feature)],
        "threshold": [x if left[i] != -1 else 0 for i, x in enumerate(thr)],
        "left": [x if x != -1 else -1 for x in left],
        "right": [x if x != -1 else -1 for x in right],
        "value": vals,
    }
    if mgl is not None:
        out["default_left"] = [int(x) for x in mgl.tolist()]
    if output is not None:
        out["output"] = output
    return out


def convert(model):
    from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor,
                                  GradientBoostingClassifier, GradientBoostingRegressor,
                                  RandomForestClassifier, RandomForestRegressor)
    import numpy as np

    nf = int(model.n_features_in_)
    doc = {"format": "canopy-forest", "version": 1, "n_features": nf,
           "objective": type(model).__name__}
    if isinstance(model, (RandomForestClassifier, ExtraTreesClassifier)):
        if getattr(model, "n_outputs_", 1) != 1:
            raise ValueError("multi-output forests are not supported")
        k = int(model.n_classes_)
        doc.update(n_outputs=k, n_classes=k, link="identity", aggregation="mean",
                   base_score=[0.0] * k)
        doc["trees"] = [_tree(e, None, 1.0, True) for e in model.estimators_]
    elif isinstance(model, (RandomForestRegressor, ExtraTreesRegressor)):
        if getattr(model, "n_outputs_", 1) != 1:
            raise ValueError("multi-output forests are not supported")
        doc.update(n_outputs=1, n_classes=0, link="identity", aggregation="mean",
                   base_score=[0.0])
        doc["trees"] = [_tree(e, 0, 1.0, False) for e in model.estimators_]
    elif isinstance(model, (GradientBoostingClassifier, GradientBoostingRegressor)):
        lr = float(model.learning_rate)
        # The initial raw prediction (prior log-odds, class log-priors or the mean).
        base = model._raw_predict_init(np.zeros((1, nf), dtype=np.float32))[0]
        k = model.estimators_.shape[1]
        if isinstance(model, GradientBoostingClassifier):
            loss = getattr(model, "loss", "log_loss")
            if k == 1:
                doc.update(n_outputs=1, n_classes=2, link="sigmoid")
                if loss == "exponential":
                    doc["sigmoid_scale"] = 2.0
            else:
                doc.update(n_outputs=k, n_classes=k, link="softmax")
        else:
            doc.update(n_outputs=1, n_classes=0, link="identity")
        doc.update(aggregation="sum", base_score=[float(b) for b in base])
        trees = []
        for stage in model.estimators_:
            for j, e in enumerate(stage):
                trees.append(_tree(e, j, lr, False))
        doc["trees"] = trees
    else:
        raise ValueError("unsupported model type %s" % type(model).__name__)
    return doc


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    try:
        import joblib
        model = joblib.load(argv[1])
    except ImportError:
        import pickle
        with open(argv[1], "rb") as fh:
            model = pickle.load(fh)
    doc = convert(model)
    with open(argv[2], "w") as fh:
        json.dump(doc, fh, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
