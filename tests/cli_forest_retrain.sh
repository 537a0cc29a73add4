#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Retrains the fixture models with the installed XGBoost / LightGBM / scikit-learn
# (tests/forest/make_fixtures.py into a scratch folder) and checks canopy against
# the fresh predictions: catches format changes in newer framework releases.
# Exit 77 (skipped) when the frameworks are not importable or the shared data sets are
# not found. $1: the canopy binary.
set -u
CANOPY=${1:?usage: cli_forest_retrain.sh CANOPY_BINARY}
HERE=$(cd "$(dirname "$0")" && pwd)
fams=()
python3 -c 'import numpy' 2>/dev/null || { echo "skipped: numpy not importable"; exit 77; }
python3 -c 'import xgboost' 2>/dev/null && fams+=(xgboost)
python3 -c 'import lightgbm' 2>/dev/null && fams+=(lightgbm)
python3 -c 'import sklearn' 2>/dev/null && fams+=(sklearn)
if [ ${#fams[@]} -eq 0 ]; then
    echo "skipped: none of xgboost, lightgbm, scikit-learn is importable"
    exit 77
fi
# The fixtures train on the shared data sets (tests/forest/make_fixtures.py).
data="${CANOPY_SHARED_DATA:-$HERE/../../shared/data}"
if [ ! -e "$data/breast_cancer.csv.gz" ]; then
    echo "skipped: the shared data sets are not at $data (set CANOPY_SHARED_DATA)"
    exit 77
fi
export CANOPY_SHARED_DATA="$data"
tmp=$(mktemp -d /tmp/canopy-retrain.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
only=$(IFS=,; echo "${fams[*]}")
python3 "$HERE/forest/make_fixtures.py" "$tmp" --only "$only" || { echo "FAIL: training"; exit 1; }
pass=0
fail=0
for model in "$tmp"/*.json "$tmp"/*.txt; do
    [ -e "$model" ] || continue
    stem=${model%.*}
    for out in raw prob; do
        [ "$out" = raw ] && [ "$(basename "$stem")" = lgb_rf ] && continue
        for layout in csr hier sll; do
            if "$CANOPY" predict --model "$model" --data "$stem.X.npy" --kind $out \
                --layout $layout -o "$tmp/p.npy" 2>"$tmp/err" &&
                python3 - "$tmp/p.npy" "$stem.$out.npy" <<'PY'; then
import sys, numpy as np
a = np.load(sys.argv[1]); e = np.load(sys.argv[2])
if e.ndim == 2 and a.ndim == 1 and e.shape[1] == 2: e = e[:, 1]
sys.exit(0 if a.shape == e.shape and np.all(np.abs(a - e) <= 1e-5 * np.maximum(1, np.abs(e))) else 1)
PY
                pass=$((pass + 1))
            else
                echo "FAIL: $(basename "$model") $out $layout" >&2
                cat "$tmp/err" >&2
                fail=$((fail + 1))
            fi
        done
    done
done
echo "trained with: $only"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
