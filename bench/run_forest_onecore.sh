#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 20's one-core forest checks in one command: canopy's default prediction against
# XGBoost's inplace_predict on depth-8 boosted models with 5 % NaN (forest_nan_bench.py),
# and the cache model's layout ranking against measured times for the interpreter and
# the walkers, SIMD and scalar (forest_layout_bench.py). Models are written to OUT_DIR
# first: xgb100, 100 boosting rounds of depth 8 on 20,000 x 50 rows, and xgb1200, a
# 1,200-tree model made by forest_load_bench.py --make 20.
# Usage: bench/run_forest_onecore.sh BUILD_DIR OUT_DIR
#   env: CANOPY_BENCH_BASE (another build's libcanopy.so to run beside, e.g. main),
#        CANOPY_BENCH_ROUNDS (default 7), CANOPY_BENCH_ENGINES (the layout grids'
#        engines, default "vm_simd simd scalar")
set -euo pipefail
b="$(cd "$1" && pwd)"
out="$2"
here="$(cd "$(dirname "$0")" && pwd)"
rounds="${CANOPY_BENCH_ROUNDS:-7}"
engines="${CANOPY_BENCH_ENGINES:-vm_simd simd scalar}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
{ echo "# $(date -u +%FT%TZ) commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
  lscpu | grep -E 'Model name|^CPU\(s\)|L2|L3|Flags' | cut -c1-200
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"; } >"$out/onecore-machine.txt"
if [ ! -f "$out/xgb100.json" ]; then
  python3 - "$out/xgb100.json" <<'EOF'
import sys
import numpy as np
import xgboost as xgb
rng = np.random.default_rng(0)
X = rng.standard_normal((20000, 50)).astype(np.float32)
y = ((X[:, :10] ** 2).sum(1) + rng.standard_normal(20000) > 10).astype(np.float32)
b = xgb.train({"max_depth": 8, "eta": 0.1, "objective": "binary:logistic",
               "tree_method": "hist", "nthread": 1}, xgb.DMatrix(X, label=y), 100)
b.save_model(sys.argv[1])
EOF
fi
[ -f "$out/xgb1200.json" ] ||
  python3 "$here/forest_load_bench.py" --model "$out/xgb1200.json" --make 20 --rounds 1 >/dev/null
libs=(--lib "now=$b/libcanopy.so")
[ -n "${CANOPY_BENCH_BASE:-}" ] && libs+=(--lib "base=$CANOPY_BENCH_BASE")
{
  python3 "$here/forest_nan_bench.py" --model "$out/xgb100.json" "${libs[@]}" --rows 100000 \
    --rounds "$rounds" --out "$out/onecore-nan.jsonl"
  python3 "$here/forest_nan_bench.py" --model "$out/xgb1200.json" "${libs[@]}" --rows 20000 \
    --rounds "$rounds" --out "$out/onecore-nan.jsonl"
  for engine in $engines; do
    python3 "$here/forest_layout_bench.py" --build "$b" --model "xgb100=$out/xgb100.json" \
      --model "xgb1200=$out/xgb1200.json" --synthetic --rows 10000 --rounds "$rounds" \
      --engine "$engine" --out "$out/onecore-layout.jsonl"
  done
} | tee "$out/onecore-report.md"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/onecore-machine.txt"
echo "wrote $out/onecore-report.md"
