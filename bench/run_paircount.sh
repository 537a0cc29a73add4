#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Pair counts DD(r) against Corrfunc (and TreeCorr) in one process on the same float32
# data (issue 37; bench/paircount_bench.py says what runs). Needs python3 with numpy
# and Corrfunc (Debian libgsl-dev, then pip install Corrfunc; treecorr optional).
# Usage: bench/run_paircount.sh BUILD_DIR OUT_DIR
#   CANOPY_BENCH_SIZES (default 200000), CANOPY_BENCH_THREADS (default 1,2),
#   CANOPY_BENCH_REPS (default 5), CANOPY_BENCH_GPU=1 adds canopy on the GPU against
#   Corrfunc on all cores, CANOPY_BENCH_GPU_ONLY=1 runs the GPU rows alone with their
#   phases, for each of CANOPY_BENCH_GPU_VARIANTS (--gpu-variants, default "default").
#   Writes OUT_DIR/paircount.md and paircount.jsonl.
set -euo pipefail
b="$(cd "$1" && pwd)"
out="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
export OMP_WAIT_POLICY=passive PYTHONPATH="$root/python/src${PYTHONPATH:+:$PYTHONPATH}" CANOPY_LIBRARY="$b/libcanopy.so"
extra=()
[ "${CANOPY_BENCH_GPU:-0}" = 1 ] && extra+=(--gpu)
[ "${CANOPY_BENCH_GPU_ONLY:-0}" = 1 ] &&
    extra+=(--gpu-only --gpu-variants "${CANOPY_BENCH_GPU_VARIANTS:-default}")
python3 -c "import treecorr" 2>/dev/null && extra+=(--treecorr)
: >"$out/paircount.jsonl"
{
    echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs;" \
        "date $(date -u +%Y-%m-%dT%H:%MZ); commit ${CANOPY_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    echo "- Corrfunc $(python3 -c 'import Corrfunc; print(Corrfunc.__version__)')," \
        "TreeCorr $(python3 -c 'import treecorr; print(treecorr.__version__)' 2>/dev/null || echo absent)"
    echo
    python3 "$root/bench/paircount_bench.py" --canopy-cli "$b/canopy" \
        --sizes "${CANOPY_BENCH_SIZES:-200000}" --threads "${CANOPY_BENCH_THREADS:-1,2}" \
        --reps "${CANOPY_BENCH_REPS:-5}" --jsonl "$out/paircount.jsonl" "${extra[@]}"
} | tee "$out/paircount.md"
