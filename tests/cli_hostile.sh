#!/usr/bin/env bash
# The canopy command under hostile outputs, inputs and faults (issue 21, all rows of
# its table but the regex ones, which cli_grep_hostile.sh covers): outputs that are
# devices, FIFOs, inputs or each other; signals while writing; write errors on
# standard output; headers that declare more than the file can hold; impossible
# models; coincident bodies without softening. Each check fails on the code before.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_hostile.sh CANOPY_BINARY}
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

# ---- write errors on standard output ----
if [ -w /dev/full ]; then
    "$CANOPY" info >/dev/full 2>"$tmp/err"
    check "info > /dev/full exited 0" test $? -eq 1
    has "info > /dev/full" "error writing standard output"
    "$CANOPY" knn --ref "$tmp/X.npy" -k 2 -o - >/dev/full 2>"$tmp/err"
    check "knn -o - > /dev/full exited 0" test $? -eq 1
fi

cli_finish
