#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the README's quick-start block (between <!-- quickstart --> and
# <!-- /quickstart -->) exactly as written, so the README cannot drift from the CLI.
# It runs in a temporary directory that links the clone's build/, tests/ and README.md,
# so the files it writes stay out of the tree. Needs a built build/canopy
# (./scripts/build.sh). Exits non-zero if any command fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ -x "$root/build/canopy" ] || { echo "quickstart: build/canopy missing; run ./scripts/build.sh" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for f in build tests README.md; do ln -s "$root/$f" "$work/$f"; done
sed -n '/^<!-- quickstart -->$/,/^<!-- \/quickstart -->$/p' "$root/README.md" |
    sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' >"$work/quickstart.sh"
[ -s "$work/quickstart.sh" ] || { echo "quickstart: no block in README.md" >&2; exit 1; }
cd "$work"
OMP_WAIT_POLICY=passive bash -euo pipefail -x quickstart.sh
echo "quickstart: README block ran ($(grep -c '^\$B' quickstart.sh) canopy commands)"
