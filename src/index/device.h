/* SPDX-License-Identifier: MIT */
/* The device copy of a resident canopy_index (index_gpu.cu, in the CUDA module; without
 * the module the entries fail with CANOPY_ERR_UNSUPPORTED, index/gpu_forward.c). */
#ifndef CANOPY_INDEX_DEVICE_H
#define CANOPY_INDEX_DEVICE_H

#include "canopy/traverse.h" /* canopy_gpu_report */
#include "tree/gpu_build.h"

#ifdef __cplusplus
extern "C" {
#endif

struct canopy_index_scratch; /* index_gpu.cu */

typedef struct canopy_index_device {
    canopy_tree_view view; /* device pointers; view.hot NULL: no device copy */
    /* per-query scratch kept between queries (grow-only, made by the first query, freed
     * with the index) */
    struct canopy_index_scratch *scratch;
    canopy_gpu_tree *built; /* a GPU build owning the arrays, or NULL (uploaded here) */
    size_t bytes;           /* device bytes of the tree arrays */
    int gpu_built;
    /* a stream of the index's own (its staging's): queries on it order nothing after
     * the legacy default stream, whose work cannot be theirs */
    void *own_stream;
} canopy_index_device;

/* Builds a kd tree on the GPU into dv, after the work queued on `stream` (a
 * cudaStream_t; NULL: the legacy default stream). device_points: pts.data must be
 * device memory (else CANOPY_ERR_INVALID); else it may be either. No host twin is made
 * (canopy_gpu_tree_download of dv->built makes one when a caller needs it). dv->scratch
 * NULL on entry: the first query makes one; else that scratch is reused (a caller of
 * one-shot builds keeps it between them, and takes it back out of dv before
 * canopy_index_device_free). */
canopy_status canopy_index_device_build(canopy_points pts, int device_points,
                                        const canopy_tree_options *to, void *stream,
                                        canopy_index_device *dv);
/* Copies a host tree to the device once. */
canopy_status canopy_index_device_upload(const canopy_tree_view *host, canopy_index_device *dv);
void canopy_index_device_free(canopy_index_device *dv);

/* kNN of nq device queries (d = the tree's) written to device idx/dist2 (dist2 may be
 * NULL), on `stream`, in the caller's order (schedule none), Morton-sorted on the
 * device first (morton) or grouped by the kd bucket of at most CANOPY_INDEX_BUCKET_POINTS
 * points they fall in (tree, kd trees: the kd walk then starts each kNN query in its
 * bucket); rep->schedule_seconds gets the sort's time; returns when the results are
 * written. rep NULL: nothing timed or counted (no events, no counters cleared or read
 * back where the kd walk runs: its kernel and one synchronisation). Self-queries
 * (self not CANOPY_INDEX_SELF_NONE; d_queries NULL, nq the tree's n): the tree's own
 * points, row i the point given i-th at build; schedule tree then walks them in the
 * tree's point order (no sort: leaf by leaf, each kd walk starting in the bucket that
 * holds its point), the others as for device queries. Calls on one index are
 * serialised (they share its scratch). */
enum { CANOPY_INDEX_BUCKET_POINTS = 32 };
enum { CANOPY_INDEX_SELF_NONE, CANOPY_INDEX_SELF_INCLUDE, CANOPY_INDEX_SELF_EXCLUDE };
canopy_status canopy_index_device_knn(canopy_index_device *dv, const float *d_queries, int64_t nq,
                                      int self, int32_t k, canopy_variant v, canopy_schedule sched,
                                      int64_t *d_idx, float *d_dist2, void *stream,
                                      canopy_gpu_report *rep);

/* Host-array kNN on a resident index (index_staging.cu): device buffers (and, pinned,
 * pinned host buffers) kept with the index (grow-only) and a stream of their own. One
 * call, under the index's staging lock: reserve (nq, d, k; pinned: *h_queries, *h_idx,
 * *h_dist2 get the pinned buffers, else NULL), then put the query rows piece by piece
 * from a dense (nq, d) host array (rows_at: row row0 of it; with pinned buffers each
 * piece travels while the next is packed; the last put waits for the copies), then
 * knn (the device-pointer query), then back (the result rows queued to dense (nq, k)
 * host arrays h_idx (int64, or int32 when narrow: a third fewer bytes to copy) and
 * h_dist2 (NULL: not wanted) in `chunks` pieces; pageable host arrays make it wait),
 * then wait for each piece, reading it while later ones travel. Pinned buffers pay once
 * per staging; a one-shot call copies from and to the caller's pageable arrays. */
enum { CANOPY_INDEX_STAGING_CHUNKS = 8 };
struct canopy_index_staging;
canopy_status canopy_index_staging_reserve(struct canopy_index_staging **st, int64_t nq, int32_t d,
                                           int32_t k, int pinned, float **h_queries,
                                           int64_t **h_idx, float **h_dist2);
canopy_status canopy_index_staging_put(struct canopy_index_staging *st, const float *rows_at,
                                       int64_t row0, int64_t rows, int last);
canopy_status canopy_index_staging_knn(canopy_index_device *dv, struct canopy_index_staging *st,
                                       canopy_variant v, canopy_schedule sched,
                                       canopy_gpu_report *rep);
canopy_status canopy_index_staging_back(struct canopy_index_staging *st, void *h_idx, int narrow,
                                        float *h_dist2, int32_t chunks);
canopy_status canopy_index_staging_wait(struct canopy_index_staging *st, int32_t chunk);
void canopy_index_staging_free(struct canopy_index_staging *st);

#ifdef __cplusplus
}
#endif

#endif
