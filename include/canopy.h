/* SPDX-License-Identifier: MIT */
/* canopy — fast irregular workloads (tree traversals, graphs, forests, regex) on
 * multicore SIMD CPUs and NVIDIA GPUs.
 *
 * The one public header. Every public name starts with canopy_ / CANOPY_.
 * Every fallible function returns a canopy_status; on failure canopy_last_error()
 * returns a message (thread-local) that names what went wrong. */
#ifndef CANOPY_H
#define CANOPY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CANOPY_VERSION_MAJOR 0
#define CANOPY_VERSION_MINOR 1
#define CANOPY_VERSION_PATCH 0
#define CANOPY_VERSION_STRING "0.1.0"

/* The small inline helpers below are also callable from CUDA device code. */
#ifdef __CUDACC__
#define CANOPY_INLINE_API static inline __host__ __device__
#else
#define CANOPY_INLINE_API static inline
#endif

/* ===================================================================== core == */

typedef enum canopy_status {
    CANOPY_OK = 0,
    CANOPY_ERR_INVALID = 1,     /* bad argument or bad input value (NaN, k <= 0, ...) */
    CANOPY_ERR_IO = 2,          /* file cannot be opened, read or written */
    CANOPY_ERR_FORMAT = 3,      /* file contents malformed, truncated or unsupported */
    CANOPY_ERR_NOMEM = 4,       /* allocation failed or size overflowed */
    CANOPY_ERR_UNSUPPORTED = 5, /* valid request this build/device cannot do */
    CANOPY_ERR_DEVICE = 6,      /* GPU runtime error */
    CANOPY_ERR_INTERNAL = 7     /* a bug: an invariant did not hold */
} canopy_status;

/* Message of the last failure on this thread ("" if none). */
const char *canopy_last_error(void);
/* Short fixed name of a status code, e.g. "format error". */
const char *canopy_status_name(canopy_status s);
/* Records a failure message for this thread and returns s (for `return canopy_fail(...)`). */
canopy_status canopy_fail(canopy_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void canopy_clear_error(void);

/* A view of n points of dimension d, float32, over the caller's memory. Point i
 * starts at data + i * stride (stride counted in floats, stride >= d). */
typedef struct canopy_points {
    const float *data;
    int64_t n;
    int32_t d;
    int64_t stride;
} canopy_points;

CANOPY_INLINE_API canopy_points canopy_points_make(const float *data, int64_t n, int32_t d) {
    canopy_points p = {data, n, d, d};
    return p;
}
CANOPY_INLINE_API const float *canopy_point(canopy_points p, int64_t i) {
    return p.data + i * p.stride;
}
/* Fails with CANOPY_ERR_INVALID naming `what` and the first bad index if any
 * coordinate is NaN or infinite, or if the shape is inconsistent. */
canopy_status canopy_points_check(canopy_points p, const char *what);

/* Allocation: sizes are overflow-checked; failures set the error message.
 * Memory is 64-byte aligned and released with canopy_free. */
canopy_status canopy_alloc(void **out, size_t count, size_t elem_size);
canopy_status canopy_calloc(void **out, size_t count, size_t elem_size);
/* canopy_alloc for arrays of megabytes that will be filled: from 2 MiB on, aligned to
 * 2 MiB and (Linux) backed by transparent huge pages where the system allows, so that
 * filling them takes a page fault per 2 MiB rather than per 4 KiB. */
canopy_status canopy_alloc_large(void **out, size_t count, size_t elem_size);
void canopy_free(void *p);
/* a * b without overflow, or an error. */
canopy_status canopy_mul_size(size_t a, size_t b, size_t *out);

/* Monotonic clock in seconds. */
double canopy_now(void);

/* Seedable counter-based random numbers. A stream is the splitmix64 sequence that
 * starts from a state derived from (seed, stream); the same (seed, stream) gives the
 * same numbers on every machine and thread count. Generators use one stream per
 * point (stream = index), so parallel generation is deterministic. */
typedef struct canopy_rng {
    uint64_t state;
} canopy_rng;
canopy_rng canopy_rng_make(uint64_t seed, uint64_t stream);
uint64_t canopy_rng_u64(canopy_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double canopy_rng_uniform(canopy_rng *r);
/* Uniform integer in [0, bound), unbiased; bound > 0. */
uint64_t canopy_rng_below(canopy_rng *r, uint64_t bound);
/* Standard normal (Marsaglia polar method). */
double canopy_rng_normal(canopy_rng *r);

/* CPU features, detected once at run time. */
typedef enum canopy_isa {
    CANOPY_ISA_SCALAR = 0,
    CANOPY_ISA_SSE42 = 1,
    CANOPY_ISA_AVX2 = 2,
    CANOPY_ISA_AVX512 = 3
} canopy_isa;
/* Best ISA this CPU supports (AVX-512 means F+BW+DQ+VL). CANOPY_ISA env var
 * ("scalar", "sse4.2", "avx2", "avx512") caps it, for tests and comparisons. */
canopy_isa canopy_cpu_isa(void);
const char *canopy_isa_name(canopy_isa isa);

/* Threads for CPU work: set explicitly (> 0), else CANOPY_THREADS, else all cores. */
void canopy_set_threads(int n);
int canopy_threads(void);
/* Threads worth waking for `work` node visits (tens of ns each): one per 30,000, from
 * 1 to canopy_threads(); all of them when work <= 0 (unknown). Small calls stay on one
 * thread, where a team's wake-up or, on a busy machine, a time slice would cost more
 * than the work. */
int canopy_threads_for(double work);

/* Build facts. */
const char *canopy_version(void);
/* 1 when the CUDA module (libcanopy_cuda.so.<major>, loaded at run time: docs/c-api.md)
 * is loaded; the first call looks for it. */
int canopy_have_cuda(void);
/* 1 when this build has the MPI layer, libcanopy_dist (canopy/dist.h: distributed kNN,
 * radius, decomposition). */
int canopy_have_mpi(void);
/* GPU presence: fills name (if len > 0) and memory; CANOPY_ERR_UNSUPPORTED, with the
 * reason, without the CUDA module or when no device is visible. */
canopy_status canopy_gpu_info(char *name, size_t name_len, size_t *total_bytes);

/* ======================================================================= io == */

typedef enum canopy_dtype {
    CANOPY_F32 = 0,
    CANOPY_F64 = 1,
    CANOPY_I32 = 2,
    CANOPY_I64 = 3,
    CANOPY_U8 = 4
} canopy_dtype;
size_t canopy_dtype_size(canopy_dtype t);
const char *canopy_dtype_name(canopy_dtype t); /* "float32", ... */

#define CANOPY_MAX_DIMS 8

/* An owned n-dimensional C-order array (as read from or written to files). */
typedef struct canopy_array {
    void *data;
    canopy_dtype dtype;
    int32_t ndim;
    int64_t shape[CANOPY_MAX_DIMS];
} canopy_array;

int64_t canopy_array_count(const canopy_array *a);
canopy_status canopy_array_alloc(canopy_array *a, canopy_dtype t, int32_t ndim,
                                 const int64_t *shape);
void canopy_array_release(canopy_array *a);
/* Converts in place to another dtype (e.g. float64 -> float32 for points). */
canopy_status canopy_array_convert(canopy_array *a, canopy_dtype t);

/* NumPy .npy, format versions 1.0, 2.0 and 3.0; little-endian C order; dtypes of
 * canopy_dtype. Errors name the file and what is wrong (bad magic, truncated,
 * Fortran order, unsupported dtype, absurd shape). */
canopy_status canopy_npy_read(const char *path, canopy_array *out);
canopy_status canopy_npy_read_mem(const void *buf, size_t len, const char *name, canopy_array *out);
/* Writes atomically: a temporary file renamed over `path` on success. */
canopy_status canopy_npy_write(const char *path, const canopy_array *a);

/* CSV of numbers: comma-separated, one row per line, an optional header line
 * (detected when the first line has a non-numeric field). Read as float64 (rows, cols). */
canopy_status canopy_csv_read(const char *path, canopy_array *out);
canopy_status canopy_csv_read_mem(const void *buf, size_t len, const char *name, canopy_array *out);
/* Writes a 1-D or 2-D array; header may be NULL. Atomic like npy. */
canopy_status canopy_csv_write(const char *path, const canopy_array *a, const char *header);

/* .fvecs (float32) and .ivecs (int32): per vector, an int32 dimension then values. */
canopy_status canopy_vecs_read(const char *path, canopy_array *out);
/* The same over a buffer; the type comes from `name`'s suffix (.fvecs or .ivecs). */
canopy_status canopy_vecs_read_mem(const void *buf, size_t len, const char *name,
                                   canopy_array *out);
canopy_status canopy_vecs_write(const char *path, const canopy_array *a);

/* Reads any supported file by extension (.npy, .csv, .fvecs, .ivecs; .csv.gz is not
 * supported). */
canopy_status canopy_array_load(const char *path, canopy_array *out);
/* Loads a 2-D float array as float32 points (1-D arrays become d = 1), rejecting
 * NaN/Inf with the row and column named. */
canopy_status canopy_points_load(const char *path, canopy_array *out);

/* Atomic output: open a temporary file beside `path`; commit renames it over
 * `path`, abort removes it. Used by every writer (npy, csv, fvecs/ivecs, mtx) so
 * failures leave no partial file. `path` "-" is standard output (streamed, so not
 * atomic; commit flushes it and reports write errors). A `path` that exists and is
 * not a regular file (a device such as /dev/null, a FIFO, a directory) is refused:
 * the rename would replace it. */
typedef struct canopy_outfile {
    void *fp; /* FILE * */
    char *final_path;
    char *tmp_path;
} canopy_outfile;
canopy_status canopy_outfile_open(canopy_outfile *o, const char *path);
canopy_status canopy_outfile_commit(canopy_outfile *o);
/* Commits the n open outputs of one run all or nothing: a failure (a write error, a
 * rename that fails) leaves every target as it was, and with the handlers of
 * canopy_outfile_remove_on_signal a signal leaves either all old or all new files (it
 * is deferred while the set is renamed). Aborts them all on failure. */
canopy_status canopy_outfile_commit_all(canopy_outfile *o, int n);
void canopy_outfile_abort(canopy_outfile *o);
/* Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT (those left at their
 * default action) that remove the temporary files of outputs being written, then
 * end the process by the same signal. For programs; a library caller with its own
 * handlers can call canopy_outfile_unlink_live (async-signal-safe) from them; it
 * first waits (at most 1 s) for outputs that other threads are creating. */
void canopy_outfile_remove_on_signal(void);
void canopy_outfile_unlink_live(void);

/* ================================================================ generators == */

/* Uniform in the box [lo, hi)^d. */
canopy_status canopy_gen_uniform(float *out, int64_t n, int32_t d, double lo, double hi,
                                 uint64_t seed);
/* Mixture of k equal-weight isotropic Gaussians, centres uniform in [0,1)^d, standard
 * deviation `spread`. labels (optional, may be NULL) receives each point's cluster. */
canopy_status canopy_gen_clusters(float *out, int32_t *labels, int64_t n, int32_t d, int32_t k,
                                  double spread, uint64_t seed);
/* Mixture of k Gaussians of very different sizes and spreads over a uniform
 * background, like city locations (docs/generators.md): 1/8 of the points uniform in
 * [0,1)^d (label -1), the rest in cluster c with probability proportional to
 * 1 / (c + 1), spread of cluster c between spread / 100 and spread. */
canopy_status canopy_gen_cities(float *out, int32_t *labels, int64_t n, int32_t d, int32_t k,
                                double spread, uint64_t seed);
/* Plummer sphere (Aarseth, Hénon & Wielen 1974) in standard N-body units (G = 1,
 * M = 1, E = -1/4; Plummer scale radius 3π/16), radii cut at 99.9 % of the mass,
 * shifted to the centre-of-mass frame. pos and vel are (n, 3); vel may be NULL. */
canopy_status canopy_gen_plummer(float *pos, float *vel, int64_t n, uint64_t seed);

/* The named workloads of the design (rand7, clust2, city2, plummer1m, rand1m3). */
typedef enum canopy_gen_kind {
    CANOPY_GEN_UNIFORM = 0,
    CANOPY_GEN_CLUSTERS = 1,
    CANOPY_GEN_PLUMMER = 2,
    CANOPY_GEN_CITIES = 3
} canopy_gen_kind;
typedef struct canopy_workload {
    const char *name;
    const char *summary;
    canopy_gen_kind kind;
    int64_t n;       /* reference (or body) count */
    int64_t n_query; /* 0 when none; the query half is rows n .. n+n_query-1 of one
                      * generation of n + n_query points (same seed, later streams) */
    int32_t d;
    int32_t clusters;
    double spread;
    uint64_t seed;
} canopy_workload;
/* NULL-terminated table; canopy_workload_find returns NULL for unknown names. */
const canopy_workload *canopy_workloads(void);
const canopy_workload *canopy_workload_find(const char *name);

/* ==================================================================== trees == */

typedef enum canopy_tree_kind {
    CANOPY_TREE_KD = 0,   /* bucket kd-tree, split on the widest dimension at the median */
    CANOPY_TREE_BALL = 1, /* ball tree: centre and radius per node */
    CANOPY_TREE_VP = 2,   /* vantage-point tree */
    CANOPY_TREE_OCT = 3,  /* octree (d = 3), centre of mass and mass per cell */
    CANOPY_TREE_BST = 4   /* binary search tree over sorted keys (d = 1) */
} canopy_tree_kind;
const char *canopy_tree_kind_name(canopy_tree_kind k);
/* Parses "kd", "ball", ...; CANOPY_ERR_INVALID listing the names otherwise. */
canopy_status canopy_tree_kind_parse(const char *s, canopy_tree_kind *out);

typedef enum canopy_tree_order {
    CANOPY_ORDER_DEPTH_FIRST = 0, /* sibling groups laid out depth-first, left-biased */
    CANOPY_ORDER_BREADTH_FIRST = 1
} canopy_tree_order;

typedef struct canopy_tree_options {
    canopy_tree_kind kind;
    int32_t leaf_size; /* points per leaf bucket at most; 0 = the kind's default */
    canopy_tree_order order;
    const float *weights; /* per-point weights (masses) kept in tree order, or NULL */
} canopy_tree_options;
canopy_tree_options canopy_tree_options_default(canopy_tree_kind kind);

typedef struct canopy_tree canopy_tree; /* opaque */

/* Builds a tree over the points (copied into tree order; the caller's memory is
 * not kept). Fails on NaN/Inf coordinates, d not allowed for the kind, n >= 2^31. */
canopy_status canopy_tree_build(canopy_points pts, const canopy_tree_options *opt,
                                canopy_tree **out);
void canopy_tree_free(canopy_tree *t);

typedef struct canopy_tree_info {
    canopy_tree_kind kind;
    int64_t n;
    int32_t d;
    int32_t n_nodes;
    int32_t n_leaves;
    int32_t depth; /* levels; a single leaf has depth 1 */
    int32_t leaf_size;
    int32_t hot_node_bytes; /* size of one hot node record */
    double build_seconds;
} canopy_tree_info;
void canopy_tree_get_info(const canopy_tree *t, canopy_tree_info *info);

/* GPU build (the CUDA module; CANOPY_ERR_UNSUPPORTED without it or without a device).
 * Builds a kd tree or an octree (d = 3) on the GPU into a device-resident tree with
 * the layout of canopy_tree_build (same node records, order, ropes, leaf size):
 * pts.data (and opt->weights) may be host or device pointers. kd: the topology
 * equals the host build's; the point order inside a node, and so bounds, may differ
 * only where coordinates tie at a median. Octree: topology, ropes and cells equal
 * the host's bit for bit and each leaf holds the same bodies; the order inside a
 * leaf, and the last bits of masses and centres of mass, may differ.
 * Scratch memory comes from a grow-only device pool reused across builds.
 * Other kinds: CANOPY_ERR_UNSUPPORTED. */
typedef struct canopy_gpu_tree canopy_gpu_tree; /* opaque, lives on the device */
canopy_status canopy_tree_build_gpu(canopy_points pts, const canopy_tree_options *opt,
                                    canopy_gpu_tree **out);
/* Copies a device tree into a host canopy_tree (free with canopy_tree_free). */
canopy_status canopy_gpu_tree_download(const canopy_gpu_tree *g, canopy_tree **out);
void canopy_gpu_tree_free(canopy_gpu_tree *g);
/* Returns the build pool's device and pinned memory (it grows again on next use). */
void canopy_gpu_pool_release(void);

/* ================================================================ traversal == */

/* How a traversal is executed (see docs/variants.md). CPU: rec, dr, sr, gdr, simd_l;
 * GPU: rec, dr, sr, gdr, dr_l, sr_l, fsm_l. */
typedef enum canopy_variant {
    CANOPY_VARIANT_AUTO = 0,
    CANOPY_VARIANT_REC,    /* plain recursion */
    CANOPY_VARIANT_DR,     /* autoropes: explicit stack */
    CANOPY_VARIANT_SR,     /* static ropes; unguided traversals only */
    CANOPY_VARIANT_GDR,    /* greedy autoropes */
    CANOPY_VARIANT_SIMD_L, /* CPU lockstep over SIMD packets of queries */
    CANOPY_VARIANT_DR_L,   /* GPU lockstep: per-warp stack of (node, mask) */
    CANOPY_VARIANT_SR_L,   /* GPU lockstep: ropes + per-warp mask stack */
    CANOPY_VARIANT_FSM_L,  /* GPU lockstep: Liu's FSM kernel with majority votes */
    CANOPY_VARIANT_COUNT
} canopy_variant;

/* The order queries are handed to threads; results never depend on it. */
typedef enum canopy_schedule {
    CANOPY_SCHEDULE_AUTO = 0,
    CANOPY_SCHEDULE_NONE,    /* caller's order */
    CANOPY_SCHEDULE_TREE,    /* order of the reference-tree leaf each query falls in */
    CANOPY_SCHEDULE_MORTON,  /* Z-order curve */
    CANOPY_SCHEDULE_HILBERT, /* Hilbert curve */
    CANOPY_SCHEDULE_HYBRID,  /* inspector-executor: queries profiled in the top tree, sorted */
    CANOPY_SCHEDULE_COUNT
} canopy_schedule;

typedef enum canopy_backend {
    CANOPY_BACKEND_AUTO = 0,
    CANOPY_BACKEND_CPU,
    CANOPY_BACKEND_GPU
} canopy_backend;

const char *canopy_variant_name(canopy_variant v);
const char *canopy_schedule_name(canopy_schedule s);
const char *canopy_backend_name(canopy_backend b);
canopy_status canopy_variant_parse(const char *s, canopy_variant *out);
canopy_status canopy_schedule_parse(const char *s, canopy_schedule *out);
canopy_status canopy_backend_parse(const char *s, canopy_backend *out);

typedef struct canopy_run_options {
    canopy_variant variant;
    canopy_schedule schedule;
    canopy_backend backend;
    canopy_tree_kind tree;
    int32_t leaf_size;     /* 0 = default */
    int32_t profile_depth; /* hybrid: levels of the profiled top tree, 0 = automatic */
} canopy_run_options;
canopy_run_options canopy_run_options_default(void);

typedef struct canopy_stats {
    double build_seconds;
    double schedule_seconds;
    double transfer_seconds;
    double traverse_seconds;
    int64_t queries;
    double nodes_per_query; /* mean nodes visited (truncation tests) per query */
    double work_expansion;  /* lockstep: packet nodes / longest member traversal */
    canopy_variant variant; /* what actually ran (auto resolved) */
    canopy_schedule schedule;
    canopy_backend backend;
    canopy_tree_kind tree;
    int32_t tree_nodes;
    int32_t tree_depth;
    int32_t profile_depth;  /* hybrid: top-tree levels profiled (0 when not hybrid) */
    int32_t profile_leaves; /* hybrid: top-tree leaves (profile key columns) */
    double nodes_per_group; /* lockstep: mean nodes a packet/warp visited */
    int32_t index_reused;   /* 1: the tree came from a canopy_index (build_seconds 0) */
    char note[512];         /* why auto chose what it chose, with the numbers behind it */
    /* GPU: tree bytes copied to the device and their time (part of transfer_seconds);
     * 0 when a device-resident index's copy was used (device_tree_reused 1) */
    int64_t tree_upload_bytes;
    double tree_upload_seconds;
    int32_t device_tree_reused;
    /* simd_l: calls of the descriptor's scalar hooks made lane by lane; 0 when its
     * vector hooks evaluated whole packets (docs/simt.md) */
    int64_t lane_calls;
    /* GPU, host arrays through pinned staging (a resident index's canopy_index_knn, and
     * canopy_knn's device path): seconds to pack and copy the queries in, and to copy
     * the results out and unpack them (both part of transfer_seconds) */
    double upload_seconds;
    double download_seconds;
    /* CPU traversals: threads the traversal ran on (its team, sized by the work, at most
     * canopy_threads()); 0 where no CPU team ran (GPU, engines that do not say) */
    int32_t threads;
} canopy_stats;

/* ============================================================= applications == */

/* k nearest neighbours of each query among ref, ascending by distance, ties broken
 * by smaller index. query.n == 0 && query.data == NULL means ref queries itself
 * with each point excluded from its own result. idx (nq, k) int64 indices into
 * ref, dist2 (nq, k) squared Euclidean distances (may be NULL). When k exceeds the
 * candidates available, the tail of a row is idx -1, dist2 +inf. Trees: kd, ball, vp. */
canopy_status canopy_knn(canopy_points ref, canopy_points query, int32_t k,
                         const canopy_run_options *opt, int64_t *idx, float *dist2,
                         canopy_stats *stats);

/* Per query, the number of reference points within distance r (dist <= r). With the
 * self-query form, a point does not count itself. */
canopy_status canopy_radius_count(canopy_points ref, canopy_points query, float r,
                                  const canopy_run_options *opt, int64_t *counts,
                                  canopy_stats *stats);

/* Barnes-Hut accelerations (G = 1) of every body from all others: monopole, opening
 * angle theta, Plummer softening eps. mass may be NULL (equal masses 1/n). */
canopy_status canopy_gravity(canopy_points bodies, const float *mass, float theta, float eps,
                             const canopy_run_options *opt, float *acc, canopy_stats *stats);

/* Multipole gravity (docs/nbody.md): tree cells expanded about their centre of
 * mass to `order` (0 monopole, 2 quadrupole, 3 octupole, 4 hexadecapole; the GPU
 * backend does 0 and 2), the softened expansion's trace terms included, moments kept
 * apart from the hot node records. Default: groups of bodies walk a binary (or oct)
 * tree once into interaction lists evaluated by a vectorised kernel; or cells opened
 * per body or per leaf bucket inside an octree walk (Liu's bucket-to-node test).
 * accuracy > 0 chooses theta and order from a calibrated table (target median
 * relative force error); otherwise theta and order are used as given. */
typedef enum canopy_opening {
    CANOPY_OPENING_BODY = 0,   /* each body tests each cell */
    CANOPY_OPENING_BUCKET = 1, /* a leaf bucket's bodies walk the tree together */
    CANOPY_OPENING_LIST = 2    /* buckets walk once into interaction lists, then a
                                  vectorised kernel (ChaNGa's scheme; fastest on CPUs) */
} canopy_opening;
/* Tree of the list opening (the other openings use the octree). */
typedef enum canopy_gravity_tree {
    CANOPY_GRAVITY_TREE_OCT = 0,   /* octree of cubic cells */
    CANOPY_GRAVITY_TREE_BINARY = 1 /* ChaNGa's binary tree: longest-side midpoint splits */
} canopy_gravity_tree;
/* Periodic boxes: Ewald summation (the tree walk over the nearest images plus Gadget-4's
 * Ewald correction), or TreePM (a mesh of FFTs for the long range, the tree walk within a
 * few mesh cells; needs FFTW at build time; orders 0 and 2): docs/nbody.md. */
typedef enum canopy_periodic_method {
    CANOPY_PERIODIC_AUTO = 0, /* Ewald summation */
    CANOPY_PERIODIC_EWALD = 1,
    CANOPY_PERIODIC_TREEPM = 2
} canopy_periodic_method;
typedef struct canopy_gravity_options {
    float theta;   /* opening angle > 0 (default 0.5) */
    int32_t order; /* 0, 2, 3 or 4 (default 2) */
    canopy_opening opening;
    float softening;          /* Plummer softening >= 0 */
    double accuracy;          /* > 0: target relative force error, overrides theta and order */
    canopy_gravity_tree tree; /* list opening's tree (body and bucket use the octree) */
    /* > 0: a periodic cube [0, box)^3, summed by .periodic's method (docs/nbody.md,
     * "Periodic boxes"): bodies within 4 boxes of it are wrapped in, farther ones
     * refused; CPU, list opening only. 0 (default): open boundaries. */
    float box;
    int32_t ewald_grid; /* Ewald correction table points per half side, 8..128 (0: 32) */
    /* How a periodic box's long range is summed (docs/nbody.md, "Periodic boxes") */
    canopy_periodic_method periodic;
    int32_t pm_grid; /* TreePM mesh cells per side, even, 18..1024 (0: from n) */
} canopy_gravity_options;
canopy_gravity_options canopy_gravity_options_default(void);
/* Theta and order the calibrated table gives for a target accuracy (in
 * [1e-6, 0.1]), and the median relative error measured there. */
canopy_status canopy_gravity_choose(double accuracy, float *theta, int32_t *order,
                                    double *expected);
/* The median relative force error the calibration predicts for (theta, order). */
double canopy_gravity_expected_error(float theta, int32_t order);
/* The same two from the table measured with g's opening and tree (the list engine
 * has its own, per tree; the two above use body opening's), at the body count the
 * table was measured at. */
canopy_status canopy_gravity_choose_for(const canopy_gravity_options *g, double accuracy,
                                        float *theta, int32_t *order, double *expected);
double canopy_gravity_expected_error_for(const canopy_gravity_options *g);
/* The same at n bodies (what canopy_gravity_multipole and canopy_nbody_create choose):
 * a periodic box's error grows with n at a fixed opening, so its table, measured at
 * 200,000 and 1,000,000 bodies, gives each row a power law in n (extrapolated above
 * 1,000,000, flat below 200,000; docs/nbody.md, "Periodic boxes"). Open boundaries
 * ignore n; n <= 0 is the table's own n (the _for functions). */
canopy_status canopy_gravity_choose_for_n(const canopy_gravity_options *g, double accuracy,
                                          int64_t n, float *theta, int32_t *order,
                                          double *expected);
double canopy_gravity_expected_error_for_n(const canopy_gravity_options *g, int64_t n);
/* Accelerations acc (n, 3) and, when pot is not NULL, potentials (n) of every body;
 * mass may be NULL (equal masses 1/n). opt's leaf size applies; variant and schedule
 * apply to the body and bucket openings (CPU backend). Backend gpu (auto: from 200,000
 * bodies when a GPU is usable) runs the GPU walk instead: radix tree built on the
 * device, bucket opening always, its own accuracy table (docs/nbody.md, "GPU"). */
canopy_status canopy_gravity_multipole(canopy_points bodies, const float *mass,
                                       const canopy_gravity_options *g,
                                       const canopy_run_options *opt, float *acc, float *pot,
                                       canopy_stats *stats);
/* The GPU walk with device pointers in and out (CUDA callers): d_bodies.data (n, 3)
 * floats rows d_bodies.stride apart, d_mass (n, or NULL: 1/n), d_acc (n, 3) dense and
 * d_pot (n, or NULL), all device memory; no host copy of any of them. Runs after the
 * work queued on stream (a cudaStream_t, NULL = legacy default) and on the legacy
 * default stream; returns when the results are written. Options as for the GPU backend
 * above (orders 0 and 2; backend cpu fails with CANOPY_ERR_INVALID, as do host
 * pointers and a body with a non-finite coordinate or mass, checked on the device). */
canopy_status canopy_gravity_multipole_device(canopy_points d_bodies, const float *d_mass,
                                              const canopy_gravity_options *g,
                                              const canopy_run_options *opt, float *d_acc,
                                              float *d_pot, void *stream, canopy_stats *stats);
/* N-body time stepping (docs/nbody.md): leapfrog kick-drift-kick, forces from
 * canopy_gravity_multipole on an octree rebuilt every step; positions and velocities
 * kept in float64 (forces are float32). A run restarted from a checkpoint continues
 * bit-identically: forces do not depend on variant, schedule or threads. */
typedef struct canopy_nbody_options {
    double dt;                      /* time step > 0 (with block steps: the largest, rung 0) */
    canopy_gravity_options gravity; /* theta, order, opening, softening, accuracy */
    canopy_run_options run;         /* backend (gpu: state on the device), leaf size;
                                     * variant, schedule (CPU) */
    /* Block (hierarchical) time steps (docs/nbody.md): max_rung > 0 puts each body on
     * a rung r <= max_rung of step dt / 2^r, the largest with dt / 2^r <=
     * eta sqrt(softening / |a|); rungs change only at synchronised points; each
     * canopy_nbody_step is one step dt of 2^max_rung substeps. 0: one global step.
     * CPU, list opening, softening > 0 only. */
    int32_t max_rung; /* 0 (default) to CANOPY_NBODY_MAX_RUNG */
    double eta;       /* > 0 (default 0.2) */
    /* Block steps, open boundaries: substeps refit one tree (same bodies per node, new
     * boxes and moments) and rebuild it where all bodies are active or once the force
     * evaluations on it reach rebuild * n; 0: a new tree every substep. */
    double rebuild; /* >= 0 (default CANOPY_NBODY_REBUILD_DEFAULT) */
} canopy_nbody_options;
#define CANOPY_NBODY_REBUILD_DEFAULT 0.3
#define CANOPY_NBODY_MAX_RUNG 30
canopy_nbody_options canopy_nbody_options_default(void);
typedef struct canopy_nbody canopy_nbody; /* opaque */
/* pos, vel (n, 3) and mass (n, or NULL for 1/n) are copied. Fails on non-finite
 * values, negative masses, dt <= 0, softening < 0. Computes the first forces. */
canopy_status canopy_nbody_create(const double *pos, const double *vel, const float *mass,
                                  int64_t n, const canopy_nbody_options *opt, canopy_nbody **out);
/* Advances `steps` steps. */
canopy_status canopy_nbody_step(canopy_nbody *s, int64_t steps);
int64_t canopy_nbody_n(const canopy_nbody *s);
int64_t canopy_nbody_steps_done(const canopy_nbody *s);
const double *canopy_nbody_positions(const canopy_nbody *s);  /* (n, 3) */
const double *canopy_nbody_velocities(const canopy_nbody *s); /* (n, 3) */
const float *canopy_nbody_masses(const canopy_nbody *s);      /* (n) */
const canopy_nbody_options *canopy_nbody_get_options(const canopy_nbody *s);
typedef struct canopy_nbody_energy {
    double kinetic, potential, total;
    double momentum[3], angular_momentum[3];
    int direct; /* potential from float64 direct summation (1) or the tree walk (0) */
} canopy_nbody_energy;
/* Energies at the current positions; the potential is summed directly in float64
 * when n <= direct_max, otherwise from tree-walk potentials at these positions. Steps
 * skip potentials (2-15 % of a walk) unless energies are asked for at most 4 steps
 * apart (global CPU steps; the GPU computes them every step), so a request after a
 * step without them runs one force evaluation of its own (docs/nbody.md). */
canopy_status canopy_nbody_energy_get(canopy_nbody *s, int64_t direct_max, canopy_nbody_energy *e);
/* One file with positions, velocities, masses, step, dt, parameters and a checksum,
 * written atomically (an existing checkpoint is replaced only by a complete one). */
canopy_status canopy_nbody_checkpoint(const canopy_nbody *s, const char *path);
/* Resumes from a checkpoint (run options other than leaf size from opt, or defaults
 * when NULL); CANOPY_ERR_FORMAT for a corrupt or truncated file. */
canopy_status canopy_nbody_restart(const char *path, const canopy_run_options *opt,
                                   canopy_nbody **out);
/* Work of the run so far: bodies per rung at the last synchronised point (all on rung
 * 0 with global steps), body force evaluations made, and those one global step at the
 * finest rung used in each step dt would have made (saved = 1 - made / global). */
typedef struct canopy_nbody_work {
    int64_t bodies_per_rung[CANOPY_NBODY_MAX_RUNG + 1];
    int64_t force_evals, force_evals_global;
    int32_t finest_rung; /* the highest rung used so far */
    /* block steps, open boundaries: substeps that built a new tree, and those that
     * refitted the kept one (canopy_nbody_options.rebuild) */
    int64_t tree_builds, tree_refits;
} canopy_nbody_work;
void canopy_nbody_work_get(const canopy_nbody *s, canopy_nbody_work *w);
void canopy_nbody_free(canopy_nbody *s);

/* Float64 direct summation for the bodies sample[0..ns) only (acc (ns, 3), pot (ns)
 * or NULL), against all n bodies: the reference for error measurements. */
canopy_status canopy_gravity_direct_sample(canopy_points bodies, const float *mass, float eps,
                                           const int64_t *sample, int64_t ns, double *acc,
                                           double *pot);
/* The same in a periodic cube [0, box)^3 (box > 0): the float64 Ewald sum with the
 * neutralising background (docs/nbody.md, "Periodic boxes"; softening applies to the
 * nearest image), pot including each body's own images. */
canopy_status canopy_gravity_ewald_direct_sample(canopy_points bodies, const float *mass, float eps,
                                                 float box, const int64_t *sample, int64_t ns,
                                                 double *acc, double *pot);

/* For each query, the index of the first key >= query in the sorted (ascending) key
 * array, n_keys when none. Keys must be sorted and finite. */
canopy_status canopy_search(const float *keys, int64_t n_keys, const float *queries,
                            int64_t n_queries, const canopy_run_options *opt, int64_t *idx,
                            canopy_stats *stats);

/* Brute-force references (O(n * nq), multithreaded), used by tests and benchmarks. */
canopy_status canopy_knn_brute(canopy_points ref, canopy_points query, int32_t k, int64_t *idx,
                               float *dist2);
canopy_status canopy_radius_count_brute(canopy_points ref, canopy_points query, float r,
                                        int64_t *counts);
canopy_status canopy_gravity_direct(canopy_points bodies, const float *mass, float eps,
                                    double *acc);

/* Binned pair counts DD(r), as Corrfunc and TreeCorr define them (docs/c-api.md,
 * "Pair counts"). Bins: nbins bins over [rmin, rmax), edges linear or logarithmic
 * (canopy_paircount_edges); a pair at distance r falls in bin b when
 * edge[b] <= r < edge[b + 1], compared as float32 squared distances. */
typedef struct canopy_paircount_options {
    double rmin, rmax; /* 0 <= rmin < rmax; rmin > 0 for log bins */
    int32_t nbins;     /* 1 .. 1e6 */
    int log_bins;      /* 1: edge[b] = rmin * (rmax / rmin)^(b / nbins); 0: linear */
    double boxsize;    /* > 0: periodic cube [0, boxsize)^d, minimum-image distances,
                          rmax <= boxsize / 2; 0: no box */
} canopy_paircount_options;
canopy_paircount_options canopy_paircount_options_default(void);
/* The nbins + 1 bin edges. */
canopy_status canopy_paircount_edges(const canopy_paircount_options *po, double *edges);

/* counts[b] = the pairs (i of data1, j of data2) in bin b, or with weights the sum
 * of weights1[i] * weights2[j] over them (a NULL side weighs 1; both NULL: plain
 * counts). Auto-correlation: data2 = {NULL, 0} means data2 = data1 (and weights2 =
 * weights1); every ordered pair i != j counts, so each unordered pair counts twice,
 * as Corrfunc's DD with autocorr = 1 (TreeCorr's NN counts it once: halve).
 * Variant auto on kd trees (the defaults): a pair walk (canopy/pair.h) over kd trees
 * of data1 and data2, node pairs counted whole where their distances fall in one bin,
 * leaf pairs by a vectorised kernel, all bins in one walk (no pass per bin); on the
 * CPU (pair engine dr) or the GPU. An explicit variant, or opt->tree ball,
 * vp, oct (without a box): a single-tree traversal over a tree of data2, one query per
 * point of data1, bins in passes of 26; every CPU and GPU variant and schedule.
 * Edge rule and exactness: docs/c-api.md, "Pair counts". */
canopy_status canopy_paircount(canopy_points data1, const float *weights1, canopy_points data2,
                               const float *weights2, const canopy_paircount_options *po,
                               const canopy_run_options *opt, double *counts, canopy_stats *stats);
/* canopy_paircount with the counts handed to sink rather than written to an array:
 * consecutive blocks in bin order, counts[0..n) being bins first..first + n - 1 (blocks of
 * 8,192 bins from the CPU pair walk, one block of all bins from the other paths). With
 * 10^6 bins the CPU walk then keeps no array of 8 MB (summed a block at a time across
 * its threads' histograms): `canopy paircount` streams them into its file. A sink's
 * error ends the call and is returned; sink NULL: CANOPY_ERR_INVALID. */
typedef canopy_status (*canopy_paircount_sink)(void *user, int32_t first, int32_t n,
                                               const double *counts);
canopy_status canopy_paircount_blocks(canopy_points data1, const float *weights1,
                                      canopy_points data2, const float *weights2,
                                      const canopy_paircount_options *po,
                                      const canopy_run_options *opt, canopy_paircount_sink sink,
                                      void *user, canopy_stats *stats);
/* canopy_paircount with the points (and weights) in device memory (CUDA callers):
 * d_data1, d_data2 rows .stride floats apart on the device, d_weights1 and d_weights2
 * (n floats each) both device arrays or both NULL (the auto form, d_data2 = {NULL, 0},
 * uses d_weights1 for both sides); counts (nbins doubles) is host memory. The kd trees
 * are built on the GPU from the device arrays after the work queued on stream (a
 * cudaStream_t, NULL = legacy default) and on the legacy default stream, copied to the
 * host for the walk's top levels, and walked on the device in place (no upload); the
 * call returns when counts are written. Backend auto or gpu (cpu fails with
 * CANOPY_ERR_INVALID), tree kd, variant auto, leaf size 0 (others:
 * CANOPY_ERR_UNSUPPORTED). Unweighted counts equal canopy_paircount's exactly; weighted
 * sums within float64 rounding (another order of addition). Host pointers fail with
 * CANOPY_ERR_INVALID, as do a non-finite coordinate or weight and, with a box, a
 * coordinate outside it; without the CUDA module or a usable GPU,
 * CANOPY_ERR_UNSUPPORTED. */
canopy_status canopy_paircount_device(canopy_points d_data1, const float *d_weights1,
                                      canopy_points d_data2, const float *d_weights2,
                                      const canopy_paircount_options *po,
                                      const canopy_run_options *opt, double *counts, void *stream,
                                      canopy_stats *stats);
canopy_status canopy_paircount_brute(canopy_points data1, const float *weights1,
                                     canopy_points data2, const float *weights2,
                                     const canopy_paircount_options *po, double *counts);
#include "canopy/kde.h" /* kernel density estimates */
/* ================================================================== indexes == */
/* (build once, query many: see docs/c-api.md "Indexes") */

typedef struct canopy_index canopy_index; /* opaque */

/* Where the built tree lives (docs/c-api.md "Indexes"). Host: the queries of every
 * backend read it (a GPU query uploads it per call). Device: built on the GPU where a
 * GPU build exists (kd), else built on the host and uploaded once; GPU queries use the
 * device copy with no upload (a host copy is kept too: the generic engines' schedules
 * and CPU queries read it; a GPU build's is downloaded on that first need). Both:
 * built on the host and uploaded once. Device and both
 * fail with CANOPY_ERR_UNSUPPORTED without the CUDA module or without a usable GPU. */
typedef enum canopy_residency {
    CANOPY_RESIDENCY_HOST = 0,
    CANOPY_RESIDENCY_DEVICE,
    CANOPY_RESIDENCY_BOTH
} canopy_residency;

typedef struct canopy_index_options {
    canopy_tree_kind kind;
    int32_t leaf_size; /* 0 = the kind's default (kd with residency device: 8; host kd
                          of d <= 3, split along Morton-key bits: 32) */
    canopy_residency residency;
    const float *weights; /* oct: per-point masses (NULL: 1/n each); others: ignored */
} canopy_index_options;
canopy_index_options canopy_index_options_default(canopy_tree_kind kind);

/* Builds an index over the points (copied; kd, ball, vp: any d; oct: d = 3; bst: d = 1
 * with the keys sorted ascending). */
canopy_status canopy_index_build(canopy_points pts, const canopy_index_options *opt,
                                 canopy_index **out);
/* Builds a kd index from points already on the GPU (CUDA callers): d_pts.data device
 * memory, rows d_pts.stride floats apart; the build runs after the work queued on
 * stream (a cudaStream_t, NULL = legacy default) and on the legacy default stream, and
 * the call returns when it is done. The points never visit the host: the index has
 * residency device, and its host copy of the tree is made on first need (CPU queries,
 * the generic engines, self-queries, canopy_index_save). Of opt (NULL: kd defaults)
 * only kind (kd; others fail with CANOPY_ERR_UNSUPPORTED) and leaf_size (0: 8) are
 * read. Host points fail with CANOPY_ERR_INVALID, as does a non-finite coordinate
 * (the device checks every row). The tree equals canopy_index_build's from the same
 * points with residency device. */
canopy_status canopy_index_build_device(canopy_points d_pts, const canopy_index_options *opt,
                                        void *stream, canopy_index **out);
/* Frees the index (NULL is fine). A freed handle is rejected by every call after. */
void canopy_index_free(canopy_index *ix);

typedef struct canopy_index_info {
    canopy_tree_kind kind;
    int64_t n;
    int32_t d;
    int32_t n_nodes;
    int32_t depth;
    int32_t leaf_size;
    canopy_residency residency;
    int32_t mapped;       /* 1: loaded from a file, arrays used in place (mmap) */
    int64_t builds;       /* tree builds over the handle's life: 1, or 0 when loaded */
    int64_t queries;      /* query calls answered */
    double build_seconds; /* of the one build (0 when loaded) */
    size_t bytes;         /* tree arrays */
    size_t device_bytes;  /* tree arrays on the device (0: host residency) */
    int32_t gpu_built;    /* 1: the tree was built on the GPU */
} canopy_index_info;
canopy_status canopy_index_get_info(const canopy_index *ix, canopy_index_info *info);

/* The applications over the built tree: same results and options as canopy_knn,
 * canopy_radius_count, canopy_gravity and canopy_search (opt->tree and opt->leaf_size
 * are ignored: the index's own are used). query.n == 0 && query.data == NULL is the
 * self-query form. Queries of another dimension, an index of the wrong kind, or a
 * freed or invalid handle fail with CANOPY_ERR_INVALID; nothing is rebuilt
 * (stats->build_seconds 0, stats->index_reused 1). Calls on one index may run
 * concurrently except the first self-query or gravity call, which caches the points
 * in their original order. */
canopy_status canopy_index_knn(canopy_index *ix, canopy_points query, int32_t k,
                               const canopy_run_options *opt, int64_t *idx, float *dist2,
                               canopy_stats *stats);
/* kNN with device pointers in and out (CUDA callers; residency device or both):
 * d_queries (nq, d) dense on the device, d_idx and d_dist2 (nq, k) device memory
 * (d_dist2 may be NULL). The kernels run on stream (a cudaStream_t, NULL = legacy
 * default), after the work queued on it and on the legacy default stream; the call
 * is synchronous: the results are written when it returns. Schedule none runs the
 * queries in the caller's order, morton sorts them on the device first, auto sorts
 * from 8192 queries on when d <= 2 or the leaves hold <= 8 points (others fail with
 * CANOPY_ERR_UNSUPPORTED); results are in the caller's rows either way. Variant
 * auto is gdr. Calls on one index are serialised (they share its device scratch,
 * kept between calls). Queries are not checked for NaN (they are never read on the
 * host). Host pointers or an index without a device copy fail with
 * CANOPY_ERR_INVALID. stats NULL: nothing is timed or counted (where the kd walk runs,
 * the call is the query order's kernels, the walk and one synchronisation). */
canopy_status canopy_index_knn_device(canopy_index *ix, const float *d_queries, int64_t nq,
                                      int32_t k, const canopy_run_options *opt, int64_t *d_idx,
                                      float *d_dist2, void *stream, canopy_stats *stats);
/* kNN of the indexed points themselves, results on the device (CUDA callers; residency
 * device or both): row i of d_idx and d_dist2 ((n, k) device memory, d_dist2 may be
 * NULL) is the point given i-th at build. exclude_self 0: the results equal
 * canopy_index_knn_device's with those points as queries (a point is its own nearest
 * neighbour, unless a duplicate has a smaller index); 1: each point is left out of its
 * own row, as in canopy_index_knn's self-query form. Schedule auto (and tree) walks the
 * points in the tree's own order, leaf by leaf, with no sort (the kd walk starts each in
 * the bucket that holds it); none and morton as for canopy_index_knn_device. Streams,
 * variants, errors and serialisation as there. stats NULL: nothing is timed or counted
 * (where the kd walk runs, the call is its kernel and one synchronisation). */
canopy_status canopy_index_knn_self_device(canopy_index *ix, int32_t k, int exclude_self,
                                           const canopy_run_options *opt, int64_t *d_idx,
                                           float *d_dist2, void *stream, canopy_stats *stats);
canopy_status canopy_index_radius_count(canopy_index *ix, canopy_points query, float r,
                                        const canopy_run_options *opt, int64_t *counts,
                                        canopy_stats *stats);
/* oct indexes: accelerations of the indexed bodies (masses from the build). */
canopy_status canopy_index_gravity(canopy_index *ix, float theta, float eps,
                                   const canopy_run_options *opt, float *acc,
                                   canopy_stats *stats);
/* bst indexes: per query, the index of the first key >= query (n when none). */
canopy_status canopy_index_search(canopy_index *ix, const float *queries, int64_t n_queries,
                                  const canopy_run_options *opt, int64_t *idx,
                                  canopy_stats *stats);

/* Saves the index (atomic write; format in docs/formats.md "Index files"). */
canopy_status canopy_index_save(const canopy_index *ix, const char *path);
/* Loads a saved index by mmap; the tree arrays are used in place. A truncated or
 * corrupt file, another format version or another byte order fails with
 * CANOPY_ERR_FORMAT naming the file and the problem. */
canopy_status canopy_index_load(const char *path, canopy_index **out);
/* The same from memory (copied); name is for messages. */
canopy_status canopy_index_load_mem(const void *buf, size_t len, const char *name,
                                    canopy_index **out);

/* =================================================================== graphs == */
/* (irregular nested loops, bottom-up tree aggregation: see docs/graphs.md) */

/* A sparse matrix / directed graph in CSR form: the entries of row i are
 * col[row_ptr[i] .. row_ptr[i+1]), sorted by column (duplicates kept, in input
 * order). val is NULL for a pattern (unweighted) matrix. Owned; release with
 * canopy_csr_release. */
typedef struct canopy_csr {
    int64_t n_rows;
    int64_t n_cols;
    int64_t nnz;
    int64_t *row_ptr; /* n_rows + 1 */
    int32_t *col;     /* nnz */
    double *val;      /* nnz, or NULL */
} canopy_csr;

void canopy_csr_release(canopy_csr *g);
/* Builds a CSR from nnz (src, dst[, w]) entries; w may be NULL (pattern). Indices
 * are 0-based and checked against the shape (n_cols < 2^31). */
canopy_status canopy_csr_from_coo(int64_t n_rows, int64_t n_cols, int64_t nnz, const int64_t *src,
                                  const int64_t *dst, const double *w, canopy_csr *out);
/* The transpose (in-edges as rows); values follow their entries. */
canopy_status canopy_csr_transpose(const canopy_csr *g, canopy_csr *out);

/* Readers: errors name the file and line. Matrix Market coordinate files (real,
 * integer or pattern; general or symmetric, symmetric adding both directions of
 * each off-diagonal entry); DIMACS shortest-path .gr ("p sp n m", "a u v w",
 * "c ..."); edge lists ("u v [w]" per line, 0-based, '#' comments, n = largest
 * index + 1, weighted only when every line has a weight). */
canopy_status canopy_mtx_read(const char *path, canopy_csr *out);
canopy_status canopy_gr_read(const char *path, canopy_csr *out);
canopy_status canopy_edgelist_read(const char *path, canopy_csr *out);
/* By extension: .mtx, .gr, else an edge list. */
canopy_status canopy_graph_load(const char *path, canopy_csr *out);
/* Matrix Market "coordinate real general" (or "pattern" when val is NULL); atomic. */
canopy_status canopy_mtx_write(const char *path, const canopy_csr *g);

/* Graph500 Kronecker (R-MAT A=.57 B=.19 C=.19 D=.05): 2^scale vertices,
 * edge_factor * 2^scale generated edges, labels permuted, symmetrised, self loops
 * and duplicates dropped; pattern. */
canopy_status canopy_gen_kron(int32_t scale, int32_t edge_factor, uint64_t seed, canopy_csr *out);
/* Directed graph: out-degrees from a discrete power law P(k) ~ k^-alpha on
 * [min_deg, max_deg], distinct uniform targets other than the vertex; pattern. */
canopy_status canopy_gen_powerlaw(int64_t n, int32_t min_deg, int32_t max_deg, double alpha,
                                  uint64_t seed, canopy_csr *out);
/* Named graphs: "kron16" (scale 16, edge factor 48) and "powerlaw434k" (434,102
 * vertices, degrees 1..1,199, mean about 74). NULL-terminated name list. */
canopy_status canopy_graph_gen(const char *name, uint64_t seed, canopy_csr *out);
const char *const *canopy_graph_gen_names(void);

/* How the outer loop over vertices/rows runs. CPU: serial (the reference), omp-flat
 * (dynamic schedule), omp-split (inner loops longer than split_threshold are cut
 * into chunks shared by all threads). GPU (CUDA builds; CANOPY_ERR_UNSUPPORTED
 * without a usable GPU): flat kernels with thread-, warp- or block-mapped inner loops
 * (nodp-thread/warp/block), a flat kernel pair that runs short rows on a thread and
 * cuts longer ones into 256-entry chunks, a warp each (nodp-split, the GPU default;
 * its loops over all rows run from a plan of the chunks made once per graph), a
 * child kernel launch per heavy item (basic-dp), and workload consolidation of the heavy items'
 * child launches per warp, block or grid (cons-*). */
typedef enum canopy_graph_strategy {
    CANOPY_GRAPH_SERIAL = 0,
    CANOPY_GRAPH_OMP_FLAT,
    CANOPY_GRAPH_OMP_SPLIT,
    CANOPY_GRAPH_NODP_THREAD,
    CANOPY_GRAPH_NODP_WARP,
    CANOPY_GRAPH_NODP_BLOCK,
    CANOPY_GRAPH_NODP_SPLIT,
    CANOPY_GRAPH_BASIC_DP,
    CANOPY_GRAPH_CONS_WARP,
    CANOPY_GRAPH_CONS_BLOCK,
    CANOPY_GRAPH_CONS_GRID,
    CANOPY_GRAPH_STRATEGY_COUNT
} canopy_graph_strategy;
const char *canopy_graph_strategy_name(canopy_graph_strategy s);
canopy_status canopy_graph_strategy_parse(const char *s, canopy_graph_strategy *out);
/* 1 for strategies of the GPU backend. */
int canopy_graph_strategy_is_gpu(canopy_graph_strategy s);

typedef struct canopy_graph_options {
    canopy_graph_strategy strategy;
    int64_t split_threshold; /* omp-split: heavy = inner loop longer than this */
    double damping;          /* pagerank: 0.85 */
    double tolerance;        /* pagerank: stop when the L1 change < this (1e-10) */
    int32_t max_iterations;  /* pagerank: fail when not converged by then (1000) */
    /* GPU dynamic parallelism (basic-dp, cons-*; nodp-split takes dp_threshold too): */
    int64_t dp_threshold;  /* heavy = inner loop longer than this (64; 0: every non-empty row) */
    int32_t child_form;    /* canopy_child_form of consolidated children (auto) */
    int32_t child_threads; /* threads per child block (128) */
    int32_t child_blocks;  /* blocks per consolidated child; 0 = KC_X rule */
    int32_t kc;            /* the X of KC_X; 0 = 32 warp, 16 block, 1 grid */
} canopy_graph_options;
/* Consolidated child kernels (moldable: they loop until the buffer is empty).
 * auto: chunk. */
typedef enum canopy_child_form {
    CANOPY_CHILD_AUTO = 0,
    CANOPY_CHILD_THREAD, /* solo thread: a thread per buffered item */
    CANOPY_CHILD_BLOCK,  /* solo block: a block per buffered item */
    CANOPY_CHILD_GRID,   /* multi-block: the whole child grid on each item in turn */
    CANOPY_CHILD_CHUNK   /* items cut into 256-entry chunks, a warp per chunk */
} canopy_child_form;
canopy_status canopy_child_form_parse(const char *s, canopy_child_form *out);
const char *canopy_child_form_name(canopy_child_form f);
canopy_graph_options canopy_graph_options_default(void);

typedef struct canopy_graph_stats {
    double seconds;       /* the algorithm, without loading */
    int64_t iterations;   /* rounds (sssp, bfs, color) or pagerank iterations */
    int64_t items;        /* outer-loop items run, summed over rounds */
    int64_t edges;        /* inner-loop iterations, summed over rounds */
    int64_t split_items;  /* omp-split: items whose inner loop was split */
    int64_t split_chunks; /* omp-split: chunks they were cut into */
    /* GPU strategies (device counters): */
    int64_t heavy_items;       /* items over dp_threshold (sent to children) */
    int64_t child_launches;    /* device-side kernel launches */
    int64_t launch_fallbacks;  /* failed device launches whose items ran inline */
    int64_t buffer_high_water; /* most descriptors in the buffer pool in one round */
    /* upload includes nodp-split's plan of the loops over all rows */
    double upload_seconds, kernel_seconds, download_seconds;
} canopy_graph_stats;

/* dist[n]: shortest distances from source (+inf unreachable); weights from the
 * matrix, 1 for pattern; negative or NaN weights are rejected. */
canopy_status canopy_sssp(const canopy_csr *g, int64_t source, const canopy_graph_options *opt,
                          double *dist, canopy_graph_stats *stats);
/* level[n]: hops from source, -1 unreachable. canopy_bfs is level-synchronous;
 * canopy_bfs_rec is the recursive form (a vertex whose level falls relaxes its
 * neighbours again), run with each round's recursive calls consolidated into one
 * loop. Same result. */
canopy_status canopy_bfs(const canopy_csr *g, int64_t source, const canopy_graph_options *opt,
                         int64_t *level, canopy_graph_stats *stats);
canopy_status canopy_bfs_rec(const canopy_csr *g, int64_t source, const canopy_graph_options *opt,
                             int64_t *level, canopy_graph_stats *stats);
/* rank[n]: PageRank of the unweighted graph (networkx convention: uniform start and
 * teleport, dangling rank spread uniformly); sums to 1. */
canopy_status canopy_pagerank(const canopy_csr *g, const canopy_graph_options *opt, double *rank,
                              canopy_graph_stats *stats);
/* y[n_rows] = A x (pattern entries count as 1). */
canopy_status canopy_spmv(const canopy_csr *g, const double *x, const canopy_graph_options *opt,
                          double *y, canopy_graph_stats *stats);
/* color[n]: greedy colouring in a fixed pseudo-random vertex priority order
 * (Jones-Plassmann computes the same colouring in parallel); no edge, in either
 * direction, joins equal colours; self loops are ignored. Colours start at 0. */
canopy_status canopy_color(const canopy_csr *g, const canopy_graph_options *opt, int64_t *color,
                           canopy_graph_stats *stats);

/* ------------------------------------------------- bottom-up aggregation (PTSD) -- */

/* A rooted tree: parent[i] (-1 for the root), children of i in
 * child[child_ptr[i] .. child_ptr[i+1]) in increasing index order. */
typedef struct canopy_ptree {
    int64_t n;
    int64_t root;
    int32_t depth; /* levels; a single node has depth 1 */
    int64_t *parent;
    int64_t *child_ptr;
    int64_t *child;
} canopy_ptree;

/* Validates (one root, parents in range, no cycle) and builds the child lists. */
canopy_status canopy_ptree_from_parents(const int64_t *parent, int64_t n, canopy_ptree *out);
void canopy_ptree_release(canopy_ptree *t);
/* Random tree, numbered breadth-first: the root has children; every other node of
 * the first depth-1 levels has children with probability p_children; a node with
 * children has fan_min..fan_max of them. A node gets its children only while the
 * total stays within max_nodes. Node i draws from stream i of the seed. */
canopy_status canopy_gen_ptree(int32_t depth, int32_t fan_min, int32_t fan_max, double p_children,
                               int64_t max_nodes, uint64_t seed, canopy_ptree *out);
/* "random1" (depth 14, fan-out 4-8, 50 %) and "random2" (depth 10, fan-out 32-64,
 * 12.5 %), both capped at 8,000,000 nodes (random1 expects about 4.8 M; random2
 * would expect about 80 M, so the cap cuts it short within its 9th level). */
canopy_status canopy_ptree_gen(const char *name, uint64_t seed, canopy_ptree *out);

typedef enum canopy_ptsd_strategy {
    CANOPY_PTSD_REC = 0, /* serial recursion (depth <= 10,000) */
    CANOPY_PTSD_FLAT,    /* every node walks to the root with atomic updates */
    CANOPY_PTSD_CREC,    /* consolidated recursion: level by level, parallel per level */
    CANOPY_PTSD_HIER,    /* tasks over children, loops over grandchildren (depth <= 10,000) */
    /* GPU (CUDA builds): */
    CANOPY_PTSD_GPU_REC,  /* a child kernel launch per internal node (depth <= 24) */
    CANOPY_PTSD_GPU_FLAT, /* a thread per node walks to the root with atomics */
    CANOPY_PTSD_GPU_CREC, /* one launch per level, thread- or block-mapped by fan-out */
    CANOPY_PTSD_GPU_HIER, /* two levels per launch: block over children, threads over
                             grandchildren */
    CANOPY_PTSD_STRATEGY_COUNT
} canopy_ptsd_strategy;
const char *canopy_ptsd_strategy_name(canopy_ptsd_strategy s);
canopy_status canopy_ptsd_strategy_parse(const char *s, canopy_ptsd_strategy *out);

/* height[n]: edges on the longest path down to a leaf (leaves 0). */
canopy_status canopy_ptsd_heights(const canopy_ptree *t, canopy_ptsd_strategy s, int64_t *height,
                                  double *seconds);
/* desc[n]: nodes in the subtree, the node itself excluded. */
canopy_status canopy_ptsd_descendants(const canopy_ptree *t, canopy_ptsd_strategy s, int64_t *desc,
                                      double *seconds);
/* out[n][4]: subtree mass and centre of mass (x, y, z) from the leaves' mass[i]
 * (finite, >= 0) and pos[i][3]; values of internal nodes are ignored. A subtree of
 * zero mass gets centre (0, 0, 0). */
canopy_status canopy_ptsd_mass(const canopy_ptree *t, const double *mass, const double *pos,
                               canopy_ptsd_strategy s, double *out, double *seconds);
/* What a run did. CPU strategies fill seconds only. */
typedef struct canopy_ptsd_stats {
    double seconds;            /* the aggregation, uploads and downloads included */
    int64_t launches;          /* kernel launches: from the host and from the device */
    int64_t levels;            /* crec/hier: levels walked */
    int64_t buffer_high_water; /* crec/hier: most nodes in one level's buffer */
    double upload_seconds, kernel_seconds, download_seconds;
} canopy_ptsd_stats;
typedef enum canopy_ptsd_app {
    CANOPY_PTSD_HEIGHTS,
    CANOPY_PTSD_DESCENDANTS,
    CANOPY_PTSD_MASS
} canopy_ptsd_app;
/* The three aggregations with statistics: out is int64[n] (heights, descendants) or
 * double[n][4] (mass, which needs mass and pos; the others ignore them). */
canopy_status canopy_ptsd_run(const canopy_ptree *t, canopy_ptsd_app app, const double *mass,
                              const double *pos, canopy_ptsd_strategy s, void *out,
                              canopy_ptsd_stats *stats);

/* ================================================================== forests == */
/* (decision-forest inference: see docs/forests.md) */

typedef struct canopy_forest canopy_forest; /* opaque model */

typedef enum canopy_forest_format {
    CANOPY_FOREST_FORMAT_AUTO = 0, /* detected from the content */
    CANOPY_FOREST_FORMAT_XGBOOST,  /* XGBoost JSON (save_model("m.json")), gbtree/dart */
    CANOPY_FOREST_FORMAT_LIGHTGBM, /* LightGBM text model (save_model("m.txt")) */
    CANOPY_FOREST_FORMAT_CANOPY    /* canopy JSON (docs/forests.md) */
} canopy_forest_format;

typedef enum canopy_forest_link {
    CANOPY_LINK_IDENTITY = 0,
    CANOPY_LINK_SIGMOID, /* element-wise 1 / (1 + exp(-scale * raw)) */
    CANOPY_LINK_SOFTMAX, /* across the outputs of a row */
    CANOPY_LINK_EXP      /* Poisson / gamma / Tweedie */
} canopy_forest_link;

typedef enum canopy_forest_aggregation {
    CANOPY_AGG_SUM = 0, /* boosting */
    CANOPY_AGG_MEAN     /* random forests: per output, over the trees feeding it */
} canopy_forest_aggregation;

typedef enum canopy_forest_layout {
    CANOPY_FOREST_LAYOUT_AUTO = 0, /* vm engines: Ren's cache model (sll, cc, hybrid); else bf */
    CANOPY_FOREST_LAYOUT_CSR,      /* Wu ch. 5 baseline: feature/value/children arrays */
    CANOPY_FOREST_LAYOUT_HIER,     /* Wu ch. 5: complete subtrees + connection table */
    CANOPY_FOREST_LAYOUT_DF,       /* per tree, depth-first, siblings adjacent */
    CANOPY_FOREST_LAYOUT_BF,       /* per tree, breadth-first */
    CANOPY_FOREST_LAYOUT_LL,       /* trees interleaved level by level */
    CANOPY_FOREST_LAYOUT_SLL,      /* LL with left-side pairs before right-side pairs */
    CANOPY_FOREST_LAYOUT_CC,       /* per tree, cache-line blocks of G levels */
    CANOPY_FOREST_LAYOUT_HYBRID,   /* SLL above the switch level, CC below */
    CANOPY_FOREST_LAYOUT_COUNT
} canopy_forest_layout;

typedef enum canopy_forest_engine {
    CANOPY_FOREST_ENGINE_AUTO = 0, /* linked layouts: simd with AVX-512, else scalar */
    CANOPY_FOREST_ENGINE_SCALAR,   /* one walker per layout (linked: level-synchronous) */
    CANOPY_FOREST_ENGINE_VM,       /* Ren's bytecode interpreter, scalar, with compaction */
    CANOPY_FOREST_ENGINE_VM_SIMD,  /* the interpreter on AVX-512/AVX2 lanes (scalar fallback) */
    CANOPY_FOREST_ENGINE_SIMD,     /* linked: the level-synchronous walker, rows on SIMD lanes */
    /* GPU engines (backend gpu; docs/forests.md "GPU engines") */
    CANOPY_FOREST_ENGINE_GPU_ITER,   /* "iter": a thread walks a tree (csr, hier, linked) */
    CANOPY_FOREST_ENGINE_GPU_ENC,    /* "enc": hier, NVRTC-compiled nested if/else */
    CANOPY_FOREST_ENGINE_GPU_COLLAB, /* "collab": hier, a warp evaluates a subtree */
    CANOPY_FOREST_ENGINE_GPU_REN,    /* "ren": linked layouts, a warp per bag of 32 trees */
    CANOPY_FOREST_ENGINE_COUNT
} canopy_forest_engine;

typedef enum canopy_forest_output {
    CANOPY_FOREST_OUTPUT_RAW = 0, /* margin: base + aggregated leaves, n_outputs per row */
    CANOPY_FOREST_OUTPUT_PROB,    /* the link applied, n_outputs per row */
    CANOPY_FOREST_OUTPUT_CLASS    /* one class index per row (regression: the prediction) */
} canopy_forest_output;

const char *canopy_forest_format_name(canopy_forest_format f);
const char *canopy_forest_layout_name(canopy_forest_layout l);
const char *canopy_forest_engine_name(canopy_forest_engine e);
const char *canopy_forest_output_name(canopy_forest_output o);
const char *canopy_forest_link_name(canopy_forest_link l);
/* Parse the names above; CANOPY_ERR_INVALID listing the valid names otherwise. */
canopy_status canopy_forest_format_parse(const char *s, canopy_forest_format *out);
canopy_status canopy_forest_layout_parse(const char *s, canopy_forest_layout *out);
canopy_status canopy_forest_engine_parse(const char *s, canopy_forest_engine *out);
canopy_status canopy_forest_output_parse(const char *s, canopy_forest_output *out);

/* Loads a model file. Errors name the file and the problem; unsupported model
 * features (categorical splits, linear trees, ...) give CANOPY_ERR_UNSUPPORTED naming
 * the feature. */
canopy_status canopy_forest_load(const char *path, canopy_forest_format fmt, canopy_forest **out);
canopy_status canopy_forest_load_mem(const char *buf, size_t len, const char *name,
                                     canopy_forest_format fmt, canopy_forest **out);
void canopy_forest_free(canopy_forest *f);

/* The load latencies the forest cache model (--layout auto with the vm engines) uses
 * on this machine, in ns: ns[0] L1, ns[1] L2, ns[2] L3, ns[3] memory. Measured once per
 * machine (well under a second) and kept in $XDG_CACHE_HOME/canopy (else ~/.cache/canopy);
 * CANOPY_CALIBRATE=off gives built-in values, =redo measures again. *source (may be
 * NULL) says where they came from. */
void canopy_cache_latencies(double ns[4], const char **source);

#define CANOPY_FOREST_MAX_DEPTH_HIST 64
typedef struct canopy_forest_info {
    const char *source;    /* "xgboost", "lightgbm", "canopy" */
    const char *objective; /* as named by the source */
    int32_t n_trees;
    int32_t n_features;
    int32_t n_outputs;
    int32_t n_classes; /* 0 for regression */
    canopy_forest_link link;
    canopy_forest_aggregation aggregation;
    int64_t n_nodes;
    int64_t n_leaves;
    int32_t max_depth; /* edges on the longest root-to-leaf path */
    /* trees by depth; the last bin counts depths >= its index */
    int32_t depth_hist[CANOPY_FOREST_MAX_DEPTH_HIST];
} canopy_forest_info;
void canopy_forest_get_info(const canopy_forest *f, canopy_forest_info *info);
/* Bytes of the node structures of a layout (AUTO: the one auto would pick). */
canopy_status canopy_forest_layout_bytes(const canopy_forest *f, canopy_forest_layout l,
                                         size_t *bytes);
/* Values per row that canopy_forest_predict writes for an output kind. */
int32_t canopy_forest_output_width(const canopy_forest *f, canopy_forest_output o);

/* GPU query mappings (Wu ch. 5.6): a row's trees split over threads/warps with atomic
 * accumulation, or one thread/warp per row over all trees. */
typedef enum canopy_forest_mapping {
    CANOPY_FOREST_MAPPING_AUTO = 0, /* atomic */
    CANOPY_FOREST_MAPPING_ATOMIC,
    CANOPY_FOREST_MAPPING_ATOMIC_FREE,
    CANOPY_FOREST_MAPPING_COUNT
} canopy_forest_mapping;
const char *canopy_forest_mapping_name(canopy_forest_mapping m);
canopy_status canopy_forest_mapping_parse(const char *s, canopy_forest_mapping *out);

typedef struct canopy_predict_options {
    canopy_forest_layout layout;
    canopy_forest_engine engine;
    canopy_backend backend;
    canopy_forest_output output;
    int32_t hier_depth;            /* hier: subtree depth 3..5; 0 = 4 */
    int32_t switch_level;          /* hybrid: first level stored as cc; 0 = the cache model's */
    int32_t compaction;            /* vm engines: stream compaction on (1, default) or off (0) */
    canopy_forest_mapping mapping; /* GPU engines: how (row, tree) pairs map to threads */
} canopy_predict_options;
canopy_predict_options canopy_predict_options_default(void);

typedef struct canopy_predict_stats {
    canopy_forest_layout layout; /* what ran (auto resolved) */
    canopy_forest_engine engine;
    canopy_isa isa; /* vm_simd: the lanes used */
    int32_t switch_level;
    double beta;          /* share of left decisions on a 5 % sample (sll, hybrid, and auto
                           * for the vm engines; 0 when not sampled) */
    double build_seconds; /* layout construction */
    double predict_seconds;
    size_t layout_bytes;
    double model_cost[CANOPY_FOREST_LAYOUT_COUNT]; /* cache-model cost (auto; 0 = n/a) */
    char note[256];
    /* GPU backend (zero on the CPU) */
    canopy_backend backend; /* what ran */
    canopy_forest_mapping mapping;
    double upload_seconds;   /* rows, and the model when not already on the device */
    double compile_seconds;  /* enc: NVRTC (0 on a cache hit) */
    double kernel_seconds;   /* device events */
    double download_seconds; /* scores back to the host */
    int32_t kernel_cache;    /* enc: 0 n/a, 1 compiled, 2 in-memory hit, 3 on-disk hit */
    size_t device_bytes;     /* model structures on the device */
    /* the cache model's choice (auto and hybrid; auto runs it with the vm engines) */
    canopy_forest_layout model_layout;
    int32_t model_switch_level;
} canopy_predict_stats;

/* Predicts rows of X (n x d float32, d == the model's feature count; NaN = missing).
 * out has n * canopy_forest_output_width(f, opt->output) doubles, row-major.
 * opt may be NULL (defaults); stats may be NULL. */
canopy_status canopy_forest_predict(const canopy_forest *f, canopy_points X,
                                    const canopy_predict_options *opt, double *out,
                                    canopy_predict_stats *stats);

/* A compiled predictor: the options resolved and the layout built once, then any
 * number of predictions with no rebuild. Saved to a file (docs/formats.md "Compiled
 * forest files") it loads by mmap, the model arrays used in place; the layout is
 * built once at load. */
typedef struct canopy_predictor canopy_predictor; /* opaque */

/* Compiles f under opt (NULL: defaults; auto choices are made with no data sample,
 * beta 0.5; backend auto means the CPU). f must outlive the predictor. */
canopy_status canopy_predictor_compile(const canopy_forest *f, const canopy_predict_options *opt,
                                       canopy_predictor **out);
void canopy_predictor_free(canopy_predictor *p);
/* Predicts like canopy_forest_predict with the compiled options and the given output
 * kind (out: n * canopy_forest_output_width(forest, output) doubles). CPU predictors
 * may be called concurrently; a GPU predictor (compiled with backend gpu) uploads its
 * layout at the first call and keeps it on the device, so its calls must not overlap.
 * stats->build_seconds is 0: nothing is built. */
canopy_status canopy_predictor_predict(const canopy_predictor *p, canopy_points X,
                                       canopy_forest_output output, double *out,
                                       canopy_predict_stats *stats);
/* canopy_predictor_predict with the rows and the predictions in device memory (CUDA
 * callers; a predictor compiled with backend gpu, else CANOPY_ERR_INVALID): d_X rows
 * .stride floats apart on the device (dense rows are read in place, others packed on
 * the device; no host copy of them), d_out (n * canopy_forest_output_width(forest,
 * output) doubles) device memory. Runs after the work queued on stream (a
 * cudaStream_t, NULL = legacy default) and on the legacy default stream; the per-tree
 * scores come back to the host for the aggregation and link (as the host entry
 * finishes them) and the predictions go to d_out before the call returns. Values equal
 * canopy_predictor_predict's of the same predictor to float64 rounding (the GPU adds
 * the trees in any order). Host pointers fail with
 * CANOPY_ERR_INVALID; without the CUDA module or a usable GPU,
 * CANOPY_ERR_UNSUPPORTED. */
canopy_status canopy_predictor_predict_device(const canopy_predictor *p, canopy_points d_X,
                                              canopy_forest_output output, double *d_out,
                                              void *stream, canopy_predict_stats *stats);
/* The model predicted (owned by the predictor when it was loaded). */
const canopy_forest *canopy_predictor_forest(const canopy_predictor *p);
/* The options as compiled, before auto resolution (as saved). */
canopy_predict_options canopy_predictor_options(const canopy_predictor *p);
/* Seconds the layout build took (at compile or load). */
double canopy_predictor_build_seconds(const canopy_predictor *p);
canopy_status canopy_predictor_save(const canopy_predictor *p, const char *path);
/* Truncated, corrupt, other-version or other-byte-order files fail with
 * CANOPY_ERR_FORMAT naming the file and the problem. */
canopy_status canopy_predictor_load(const char *path, canopy_predictor **out);
canopy_status canopy_predictor_load_mem(const void *buf, size_t len, const char *name,
                                        canopy_predictor **out);

/* ==================================================================== regex == */
/* (multi-pattern POSIX extended regular expressions, grep -E syntax in the C
 * locale: see docs/regex.md) */

typedef struct canopy_regex canopy_regex; /* compiled set of patterns, immutable */

/* compile flags: ICASE ignores the case of ASCII letters; LINE matches whole lines
 * only (grep -x: each pattern becomes ^(P)$); WORD matches whole words only (grep
 * -w: a match of P with no word byte [_[:alnum:]] just before or after it);
 * LINE wins over WORD, as in grep. */
enum { CANOPY_REGEX_ICASE = 1, CANOPY_REGEX_LINE = 2, CANOPY_REGEX_WORD = 4 };

typedef enum canopy_regex_engine {
    CANOPY_REGEX_ENGINE_AUTO = 0, /* dfa */
    CANOPY_REGEX_ENGINE_PIKE,     /* scalar Thompson/Pike simulation (the reference) */
    CANOPY_REGEX_ENGINE_SIMD,     /* the same on AVX2 / AVX-512 lanes over NFA threads */
    CANOPY_REGEX_ENGINE_DFA,      /* lazy DFA + literal prefilter, Pike VM fallback */
    CANOPY_REGEX_ENGINE_COUNT
} canopy_regex_engine;
const char *canopy_regex_engine_name(canopy_regex_engine e);
canopy_status canopy_regex_engine_parse(const char *s, canopy_regex_engine *out);

/* Compiles n >= 0 patterns into one program (their alternation). Pattern i has
 * lens[i] bytes (lens NULL: NUL-terminated strings). A malformed pattern fails with
 * CANOPY_ERR_INVALID and grep's message, e.g. "Unmatched ( or \(". n = 0 gives a
 * set that matches no line. */
canopy_status canopy_regex_compile(const char *const *patterns, const size_t *lens, int32_t n,
                                   uint32_t flags, canopy_regex **out);
void canopy_regex_free(canopy_regex *re);
int32_t canopy_regex_pattern_count(const canopy_regex *re);

/* Lines of a buffer as canopy_regex_match splits it: on '\n', a last line without
 * '\n' included; an empty buffer has none. */
int64_t canopy_regex_count_lines(const char *buf, size_t len);

typedef struct canopy_regex_match_options {
    canopy_regex_engine engine;
    int32_t invert; /* select the lines that match no pattern (grep -v) */
} canopy_regex_match_options;

typedef struct canopy_regex_result {
    int64_t lines;              /* lines in the buffer */
    int64_t selected;           /* lines selected */
    canopy_regex_engine engine; /* what ran (auto resolved) */
    canopy_isa isa;             /* simd; dfa: the lanes of its Pike VM fallback */
    int64_t dfa_states;         /* dfa: states built, summed over threads */
    int64_t dfa_fallbacks;      /* dfa: blocks finished by the Pike VM (cache full) */
    int32_t literals;           /* dfa: strings of the required-literal prefilter, 0 = none */
    int32_t literals_exact;     /* dfa: 1 when a literal hit is a match (no DFA run) */
    int64_t dfa_bytes;          /* dfa: bytes the automaton ran on (the rest: the prefilter) */
    int64_t literal_bytes3;     /* dfa: bytes the literal filter tested on three bytes, not two */
    canopy_isa literal_isa;     /* dfa with literals: the lanes of the literal filter */
    int32_t literals_shifted;   /* dfa: literals filtered on a rarer window than their start */
    int32_t literal_products;   /* dfa: patterns whose literals are a product of classes,
                                   alternations and repetitions ((AAT|CCG)T{4}: 2 strings) */
} canopy_regex_result;

/* Matches every line of buf (a line matches if some pattern matches a substring
 * of it; bytes are characters, CR is an ordinary byte). selected (NULL: not
 * wanted) gets one byte per line, 1 = selected. pattern_counts (NULL: not wanted)
 * gets, per pattern, the lines it matches (with invert: does not match). Lines are
 * processed in parallel blocks on canopy_threads() cores; opt and res may be NULL. */
canopy_status canopy_regex_match(const canopy_regex *re, const char *buf, size_t len,
                                 const canopy_regex_match_options *opt, uint8_t *selected,
                                 int64_t *pattern_counts, canopy_regex_result *res);

/* The leftmost-longest match in one line [0, len) (no '\n' in it) that starts at or
 * after `from` (POSIX: the leftmost start, then the longest match of any pattern
 * there; ^ and $ hold only at 0 and len; WORD: only matches with no word byte on
 * either side). *found = 1 and [*start, *end) when there is one, else *found = 0.
 * Runs the Pike VM anchored at each start in turn: O(len^2 x program) at worst, for
 * printing matches (grep -o), not for selecting lines. */
canopy_status canopy_regex_find(const canopy_regex *re, const char *line, size_t len, size_t from,
                                size_t *start, size_t *end, int *found);

/* =========================================================== B+-tree forest == */
/* (key lookups on the forest machinery, Ren et al. 2014 §2.2: see docs/bptree.md)
 * A B+ tree over sorted float32 keys whose top levels are replaced by a hash: equal-width
 * key-range buckets, each an independent binary search subtree stored as a tree of a
 * one-feature forest (threshold = separator). A batch of queries runs one task per
 * key from its bucket's root, on the forest layouts and engines. */

typedef struct canopy_bptree canopy_bptree; /* opaque */

/* Written for a query that is not a key unless the options name another marker. */
#define CANOPY_BPTREE_NOT_FOUND (-1)

typedef enum canopy_bptree_method {
    CANOPY_BPTREE_FOREST = 0, /* hash + subtrees on the forest layouts and engines */
    CANOPY_BPTREE_POINTER     /* baseline: a classic pointer-based B+ tree, 16 keys a node */
} canopy_bptree_method;
const char *canopy_bptree_method_name(canopy_bptree_method m);
canopy_status canopy_bptree_method_parse(const char *s, canopy_bptree_method *out);

/* Builds from n keys and their values (values NULL: a key's position in `keys`). The
 * keys may come in any order; they must be finite and distinct (-0 equals +0). They
 * are copied. n_buckets: the number of hash buckets (subtrees), 0 = about one per 256
 * keys. */
canopy_status canopy_bptree_build(const float *keys, const int64_t *values, int64_t n,
                                  int64_t n_buckets, canopy_bptree **out);
void canopy_bptree_free(canopy_bptree *t);

typedef struct canopy_bptree_info {
    int64_t n_keys;
    int64_t n_buckets;
    int64_t n_empty_buckets;
    int64_t n_nodes;        /* forest nodes over all subtrees */
    int32_t max_depth;      /* edges on the longest subtree path */
    double mean_depth;      /* over the keys: comparisons before a key's leaf */
    int64_t largest_bucket; /* keys in the fullest bucket */
} canopy_bptree_info;
void canopy_bptree_get_info(const canopy_bptree *t, canopy_bptree_info *info);

typedef struct canopy_bptree_options {
    canopy_bptree_method method;
    canopy_forest_layout layout; /* forest: AUTO = Ren's cache model (sll, cc or hybrid) */
    canopy_forest_engine engine; /* forest: AUTO = vm for linked layouts, else scalar */
    int32_t hier_depth;          /* hier: 3..5; 0 = 4 */
    int32_t switch_level;        /* hybrid: first cc level; 0 = the cache model's */
    int32_t compaction;          /* vm engines: stream compaction on (1, default) or off */
    int64_t not_found;           /* written for absent keys; default CANOPY_BPTREE_NOT_FOUND */
} canopy_bptree_options;
canopy_bptree_options canopy_bptree_options_default(void);

typedef struct canopy_bptree_stats {
    canopy_bptree_method method;
    canopy_forest_layout layout; /* what ran (auto resolved) */
    canopy_forest_engine engine;
    canopy_isa isa;
    int32_t switch_level;
    double beta;           /* share of left decisions on a 5 % sample (auto only) */
    double build_seconds;  /* layout or pointer tree built by this call (0 when reused) */
    double lookup_seconds; /* hash, traversal and record check of the batch */
    size_t layout_bytes;
    int64_t found;
    char note[256];
} canopy_bptree_stats;

/* Looks up nq queries: out[i] is the value of the key equal to queries[i], or
 * opt->not_found (a NaN query is never found). opt and stats may be NULL. The tree
 * keeps the layout last built for reuse, so lookups on one tree must not run
 * concurrently. */
canopy_status canopy_bptree_lookup(canopy_bptree *t, const float *queries, int64_t nq,
                                   const canopy_bptree_options *opt, int64_t *out,
                                   canopy_bptree_stats *stats);

/* Ren's biased query sets (§6): each query picks a non-empty bucket uniformly, then
 * walks its subtree taking the left child with probability `bias` at every node
 * (0.5 = unbiased; 0.625, 0.75, 0.875 as in the paper) and asks for the key reached.
 * Deterministic in seed. */
canopy_status canopy_bptree_sample_queries(const canopy_bptree *t, int64_t nq, double bias,
                                           uint64_t seed, float *out);

#ifdef __cplusplus
}
#endif
#endif /* CANOPY_H */
