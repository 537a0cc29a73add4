/* SPDX-License-Identifier: MIT */
/* Building a B+-tree forest: validate and sort the keys, hash them into equal-width
 * key-range buckets (the B+ tree's top levels), and store each bucket as a balanced
 * binary search tree of the one-feature forest model, so every forest layout and
 * engine can run it. Also the biased query sampler of Ren's experiments. */
#include "bptree/bptree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { KEYS_PER_BUCKET = 256 };     /* default: subtrees of about 8 levels */
#define MAX_KEYS ((int64_t)1 << 29) /* 2 nodes a key fit the int32 layouts */
#define MAX_BUCKETS ((int64_t)1 << 28)

static const char *const method_names[] = {"forest", "pointer"};

const char *canopy_bptree_method_name(canopy_bptree_method m) {
    return (unsigned)m < 2 ? method_names[m] : "?";
}

canopy_status canopy_bptree_method_parse(const char *s, canopy_bptree_method *out) {
    for (int i = 0; i < 2; i++)
        if (s && !strcmp(s, method_names[i])) {
            *out = (canopy_bptree_method)i;
            return CANOPY_OK;
        }
    return canopy_fail(CANOPY_ERR_INVALID, "unknown method '%s' (forest, pointer)", s ? s : "");
}

typedef struct keyed {
    float key;
    int64_t pos; /* position in the caller's arrays */
} keyed;

static int cmp_keyed(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Sorted copies of keys and values; refuses non-finite and repeated keys. */
static canopy_status sort_keys(const float *keys, const int64_t *values, int64_t n,
                               canopy_bptree *t) {
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(keys[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "key %lld is %s (keys must be finite)",
                               (long long)i, isnan(keys[i]) ? "NaN" : "infinite");
    size_t m = (size_t)(n > 0 ? n : 1);
    if (canopy_alloc((void **)&t->keys, m, sizeof *t->keys) ||
        canopy_alloc((void **)&t->values, m, sizeof *t->values))
        return CANOPY_ERR_NOMEM;
    int sorted = 1;
    for (int64_t i = 1; i < n && sorted; i++) sorted = keys[i - 1] < keys[i];
    if (sorted) {
        for (int64_t i = 0; i < n; i++) {
            t->keys[i] = keys[i];
            t->values[i] = values ? values[i] : i;
        }
        return CANOPY_OK;
    }
    keyed *k = NULL;
    if (canopy_alloc((void **)&k, m, sizeof *k)) return CANOPY_ERR_NOMEM;
    for (int64_t i = 0; i < n; i++) k[i] = (keyed){keys[i], i};
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    canopy_status s = CANOPY_OK;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0 && k[i].key == k[i - 1].key) {
            s = canopy_fail(CANOPY_ERR_INVALID, "duplicate key %.9g (positions %lld and %lld)",
                            (double)k[i].key, (long long)k[i - 1].pos, (long long)k[i].pos);
            break;
        }
        t->keys[i] = k[i].key;
        t->values[i] = values ? values[k[i].pos] : k[i].pos;
    }
    canopy_free(k);
    return s;
}

/* A forest whose node, tree and value arrays already hold the whole B+-tree forest,
 * so appending trees never reallocates (2^25 nodes are about 1 GB). */
static canopy_status new_forest(int64_t n_trees, int64_t n_nodes, int64_t n_values,
                                canopy_forest **out) {
    canopy_forest *f;
    canopy_status s = canopy_cf_forest_new(&f);
    if (s) return s;
    f->n_features = 1;
    f->n_outputs = 1;
    f->link = CANOPY_LINK_IDENTITY;
    f->aggregation = CANOPY_AGG_SUM;
    strcpy(f->source, "bptree");
    strcpy(f->objective, "lookup");
    f->trees = malloc((size_t)n_trees * sizeof *f->trees);
    f->feature = malloc((size_t)n_nodes * sizeof *f->feature);
    f->threshold = malloc((size_t)n_nodes * sizeof *f->threshold);
    f->left = malloc((size_t)n_nodes * sizeof *f->left);
    f->right = malloc((size_t)n_nodes * sizeof *f->right);
    f->flags = malloc((size_t)n_nodes * sizeof *f->flags);
    f->value_off = malloc((size_t)n_nodes * sizeof *f->value_off);
    f->values = malloc((size_t)n_values * sizeof *f->values);
    s = canopy_cf_set_base(f, NULL, 1);
    if (!f->trees || !f->feature || !f->threshold || !f->left || !f->right || !f->flags ||
        !f->value_off || !f->values)
        s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a forest of %lld nodes",
                        (long long)n_nodes);
    if (s) {
        canopy_forest_free(f);
        return s;
    }
    f->cap_trees = (int32_t)n_trees;
    f->cap_nodes = n_nodes;
    f->cap_values = n_values;
    *out = f;
    return CANOPY_OK;
}

/* Bucket b's keys as a balanced binary search tree, numbered breadth-first with
 * siblings adjacent (the order the layouts expect): an inner node over ranks [lo, hi)
 * sends x <= keys[mid - 1] left, a leaf stores its key's rank. lo, hi, depth: scratch
 * of 2m - 1 entries. */
static canopy_status add_bucket(canopy_bptree *t, int64_t b, int64_t *lo, int64_t *hi,
                                int32_t *depth) {
    canopy_forest *f = t->forest;
    int64_t first = t->start[b], m = t->start[b + 1] - first;
    int32_t nn = (int32_t)(m > 0 ? 2 * m - 1 : 1), tid, next = 1;
    canopy_status s = canopy_cf_add_tree(f, nn, 0, &tid);
    if (s) return s;
    int64_t base = f->trees[tid].first;
    lo[0] = 0;
    hi[0] = m;
    depth[0] = 0;
    for (int32_t i = 0; i < nn; i++) {
        int64_t g = base + i;
        int32_t d = depth[i];
        if (hi[i] - lo[i] <= 1) {
            double *v;
            if ((s = canopy_cf_leaf_values(f, tid, i, &v))) return s;
            v[0] = m > 0 ? (double)(first + lo[i]) : -1.0;
            t->depth_sum += m > 0 ? d : 0;
            if (d > t->max_depth) t->max_depth = d;
            continue;
        }
        int64_t mid = cbp_split(lo[i], hi[i]);
        f->feature[g] = 0;
        f->threshold[g] = t->keys[first + mid - 1];
        f->flags[g] = 0;
        f->left[g] = next;
        f->right[g] = next + 1;
        lo[next] = lo[i];
        hi[next] = mid;
        lo[next + 1] = mid;
        hi[next + 1] = hi[i];
        depth[next] = depth[next + 1] = d + 1;
        next += 2;
    }
    return CANOPY_OK;
}

static canopy_status build_forest(canopy_bptree *t) {
    int64_t B = t->n_buckets, n = t->n;
    if (canopy_calloc((void **)&t->start, (size_t)B + 1, sizeof *t->start)) return CANOPY_ERR_NOMEM;
    t->lo = n > 0 ? t->keys[0] : 0.0;
    double span = n > 0 ? (double)t->keys[n - 1] - t->lo : 0.0;
    t->scale = span > 0 ? (double)B / span : 0.0;
    /* keys are sorted and the hash is monotone: each bucket is a run of ranks */
    for (int64_t i = 0; i < n; i++) t->start[cbp_bucket(t, t->keys[i]) + 1]++;
    int64_t nodes = 0, largest = 1;
    for (int64_t b = 0; b < B; b++) {
        int64_t m = t->start[b + 1];
        nodes += m > 0 ? 2 * m - 1 : 1;
        if (m > largest) largest = m;
        t->start[b + 1] += t->start[b];
    }
    canopy_status s = new_forest(B, nodes, n + B, &t->forest);
    int64_t *lo = NULL, *hi = NULL;
    int32_t *depth = NULL;
    if (!s && (canopy_alloc((void **)&lo, (size_t)(2 * largest), sizeof *lo) ||
               canopy_alloc((void **)&hi, (size_t)(2 * largest), sizeof *hi) ||
               canopy_alloc((void **)&depth, (size_t)(2 * largest), sizeof *depth)))
        s = CANOPY_ERR_NOMEM;
    for (int64_t b = 0; b < B && !s; b++) s = add_bucket(t, b, lo, hi, depth);
    canopy_free(lo);
    canopy_free(hi);
    canopy_free(depth);
    return s;
}

canopy_status canopy_bptree_build(const float *keys, const int64_t *values, int64_t n,
                                  int64_t n_buckets, canopy_bptree **out) {
    *out = NULL;
    if (n < 0 || (n > 0 && !keys)) return canopy_fail(CANOPY_ERR_INVALID, "bad key array");
    if (n > MAX_KEYS)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%lld keys (at most %lld)", (long long)n,
                           (long long)MAX_KEYS);
    if (n_buckets < 0 || n_buckets > MAX_BUCKETS)
        return canopy_fail(CANOPY_ERR_INVALID, "bucket count %lld (0 for auto, at most %lld)",
                           (long long)n_buckets, (long long)MAX_BUCKETS);
    /* More buckets than keys leave most of them empty; far more only cost memory (a
     * leaf each), so a count no key set can use is refused before it is allocated. */
    if (n_buckets > 4 * n + 1024)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "bucket count %lld for %lld keys (at most 4 per key + 1024)",
                           (long long)n_buckets, (long long)n);
    if (n_buckets == 0) n_buckets = n / KEYS_PER_BUCKET > 1 ? n / KEYS_PER_BUCKET : 1;
    canopy_bptree *t = calloc(1, sizeof *t);
    if (!t) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a B+-tree forest");
    t->n = n;
    t->n_buckets = n_buckets;
    canopy_status s = sort_keys(keys, values, n, t);
    if (!s) s = build_forest(t);
    if (s) {
        canopy_bptree_free(t);
        return s;
    }
    *out = t;
    return CANOPY_OK;
}

void canopy_bptree_free(canopy_bptree *t) {
    if (!t) return;
    if (t->have_layout) canopy_cf_layout_free(&t->layout);
    free(t->prog.code);
    canopy_cbp_pointer_free(t->pointer);
    canopy_forest_free(t->forest);
    canopy_free(t->start);
    canopy_free(t->keys);
    canopy_free(t->values);
    free(t);
}

void canopy_bptree_get_info(const canopy_bptree *t, canopy_bptree_info *info) {
    memset(info, 0, sizeof *info);
    info->n_keys = t->n;
    info->n_buckets = t->n_buckets;
    info->n_nodes = t->forest->n_nodes;
    info->max_depth = t->max_depth;
    info->mean_depth = t->n > 0 ? (double)t->depth_sum / (double)t->n : 0.0;
    for (int64_t b = 0; b < t->n_buckets; b++) {
        int64_t m = t->start[b + 1] - t->start[b];
        info->n_empty_buckets += m == 0;
        if (m > info->largest_bucket) info->largest_bucket = m;
    }
}

canopy_status canopy_bptree_sample_queries(const canopy_bptree *t, int64_t nq, double bias,
                                           uint64_t seed, float *out) {
    if (!(bias >= 0 && bias <= 1)) return canopy_fail(CANOPY_ERR_INVALID, "bias %g (0 to 1)", bias);
    if (nq < 0 || (nq > 0 && !out)) return canopy_fail(CANOPY_ERR_INVALID, "bad query array");
    if (nq == 0) return CANOPY_OK;
    if (t->n == 0) return canopy_fail(CANOPY_ERR_INVALID, "no keys to sample queries from");
    int64_t *full = NULL, nf = 0;
    if (canopy_alloc((void **)&full, (size_t)t->n_buckets, sizeof *full)) return CANOPY_ERR_NOMEM;
    for (int64_t b = 0; b < t->n_buckets; b++)
        if (t->start[b + 1] > t->start[b]) full[nf++] = b;
#pragma omp parallel for num_threads(canopy_threads()) schedule(static) if (nq > CBP_SERIAL_BELOW)
    for (int64_t i = 0; i < nq; i++) {
        canopy_rng r = canopy_rng_make(seed, (uint64_t)i);
        int64_t b = full[canopy_rng_below(&r, (uint64_t)nf)];
        int64_t lo = 0, hi = t->start[b + 1] - t->start[b];
        while (hi - lo > 1) {
            int64_t mid = cbp_split(lo, hi);
            if (canopy_rng_uniform(&r) < bias)
                hi = mid;
            else
                lo = mid;
        }
        out[i] = t->keys[t->start[b] + lo];
    }
    canopy_free(full);
    return CANOPY_OK;
}
