#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 32's goals table (bench/python_gpu.py) over a build's libcanopy and the CUDA
# module beside it, from the source tree's package: the table goes to
# OUT/python-gpu.md (default bench/results), one JSON line per row to python-gpu.jsonl.
# Needs torch (GPU rows) and scikit-learn (CPU row) in python3; rows without them say so.
# Usage: bench/run_python_gpu.sh BUILD_DIR [OUT_DIR]   (about 1-2 min on an H200 host)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:?usage: bench/run_python_gpu.sh BUILD_DIR [OUT_DIR]}" && pwd)"
out="${2:-$root/bench/results}"
mkdir -p "$out"
CANOPY_LIBRARY="$build/libcanopy.so" PYTHONPATH="$root/python/src" OMP_WAIT_POLICY=passive \
    python3 "$root/bench/python_gpu.py" "${@:3}" >"$out/python-gpu.md" 2>"$out/python-gpu.jsonl"
cat "$out/python-gpu.md"
