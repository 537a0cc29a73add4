#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The canopy command under hostile outputs, inputs and faults (issue 21, all rows of
# its table but the regex ones, which cli_grep_hostile.sh covers): outputs that are
# devices, FIFOs, inputs or each other; signals while writing; write errors on
# standard output; headers that declare more than the file can hold; impossible
# models; coincident bodies without softening. Each check fails on the code before.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_hostile.sh CANOPY_BINARY}
command -v python3 >/dev/null && python3 -c "import numpy" 2>/dev/null || { echo "python3 with numpy needed: skipped"; exit 77; }
tmp=$(mktemp -d /tmp/canopy-cli-hostile.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"
has() { check "$1: stderr lacks '$2'" grep -q -- "$2" "$tmp/err"; }

"$CANOPY" gen uniform --n 200 --d 3 --seed 1 -o "$tmp/X.npy" >/dev/null
cp "$tmp/X.npy" "$tmp/X.orig"

# ---- outputs that are not regular files ----
# /dev/null directly: the tests run as root, where the old atomic rename replaced it.
run 1 knn --ref "$tmp/X.npy" -k 2 -o /dev/null
has "-o /dev/null" "not a regular file"
check "/dev/null is no longer a character device" test -c /dev/null
mkfifo "$tmp/fifo"
run 1 knn --ref "$tmp/X.npy" -k 2 -o "$tmp/fifo"
has "-o FIFO" "not a regular file"
check "the FIFO was replaced" test -p "$tmp/fifo"
mkdir "$tmp/dir"
run 1 radius --ref "$tmp/X.npy" -r 0.1 -o "$tmp/dir"
has "-o DIR" "not a regular file"

# ---- -o - streams .npy to standard output, without the summary line ----
run 0 knn --ref "$tmp/X.npy" -k 2 -o -
"$CANOPY" knn --ref "$tmp/X.npy" -k 2 -o "$tmp/I.npy" >/dev/null
check "-o - differs from -o FILE" cmp -s "$tmp/out" "$tmp/I.npy"
run 1 knn --ref "$tmp/X.npy" -k 2 -o - --distances -
has "two outputs on stdout" "only one output"

# ---- an output that names an input or another output ----
run 1 knn --ref "$tmp/X.npy" -k 2 -o "$tmp/X.npy"
has "-o INPUT" "is the input"
check "the input was overwritten" cmp -s "$tmp/X.npy" "$tmp/X.orig"
ln "$tmp/X.npy" "$tmp/hard.npy"
run 1 gravity --bodies "$tmp/hard.npy" -o "$tmp/X.npy"
has "-o INPUT through a hard link" "is the input"
run 1 knn --ref "$tmp/X.npy" -k 2 -o "$tmp/F.npy" --distances "$tmp/dir/../F.npy"
has "-o F --distances F" "are the same file"
check "a file was written although the outputs clash" test ! -e "$tmp/F.npy"
run 1 gen uniform --n 10 --d 2 -o "$tmp/G.npy" --query-out "$tmp/./G.npy"
has "gen -o G --query-out ./G" "are the same file"

# ---- signals while an output is written leave no temporary file ----
sig_test() { # sig_test SIGNAL WANT_RC
    (
        set -m # job control: a background job's SIGINT is not ignored
        "$CANOPY" gen uniform --n 3000000 --d 3 -o "$tmp/sig/big.csv" >/dev/null 2>&1 &
        pid=$!
        for _ in $(seq 1 600); do
            ls "$tmp/sig" | grep -q tmp && break
            sleep 0.05
        done
        kill -"$1" "$pid"
        wait "$pid"
        echo $? >"$tmp/sig.rc"
    ) 2>/dev/null
    check "SIG$1: exit status $(cat "$tmp/sig.rc"), want $2" test "$(cat "$tmp/sig.rc")" = "$2"
    check "SIG$1: files left behind: $(ls "$tmp/sig")" test -z "$(ls "$tmp/sig")"
}
mkdir "$tmp/sig"
sig_test INT 130
sig_test TERM 143

# ---- a signal at any moment of a two-output run leaves both old or both new ----
# SIGTERM lands at random times across a whole run (loading, the walk, the writes, the
# two renames, which defer it); the pair of outputs must never mix runs, and no
# temporary file may stay.
run 0 gen uniform --n 100000 --d 3 --seed 3 -o "$tmp/sr.npy"
pair=(knn --ref "$tmp/sr.npy" -k 16 --backend cpu)
"$CANOPY" knn --ref "$tmp/sr.npy" -k 2 -o "$tmp/old_i.npy" --distances "$tmp/old_d.npy" >/dev/null
t0=$(date +%s%N)
"$CANOPY" "${pair[@]}" -o "$tmp/new_i.npy" --distances "$tmp/new_d.npy" >/dev/null
run_ms=$((($(date +%s%N) - t0) / 1000000 + 1))
mkdir "$tmp/set"
mixed=0 leftover=0 outcomes=""
for _ in $(seq 1 20); do
    cp "$tmp/old_i.npy" "$tmp/set/i.npy"
    cp "$tmp/old_d.npy" "$tmp/set/d.npy"
    "$CANOPY" "${pair[@]}" -o "$tmp/set/i.npy" --distances "$tmp/set/d.npy" >/dev/null 2>&1 &
    pid=$! # canopy itself (a function here would be a subshell the signal stops instead)
    sleep "$(awk -v r=$RANDOM -v ms=$run_ms 'BEGIN { printf "%.3f", r / 32768 * ms * 1.2 / 1000 }')"
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    i=old d=old
    cmp -s "$tmp/set/i.npy" "$tmp/new_i.npy" && i=new
    cmp -s "$tmp/set/d.npy" "$tmp/new_d.npy" && d=new
    cmp -s "$tmp/set/i.npy" "$tmp/old_i.npy" || [ $i = new ] || i=other
    cmp -s "$tmp/set/d.npy" "$tmp/old_d.npy" || [ $d = new ] || d=other
    [ $i = $d ] && [ $i != other ] || mixed=$((mixed + 1))
    [ "$(ls "$tmp/set" | wc -l)" -eq 2 ] || leftover=$((leftover + 1))
    outcomes="$outcomes $i"
done
check "SIGTERM during a two-output run mixed old and new $mixed times in 20 ($outcomes)" \
    test $mixed -eq 0
check "SIGTERM during a two-output run left temporary files $leftover times" test $leftover -eq 0

# ---- write errors on standard output ----
if [ -w /dev/full ]; then
    "$CANOPY" info >/dev/full 2>"$tmp/err"
    check "info > /dev/full exited 0" test $? -eq 1
    has "info > /dev/full" "error writing standard output"
    "$CANOPY" knn --ref "$tmp/X.npy" -k 2 -o - >/dev/full 2>"$tmp/err"
    check "knn -o - > /dev/full exited 0" test $? -eq 1
fi

# ---- sizes declared in headers, checked against the file before allocating ----
# fast SECONDS ARGS...: exit 1 within SECONDS (the old code spent tens of seconds and
# gigabytes, or wrote hundreds of megabytes), with the file named in the message.
fast() {
    local secs=$1
    shift
    timeout "$secs" "$CANOPY" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq 1 ]; then ok; else bad "canopy $* exited $rc, want 1 within ${secs}s"; fi
}
printf '%%%%MatrixMarket matrix coordinate pattern general\n2000000000 2000000000 1\n1 1\n' \
    >"$tmp/big.mtx"
fast 5 graph bfs --graph "$tmp/big.mtx" -o "$tmp/o.npy"
has "2e9-row .mtx" "big.mtx: the size line declares 2000000000 vertices"
printf '0 2000000000\n' >"$tmp/big.el"
fast 5 graph bfs --graph "$tmp/big.el" -o "$tmp/o.npy"
has "13-byte edge list" "big.el: its vertex ids make 2000000001 vertices"
printf 'p sp 99999998 0\n' >"$tmp/big.gr"
fast 5 graph sssp --graph "$tmp/big.gr" -o "$tmp/o.npy"
has "16-byte .gr" "big.gr: the problem line declares 99999998 vertices"
check ".gr: an output was written" test ! -e "$tmp/o.npy"
lgb=$(dirname "$0")/data/forest/lgb_reg.txt
sed 's/^num_leaves=.*/num_leaves=100000000/' "$lgb" >"$tmp/leaves.txt"
fast 5 predict --model "$tmp/leaves.txt" --format lightgbm \
    --data "$(dirname "$0")/data/forest/lgb_reg.X.npy" -o "$tmp/o.npy"
has "LightGBM num_leaves=1e8" "leaves.txt: Tree=0: num_leaves=100000000 but leaf_value"
python3 -c "import numpy as np; np.save('$tmp/k.npy', np.array([1, 2, 3], np.float32))"
fast 5 bptree --keys "$tmp/k.npy" --queries "$tmp/k.npy" --buckets 268435456 -o "$tmp/o.npy"
has "bptree --buckets 2^28 for 3 keys" "k.npy: bucket count 268435456 for 3 keys"

# ---- gravity on coincident bodies without softening: an error, not NaN ----
# (the list opening, the default, used to skip the pair and exit 0; -0.0 equals 0.0)
python3 -c "
import numpy as np
a = np.random.default_rng(1).random((64, 3), dtype=np.float32); a[40] = a[9]
a[9, 0] = a[40, 0] = 0.0; a[9, 0] = -0.0
np.save('$tmp/co.npy', a)"
for opening in body list; do
    run 1 gravity --bodies "$tmp/co.npy" --opening $opening -o "$tmp/acc.npy"
    has "coincident bodies, $opening opening" "bodies 9 and 40 are at the same position"
    check "gravity wrote an output ($opening opening)" test ! -e "$tmp/acc.npy"
done
run 0 gravity --bodies "$tmp/co.npy" --softening 0.01 -o "$tmp/acc.npy"

# ---- 100k coincident softened bodies (issue 35 row 9): list opening treats them as one
# point (a direct sum among them took 26 s), body opening refuses them ----
python3 -c "
import numpy as np
a = np.full((100000, 3), 0.5, np.float32)
a[:20] = np.random.default_rng(2).random((20, 3), dtype=np.float32)
np.save('$tmp/co100k.npy', a); np.save('$tmp/v100k.npy', np.zeros((100000, 3)))"
timed0() {
    timeout 10 "$CANOPY" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq 0 ]; then ok; else bad "canopy $* exited $rc, want 0 within 10s"; fi
}
timed0 gravity --bodies "$tmp/co100k.npy" --softening 0.01 -o "$tmp/acc.npy"
timed0 nbody --bodies "$tmp/co100k.npy" --velocities "$tmp/v100k.npy" --steps 1 --dt 0.001 \
    --softening 0.01
run 1 gravity --bodies "$tmp/co100k.npy" --softening 0.01 --opening body -o "$tmp/acc2.npy"
has "100k coincident bodies, body opening" "bodies in a leaf the octree cannot split"

# ---- model importers refuse impossible nodes and inconsistent counts ----
data=$(dirname "$0")/data/forest
cat >"$tmp/neg.json" <<'JSON'
{"format": "canopy-forest", "version": 1, "n_features": 2, "trees": [{"output": 0,
 "feature": [0, -2, -1], "threshold": [0.5, 0, 0], "left": [1, 2, -1],
 "right": [2, 1, -1], "value": [0, 1, 2]}]}
JSON
run 1 forest info --model "$tmp/neg.json" --format canopy
has "canopy JSON node with children and feature -2" "node 1: feature -2 with children"
sed 's/^num_class=5/num_class=0/' "$data/lgb_multi.txt" >"$tmp/nc0.txt"
run 1 forest info --model "$tmp/nc0.txt" --format lightgbm
has "LightGBM num_class=0" "num_class=0"
sed 's/"num_trees":"15"/"num_trees":"14"/' "$data/xgb_multi.json" >"$tmp/nt.json"
run 1 forest info --model "$tmp/nt.json" --format xgboost
has "XGBoost num_trees 14 for 15 trees" "num_trees is 14 but the model has 15 trees"

cli_finish
