#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fills .carry/ (git-ignored), what travels to the GPU machine, which installs nothing:
#   .carry/debs  json-c and FFTW (the build) and GSL (Corrfunc's runtime), unpacked there with dpkg -x
#   .carry/whl   Python 3.12 wheels (the GPU machine's python3): pytest and its deps,
#                pykdtree (bench/run_edges.sh), Corrfunc 2.5.3 with wurlitzer and future
#                (the paircount stage); Corrfunc has no binary wheel, so it is built here
#                with python3.12 and libgsl-dev (its 100 MB of test data stripped)
# Run on the development machine (needs apt-get, pip, zip and unzip):
# scripts/make-carry.sh  (idempotent; about 5 minutes
# the first time, most of it Corrfunc's build). Peers are fetched by hand and never enter
# the repo: cudaKDTree's headers into .carry/cukd-src (`git archive HEAD cukd LICENSE |
# tar -x -C .carry/cukd-src` in its clone, its commit in .carry/cukd-src/COMMIT;
# bench/run_peer_cudakdtree.sh), ECL-BH into .carry/peers.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
debs="$root/.carry/debs" whl="$root/.carry/whl"
mkdir -p "$debs" "$whl"
(cd "$debs" && apt-get download libjson-c-dev libjson-c5 libfftw3-dev libfftw3-single3 libfftw3-double3 \
    libgsl27 libgslcblas0)
pip download -q -d "$whl" --only-binary=:all: --no-deps --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 \
    pykdtree pytest pluggy iniconfig packaging pygments wurlitzer future
if ! compgen -G "$whl/corrfunc-*.whl" >/dev/null; then
    # pyenv hosts: PYENV_VERSION=3.11.7:3.12.1 scripts/make-carry.sh puts python3.12 on PATH.
    python3.12 --version >/dev/null 2>&1 || { echo "$0: python3.12 is needed to build Corrfunc's wheel (with pyenv: PYENV_VERSION=<default>:3.12.x)" >&2; exit 1; }
    dpkg -s libgsl-dev >/dev/null 2>&1 || { echo "$0: Corrfunc builds against libgsl-dev (apt-get install libgsl-dev)" >&2; exit 1; }
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    python3.12 -m pip wheel -q --no-deps corrfunc==2.5.3 -w "$work/built"
    mkdir "$work/tree"
    (cd "$work/tree" && unzip -q "$work"/built/corrfunc-*.whl && rm -rf theory mocks &&
        grep -v '^theory/\|^mocks/' corrfunc-*.dist-info/RECORD >RECORD.new &&
        mv RECORD.new corrfunc-*.dist-info/RECORD &&
        zip -qr "$whl/$(basename "$work"/built/corrfunc-*.whl)" .)
fi
du -sh "$root/.carry"
