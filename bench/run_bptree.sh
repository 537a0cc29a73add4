#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# B+-tree forest benchmark (Ren et al. 2014, Fig. 6 and Fig. 12 on the CPU): forest
# layouts x left bias (0.5, 0.625, 0.75, 0.875) against the pointer-based B+ tree, at
# 2^20, 2^22 and 2^24 keys (about 25 MB to 400 MB of nodes, beyond the caches), then
# the hybrid layout's switch level x bias at 2^22 keys, then Wu's csr/hier layouts.
# One thread by default (Ren's sequential baseline; CANOPY_THREADS overrides).
# Usage: bench/run_bptree.sh BUILD_DIR OUT_DIR   (writes OUT_DIR/bptree.jsonl)
set -euo pipefail
b="$1"
out="$2"
repeat="${CANOPY_BENCH_REPEAT:-3}"
queries="${CANOPY_BENCH_QUERIES:-1048576}"
export CANOPY_THREADS="${CANOPY_THREADS:-1}"
mkdir -p "$out"
j="$out/bptree.jsonl"
: >"$j"
bench() { "$b/canopy-bench-bptree" --queries "$queries" --repeat "$repeat" "$@" >>"$j"; }
bench --log2-keys "${CANOPY_BENCH_LOG2_KEYS:-20,22,24}" \
    --configs df:vm_simd,bf:vm_simd,ll:vm_simd,sll:vm_simd,cc:vm_simd,hybrid:vm_simd,sll:vm,sll:scalar
bench --log2-keys 22 --configs "$(printf 'hybrid@%d:vm_simd,' 1 2 3 4 5 6 7 8 | sed 's/,$//')"
bench --log2-keys 22 --biases 0.5 --configs csr:scalar,hier:scalar
echo "wrote $j ($(wc -l <"$j") lines)"
