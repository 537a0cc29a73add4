#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs dependencies if missing, then configures and builds canopy (Release) in build/.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CANOPY_ROOT/scripts/install-deps.sh"
configure_and_build "$CANOPY_ROOT/build" -DCMAKE_BUILD_TYPE=Release
