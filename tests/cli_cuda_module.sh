#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CUDA backend is a module loaded at run time (libcanopy_cuda.so.N): libcanopy and
# the CLI need no CUDA library (ELF NEEDED entries, undefined symbols of libcanopy.a);
# with the module hidden (CANOPY_CUDA_MODULE pointing nowhere) every CPU command runs,
# auto picks the CPU, --backend gpu fails with the reason and no output, `canopy info`
# says why; a file that is no module, a module of another ABI and one whose CUDA runtime
# is missing are refused by name. CPU runs never try to load it (--stats=json's cuda).
# In a CUDA build the module itself, and a renamed copy of it, load.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_cuda_module.sh CANOPY_BINARY}
bindir=$(cd "$(dirname "$CANOPY")" && pwd)
tmp=$(mktemp -d /tmp/canopy-cli-cuda-module.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"
DATA=$(cd "$(dirname "$0")/data" && pwd)
module=$(ls "$bindir"/libcanopy_cuda.so.* 2>/dev/null | head -n 1)

# No CUDA library among the NEEDED entries of the library and the CLI.
command -v readelf >/dev/null || { echo "readelf not found: skipped"; exit 77; }
for f in "$bindir/libcanopy.so" "$CANOPY"; do
    readelf -d "$f" >"$tmp/needed" 2>&1
    check "$f: readelf reads it" grep -q NEEDED "$tmp/needed"
    check "$f: needs no CUDA library" test -z "$(grep NEEDED "$tmp/needed" |
        grep -E 'libcuda|libcudart|libnvrtc|libcudadevrt')"
done
# The static library calls nothing of CUDA's: a static link needs no CUDA library.
nm -u "$bindir/libcanopy.a" 2>/dev/null | grep -E ' (cuda|nvrtc|__cuda)' >"$tmp/undef"
check "libcanopy.a references no CUDA symbol" test ! -s "$tmp/undef"

# CPU work never reaches for CUDA (module present or not): --backend cpu, and auto runs
# too small for the GPU, report no load attempt; an auto kNN large enough for the GPU
# tries (and loads the module where the build has one), so the field can fail.
attempts() { # attempts FILE: the last --stats=json line's cuda.load_attempts
    python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["cuda"]["load_attempts"])' "$1"
}
run 0 gen uniform --n 400 --d 3 --seed 4 -o "$tmp/c.npy" --nq 90 --query-out "$tmp/cq.npy"
run 0 gen uniform --n 400 --d 2 --seed 5 -o "$tmp/big.npy" --nq 20000 --query-out "$tmp/bigq.npy"
for args in "knn --ref $tmp/big.npy --query $tmp/bigq.npy -k 2 --backend cpu" \
    "knn --ref $tmp/c.npy --query $tmp/cq.npy -k 3" "radius --ref $tmp/c.npy -r 0.1" \
    "gravity --bodies $tmp/c.npy" "paircount --data1 $tmp/c.npy --rmax 0.3 --nbins 4" \
    "graph bfs --graph $DATA/graph/small.mtx" "tree heights --gen random1 --max-nodes 200" \
    "predict --model $DATA/forest/xgb_binary.json --data $DATA/forest/xgb_binary.X.npy"; do
    # shellcheck disable=SC2086
    run 0 $args -o "$tmp/s.npy" --quiet --stats=json
    check "$args: no CUDA load attempt" [ "$(attempts "$tmp/err")" = 0 ]
done
run 0 knn --ref "$tmp/big.npy" --query "$tmp/bigq.npy" -k 2 -o "$tmp/s.npy" --quiet --stats=json
check "knn auto, 20000 queries: tries CUDA" [ "$(attempts "$tmp/err")" = 1 ]

# The module hidden: CPU commands run, auto falls back to the CPU silently.
export CANOPY_CUDA_MODULE="$tmp/nowhere/libcanopy_cuda.so"
run 0 info
check "info: module not loaded, with the path" grep -q "^cuda: *not loaded (.*$tmp/nowhere" "$tmp/out"
check "info: backends cpu only" grep -q "^backends: cpu$" "$tmp/out"
run 0 gen uniform --n 400 --d 3 --seed 4 -o "$tmp/r.npy" --nq 90 --query-out "$tmp/q.npy"
run 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 3 -o "$tmp/i_auto.npy"
run 0 knn --ref "$tmp/r.npy" --query "$tmp/q.npy" -k 3 --backend cpu -o "$tmp/i_cpu.npy"
check "knn auto without the module equals cpu" cmp -s "$tmp/i_auto.npy" "$tmp/i_cpu.npy"
check "knn auto: nothing on stderr" test ! -s "$tmp/err"
run 0 gravity --bodies "$tmp/r.npy" -o "$tmp/acc.npy"
run 0 paircount --data1 "$tmp/r.npy" --rmax 0.3 --nbins 4 -o "$tmp/pc.npy"
run 0 index build --ref "$tmp/r.npy" -o "$tmp/r.idx"
run 0 graph bfs --graph "$DATA/graph/small.mtx" -o "$tmp/bfs.npy"
run 0 tree heights --gen random1 --max-nodes 200 -o "$tmp/h.npy"
run 0 predict --model "$DATA/forest/xgb_binary.json" --data "$DATA/forest/xgb_binary.X.npy" \
    -o "$tmp/p.npy"

# --backend gpu: a clear error naming the missing module, exit 1, no output file.
run 1 knn --ref "$tmp/r.npy" -k 2 --backend gpu -o "$tmp/gpu.npy"
check "knn --backend gpu: names the missing module" grep -q "CUDA module.*does not exist" "$tmp/err"
check "knn --backend gpu: one prefix" grep -q "^canopy knn: the CUDA module" "$tmp/err"
check "knn --backend gpu: no output" test ! -e "$tmp/gpu.npy"
run 1 predict --model "$DATA/forest/xgb_binary.json" --data "$DATA/forest/xgb_binary.X.npy" \
    --backend gpu -o "$tmp/gpu.npy"
check "predict --backend gpu: reason and hint" grep -q "CUDA module.*use --backend cpu" "$tmp/err"
run 1 graph bfs --graph "$DATA/graph/small.mtx" --backend gpu -o "$tmp/gpu.npy"
check "graph --backend gpu: names the missing module" grep -q "CUDA module" "$tmp/err"
run 1 tree heights --gen random1 --max-nodes 100 --backend gpu -o "$tmp/gpu.npy"
check "tree --backend gpu: names the missing module" grep -q "CUDA module" "$tmp/err"
check "no GPU output anywhere" test -z "$(ls "$tmp" | grep gpu)"

# A file that is not a module, and a module of another table ABI: refused by name.
printf 'not an ELF file\n' >"$tmp/junk.so"
CANOPY_CUDA_MODULE="$tmp/junk.so" run 0 info
check "junk module: cannot load" grep -q "^cuda: *not loaded (the CUDA module $tmp/junk.so cannot load" "$tmp/out"
if command -v cc >/dev/null; then
    cat >"$tmp/old.c" <<'EOF'
#include <stdint.h>
static const struct { uint32_t abi, size; const char *version; } table = {0, 24, "0.0.1"};
const void *canopy_cuda_module_entry(const void *host) { (void)host; return &table; }
EOF
    if cc -shared -fPIC -o "$tmp/old.so" "$tmp/old.c" 2>"$tmp/cc.err"; then
        CANOPY_CUDA_MODULE="$tmp/old.so" run 0 info
        check "old module: refused as another canopy's" grep -q "was built for another canopy" "$tmp/out"
        CANOPY_CUDA_MODULE="$tmp/old.so" run 1 knn --ref "$tmp/r.npy" -k 2 --backend gpu -o "$tmp/gpu.npy"
        check "old module: knn --backend gpu says so" grep -q "built for another canopy" "$tmp/err"
    else
        bad "cc could not build the stand-in module: $(cat "$tmp/cc.err")"
    fi
    # A module of this ABI and version whose slices differ from this library's (a
    # subsystem's entries changed without an ABI bump): it loads, and each GPU call of
    # such a slice is refused, naming the slice, with no output.
    cat >"$tmp/slices.c" <<'EOF'
#include "core/cuda_module.h"
static int device_count(char *why, size_t len) { (void)why; (void)len; return 1; }
static canopy_status gpu_info(char *name, size_t len, size_t *total) {
    if (name && len) name[0] = '\0';
    if (total) *total = 0;
    return CANOPY_OK;
}
static const int stub;
static const canopy_cuda_slice_def slices[] = {{"core", 8, "other entries;", &stub},
                                               {"apps", 32, "other entries;", &stub}};
static const canopy_cuda_module table = {CANOPY_CUDA_MODULE_ABI, sizeof table, CANOPY_VERSION_STRING,
                                         device_count, gpu_info, 2, slices};
const canopy_cuda_module *canopy_cuda_module_entry(const canopy_cuda_host *h) {
    (void)h;
    return &table;
}
EOF
    root=$(cd "$(dirname "$0")/.." && pwd)
    if cc -shared -fPIC -I"$root/include" -I"$root/src" -o "$tmp/slices.so" "$tmp/slices.c" \
        2>"$tmp/cc.err"; then
        CANOPY_CUDA_MODULE="$tmp/slices.so" run 0 info
        check "other slices: the module loads" grep -q "^cuda: *$tmp/slices.so" "$tmp/out"
        CANOPY_CUDA_MODULE="$tmp/slices.so" run 1 knn --ref "$tmp/r.npy" -k 2 --backend gpu \
            -o "$tmp/gpu.npy"
        check "other slices: knn --backend gpu names the slice" \
            grep -q "CUDA module $tmp/slices.so was built for another canopy (its [a-z]* entries differ" "$tmp/err"
        check "other slices: no output" test ! -e "$tmp/gpu.npy"
    else
        bad "cc could not build the stand-in module with other slices: $(cat "$tmp/cc.err")"
    fi
    # A module whose CUDA runtime is missing: the loader's message names the library.
    mkdir -p "$tmp/rt"
    echo 'int cuda_runtime_stub;' >"$tmp/rt/stub.c"
    if cc -shared -fPIC -Wl,-soname,libcudart.so.999 -o "$tmp/rt/libcudart.so.999" "$tmp/rt/stub.c" &&
        cc -shared -fPIC -o "$tmp/needs_rt.so" "$tmp/old.c" -Wl,--no-as-needed "$tmp/rt/libcudart.so.999" \
            2>"$tmp/cc.err"; then
        rm -r "$tmp/rt"
        CANOPY_CUDA_MODULE="$tmp/needs_rt.so" run 0 info
        check "module without its CUDA runtime: cannot load, libcudart named" \
            grep -q "^cuda: *not loaded (the CUDA module $tmp/needs_rt.so cannot load: libcudart.so.999" "$tmp/out"
    else
        bad "cc could not build the stand-in module needing libcudart: $(cat "$tmp/cc.err")"
    fi
fi

# A CUDA build: the module has one exported symbol and loads from beside the CLI, or
# renamed, through CANOPY_CUDA_MODULE.
unset CANOPY_CUDA_MODULE
if [ -n "$module" ]; then
    nm -D --defined-only "$module" | awk '{print $3}' >"$tmp/exports"
    check "module exports only its entry" [ "$(cat "$tmp/exports")" = canopy_cuda_module_entry ]
    run 0 info
    check "info: module found beside the CLI" grep -q "^cuda: *$module" "$tmp/out"
    cp "$module" "$tmp/renamed.so"
    CANOPY_CUDA_MODULE="$tmp/renamed.so" run 0 info
    check "info: renamed module loads" grep -q "^cuda: *$tmp/renamed.so" "$tmp/out"
    # Why a loaded module has no GPU, on the gpu: line: no driver at all, or a driver
    # with every device hidden, each named as such (and knn says the same).
    CUDA_VISIBLE_DEVICES= run 0 info
    if [ -e /proc/driver/nvidia/version ] || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
        check "info: devices hidden" grep -q "^gpu: *none (no CUDA device is visible (NVIDIA driver for CUDA [0-9]" "$tmp/out"
    else
        check "info: no driver" grep -q "^gpu: *none (no NVIDIA driver is installed" "$tmp/out"
    fi
    CUDA_VISIBLE_DEVICES= run 1 knn --ref "$tmp/r.npy" -k 2 --backend gpu -o "$tmp/gpu.npy"
    check "knn --backend gpu without a device: the reason named" \
        grep -qE "^canopy knn: (.*: )?no (CUDA device is visible|NVIDIA driver is installed)" "$tmp/err"
fi
cli_finish
