// SPDX-License-Identifier: MIT
/* Input and output of the CLI's distributed commands without a serial step on rank 0
 * (docs/distributed.md, "The CLI"): each rank reads its block of rows of a .npy input
 * and writes its block of rows of a .npy output at its own offset of one temporary
 * file, which rank 0 renames into place once every rank wrote its part. Other formats
 * (.csv, .fvecs, standard output) go through rank 0: it reads and scatters, or
 * gathers and writes. */
#define _POSIX_C_SOURCE 200809L /* pwrite, ftruncate */
#include "cli_dist.h"

#ifdef CANOPY_HAVE_MPI
#include "cli.h"
#include "dist/comm.h"
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cli_dist_agree(const char *cmd, canopy_status s) {
    s = canopy_dist_agree(MPI_COMM_WORLD, s);
    if (!s) return CLI_OK;
    /* A status agreed on before (a library call's) is prefixed once per agreement:
     * the innermost "rank r: " names the rank the failure came from. */
    int first = -1, r, used = 0;
    const char *msg = canopy_last_error();
    while (sscanf(msg, "rank %d: %n", &r, &used) == 1 && used > 0) {
        first = r;
        msg += used;
        used = 0;
    }
    if (first >= 0 && first != cli_dist_rank())
        fprintf(stderr, "canopy %s: rank %d of %d stopping: rank %d failed (its message above)\n",
                cmd, cli_dist_rank(), cli_dist_size(), first);
    else
        fprintf(stderr, "canopy %s: %s\n", cmd, msg);
    return CLI_ERROR;
}

int cli_dist_agree_rc(const char *cmd, int rc) {
    int rank = cli_dist_rank(), size = cli_dist_size();
    int mine[2] = {rc, rc != CLI_OK ? rank : size}, worst[2];
    MPI_Allreduce(&mine[0], &worst[0], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&mine[1], &worst[1], 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (worst[0] != CLI_OK && rc == CLI_OK)
        fprintf(stderr, "canopy %s: rank %d of %d stopping: rank %d failed (its message above)\n",
                cmd, rank, size, worst[1]);
    return worst[0];
}

void cli_dist_block(int64_t n, int rank, int size, int64_t *first, int64_t *count) {
    *first = n * rank / size;
    *count = n * (rank + 1) / size - *first;
}

int cli_dist_block_owner(int64_t row, int64_t n, int size) {
    return (int)(((row + 1) * size - 1) / n);
}

/* The slice as float32 points: 1-D is d = 1, any other shape than 2-D refused, and
 * non-finite values named by their row in the whole file. */
static canopy_status slice_points(const char *path, canopy_array *a, int64_t first) {
    if (a->ndim == 1) {
        a->ndim = 2;
        a->shape[1] = 1;
    }
    if (a->ndim != 2)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: points must be a 1-D or 2-D array, not %d-D",
                           path, (int)a->ndim);
    if (a->shape[1] == 0) return canopy_fail(CANOPY_ERR_FORMAT, "%s: points have 0 columns", path);
    if (a->shape[1] > INT32_MAX)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: %lld columns is more than canopy supports", path,
                           (long long)a->shape[1]);
    canopy_status s = canopy_array_convert(a, CANOPY_F32);
    if (s) {
        char why[512];
        snprintf(why, sizeof why, "%s", canopy_last_error());
        return canopy_fail(s, "%s: %s", path, why);
    }
    const float *x = a->data;
    int64_t cells = a->shape[0] * a->shape[1];
    for (int64_t i = 0; i < cells; i++)
        if (!isfinite(x[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "%s: row %lld, column %lld is %s", path,
                               (long long)(first + i / a->shape[1]), (long long)(i % a->shape[1]),
                               isnan(x[i]) ? "NaN" : "infinite");
    return CANOPY_OK;
}

int cli_dist_read_points(const char *cmd, const char *path, cli_dist_points *p) {
    int rank = cli_dist_rank(), size = cli_dist_size();
    memset(p, 0, sizeof *p);
    canopy_array a;
    memset(&a, 0, sizeof a);
    canopy_status s;
    if (canopy_io_has_suffix(path, ".npy")) {
        p->parallel = 1;
        s = canopy_npy_read_part(path, rank, size, &a, &p->n, &p->first);
        if (!s) s = slice_points(path, &a, p->first);
        if (s) canopy_array_release(&a);
        if (cli_dist_agree(cmd, s)) return CLI_ERROR;
        p->d = (int32_t)a.shape[1];
        p->count = a.shape[0];
        p->data = a.data; /* the slice's buffer is the array's: released with p */
        p->owner = a;
        return CLI_OK;
    }
    /* Rank 0 reads every other format, checks it once and scatters rank blocks. */
    int64_t hdr[2] = {0, 0};
    s = rank == 0 ? canopy_points_load(path, &a) : CANOPY_OK;
    if (!s && rank == 0) hdr[0] = a.shape[0], hdr[1] = a.shape[1];
    if (cli_dist_agree(cmd, s)) return CLI_ERROR;
    MPI_Bcast(hdr, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
    p->n = hdr[0];
    p->d = (int32_t)hdr[1];
    int64_t counts[size], first;
    for (int r = 0; r < size; r++) cli_dist_block(p->n, r, size, &first, &counts[r]);
    cli_dist_block(p->n, rank, size, &p->first, &first);
    void *blk = NULL;
    s = canopy_dist_scatterv(MPI_COMM_WORLD, 0, a.data, counts, sizeof(float) * (size_t)p->d, &blk,
                             &p->count);
    canopy_array_release(&a);
    p->data = blk;
    p->scattered = 1;
    return cli_dist_agree(cmd, s);
}

void cli_dist_points_release(cli_dist_points *p) {
    if (p->scattered)
        canopy_free(p->data);
    else
        canopy_array_release(&p->owner);
    memset(p, 0, sizeof *p);
}

static int is_parallel_output(const char *path) {
    return !path || (strcmp(path, "-") != 0 && canopy_io_has_suffix(path, ".npy"));
}

/* Writes the bytes of this rank's rows into the temporary file at offset. */
static canopy_status pwrite_all(int fd, const char *final_path, const char *data, size_t bytes,
                                off_t offset) {
    while (bytes > 0) {
        ssize_t w = pwrite(fd, data, bytes, offset);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return canopy_fail(CANOPY_ERR_IO, "error writing '%s': %s", final_path,
                               w < 0 ? strerror(errno) : "no space written");
        data += w;
        bytes -= (size_t)w;
        offset += w;
    }
    return CANOPY_OK;
}

/* Rank 0 opens the temporaries, writes the headers and sizes the files; every rank
 * then writes its rows in place; rank 0 renames them all, or removes them all when
 * any rank failed. */
static int write_parallel(const char *cmd, int n, const char *const *paths,
                          const canopy_array *rows, int64_t first, int64_t total) {
    enum { MAX = 8 };
    int rank = cli_dist_rank();
    canopy_outfile o[MAX];
    memset(o, 0, sizeof o);
    int64_t head_len[MAX] = {0};
    int open_n = 0;
    canopy_status s = n > MAX ? canopy_fail(CANOPY_ERR_INTERNAL, "too many outputs") : CANOPY_OK;
    for (int i = 0; rank == 0 && !s && i < n; i++) {
        if (!paths[i]) continue;
        canopy_array whole = rows[i];
        whole.shape[0] = total;
        unsigned char head[CANOPY_NPY_HEADER_MAX];
        size_t hl = 0, bytes = 0;
        int64_t cells;
        if ((s = canopy_outfile_open(&o[i], paths[i]))) break;
        open_n = i + 1;
        canopy_io_shape_size(whole.ndim, whole.shape, canopy_dtype_size(whole.dtype), &cells,
                             &bytes);
        if (!(s = canopy_npy_header(&whole, head, &hl))) s = canopy_io_write(&o[i], head, hl);
        head_len[i] = (int64_t)hl;
        /* the full size now, so every rank's rows land inside the file */
        if (!s && (fflush(o[i].fp) != 0 || ftruncate(fileno(o[i].fp), (off_t)(hl + bytes)) != 0))
            s = canopy_fail(CANOPY_ERR_IO, "error writing '%s': %s", paths[i], strerror(errno));
    }
    int rc = cli_dist_agree(cmd, s);
    MPI_Bcast(head_len, MAX, MPI_INT64_T, 0, MPI_COMM_WORLD);
    s = CANOPY_OK;
    for (int i = 0; rc == CLI_OK && i < n; i++) {
        if (!paths[i]) continue;
        char tmp[4096] = {0};
        if (rank == 0) snprintf(tmp, sizeof tmp, "%s", o[i].tmp_path);
        MPI_Bcast(tmp, (int)sizeof tmp, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (s) continue; /* every rank takes part in each broadcast */
        size_t row =
            canopy_dtype_size(rows[i].dtype) * (size_t)(rows[i].ndim == 2 ? rows[i].shape[1] : 1);
        int fd = rank == 0 ? fileno(o[i].fp) : open(tmp, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            s = canopy_fail(CANOPY_ERR_IO, "cannot write '%s' (its temporary %s): %s", paths[i],
                            tmp, strerror(errno));
        if (!s)
            s = pwrite_all(fd, paths[i], rows[i].data, row * (size_t)rows[i].shape[0],
                           (off_t)((size_t)head_len[i] + row * (size_t)first));
        if (fd >= 0 && rank != 0 && close(fd) != 0 && !s)
            s = canopy_fail(CANOPY_ERR_IO, "error writing '%s': %s", paths[i], strerror(errno));
    }
    if (rc == CLI_OK) rc = cli_dist_agree(cmd, s);
    if (rank == 0) {
        /* the set in place only when every rank wrote its rows */
        canopy_outfile *opened[MAX];
        int m = 0;
        for (int i = 0; i < open_n; i++)
            if (o[i].final_path) opened[m++] = &o[i];
        canopy_outfile set[MAX];
        for (int i = 0; i < m; i++) set[i] = *opened[i];
        s = CANOPY_OK;
        if (rc == CLI_OK)
            s = canopy_outfile_commit_all(set, m);
        else
            for (int i = 0; i < m; i++) canopy_outfile_abort(&set[i]);
    }
    if (rc == CLI_OK) rc = cli_dist_agree(cmd, s);
    return rc;
}

/* Rank 0 gathers the rows in rank order (the blocks' order) and writes them with the
 * ordinary atomic writers. */
static int write_gathered(const char *cmd, int n, const char *const *paths,
                          const canopy_array *rows, int64_t total) {
    enum { MAX = 8 };
    void *all[MAX] = {0};
    canopy_array whole[MAX];
    canopy_status s = CANOPY_OK;
    for (int i = 0; i < n && i < MAX; i++) {
        whole[i] = rows[i];
        whole[i].shape[0] = total;
        if (!paths[i] || s) continue;
        size_t row =
            canopy_dtype_size(rows[i].dtype) * (size_t)(rows[i].ndim == 2 ? rows[i].shape[1] : 1);
        int64_t got = 0;
        s = canopy_dist_gatherv(MPI_COMM_WORLD, 0, rows[i].data, rows[i].shape[0], row, &all[i],
                                NULL, &got);
        whole[i].data = all[i];
    }
    int rc = cli_dist_agree(cmd, s);
    if (rc == CLI_OK && cli_dist_rank() == 0) rc = cli_write_arrays(cmd, n, paths, whole, NULL);
    for (int i = 0; i < n && i < MAX; i++) canopy_free(all[i]);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != CLI_OK && cli_dist_rank() != 0)
        fprintf(stderr, "canopy %s: rank %d of %d stopping: rank 0 failed (its message above)\n",
                cmd, cli_dist_rank(), cli_dist_size());
    return rc;
}

int cli_dist_write(const char *cmd, int n, const char *const *paths, const canopy_array *rows,
                   int64_t first, int64_t total, double *seconds) {
    double t0 = canopy_now();
    int parallel = 1;
    for (int i = 0; i < n; i++) parallel &= is_parallel_output(paths[i]);
    int rc = parallel ? write_parallel(cmd, n, paths, rows, first, total)
                      : write_gathered(cmd, n, paths, rows, total);
    if (seconds) *seconds = canopy_now() - t0;
    return rc;
}

#endif
