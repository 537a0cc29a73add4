#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CLI's MPI start-up under Open MPI (docs/distributed.md, "The launch floor"): with
# every rank on one node canopy selects the ob1 PML without opening cm (whose PSM/PSM2
# probing took most of MPI_Init), and a PML the user chose (-x OMPI_MCA_pml) is kept;
# a job of one rank never starts MPI. Other MPI libraries: skipped (exit 77). Arguments: as
# tests/mpi/mpi_harness.sh says.
set -u
source "$(dirname "$0")/mpi_harness.sh" "$@"
if ! "$MPIEXEC" --version 2>&1 | grep -qE "Open MPI|OpenRTE"; then
    echo "skipped: $MPIEXEC is not Open MPI's"
    exit 77
fi
lacks() { ! grep -q "$@"; }
export OMPI_MCA_pml_base_verbose=10 # the ranks inherit it and print the PML selection
mrun 1 0 --version
check "-np 1: MPI is not started" lacks 'component ob1 selected' "$tmp/err"
check "-np 1: canopy answers" grep -q canopy "$tmp/out"
mrun 2 0 --version
check "-np 2: every rank selects ob1" [ "$(grep -c 'component ob1 selected' "$tmp/err")" -eq 2 ]
check "-np 2: cm is never opened" lacks 'found loaded component cm' "$tmp/err"
check "-np 2: canopy still answers" grep -q canopy "$tmp/out"
OMPI_MCA_pml=^ucx mrun 2 0 --version
check "the user's OMPI_MCA_pml is kept (cm opened)" grep -q 'found loaded component cm' "$tmp/err"
cli_finish
