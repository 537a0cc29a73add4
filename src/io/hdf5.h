/* SPDX-License-Identifier: MIT */
/* N-body snapshots in the Gadget-4/SWIFT HDF5 layout (docs/nbody.md, "HDF5 snapshots"):
 * group Header (NumPart_ThisFile, NumPart_Total, NumPart_Total_HighWord, MassTable,
 * Time, Redshift, BoxSize, NumFilesPerSnapshot) and group PartType1 (Coordinates,
 * Velocities, ParticleIDs, Masses). The HDF5 C library is loaded on first use, so a
 * command that never touches HDF5 does not pay for loading it and its dependencies.
 * Not public API. */
#ifndef CANOPY_IO_HDF5_H
#define CANOPY_IO_HDF5_H

#include "canopy.h"

typedef struct canopy_snapshot {
    int64_t n;
    double *pos, *vel; /* (n, 3) */
    float *mass;       /* (n) */
    double time;       /* Header/Time */
    double box;        /* Header/BoxSize (0: none) */
} canopy_snapshot;

/* CANOPY_OK when the HDF5 library can be used (built with it, and it loads), so a
 * run can refuse before it computes anything. */
canopy_status canopy_hdf5_usable(void);
/* 1 when path names an HDF5 file by its extension (.hdf5 or .h5). */
int canopy_hdf5_path(const char *path);
/* Reads PartType1 and the header; checks the counts against the datasets' shapes and
 * every value for finiteness. On failure s is left empty. */
canopy_status canopy_hdf5_read_snapshot(const char *path, canopy_snapshot *s);
/* Header/BoxSize alone (0 when absent or 0: open boundaries), checked as the snapshot
 * read checks it, so a command can settle its box before reading the bodies. */
canopy_status canopy_hdf5_read_box(const char *path, double *box);
/* Writes n bodies (ParticleIDs 0..n-1) atomically: the file appears complete or not
 * at all. mass may be NULL (MassTable[1] = 1/n). */
canopy_status canopy_hdf5_write_snapshot(const char *path, int64_t n, const double *pos,
                                         const double *vel, const float *mass, double time,
                                         double box);
void canopy_snapshot_release(canopy_snapshot *s);

#endif
