/* SPDX-License-Identifier: MIT */
/* Decision forests: the in-memory model shared by the importers, the layouts and
 * the engines. Internal to the library; the public API is the "forests" section of
 * canopy.h. */
#ifndef CANOPY_FOREST_H
#define CANOPY_FOREST_H

#include "canopy.h"

#include <stdint.h>

/* Per-node flags of the model. */
enum {
    CF_CMP_LT = 1,       /* go left when x < t (XGBoost); otherwise x <= t */
    CF_DEFAULT_LEFT = 2, /* a missing value goes left */
    CF_MISS_ZERO = 4     /* |x| <= 1e-35 also counts as missing (LightGBM zero_as_missing) */
};

/* LightGBM's kZeroThreshold: values this close to 0 are "zero" for missing_type Zero. */
#define CF_ZERO_EPS 1e-35f

/* A tree's nodes are a contiguous range [first, first + n_nodes) of the forest's node
 * arrays; child indices are tree-local; node 0 is the root. */
typedef struct cf_tree {
    int64_t first;
    int32_t n_nodes;
    int32_t output; /* >= 0: scalar leaves added to this output; -1: a vector per leaf */
} cf_tree;

struct canopy_forest {
    int32_t n_features;
    int32_t n_outputs; /* width of the raw score */
    int32_t n_classes; /* 0 for regression */
    canopy_forest_link link;
    double sigmoid_scale; /* prob = 1 / (1 + exp(-scale * raw)) */
    canopy_forest_aggregation aggregation;
    double *base; /* n_outputs, margin space, added after aggregation */
    char objective[64];
    char source[32]; /* "xgboost", "lightgbm", "canopy" */

    int32_t n_trees, cap_trees;
    cf_tree *trees;

    int64_t n_nodes, cap_nodes;
    int32_t *feature; /* -1 for a leaf */
    double *threshold;
    int32_t *left, *right;
    uint8_t *flags;
    int64_t *value_off; /* leaves: offset into values (1 or n_outputs doubles) */

    int64_t n_values, cap_values;
    double *values;

    struct cf_gpu_state *gpu; /* GPU engines: device copies, compiled kernels (gpu.h) */
};

/* Builder used by the importers. */
canopy_status canopy_cf_forest_new(canopy_forest **out);
/* Appends a tree of n_nodes nodes (arrays zeroed, feature = -1) and returns its
 * index; the importer fills the node arrays at trees[t].first. */
canopy_status canopy_cf_add_tree(canopy_forest *f, int32_t n_nodes, int32_t output, int32_t *t);
/* Reserves leaf storage for a node of tree t and returns a pointer to its width
 * doubles. */
canopy_status canopy_cf_leaf_values(canopy_forest *f, int32_t t, int32_t node, double **vals);
/* A tree as an importer reads it: node ids of the source file, children by id,
 * value holds width doubles per node (read for leaves only). canopy_cf_add_raw_tree renumbers
 * the nodes breadth-first from `root`, dropping unreachable ones (XGBoost keeps
 * deleted nodes) and failing on cycles or shared children. */
typedef struct cf_raw_tree {
    int32_t n;
    int32_t *feature; /* < 0: leaf */
    double *thr;
    int32_t *left, *right;
    uint8_t *flags;
    double *value;
} cf_raw_tree;
canopy_status canopy_cf_raw_alloc(cf_raw_tree *r, int32_t n, int32_t width);
void canopy_cf_raw_free(cf_raw_tree *r);
canopy_status canopy_cf_add_raw_tree(canopy_forest *f, const cf_raw_tree *r, int32_t root,
                                     int32_t output, const char *what);
canopy_status canopy_cf_set_base(canopy_forest *f, const double *base, int32_t n);
/* Structural checks after import: children in range, each tree a real tree,
 * features < n_features, finite thresholds and leaves. Names `what` in errors. */
canopy_status canopy_cf_validate(const canopy_forest *f, const char *what);

static inline int32_t cf_leaf_width(const canopy_forest *f, const cf_tree *t) {
    return t->output >= 0 ? 1 : f->n_outputs;
}

/* The threshold t' such that, for every float x that is not missing,
 * (x cmp t) == (x <= t'). Lets every engine use one comparison. */
float canopy_cf_le_threshold(double t, int lt);

/* Importers (one file each). buf is NUL-terminated. */
canopy_status canopy_cf_import_xgboost(const char *buf, size_t len, const char *name,
                                       canopy_forest **out);
canopy_status canopy_cf_import_lightgbm(const char *buf, size_t len, const char *name,
                                        canopy_forest **out);
canopy_status canopy_cf_import_canopy(const char *buf, size_t len, const char *name,
                                      canopy_forest **out);

/* JSON helpers shared by the JSON importers (load.c). Errors name the file. */
struct json_object;
canopy_status canopy_cf_json_parse(const char *buf, size_t len, const char *name,
                                   struct json_object **out);
/* Member `key` of obj with the given json_type, or an error naming `where`. */
canopy_status canopy_cf_json_get(struct json_object *obj, const char *key, int type,
                                 const char *name, const char *where, struct json_object **out);
/* A number, or a string holding a number (XGBoost writes params as strings). */
canopy_status canopy_cf_json_number(struct json_object *v, const char *name, const char *where,
                                    double *out);

/* ------------------------------------------------------------------ layouts -- */

/* A compiled layout. Leaves are found by key < 0: leaf index ~key into leaf_off /
 * leaf_out (the offset into values and the tree's output, -1 for vector leaves).
 * Internal keys pack the feature (bits 0-28), CF_KEY_ZERO and CF_KEY_DL. */
#define CF_KEY_FEATURE 0x1FFFFFFF
#define CF_KEY_ZERO (1 << 29)
#define CF_KEY_DL (1 << 30)

/* The node record of the linked layouts (df, bf, ll, sll, cc, hybrid): siblings are
 * adjacent, so the next node is child + go_right (Ren's branch-free addressing). */
typedef struct cf_lnode {
    float thr;
    int32_t key;
    int32_t child;
} cf_lnode;

/* The node record of the level-synchronous walker (walk_sync.c): byte offsets, so a
 * step needs no multiply; leaves are self-loops. */
typedef struct cf_snode {
    float thr;
    uint32_t fofs; /* feature * 4 */
    uint32_t next; /* byte offset of the left child; the right child is next + 16 */
    int32_t key;   /* missing-value flags as in cf_lnode */
} cf_snode;

/* bf with each tree stored complete (walk_sync.c): a tree of depth D fills slots
 * [0, 2^(D+1) - 1) in breadth-first order, the children of slot i at 2i + 1 and
 * 2i + 2, so a node needs no child field; nodes above a shallow leaf always go
 * left (threshold +inf) down to its slot at depth D. */
typedef struct cf_pnode {
    float thr;
    /* column * 4 * CF_SYNC_ROWS: the walker reads a feature-major copy of the rows
     * with 2F + 1 columns: x_j, then -x_j (default-left nodes, stored mirrored), then 0
     * (padding below shallow leaves) */
    uint32_t fofs;
} cf_pnode;

typedef struct cf_layout {
    canopy_forest_layout kind;
    int32_t n_trees;
    int32_t n_outputs;
    const double *values; /* the forest's leaf values (borrowed) */
    int64_t *leaf_off;    /* per leaf index */
    int32_t *leaf_out;    /* per leaf index */
    int64_t n_leaves;
    int32_t *root; /* per tree: root node index (linked, hier: subtree id) */
    /* linked layouts */
    cf_lnode *nodes;
    int64_t n_lnodes;
    int32_t switch_level; /* hybrid */
    /* csr (Wu ch. 5): four arrays */
    int32_t *csr_feature; /* key as above */
    float *csr_value;
    int32_t *csr_children_idx;
    int32_t *csr_children;
    int64_t n_csr, n_csr_children;
    /* hier (Wu ch. 5): complete subtrees of depth hier_depth, BFS-numbered */
    int32_t hier_depth;
    int64_t n_subtrees;
    float *hier_thr;    /* n_subtrees * (2^D - 1) */
    int32_t *hier_key;  /* padding slots hold key 0 and are never reached */
    int32_t *hier_conn; /* n_subtrees * 2^D: (left, right) next subtree per bottom node */
    size_t bytes;       /* memory of the node structures */
    /* build-time scratch (freed by canopy_cf_layout_free) */
    int32_t *leaf_of; /* per forest node: its leaf index, -1 for internal nodes */
    int32_t *level;   /* per forest node: depth below its root */
    /* per forest node: it is the colder child of its pair (the less taken one in the
     * branch statistics cold_in gives, else the right child); sll puts the pairs under
     * cold children after those under hot ones, level by level (Ren §4, §5.3) */
    uint8_t *is_cold;
    const uint8_t *cold_in; /* the caller's statistics (borrowed), or NULL */
    int32_t max_level;
    int64_t *lstart; /* per tree, max_level + 2 entries: first local id of each level */
    /* level-synchronous walker (walk_sync.c): nodes with leaves as self-loops */
    cf_snode *sync_nodes;
    int32_t n_features;
    int32_t *sync_leaf;  /* per node: its leaf index, -1 for internal nodes */
    double *sync_val;    /* per node: a scalar leaf's value (0 otherwise) */
    int32_t *sync_out;   /* per tree: its output, -1 for vector leaves */
    int32_t *tree_depth; /* per tree: sweeps until every row is at a leaf */
    int sync_zero;       /* some node treats zero as missing (LightGBM) */
    /* complete trees (bf only, when they cost at most CF_PERFECT_SLACK x the linked
     * nodes): per tree the first slot; per slot a node, and at depth D the leaf
     * index and a scalar leaf's value */
    cf_pnode *perf_nodes;
    int64_t *perf_first;
    int32_t *perf_leaf;
    double *perf_val;
    int perf_nan;    /* the complete trees also walk rows with NaN (see build_perfect) */
    int perf_mirror; /* some node is stored mirrored: the walker needs the -x columns */
} cf_layout;

/* Leaf bookkeeping and key encoding shared by all layouts. */
canopy_status canopy_cf_layout_init(const canopy_forest *f, cf_layout *L);
int32_t canopy_cf_node_key(const canopy_forest *f, const cf_layout *L, int64_t gnode);
/* Fills level, is_cold, max_level and lstart (the linked orders need them). */
canopy_status canopy_cf_layout_levels(const canopy_forest *f, cf_layout *L);
void canopy_cf_layout_free(cf_layout *L);

/* Node orders of the linked layouts: fill order (forest node ids, every node once)
 * such that the two children of a node are adjacent, left first. */
typedef canopy_status (*cf_order_fn)(const canopy_forest *f, const cf_layout *L, int64_t *order);
canopy_status canopy_cf_order_df(const canopy_forest *f, const cf_layout *L, int64_t *order);
canopy_status canopy_cf_order_bf(const canopy_forest *f, const cf_layout *L, int64_t *order);
canopy_status canopy_cf_order_ll(const canopy_forest *f, const cf_layout *L, int64_t *order);
canopy_status canopy_cf_order_sll(const canopy_forest *f, const cf_layout *L, int64_t *order);
canopy_status canopy_cf_order_cc(const canopy_forest *f, const cf_layout *L, int64_t *order);
canopy_status canopy_cf_order_hybrid(const canopy_forest *f, const cf_layout *L, int64_t *order);
/* Emits the cc blocks of tree t below local node `top`: when top_pair, the block
 * holds top and its sibling (top + 1) and their descendants for levels_per_block
 * levels, else top alone. Appends to order at *pos. Used by cc and hybrid. */
canopy_status canopy_cf_emit_cc(const canopy_forest *f, int32_t t, int32_t top, int top_pair,
                                int32_t levels_per_block, int64_t *order, int64_t *pos);
/* Levels per cc block: G = floor(log2(nodes per 64-byte line + 1)), at least 2. */
int32_t canopy_cf_cc_levels(void);

/* cold: per forest node, the less-taken child of its pair (canopy_cf_sample_bias), which
 * sll and hybrid place after the hot ones; NULL takes right children as cold. */
canopy_status canopy_cf_build_linked(const canopy_forest *f, canopy_forest_layout kind,
                                     int32_t switch_level, const uint8_t *cold, cf_layout *L);
canopy_status canopy_cf_build_csr(const canopy_forest *f, cf_layout *L);
canopy_status canopy_cf_build_hier(const canopy_forest *f, int32_t depth, cf_layout *L);

/* Scalar walkers: add the leaves of trees [t0, t1) for rows [r0, r1) of X into acc
 * (row-major, n_outputs doubles per row, indexed from row r0). */
void canopy_cf_walk_csr(const cf_layout *L, const float *X, int64_t stride, int64_t r0, int64_t r1,
                        int32_t t0, int32_t t1, double *acc);
void canopy_cf_walk_hier(const cf_layout *L, const float *X, int64_t stride, int64_t r0, int64_t r1,
                         int32_t t0, int32_t t1, double *acc);
/* The level-synchronous walker of a linked layout (walk_sync.c); canopy_cf_build_sync adds
 * its node copy to a built linked layout. isa picks the sweep: scalar, or SIMD lanes
 * over rows (AVX2 / AVX-512). */
canopy_status canopy_cf_build_sync(const canopy_forest *f, cf_layout *L);
#define CF_PERFECT_SLACK 4
/* readable slots after the last complete tree: the SIMD sweep loads a level's
 * thresholds 32 slots at a time, past a small tree's end */
#define CF_PERFECT_PAD 32
#define CF_PERFECT_FEATURES 4096
#define CF_SYNC_ROWS 128 /* rows per sweep block */
void canopy_cf_walk_sync(const cf_layout *L, canopy_isa isa, const float *X, int64_t stride,
                         int64_t r0, int64_t r1, int32_t t0, int32_t t1, double *acc);

/* The decision every engine makes: go right? x missing -> the default direction. */
static inline int cf_go_right(float x, float thr, int32_t key) {
    int miss = (x != x) | ((key & CF_KEY_ZERO) && x >= -CF_ZERO_EPS && x <= CF_ZERO_EPS);
    return miss ? !(key & CF_KEY_DL) : !(x <= thr);
}

static inline void cf_add_leaf(const cf_layout *L, int32_t leaf, double *acc_row) {
    int32_t o = L->leaf_out[leaf];
    const double *v = L->values + L->leaf_off[leaf];
    if (o >= 0)
        acc_row[o] += v[0];
    else
        for (int32_t k = 0; k < L->n_outputs; k++) acc_row[k] += v[k];
}

/* Ren §5 cache model: predicted relative cost of each linked layout and the best
 * switch level; beta = share of left decisions sampled from the data (0.5 when no
 * data). */
typedef struct cf_cache_choice {
    canopy_forest_layout layout;        /* the cheapest of ll, sll, cc, hybrid */
    canopy_forest_layout forest_layout; /* the cheaper of ll and cc: forest auto's pick */
    int32_t switch_level;
    double cost[CANOPY_FOREST_LAYOUT_COUNT]; /* model cost per layout (0 = not modelled) */
} cf_cache_choice;
void canopy_cf_cache_model(const canopy_forest *f, double beta, cf_cache_choice *out);
/* The machine's load latencies (cache_calibrate.c), ns per dependent load with the
 * working set in each level, and the cache sizes (0 when unknown). */
typedef struct cf_latencies {
    double l1, l2, l3, mem;
    int64_t l1_bytes, l2_bytes, l3_bytes;
    /* the AVX-512 walker beat the scalar one on complete trees: 1, 0; -1 not measured */
    int simd_walk;
    char source[1200]; /* the file they came from, "measured now, ..." or "built-in ..." */
} cf_latencies;
/* Reads this machine's file, or measures (well under a second) and writes it; CANOPY_CALIBRATE=off
 * gives the built-in latencies, =redo measures again. */
void canopy_cf_calibrate(cf_latencies *lat);
/* canopy_cf_calibrate's result, computed once per process. */
const cf_latencies *canopy_cf_machine_latencies(void);
/* Branch statistics over a sample of rows (every 20th row, i.e. 5 %, at most 64
 * rows): returns the share of decisions that take the more-taken child of their
 * node (Ren's bias, 0.5 to 1), and when cold is not NULL marks per forest node
 * whether it is the less-taken child of its parent (ties: the right child). */
double canopy_cf_sample_bias(const canopy_forest *f, canopy_points X, uint8_t *cold);
int32_t canopy_cf_tree_depth(const canopy_forest *f, int32_t t);

#endif
