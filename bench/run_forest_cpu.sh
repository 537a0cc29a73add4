#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU forest-inference benchmark (issue 7): canopy (in-process through the library and
# end to end through the CLI) beside XGBoost, LightGBM, scikit-learn and Treelite/TL2cgen
# on the same data, cores and thread count. See bench/forest_bench.py for the workloads.
# Usage: bench/run_forest_cpu.sh BUILD_DIR OUT_DIR [quick|full]
#   env: CANOPY_BENCH_REPEAT (default 5), CANOPY_BENCH_THREADS (default: all cores),
#        CANOPY_BENCH_WORKLOADS (default ren,batch), CANOPY_BENCH_DATA (the shared data
#        folder with shuttle.csv.gz and satellite.csv.gz), CANOPY_BENCH_ROWS (quick batch
#        rows), CANOPY_BENCH_TL2CGEN (model kinds to compile, default all three),
#        CANOPY_BENCH_REN_SETS (data sets of the ren workload, default shuttle,satellite)
set -euo pipefail
b="$(cd "$1" && pwd)"
out="$2"
mode="${3:-quick}"
here="$(cd "$(dirname "$0")" && pwd)"
args=(--build "$b" --out "$out" --mode "$mode" --repeat "${CANOPY_BENCH_REPEAT:-5}"
      --workloads "${CANOPY_BENCH_WORKLOADS:-ren,batch}")
[ -n "${CANOPY_BENCH_THREADS:-}" ] && args+=(--threads "$CANOPY_BENCH_THREADS")
[ -n "${CANOPY_BENCH_DATA:-}" ] && args+=(--data "$CANOPY_BENCH_DATA")
[ -n "${CANOPY_BENCH_ROWS:-}" ] && args+=(--rows "$CANOPY_BENCH_ROWS")
[ -n "${CANOPY_BENCH_REN_SETS:-}" ] && args+=(--ren-sets "$CANOPY_BENCH_REN_SETS")
[ -n "${CANOPY_BENCH_TL2CGEN+x}" ] && args+=(--tl2cgen "$CANOPY_BENCH_TL2CGEN")
mkdir -p "$out"
{ echo "# $(date -u +%FT%TZ) commit ${CANOPY_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')}"
  lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Flags' | cut -c1-200; } >"$out/forest-machine.txt"
python3 "$here/forest_bench.py" "${args[@]}"
python3 "$here/forest_report.py" "$out"/forest-*.jsonl >"$out/forest-report.md"
echo "wrote $out/forest-report.md"
