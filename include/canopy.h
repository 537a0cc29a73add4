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

static inline canopy_points canopy_points_make(const float *data, int64_t n, int32_t d) {
    canopy_points p = {data, n, d, d};
    return p;
}
static inline const float *canopy_point(canopy_points p, int64_t i) {
    return p.data + i * p.stride;
}
/* Fails with CANOPY_ERR_INVALID naming `what` and the first bad index if any
 * coordinate is NaN or infinite, or if the shape is inconsistent. */
canopy_status canopy_points_check(canopy_points p, const char *what);

/* Allocation: sizes are overflow-checked; failures set the error message.
 * Memory is 64-byte aligned and released with canopy_free. */
canopy_status canopy_alloc(void **out, size_t count, size_t elem_size);
canopy_status canopy_calloc(void **out, size_t count, size_t elem_size);
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

/* Build facts. */
const char *canopy_version(void);
int canopy_have_cuda(void);
/* GPU presence: fills name (if len > 0) and memory; CANOPY_ERR_UNSUPPORTED when this
 * build has no CUDA or no device is visible. */
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
canopy_status canopy_npy_read_mem(const void *buf, size_t len, const char *name,
                                  canopy_array *out);
/* Writes atomically: a temporary file renamed over `path` on success. */
canopy_status canopy_npy_write(const char *path, const canopy_array *a);

/* CSV of numbers: comma-separated, one row per line, an optional header line
 * (detected when the first line has a non-numeric field). Read as float64 (rows, cols). */
canopy_status canopy_csv_read(const char *path, canopy_array *out);
canopy_status canopy_csv_read_mem(const void *buf, size_t len, const char *name,
                                  canopy_array *out);
/* Writes a 1-D or 2-D array; header may be NULL. Atomic like npy. */
canopy_status canopy_csv_write(const char *path, const canopy_array *a, const char *header);

/* .fvecs (float32) and .ivecs (int32): per vector, an int32 dimension then values. */
canopy_status canopy_vecs_read(const char *path, canopy_array *out);
canopy_status canopy_vecs_write(const char *path, const canopy_array *a);

/* Reads any supported file by extension (.npy, .csv, .fvecs, .ivecs; .csv.gz is not
 * supported). */
canopy_status canopy_array_load(const char *path, canopy_array *out);
/* Loads a 2-D float array as float32 points (1-D arrays become d = 1), rejecting
 * NaN/Inf with the row and column named. */
canopy_status canopy_points_load(const char *path, canopy_array *out);

/* Atomic output: open a temporary file beside `path`; commit renames it over
 * `path`, abort removes it. Used by every writer so failures leave no partial file. */
typedef struct canopy_outfile {
    void *fp; /* FILE * */
    char *final_path;
    char *tmp_path;
} canopy_outfile;
canopy_status canopy_outfile_open(canopy_outfile *o, const char *path);
canopy_status canopy_outfile_commit(canopy_outfile *o);
void canopy_outfile_abort(canopy_outfile *o);

/* ================================================================ generators == */

/* Uniform in the box [lo, hi)^d. */
canopy_status canopy_gen_uniform(float *out, int64_t n, int32_t d, double lo, double hi,
                                 uint64_t seed);
/* Mixture of k equal-weight isotropic Gaussians, centres uniform in [0,1)^d, standard
 * deviation `spread`. labels (optional, may be NULL) receives each point's cluster. */
canopy_status canopy_gen_clusters(float *out, int32_t *labels, int64_t n, int32_t d,
                                  int32_t k, double spread, uint64_t seed);
/* Plummer sphere (Aarseth, Hénon & Wielen 1974) in standard N-body units (G = 1,
 * M = 1, E = -1/4; Plummer scale radius 3π/16), radii cut at 99.9 % of the mass,
 * shifted to the centre-of-mass frame. pos and vel are (n, 3); vel may be NULL. */
canopy_status canopy_gen_plummer(float *pos, float *vel, int64_t n, uint64_t seed);

/* The named workloads of the design (rand7, clust2, plummer1m, rand1m3). */
typedef enum canopy_gen_kind {
    CANOPY_GEN_UNIFORM = 0,
    CANOPY_GEN_CLUSTERS = 1,
    CANOPY_GEN_PLUMMER = 2
} canopy_gen_kind;
typedef struct canopy_workload {
    const char *name;
    const char *summary;
    canopy_gen_kind kind;
    int64_t n;       /* reference (or body) count */
    int64_t n_query; /* 0 when the workload has no query half */
    int32_t d;
    int32_t clusters;
    double spread;
    uint64_t seed;
} canopy_workload;
/* NULL-terminated table; canopy_workload_find returns NULL for unknown names. */
const canopy_workload *canopy_workloads(void);
const canopy_workload *canopy_workload_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* CANOPY_H */
