#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Python package as a user gets it: a fresh virtual environment, `pip install ./python`
# (CMake builds libcanopy inside the wheel), then pytest against NumPy and scipy.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$(mktemp -d)"
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
# CPU only (CANOPY_CUDA=OFF): nvcc would add many minutes; the GPU side is gpu-check's
# python stage.
CANOPY_CUDA=OFF "$venv/bin/pip" install --quiet --disable-pip-version-check "$root/python[test]"
# From outside the source tree, so the installed package (with its library) is imported.
cd "$venv"
OMP_WAIT_POLICY=passive "$venv/bin/python" -m pytest -q "$root/python/tests"
