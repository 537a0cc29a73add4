#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a CLI process loads at start (every command pays it; `canopy grep` on a few MB
# is half start-up): a runtime linked in from its archive (libgomp, json-c) must not
# also be loaded as a shared library (two OpenMP runtimes in one process), and no
# libgcc CPU-detection constructor runs (core/cpu.c detects lazily, without cpuid
# where glibc has the features). The commands still work: OpenMP on two threads, the
# CPU's ISA in `canopy info`. Checks canopy-mpi beside it too, where it exists.
# $1: the canopy binary. Prints "N passed, M failed"; exits 1 on any failure.
set -u
CANOPY=${1:?usage: cli_startup.sh CANOPY_BINARY}
tmp=$(mktemp -d /tmp/canopy-cli-startup.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/harness.sh"
for tool in readelf nm; do
    command -v "$tool" >/dev/null || { echo "$tool not found: skipped"; exit 77; }
done

bins=("$CANOPY")
[ -x "$(dirname "$CANOPY")/canopy-mpi" ] && bins+=("$(dirname "$CANOPY")/canopy-mpi")
for b in "${bins[@]}"; do
    nm "$b" >"$tmp/syms" 2>/dev/null
    readelf -d "$b" | grep NEEDED >"$tmp/needed"
    # "defines SYMBOL LIBRARY": linked in, so LIBRARY must not be needed as well
    for pair in GOMP_parallel:libgomp json_object_new_object:libjson-c; do
        sym=${pair%%:*} lib=${pair#*:}
        if grep -q " T $sym\$" "$tmp/syms"; then
            check "$b: $sym linked in, $lib not loaded too" test -z "$(grep "$lib" "$tmp/needed")"
        fi
    done
    check "$b: no libgcc CPU-detection constructor" test -z "$(grep __cpu_indicator_init "$tmp/syms")"
done

printf 'abc\nxabcx\nno\n%.0s' $(seq 2000) >"$tmp/in"
run 0 grep -c --threads 2 abc "$tmp/in"
check "grep on 2 threads counts" test "$(cat "$tmp/out")" = 4000
run 0 info
check "info names the CPU's ISA" grep -Eq '^cpu isa: +(scalar|sse4\.2|avx2|avx512)$' "$tmp/out"
cli_finish
