/* SPDX-License-Identifier: MIT */
/* The in-memory forest: building (for importers), validation, info, names. */
#include "forest/forest.h"
#include "forest/gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static canopy_status grow(void **p, int64_t *cap, int64_t need, size_t elem) {
    if (need <= *cap) return CANOPY_OK;
    int64_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    size_t bytes;
    if (canopy_mul_size((size_t)c, elem, &bytes)) return CANOPY_ERR_NOMEM;
    void *q = realloc(*p, bytes);
    if (!q)
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a forest of %lld nodes",
                           (long long)need);
    *p = q;
    *cap = c;
    return CANOPY_OK;
}

canopy_status canopy_cf_forest_new(canopy_forest **out) {
    canopy_forest *f = calloc(1, sizeof *f);
    if (!f) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a forest");
    f->sigmoid_scale = 1.0;
    *out = f;
    return CANOPY_OK;
}

void canopy_forest_free(canopy_forest *f) {
    if (!f) return;
    canopy_cf_gpu_release(f);
    free(f->base);
    free(f->trees);
    free(f->feature);
    free(f->threshold);
    free(f->left);
    free(f->right);
    free(f->flags);
    free(f->value_off);
    free(f->values);
    free(f);
}

canopy_status canopy_cf_add_tree(canopy_forest *f, int32_t n_nodes, int32_t output, int32_t *t) {
    if (n_nodes < 1) return canopy_fail(CANOPY_ERR_FORMAT, "tree %d has no nodes", f->n_trees);
    if (f->n_trees == INT32_MAX) return canopy_fail(CANOPY_ERR_FORMAT, "too many trees");
    int64_t c = f->cap_trees;
    if (grow((void **)&f->trees, &c, f->n_trees + 1, sizeof *f->trees)) return CANOPY_ERR_NOMEM;
    f->cap_trees = (int32_t)c;
    int64_t need = f->n_nodes + n_nodes, cap = f->cap_nodes;
    canopy_status s = CANOPY_OK;
    cap = f->cap_nodes;
    if (!s) s = grow((void **)&f->feature, &cap, need, sizeof *f->feature);
    cap = f->cap_nodes;
    if (!s) s = grow((void **)&f->threshold, &cap, need, sizeof *f->threshold);
    cap = f->cap_nodes;
    if (!s) s = grow((void **)&f->left, &cap, need, sizeof *f->left);
    cap = f->cap_nodes;
    if (!s) s = grow((void **)&f->right, &cap, need, sizeof *f->right);
    cap = f->cap_nodes;
    if (!s) s = grow((void **)&f->flags, &cap, need, sizeof *f->flags);
    cap = f->cap_nodes;
    if (!s) s = grow((void **)&f->value_off, &cap, need, sizeof *f->value_off);
    if (s) return s;
    f->cap_nodes = cap;
    for (int64_t i = f->n_nodes; i < need; i++) {
        f->feature[i] = -1;
        f->threshold[i] = 0;
        f->left[i] = f->right[i] = -1;
        f->flags[i] = 0;
        f->value_off[i] = -1;
    }
    cf_tree *tr = &f->trees[f->n_trees];
    tr->first = f->n_nodes;
    tr->n_nodes = n_nodes;
    tr->output = output;
    f->n_nodes = need;
    *t = f->n_trees++;
    return CANOPY_OK;
}

canopy_status canopy_cf_leaf_values(canopy_forest *f, int32_t t, int32_t node, double **vals) {
    const cf_tree *tr = &f->trees[t];
    int32_t w = cf_leaf_width(f, tr);
    int64_t g = tr->first + node;
    if (f->value_off[g] < 0) {
        if (grow((void **)&f->values, &f->cap_values, f->n_values + w, sizeof(double)))
            return CANOPY_ERR_NOMEM;
        f->value_off[g] = f->n_values;
        memset(f->values + f->n_values, 0, (size_t)w * sizeof(double));
        f->n_values += w;
    }
    *vals = f->values + f->value_off[g];
    return CANOPY_OK;
}

canopy_status canopy_cf_set_base(canopy_forest *f, const double *base, int32_t n) {
    free(f->base);
    f->base = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (!f->base) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    for (int32_t i = 0; i < n; i++) f->base[i] = base ? base[i] : 0.0;
    return CANOPY_OK;
}

canopy_status canopy_cf_validate(const canopy_forest *f, const char *what) {
    if (f->n_outputs < 1)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: the model has no outputs", what);
    if (f->n_features < 1)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: the model has no features", what);
    if (f->n_features > CF_KEY_FEATURE)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: %d features (at most %d)", what,
                           f->n_features, CF_KEY_FEATURE);
    if (f->n_trees < 1) return canopy_fail(CANOPY_ERR_FORMAT, "%s: the model has no trees", what);
    if (!f->base) return canopy_fail(CANOPY_ERR_INTERNAL, "%s: base score not set", what);
    /* Like a NaN leaf value, a non-finite constant would make every prediction NaN/inf. */
    for (int32_t k = 0; k < f->n_outputs; k++)
        if (!isfinite(f->base[k]))
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: base score of output %d is %g (not finite)",
                               what, k, f->base[k]);
    if (!isfinite(f->sigmoid_scale) || !(f->sigmoid_scale > 0.0))
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: sigmoid scale %g must be finite and > 0", what,
                           f->sigmoid_scale);
    int32_t max_nodes = 0;
    for (int32_t t = 0; t < f->n_trees; t++)
        if (f->trees[t].n_nodes > max_nodes) max_nodes = f->trees[t].n_nodes;
    uint8_t *seen = calloc((size_t)max_nodes, 1);
    if (!seen) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    canopy_status s = CANOPY_OK;
    for (int32_t t = 0; t < f->n_trees && !s; t++) {
        const cf_tree *tr = &f->trees[t];
        if (tr->output >= f->n_outputs) {
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: tree %d feeds output %d of %d", what, t,
                            tr->output, f->n_outputs);
            break;
        }
        memset(seen, 0, (size_t)tr->n_nodes);
        seen[0] = 1;
        for (int32_t i = 0; i < tr->n_nodes && !s; i++) {
            int64_t g = tr->first + i;
            if (f->feature[g] < 0) {
                if (f->value_off[g] < 0) {
                    s = canopy_fail(CANOPY_ERR_FORMAT, "%s: tree %d leaf %d has no value", what, t,
                                    i);
                    break;
                }
                const double *v = f->values + f->value_off[g];
                for (int32_t k = 0; k < cf_leaf_width(f, tr); k++)
                    if (!isfinite(v[k]))
                        s = canopy_fail(CANOPY_ERR_FORMAT,
                                        "%s: tree %d leaf %d has a non-finite value", what, t, i);
                continue;
            }
            if (f->feature[g] >= f->n_features) {
                s = canopy_fail(CANOPY_ERR_FORMAT,
                                "%s: tree %d node %d splits on feature %d but the model has %d "
                                "features",
                                what, t, i, f->feature[g], f->n_features);
                break;
            }
            if (isnan(f->threshold[g])) {
                s = canopy_fail(CANOPY_ERR_FORMAT, "%s: tree %d node %d has a NaN threshold", what,
                                t, i);
                break;
            }
            int32_t c[2] = {f->left[g], f->right[g]};
            /* Siblings adjacent, as the importers' breadth-first numbering makes them:
             * the linked layouts (cc, hybrid, df) emit a pair as (left, left + 1). */
            if ((int64_t)c[1] != (int64_t)c[0] + 1) { /* c[0] may be INT32_MAX */
                s = canopy_fail(CANOPY_ERR_FORMAT,
                                "%s: tree %d node %d has children %d and %d, not adjacent", what, t,
                                i, c[0], c[1]);
                break;
            }
            for (int k = 0; k < 2 && !s; k++) {
                /* Children after their parent and each reached once: a real tree, so
                 * every walk ends. */
                if (c[k] <= i || c[k] >= tr->n_nodes || seen[c[k]])
                    s = canopy_fail(CANOPY_ERR_FORMAT,
                                    "%s: tree %d node %d has a bad child index %d (%d nodes)", what,
                                    t, i, c[k], tr->n_nodes);
                else
                    seen[c[k]] = 1;
            }
        }
        for (int32_t i = 0; i < tr->n_nodes && !s; i++)
            if (!seen[i])
                s = canopy_fail(CANOPY_ERR_FORMAT, "%s: tree %d node %d is unreachable", what, t,
                                i);
    }
    free(seen);
    return s;
}

float canopy_cf_le_threshold(double t, int lt) {
    float f = (float)t;
    if (lt ? (double)f >= t : (double)f > t) f = nextafterf(f, -INFINITY);
    return f;
}

int32_t canopy_cf_tree_depth(const canopy_forest *f, int32_t t) {
    /* Children come after parents (checked by canopy_cf_validate), so one forward pass. */
    const cf_tree *tr = &f->trees[t];
    int32_t *d = calloc((size_t)tr->n_nodes, sizeof *d);
    if (!d) return 0;
    int32_t best = 0;
    for (int32_t i = 0; i < tr->n_nodes; i++) {
        int64_t g = tr->first + i;
        if (d[i] > best) best = d[i];
        if (f->feature[g] >= 0) d[f->left[g]] = d[f->right[g]] = d[i] + 1;
    }
    free(d);
    return best;
}

void canopy_forest_get_info(const canopy_forest *f, canopy_forest_info *info) {
    memset(info, 0, sizeof *info);
    info->source = f->source;
    info->objective = f->objective;
    info->n_trees = f->n_trees;
    info->n_features = f->n_features;
    info->n_outputs = f->n_outputs;
    info->n_classes = f->n_classes;
    info->link = f->link;
    info->aggregation = f->aggregation;
    info->n_nodes = f->n_nodes;
    for (int64_t i = 0; i < f->n_nodes; i++) info->n_leaves += f->feature[i] < 0;
    for (int32_t t = 0; t < f->n_trees; t++) {
        int32_t d = canopy_cf_tree_depth(f, t);
        if (d > info->max_depth) info->max_depth = d;
        info->depth_hist[d < CANOPY_FOREST_MAX_DEPTH_HIST ? d : CANOPY_FOREST_MAX_DEPTH_HIST - 1]++;
    }
}

int32_t canopy_forest_output_width(const canopy_forest *f, canopy_forest_output o) {
    return o == CANOPY_FOREST_OUTPUT_CLASS ? 1 : f->n_outputs;
}

/* ------------------------------------------------------------------- names -- */

static const char *const format_names[] = {"auto", "xgboost", "lightgbm", "canopy"};
static const char *const layout_names[] = {"auto", "csr", "hier", "df",    "bf",
                                           "ll",   "sll", "cc",   "hybrid"};
static const char *const engine_names[] = {"auto", "scalar", "vm",     "vm_simd", "simd",
                                           "iter", "enc",    "collab", "ren"};
static const char *const output_names[] = {"raw", "prob", "class"};
static const char *const mapping_names[] = {"auto", "atomic", "atomic_free"};
static const char *const link_names[] = {"identity", "sigmoid", "softmax", "exp"};

#define NAME_OF(tab, i) ((unsigned)(i) < sizeof tab / sizeof tab[0] ? tab[i] : "unknown")

const char *canopy_forest_format_name(canopy_forest_format f) {
    return NAME_OF(format_names, f);
}
const char *canopy_forest_layout_name(canopy_forest_layout l) {
    return NAME_OF(layout_names, l);
}
const char *canopy_forest_engine_name(canopy_forest_engine e) {
    return NAME_OF(engine_names, e);
}
const char *canopy_forest_output_name(canopy_forest_output o) {
    return NAME_OF(output_names, o);
}
const char *canopy_forest_mapping_name(canopy_forest_mapping m) {
    return NAME_OF(mapping_names, m);
}
const char *canopy_forest_link_name(canopy_forest_link l) {
    return NAME_OF(link_names, l);
}

static canopy_status parse_name(const char *what, const char *s, const char *const *names, int n,
                                int *out) {
    for (int i = 0; i < n; i++)
        if (s && strcmp(s, names[i]) == 0) {
            *out = i;
            return CANOPY_OK;
        }
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n) strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    return canopy_fail(CANOPY_ERR_INVALID, "unknown %s '%s' (one of: %s)", what, s ? s : "", list);
}

#define PARSER(fn, type, what, tab)                                                                \
    canopy_status fn(const char *s, type *out) {                                                   \
        int i = 0;                                                                                 \
        canopy_status st = parse_name(what, s, tab, (int)(sizeof tab / sizeof tab[0]), &i);        \
        if (!st) *out = (type)i;                                                                   \
        return st;                                                                                 \
    }
PARSER(canopy_forest_format_parse, canopy_forest_format, "model format", format_names)
PARSER(canopy_forest_layout_parse, canopy_forest_layout, "layout", layout_names)
PARSER(canopy_forest_engine_parse, canopy_forest_engine, "engine", engine_names)
PARSER(canopy_forest_output_parse, canopy_forest_output, "output", output_names)
PARSER(canopy_forest_mapping_parse, canopy_forest_mapping, "mapping", mapping_names)

/* ------------------------------------------------------------- raw trees -- */

canopy_status canopy_cf_raw_alloc(cf_raw_tree *r, int32_t n, int32_t width) {
    memset(r, 0, sizeof *r);
    if (n < 1) return canopy_fail(CANOPY_ERR_FORMAT, "a tree with %d nodes", n);
    r->n = n;
    r->feature = calloc((size_t)n, sizeof *r->feature);
    r->thr = calloc((size_t)n, sizeof *r->thr);
    r->left = calloc((size_t)n, sizeof *r->left);
    r->right = calloc((size_t)n, sizeof *r->right);
    r->flags = calloc((size_t)n, sizeof *r->flags);
    r->value = calloc((size_t)n * (size_t)width, sizeof *r->value);
    if (!r->feature || !r->thr || !r->left || !r->right || !r->flags || !r->value) {
        canopy_cf_raw_free(r);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a tree of %d nodes", n);
    }
    return CANOPY_OK;
}

void canopy_cf_raw_free(cf_raw_tree *r) {
    free(r->feature);
    free(r->thr);
    free(r->left);
    free(r->right);
    free(r->flags);
    free(r->value);
    memset(r, 0, sizeof *r);
}

canopy_status canopy_cf_add_raw_tree(canopy_forest *f, const cf_raw_tree *r, int32_t root,
                                     int32_t output, const char *what) {
    int32_t *newid = malloc((size_t)r->n * sizeof *newid);
    int32_t *queue = malloc((size_t)r->n * sizeof *queue);
    canopy_status s = CANOPY_OK;
    if (!newid || !queue) s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    int32_t head = 0, tail = 0;
    if (!s) {
        for (int32_t i = 0; i < r->n; i++) newid[i] = -1;
        if (root < 0 || root >= r->n)
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: tree %d has no root", what, f->n_trees);
        else {
            newid[root] = tail;
            queue[tail++] = root;
        }
    }
    while (!s && head < tail) {
        int32_t i = queue[head++];
        if (r->feature[i] < 0) continue;
        int32_t c[2] = {r->left[i], r->right[i]};
        for (int k = 0; k < 2 && !s; k++) {
            if (c[k] < 0 || c[k] >= r->n || newid[c[k]] >= 0)
                s = canopy_fail(CANOPY_ERR_FORMAT,
                                "%s: tree %d node %d has a bad child %d (%d nodes, or a cycle)",
                                what, f->n_trees, i, c[k], r->n);
            else {
                newid[c[k]] = tail;
                queue[tail++] = c[k];
            }
        }
    }
    int32_t t = 0;
    if (!s) s = canopy_cf_add_tree(f, tail, output, &t);
    for (int32_t j = 0; j < tail && !s; j++) {
        int32_t i = queue[j];
        int64_t g = f->trees[t].first + j;
        if (r->feature[i] >= 0) {
            f->feature[g] = r->feature[i];
            f->threshold[g] = r->thr[i];
            f->left[g] = newid[r->left[i]];
            f->right[g] = newid[r->right[i]];
            f->flags[g] = r->flags[i];
        } else {
            double *v;
            s = canopy_cf_leaf_values(f, t, j, &v);
            int32_t w = cf_leaf_width(f, &f->trees[t]);
            if (!s) memcpy(v, r->value + (size_t)i * (size_t)w, (size_t)w * sizeof *v);
        }
    }
    free(newid);
    free(queue);
    return s;
}
