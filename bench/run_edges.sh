#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 30's edges benchmark: what a call costs around its kernels. The CPU part is
# bench/edges_cpu.py (canopy against cKDTree and pykdtree, build + query in process on
# one and all threads, the whole CLI process, small calls on a busy machine); the GPU
# part is bench/run_edges_gpu.sh BUILD OUT, run when that script exists and nvidia-smi
# sees a GPU. Writes OUT/edges-cpu.md (and the GPU script's files), then OUT/edges.md:
# the tables together, the content of bench/results/edges.md.
# usage: bench/run_edges.sh BUILD OUT   env: REPEAT (default 5), SCALE (default 1),
#        WORKLOADS (default cities,clust2,uni3,rand7), CLOCK (wall, or cpu on a loaded
#        machine: edges_cpu.py --clock)
# pykdtree is a benchmark dependency only: where it is not importable it is installed
# from the wheel in .carry/whl (pip download, see bench/requirements.txt) into a
# temporary folder, without the network.
set -euo pipefail
build=$(cd "${1:?usage: run_edges.sh BUILD OUT}" && pwd)
out=${2:?usage: run_edges.sh BUILD OUT}
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
if ! python3 -c "import pykdtree" 2>/dev/null; then
    site="${TMPDIR:-/tmp}/canopy-edges-site"
    python3 -m pip install -q --no-index --no-deps --target "$site" "$root"/.carry/whl/*.whl
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$root/python/src:$root/bench${PYTHONPATH:+:$PYTHONPATH}"
export CANOPY_LIBRARY="$build/libcanopy.so"
# each tool's own default waiting (scripts/gpu-check.sh exports passive for its tests)
unset OMP_WAIT_POLICY
python3 "$root/bench/edges_cpu.py" --build "$build" --out "$out/edges-cpu.md" \
    --jsonl "$out/edges-cpu.jsonl" --repeat "${REPEAT:-5}" --scale "${SCALE:-1}" \
    --workloads "${WORKLOADS:-cities,clust2,uni3,rand7}" --clock "${CLOCK:-wall}"
parts=("$out/edges-cpu.md")
if [ -x "$root/bench/run_edges_gpu.sh" ] && nvidia-smi -L >/dev/null 2>&1; then
    "$root/bench/run_edges_gpu.sh" "$build" "$out"
    [ -f "$out/edges-gpu.md" ] && parts+=("$out/edges-gpu.md")
fi
{
    echo "# Issue 30: the edges of a call (bench/run_edges.sh)"
    for p in "${parts[@]}"; do
        echo
        cat "$p"
    done
} >"$out/edges.md"
echo "wrote $out/edges.md"
