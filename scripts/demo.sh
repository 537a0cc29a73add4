#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job from a fresh clone: install what the demo needs, build the CLI, generate
# the built-in rand7 workload (200,000 reference + 200,000 query points in 7-D) and find
# each query's 8 nearest neighbours, then print a short summary. It builds build/ with
# scripts/test.sh's flags, so the tests reuse it. CANOPY_CUDA=ON|OFF and
# CANOPY_WITH_MPI=1 override what it decides about the CUDA module and Open MPI.
set -euo pipefail
source "$(dirname "$0")/env.sh"
start=$SECONDS
say() { printf 'demo [%3ds]: %s\n' $((SECONDS - start)) "$*"; }

say "1/4 dependencies (scripts/install-deps.sh: cmake, ninja, gcc, json-c, python3, NumPy)"
"$CANOPY_ROOT/scripts/install-deps.sh"

cuda="${CANOPY_CUDA:-AUTO}"
if [ "$cuda" = AUTO ] && command -v nvcc >/dev/null; then
    if canopy_have_nvidia_driver; then
        say "nvcc and an NVIDIA driver found: the CUDA module is built too (several minutes more)"
    else
        cuda=OFF
        say "no NVIDIA driver: the CUDA module is not built (it could not run here; test.sh and CI compile it)"
    fi
fi
say "2/4 configure and build the canopy CLI in build/ (the tests are built by scripts/test.sh)"
dir="$CANOPY_ROOT/build"
mkdir -p "$dir"
cmake -S "$CANOPY_ROOT" -B "$dir" -G Ninja "${CANOPY_RELEASE_FLAGS[@]}" -DCANOPY_CUDA="$cuda" \
    >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
targets=(--target canopy)
[ "$cuda" != OFF ] && grep -q 'CUDA backend ON' "$dir/configure.log" && targets+=(canopy_cuda)
# ninja's [done/total] lines, one every 10 %; compiler messages in full
cmake --build "$dir" -j "$CANOPY_JOBS" "${targets[@]}" | awk '
    /Re-checking globbed|Re-running CMake/ { next }
    /^\[[0-9]+\/[0-9]+\]/ { split(substr($1, 2), f, "/"); p = int(100 * f[1] / f[2]);
                             if (p >= next_p) { printf "  compiled %d of %d files (%d%%)\n", f[1], f[2], p;
                                                fflush(); next_p = p - p % 10 + 10 }; next }
    !/^ninja: no work to do/ { print; fflush() }'

B="$dir/canopy"
work="${CANOPY_DEMO_DIR:-$CANOPY_ROOT/out/demo}"
mkdir -p "$work"
say "3/4 generate rand7 and run kNN (k = 8) in $work"
"$B" info
"$B" gen rand7 -o "$work/rand7.npy" --query-out "$work/rand7.q.npy"
"$B" knn --ref "$work/rand7.npy" --query "$work/rand7.q.npy" -k 8 \
    -o "$work/nbrs.npy" --distances "$work/dist.npy" --stats
say "4/4 the result"
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
say "done; outputs in $work"
