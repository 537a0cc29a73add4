#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy bptree` end to end: lookups equal a reference (awk over CSV files; NumPy's
# searchsorted on .npy files when NumPy is importable) for every method, layout and
# engine; usage errors exit 2; bad input exits 1 with a message naming the problem
# and leaves no output file; --help answers.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_bptree.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-bptree.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

# keys: 600 distinct integers in random order (k = 7 j mod 4201, as floats), values 3 k + 1
awk 'BEGIN { for (j = 1; j <= 600; j++) { k = (7 * j * 13) % 4201; print k } }' >"$tmp/k.csv"
awk '{ print 3 * $1 + 1 }' "$tmp/k.csv" >"$tmp/v.csv"
# queries: every integer in [-5, 4210) (hits and misses, below and above), then repeats
awk 'BEGIN { for (q = -5; q < 4210; q++) print q; for (i = 0; i < 50; i++) print 91 }' >"$tmp/q.csv"
# the reference: value of the equal key or -1
awk 'NR == FNR { v[$1] = 3 * $1 + 1; next } { print (($1 in v) ? v[$1] : -1) }' \
    "$tmp/k.csv" "$tmp/q.csv" >"$tmp/want.csv"

same() { cmp -s "$1" "$2"; }
run 0 bptree --keys "$tmp/k.csv" --values "$tmp/v.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv"
check "default run equals the reference" same "$tmp/o.csv" "$tmp/want.csv"
check "summary line" grep -q "4265 queries over 600 keys, 650 found" "$tmp/out"
run 0 bptree --keys "$tmp/k.csv" --values "$tmp/v.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" \
    --method pointer
check "pointer baseline equals the reference" same "$tmp/o.csv" "$tmp/want.csv"
for layout in auto csr hier df bf ll sll cc hybrid; do
    engines="scalar"
    case $layout in df | bf | ll | sll | cc | hybrid) engines="scalar vm vm_simd" ;; esac
    for engine in $engines; do
        for b in 1 7 600; do
            run 0 bptree --keys "$tmp/k.csv" --values "$tmp/v.csv" --queries "$tmp/q.csv" \
                -o "$tmp/o.csv" --layout $layout --engine $engine --buckets $b --threads 2
            check "$layout/$engine/$b buckets equals the reference" same "$tmp/o.csv" "$tmp/want.csv"
        done
    done
done
run 0 bptree --keys "$tmp/k.csv" --values "$tmp/v.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" \
    --layout hybrid --switch-level 2 --engine vm_simd --no-compaction
check "hybrid, no compaction equals the reference" same "$tmp/o.csv" "$tmp/want.csv"
run 0 bptree --keys "$tmp/k.csv" --values "$tmp/v.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" \
    --layout hier --hier-depth 3
check "hier depth 3 equals the reference" same "$tmp/o.csv" "$tmp/want.csv"
# without --values a key's value is its row; --not-found sets the marker
run 0 bptree --keys "$tmp/k.csv" --queries "$tmp/k.csv" -o "$tmp/o.csv"
check "values default to the row" same "$tmp/o.csv" <(seq 0 599)
printf '5\n' >"$tmp/miss.csv"
run 0 bptree --keys "$tmp/k.csv" --queries "$tmp/miss.csv" -o "$tmp/o.csv" --not-found 99
check "--not-found marker" same "$tmp/o.csv" <(echo 99)
# --stats
run 0 bptree --keys "$tmp/k.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" --stats
check "--stats: tree shape" grep -q "^tree: 600 keys, 2 buckets" "$tmp/err"
check "--stats: measured lookups" grep -q "lookups/s, measured" "$tmp/err"
# --help
run 0 bptree --help
check "--help" grep -q "usage: canopy bptree" "$tmp/out"
run 0 help bptree
check "canopy --help lists bptree" sh -c "'$CANOPY' --help | grep -q bptree"

# npy input and a random check against NumPy
if python3 -c 'import numpy' 2>/dev/null; then
    python3 - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(5)
k = np.unique(rng.normal(size=20000).astype(np.float32) * np.float32(100))
v = rng.integers(-2**40, 2**40, size=k.size)
perm = rng.permutation(k.size)
q = np.concatenate([k[rng.integers(0, k.size, 30000)], np.nextafter(k[:5000], np.float32(np.inf)),
                    rng.normal(size=5000).astype(np.float32) * np.float32(300),
                    np.array([np.nan, np.inf, -np.inf], np.float32)])
i = np.clip(np.searchsorted(k, q), 0, k.size - 1)
want = np.where(k[i] == q, v[i], -1)
np.save(f"{d}/k.npy", k[perm]); np.save(f"{d}/v.npy", v[perm].astype(np.int64))
np.save(f"{d}/q.npy", q); np.save(f"{d}/want.npy", want)
PY
    # zero keys: everything is absent
    python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.zeros(0, np.float32))" "$tmp/e.npy"
    run 0 bptree --keys "$tmp/e.npy" --queries "$tmp/q.csv" -o "$tmp/o.csv"
    check "no keys: all -1" test "$(sort -u "$tmp/o.csv")" = "-1"
    same_npy() { python3 -c "import sys, numpy as np; a=np.load(sys.argv[1]); b=np.load(sys.argv[2]); sys.exit(0 if a.dtype == np.int64 and np.array_equal(a, b) else 1)" "$1" "$2"; }
    for m in "--method pointer" "--layout sll --engine vm_simd" "--layout cc" "--layout hybrid --engine vm"; do
        # shellcheck disable=SC2086
        run 0 bptree --keys "$tmp/k.npy" --values "$tmp/v.npy" --queries "$tmp/q.npy" -o "$tmp/o.npy" $m
        check "npy $m equals numpy" same_npy "$tmp/o.npy" "$tmp/want.npy"
    done
else
    echo "numpy check skipped: python3 with numpy is not available"
fi

# usage errors: exit 2
usage_error bptree --queries "$tmp/q.csv" -o "$tmp/o.csv"
usage_error bptree --keys "$tmp/k.csv" --queries "$tmp/q.csv"
usage_error bptree --keys "$tmp/k.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" --layout btree
usage_error bptree --keys "$tmp/k.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" --method hash
usage_error bptree --keys "$tmp/k.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" --buckets 0
usage_error bptree --keys "$tmp/k.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" --hier-depth 9
usage_error bptree --keys "$tmp/k.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" --bogus
usage_error bptree --keys "$tmp/k.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" extra
usage_error bptree --keys "$tmp/k.csv" --queries "$tmp/q.csv" -o "$tmp/o.csv" --method pointer \
    --layout sll

# bad input: exit 1, a message naming the problem, no output file
bad_input() { # bad_input NEEDLE ARGS...
    local needle=$1
    shift
    rm -f "$tmp/o.csv"
    run 1 bptree "$@" -o "$tmp/o.csv"
    check "bptree $*: message '$needle'" grep -q -- "$needle" "$tmp/err"
    check "bptree $*: no output file" test ! -e "$tmp/o.csv"
}
printf '1\n2\nnan\n' >"$tmp/nan.csv"
printf '1\n2\ninf\n' >"$tmp/inf.csv"
printf '4\n2\n4\n' >"$tmp/dup.csv"
printf '1\n2\n2\n' >"$tmp/dups.csv"
printf '1,2\n3,4\n' >"$tmp/two.csv"
printf '1.5\n2\n' >"$tmp/frac.csv"
printf '1\n16777217\n' >"$tmp/big.csv"
bad_input "No such file" --keys "$tmp/none.csv" --queries "$tmp/q.csv"
bad_input "No such file" --keys "$tmp/k.csv" --queries "$tmp/none.csv"
bad_input "key 2 is NaN" --keys "$tmp/nan.csv" --queries "$tmp/q.csv"
bad_input "key 2 is infinite" --keys "$tmp/inf.csv" --queries "$tmp/q.csv"
bad_input "duplicate key 4 (positions 0 and 2)" --keys "$tmp/dup.csv" --queries "$tmp/q.csv"
bad_input "duplicate key 2 (positions 1 and 2)" --keys "$tmp/dups.csv" --queries "$tmp/q.csv"
bad_input "expected one column" --keys "$tmp/two.csv" --queries "$tmp/q.csv"
bad_input "has 3 values but" --keys "$tmp/k.csv" --values "$tmp/dups.csv" --queries "$tmp/q.csv"
bad_input "not an integer" --keys "$tmp/dup.csv" --values "$tmp/frac.csv" --queries "$tmp/q.csv"
if python3 -c 'import numpy' 2>/dev/null; then
    python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.array([1, 16777217], np.int64))" \
        "$tmp/big.npy"
    bad_input "not exact in float32" --keys "$tmp/big.npy" --queries "$tmp/q.csv"
fi
cli_finish
