#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the README's quick-start block (between <!-- quickstart --> and
# <!-- /quickstart -->) exactly as written, from the clone's root as a user would, so the
# README cannot drift from the CLI; then checks that it left no file in the clone (the
# block moves to a temporary folder, made here under a folder this script removes).
# Needs a built build/canopy (./scripts/build.sh). Exits non-zero if any command fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ -x "$root/build/canopy" ] || { echo "quickstart: build/canopy missing; run ./scripts/build.sh" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sed -n '/^<!-- quickstart -->$/,/^<!-- \/quickstart -->$/p' "$root/README.md" |
    sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' >"$work/quickstart.sh"
[ -s "$work/quickstart.sh" ] || { echo "quickstart: no block in README.md" >&2; exit 1; }
touch "$work/stamp"
cd "$root"
TMPDIR="$work" OMP_WAIT_POLICY=passive bash -euo pipefail -x "$work/quickstart.sh"
left="$(find "$root" \( -path "$root/.git" -o -path "$root/build*" \) -prune -o \
    -newer "$work/stamp" -type f -print)"
[ -z "$left" ] || { echo "quickstart: the block left files in the clone:" >&2; echo "$left" >&2; exit 1; }
echo "quickstart: README block ran ($(grep -c '^\$B' "$work/quickstart.sh") canopy commands), clone left clean"
