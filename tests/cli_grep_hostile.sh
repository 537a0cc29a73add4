#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy grep` under hostile patterns and lines (issue 21): deep nesting and stacked
# repetitions are refused with "regular expression too complex" (exit 2) instead of
# overflowing the stack; a short pattern with long epsilon chains compiles fast; -o
# on a long line is one pass per match, not one per start position, and prints what
# GNU grep -o -E prints (random patterns and long random lines).
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_grep_hostile.sh CANOPY_BINARY}
command -v grep >/dev/null && grep -E -q . <<<x 2>/dev/null || { echo "no GNU grep: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "python3 needed: skipped"; exit 77; }
export LC_ALL=C
tmp=$(mktemp -d /tmp/canopy-cli-grep-hostile.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

echo abc >"$tmp/x"
echo b >"$tmp/b"
# timed WANT_RC SECONDS ARGS...: run, and fail if it takes longer than SECONDS.
timed() {
    local want=$1 secs=$2
    shift 2
    timeout "$secs" "$CANOPY" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else bad "canopy $* exited $rc, want $want (limit ${secs}s)"; fi
}
too_complex() { check "$1: no 'too complex' message" grep -q "regular expression too complex" "$tmp/err"; }

python3 -c "print('(' * 70000 + 'a' + ')' * 70000)" >"$tmp/nest.pat"
timed 2 10 grep -c -f "$tmp/nest.pat" "$tmp/x"
too_complex "70,000 nested groups"
python3 -c "print('a' + '*' * 100000)" >"$tmp/star.pat"
timed 2 10 grep -c -f "$tmp/star.pat" "$tmp/x"
too_complex "a followed by 100,000 *"
python3 -c "print('a' + '{1}' * 50000)" >"$tmp/brace.pat"
timed 2 10 grep -c -f "$tmp/brace.pat" "$tmp/x"
too_complex "50,000 stacked {1}"
python3 -c "print('(a|' * 30000 + 'b' + ')' * 30000)" >"$tmp/alt.pat"
timed 2 10 grep -c -f "$tmp/alt.pat" "$tmp/x"
too_complex "30,000 nested alternations"
# nesting up to the limit still works, with -w and -x wrapped around it
python3 -c "print('(' * 900 + 'b' + ')' * 900)" >"$tmp/ok.pat"
for opt in -c "-c -w" "-c -x" "-o"; do
    timed 0 10 grep $opt -f "$tmp/ok.pat" "$tmp/b"
done
# long flat patterns are not "nested": 20,000 concatenated atoms and alternatives
python3 -c "print('|'.join(['zz'] * 10000) + '|b')" >"$tmp/flat.pat"
timed 0 10 grep -c -f "$tmp/flat.pat" "$tmp/x"

# quick LIMIT_MS WHAT WANT_RC ARGS...: timed, and fail past LIMIT_MS milliseconds.
quick() {
    local limit=$1 what=$2 start
    start=$(date +%s%N)
    timed "$3" 10 "${@:4}"
    local ms=$((($(date +%s%N) - start) / 1000000))
    check "$what took ${ms} ms (limit $limit)" test "$ms" -lt "$limit"
}
# compile work: 38 bytes that once took 1.5 s (every epsilon closure walked the program)
quick 300 "38-byte epsilon-chain pattern" 0 grep -c ']???????$??????????????????????{1108}' "$tmp/x"
timed 2 10 grep -c '(a{1000}){1000}{10}' "$tmp/x"
check "huge unrolled interval: no 'too big' message" grep -q "too big" "$tmp/err"
# the program limit is 1 Mi instructions: just under it compiles (and matches) in
# milliseconds, just over it is "too big"
quick 3000 "1,048,001-instruction program" 1 grep -c '[a-z]{1000}{1048}' "$tmp/x"
timed 2 10 grep -c '[a-z]{1000}{1049}' "$tmp/x"
check "1,049,001 instructions: no 'too big' message" grep -q "too big" "$tmp/err"

# -o on a 100 KB line: (ab)*c|x once took 45 s (a scan per start position)
python3 -c "print('ab' * 50000 + 'x'); print('ab' * 25000 + 'x' + 'ab' * 25000 + 'c')" >"$tmp/long"
timed 0 5 grep -o '(ab)*c|x' "$tmp/long"
# what grep -oE prints (GNU grep itself takes tens of seconds on these lines): the x of
# each line, then the second line's tail from its x on
python3 -c "print('x'); print('x'); print('ab' * 25000 + 'c')" >"$tmp/want"
check "-o (ab)*c|x on 100 KB lines differs from grep -oE's matches" cmp -s "$tmp/out" "$tmp/want"
python3 -c "print('ab' * 500000 + 'x')" >"$tmp/long1m"
timed 0 5 grep -o '(ab)*c|x' "$tmp/long1m"
check "-o (ab)*c|x on a 1 MB line" test "$(cat "$tmp/out")" = x

# -o against grep -o -E: random patterns on long random lines
python3 - "$tmp" <<'PY'
import random, sys
d = sys.argv[1]
r = random.Random(21)
alpha = "abc x"
def atom(depth):
    k = r.randrange(8 if depth > 0 else 3)
    if k == 0: return r.choice("abcx")
    if k == 1: return "."
    if k == 2: return "[" + "".join(r.sample("abcx ", r.randint(1, 3))) + "]"
    if k < 5: return "".join(atom(depth - 1) for _ in range(r.randint(2, 3)))
    if k == 5: return "(" + "|".join(atom(depth - 1) for _ in range(r.randint(2, 3))) + ")"
    return "(" + atom(depth - 1) + ")" + r.choice(["*", "+", "?", "{1,3}", "{2}", "{0,2}"])
with open(d + "/pats", "w") as f:
    for _ in range(60):
        f.write(atom(3) + "\n")
with open(d + "/lines", "w") as f:
    for n in [0, 1, 5, 40, 300, 5000, 20000]:
        f.write("".join(r.choice(alpha) for _ in range(n)) + "\n")
PY
while IFS= read -r pat; do
    grep -oE -e "$pat" "$tmp/lines" >"$tmp/want" 2>/dev/null
    "$CANOPY" grep -o -e "$pat" "$tmp/lines" >"$tmp/got" 2>"$tmp/err"
    check "-o '$pat' differs from grep -oE" cmp -s "$tmp/got" "$tmp/want"
done <"$tmp/pats"
cli_finish
