#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The vocabulary every subcommand shares: one summary line on success that --quiet
# silences, -o/--output always the output file, one-line "did you mean" hints for
# misspelt options and commands, and predict's old --output KIND refused with a hint.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_vocabulary.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-vocab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"
DATA=${CANOPY_TEST_DATA:-$(dirname "$0")/data}/forest

# one_line CMD ARGS...: success, exactly one line on stdout naming the output file;
# then the same with --quiet: success, stdout empty, the file written.
one_line() {
    local out=$tmp/o.npy
    rm -f "$out"
    run 0 "$@" --output "$out"
    check "$1: one summary line" [ "$(wc -l <"$tmp/out")" -eq 1 ]
    check "$1: summary names the output" grep -qF "$out" "$tmp/out"
    rm -f "$out"
    run 0 "$@" --output "$out" --quiet
    check "$1 --quiet: no stdout" [ ! -s "$tmp/out" ]
    check "$1 --quiet: file written" [ -s "$out" ]
}
"$CANOPY" gen uniform --n 300 --d 3 -o "$tmp/p.npy" --quiet
"$CANOPY" gen uniform --n 40 --d 1 -o "$tmp/k.npy" --quiet
"$CANOPY" gen plummer --n 200 -o "$tmp/b.npy" --quiet
one_line knn --ref "$tmp/p.npy" -k 2
one_line nn --ref "$tmp/p.npy"
one_line radius --ref "$tmp/p.npy" -r 0.1
one_line gravity --bodies "$tmp/b.npy"
one_line graph bfs --gen kron16
one_line tree heights --gen random1
one_line predict --model "$DATA/xgb_binary.json" --data "$DATA/xgb_binary.X.npy"
run 0 gen uniform --n 10 --d 2 --output "$tmp/g.npy"
check "gen: --output is -o" [ -s "$tmp/g.npy" ]
check "gen: one line per file" [ "$(wc -l <"$tmp/out")" -eq 1 ]

# predict: --kind is the prediction kind; --output KIND is an old command line.
run 0 predict --model "$DATA/xgb_binary.json" --data "$DATA/xgb_binary.X.npy" --kind raw \
    -o "$tmp/raw.npy"
check "predict --kind raw: summary says raw" grep -q " raw -> " "$tmp/out"
usage_error predict --model "$DATA/xgb_binary.json" --data "$DATA/xgb_binary.X.npy" --output raw
check "predict --output raw: hint names --kind" grep -qF -- "use --kind raw" "$tmp/err"
check "predict --output raw: no file named raw" [ ! -e raw ]

# misspelt options and commands: one line, with the closest name
usage_error knn --ref "$tmp/p.npy" --kk 3
check "knn --kk: did you mean --k" grep -qF "did you mean '--k'?" "$tmp/err"
check "knn --kk: two lines (message, help hint)" [ "$(wc -l <"$tmp/err")" -eq 2 ]
usage_error predict --modle m.json
check "predict --modle: did you mean --model" grep -qF "did you mean '--model'?" "$tmp/err"
usage_error knn --stats=yes
check "--stats=yes: names the formats" grep -qF -- "--stats=json" "$tmp/err"
usage_error knn --quiet=yes
check "--quiet=yes: takes no argument" grep -qF "'--quiet' takes no argument" "$tmp/err"

# --stats=json: one line of JSON on stderr with the same top-level schema everywhere
json_ok() { # json_ok FILE: one line, the canopy-stats/1 keys
    python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
d = json.loads(lines[-1])
keys = {"schema", "command", "version", "threads", "seconds", "counts", "choices", "note",
        "cuda"}
sys.exit(0 if d["schema"] == "canopy-stats/1" and set(d) == keys and "run" in d["seconds"] else 1)
PY
}
for args in "knn --ref $tmp/p.npy -k 2" "gravity --bodies $tmp/b.npy" "graph bfs --gen kron16" \
    "tree heights --gen random1" \
    "predict --model $DATA/xgb_binary.json --data $DATA/xgb_binary.X.npy"; do
    # shellcheck disable=SC2086
    run 0 $args -o "$tmp/s.npy" --quiet --stats=json
    check "$args --stats=json: canopy-stats/1 line" json_ok "$tmp/err"
done
check "predict --stats=json: model load time" grep -q '"load_model"' "$tmp/err"
usage_error knn --threads
check "--threads: requires an argument" grep -qF "'--threads' requires an argument" "$tmp/err"
usage_error radius --zzzzzz
check "--zzzzzz: no suggestion" bash -c "! grep -q 'did you mean' '$tmp/err'"
run 2 gravty
check "gravty: did you mean gravity" grep -qF "did you mean 'gravity'?" "$tmp/err"
run 0 knn --help
check "--help mentions --quiet" grep -q -- "--quiet" "$tmp/out"
run 2 gen rand8 -o "$tmp/r8.npy"
check "gen rand8: did you mean rand7" grep -qF "did you mean 'rand7'?" "$tmp/err"
run 0 info --help
check "info --help: the MPI layer is built in" grep -q "whether the MPI layer is built" "$tmp/out"

# An output whose extension names no array format is refused before anything is
# written, for every writer (cli_write_arrays, graph, tree, predict).
for args in "knn --ref $tmp/p.npy -k 2" "graph bfs --gen kron16" "tree heights --gen random1" \
    "predict --model $DATA/xgb_binary.json --data $DATA/xgb_binary.X.npy"; do
    # shellcheck disable=SC2086
    run 2 $args -o "$tmp/x.txt"
    check "$args -o x.txt: refused by name" grep -qF "unknown output file type '$tmp/x.txt'" "$tmp/err"
    check "$args -o x.txt: nothing written" test ! -e "$tmp/x.txt"
done
run 0 knn --ref "$tmp/p.npy" -k 2 -o "$tmp/x.CSV"
check "-o x.CSV: written as CSV" grep -q '^[0-9]*,[0-9]*$' "$tmp/x.CSV"
run 2 knn --ref "$tmp/p.npy" -k 2 -o "$tmp/x.npy" --distances "$tmp/d.txt"
check "a second output's bad extension: the first not written" test ! -e "$tmp/x.npy"

# A space- or tab-separated table is named as such, not read as a header.
printf '1 2 3\n4 5 6\n' >"$tmp/sp.csv"
run 1 knn --ref "$tmp/sp.csv" -k 1 -o "$tmp/sp.npy"
check "space-separated: line 1 named" grep -q "sp.csv: line 1 holds numbers separated by spaces" "$tmp/err"
printf 'x\ty\n1\t2\n' >"$tmp/tab.csv"
run 1 knn --ref "$tmp/tab.csv" -k 1 -o "$tmp/tab.npy"
check "tab-separated under a header: line 2 named" grep -q "tab.csv: line 2 holds numbers" "$tmp/err"
printf 'x,y\n1,2\n3,4\n' >"$tmp/ok.csv"
run 0 knn --ref "$tmp/ok.csv" -k 1 -o "$tmp/ok.npy"
cli_finish
