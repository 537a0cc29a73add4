# SPDX-License-Identifier: MIT
# Shared harness of the CLI test scripts (sourced). The script sets CANOPY and tmp;
# these count checks and report "N passed, M failed" at the end (cli_finish).
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    echo "FAIL: $*" >&2
    fail=$((fail + 1))
}
check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then ok; else bad "$what"; fi
}
# run WANT_RC ARGS...: runs canopy, output in $tmp/out and $tmp/err.
run() {
    local want=$1
    shift
    "$CANOPY" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then
        ok
    else
        bad "canopy $* exited $rc, want $want"
        sed 's/^/    /' "$tmp/err" >&2
    fi
}
# usage_error CMD ARGS...: exit 2 with the --help hint of CMD.
usage_error() {
    run 2 "$@"
    check "canopy $*: no --help hint" grep -q "Try 'canopy $1 --help'" "$tmp/err"
}
cli_finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
