#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what canopy needs on a fresh Debian 12 machine, and only that. Idempotent:
# packages already present are not fetched again, and nothing is printed for them.
#   scripts/install-deps.sh           the build and the demo: cmake, ninja, gcc,
#                                     json-c, pkg-config, python3 with NumPy, HDF5 (nbody snapshots),
#                                     FFTW (TreePM periodic gravity)
#   scripts/install-deps.sh --test    also clang (fuzz and sanitizer runtimes), ccache and, unless
#                                     CANOPY_WITH_MPI=0, Open MPI (the distributed layer's
#                                     tests), h5py (the HDF5 snapshot tests); what scripts/test.sh uses
#   CANOPY_WITH_MPI=1                 Open MPI in either case
# CUDA is never installed here: the backend is compiled when nvcc exists.
set -euo pipefail

# --no-install-recommends below: list what a recommendation would have brought (libc6-dev).
packages=(cmake ninja-build gcc libc6-dev libjson-c-dev pkg-config python3 grep libhdf5-dev libfftw3-dev)
python3 -c 'import numpy' >/dev/null 2>&1 || packages+=(python3-numpy)
if [ "${1:-}" = "--test" ]; then
    packages+=(clang libclang-rt-14-dev python3-venv python3-h5py ccache)
    [ "${CANOPY_WITH_MPI:-1}" != 0 ] && packages+=(openmpi-bin libopenmpi-dev)
elif [ "${CANOPY_WITH_MPI:-0}" = 1 ]; then
    packages+=(openmpi-bin libopenmpi-dev)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]} (and what they depend on)"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    # One line per package as it is set up, instead of apt's screens (or nothing).
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
        "${missing[@]}" 2>&1 | { grep --line-buffered '^Setting up ' || true; } |
        sed -u 's/^Setting up \([^ ]*\).*/  installed \1/'
    for p in "${missing[@]}"; do
        dpkg -s "$p" >/dev/null 2>&1 || { echo "install-deps: $p failed to install" >&2; exit 1; }
    done
fi
# Debian's python3-numpy/-h5py serve /usr/bin/python3; a python3 found first on PATH
# (pyenv, conda) gets them from PyPI instead, or the tests' python3 lacks them.
pymods=(numpy)
[ "${1:-}" = "--test" ] && pymods+=(h5py)
for m in "${pymods[@]}"; do
    if ! python3 -c "import $m" >/dev/null 2>&1; then
        echo "install-deps: $(command -v python3) lacks $m; pip install $m"
        python3 -m pip install -q "$m"
    fi
done
