#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Raw JSON lines of the benchmarks start with commit, machine and date: canopy-bench's
# (bench_util.c) and bench/bench_meta.py's agree, and CANOPY_COMMIT / CANOPY_MACHINE
# override them. $1: canopy, $2: canopy-bench. Prints "N passed, M failed".
set -u
CANOPY=${1:?usage: bench_json_meta.sh CANOPY CANOPY_BENCH}
BENCH=${2:?usage: bench_json_meta.sh CANOPY CANOPY_BENCH}
tmp=$(mktemp -d /tmp/canopy-bench-meta.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"
root="$(cd "$(dirname "$0")/.." && pwd)"

run 0 gen uniform --n 500 --d 3 -o "$tmp/r.npy"
bench() {
    "$BENCH" --app knn --ref "$tmp/r.npy" --query "$tmp/r.npy" -k 2 --backend cpu \
        --variants dr --schedules none --repeat 1 --label t
}
bench >"$tmp/plain.jsonl" 2>"$tmp/err"
check "canopy-bench failed: $(cat "$tmp/err")" test -s "$tmp/plain.jsonl"
date_re='"date":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"'
check "no commit/machine/date first: $(head -c 200 "$tmp/plain.jsonl")" \
    grep -Eq "^\{\"commit\":\"[^\"]+\",\"machine\":\"[^\"]+\",$date_re,\"label\":\"t\"" \
    "$tmp/plain.jsonl"
CANOPY_COMMIT=abc1234 CANOPY_MACHINE='test "box"' bench >"$tmp/env.jsonl" 2>/dev/null
check "CANOPY_COMMIT/CANOPY_MACHINE not used: $(head -c 200 "$tmp/env.jsonl")" \
    grep -q '^{"commit":"abc1234","machine":"test box",' "$tmp/env.jsonl"
if python3 -c 'import json' 2>/dev/null; then
    # Both writers describe this machine in the same words; only the GPU may be missing
    # from one (a build without CUDA does not see it).
    py=$(cd "$root/bench" && python3 -c 'import bench_meta; print(bench_meta.meta()["machine"])')
    c=$(grep -o '"machine":"[^"]*"' "$tmp/plain.jsonl" | head -1 | cut -d'"' -f4)
    check "machine: C says '$c', bench_meta.py says '$py'" \
        [ "${py#"$c"}" != "$py" -o "${c#"$py"}" != "$c" ]
    check "the C line is not JSON" \
        python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/plain.jsonl"
fi
cli_finish
