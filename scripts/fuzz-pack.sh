#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packs prebuilt libFuzzer targets for a many-core host without clang (the GPU host):
# builds build-fuzz/fuzz_<name> here (clang, as fuzz-long.sh does), strips their debug
# info, and writes OUT.tgz holding fz/bin/ (the targets), fz/lib/ (the shared libraries
# they load that a bare host may lack) and fz/work/corpus_<name>/ (a corpus to continue:
# fuzz-corpora/<name>/ when there is one). On the host, scripts/fuzz-pool.sh runs them:
#   tar xzf OUT.tgz -C /tmp && LD_LIBRARY_PATH=/tmp/fz/lib scripts/fuzz-pool.sh \
#       -b /tmp/fz/bin -s tests/fuzz -o /tmp/fz/work -t 540 regex:10000000
#   scripts/fuzz-pack.sh -o OUT.tgz NAME...      (NAME: regex, xgboost, ...)
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=""
while getopts "o:" o; do
    case $o in
    o) out=$OPTARG ;;
    *) sed -n '10p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ -n "$out" ] && [ $# -gt 0 ] || { sed -n '10p' "$0" >&2; exit 2; }
fuzz="$CANOPY_ROOT/build-fuzz"
CC=clang cmake -S "$CANOPY_ROOT" -B "$fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCANOPY_SANITIZE=ON -DCANOPY_FUZZ=ON -DCANOPY_CUDA=OFF \
    -DCANOPY_WERROR=ON >/dev/null
cmake --build "$fuzz" -j "$CANOPY_JOBS" --target "${@/#/fuzz_}" >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/fz/bin" "$stage/fz/lib" "$stage/fz/work"
for name in "$@"; do
    cp "$fuzz/fuzz_$name" "$stage/fz/bin/"
    strip -g "$stage/fz/bin/fuzz_$name"
    grown="$CANOPY_ROOT/fuzz-corpora/$name"
    if [ -d "$grown" ]; then cp -r "$grown" "$stage/fz/work/corpus_$name"; fi
done
# libomp and json-c: not part of a bare Ubuntu with only gcc and CUDA
ldd "$stage"/fz/bin/* | awk '/libomp|libjson-c/ {print $3}' | sort -u |
    xargs -r cp -t "$stage/fz/lib/"
mkdir -p "$(dirname "$out")"
tar czf "$out" -C "$stage" fz
echo "$out: $(tar tzf "$out" | grep -c /bin/fuzz_) targets, $(du -h "$out" | cut -f1)"
