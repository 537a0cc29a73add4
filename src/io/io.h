/* SPDX-License-Identifier: MIT */
/* Helpers shared by the file readers and writers in src/io (not public API). */
#ifndef CANOPY_IO_H
#define CANOPY_IO_H

#include "canopy.h"

#include <stdbool.h>
#include <stdio.h>

/* Every format canopy reads stores little-endian data, and the readers copy it
 * straight into arrays. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "canopy's file readers assume a little-endian host"
#endif

/* Name used in messages for in-memory input when the caller gives none. */
const char *canopy_io_name(const char *name);

/* Element count and byte size of a shape; false when ndim is out of range, a
 * dimension is negative, or a product overflows. */
bool canopy_io_shape_size(int32_t ndim, const int64_t *shape, size_t elem_size, int64_t *count,
                          size_t *bytes);

/* Validates an array handed to a writer (dtype, ndim, shape, data pointer). */
canopy_status canopy_io_check_array(const canopy_array *a, const char *path, size_t *bytes);

/* Opens path for reading. *size is the file size, or -1 when it is not a regular
 * file (a pipe), so callers can check lengths before allocating. */
canopy_status canopy_io_open_read(const char *path, FILE **fp, int64_t *size);

/* Reads a whole file into a malloc'ed buffer with a NUL after the last byte. */
canopy_status canopy_io_read_all(const char *path, char **buf, size_t *len);

/* canopy_array_alloc for a reader: a failure names the file and the bytes asked for. */
canopy_status canopy_io_array_alloc(canopy_array *a, canopy_dtype t, int32_t ndim,
                                    const int64_t *shape, const char *name);

/* The writers' bodies, into an open outfile that the caller commits (with the other
 * outputs of the run: canopy_outfile_commit_all) or aborts. */
canopy_status canopy_npy_write_to(canopy_outfile *o, const canopy_array *a);
canopy_status canopy_csv_write_to(canopy_outfile *o, const canopy_array *a, const char *header);
canopy_status canopy_vecs_write_to(canopy_outfile *o, const canopy_array *a);

/* The rows part * n / parts .. (part + 1) * n / parts of a .npy file's first axis n
 * (the header and the file's length checked as canopy_npy_read checks them, so every
 * part finds a truncated file): the parallel readers of the MPI CLI. *rows is n,
 * *first the part's first row. A 0-D array is one row (a single part only);
 * canopy_npy_read is part 0 of 1. */
canopy_status canopy_npy_read_part(const char *path, int part, int parts, canopy_array *out,
                                   int64_t *rows, int64_t *first);
/* The .npy 1.0 header canopy writes for a (its dtype and shape; the data pointer is not
 * read), *len bytes (a multiple of 64, at most CANOPY_NPY_HEADER_MAX): the data of row i
 * starts at *len + i * row bytes, which lets several processes write a file's rows. */
enum { CANOPY_NPY_HEADER_MAX = 512 };
canopy_status canopy_npy_header(const canopy_array *a, unsigned char *head, size_t *len);

/* Whether commits may exchange a temporary with an existing target (renameat2
 * RENAME_EXCHANGE; on by default) or always rename it: tests run both paths. */
void canopy_outfile_use_exchange(int on);

/* fwrite to an outfile, failing with a message that names the final path. */
canopy_status canopy_io_write(canopy_outfile *o, const void *p, size_t n);

/* Copies at most cap-1 bytes of s[0..n) into out for an error message: other than
 * printable ASCII becomes '?', and a cut string ends in "...". */
void canopy_io_printable(char *out, size_t cap, const char *s, size_t n);

/* True when path ends in suffix, ignoring ASCII case. */
bool canopy_io_has_suffix(const char *path, const char *suffix);

#endif
