#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy predict` and `canopy forest info` end to end on the committed fixtures:
# outputs equal the frameworks' predictions, layouts/engines agree, usage errors
# exit 2, runtime errors exit 1 and leave no output file, --help answers.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_forest.sh CANOPY_BINARY}
DATA=$(cd "$(dirname "$0")/data/forest" && pwd)
tmp=$(mktemp -d /tmp/canopy-cli-forest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"
have_numpy=0
python3 -c 'import numpy' 2>/dev/null && have_numpy=1
# same_npy GOT WANT: equal to 1e-5 relative (python3 + numpy when present, else bytes
# of the header only are checked by the caller).
same_npy() {
    python3 - "$1" "$2" <<'PY'
import sys, numpy as np
a = np.load(sys.argv[1]); e = np.load(sys.argv[2])
if e.ndim == 2 and a.ndim == 1 and e.shape[1] == 2: e = e[:, 1]
sys.exit(0 if a.shape == e.shape and np.all(np.abs(a - e) <= 1e-5 * np.maximum(1, np.abs(e))) else 1)
PY
}

for m in xgb_binary.json xgb_multi.json lgb_multi.txt lgb_zero.txt sk_rf_clf.json sk_gb_bin.json; do
    stem=${m%.*}
    for layout in auto csr hier df bf ll sll cc hybrid; do
        run 0 predict --model "$DATA/$m" --data "$DATA/$stem.X.npy" --layout "$layout" \
            -o "$tmp/p.npy"
        if [ $have_numpy = 1 ]; then
            check "$m $layout prob matches the framework" same_npy "$tmp/p.npy" "$DATA/$stem.prob.npy"
        fi
    done
    for engine in scalar simd vm vm_simd; do
        run 0 predict --model "$DATA/$m" --data "$DATA/$stem.X.npy" --layout sll --engine "$engine" \
            --kind raw -o "$tmp/r.npy" --threads 2
        if [ $have_numpy = 1 ] && [ "$stem" != lgb_rf ]; then
            check "$m $engine raw matches" same_npy "$tmp/r.npy" "$DATA/$stem.raw.npy"
        fi
    done
done
# class output is int64, one per row
run 0 predict --model "$DATA/xgb_multi.json" --data "$DATA/xgb_multi.X.npy" --kind class -o "$tmp/c.npy"
check "class output is int64" grep -q "'<i8'" "$tmp/c.npy"
# --format explicit, --stats
run 0 predict --model "$DATA/lgb_reg.txt" --format lightgbm --data "$DATA/lgb_reg.X.npy" -o "$tmp/p.npy" --stats
check "--stats names the layout" grep -q "layout" "$tmp/err"
check "--stats gives the measured time" grep -q "rows/s" "$tmp/err"
# CSV input
if [ $have_numpy = 1 ]; then
    python3 -c "import numpy as np,sys; X=np.load(sys.argv[1]); X=X[~np.isnan(X).any(1)]; np.savetxt(sys.argv[2], X, delimiter=',', fmt='%.9g'); np.save(sys.argv[3], X)" \
        "$DATA/sk_gb_reg.X.npy" "$tmp/x.csv" "$tmp/x.npy"
    run 0 predict --model "$DATA/sk_gb_reg.json" --data "$tmp/x.csv" -o "$tmp/pc.npy"
    run 0 predict --model "$DATA/sk_gb_reg.json" --data "$tmp/x.npy" -o "$tmp/pn.npy"
    check "csv and npy inputs agree" same_npy "$tmp/pc.npy" "$tmp/pn.npy"
fi
# forest info
run 0 forest info --model "$DATA/xgb_multi.json" --data "$DATA/xgb_multi.X.npy"
check "info: trees" grep -q "^trees: 15" "$tmp/out"
check "info: bytes per layout" grep -q "hier=" "$tmp/out"
check "info: beta" grep -q "^beta" "$tmp/out"
check "info: auto layout" grep -q "^auto layout" "$tmp/out"

# usage errors: exit 2 with the hint
for args in "" "--model $DATA/xgb_binary.json" "--model $DATA/xgb_binary.json --data $DATA/xgb_binary.X.npy" \
    "--model M --data X -o Y --layout nope" "--model M --data X -o Y --engine nope" \
    "--model M --data X -o Y --kind nope" "--model M --data X --output raw" "--model M --data X -o Y --format nope" \
    "--model M --data X -o Y --hier-depth 9" "--bogus"; do
    # shellcheck disable=SC2086
    run 2 predict $args
    check "predict $args: --help hint" grep -q "Try 'canopy predict --help'" "$tmp/err"
done
run 2 forest
run 2 forest info
# runtime errors: exit 1, message names the problem, no output left behind
rm -f "$tmp/none.npy"
if "$CANOPY" info | grep -q "^gpu: *none"; then
    run 1 predict --model "$DATA/xgb_binary.json" --data "$DATA/xgb_binary.X.npy" --backend gpu -o "$tmp/none.npy"
    check "gpu absent: clear message" grep -q "use --backend cpu" "$tmp/err"
    check "gpu absent: no output" test ! -e "$tmp/none.npy"
fi
run 1 predict --model "$DATA/xgb_binary.json" --data "$DATA/xgb_binary.X.npy" --backend cpu --engine enc -o "$tmp/none.npy"
check "GPU engine on the CPU refused" grep -q "runs on the GPU" "$tmp/err"
usage_error predict --model "$DATA/xgb_binary.json" --data "$DATA/xgb_binary.X.npy" --mapping bogus -o "$tmp/none.npy"
run 1 predict --model "$tmp/missing.json" --data "$DATA/xgb_binary.X.npy" -o "$tmp/none.npy"
check "missing model named" grep -q "missing.json" "$tmp/err"
run 1 predict --model "$DATA/xgb_binary.json" --data "$DATA/xgb_multi.X.npy" -o "$tmp/none.npy"
check "column mismatch explained" grep -q "columns" "$tmp/err"
head -c 2000 "$DATA/xgb_binary.json" >"$tmp/trunc.json"
run 1 predict --model "$tmp/trunc.json" --data "$DATA/xgb_binary.X.npy" -o "$tmp/none.npy"
check "truncated JSON explained" grep -q "truncated" "$tmp/err"
sed 's/decision_type=8 /decision_type=9 /' "$DATA/lgb_binary.txt" >"$tmp/cat.txt"
run 1 predict --model "$tmp/cat.txt" --data "$DATA/lgb_binary.X.npy" -o "$tmp/none.npy"
check "categorical split refused" grep -q "categorical split on feature" "$tmp/err"
run 1 predict --model "$DATA/xgb_binary.json" --data "$DATA/xgb_binary.X.npy" --layout csr --engine vm -o "$tmp/none.npy"
check "no output file after errors" test ! -e "$tmp/none.npy"
# help
run 0 predict --help
for word in xgboost lightgbm canopy raw prob class csr hier sll hybrid vm_simd; do
    check "predict --help mentions $word" grep -q "$word" "$tmp/out"
done
run 0 forest --help

cli_finish
