#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs dependencies if missing, then configures and builds canopy (Release) in build/:
# the library, the CLI, the tests and the benchmarks. The CUDA module is built when nvcc
# exists and an NVIDIA driver is installed (CANOPY_CUDA=ON|OFF decides instead).
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CANOPY_ROOT/scripts/install-deps.sh"
cuda="${CANOPY_CUDA:-AUTO}"
if [ "$cuda" = AUTO ] && ! canopy_have_nvidia_driver; then
    cuda=OFF
    command -v nvcc >/dev/null && echo "build: no NVIDIA driver, so no CUDA module (CANOPY_CUDA=ON builds it)"
fi
configure_and_build "$CANOPY_ROOT/build" "${CANOPY_RELEASE_FLAGS[@]}" -DCANOPY_CUDA="$cuda" "$@"
