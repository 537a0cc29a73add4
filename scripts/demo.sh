#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job from a fresh clone: install deps if missing, build, generate the
# built-in rand7 workload (200,000 reference + 200,000 query points in 7-D) and find
# each query's 8 nearest neighbours, then print a short summary.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CANOPY_ROOT/scripts/build.sh" >/dev/null
B="$CANOPY_ROOT/build/canopy"
work="${CANOPY_DEMO_DIR:-$CANOPY_ROOT/out/demo}"
mkdir -p "$work"
"$B" info
"$B" gen rand7 -o "$work/rand7.npy" --query-out "$work/rand7.q.npy"
"$B" knn --ref "$work/rand7.npy" --query "$work/rand7.q.npy" -k 8 \
    -o "$work/nbrs.npy" --distances "$work/dist.npy" --stats
if python3 -c 'import numpy' 2>/dev/null; then
    python3 - "$work" <<'PY'
import sys, numpy as np
w = sys.argv[1]
i, d = np.load(f"{w}/nbrs.npy"), np.load(f"{w}/dist.npy")
print(f"result: indices {i.shape} {i.dtype}, distances {d.shape} {d.dtype}")
print(f"query 0: neighbours {i[0].tolist()}")
print(f"mean distance to the nearest neighbour {d[:, 0].mean():.4f}, to the 8th {d[:, 7].mean():.4f}")
PY
fi
echo "outputs in $work"
