/* SPDX-License-Identifier: MIT */
/* Gadget-4/SWIFT HDF5 snapshots (io/hdf5.h). The HDF5 C library and its ~35 shared
 * dependencies (curl, ssl, ...) would add ~14 ms to every CLI start if linked, so it
 * is dlopen'ed on first use; its headers give the functions' types. Builds without
 * HDF5 (CANOPY_HAVE_HDF5 unset) fail every call with a message saying so. */
#define _POSIX_C_SOURCE 200809L
#include "io/hdf5.h"

#include <string.h>

int canopy_hdf5_path(const char *path) {
    size_t len = path ? strlen(path) : 0;
    return (len > 5 && !strcmp(path + len - 5, ".hdf5")) ||
           (len > 3 && !strcmp(path + len - 3, ".h5"));
}

void canopy_snapshot_release(canopy_snapshot *s) {
    canopy_free(s->pos);
    canopy_free(s->vel);
    canopy_free(s->mass);
    memset(s, 0, sizeof *s);
}

#ifndef CANOPY_HAVE_HDF5

static canopy_status no_hdf5(const char *what) {
    return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                       "%s: this canopy was built without HDF5 (install libhdf5-dev, "
                       "scripts/install-deps.sh, and rebuild); use .npy files instead",
                       what);
}

canopy_status canopy_hdf5_usable(void) {
    return no_hdf5("HDF5 snapshots");
}

canopy_status canopy_hdf5_read_snapshot(const char *path, canopy_snapshot *s) {
    memset(s, 0, sizeof *s);
    return no_hdf5(path);
}

canopy_status canopy_hdf5_write_snapshot(const char *path, int64_t n, const double *pos,
                                         const double *vel, const float *mass, double time,
                                         double box) {
    (void)n, (void)pos, (void)vel, (void)mass, (void)time, (void)box;
    return no_hdf5(path);
}

canopy_status canopy_hdf5_read_box(const char *path, double *box) {
    *box = 0.0;
    return no_hdf5(path);
}

#else

#include <dlfcn.h>
#include <errno.h>
#include <float.h>
#include <hdf5.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>

/* H5F_ACC_* expand to calls of H5check_version and H5open, which would link the
 * library: their values (H5Fpublic.h) instead. */
enum { ACC_RDONLY = 0x0000u, ACC_TRUNC = 0x0002u };

/* The entry points used, typed from hdf5.h. */
#define H5_FUNCS(X)                                                                                \
    X(H5open)                                                                                      \
    X(H5Eset_auto2)                                                                                \
    X(H5Fcreate)                                                                                   \
    X(H5Fopen)                                                                                     \
    X(H5Fclose)                                                                                    \
    X(H5Gcreate2)                                                                                  \
    X(H5Gopen2)                                                                                    \
    X(H5Gclose)                                                                                    \
    X(H5Lexists)                                                                                   \
    X(H5Aexists)                                                                                   \
    X(H5Acreate2)                                                                                  \
    X(H5Aopen)                                                                                     \
    X(H5Aget_space)                                                                                \
    X(H5Aget_type)                                                                                 \
    X(H5Aread)                                                                                     \
    X(H5Awrite)                                                                                    \
    X(H5Aclose)                                                                                    \
    X(H5Screate)                                                                                   \
    X(H5Screate_simple)                                                                            \
    X(H5Sget_simple_extent_ndims)                                                                  \
    X(H5Sget_simple_extent_dims)                                                                   \
    X(H5Sselect_hyperslab)                                                                         \
    X(H5Sclose)                                                                                    \
    X(H5Dcreate2)                                                                                  \
    X(H5Dopen2)                                                                                    \
    X(H5Dget_space)                                                                                \
    X(H5Dget_type)                                                                                 \
    X(H5Dread)                                                                                     \
    X(H5Dwrite)                                                                                    \
    X(H5Dclose)                                                                                    \
    X(H5Tget_class)                                                                                \
    X(H5Tget_size)                                                                                 \
    X(H5Tclose)
/* Predefined types: variables the library sets up in H5open. */
#define H5_TYPES(X)                                                                                \
    X(H5T_NATIVE_DOUBLE_g)                                                                         \
    X(H5T_NATIVE_FLOAT_g)                                                                          \
    X(H5T_NATIVE_LLONG_g)                                                                          \
    X(H5T_NATIVE_ULLONG_g)                                                                         \
    X(H5T_NATIVE_UINT_g)                                                                           \
    X(H5T_NATIVE_INT_g)

static struct {
#define FN(name) __typeof__(name) *name;
    H5_FUNCS(FN)
#undef FN
#define TY(name) hid_t name;
    H5_TYPES(TY)
#undef TY
} h5;

static pthread_once_t h5_once = PTHREAD_ONCE_INIT;
static int h5_ok;
static char h5_why[1024];

static void *need(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p)
        snprintf(h5_why, sizeof h5_why, "the HDF5 library %s lacks %s", CANOPY_HDF5_SONAME, name);
    return p;
}

static void h5_load(void) {
    const char *names[] = {CANOPY_HDF5_LIBRARY, CANOPY_HDF5_SONAME};
    void *lib = NULL;
    for (int i = 0; i < 2 && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(h5_why, sizeof h5_why, "cannot load the HDF5 library %s: %s", CANOPY_HDF5_SONAME,
                 e ? e : "not found");
        return;
    }
    void *p;
#define FN(name)                                                                                   \
    if (!(p = need(lib, #name))) return;                                                           \
    *(void **)&h5.name = p;
    H5_FUNCS(FN)
#undef FN
    if (h5.H5open() < 0) {
        snprintf(h5_why, sizeof h5_why, "the HDF5 library %s failed to start", CANOPY_HDF5_SONAME);
        return;
    }
#define TY(name)                                                                                   \
    if (!(p = need(lib, #name))) return;                                                           \
    h5.name = *(hid_t *)p;
    H5_TYPES(TY)
#undef TY
    /* errors are reported here, by name, instead of HDF5's stack dump on stderr */
    h5.H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    h5_ok = 1; /* never closed: its atexit handler must find it loaded */
}

static canopy_status h5_ready(void) {
    pthread_once(&h5_once, h5_load);
    return h5_ok ? CANOPY_OK : canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s", h5_why);
}

canopy_status canopy_hdf5_usable(void) {
    return h5_ready();
}

static void close_id(herr_t (*fn)(hid_t), hid_t *id) {
    if (*id >= 0) fn(*id);
    *id = -1;
}

/* ------------------------------------------------------------------- write -- */

static int put_attr(hid_t loc, const char *name, hid_t type, hsize_t count, const void *v) {
    hid_t sp = count ? h5.H5Screate_simple(1, &count, NULL) : h5.H5Screate(H5S_SCALAR);
    hid_t a = sp < 0 ? -1 : h5.H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && h5.H5Awrite(a, type, v) >= 0;
    close_id(h5.H5Aclose, &a);
    close_id(h5.H5Sclose, &sp);
    return ok;
}

static int put_dset(hid_t loc, const char *name, hid_t type, hsize_t n, hsize_t cols,
                    const void *v) {
    hsize_t dims[2] = {n, cols};
    hid_t sp = h5.H5Screate_simple(cols ? 2 : 1, dims, NULL);
    hid_t d =
        sp < 0 ? -1 : h5.H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = d >= 0 && h5.H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    close_id(h5.H5Dclose, &d);
    close_id(h5.H5Sclose, &sp);
    return ok;
}

static int write_file(hid_t f, int64_t n, const double *pos, const double *vel, const float *mass,
                      double time, double box, const uint64_t *ids) {
    long long this_file[6] = {0, n, 0, 0, 0, 0};
    unsigned total[6] = {0, (unsigned)(n & 0xffffffffu), 0, 0, 0, 0};
    unsigned high[6] = {0, (unsigned)((uint64_t)n >> 32), 0, 0, 0, 0};
    double table[6] = {0, mass ? 0.0 : 1.0 / (double)n, 0, 0, 0, 0}, zero = 0.0;
    int files = 1;
    hid_t g = h5.H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = g >= 0 && put_attr(g, "NumPart_ThisFile", h5.H5T_NATIVE_LLONG_g, 6, this_file) &&
             put_attr(g, "NumPart_Total", h5.H5T_NATIVE_UINT_g, 6, total) &&
             put_attr(g, "NumPart_Total_HighWord", h5.H5T_NATIVE_UINT_g, 6, high) &&
             put_attr(g, "MassTable", h5.H5T_NATIVE_DOUBLE_g, 6, table) &&
             put_attr(g, "Time", h5.H5T_NATIVE_DOUBLE_g, 0, &time) &&
             put_attr(g, "Redshift", h5.H5T_NATIVE_DOUBLE_g, 0, &zero) &&
             put_attr(g, "BoxSize", h5.H5T_NATIVE_DOUBLE_g, 0, &box) &&
             put_attr(g, "NumFilesPerSnapshot", h5.H5T_NATIVE_INT_g, 0, &files);
    close_id(h5.H5Gclose, &g);
    if (ok) g = h5.H5Gcreate2(f, "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ok = ok && g >= 0 && put_dset(g, "Coordinates", h5.H5T_NATIVE_DOUBLE_g, n, 3, pos) &&
         put_dset(g, "Velocities", h5.H5T_NATIVE_DOUBLE_g, n, 3, vel) &&
         put_dset(g, "ParticleIDs", h5.H5T_NATIVE_ULLONG_g, n, 0, ids) &&
         (!mass || put_dset(g, "Masses", h5.H5T_NATIVE_FLOAT_g, n, 0, mass));
    close_id(h5.H5Gclose, &g);
    return ok;
}

canopy_status canopy_hdf5_write_snapshot(const char *path, int64_t n, const double *pos,
                                         const double *vel, const float *mass, double time,
                                         double box) {
    canopy_status st = h5_ready();
    if (st) return st;
    if (!strcmp(path, "-"))
        return canopy_fail(CANOPY_ERR_INVALID, "an HDF5 snapshot cannot go to standard output");
    if (n < 1) return canopy_fail(CANOPY_ERR_INVALID, "'%s': no bodies to write", path);
    uint64_t *ids = NULL;
    if ((st = canopy_alloc((void **)&ids, (size_t)n, sizeof *ids))) return st;
    for (int64_t i = 0; i < n; i++) ids[i] = (uint64_t)i;
    /* HDF5 writes the outfile's temporary by name; commit renames it over path */
    canopy_outfile o;
    if ((st = canopy_outfile_open(&o, path))) {
        canopy_free(ids);
        return st;
    }
    hid_t f = h5.H5Fcreate(o.tmp_path, ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    int ok = f >= 0 && write_file(f, n, pos, vel, mass, time, box, ids);
    if (f >= 0 && h5.H5Fclose(f) < 0) ok = 0;
    canopy_free(ids);
    if (!ok) {
        canopy_outfile_abort(&o);
        return canopy_fail(CANOPY_ERR_IO, "cannot write the HDF5 snapshot '%s' (disk full?)", path);
    }
    return canopy_outfile_commit(&o);
}

/* -------------------------------------------------------------------- read -- */

typedef struct reader {
    const char *path;
    hid_t f, hdr, part;
} reader;

static canopy_status bad(const reader *r, const char *what) {
    return canopy_fail(CANOPY_ERR_FORMAT,
                       "'%s' is not a Gadget/SWIFT HDF5 snapshot canopy can "
                       "read: %s",
                       r->path, what);
}

static void close_reader(reader *r) {
    close_id(h5.H5Gclose, &r->part);
    close_id(h5.H5Gclose, &r->hdr);
    close_id(h5.H5Fclose, &r->f);
}

/* Header/BoxSize as read (nb values, 0 when absent): a cube, finite and >= 0. */
static canopy_status check_box(const reader *r, const double *box, int64_t nb) {
    for (int64_t j = 1; j < nb; j++)
        if (box[j] != box[0]) return bad(r, "Header/BoxSize is not a cube");
    if (!isfinite(box[0]) || box[0] < 0) return bad(r, "Header/BoxSize is negative or not finite");
    return CANOPY_OK;
}

/* Element count of an attribute or dataset space: -1 when unreadable, 1 for a scalar. */
static int64_t space_count(hid_t sp, int *ndims, hsize_t dims[2]) {
    int nd = sp < 0 ? -1 : h5.H5Sget_simple_extent_ndims(sp);
    if (nd < 0 || nd > 2) return -1;
    hsize_t d[2] = {1, 1};
    if (nd > 0 && h5.H5Sget_simple_extent_dims(sp, d, NULL) < 0) return -1;
    if (ndims) *ndims = nd;
    if (dims) dims[0] = d[0], dims[1] = d[1];
    return (int64_t)(d[0] * d[1]);
}

/* Header attribute of exactly `count` numbers (or, count 0, 1 to 3), converted to
 * mem; 0 when absent. */
static canopy_status get_attr(const reader *r, const char *name, hid_t mem, int64_t count,
                              void *out, int *present, int64_t *got) {
    char msg[160];
    *present = h5.H5Aexists(r->hdr, name) > 0;
    if (!*present) return CANOPY_OK;
    hid_t a = h5.H5Aopen(r->hdr, name, H5P_DEFAULT), sp = a < 0 ? -1 : h5.H5Aget_space(a);
    hid_t t = a < 0 ? -1 : h5.H5Aget_type(a);
    int64_t k = space_count(sp, NULL, NULL);
    H5T_class_t c = t < 0 ? H5T_NO_CLASS : h5.H5Tget_class(t);
    canopy_status st = CANOPY_OK;
    if (c != H5T_INTEGER && c != H5T_FLOAT) {
        snprintf(msg, sizeof msg, "Header attribute %s is not numeric", name);
        st = bad(r, msg);
    } else if (count ? k != count : (k < 1 || k > 3)) {
        snprintf(msg, sizeof msg, "Header attribute %s holds %lld values, not %lld", name,
                 (long long)k, (long long)(count ? count : 1));
        st = bad(r, msg);
    } else if (h5.H5Aread(a, mem, out) < 0) {
        snprintf(msg, sizeof msg, "Header attribute %s cannot be read as numbers", name);
        st = bad(r, msg);
    }
    if (got) *got = k;
    close_id(h5.H5Tclose, &t);
    close_id(h5.H5Sclose, &sp);
    close_id(h5.H5Aclose, &a);
    return st;
}

/* Checks that PartType1/name is n rows of `cols` numbers (cols 0: a vector of n, or
 * (n, 1)). */
static canopy_status check_dset(const reader *r, const char *name, int64_t n, int64_t cols) {
    char msg[200];
    hid_t d = h5.H5Dopen2(r->part, name, H5P_DEFAULT), sp = d < 0 ? -1 : h5.H5Dget_space(d);
    hid_t t = d < 0 ? -1 : h5.H5Dget_type(d);
    int nd = 0;
    hsize_t dims[2] = {0, 0};
    int64_t k = space_count(sp, &nd, dims);
    H5T_class_t c = t < 0 ? H5T_NO_CLASS : h5.H5Tget_class(t);
    int shape_ok =
        cols ? nd == 2 && dims[1] == (hsize_t)cols : nd == 1 || (nd == 2 && dims[1] == 1);
    canopy_status st = CANOPY_OK;
    if (d < 0) {
        snprintf(msg, sizeof msg, "PartType1/%s is missing", name);
        st = bad(r, msg);
    } else if (c != H5T_INTEGER && c != H5T_FLOAT) {
        snprintf(msg, sizeof msg, "PartType1/%s is not numeric", name);
        st = bad(r, msg);
    } else if (k < 0 || !shape_ok) {
        snprintf(msg, sizeof msg, "PartType1/%s must have shape %s", name, cols ? "(n, 3)" : "(n)");
        st = bad(r, msg);
    } else if ((int64_t)dims[0] != n) {
        snprintf(msg, sizeof msg,
                 "PartType1/%s has %lld rows but Header/NumPart_ThisFile[1] is %lld", name,
                 (long long)dims[0], (long long)n);
        st = bad(r, msg);
    }
    close_id(h5.H5Tclose, &t);
    close_id(h5.H5Sclose, &sp);
    close_id(h5.H5Dclose, &d);
    return st;
}

static canopy_status read_header(reader *r, int64_t *n, double *mass1, canopy_snapshot *s) {
    long long this_file[6], total[6] = {0};
    unsigned high[6] = {0};
    double table[6] = {0}, box[3] = {0};
    int files = 1, have, have_total, have_high;
    int64_t nbox = 0;
    char msg[200];
    canopy_status st;
    if ((st = get_attr(r, "NumPart_ThisFile", h5.H5T_NATIVE_LLONG_g, 6, this_file, &have, NULL)))
        return st;
    if (!have) return bad(r, "Header/NumPart_ThisFile is missing");
    if ((st = get_attr(r, "NumPart_Total", h5.H5T_NATIVE_LLONG_g, 6, total, &have_total, NULL)) ||
        (st = get_attr(r, "NumPart_Total_HighWord", h5.H5T_NATIVE_UINT_g, 6, high, &have_high,
                       NULL)) ||
        (st = get_attr(r, "MassTable", h5.H5T_NATIVE_DOUBLE_g, 6, table, &have, NULL)) ||
        (st = get_attr(r, "Time", h5.H5T_NATIVE_DOUBLE_g, 1, &s->time, &have, NULL)) ||
        (st = get_attr(r, "BoxSize", h5.H5T_NATIVE_DOUBLE_g, 0, box, &have, &nbox)) ||
        (st = get_attr(r, "NumFilesPerSnapshot", h5.H5T_NATIVE_INT_g, 1, &files, &have, NULL)))
        return st;
    if (files != 1) {
        snprintf(msg, sizeof msg,
                 "the snapshot is split over %d files (NumFilesPerSnapshot); "
                 "canopy reads single-file snapshots",
                 files);
        return bad(r, msg);
    }
    for (int t = 0; t < 6; t++) {
        if (this_file[t] < 0 || total[t] < 0) return bad(r, "negative particle count in Header");
        if (t != 1 && this_file[t] != 0) {
            snprintf(msg, sizeof msg,
                     "it holds %lld particles of PartType%d; canopy nbody reads "
                     "the collisionless PartType1 only",
                     this_file[t], t);
            return bad(r, msg);
        }
    }
    long long all = total[1] + ((long long)high[1] << 32);
    if (have_total && all != this_file[1]) {
        snprintf(msg, sizeof msg,
                 "Header/NumPart_Total[1] (%lld) differs from "
                 "NumPart_ThisFile[1] (%lld)",
                 all, this_file[1]);
        return bad(r, msg);
    }
    if (this_file[1] < 1) return bad(r, "Header/NumPart_ThisFile[1] is 0: no bodies");
    if ((st = check_box(r, box, nbox))) return st;
    if (!isfinite(s->time) || !isfinite(table[1]) || table[1] < 0)
        return bad(r, "Header/Time or MassTable[1] is negative or not finite");
    *n = this_file[1];
    *mass1 = table[1];
    s->box = box[0];
    return CANOPY_OK;
}

/* Rows read per H5Dread: big enough that HDF5's per-call work is small, small enough
 * that a block is still in cache when it is converted and checked. */
enum { BLOCK_ROWS = 1 << 15 };

/* Index of the first value of v[0, k) that is not finite, k if none. x * 0 is NaN
 * exactly when x is not finite; the sums in independent lanes vectorise (a branch or an
 * integer flag per value does not), and the search runs only on a bad block. */
static size_t first_bad_f64(const double *v, size_t k) {
    double acc[8] = {0};
    size_t i = 0;
    for (; i + 8 <= k; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += v[i + j] * 0.0;
    for (; i < k; i++) acc[0] += v[i] * 0.0;
    int any = 0;
    for (int j = 0; j < 8; j++) any |= acc[j] != 0.0;
    for (i = 0; any && isfinite(v[i]);) i++;
    return any ? i : k;
}

/* The same for masses, which must also not be negative (the lanes' minimum). */
static size_t first_bad_mass(const float *v, size_t k) {
    float acc[8] = {0}, lo[8] = {0};
    size_t i = 0;
    for (; i + 8 <= k; i += 8)
        for (int j = 0; j < 8; j++) {
            acc[j] += v[i + j] * 0.0f;
            lo[j] = lo[j] < v[i + j] ? lo[j] : v[i + j];
        }
    for (; i < k; i++) acc[0] += v[i] * 0.0f, lo[0] = lo[0] < v[i] ? lo[0] : v[i];
    int any = 0;
    for (int j = 0; j < 8; j++) any |= acc[j] != 0.0f || lo[j] < 0.0f;
    for (i = 0; any && isfinite(v[i]) && v[i] >= 0.0f;) i++;
    return any ? i : k;
}

/* PartType1/name (shape checked by check_dset) into out: n * w doubles (f64) or n floats.
 * Block by block, each converted and checked while in cache. A float dataset of the other
 * width is read in its own type and converted here: HDF5's float conversion path is
 * several times slower than the read itself. */
static canopy_status read_dset(const reader *r, const char *name, int64_t n, int64_t w, int f64,
                               void *out) {
    hid_t d = h5.H5Dopen2(r->part, name, H5P_DEFAULT), fsp = d < 0 ? -1 : h5.H5Dget_space(d);
    hid_t t = d < 0 ? -1 : h5.H5Dget_type(d), msp = -1;
    int nd = fsp < 0 ? -1 : h5.H5Sget_simple_extent_ndims(fsp);
    size_t fsize = t < 0 ? 0 : h5.H5Tget_size(t), dsize = f64 ? sizeof(double) : sizeof(float);
    int stage =
        t >= 0 && h5.H5Tget_class(t) == H5T_FLOAT && (fsize == 4 || fsize == 8) && fsize != dsize;
    hid_t mem = (stage ? fsize == 8 : f64) ? h5.H5T_NATIVE_DOUBLE_g : h5.H5T_NATIVE_FLOAT_g;
    void *buf = NULL;
    canopy_status st = CANOPY_OK;
    if (stage) st = canopy_alloc(&buf, (size_t)BLOCK_ROWS * (size_t)w, fsize);
    int ok = !st && nd >= 1 && nd <= 2;
    for (int64_t lo = 0; ok && !st && lo < n; lo += BLOCK_ROWS) {
        int64_t m = n - lo < BLOCK_ROWS ? n - lo : BLOCK_ROWS;
        size_t k = (size_t)(m * w);
        hsize_t start[2] = {(hsize_t)lo, 0}, count[2] = {(hsize_t)m, 1}, flat = k;
        if (nd == 2) count[1] = (hsize_t)w;
        char *dst = (char *)out + (size_t)lo * (size_t)w * dsize;
        close_id(h5.H5Sclose, &msp);
        msp = h5.H5Screate_simple(1, &flat, NULL);
        ok = msp >= 0 &&
             h5.H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             h5.H5Dread(d, mem, msp, fsp, H5P_DEFAULT, stage ? buf : dst) >= 0;
        if (ok && stage && f64)
            for (size_t i = 0; i < k; i++) ((double *)dst)[i] = ((const float *)buf)[i];
        else if (ok && stage)
            for (size_t i = 0; i < k; i++) ((float *)dst)[i] = (float)((const double *)buf)[i];
        size_t b = !ok   ? k
                   : f64 ? first_bad_f64((const double *)dst, k)
                         : first_bad_mass((const float *)dst, k);
        if (b < k)
            st = canopy_fail(CANOPY_ERR_INVALID, "'%s': PartType1/%s of body %lld is %g", r->path,
                             name, (long long)(lo + (int64_t)(b / (size_t)w)),
                             f64 ? ((const double *)dst)[b] : (double)((const float *)dst)[b]);
    }
    if (!ok && !st) {
        char msg[200];
        snprintf(msg, sizeof msg, "PartType1/%s cannot be read (truncated or corrupt file?)", name);
        st = bad(r, msg);
    }
    canopy_free(buf);
    close_id(h5.H5Sclose, &msp);
    close_id(h5.H5Tclose, &t);
    close_id(h5.H5Sclose, &fsp);
    close_id(h5.H5Dclose, &d);
    return st;
}

static canopy_status read_bodies(reader *r, canopy_snapshot *s) {
    int64_t n = 0;
    double mass1 = 0.0;
    canopy_status st = read_header(r, &n, &mass1, s);
    if (st) return st;
    int has_masses = h5.H5Lexists(r->part, "Masses", H5P_DEFAULT) > 0;
    if (!has_masses && !(mass1 > 0.0))
        return bad(r, "no PartType1/Masses and Header/MassTable[1] is 0");
    /* shapes first, so a mismatch costs no allocation */
    if ((st = check_dset(r, "Coordinates", n, 3)) || (st = check_dset(r, "Velocities", n, 3)) ||
        (h5.H5Lexists(r->part, "ParticleIDs", H5P_DEFAULT) > 0 &&
         (st = check_dset(r, "ParticleIDs", n, 0))) ||
        (has_masses && (st = check_dset(r, "Masses", n, 0))))
        return st;
    size_t n3 = (size_t)n * 3;
    if ((st = canopy_alloc((void **)&s->pos, n3, sizeof(double))) ||
        (st = canopy_alloc((void **)&s->vel, n3, sizeof(double))) ||
        (st = canopy_alloc((void **)&s->mass, (size_t)n, sizeof(float))))
        return st;
    s->n = n;
    if ((st = read_dset(r, "Coordinates", n, 3, 1, s->pos)) ||
        (st = read_dset(r, "Velocities", n, 3, 1, s->vel)))
        return st;
    if (!has_masses) {
        for (int64_t i = 0; i < n; i++) s->mass[i] = (float)mass1;
        return CANOPY_OK;
    }
    return read_dset(r, "Masses", n, 1, 0, s->mass);
}

/* Opens path and its Header group (and PartType1 when part): CANOPY_OK, or the reason
 * with whatever opened closed. */
static canopy_status open_reader(reader *r, int part) {
    canopy_status st = h5_ready();
    if (st) return st;
    FILE *probe = fopen(r->path, "rb"); /* the system's reason (missing, permission) first */
    if (!probe) return canopy_fail(CANOPY_ERR_IO, "cannot open '%s': %s", r->path, strerror(errno));
    fclose(probe);
    r->f = h5.H5Fopen(r->path, ACC_RDONLY, H5P_DEFAULT);
    if (r->f < 0)
        st = canopy_fail(CANOPY_ERR_FORMAT, "'%s' is not an HDF5 file (or is truncated)", r->path);
    else if (h5.H5Lexists(r->f, "Header", H5P_DEFAULT) <= 0 ||
             (r->hdr = h5.H5Gopen2(r->f, "Header", H5P_DEFAULT)) < 0)
        st = bad(r, "group Header is missing");
    else if (part && (h5.H5Lexists(r->f, "PartType1", H5P_DEFAULT) <= 0 ||
                      (r->part = h5.H5Gopen2(r->f, "PartType1", H5P_DEFAULT)) < 0))
        st = bad(r, "group PartType1 is missing");
    if (st) close_reader(r);
    return st;
}

canopy_status canopy_hdf5_read_snapshot(const char *path, canopy_snapshot *s) {
    memset(s, 0, sizeof *s);
    reader r = {path, -1, -1, -1};
    canopy_status st = open_reader(&r, 1);
    if (st) return st;
    st = read_bodies(&r, s);
    close_reader(&r);
    if (st) canopy_snapshot_release(s);
    return st;
}

canopy_status canopy_hdf5_read_box(const char *path, double *box) {
    *box = 0.0;
    reader r = {path, -1, -1, -1};
    canopy_status st = open_reader(&r, 0);
    if (st) return st;
    double b[3] = {0};
    int have = 0;
    int64_t nb = 0;
    st = get_attr(&r, "BoxSize", h5.H5T_NATIVE_DOUBLE_g, 0, b, &have, &nb);
    if (!st) st = check_box(&r, b, nb);
    if (!st) *box = b[0];
    close_reader(&r);
    return st;
}

#endif
