# SPDX-License-Identifier: MIT
# Sourced by the MPI CLI tests with their arguments: $1 the canopy binary, then the MPI
# launcher and its flags up to the rank-count flag (e.g. mpiexec -n --oversubscribe).
# Sets CANOPY, MPIEXEC, NPFLAG, EXTRA and a scratch folder $tmp (removed at exit), loads
# the checks of tests/harness.sh, and defines mrun.
CANOPY=${1:?usage: $(basename "$0") CANOPY_BINARY MPIEXEC NP_FLAG [FLAGS...]}
shift
MPIEXEC=${1:?missing the MPI launcher}
NPFLAG=${2:?missing the rank-count flag}
shift 2
EXTRA=("$@")
tmp=$(mktemp -d /tmp/canopy-cli-mpi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"

# mrun NP WANT_RC ARGS...: canopy under the launcher, 60 s at most.
mrun() {
    local np=$1 want=$2
    shift 2
    timeout 60 "$MPIEXEC" "${EXTRA[@]}" "$NPFLAG" "$np" "$CANOPY" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then
        ok
    else
        bad "mpirun -np $np canopy $* exited $rc, want $want"
        sed 's/^/    /' "$tmp/err" >&2
    fi
}
