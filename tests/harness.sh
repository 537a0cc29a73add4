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
# need_h5py: PY := a python3 with h5py and NumPy (PATH's first, else Debian's), or skip (77).
need_h5py() {
    local p
    for p in python3 /usr/bin/python3; do
        if "$p" -c 'import h5py, numpy' >/dev/null 2>&1; then
            PY=$p
            return 0
        fi
    done
    echo "h5py not installed (scripts/install-deps.sh --test): skipped"
    exit 77
}
cli_finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
