#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The canopy command under the hostile files and data of issue 35 (one block per row
# of its table; row 8 is cli_paircount.sh's, rows 9 and 13 are not CLI checks):
# crafted index files with a valid checksum, outputs that are inputs, multi-output runs
# that fail half way, out-of-range checkpoints, non-finite model constants, coincident
# bodies in nbody, FIFOs as inputs. Each check fails on the code before the fix.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_hostile_files.sh CANOPY_BINARY}
command -v python3 >/dev/null && python3 -c "import numpy" 2>/dev/null || { echo "python3 with numpy needed: skipped"; exit 77; }
tmp=$(mktemp -d /tmp/canopy-cli-hostile-files.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"
has() { check "$1: stderr lacks '$2'" grep -q -- "$2" "$tmp/err"; }
data=$(dirname "$0")/data/forest

"$CANOPY" gen uniform --n 300 --d 3 --seed 1 -o "$tmp/X.npy" >/dev/null
"$CANOPY" gen uniform --n 20 --d 3 --seed 2 -o "$tmp/Q.npy" >/dev/null
"$CANOPY" index build --ref "$tmp/X.npy" --tree kd -o "$tmp/kd.idx" >/dev/null
"$CANOPY" index build --ref "$tmp/X.npy" --tree oct -o "$tmp/oct.idx" >/dev/null

# craft SRC DST EDIT: DST is SRC with EDIT applied to its sections (python, given
# meta = int64 header, hot = node records as int32/float32 words, pts = points),
# checksum recomputed.
craft() {
    python3 - "$1" "$2" "$3" <<'PY'
import struct, sys, zlib
import numpy as np
src, dst, edit = sys.argv[1:]
b = bytearray(open(src, "rb").read())
n = struct.unpack_from("<I", b, 24)[0]
sec = {}
for i in range(n):
    sid, esz, off, ln = struct.unpack_from("<IIQQ", b, 64 + 24 * i)
    sec[sid] = (off, ln)
meta = np.frombuffer(b, np.int64, 11, sec[1][0])
stride = int(meta[4]) // 4
hot_i = np.frombuffer(b, np.int32, sec[2][1] // 4, sec[2][0]).reshape(-1, stride)
hot_f = np.frombuffer(b, np.float32, sec[2][1] // 4, sec[2][0]).reshape(-1, stride)
pts = np.frombuffer(b, np.float32, sec[3][1] // 4, sec[3][0])
d = int(meta[2])
leaf = int(np.nonzero((hot_i[:, 0] == -1) & (hot_i[:, 3] - hot_i[:, 2] > 1))[0][0])
exec(edit)
struct.pack_into("<I", b, 28, 0)
# CRC-32C (Castagnoli), as the loader computes it
crc = 0xFFFFFFFF
tab = [0] * 256
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    tab[i] = c
for x in bytes(b):
    crc = tab[(crc ^ x) & 0xFF] ^ (crc >> 8)
struct.pack_into("<I", b, 28, crc ^ 0xFFFFFFFF)
open(dst, "wb").write(b)
PY
}
meta_w() { echo "m = np.frombuffer(b, np.int64, 11, sec[1][0]); m.setflags(write=True); $1"; }

# ---- rows 1, 2, 6: crafted index files, checksum valid ----
craft "$tmp/kd.idx" "$tmp/fan9.idx" "$(meta_w 'm[7] = 9'); hot_i.setflags(write=True); hot_i[0, 1] = 9"
run 1 knn --index "$tmp/fan9.idx" --query "$tmp/Q.npy" -k 2 -o "$tmp/o.npy"
has "kd node with 9 children" "fan-out of a binary tree kind is not 2"
check "fan-out 9 wrote an output" test ! -e "$tmp/o.npy"
craft "$tmp/oct.idx" "$tmp/fan1024.idx" "$(meta_w 'm[7] = 1024')"
run 1 radius --index "$tmp/fan1024.idx" --query "$tmp/Q.npy" -r 0.1 -o "$tmp/o.npy"
has "octree fan-out 1024" "fan-out above the engines' limit of 8"
craft "$tmp/kd.idx" "$tmp/one.idx" "hot_i.setflags(write=True); hot_i[0, 1] = 1"
run 1 knn --index "$tmp/one.idx" --query "$tmp/Q.npy" -k 2 --variant simd_l -o "$tmp/o.npy"
has "kd node with one child, simd_l" "without exactly two children"
craft "$tmp/kd.idx" "$tmp/hilo.idx" "hot_f.setflags(write=True); hot_f[leaf, 4 + d] = hot_f[leaf, 4] - 1"
run 1 radius --index "$tmp/hilo.idx" --query "$tmp/Q.npy" -r 0.3 -o "$tmp/o.npy"
has "leaf box hi < lo" "box has lo > hi"
craft "$tmp/kd.idx" "$tmp/root.idx" "hot_f.setflags(write=True); hot_f[0, 4] = hot_f[0, 4 + d] = 5"
run 1 radius --index "$tmp/root.idx" --query "$tmp/Q.npy" -r 0.3 -o "$tmp/o.npy"
has "false root box" "not inside its parent's"
craft "$tmp/kd.idx" "$tmp/nan.idx" "pts.setflags(write=True); pts[7] = np.nan"
run 1 radius --index "$tmp/nan.idx" --query "$tmp/Q.npy" -r 0.3 -o "$tmp/o.npy"
has "NaN point" "point coordinate is not finite"
run 0 radius --index "$tmp/kd.idx" --query "$tmp/Q.npy" -r 0.3 -o "$tmp/o.npy"
rm -f "$tmp/o.npy"

# ---- row 3: nbody never writes over its inputs ----
"$CANOPY" gen plummer --n 64 --seed 3 -o "$tmp/b.npy" --velocities "$tmp/v.npy" >/dev/null
cp "$tmp/b.npy" "$tmp/b.orig"
nb=(--velocities "$tmp/v.npy" --steps 2 --dt 0.01 --softening 0.05)
run 1 nbody --bodies "$tmp/b.npy" "${nb[@]}" --checkpoint "$tmp/b.npy"
has "--checkpoint over --bodies" "is the input"
run 1 nbody --bodies "$tmp/b.npy" "${nb[@]}" --checkpoint "$tmp/./v.npy"
has "--checkpoint over --velocities" "is the input"
mkdir "$tmp/snap"
cp "$tmp/b.npy" "$tmp/snap/positions_000002.npy"
run 1 nbody --bodies "$tmp/snap/positions_000002.npy" "${nb[@]}" --snapshot-every 1 -o "$tmp/snap"
has "input among the snapshots" "lies in the snapshot folder"
check "the snapshot-named input was replaced" cmp -s "$tmp/b.orig" "$tmp/snap/positions_000002.npy"
check "nbody replaced its input" cmp -s "$tmp/b.orig" "$tmp/b.npy"
run 0 nbody --bodies "$tmp/b.npy" "${nb[@]}" --checkpoint "$tmp/c.ckpt"
run 0 nbody --restart "$tmp/c.ckpt" --steps 4 --checkpoint "$tmp/c.ckpt"

# ---- row 4: a multi-output run is all or nothing ----
echo OLD >"$tmp/o.npy"
run 1 knn --ref "$tmp/X.npy" -k 2 -o "$tmp/o.npy" --distances "$tmp/nodir/x.npy"
has "missing --distances folder" "nodir/x.npy"
check "-o was changed by a failed run" [ "$(cat "$tmp/o.npy")" = OLD ]
echo OLD >"$tmp/d.npy"
run 0 knn --ref "$tmp/X.npy" -k 2 -o "$tmp/o.npy" --distances "$tmp/d.npy"
check "both outputs new" [ "$(head -c 6 "$tmp/o.npy" | tail -c 5)$(head -c 6 "$tmp/d.npy" | tail -c 5)" = NUMPYNUMPY ]
check "no temporary left" [ -z "$(ls "$tmp" | grep '\.tmp\.')" ]

# ---- row 5: a checkpoint with an out-of-range step (checksum recomputed) ----
python3 - "$tmp/c.ckpt" "$tmp/neg.ckpt" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<q", b, 24, -5)
h = 0xcbf29ce484222325
for x in bytes(b[:-8]):
    h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
struct.pack_into("<Q", b, len(b) - 8, h)
open(sys.argv[2], "wb").write(b)
PY
run 1 nbody --restart "$tmp/neg.ckpt" --steps 8
has "negative checkpoint step" "step -5 out of range"

# ---- row 7: non-finite model constants ----
sed 's/"base_score":"[^"]*"/"base_score":"inf"/' "$data/xgb_poisson.json" >"$tmp/inf.json"
run 1 predict --model "$tmp/inf.json" --data "$data/xgb_poisson.X.npy" -o "$tmp/y.npy"
has "XGBoost base_score inf" "not finite"
check "predict wrote inf" test ! -e "$tmp/y.npy"
sed 's/"base_score":"[^"]*"/"base_score":"[NaN]"/' "$data/xgb_reg.json" >"$tmp/nan.json"
run 1 predict --model "$tmp/nan.json" --data "$data/xgb_reg.X.npy" -o "$tmp/y.npy"
has "XGBoost base_score NaN" "not finite"
run 0 forest compile --model "$data/xgb_binary.json" --layout hybrid -o "$tmp/m.cpf"
# craft_cpf IN OUT MODE: a valid checksum over a changed .cpf; MODE scale: sigmoid scale
# NaN; swap: the root's children swapped (left = right + 1: siblings out of order)
craft_cpf() {
    python3 - "$@" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack_from("<I", b, 24)[0]
sec = {}
for i in range(n):
    sid, esz, off, ln = struct.unpack_from("<IIQQ", b, 64 + 24 * i)
    sec[sid] = off
if sys.argv[3] == "scale":
    struct.pack_into("<d", b, sec[2] + 96, float("nan"))  # names: objective[64], source[32], scale
else:  # sections 7 and 8: left and right children, int32 per node
    l, r = struct.unpack_from("<i", b, sec[7])[0], struct.unpack_from("<i", b, sec[8])[0]
    struct.pack_into("<i", b, sec[7], r)
    struct.pack_into("<i", b, sec[8], l)
struct.pack_into("<I", b, 28, 0)
crc = 0xFFFFFFFF
tab = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    tab.append(c)
for x in bytes(b):
    crc = tab[(crc ^ x) & 0xFF] ^ (crc >> 8)
struct.pack_into("<I", b, 28, crc ^ 0xFFFFFFFF)
open(sys.argv[2], "wb").write(b)
PY
}
craft_cpf "$tmp/m.cpf" "$tmp/sig.cpf" scale
run 1 predict --model "$tmp/sig.cpf" --data "$data/xgb_binary.X.npy" -o "$tmp/y.npy"
has ".cpf sigmoid scale NaN" "sigmoid scale nan must be finite"
# found by fuzz_predictor: the cc and hybrid layouts emit siblings as (left, left + 1);
# a file whose children were not adjacent overflowed the layout's order array
craft_cpf "$tmp/m.cpf" "$tmp/swap.cpf" swap
run 1 predict --model "$tmp/swap.cpf" --data "$data/xgb_binary.X.npy" -o "$tmp/y.npy"
has ".cpf children not adjacent" "tree 0 node 0 has children 2 and 1, not adjacent"
check "predict wrote an output from a bad .cpf" test ! -e "$tmp/y.npy"

# ---- row 10: nbody applies gravity's coincident-body rule ----
python3 -c "
import numpy as np
a = np.random.default_rng(1).random((64, 3)); a[40] = a[9]
np.save('$tmp/co.npy', a); np.save('$tmp/cov.npy', np.zeros((64, 3)))"
run 1 nbody --bodies "$tmp/co.npy" --velocities "$tmp/cov.npy" --steps 1 --dt 0.01 --opening list
has "nbody, coincident bodies, softening 0" "bodies 9 and 40 are at the same position"
run 0 nbody --bodies "$tmp/co.npy" --velocities "$tmp/cov.npy" --steps 1 --dt 0.01 --opening list \
    --softening 0.01

# ---- row 12: a FIFO as an input fails at once, never blocks ----
mkfifo "$tmp/fifo"
t0=$(date +%s)
run 1 knn --index "$tmp/fifo" --query "$tmp/Q.npy" -k 2 -o "$tmp/o.npy"
has "FIFO as --index" "not a regular file"
run 1 knn --ref "$tmp/fifo" -k 2 -o "$tmp/o.npy"
run 1 nbody --restart "$tmp/fifo" --steps 1
check "FIFO inputs blocked ($(($(date +%s) - t0)) s)" [ $(($(date +%s) - t0)) -lt 20 ]

cli_finish
