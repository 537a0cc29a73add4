/* SPDX-License-Identifier: MIT */
/* Internal (CUDA builds): the morton and hilbert query schedules computed on the GPU.
 * The permutation equals canopy_schedule_queries' exactly: the same quantisation
 * over the queries' bounding box (first 63 coordinates, floor(63 / d) bits each),
 * the same curve keys (tree/curve_key.h, shared with the host) and
 * a stable sort, so equal keys keep the caller's order. queries.data and order may
 * each be a host or a device pointer; non-finite coordinates are an error. NONE
 * gives the identity; other schedules are CANOPY_ERR_UNSUPPORTED. */
#ifndef CANOPY_TRAVERSE_GPU_SCHEDULE_H
#define CANOPY_TRAVERSE_GPU_SCHEDULE_H

#include "canopy.h"
#include "canopy/traverse.h"

#ifdef __cplusplus
extern "C" {
#endif

canopy_status canopy_gpu_schedule_queries(canopy_schedule s, canopy_points queries, int64_t *order);

/* The query order of a resident index, all on the device and stream-ordered (no
 * allocation, no host synchronisation): Morton keys of at most 24 bits over a fixed
 * box (the index's points' box, computed once by canopy_gpu_points_box; queries
 * outside it are clamped onto it), sorted stably with CUB. Locality is all that
 * matters here (results do not depend on the order), so the keys are coarser than
 * canopy_gpu_schedule_queries' and take fewer radix passes. */
enum { CANOPY_GPU_BOX_WORDS = 2 * 63 };
/* box: CANOPY_GPU_BOX_WORDS device words; synchronous (once per index). */
canopy_status canopy_gpu_points_box(const float *d_pts, int64_t n, int32_t d, uint32_t *box);
/* Device scratch bytes canopy_gpu_morton_order needs for nq queries of d dimensions. */
canopy_status canopy_gpu_morton_scratch(int64_t nq, int32_t d, size_t *bytes);
/* d_order (nq, device) := the permutation of the dense device queries (nq, d) in key
 * order, on `stream` (a cudaStream_t). */
canopy_status canopy_gpu_morton_order(const float *d_q, int64_t nq, int32_t d, const uint32_t *box,
                                      void *scratch, size_t scratch_bytes, int64_t *d_order,
                                      void *stream);

/* The kd bucket order of a resident kd tree (schedule tree on the device): each query
 * goes down the tree, to the side of each node's split (the left child while its
 * coordinate is at most the left child's upper bound in the split dimension), until a
 * node of at most `most` points (its bucket); queries are then grouped by bucket in
 * tree order by a counting sort: a rank a query from one atomic per bucket and warp,
 * then a scatter. Three forms, chosen when the state is made (CANOPY_GPU_ORDER):
 *   fused (default): the shared form's two kernels as one cooperative kernel, each
 *     thread's buckets and ranks kept in registers across a grid-wide barrier; a call
 *     of more queries than FUSED_QUERIES (4) a thread of the blocks that fit the GPU at
 *     once runs the shared form, as does every call after a cooperative launch did not
 *     fit (MPS, a partitioned GPU);
 *   shared (up to CANOPY_GPU_ORDER_SHARED_BUCKETS buckets, else two): every scatter block
 *     scans the bucket counts into shared memory itself, so the ranking kernel ends
 *     with its ranks (no block barrier, no last-block scan), and the scatter is
 *     launched early (programmatic dependent launch); two count buffers, the
 *     scatter clearing the one the next call counts in; a grid cell inside one bucket
 *     names the bucket itself (no table load), and a bucket's node comes from a
 *     table by number;
 *   two (commit 07309b7): the last ranking block scans the counts into each bucket's
 *     first position, and the scatter clears the counts.
 * What a tree's orders share is made once per tree and `most` (canopy_gpu_kd_order_make,
 * into `state` of canopy_gpu_kd_order_bytes): the descent table (16 bytes a node, one
 * load a level), the buckets numbered in tree order, and for d <= 3 a grid of about a
 * million cells over the points' box whose cells name the node where the descent of
 * their points parts (a query starts there: one load for the top levels), plus the
 * counters. The shared form reads the bucket count and the grid's box back to the host
 * once (a synchronisation of `stream` at the make). A call that stopped between the two
 * kernels leaves counts behind: canopy_gpu_kd_order_clear resets them.
 * d_order (nq) := the permutation, d_bucket (nq) := the bucket node of the query at
 * each position (canopy_gpu_launch.bucket); stream-ordered on `stream`. Calls on one
 * state must not overlap. The order within a bucket is the atomics', so it may differ
 * between calls. */
enum { CANOPY_GPU_ORDER_SHARED_BUCKETS = 32768 }; /* 128 KB of shared memory a block */
/* Where the parts of a made state lie (device pointers; a host copy, so that a call
 * computes no layout), and for the shared form what its kernels take as arguments. */
typedef struct canopy_gpu_kd_order {
    void *meta, *table;
    int32_t *grid, *count, *first, *bnode;
    int64_t n_nodes;
    int shared;           /* 1: the shared form (also under the fused one) */
    int32_t fused_blocks; /* fused: its kernel's blocks that fit the GPU at once (0: off) */
    unsigned calls;       /* shared: calls made, whose parity picks the count buffer */
    int32_t nb, bits; /* shared: buckets; grid bits per axis (0: none) */
    float lo[3], inv[3];
} canopy_gpu_kd_order;
canopy_status canopy_gpu_kd_order_bytes(const canopy_tree_view *dt, size_t *bytes);
canopy_status canopy_gpu_kd_order_make(const canopy_tree_view *dt, int32_t most, void *state,
                                       void *stream, canopy_gpu_kd_order *made);
canopy_status canopy_gpu_kd_order_clear(const canopy_gpu_kd_order *o, void *stream);
/* Device scratch bytes of one order of nq queries. */
size_t canopy_gpu_kd_bucket_scratch(int64_t nq);
canopy_status canopy_gpu_kd_bucket_order(canopy_gpu_kd_order *o, int32_t d, const float *d_q,
                                         int64_t nq, void *scratch, size_t scratch_bytes,
                                         int64_t *d_order, int32_t *d_bucket, void *stream);

#ifdef __cplusplus
}
#endif

#endif
