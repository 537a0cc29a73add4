/* SPDX-License-Identifier: MIT */
/* .fvecs / .ivecs (the TEXMEX ANN benchmark formats): each vector is a little-endian
 * int32 dimension d followed by d float32 (fvecs) or int32 (ivecs) values. There is
 * no header, so the file size and the first dimension give the vector count, and
 * every later dimension must repeat the first. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include "io/io.h"

#include <errno.h>
#include <string.h>

static canopy_status vecs_type(const char *path, canopy_dtype *t) {
    if (canopy_io_has_suffix(path, ".fvecs")) {
        *t = CANOPY_F32;
    } else if (canopy_io_has_suffix(path, ".ivecs")) {
        *t = CANOPY_I32;
    } else {
        return canopy_fail(CANOPY_ERR_INVALID, "%s: expected a .fvecs or .ivecs file name", path);
    }
    return CANOPY_OK;
}

/* Reads n bytes of vector i; a short read means the file ends inside it. */
static canopy_status read_part(FILE *f, const char *path, void *dst, size_t n, int64_t i) {
    size_t got = fread(dst, 1, n, f);
    if (got == n) return CANOPY_OK;
    if (ferror(f))
        return canopy_fail(CANOPY_ERR_IO, "error reading '%s': %s", path, strerror(errno));
    return canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated: vector %lld is incomplete", path,
                       (long long)i);
}

static canopy_status check_dim(const char *path, int64_t i, int32_t d, int32_t expected) {
    if (d != expected)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: vector %lld has dimension %d, expected %d", path,
                           (long long)i, (int)d, (int)expected);
    return CANOPY_OK;
}

/* The reader over an open stream of `size` bytes (file or memory). */
static canopy_status parse(FILE *f, int64_t size, const char *path, canopy_dtype t,
                           canopy_array *out) {
    int32_t d, di;
    canopy_status s;
    if (size == 0) return canopy_fail(CANOPY_ERR_FORMAT, "%s: empty file (no vectors)", path);
    if ((s = read_part(f, path, &d, 4, 0)) != CANOPY_OK) return s;
    if (d <= 0)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: vector 0 has dimension %d", path, (int)d);
    int64_t row_bytes = 4 * (int64_t)d, n = size / (4 + row_bytes);
    if (n == 0)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated: vector 0 is incomplete", path);
    int64_t shape[2] = {n, d};
    if ((s = canopy_io_array_alloc(out, t, 2, shape, path)) != CANOPY_OK) return s;
    char *row = out->data;
    for (int64_t i = 0; i < n; i++, row += row_bytes) {
        if (i > 0 && ((s = read_part(f, path, &di, 4, i)) != CANOPY_OK ||
                      (s = check_dim(path, i, di, d)) != CANOPY_OK))
            goto done;
        if ((s = read_part(f, path, row, (size_t)row_bytes, i)) != CANOPY_OK) goto done;
    }
    /* Bytes left over: a vector of another dimension, or a cut-off last one. */
    if (size % (4 + row_bytes) != 0) {
        if ((s = read_part(f, path, &di, 4, n)) == CANOPY_OK &&
            (s = check_dim(path, n, di, d)) == CANOPY_OK)
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated: vector %lld is incomplete", path,
                            (long long)n);
    }
done:
    if (s != CANOPY_OK) canopy_array_release(out);
    return s;
}

canopy_status canopy_vecs_read(const char *path, canopy_array *out) {
    canopy_dtype t = CANOPY_F32;
    FILE *f;
    int64_t size;
    memset(out, 0, sizeof *out);
    canopy_status s = vecs_type(path, &t);
    if (s != CANOPY_OK) return s;
    if ((s = canopy_io_open_read(path, &f, &size)) != CANOPY_OK) return s;
    /* The vector count comes from the file size, which a pipe does not have. */
    if (size < 0)
        s = canopy_fail(CANOPY_ERR_IO, "cannot read '%s': not a regular file", path);
    else
        s = parse(f, size, path, t, out);
    fclose(f);
    return s;
}

canopy_status canopy_vecs_read_mem(const void *buf, size_t len, const char *name,
                                   canopy_array *out) {
    canopy_dtype t = CANOPY_F32;
    memset(out, 0, sizeof *out);
    name = canopy_io_name(name);
    canopy_status s = vecs_type(name, &t);
    if (s != CANOPY_OK) return s;
    if (len == 0) return canopy_fail(CANOPY_ERR_FORMAT, "%s: empty file (no vectors)", name);
    if (!buf) return canopy_fail(CANOPY_ERR_INVALID, "%s: no buffer given", name);
    FILE *f = fmemopen((void *)buf, len, "rb");
    if (!f)
        return canopy_fail(CANOPY_ERR_NOMEM, "%s: cannot open the buffer: %s", name,
                           strerror(errno));
    s = parse(f, (int64_t)len, name, t, out);
    fclose(f);
    return s;
}

canopy_status canopy_vecs_write(const char *path, const canopy_array *a) {
    canopy_outfile o;
    canopy_status s = canopy_outfile_open(&o, path);
    if (s != CANOPY_OK) return s;
    if ((s = canopy_vecs_write_to(&o, a)) != CANOPY_OK) {
        canopy_outfile_abort(&o);
        return s;
    }
    return canopy_outfile_commit(&o);
}

canopy_status canopy_vecs_write_to(canopy_outfile *o, const canopy_array *a) {
    const char *path = o->final_path;
    canopy_dtype t = CANOPY_F32;
    size_t bytes;
    canopy_status s = vecs_type(path, &t);
    if (s != CANOPY_OK) return s;
    if ((s = canopy_io_check_array(a, path, &bytes)) != CANOPY_OK) return s;
    if (a->ndim != 2)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: vectors must be a 2-D array, not %d-D", path,
                           (int)a->ndim);
    if (a->dtype != t)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: needs a %s array, got %s (convert it first)",
                           path, canopy_dtype_name(t), canopy_dtype_name(a->dtype));
    int64_t n = a->shape[0], d = a->shape[1];
    if (n > 0 && (d < 1 || d > INT32_MAX))
        return canopy_fail(CANOPY_ERR_INVALID, "%s: vector dimension %lld is outside 1..%d", path,
                           (long long)d, INT32_MAX);
    int32_t d32 = (int32_t)d;
    const char *row = a->data;
    for (int64_t i = 0; i < n; i++, row += 4 * d)
        if ((s = canopy_io_write(o, &d32, 4)) != CANOPY_OK ||
            (s = canopy_io_write(o, row, (size_t)(4 * d))) != CANOPY_OK)
            return s;
    return CANOPY_OK;
}
