#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 30's GPU kNN goals against cudaKDTree, on the GPU machine: compiles
# bench/peer_cudakdtree.cu against CUKD_DIR (cudaKDTree's headers, CUKD_DIR/cukd/*.h, never
# committed: .carry/cukd-src) and BUILD's libcanopy (a CUDA build), then runs canopy's
# device-pointer kNN rows (`canopy-bench-edges-gpu REPS knn`: clust2, cities, rand7, k = 8
# and 1) and the peer (every tree and walk, queries as given and Morton-sorted) one after
# the other, never at once. Writes OUT/canopy-knn.md, OUT/peer.txt (one line a variant,
# its brute-force check in each), OUT/peer-build.log and OUT/table.md: canopy's row against
# the peer's best variant that passed its check, printed last. Exit status 1 when a peer
# variant failed its check or a row is missing.
# Usage: bench/run_peer_cudakdtree.sh BUILD CUKD_DIR OUT [reps]   (default 15 reps;
#        NVCC_ARCH overrides the target, default sm_90)
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 BUILD CUKD_DIR OUT [reps]" >&2
    exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "$1" && pwd)" cukd="$(cd "$2" && pwd)" out="$3" reps="${4:-15}"
source "$root/scripts/env.sh"
for f in "$build/libcanopy.so" "$build/canopy-bench-edges-gpu" "$cukd/cukd/knn.h"; do
    [ -e "$f" ] || { echo "$0: $f not found" >&2; exit 1; }
done
mkdir -p "$out"
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch="${NVCC_ARCH:-sm_90}" --expt-relaxed-constexpr -I "$cukd" \
    -I "$root/include" "$root/bench/peer_cudakdtree.cu" -L "$build" -lcanopy \
    -Xlinker -rpath="$build" -o "$out/peer_cudakdtree" >"$out/peer-build.log" 2>&1 ||
    { tail -n 30 "$out/peer-build.log"; exit 1; }
echo "peer compiled in $(($(date +%s) - t0)) s"
CANOPY_THREADS="${CANOPY_THREADS:-$(nproc)}" "$build/canopy-bench-edges-gpu" "$reps" knn \
    >"$out/canopy-knn.md"
"$out/peer_cudakdtree" "$reps" >"$out/peer.txt"
commit="$(cat "$cukd/COMMIT" 2>/dev/null || echo unknown)"
rc=0
python3 - "$out/canopy-knn.md" "$out/peer.txt" "$commit" >"$out/table.md" <<'EOF' || rc=$?
import sys

canopy_md, peer_txt, commit = sys.argv[1:4]
canopy, heading = {}, ""
for line in open(canopy_md):
    if line.startswith("# "):
        heading = line[2:].strip()
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) >= 4 and cells[2].replace(".", "", 1).isdigit():
        canopy[(cells[0], cells[1])] = (float(cells[2]), cells[3])
peer, failed = {}, []
for line in open(peer_txt):
    if not line.startswith("peer cudaKDTree "):
        continue
    kv = dict(t.split("=", 1) for t in line.split()[2:] if "=" in t)
    if kv["check"] != "ok":
        failed.append(f"{kv['dataset']} {kv['variant']} {kv['op']}")
        continue
    k = 1 if kv["op"] == "nn-fcp" else 8
    best = peer.get((kv["dataset"], k))
    if best is None or float(kv["median_ms"]) < best[0]:
        peer[(kv["dataset"], k)] = (float(kv["median_ms"]), f"{kv['variant']}, {kv['op']}")
# canopy's data and call, the peer's data set, k, the goal (peer best / canopy)
rows = []
for data, pdata, goal8, goal1 in (("clust2", "clust2", 1.5, 1.0),
                                  ("cities 135k (self)", "cities", 1.5, 1.0),
                                  ("rand7", "rand7", 2.0, 2.0)):
    for k, goal in ((8, goal8), (1, goal1)):
        rows.append((data, f"k={k}, device pointers, resident index", pdata, k, goal))
        if pdata == "cities":
            rows.append((data, f"k={k}, canopy_index_knn_self_device (135000 points), tree order",
                         pdata, k, goal))
print(f"canopy: {heading}\n\ncudaKDTree {commit}: its best variant that passed the brute-force check; ratio = its "
      "median / canopy's median (ms, host wall of the call or launch + synchronisation)\n")
print("| data | k | canopy call | canopy median (min–max) | cudaKDTree best, queries as given "
      "| ratio | cudaKDTree best, Morton-sorted beforehand | ratio | goal | met (given / sorted) |")
print("|---|---|---|---|---|---|---|---|---|---|")
missing = 0
for data, call, pdata, k, goal in rows:
    c = canopy.get((data, call))
    given, srt = peer.get((pdata, k)), peer.get((pdata + "-morton-sorted", k))
    if c is None or given is None or srt is None:
        missing += 1
        print(f"| {data} | {k} | {call} | missing | | | | | ≥ {goal}× | |")
        continue
    rg, rs = given[0] / c[0], srt[0] / c[0]
    met = " / ".join("yes" if r >= goal else "no" for r in (rg, rs))
    print(f"| {data} | {k} | {call} | {c[0]:.3f} ({c[1]}) | {given[0]:.3f} ({given[1]}) | "
          f"{rg:.2f}× | {srt[0]:.3f} ({srt[1]}) | {rs:.2f}× | ≥ {goal}× | {met} |")
if failed:
    print(f"\npeer variants that failed their check ({len(failed)}): " + "; ".join(failed))
sys.exit(1 if failed or missing else 0)
EOF
cat "$out/table.md"
exit $rc
