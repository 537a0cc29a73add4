#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `canopy grep` against GNU `grep -E` (C locale): the same stdout and exit code for
# hand-written and random patterns with -c, -v, -n, -i, -x, -w, -o, -l, -L, -q, -s,
# -H, -h, several files, stdin, -f, missing files and directories; malformed patterns exit 2 with grep's message;
# every engine gives the same output; --count-per-pattern equals per-pattern grep -c.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_grep.sh CANOPY_BINARY}
command -v grep >/dev/null && grep -E -q . <<<x 2>/dev/null || { echo "no GNU grep: skipped"; exit 77; }
export LC_ALL=C
tmp=$(mktemp -d /tmp/canopy-cli-grep.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"

# Inputs: random lines over a small alphabet, an empty file, a last line without
# '\n', CRLF lines, empty lines.
python3 - "$tmp" <<'PY' || { echo "python3 needed: skipped"; exit 77; }
import random, sys
d = sys.argv[1]
r = random.Random(8)
alpha = "abcAB1 .-"
def lines(n):
    return "\n".join("".join(r.choice(alpha) for _ in range(r.choice([0, 1, 3, 6, 10, 14])))
                     for _ in range(n))
open(d + "/f1", "w").write(lines(300) + "\n")
open(d + "/f2", "w").write(lines(200))  # no final newline
open(d + "/crlf", "w").write("ab\r\nb a\r\n\r\nabc\n")
open(d + "/empty", "w").write("")
# random grep-safe EREs: no repetition without an operand, anchors outside repetition
def atom(depth, in_rep):
    k = r.randrange(10 if depth > 0 else 4)
    if k < 2:
        c = r.choice(alpha)
        return "\\" + c if c in ".[]()*+?{}|^$\\" else c
    if k == 2: return "."
    if k == 3:
        items = r.sample(["a-b", "A-Z", "[:digit:]", "[:space:]", "[:upper:]", "c", "1", ".", "B"], r.randint(1, 3))
        return "[" + ("^" if r.random() < 0.3 else "") + "".join(items) + ("-" if r.random() < 0.2 else "") + "]"
    if k < 7: return "".join(atom(depth - 1, in_rep) for _ in range(r.randint(2, 4)))
    if k == 7: return "(" + "|".join("" if r.random() < 0.1 else atom(depth - 1, in_rep) for _ in range(r.randint(2, 3))) + ")"
    if k == 8:
        rep = r.choice(["*", "+", "?", "{2}", "{1,3}", "{2,}", "{,2}", "{0}"])
        return "(" + atom(depth - 1, True) + ")" + rep
    return atom(depth - 1, in_rep) if in_rep else r.choice(["^", "$"])
with open(d + "/random_patterns", "w") as f:
    for _ in range(70):
        f.write(atom(r.randint(1, 4), False) + "\n")
PY

engines=(pike simd dfa)
n_pat=0
# same_as_grep ENGINE OPTS... : stdout and exit code equal to grep -E's
same_as_grep() {
    local engine=$1
    shift
    "$CANOPY" grep --engine "$engine" "$@" >"$tmp/c.out" 2>"$tmp/c.err"
    local crc=$?
    grep -E "$@" >"$tmp/g.out" 2>"$tmp/g.err"
    local grc=$?
    if [ $crc -eq $grc ] && cmp -s "$tmp/c.out" "$tmp/g.out"; then
        ok
    else
        bad "canopy grep --engine $engine $* : rc $crc vs grep $grc, output differs: $(diff "$tmp/c.out" "$tmp/g.out" | head -3 | tr '\n' ' ')"
    fi
}

hand=('' 'a' 'ab|ba' '(ab|ba|c1)' 'x(ab|B)' '.*(ab|a )|.*b' '^a' 'a$' '^$' '^(a|b)*$' '[[:upper:]][^a-b]' 'a.?b{1,2}' '(a|)+B' '\.' 'a{,2}c' '[]a]' '[a-]' 'x{1' 'a)' 'A.*1' '1 $')
opts_list=("" "-c" "-v" "-n" "-i" "-c -v" "-n -i" "-v -n" "-c -i -v" "-h -n" "-H")
for p in "${hand[@]}"; do
    for opts in "${opts_list[@]}"; do
        # GNU grep 3.8 prints no counts at all for -c -v with the empty pattern (it
        # skips the files, knowing nothing can be selected); canopy prints the 0s.
        [[ -z $p && $opts == *-c* && $opts == *-v* ]] && continue
        # shellcheck disable=SC2086
        same_as_grep "${engines[$((n_pat % 3))]}" $opts -e "$p" "$tmp/f1" "$tmp/f2"
        n_pat=$((n_pat + 1))
    done
done
while IFS= read -r p; do
    for opts in "-c" "-n -v" "-i"; do
        # shellcheck disable=SC2086
        same_as_grep "${engines[$((n_pat % 3))]}" $opts -e "$p" "$tmp/f1"
        n_pat=$((n_pat + 1))
    done
done <"$tmp/random_patterns"

# -x -w -o -l -L -q -s -H -h, alone and combined (also with -c, -v, -n, -i)
opts_list2=("-x" "-w" "-o" "-o -n" "-o -i" "-x -o" "-o -v" "-o -c" "-H -o" "-l" "-L"
    "-l -v" "-L -v" "-l -c" "-L -c" "-h -l" "-c -w" "-x -w" "-w -v -n" "-x -i -c" "-q" "-q -v" "-s")
for p in "${hand[@]}" 'a*' 'x*' '-' 'b|a' 'a ?' '[[:space:]]*' '(ab|a)(c|bcd)?'; do
    for opts in "${opts_list2[@]}"; do
        # shellcheck disable=SC2086
        same_as_grep "${engines[$((n_pat % 3))]}" $opts -e "$p" "$tmp/f1" "$tmp/f2" "$tmp/empty"
        n_pat=$((n_pat + 1))
    done
done
while IFS= read -r p; do
    for opts in "-w" "-x -n" "-o" "-o -n -i"; do
        # shellcheck disable=SC2086
        same_as_grep "${engines[$((n_pat % 3))]}" $opts -e "$p" "$tmp/f1"
        n_pat=$((n_pat + 1))
    done
done <"$tmp/random_patterns"
for e in "${engines[@]}"; do
    same_as_grep "$e" -o -n -e 'ab' -e 'b.a' -e '^B' -e 'a+' "$tmp/f1" "$tmp/f2"
    same_as_grep "$e" -x -e 'ab' -e '' -e 'a.*' "$tmp/f1" "$tmp/crlf"
done
# -o -w prints every whole-word match; GNU grep 3.8 misses those that need a shorter
# match after an earlier match on the line (so -o -w is checked by test_regex.c)
printf 'a a a\n' | "$CANOPY" grep -o -w 'a ?' >"$tmp/c.out"
check "-o -w: every whole-word match" test "$(cat "$tmp/c.out")" = "$(printf 'a\na\na')"
# exit codes with errors: -s hides the message only; -q reports a match over an error;
# -l/-L print nothing for a missing file
run 2 grep -s ab "$tmp/nosuch" "$tmp/f1"
check "-s: no message" test ! -s "$tmp/err"
run 0 grep -q ab "$tmp/nosuch" "$tmp/f1"
run 2 grep -l ab "$tmp/f1" "$tmp/nosuch"
check "-l lists the file with a match" grep -qx "$tmp/f1" "$tmp/out"
run 1 grep -L zzzz "$tmp/f1" "$tmp/f2"
check "-L lists both files" test "$(wc -l <"$tmp/out")" -eq 2

# every engine: the same output as grep for a few multi-pattern sets
for e in "${engines[@]}"; do
    same_as_grep "$e" -n -e 'ab' -e '^B' -e '1$' "$tmp/f1" "$tmp/f2" "$tmp/crlf" "$tmp/empty"
    same_as_grep "$e" -c -e 'ab' -e '^B' -e '1$' "$tmp/f1" "$tmp/f2" "$tmp/crlf" "$tmp/empty"
    same_as_grep "$e" -c -i -f "$tmp/random_patterns" "$tmp/f1"
    same_as_grep "$e" -v -f "$tmp/random_patterns" "$tmp/f1"
    same_as_grep "$e" 'ab$' "$tmp/crlf"
    same_as_grep "$e" "$(printf 'ab\n^B')" "$tmp/f1"
done

# stdin ('-' and no file), file names with several inputs
"$CANOPY" grep -n ab - <"$tmp/f1" >"$tmp/c.out"
grep -E -n ab - <"$tmp/f1" >"$tmp/g.out"
check "stdin '-'" cmp -s "$tmp/c.out" "$tmp/g.out"
"$CANOPY" grep -c ab <"$tmp/f2" >"$tmp/c.out"
grep -E -c ab <"$tmp/f2" >"$tmp/g.out"
check "stdin without FILE" cmp -s "$tmp/c.out" "$tmp/g.out"
"$CANOPY" grep ab "$tmp/f1" - <"$tmp/f2" >"$tmp/c.out"
grep -E ab "$tmp/f1" - <"$tmp/f2" >"$tmp/g.out"
check "(standard input) prefix" cmp -s "$tmp/c.out" "$tmp/g.out"

# errors: a missing file or a directory is reported, the others still searched, exit 2
run 2 grep -c ab "$tmp/f1" "$tmp/nosuch" "$tmp"
check "missing file named" grep -q "nosuch: No such file or directory" "$tmp/err"
check "directory named" grep -q "Is a directory" "$tmp/err"
grep -E -c ab "$tmp/f1" >"$tmp/g1"
check "other files still searched" grep -qx "$tmp/f1:$(cat "$tmp/g1")" "$tmp/out"
run 1 grep zzzz "$tmp/f1"
run 0 grep -q ab "$tmp/f1"
check "-q prints nothing" test ! -s "$tmp/out"
run 2 grep -f "$tmp/nosuch" "$tmp/f1"
run 1 grep -f "$tmp/empty" "$tmp/f1"
check "-f with no patterns selects nothing" test ! -s "$tmp/out"

# malformed patterns: exit 2 and grep's message
for p in 'a(' '(a|b' '[a' '[[:alpha:]' '[b-a]' '[[:foo:]]' 'a{2,1}' 'a\'; do
    run 2 grep -e "$p" "$tmp/f1"
    want=$(grep -E -e "$p" "$tmp/f1" 2>&1 >/dev/null | sed 's/^grep: //')
    check "message for '$p' ($want)" grep -qxF "canopy grep: $want" "$tmp/err"
done
for p in '*a' 'a|+b' '(a)\1' '\bx'; do
    run 2 grep -e "$p" "$tmp/f1"
done

# --count-per-pattern: pattern order, COUNT<TAB>PATTERN, per file with a prefix
run 0 grep --count-per-pattern -e ab -e '^B' -e zzz "$tmp/f1"
printf '%s\tab\n%s\t^B\n0\tzzz\n' "$(grep -E -c ab "$tmp/f1")" "$(grep -E -c '^B' "$tmp/f1")" >"$tmp/want"
check "--count-per-pattern" cmp -s "$tmp/out" "$tmp/want"
run 0 grep --count-per-pattern -v -e ab "$tmp/f1" "$tmp/f2"
printf '%s:%s\tab\n%s:%s\tab\n' "$tmp/f1" "$(grep -E -c -v ab "$tmp/f1")" "$tmp/f2" "$(grep -E -c -v ab "$tmp/f2")" >"$tmp/want"
check "--count-per-pattern -v, two files" cmp -s "$tmp/out" "$tmp/want"

# binary input: one notice on stderr instead of the lines, as grep
printf 'ab\0c\nzz\n' >"$tmp/bin"
run 0 grep ab "$tmp/bin"
check "binary: no lines" test ! -s "$tmp/out"
check "binary: notice" grep -q "bin: binary file matches" "$tmp/err"
run 0 grep -c ab "$tmp/bin"
check "binary -c counts" grep -qx 1 "$tmp/out"

run 1 grep -c -v -e '' "$tmp/f1"
check "-c -v '' prints 0" grep -qx 0 "$tmp/out"

# usage
run 0 grep --help
check "--help names the engines" grep -q "pike" "$tmp/out"
usage_error grep --engine nfa ab "$tmp/f1"
usage_error grep
usage_error grep --threads 0 ab "$tmp/f1"
cli_finish
