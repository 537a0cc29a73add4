/* SPDX-License-Identifier: MIT */
/* N-body snapshot I/O (bench/results/nbody.md, "HDF5 snapshots"): the same bodies
 * written and read as one Gadget/SWIFT HDF5 snapshot (io/hdf5.h) and as three .npy
 * files (positions, velocities, masses: the arrays the snapshot holds).
 *
 *   canopy-bench-nbody-io [--n N] [--reps R] [--dir DIR]
 *
 * One JSON line per format and direction: median, min, max seconds of R runs. Files go
 * to DIR (default /tmp) and are removed at the end. */
#include "bench_util.h"
#include "canopy.h"
#include "io/hdf5.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what) {
    fprintf(stderr, "bench_nbody_io: %s: %s\n", what, canopy_last_error());
    return 1;
}

static void report(const char *format, const char *dir, int64_t n, double *t, int r) {
    bench_summary s = bench_summarise(t, r);
    printf("{%s,\"bench\":\"nbody_io\",\"format\":\"%s\",\"direction\":\"%s\",\"n\":%lld,"
           "\"reps\":%d,\"median_s\":%.5f,\"min_s\":%.5f,\"max_s\":%.5f}\n",
           bench_meta_json(), format, dir, (long long)n, r, s.med, s.min, s.max);
}

int main(int argc, char **argv) {
    int64_t n = 1000000;
    int reps = 5;
    const char *dir = "/tmp";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else {
            fprintf(stderr, "usage: canopy-bench-nbody-io [--n N] [--reps R] [--dir DIR]\n");
            return 2;
        }
    }
    if (n < 1 || reps < 1 || reps > 1000) return fprintf(stderr, "bad --n or --reps\n"), 2;
    double *pos = malloc((size_t)n * 3 * sizeof *pos), *vel = malloc((size_t)n * 3 * sizeof *vel);
    float *mass = malloc((size_t)n * sizeof *mass);
    double *tw = malloc((size_t)reps * sizeof *tw), *tr = malloc((size_t)reps * sizeof *tr);
    if (!pos || !vel || !mass || !tw || !tr) return fprintf(stderr, "out of memory\n"), 1;
    for (int64_t i = 0; i < 3 * n; i++) pos[i] = (double)(i % 9973) * 1e-3, vel[i] = -pos[i];
    for (int64_t i = 0; i < n; i++) mass[i] = 1.0f / (float)n;
    char h5[4096], np[3][4096];
    snprintf(h5, sizeof h5, "%s/bench_nbody_io_%d.hdf5", dir, (int)getpid());
    const char *names[3] = {"pos", "vel", "mass"};
    for (int k = 0; k < 3; k++)
        snprintf(np[k], sizeof np[k], "%s/bench_nbody_io_%d_%s.npy", dir, (int)getpid(), names[k]);
    canopy_array arr[3] = {
        {pos, CANOPY_F64, 2, {n, 3}}, {vel, CANOPY_F64, 2, {n, 3}}, {mass, CANOPY_F32, 1, {n}}};
    int rc = 0;
    for (int r = 0; r < reps && !rc; r++) {
        double t = canopy_now();
        if (canopy_hdf5_write_snapshot(h5, n, pos, vel, mass, 0.0, 0.0)) rc = fail("hdf5 write");
        tw[r] = canopy_now() - t;
        canopy_snapshot s;
        t = canopy_now();
        if (!rc && canopy_hdf5_read_snapshot(h5, &s)) rc = fail("hdf5 read");
        tr[r] = canopy_now() - t;
        if (!rc && (s.n != n || memcmp(s.pos, pos, (size_t)n * 3 * sizeof *pos)))
            rc = fail("hdf5 round trip differs");
        if (!rc) canopy_snapshot_release(&s);
    }
    if (!rc) report("hdf5", "write", n, tw, reps), report("hdf5", "read", n, tr, reps);
    for (int r = 0; r < reps && !rc; r++) {
        double t = canopy_now();
        for (int k = 0; k < 3 && !rc; k++)
            if (canopy_npy_write(np[k], &arr[k])) rc = fail("npy write");
        tw[r] = canopy_now() - t;
        t = canopy_now();
        for (int k = 0; k < 3 && !rc; k++) {
            canopy_array a;
            if (canopy_array_load(np[k], &a))
                rc = fail("npy read");
            else
                canopy_array_release(&a);
        }
        tr[r] = canopy_now() - t;
    }
    if (!rc) report("npy", "write", n, tw, reps), report("npy", "read", n, tr, reps);
    unlink(h5);
    for (int k = 0; k < 3; k++) unlink(np[k]);
    free(pos), free(vel), free(mass), free(tw), free(tr);
    return rc;
}
