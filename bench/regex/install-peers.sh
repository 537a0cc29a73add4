#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the regex benchmark's peers (bench-only; CI does not need them):
# RE2 and Hyperscan from Debian's packages, and a C++ compiler for their drivers.
set -euo pipefail
pkgs=(g++ libre2-dev libhyperscan-dev pkg-config)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
