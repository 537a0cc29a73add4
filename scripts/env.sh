# SPDX-License-Identifier: MIT
# Sourced by the build scripts: finds nvcc where the CUDA toolkit installs it when it is
# not on PATH, so the CUDA backend is compiled whenever the toolkit exists.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
fi
CANOPY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CANOPY_ROOT
CANOPY_JOBS="${CANOPY_JOBS:-$(nproc)}"
# configure_and_build DIR [cmake args...]
configure_and_build() {
    local dir="$1"
    shift
    mkdir -p "$dir"
    cmake -S "$CANOPY_ROOT" -B "$dir" -G Ninja "$@" >"$dir/configure.log" 2>&1 ||
        { cat "$dir/configure.log"; return 1; }
    cmake --build "$dir" -j "$CANOPY_JOBS"
}
# The flags of build/: scripts/build.sh, demo.sh and test.sh use the same ones, so each
# reuses what another built (test.sh adds only the CUDA module where the others left it out).
CANOPY_RELEASE_FLAGS=(-DCMAKE_BUILD_TYPE=Release -DCANOPY_WERROR=ON)
# 0 when no NVIDIA driver is installed (no libcuda.so.1): a CUDA module could not run here.
canopy_have_nvidia_driver() {
    [ -e /proc/driver/nvidia/version ] || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'
}
