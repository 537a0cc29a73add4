/* SPDX-License-Identifier: MIT */
/* N-body snapshot I/O (bench/results/nbody.md, "HDF5 snapshots"): the same bodies
 * written and read as one Gadget/SWIFT HDF5 snapshot (io/hdf5.h) and as three .npy
 * files (positions, velocities, masses: the arrays the snapshot holds).
 *
 *   canopy-bench-nbody-io [--n N] [--reps R] [--dir DIR]
 *
 *   canopy-bench-nbody-io --file SNAP.hdf5 [--reps R] [--dir DIR]
 *   (either form) [--reuse-pages]
 *
 * One JSON line per format and direction: median, min, max seconds of R runs. Files go
 * to DIR (default /tmp) and are removed at the end. --file times reads only, of a
 * snapshot written elsewhere (h5py: bench/nbody_io_h5py.py) against .npy files of the
 * arrays canopy reads from it. HDF5 and .npy reads alternate, so both see the same load.
 * Every array is a fresh mmap (M_MMAP_THRESHOLD fixed), as in a `canopy nbody` run, which
 * reads once: glibc's adaptive threshold otherwise recycles some reads' pages and not
 * others', by allocation order rather than by format. --reuse-pages keeps freed memory in
 * the heap instead, so most reads after the first land in pages already mapped: mostly
 * the read's own work, without the page faults. */
#include "bench_util.h"
#include "canopy.h"
#include "io/hdf5.h"

#include <malloc.h>
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
    const char *dir = "/tmp", *file = NULL;
    int reuse = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--file") && i + 1 < argc)
            file = argv[++i];
        else if (!strcmp(argv[i], "--reuse-pages"))
            reuse = 1;
        else {
            fprintf(stderr, "usage: canopy-bench-nbody-io [--n N | --file SNAP.hdf5] [--reps R] "
                            "[--dir DIR] [--reuse-pages]\n");
            return 2;
        }
    }
    if (n < 1 || reps < 1 || reps > 1000) return fprintf(stderr, "bad --n or --reps\n"), 2;
    if (reuse)
        mallopt(M_MMAP_THRESHOLD, 32 << 20), mallopt(M_TRIM_THRESHOLD, 1 << 30);
    else
        mallopt(M_MMAP_THRESHOLD, 1 << 20);
    canopy_snapshot src = {0};
    if (file && canopy_hdf5_read_snapshot(file, &src)) return fail(file);
    if (file) n = src.n;
    double *pos = file ? src.pos : malloc((size_t)n * 3 * sizeof *pos);
    double *vel = file ? src.vel : malloc((size_t)n * 3 * sizeof *vel);
    float *mass = file ? src.mass : malloc((size_t)n * sizeof *mass);
    double *th = malloc((size_t)reps * sizeof *th), *tn = malloc((size_t)reps * sizeof *tn);
    if (!pos || !vel || !mass || !th || !tn) return fprintf(stderr, "out of memory\n"), 1;
    for (int64_t i = 0; i < 3 * n && !file; i++)
        pos[i] = (double)(i % 9973) * 1e-3, vel[i] = -pos[i];
    for (int64_t i = 0; i < n && !file; i++) mass[i] = 1.0f / (float)n;
    char h5[4096], np[3][4096];
    snprintf(h5, sizeof h5, "%s/bench_nbody_io_%d.hdf5", dir, (int)getpid());
    const char *names[3] = {"pos", "vel", "mass"};
    for (int k = 0; k < 3; k++)
        snprintf(np[k], sizeof np[k], "%s/bench_nbody_io_%d_%s.npy", dir, (int)getpid(), names[k]);
    canopy_array arr[3] = {
        {pos, CANOPY_F64, 2, {n, 3}}, {vel, CANOPY_F64, 2, {n, 3}}, {mass, CANOPY_F32, 1, {n}}};
    int rc = 0;
    /* --file: the .npy files once; otherwise both writes, alternating, timed */
    for (int r = 0; r < (file ? 1 : reps) && !rc; r++) {
        double t = canopy_now();
        if (!file && canopy_hdf5_write_snapshot(h5, n, pos, vel, mass, 0.0, 0.0))
            rc = fail("hdf5 write");
        th[r] = canopy_now() - t;
        t = canopy_now();
        for (int k = 0; k < 3 && !rc; k++)
            if (canopy_npy_write(np[k], &arr[k])) rc = fail("npy write");
        tn[r] = canopy_now() - t;
    }
    if (!rc && !file) report("hdf5", "write", n, th, reps), report("npy", "write", n, tn, reps);
    for (int r = 0; r < reps && !rc; r++) {
        canopy_snapshot s;
        double t = canopy_now();
        if (canopy_hdf5_read_snapshot(file ? file : h5, &s)) rc = fail("hdf5 read");
        th[r] = canopy_now() - t;
        if (!rc && (s.n != n || memcmp(s.pos, pos, (size_t)n * 3 * sizeof *pos) ||
                    memcmp(s.vel, vel, (size_t)n * 3 * sizeof *vel) ||
                    memcmp(s.mass, mass, (size_t)n * sizeof *mass)))
            rc = fail("hdf5 read differs");
        if (!rc) canopy_snapshot_release(&s);
        t = canopy_now();
        for (int k = 0; k < 3 && !rc; k++) {
            canopy_array a;
            if (canopy_array_load(np[k], &a))
                rc = fail("npy read");
            else
                canopy_array_release(&a);
        }
        tn[r] = canopy_now() - t;
    }
    if (!rc) report("hdf5", "read", n, th, reps), report("npy", "read", n, tn, reps);
    unlink(h5);
    for (int k = 0; k < 3; k++) unlink(np[k]);
    if (file)
        canopy_snapshot_release(&src);
    else
        free(pos), free(vel), free(mass);
    free(th), free(tn);
    return rc;
}
