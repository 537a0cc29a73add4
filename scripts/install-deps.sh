#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what canopy needs on a fresh Debian 12 machine. Idempotent: packages
# already present are not fetched again. CUDA is optional (used when nvcc exists);
# Open MPI builds the distributed layer (src/dist, tests labelled mpi).
set -euo pipefail

apt_packages=(cmake ninja-build gcc clang libclang-rt-14-dev libjson-c-dev python3 grep pkg-config
              openmpi-bin libopenmpi-dev)
missing=()
for p in "${apt_packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# numpy: used by tests that check our .npy files load in NumPy.
if ! python3 -c 'import numpy' >/dev/null 2>&1; then
    echo "install-deps: installing numpy"
    python3 -m pip install --quiet numpy || echo "install-deps: numpy unavailable; NumPy interop checks will be skipped"
fi
