/* SPDX-License-Identifier: MIT */
/* canopy_index: a tree built (or loaded) once and queried many times, and its file
 * form (a section file, src/io/sectionfile.h); and canopy_knn, whose GPU path builds
 * such an index on the device.
 *
 * Handles are checked twice before use: the pointer must be in the registry of live
 * indexes (so a freed handle is rejected without reading freed memory), and the
 * record must carry the magic number. */
#include "apps/index_entries.h"
#include "apps/knn/knn.h"
#include "core/device.h"
#include "index/device.h"
#include "io/sectionfile.h"
#include "kde/kde_tree.h"
#include "traverse/run.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INDEX_MAGIC 0x43504e4958444931ull /* "CPNIXDI1" */
#define FILE_VERSION 1u
static const char file_magic[8] = {'C', 'N', 'P', 'Y', 'I', 'D', 'X', '1'};

enum { SEC_META = 1, SEC_HOT, SEC_POINTS, SEC_IDS, SEC_ROPE, SEC_WEIGHTS };
enum {
    M_KIND,
    M_N,
    M_D,
    M_NODES,
    M_HOT_STRIDE,
    M_GEOM_STRIDE,
    M_DEPTH,
    M_MAX_CHILDREN,
    M_LEAF_SIZE,
    M_ORDER,
    M_HAS_WEIGHTS,
    M_COUNT
};

struct canopy_index {
    uint64_t magic;
    canopy_tree *built; /* owned tree when built here */
    canopy_tree mapped; /* view into the file when loaded */
    canopy_secfile file;
    /* the one queried on the host; a GPU build's is NULL until host_tree makes it (under
     * lock): read it through host_tree, and the sizes through shape() */
    const canopy_tree *tree;
    canopy_residency residency;
    int32_t leaf_size;
    double build_seconds;
    float *original; /* the points in their original order, made on first need */
    pthread_mutex_t lock;
    int64_t builds, queries;
    canopy_index_device dev; /* device copy (residency device or both) */
    /* pinned and device buffers of host-array GPU queries, made on first need; the
     * lock holds them for one query from packing to unpacking */
    struct canopy_index_staging *staging;
    pthread_mutex_t staging_lock;
};

/* ------------------------------------------------------------- registry -- */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static canopy_index **reg;
static size_t reg_n, reg_cap;

static canopy_status reg_add(canopy_index *ix) {
    pthread_mutex_lock(&reg_lock);
    if (reg_n == reg_cap) {
        size_t cap = reg_cap ? 2 * reg_cap : 16;
        canopy_index **r = realloc(reg, cap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&reg_lock);
            return canopy_fail(CANOPY_ERR_NOMEM, "index: out of memory registering a handle");
        }
        reg = r;
        reg_cap = cap;
    }
    reg[reg_n++] = ix;
    pthread_mutex_unlock(&reg_lock);
    return CANOPY_OK;
}

/* Removes ix; 0 when it was not registered. */
static int reg_remove(const canopy_index *ix) {
    int found = 0;
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < reg_n; i++)
        if (reg[i] == ix) {
            reg[i] = reg[--reg_n];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&reg_lock);
    return found;
}

static canopy_status check_handle(const canopy_index *ix, const char *what) {
    if (!ix) return canopy_fail(CANOPY_ERR_INVALID, "%s: the index is NULL", what);
    int live = 0;
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < reg_n && !live; i++) live = reg[i] == ix;
    pthread_mutex_unlock(&reg_lock);
    if (!live || ix->magic != INDEX_MAGIC)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: not a live index (freed, or not made by canopy_index_build/load)",
                           what);
    return CANOPY_OK;
}

/* ------------------------------------------------------------ lifecycle -- */
canopy_index_options canopy_index_options_default(canopy_tree_kind kind) {
    canopy_index_options o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.residency = CANOPY_RESIDENCY_HOST;
    return o;
}

static canopy_status check_residency(canopy_residency r) {
    if (r == CANOPY_RESIDENCY_HOST) return CANOPY_OK;
    if (r == CANOPY_RESIDENCY_DEVICE || r == CANOPY_RESIDENCY_BOTH) {
        if (!canopy_gpu_usable())
            return canopy_fail(CANOPY_ERR_UNSUPPORTED, "index: residency %s needs a GPU, and %s",
                               r == CANOPY_RESIDENCY_DEVICE ? "device" : "both",
                               canopy_gpu_why_not());
        return CANOPY_OK;
    }
    return canopy_fail(CANOPY_ERR_INVALID, "index: unknown residency %d", (int)r);
}

static canopy_status new_handle(canopy_residency r, canopy_index **out) {
    canopy_index *ix = calloc(1, sizeof *ix);
    if (!ix) return canopy_fail(CANOPY_ERR_NOMEM, "index: out of memory");
    ix->magic = INDEX_MAGIC;
    ix->residency = r;
    pthread_mutex_init(&ix->lock, NULL);
    pthread_mutex_init(&ix->staging_lock, NULL);
    *out = ix;
    return CANOPY_OK;
}

static void destroy(canopy_index *ix) {
    ix->magic = 0;
    if (ix->staging) canopy_index_staging_free(ix->staging);
    if (ix->dev.view.hot) canopy_index_device_free(&ix->dev);
    canopy_tree_free(ix->built);
    canopy_free(ix->mapped.min_id);
    canopy_secfile_close(&ix->file);
    canopy_free(ix->original);
    pthread_mutex_destroy(&ix->lock);
    pthread_mutex_destroy(&ix->staging_lock);
    free(ix);
}

/* Device queries from this many on are sorted under schedule auto (below it a call is
 * too short for locality to repay the sort's launches): grouped by kd bucket for the kd
 * walk up to CANOPY_INDEX_BUCKET_MAX_D dimensions, else Morton-sorted where the sort was
 * measured to pay (H100, bench/results/gpu-index.md, 200k queries): for the kd kernel's
 * lockstep walk; for gdr in 2-D, and in 7-D with leaves of 8 (sorted 15.2 ms kNN8,
 * 4.97 ms NN; unsorted at leaf 16 16.7 and 5.66 ms, sorted at leaf 16 19.0 and 6.33).
 * The kd kernel walks in lockstep from CANOPY_INDEX_LOCKSTEP_MIN_D dimensions. */
enum {
    CANOPY_INDEX_SORT_MIN = 8192,
    CANOPY_INDEX_SORT_MAX_D = 2,
    CANOPY_INDEX_GPU_LEAF = 8,
    CANOPY_INDEX_LOCKSTEP_MIN_D = 5,
    CANOPY_INDEX_BUCKET_MAX_D = 3
};

/* A kd tree built on the GPU into ix: the host twin waits for host_tree (a device-only
 * index's queries never read it; downloading it cost more than the build). */
static canopy_status device_built(canopy_index *ix, canopy_points pts, int device_points,
                                  const canopy_tree_options *to, void *stream) {
    canopy_status s = canopy_index_device_build(pts, device_points, to, stream, &ix->dev);
    if (s) return s;
    ix->leaf_size = ix->dev.built->leaf_size;
    ix->build_seconds = ix->dev.built->build_seconds;
    return CANOPY_OK;
}

canopy_status canopy_index_build_device(canopy_points d_pts, const canopy_index_options *opt,
                                        void *stream, canopy_index **out) {
    *out = NULL;
    canopy_index_options o = opt ? *opt : canopy_index_options_default(CANOPY_TREE_KD);
    if (o.kind != CANOPY_TREE_KD)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "index build (device): %s trees are built on the host (device "
                           "points build kd trees; copy the points to the host for %s)",
                           canopy_tree_kind_name(o.kind), canopy_tree_kind_name(o.kind));
    if (d_pts.n < 0 || d_pts.d < 1 || d_pts.stride < d_pts.d || (d_pts.n > 0 && !d_pts.data))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "index build (device): bad shape (n=%lld, d=%d, stride=%lld)",
                           (long long)d_pts.n, (int)d_pts.d, (long long)d_pts.stride);
    canopy_status s = check_residency(CANOPY_RESIDENCY_DEVICE);
    canopy_index *ix = NULL;
    if (s || (s = new_handle(CANOPY_RESIDENCY_DEVICE, &ix))) return s;
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    to.leaf_size = o.leaf_size > 0 ? o.leaf_size : CANOPY_INDEX_GPU_LEAF;
    if (!(s = device_built(ix, d_pts, 1, &to, stream))) {
        ix->builds = 1;
        s = reg_add(ix);
    }
    if (s) {
        destroy(ix);
        return s;
    }
    *out = ix;
    return CANOPY_OK;
}

/* A host-only kd index of d <= 3 splits along Morton-key bits (tree.h): built in about a
 * third of the median build's time, and queried on the CPU as fast. The others build the
 * median tree the GPU build reproduces. */
static canopy_status host_build(canopy_points pts, const canopy_tree_options *to,
                                canopy_residency residency, canopy_tree **out) {
    if (to->kind == CANOPY_TREE_KD && residency == CANOPY_RESIDENCY_HOST && pts.d <= 3)
        return canopy_tree_build_kd_curve(pts, to, out);
    return canopy_tree_build(pts, to, out);
}

canopy_status canopy_index_build(canopy_points pts, const canopy_index_options *opt,
                                 canopy_index **out) {
    *out = NULL;
    canopy_index_options o = opt ? *opt : canopy_index_options_default(CANOPY_TREE_KD);
    canopy_status s = check_residency(o.residency);
    if (s || (s = canopy_points_check(pts, "index points"))) return s;
    if (o.kind == CANOPY_TREE_BST)
        for (int64_t i = 1; i < pts.n; i++)
            if (canopy_point(pts, i)[0] < canopy_point(pts, i - 1)[0])
                return canopy_fail(CANOPY_ERR_INVALID,
                                   "index: bst keys must be sorted ascending (key %lld < key %lld)",
                                   (long long)i, (long long)i - 1);
    float *equal = NULL;
    const float *w = NULL;
    if (o.kind == CANOPY_TREE_OCT) {
        w = o.weights;
        for (int64_t i = 0; w && i < pts.n; i++)
            if (!(w[i] >= 0.0f) || !isfinite(w[i]))
                return canopy_fail(CANOPY_ERR_INVALID, "index: mass of point %lld is %g",
                                   (long long)i, (double)w[i]);
        if (!w) {
            if ((s = canopy_alloc((void **)&equal, (size_t)(pts.n + 1), sizeof(float)))) return s;
            for (int64_t i = 0; i < pts.n; i++) equal[i] = 1.0f / (float)pts.n;
            w = equal;
        }
    }
    canopy_index *ix = NULL;
    if (!(s = new_handle(o.residency, &ix))) {
        canopy_tree_options to = canopy_tree_options_default(o.kind);
        to.leaf_size = o.leaf_size;
        to.weights = w;
        /* device: built on the GPU where a GPU build exists (kd), else uploaded once.
         * A GPU-only kd index defaults to leaves of CANOPY_INDEX_GPU_LEAF points (H100,
         * bench/results/gpu-index.md: uniform 7-D kNN 15.2 ms at 8 against 19.0 at the
         * kind's 16; 2-D clusters no worse); indexes queried on the host keep 16. */
        if (o.residency == CANOPY_RESIDENCY_DEVICE && o.kind == CANOPY_TREE_KD) {
            if (to.leaf_size <= 0) to.leaf_size = CANOPY_INDEX_GPU_LEAF;
            s = device_built(ix, pts, 0, &to, NULL);
        } else if (!(s = host_build(pts, &to, o.residency, &ix->built))) {
            if (o.residency != CANOPY_RESIDENCY_HOST)
                s = canopy_index_device_upload(&ix->built->view, &ix->dev);
            if (!s && ix->dev.view.hot) ix->built->device = &ix->dev.view;
            ix->tree = ix->built;
            ix->leaf_size = ix->built->leaf_size;
            ix->build_seconds = ix->built->build_seconds;
        }
    }
    canopy_free(equal);
    if (!s) {
        ix->builds = 1;
        s = reg_add(ix);
    }
    if (s) {
        if (ix) destroy(ix);
        return s;
    }
    *out = ix;
    return CANOPY_OK;
}

void canopy_index_free(canopy_index *ix) {
    if (ix && reg_remove(ix)) destroy(ix);
}

/* The sizes and kind of the indexed tree (a GPU build's device view holds them too). */
static const canopy_tree_view *shape(const canopy_index *ix) {
    return ix->dev.gpu_built ? &ix->dev.view : &ix->tree->view;
}

/* The host tree, downloaded from a GPU build on first need (CPU queries, the generic
 * engines, self-queries, gravity, save). */
static canopy_status host_tree(canopy_index *ix, const canopy_tree **out) {
    canopy_status s = CANOPY_OK;
    pthread_mutex_lock(&ix->lock);
    if (!ix->tree && !(s = canopy_gpu_tree_download(ix->dev.built, &ix->built))) {
        if ((s = canopy_tree_fill_min_id(ix->built))) {
            canopy_tree_free(ix->built);
            ix->built = NULL;
        } else {
            ix->built->device = &ix->dev.view;
            ix->tree = ix->built;
        }
    }
    *out = ix->tree;
    pthread_mutex_unlock(&ix->lock);
    return s;
}

canopy_status canopy_index_get_info(const canopy_index *ix, canopy_index_info *info) {
    canopy_status s = check_handle(ix, "index info");
    if (s) return s;
    const canopy_tree_view *v = shape(ix);
    memset(info, 0, sizeof *info);
    info->kind = (canopy_tree_kind)v->kind;
    info->n = v->n;
    info->d = v->d;
    info->n_nodes = v->n_nodes;
    info->depth = v->depth;
    info->leaf_size = ix->leaf_size;
    info->residency = ix->residency;
    info->mapped = ix->tree == &ix->mapped;
    info->builds = ix->builds;
    info->queries = ix->queries;
    info->build_seconds = ix->build_seconds;
    info->device_bytes = ix->dev.bytes;
    info->gpu_built = ix->dev.gpu_built;
    info->bytes = (size_t)v->n_nodes * (size_t)v->hot_stride +
                  (size_t)v->n * (size_t)v->d * sizeof(float) + (size_t)v->n * sizeof(int64_t) +
                  (size_t)v->n_nodes * sizeof(int32_t) +
                  (v->weights ? (size_t)v->n * sizeof(float) : 0);
    return CANOPY_OK;
}

/* --------------------------------------------------------------- queries -- */

/* Common entry: live handle, kind allowed, stats prepared as a reused build. */
static canopy_status begin(canopy_index *ix, const char *app, unsigned kinds,
                           const canopy_run_options *opt, canopy_run_options *o,
                           canopy_stats *stats) {
    canopy_status s = check_handle(ix, app);
    if (s) return s;
    const canopy_tree_view *v = shape(ix);
    if (!(kinds & (1u << v->kind)))
        return canopy_fail(CANOPY_ERR_INVALID, "%s: an index of tree %s cannot answer it", app,
                           canopy_tree_kind_name((canopy_tree_kind)v->kind));
    *o = opt ? *opt : canopy_run_options_default();
    o->tree = (canopy_tree_kind)v->kind;
    o->leaf_size = ix->leaf_size;
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->tree = o->tree;
        stats->tree_nodes = v->n_nodes;
        stats->tree_depth = v->depth;
        stats->index_reused = 1;
    }
    pthread_mutex_lock(&ix->lock);
    ix->queries++;
    pthread_mutex_unlock(&ix->lock);
    return CANOPY_OK;
}

/* The indexed points in their original order (self-queries and gravity need them). */
static canopy_status original_points(canopy_index *ix, canopy_points *out) {
    const canopy_tree *t;
    canopy_status s = host_tree(ix, &t);
    if (s) return s;
    const canopy_tree_view *v = &t->view;
    pthread_mutex_lock(&ix->lock);
    if (!ix->original &&
        !(s = canopy_alloc((void **)&ix->original, (size_t)(v->n * v->d + 1), sizeof(float))))
        for (int64_t i = 0; i < v->n; i++)
            memcpy(ix->original + v->ids[i] * v->d, v->points + i * v->d,
                   (size_t)v->d * sizeof(float));
    pthread_mutex_unlock(&ix->lock);
    if (!s) *out = canopy_points_make(ix->original, v->n, v->d);
    return s;
}

static canopy_status queries_for(canopy_index *ix, const char *app, canopy_points *q, int *self) {
    *self = 0;
    if (q->n == 0 && q->data == NULL) {
        *self = 1;
        return original_points(ix, q);
    }
    char what[64];
    snprintf(what, sizeof what, "%s query points", app);
    canopy_status s = canopy_points_check(*q, what);
    if (s) return s;
    int32_t d = shape(ix)->d;
    if (q->d != d)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: query points have %d dimensions but the index has %d", app,
                           (int)q->d, (int)d);
    return CANOPY_OK;
}

#define KINDS_METRIC ((1u << CANOPY_TREE_KD) | (1u << CANOPY_TREE_BALL) | (1u << CANOPY_TREE_VP))

/* What auto picks for kNN on a resident device copy: the specialised kd walk where it
 * applies, one query per thread (dr), or the lockstep walk (dr_l) from
 * CANOPY_INDEX_LOCKSTEP_MIN_D dimensions and k > 1; for k > 1 its queries grouped by kd
 * bucket up to CANOPY_INDEX_BUCKET_MAX_D dimensions (the walk then starts in the bucket:
 * 2-D kNN8 kernel 0.148 ms against 0.254 in the caller's order, plus 0.035 for the
 * grouping; NN's kernel gains 0.04 ms, about what the grouping costs; in 7-D it lost;
 * H100, bench/results/gpu-index.md), else Morton-sorted for dr_l and k > 8 (dr gained
 * less than the sort cost up to k = 8); elsewhere gdr, sorted where that paid. Sorted only from
 * CANOPY_INDEX_SORT_MIN queries (enough for a whole GPU to gain locality). */
static void device_choice(const canopy_index_device *dv, int32_t leaf_size,
                          const canopy_run_options *o, int64_t nq, int32_t k, canopy_variant *v,
                          canopy_schedule *sched) {
    const canopy_tree_view *tv = &dv->view;
    const int lockstep = tv->d >= CANOPY_INDEX_LOCKSTEP_MIN_D && k > 1;
    *v = o->variant;
    if (*v == CANOPY_VARIANT_AUTO)
        *v = !knn_kd_kernel_applies(tv, k, CANOPY_VARIANT_DR) ? CANOPY_VARIANT_GDR
             : lockstep                                       ? CANOPY_VARIANT_DR_L
                                                              : CANOPY_VARIANT_DR;
    *sched = o->schedule;
    if (*sched != CANOPY_SCHEDULE_AUTO) return;
    *sched = CANOPY_SCHEDULE_NONE;
    if (nq < CANOPY_INDEX_SORT_MIN) return;
    if (knn_kd_kernel_applies(tv, k, *v)) {
        if (tv->d <= CANOPY_INDEX_BUCKET_MAX_D)
            *sched = CANOPY_SCHEDULE_TREE;
        else if (*v == CANOPY_VARIANT_DR_L || k > 8)
            *sched = CANOPY_SCHEDULE_MORTON;
    } else if (tv->d <= CANOPY_INDEX_SORT_MAX_D || leaf_size <= CANOPY_INDEX_GPU_LEAF) {
        *sched = CANOPY_SCHEDULE_MORTON;
    }
}

/* The query order a device query ran in, for --stats notes. */
static const char *device_order_name(canopy_schedule sched) {
    return sched == CANOPY_SCHEDULE_MORTON ? "queries sorted on the device"
           : sched == CANOPY_SCHEDULE_TREE ? "queries grouped by kd bucket on the device"
                                           : "caller's order";
}

static void device_stats(canopy_stats *stats, const canopy_gpu_report *rep, int64_t nq,
                         canopy_variant v, canopy_schedule sched) {
    stats->schedule_seconds = rep->schedule_seconds;
    stats->transfer_seconds = rep->transfer_seconds;
    stats->traverse_seconds = rep->traverse_seconds;
    stats->queries = nq;
    stats->nodes_per_query = nq ? (double)rep->counters.nodes / (double)nq : 0.0;
    stats->work_expansion = rep->counters.group_longest ? (double)rep->counters.group_nodes /
                                                              (double)rep->counters.group_longest
                                                        : 0.0;
    stats->nodes_per_group = rep->counters.groups
                                 ? (double)rep->counters.group_nodes / (double)rep->counters.groups
                                 : 0.0;
    stats->variant = v;
    stats->schedule = sched;
    stats->backend = CANOPY_BACKEND_GPU;
    stats->device_tree_reused = 1;
}

/* Host-array queries take the staged device path when they will run on the GPU with a
 * variant and schedule it offers (the rest go through the generic engine, which also
 * gives their errors). */
static int staged_applies(const canopy_run_options *o, int64_t nq, int self) {
    canopy_variant v = o->variant;
    canopy_schedule sch = o->schedule;
    int gpu = o->backend == CANOPY_BACKEND_GPU ||
              (o->backend == CANOPY_BACKEND_AUTO && nq >= CANOPY_GPU_AUTO_MIN_QUERIES);
    return !self && nq > 0 && gpu && (unsigned)v < CANOPY_VARIANT_COUNT && v != CANOPY_VARIANT_SR &&
           v != CANOPY_VARIANT_SR_L && v != CANOPY_VARIANT_SIMD_L &&
           (sch == CANOPY_SCHEDULE_AUTO || sch == CANOPY_SCHEDULE_NONE ||
            sch == CANOPY_SCHEDULE_MORTON);
}

/* Copies `bytes` with the CPU's threads when there are enough to share: the staging
 * copies are memory-bound, and one core moves a fraction of what the copy engines do. */
static void copy_parallel(void *dst, const void *src, size_t bytes) {
    enum { SHARE = 1 << 18 };
    int64_t parts = (int64_t)(bytes / SHARE) + 1;
#pragma omp parallel for schedule(static) num_threads(canopy_threads()) if (parts > 1)
    for (int64_t p = 0; p < parts; p++) {
        size_t a = bytes * (size_t)p / (size_t)parts, b = bytes * (size_t)(p + 1) / (size_t)parts;
        memcpy((char *)dst + a, (const char *)src + a, b - a);
    }
}

/* n results into the caller's rows: indices widened from the int32 the device sent,
 * distances copied (dist2 NULL: not wanted), in one parallel region. */
static void unpack_results(int64_t *idx, const int32_t *src, float *dist2, const float *d2src,
                           int64_t n) {
#pragma omp parallel num_threads(canopy_threads()) if (n > 65536)
    {
#pragma omp for schedule(static) nowait
        for (int64_t i = 0; i < n; i++) idx[i] = src[i];
        if (dist2) {
#pragma omp for schedule(static) nowait
            for (int64_t i = 0; i < n; i++) dist2[i] = d2src[i];
        }
    }
}

/* Query rows [r0, r1) into the dense pinned array (rows of a strided view one by one). */
static void pack_rows(float *dst, canopy_points q, int64_t r0, int64_t r1) {
    size_t row = sizeof(float) * (size_t)q.d;
    if (q.stride == q.d) {
        copy_parallel(dst + r0 * q.d, canopy_point(q, r0), row * (size_t)(r1 - r0));
        return;
    }
#pragma omp parallel for schedule(static) num_threads(canopy_threads()) if (r1 - r0 > 8192)
    for (int64_t i = r0; i < r1; i++) memcpy(dst + i * q.d, canopy_point(q, i), row);
}

/* Pieces a staged copy of `bytes` is cut into: each piece's copy overlaps the CPU's
 * work on its neighbour; a piece of a few MB keeps the copy engines near full speed. */
static int32_t staging_pieces(size_t bytes) {
    size_t p = bytes / ((size_t)4 << 20) + 1;
    return p > CANOPY_INDEX_STAGING_CHUNKS ? CANOPY_INDEX_STAGING_CHUNKS : (int32_t)p;
}

/* kNN of host queries on the device copy dv (leaves of leaf_size points) through the
 * staging *st (made on first need; the caller holds it). pinned: the queries are
 * packed into its pinned buffer and the results unpacked from it, piece by piece while
 * the copies of other pieces run (repeated calls); else (canopy_knn's first call, on
 * dense queries) they are copied straight from and to the caller's arrays: pageable
 * copies cost less than making pinned buffers for one call. */
static canopy_status knn_staged_on(canopy_index_device *dv, int32_t leaf_size,
                                   struct canopy_index_staging **st, int pinned, canopy_points q,
                                   int32_t k, const canopy_run_options *o, int64_t *idx,
                                   float *dist2, canopy_stats *stats) {
    canopy_variant v;
    canopy_schedule sched;
    device_choice(dv, leaf_size, o, q.n, k, &v, &sched);
    canopy_gpu_report rep;
    memset(&rep, 0, sizeof rep);
    float *hq, *hd;
    int64_t *hi;
    int64_t nq = q.n, cells = nq * k;
    pinned = pinned || q.stride != q.d;
    int32_t in_pieces = pinned ? staging_pieces(sizeof(float) * (size_t)(nq * q.d)) : 1;
    int32_t out_pieces =
        pinned ? staging_pieces((sizeof(int32_t) + (dist2 ? sizeof(float) : 0)) * (size_t)cells)
               : 1;
    double t0 = canopy_now();
    canopy_status s = canopy_index_staging_reserve(st, nq, q.d, k, pinned, &hq, &hi, &hd);
    for (int32_t c = 0; c < in_pieces && !s; c++) {
        int64_t r0 = nq * c / in_pieces, r1 = nq * (c + 1) / in_pieces;
        if (pinned) pack_rows(hq, q, r0, r1);
        s = canopy_index_staging_put(*st, pinned ? hq + r0 * q.d : canopy_point(q, r0), r0, r1 - r0,
                                     c == in_pieces - 1);
    }
    double t1 = canopy_now();
    if (!s) s = canopy_index_staging_knn(dv, *st, v, sched, &rep);
    double t2 = canopy_now();
    /* pinned: the indices travel as int32 and are widened while unpacking */
    if (!s)
        s = canopy_index_staging_back(*st, pinned ? (void *)hi : (void *)idx, pinned,
                                      dist2 ? (pinned ? hd : dist2) : NULL, out_pieces);
    for (int32_t c = 0; c < out_pieces && !s; c++) {
        /* the rows of the piece the module queued */
        int64_t c0 = nq * c / out_pieces * k, c1 = nq * (c + 1) / out_pieces * k;
        if ((s = canopy_index_staging_wait(*st, c)) || !pinned) continue;
        unpack_results(idx + c0, (const int32_t *)hi + c0, dist2 ? dist2 + c0 : NULL, hd + c0,
                       c1 - c0);
    }
    double t3 = canopy_now();
    if (s || !stats) return s;
    device_stats(stats, &rep, nq, v, sched);
    stats->upload_seconds = t1 - t0;
    stats->download_seconds = t3 - t2;
    stats->transfer_seconds = stats->upload_seconds + stats->download_seconds;
    char how[160];
    if (pinned)
        snprintf(how, sizeof how,
                 "pinned staging (%d + %d pieces, copies overlapped with packing and unpacking, "
                 "indices sent as int32)",
                 (int)in_pieces, (int)out_pieces);
    else
        snprintf(how, sizeof how, "pageable copies straight from and to the caller's arrays");
    snprintf(stats->note, sizeof stats->note,
             "host arrays through %s: resident tree, %s (schedule %s; auto sorts from %d "
             "queries)",
             how, device_order_name(sched), canopy_schedule_name(o->schedule),
             CANOPY_INDEX_SORT_MIN);
    return CANOPY_OK;
}

static canopy_status knn_staged(canopy_index *ix, canopy_points q, int32_t k,
                                const canopy_run_options *o, int64_t *idx, float *dist2,
                                canopy_stats *stats) {
    pthread_mutex_lock(&ix->staging_lock);
    canopy_status s =
        knn_staged_on(&ix->dev, ix->leaf_size, &ix->staging, 1, q, k, o, idx, dist2, stats);
    pthread_mutex_unlock(&ix->staging_lock);
    return s;
}

canopy_status canopy_index_knn(canopy_index *ix, canopy_points query, int32_t k,
                               const canopy_run_options *opt, int64_t *idx, float *dist2,
                               canopy_stats *stats) {
    canopy_run_options o;
    int self = 0;
    canopy_status s = begin(ix, "index knn", KINDS_METRIC, opt, &o, stats);
    if (s || (s = queries_for(ix, "index knn", &query, &self))) return s;
    if (k < 1) return canopy_fail(CANOPY_ERR_INVALID, "index knn: k must be >= 1 (got %d)", (int)k);
    if (ix->dev.view.hot && staged_applies(&o, query.n, self))
        return knn_staged(ix, query, k, &o, idx, dist2, stats);
    const canopy_tree *t;
    if ((s = host_tree(ix, &t))) return s;
    return canopy_knn_on_tree(t, query, self, k, &o, idx, dist2, stats);
}

/* The pinned staging and device query scratch canopy_knn's device path shares from its
 * second call in a process on: a first call copies pageable (making pinned buffers
 * costs more than one call's copies) and makes its own scratch, a process that calls
 * again amortises them. Kept until the process ends, as the build pool's is until
 * canopy_gpu_pool_release; a call that finds them in use works alone as a first call. */
static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;
static struct canopy_index_staging *once_staging;
static struct canopy_index_scratch *once_scratch; /* the device query's, likewise */
static int once_calls;

/* canopy_knn's device path: where the queries will run on the GPU with a variant and
 * schedule the resident-index path offers, builds a kd index on the GPU from the host
 * points, queries it through pinned staging and frees it; *taken 0 (nothing done) where
 * it does not apply. Not for self-queries (the device path excludes no point). */
static canopy_status knn_device_once(canopy_points ref, canopy_points query, int32_t k,
                                     const canopy_run_options *o, int64_t *idx, float *dist2,
                                     canopy_stats *stats, int *taken) {
    /* without a GPU the generic path says so in its own words */
    *taken = o->tree == CANOPY_TREE_KD && ref.n > 0 && staged_applies(o, query.n, 0) &&
             canopy_gpu_usable();
    if (!*taken) return CANOPY_OK;
    /* the device copy alone: nothing reads a host twin here (an index downloads one) */
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    to.leaf_size = o->leaf_size > 0 ? o->leaf_size : CANOPY_INDEX_GPU_LEAF;
    canopy_index_device dv;
    memset(&dv, 0, sizeof dv);
    struct canopy_index_staging *st = NULL;
    int shared = pthread_mutex_trylock(&once_lock) == 0;
    if (shared && once_calls++ == 0) {
        pthread_mutex_unlock(&once_lock);
        shared = 0;
    }
    dv.scratch = shared ? once_scratch : NULL;
    double t0 = canopy_now();
    canopy_status s = canopy_index_device_build(ref, 0, &to, NULL, &dv);
    double built = canopy_now() - t0;
    if (!s)
        s = knn_staged_on(&dv, to.leaf_size, shared ? &once_staging : &st, shared, query, k, o, idx,
                          dist2, stats);
    if (shared) {
        once_scratch = dv.scratch; /* kept for the next call, not freed with the tree */
        dv.scratch = NULL;
        pthread_mutex_unlock(&once_lock);
    }
    if (!s && stats) {
        stats->build_seconds = built;
        stats->tree = CANOPY_TREE_KD;
        stats->tree_nodes = dv.view.n_nodes;
        stats->tree_depth = dv.view.depth;
        stats->device_tree_reused = 0;
        size_t used = strlen(stats->note);
        snprintf(stats->note + used, sizeof stats->note - used,
                 "; kd tree built on the GPU from the host points (leaf %d), no host build, no "
                 "tree upload",
                 (int)to.leaf_size);
    }
    if (st) canopy_index_staging_free(st);
    if (dv.view.hot) canopy_index_device_free(&dv);
    return s;
}

/* canopy_knn sits here, above the application, because a GPU run of a kd tree builds a
 * device index (no host build, no tree upload); the rest is the application's. */
canopy_status canopy_knn(canopy_points ref, canopy_points query, int32_t k,
                         const canopy_run_options *opt, int64_t *idx, float *dist2,
                         canopy_stats *stats) {
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    int self = 0, on_device = 0;
    canopy_status s = canopy_knn_check(ref, &query, k, &o, &self);
    if (s) return s;
    if (stats) memset(stats, 0, sizeof *stats);
    if (!self && (s = knn_device_once(ref, query, k, &o, idx, dist2, stats, &on_device))) return s;
    if (on_device) return CANOPY_OK;
    return canopy_knn_on_host(ref, query, self, k, &o, idx, dist2, stats);
}

/* The device-pointer kNN of canopy_index_knn_device and, self not
 * CANOPY_INDEX_SELF_NONE, canopy_index_knn_self_device (no queries: the indexed points,
 * walked in the tree's point order unless a schedule says otherwise). */
static canopy_status knn_device(canopy_index *ix, const float *d_queries, int64_t nq, int self,
                                int32_t k, const canopy_run_options *opt, int64_t *d_idx,
                                float *d_dist2, void *stream, canopy_stats *stats) {
    const char *app = self ? "index knn (device, self)" : "index knn (device)";
    canopy_run_options o = canopy_run_options_default();
    canopy_status s = begin(ix, app, KINDS_METRIC, opt, &o, stats);
    if (s) return s;
    if (!ix->dev.view.hot)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: the index has no device copy (build it with residency device "
                           "or both)",
                           app);
    if (k < 1) return canopy_fail(CANOPY_ERR_INVALID, "%s: k must be >= 1 (got %d)", app, (int)k);
    if (self) nq = ix->dev.view.n;
    if (nq < 0 || (nq > 0 && ((!self && !d_queries) || !d_idx)))
        return canopy_fail(CANOPY_ERR_INVALID, "%s: %lld queries, queries or indices NULL", app,
                           (long long)nq);
    if (o.backend == CANOPY_BACKEND_CPU)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: device pointers need backend gpu or auto", app);
    const int kd = ix->dev.view.kind == CANOPY_TREE_KD;
    if (o.schedule != CANOPY_SCHEDULE_AUTO && o.schedule != CANOPY_SCHEDULE_NONE &&
        o.schedule != CANOPY_SCHEDULE_MORTON &&
        !((kd || self) && o.schedule == CANOPY_SCHEDULE_TREE))
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "%s: schedule %s is not offered for device queries on a %s index "
                           "(auto, none: the caller's order, morton: sorted on the device%s)",
                           app, canopy_schedule_name(o.schedule),
                           canopy_tree_kind_name((canopy_tree_kind)ix->dev.view.kind),
                           self ? ", tree: the tree's point order"
                           : kd ? ", tree: grouped by kd bucket on the device"
                                : "");
    canopy_variant v;
    canopy_schedule sched;
    device_choice(&ix->dev, ix->leaf_size, &o, nq, k, &v, &sched);
    /* the tree's own order costs nothing to make */
    if (self && o.schedule == CANOPY_SCHEDULE_AUTO) sched = CANOPY_SCHEDULE_TREE;
    const int kd_kernel = knn_kd_kernel_applies(&ix->dev.view, k, v);
    canopy_gpu_report rep;
    memset(&rep, 0, sizeof rep);
    /* without stats nothing is timed or counted (index/device.h) */
    s = canopy_index_device_knn(&ix->dev, d_queries, nq, self, k, v, sched, d_idx, d_dist2, stream,
                                stats ? &rep : NULL);
    if (s || !stats) return s;
    device_stats(stats, &rep, nq, v, sched);
    snprintf(stats->note, sizeof stats->note,
             "device pointers: resident tree, %s%s (schedule %s; auto sorts from %d queries)",
             kd_kernel ? "kd walk, " : "",
             self && sched == CANOPY_SCHEDULE_TREE ? "the indexed points in tree order"
                                                   : device_order_name(sched),
             canopy_schedule_name(o.schedule), CANOPY_INDEX_SORT_MIN);
    return CANOPY_OK;
}

canopy_status canopy_index_knn_device(canopy_index *ix, const float *d_queries, int64_t nq,
                                      int32_t k, const canopy_run_options *opt, int64_t *d_idx,
                                      float *d_dist2, void *stream, canopy_stats *stats) {
    return knn_device(ix, d_queries, nq, CANOPY_INDEX_SELF_NONE, k, opt, d_idx, d_dist2, stream,
                      stats);
}

canopy_status canopy_index_knn_self_device(canopy_index *ix, int32_t k, int exclude_self,
                                           const canopy_run_options *opt, int64_t *d_idx,
                                           float *d_dist2, void *stream, canopy_stats *stats) {
    return knn_device(ix, NULL, 0,
                      exclude_self ? CANOPY_INDEX_SELF_EXCLUDE : CANOPY_INDEX_SELF_INCLUDE, k, opt,
                      d_idx, d_dist2, stream, stats);
}

canopy_status canopy_index_radius_count(canopy_index *ix, canopy_points query, float r,
                                        const canopy_run_options *opt, int64_t *counts,
                                        canopy_stats *stats) {
    canopy_run_options o;
    int self = 0;
    canopy_status s =
        begin(ix, "index radius", KINDS_METRIC | (1u << CANOPY_TREE_OCT), opt, &o, stats);
    if (s || (s = queries_for(ix, "index radius", &query, &self))) return s;
    const canopy_tree *t;
    if ((s = host_tree(ix, &t))) return s;
    return canopy_radius_on_tree(t, query, self, r, &o, counts, stats);
}

canopy_status canopy_index_kde(canopy_index *ix, canopy_points query, const canopy_kde_options *ko,
                               const canopy_run_options *opt, double *log_density,
                               canopy_stats *stats) {
    canopy_run_options o;
    int self = 0;
    canopy_status s = begin(ix, "index kde", 1u << CANOPY_TREE_KD, opt, &o, stats);
    if (s || (s = queries_for(ix, "index kde", &query, &self))) return s;
    const canopy_tree *t;
    if ((s = host_tree(ix, &t))) return s;
    return canopy_kde_on_tree(t, query, ko, &o, log_density, stats);
}

canopy_status canopy_index_gravity(canopy_index *ix, float theta, float eps,
                                   const canopy_run_options *opt, float *acc, canopy_stats *stats) {
    canopy_run_options o;
    canopy_status s = begin(ix, "index gravity", 1u << CANOPY_TREE_OCT, opt, &o, stats);
    if (s) return s;
    if (!(theta > 0.0f) || !isfinite(theta))
        return canopy_fail(CANOPY_ERR_INVALID, "index gravity: theta must be > 0 (got %g)",
                           (double)theta);
    if (!(eps >= 0.0f) || !isfinite(eps))
        return canopy_fail(CANOPY_ERR_INVALID, "index gravity: softening must be finite and >= 0");
    canopy_points bodies;
    if ((s = original_points(ix, &bodies))) return s;
    const canopy_tree *t;
    if ((s = host_tree(ix, &t))) return s;
    return canopy_gravity_on_tree(t, bodies, theta, eps, &o, acc, stats);
}

canopy_status canopy_index_search(canopy_index *ix, const float *queries, int64_t n_queries,
                                  const canopy_run_options *opt, int64_t *idx,
                                  canopy_stats *stats) {
    canopy_run_options o;
    canopy_status s = begin(ix, "index search", 1u << CANOPY_TREE_BST, opt, &o, stats);
    if (s) return s;
    for (int64_t i = 0; i < n_queries; i++)
        if (isnan(queries[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "index search: query %lld is NaN", (long long)i);
    const canopy_tree *t;
    if ((s = host_tree(ix, &t))) return s;
    return canopy_search_on_tree(t, queries, n_queries, &o, idx, stats);
}

/* ------------------------------------------------------------------ files -- */
canopy_status canopy_index_save(const canopy_index *ix, const char *path) {
    canopy_status s = check_handle(ix, "index save");
    if (s) return s;
    /* a GPU build's host twin is made here if no query made it (a cache: const to the caller) */
    const canopy_tree *t;
    if ((s = host_tree((canopy_index *)ix, &t))) return s;
    const canopy_tree_view *v = &t->view;
    int64_t meta[M_COUNT] = {
        [M_KIND] = v->kind,
        [M_N] = v->n,
        [M_D] = v->d,
        [M_NODES] = v->n_nodes,
        [M_HOT_STRIDE] = v->hot_stride,
        [M_GEOM_STRIDE] = v->geom_stride,
        [M_DEPTH] = v->depth,
        [M_MAX_CHILDREN] = v->max_children,
        [M_LEAF_SIZE] = t->leaf_size,
        [M_ORDER] = t->order,
        [M_HAS_WEIGHTS] = v->weights != NULL,
    };
    canopy_section secs[6] = {
        {SEC_META, 8, meta, sizeof meta},
        {SEC_HOT, 1, v->hot, (uint64_t)v->n_nodes * (uint64_t)v->hot_stride},
        {SEC_POINTS, 4, v->points, (uint64_t)v->n * (uint64_t)v->d * 4},
        {SEC_IDS, 8, v->ids, (uint64_t)v->n * 8},
        {SEC_ROPE, 4, v->rope, (uint64_t)v->n_nodes * 4},
        {SEC_WEIGHTS, 4, v->weights, (uint64_t)v->n * 4},
    };
    return canopy_sections_write(path, file_magic, FILE_VERSION, secs, v->weights ? 6 : 5);
}

static canopy_status bad(const canopy_secfile *f, const char *what) {
    return canopy_fail(CANOPY_ERR_FORMAT, "%s: inconsistent index: %s", f->name, what);
}

/* Whether point p lies in node i's bound as the engines read it (traverse_geom.h).
 * Ball, vp and oct in double, as their builders bound the exact distances. */
static int in_bound(const canopy_tree_view *v, int32_t i, const float *p) {
    const float *g = canopy_tv_geom(v, i);
    int32_t d = v->d;
    if (v->kind == CANOPY_TREE_BALL || v->kind == CANOPY_TREE_VP) {
        double s = 0.0;
        for (int32_t j = 0; j < d; j++) {
            double t = (double)p[j] - g[j];
            s += t * t;
        }
        double r = sqrt(s);
        return v->kind == CANOPY_TREE_BALL ? r <= g[d] : r >= g[d + 1] && r <= g[d + 2];
    }
    if (v->kind == CANOPY_TREE_OCT) {
        for (int32_t j = 0; j < 3; j++)
            if (!(fabs((double)p[j] - g[4 + j]) <= g[7])) return 0;
        return 1;
    }
    for (int32_t j = 0; j < d; j++) /* kd box; bst's [lo, hi] is its 1-d case */
        if (!(p[j] >= g[j] && p[j] <= g[d + j])) return 0;
    return 1;
}

/* The bounds the engines prune with must hold every point below them, or a query
 * quietly skips points: NaN points, a box with hi < lo or a false root box would
 * change answers without a crash. Boxes nest exactly (tight float boxes of subsets),
 * so kd and bst check leaves and child boxes; the other kinds every node's points. */
static canopy_status check_geometry(const canopy_secfile *f, const canopy_tree_view *v) {
    for (int64_t i = 0; i < v->n * v->d; i++)
        if (!isfinite(v->points[i])) return bad(f, "a point coordinate is not finite");
    for (int64_t i = 0; v->weights && i < v->n; i++)
        if (!isfinite(v->weights[i])) return bad(f, "a point weight is not finite");
    const int boxes = v->kind == CANOPY_TREE_KD || v->kind == CANOPY_TREE_BST;
    for (int32_t i = 0; i < v->n_nodes; i++) {
        const canopy_node *nd = canopy_tv_node(v, i);
        const float *g = canopy_tv_geom(v, i);
        int32_t at = nd->begin; /* children split their parent's points, in order */
        for (int32_t c = 0; nd->child >= 0 && c < nd->nchild; c++) {
            const canopy_node *ch = canopy_tv_node(v, nd->child + c);
            if (ch->begin != at) return bad(f, "children do not split their parent's points");
            at = ch->end;
        }
        if (nd->child >= 0 && at != nd->end)
            return bad(f, "children do not split their parent's points");
        if (v->kind == CANOPY_TREE_OCT && nd->end > nd->begin &&
            !(isfinite(g[0]) && isfinite(g[1]) && isfinite(g[2]) && isfinite(g[3])))
            return bad(f, "a cell's mass or centre of mass is not finite");
        if (boxes) {
            for (int32_t j = 0; j < v->d; j++)
                if (!(g[j] <= g[v->d + j])) return bad(f, "a node's box has lo > hi");
            for (int32_t c = 0; nd->child >= 0 && c < nd->nchild; c++) {
                const canopy_node *ch = canopy_tv_node(v, nd->child + c);
                const float *cg = canopy_tv_geom(v, nd->child + c);
                for (int32_t j = 0; ch->end > ch->begin && j < v->d; j++)
                    if (!(cg[j] >= g[j] && cg[v->d + j] <= g[v->d + j]))
                        return bad(f, "a child's box is not inside its parent's");
            }
            if (nd->child >= 0) continue;
        }
        for (int64_t p = nd->begin; p < nd->end; p++)
            if (!in_bound(v, i, canopy_tv_point(v, p)))
                return bad(f, "a point lies outside its node's bound");
    }
    return CANOPY_OK;
}

/* Everything a traversal will trust is checked, so a file that passes the checksum
 * but was made wrong cannot send a query outside the arrays. */
static canopy_status check_tree(const canopy_secfile *f, const canopy_tree_view *v) {
    if (v->kind < CANOPY_TREE_KD || v->kind > CANOPY_TREE_BST) return bad(f, "unknown tree kind");
    const int binary = v->kind != CANOPY_TREE_OCT;
    if (v->d < 1 || v->d > 4096) return bad(f, "dimension out of range");
    if (v->n < 0 || v->n >= INT32_MAX) return bad(f, "point count out of range");
    if (v->n_nodes < 1) return bad(f, "no nodes");
    if (v->hot_stride < (int32_t)sizeof(canopy_node) || v->hot_stride % 16)
        return bad(f, "node record size");
    static const int32_t geom_d[] = {2, 1, 1, 0, 0}, geom_c[] = {1, 1, 3, 8, 2};
    if (v->geom_stride != geom_d[v->kind] * v->d + geom_c[v->kind] ||
        (int64_t)sizeof(canopy_node) + 4 * (int64_t)v->geom_stride > v->hot_stride)
        return bad(f, "geometry size");
    if ((v->kind == CANOPY_TREE_OCT && v->d != 3) || (v->kind == CANOPY_TREE_BST && v->d != 1))
        return bad(f, "dimension not allowed for the tree kind");
    if (v->depth < 1 || v->depth > 4096) return bad(f, "depth out of range");
    /* The engines hold a node's child order in CANOPY_MAX_CHILDREN entries, and the
     * binary kinds' kernels read exactly two children (kd's `child + 1`). */
    if (binary ? v->max_children != 2
               : v->max_children < 1 || v->max_children > CANOPY_MAX_CHILDREN)
        return bad(f, binary ? "fan-out of a binary tree kind is not 2"
                             : "fan-out above the engines' limit of 8");
    for (int32_t i = 0; i < v->n_nodes; i++) {
        const canopy_node *nd = canopy_tv_node(v, i);
        if (nd->begin < 0 || nd->end < nd->begin || nd->end > v->n)
            return bad(f, "node point range outside the points");
        if (nd->child == -1 && nd->nchild != 0) return bad(f, "a leaf with children");
        if (nd->child != -1 && (nd->child <= i || nd->nchild < 1 || nd->nchild > v->max_children ||
                                nd->child > v->n_nodes - nd->nchild))
            return bad(f, "node children outside the nodes");
        if (binary && nd->child != -1 && nd->nchild != 2)
            return bad(f, "a node of a binary tree kind without exactly two children");
        if (v->rope[i] < -1 || v->rope[i] >= v->n_nodes) return bad(f, "rope outside the nodes");
    }
    const canopy_node *root = canopy_tv_node(v, 0);
    if (root->begin != 0 || root->end != v->n) return bad(f, "root does not hold every point");
    /* The engines size their stacks by the recorded depth, and static-rope variants
     * follow the ropes to the end: the nodes must form one tree (every node but the
     * root has exactly one parent, after it), no deeper than recorded, with the ropes
     * the builder would give it. Children follow their parents, so one forward pass
     * finds levels, parent counts and ropes. */
    int32_t *level = NULL, *parents = NULL, *rope = NULL;
    canopy_status s = canopy_calloc((void **)&level, (size_t)v->n_nodes, sizeof *level);
    if (!s) s = canopy_calloc((void **)&parents, (size_t)v->n_nodes, sizeof *parents);
    if (!s) s = canopy_calloc((void **)&rope, (size_t)v->n_nodes, sizeof *rope);
    if (!s) {
        level[0] = 1;
        rope[0] = -1;
    }
    for (int32_t i = 0; i < v->n_nodes && !s; i++) {
        const canopy_node *nd = canopy_tv_node(v, i);
        if (i > 0 && parents[i] != 1) s = bad(f, "the nodes do not form a tree");
        if (level[i] > v->depth) s = bad(f, "a node lies deeper than the recorded depth");
        if (rope[i] != v->rope[i]) s = bad(f, "ropes do not match the tree");
        for (int32_t c = 0; nd->child >= 0 && c < nd->nchild; c++) {
            int32_t k = nd->child + c;
            level[k] = level[i] + 1;
            parents[k]++;
            rope[k] = c + 1 < nd->nchild ? k + 1 : rope[i];
        }
        if (v->kind == CANOPY_TREE_KD) {
            float dim = canopy_tv_geom(v, i)[2 * v->d];
            /* -1 marks a leaf; an inner node's dimension indexes the query */
            if (!(dim >= (nd->child >= 0 ? 0.0f : -1.0f) && dim < (float)v->d) ||
                dim != (float)(int32_t)dim)
                s = bad(f, "kd split dimension out of range");
        }
    }
    canopy_free(level);
    canopy_free(parents);
    canopy_free(rope);
    if (s) return s;
    /* ids must be a permutation: self-queries scatter the points back by them */
    uint8_t *seen = NULL;
    s = canopy_calloc((void **)&seen, (size_t)v->n + 1, 1);
    if (s) return s;
    for (int64_t i = 0; i < v->n && !s; i++) {
        if (v->ids[i] < 0 || v->ids[i] >= v->n || seen[v->ids[i]])
            s = bad(f, "point ids are not a permutation");
        else
            seen[v->ids[i]] = 1;
    }
    canopy_free(seen);
    return s ? s : check_geometry(f, v);
}

static canopy_status from_file(canopy_index *ix) {
    canopy_secfile *f = &ix->file;
    const void *p;
    canopy_status s = canopy_secfile_get(f, SEC_META, 8, "meta", M_COUNT, &p, NULL);
    if (s) return s;
    int64_t m[M_COUNT];
    memcpy(m, p, sizeof m);
    for (int i = 0; i < M_COUNT; i++)
        if (m[i] < 0 || m[i] > INT32_MAX) return bad(f, "header value out of range");
    canopy_tree *t = &ix->mapped;
    canopy_tree_view *v = &t->view;
    v->kind = (int32_t)m[M_KIND];
    v->n = m[M_N];
    v->d = (int32_t)m[M_D];
    v->n_nodes = (int32_t)m[M_NODES];
    v->hot_stride = (int32_t)m[M_HOT_STRIDE];
    v->geom_stride = (int32_t)m[M_GEOM_STRIDE];
    v->depth = (int32_t)m[M_DEPTH];
    v->max_children = (int32_t)m[M_MAX_CHILDREN];
    t->leaf_size = (int32_t)m[M_LEAF_SIZE];
    t->order = (int32_t)m[M_ORDER];
    if (v->d < 1 || v->d > 4096 || v->hot_stride < 1) return bad(f, "dimension or record size");
    const void *hot, *pts, *ids, *rope, *w = NULL;
    if ((s = canopy_secfile_get(f, SEC_HOT, 1, "nodes", (int64_t)v->n_nodes * v->hot_stride, &hot,
                                NULL)) ||
        (s = canopy_secfile_get(f, SEC_POINTS, 4, "points", v->n * v->d, &pts, NULL)) ||
        (s = canopy_secfile_get(f, SEC_IDS, 8, "ids", v->n, &ids, NULL)) ||
        (s = canopy_secfile_get(f, SEC_ROPE, 4, "ropes", v->n_nodes, &rope, NULL)) ||
        (m[M_HAS_WEIGHTS] &&
         (s = canopy_secfile_get(f, SEC_WEIGHTS, 4, "weights", v->n, &w, NULL))))
        return s;
    v->hot = hot;
    v->points = pts;
    v->ids = ids;
    v->rope = rope;
    v->weights = w;
    if ((s = check_tree(f, v)) || (s = canopy_tree_fill_min_id(t))) return s;
    if (v->kind == CANOPY_TREE_OCT && !w) return bad(f, "octree without masses");
    ix->tree = t;
    ix->leaf_size = t->leaf_size;
    return CANOPY_OK;
}

static canopy_status finish_load(canopy_index *ix, canopy_status s, canopy_index **out) {
    if (!s) s = from_file(ix);
    if (!s) s = reg_add(ix);
    if (s) {
        destroy(ix);
        return s;
    }
    *out = ix;
    return CANOPY_OK;
}

canopy_status canopy_index_load(const char *path, canopy_index **out) {
    *out = NULL;
    canopy_index *ix = NULL;
    canopy_status s = new_handle(CANOPY_RESIDENCY_HOST, &ix);
    if (s) return s;
    return finish_load(ix, canopy_secfile_open(path, file_magic, FILE_VERSION, &ix->file), out);
}

canopy_status canopy_index_load_mem(const void *buf, size_t len, const char *name,
                                    canopy_index **out) {
    *out = NULL;
    canopy_index *ix = NULL;
    canopy_status s = new_handle(CANOPY_RESIDENCY_HOST, &ix);
    if (s) return s;
    return finish_load(
        ix, canopy_secfile_open_mem(buf, len, name, file_magic, FILE_VERSION, &ix->file), out);
}
