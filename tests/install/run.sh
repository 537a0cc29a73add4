#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs a configured canopy build to a temporary prefix, then builds and runs
# examples/knn.c against it the ways a user would: find_package(canopy) with the shared
# and the static target, and pkg-config with a shared and a static link (none of them
# naming a CUDA library; a CUDA build's module is installed and found at run time).
# usage: tests/install/run.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" >"$work/install.log" ||
    { cat "$work/install.log"; exit 1; }
[ -x "$prefix/bin/canopy" ] || { echo "install: no bin/canopy"; exit 1; }
"$prefix/bin/canopy" --version
# An MPI build installs canopy-mpi beside canopy, which runs it under mpirun; canopy itself
# must not load libmpi.
if [ -x "$build/canopy-mpi" ]; then
    [ -x "$prefix/bin/canopy-mpi" ] || { echo "install: no bin/canopy-mpi"; exit 1; }
    if readelf -d "$prefix/bin/canopy" | grep -q 'libmpi'; then
        echo "install: bin/canopy links libmpi"; exit 1
    fi
fi
# A CUDA build installs its module into the lib dir, where the installed CLI finds it.
if ls "$build"/libcanopy_cuda.so.* >/dev/null 2>&1; then
    module="$(find "$prefix" -name 'libcanopy_cuda.so.*' | head -n 1)"
    [ -n "$module" ] || { echo "install: no CUDA module installed"; exit 1; }
    "$prefix/bin/canopy" info | grep -q "^cuda: *$(dirname "$module")/" ||
        { echo "install: bin/canopy does not find $module"; "$prefix/bin/canopy" info; exit 1; }
    echo "-- CUDA module $module found by bin/canopy"
fi

echo "-- find_package(canopy)"
cmake -S "$root/tests/install" -B "$work/cm" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    >"$work/cm.log" 2>&1 || { cat "$work/cm.log"; exit 1; }
cmake --build "$work/cm" >"$work/cm-build.log" 2>&1 || { cat "$work/cm-build.log"; exit 1; }
"$work/cm/knn_shared"
"$work/cm/knn_static"

echo "-- pkg-config"
pcdir="$(dirname "$(find "$prefix" -name canopy.pc | head -n 1)")"
export PKG_CONFIG_PATH="$pcdir"
libdir="$(pkg-config --variable=libdir canopy)"
# shellcheck disable=SC2046 # the flags are words
cc "$root/examples/knn.c" $(pkg-config --cflags --libs canopy) -Wl,-rpath,"$libdir" \
    -o "$work/knn_pc_shared"
"$work/knn_pc_shared"
# A static link: the archive, then what it needs (Libs.private), without -lcanopy.
# shellcheck disable=SC2046
cc "$root/examples/knn.c" $(pkg-config --cflags canopy) "$libdir/libcanopy.a" \
    $(pkg-config --static --libs canopy | sed 's/\(^\| \)-lcanopy\( \|$\)/ /') -o "$work/knn_pc_static"
if ldd "$work/knn_pc_static" | grep -q libcanopy; then
    echo "pkg-config static link still needs libcanopy.so"
    exit 1
fi
"$work/knn_pc_static"

# The MPI layer is its own library: libcanopy.so never needs libmpi; a program using
# canopy/dist.h links canopy-dist (pkg-config) and gets the MPI declarations.
if readelf -d "$libdir/libcanopy.so" | grep -q 'libmpi'; then
    echo "install: libcanopy.so needs libmpi"
    exit 1
fi
if [ -f "$pcdir/canopy-dist.pc" ]; then
    echo "-- pkg-config canopy-dist"
    cat >"$work/dist.c" <<'C'
#include <canopy/dist.h>
#include <stdio.h>
int main(void) {
    canopy_status (*knn)(MPI_Comm, canopy_points, const int64_t *, canopy_points, int32_t,
                         const canopy_run_options *, int64_t *, float *,
                         canopy_dist_stats *) = canopy_dist_knn;
    printf("canopy_have_mpi %d, canopy_dist_knn %s\n", canopy_have_mpi(), knn ? "linked" : "missing");
    return canopy_have_mpi() == 1 && knn ? 0 : 1;
}
C
    # shellcheck disable=SC2046
    cc "$work/dist.c" $(pkg-config --cflags --libs canopy-dist) -Wl,-rpath,"$libdir" \
        -o "$work/dist_pc"
    "$work/dist_pc"
fi
# The installed CLI and shared libraries carry a run path relative to the prefix, so
# they run from any prefix without LD_LIBRARY_PATH.
for f in "$prefix"/bin/canopy* "$libdir"/libcanopy*.so; do
    readelf -d "$f" | grep -E '(RUNPATH|RPATH).*\$ORIGIN' >/dev/null ||
        { echo "install: $f has no \$ORIGIN run path"; readelf -d "$f" | grep -i path; exit 1; }
done
moved="$work/moved"
mv "$prefix" "$moved"
env -u LD_LIBRARY_PATH "$moved/bin/canopy" --version >/dev/null ||
    { echo "install: bin/canopy does not run from a moved prefix"; exit 1; }
echo "install: find_package and pkg-config builds ran; \$ORIGIN run paths, relocatable"
