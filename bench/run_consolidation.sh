#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Workload consolidation benchmark (Figure 7 of Wu, Li & Becchi 2016) on the GPU
# machine: every GPU graph strategy on powerlaw434k (SSSP, SpMV, PageRank) and kron16
# (those and colouring, recursive BFS) with the CPU OpenMP strategies and cuSPARSE SpMV as peers
# in the same run (SpMV also with the values stored, as cuSPARSE reads them), and the
# GPU/CPU tree strategies on random1 and random2.
# Usage: [WHAT=graphs|trees] bench/run_consolidation.sh BUILD_DIR OUT_DIR [REPS]
#        (REPS default 5)
# Writes OUT_DIR/consolidation.md (device, date, commit, tables).
set -uo pipefail
b=${1:?usage: run_consolidation.sh BUILD_DIR OUT_DIR [REPS]}
out=${2:?usage: run_consolidation.sh BUILD_DIR OUT_DIR [REPS]}
reps=${3:-5}
mkdir -p "$out"
md="$out/consolidation.md"
root="$(cd "$(dirname "$0")/.." && pwd)"
commit="${CANOPY_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
gpu="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=close
{
    echo "# Workload consolidation — raw run"
    echo
    echo "- device: ${gpu:-none}; CPU: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
    echo "- commit $commit; $(date -u +%Y-%m-%dT%H:%MZ); $reps repetitions after one warm-up (basic-dp, colouring, gpu-rec: at most 3)"
    echo "- call ms: the whole library call (upload, all rounds, download); GPU kernels ms: the"
    echo "  rounds alone (what cuSPARSE's time compares with)"
} >"$md"
rc=0
# The paper's pairs: SSSP, SpMV and PageRank on the citation graph (powerlaw434k),
# colouring and recursive BFS on kron_g500-logn16 (kron16); kron16 also runs the rest.
# WHAT picks parts: graphs, trees, or both (default).
what=${WHAT:-graphs trees}
if [[ $what == *graphs* ]]; then
    timeout 900 "$b/canopy-bench-consolidation" graph powerlaw434k "$reps" sssp,spmv,spmv-val,pagerank >>"$md" || rc=1
    timeout 600 "$b/canopy-bench-consolidation" graph kron16 "$reps" >>"$md" || rc=1
fi
if [[ $what == *trees* ]]; then
    for t in random1 random2; do
        timeout 600 "$b/canopy-bench-consolidation" tree "$t" "$reps" >>"$md" || rc=1
    done
fi
cat "$md"
exit $rc
