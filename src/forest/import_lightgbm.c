/* SPDX-License-Identifier: MIT */
/* LightGBM text models (Booster.save_model("m.txt")).
 *
 * A tree lists its internal nodes (split_feature, threshold, decision_type,
 * left_child, right_child; a child < 0 is leaf ~child) and then leaf_value.
 * decision_type bits: 0 categorical, 1 default left, 2-3 missing type (0 none: NaN is
 * read as 0; 1 zero: 0 and NaN take the default; 2 NaN: NaN takes the default).
 * LightGBM goes left when x <= threshold (a double), accumulates in double, and bakes
 * boost_from_average into the first trees, so the base score is 0. */
#include "forest/forest.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kv {
    const char *key; /* points into the buffer copy, NUL-terminated */
    const char *val;
} kv;

/* Splits a block of lines into key=value pairs (in place). */
typedef struct block {
    kv *items;
    int n, cap;
} block;

static canopy_status block_add(block *b, const char *k, const char *v) {
    if (b->n == b->cap) {
        int c = b->cap ? b->cap * 2 : 32;
        kv *ni = realloc(b->items, (size_t)c * sizeof *ni);
        if (!ni) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
        b->items = ni;
        b->cap = c;
    }
    b->items[b->n].key = k;
    b->items[b->n].val = v;
    b->n++;
    return CANOPY_OK;
}

static const char *block_get(const block *b, const char *key) {
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->items[i].key, key) == 0) return b->items[i].val;
    return NULL;
}

/* Reads exactly n numbers from a space-separated list. */
static canopy_status read_list(const block *b, const char *key, int32_t n, double *out,
                               const char *name, int32_t tree) {
    const char *s = block_get(b, key);
    if (!s) return canopy_fail(CANOPY_ERR_FORMAT, "%s: Tree=%d has no %s line", name, tree, key);
    const char *p = s;
    for (int32_t i = 0; i < n; i++) {
        char *end;
        errno = 0;
        out[i] = strtod(p, &end);
        if (end == p)
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: Tree=%d: %s has %d values, expected %d",
                               name, tree, key, i, n);
        p = end;
    }
    while (*p == ' ') p++;
    if (*p)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: Tree=%d: %s has more than %d values", name, tree,
                           key, n);
    return CANOPY_OK;
}

static canopy_status header_int(const block *b, const char *key, const char *name, int def,
                                int32_t *out) {
    const char *s = block_get(b, key);
    if (!s) {
        if (def < 0)
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: missing header line %s=", name, key);
        *out = def;
        return CANOPY_OK;
    }
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 0 || v > 1 << 28)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: bad %s=%s", name, key, s);
    *out = (int32_t)v;
    return CANOPY_OK;
}

/* "objective=binary sigmoid:1" and friends. */
static canopy_status set_objective(canopy_forest *f, const char *obj, int32_t num_class,
                                   const char *name) {
    char first[64] = "";
    sscanf(obj ? obj : "", "%63s", first);
    snprintf(f->objective, sizeof f->objective, "%s", obj ? obj : "none");
    const char *sg = obj ? strstr(obj, "sigmoid:") : NULL;
    if (sg) f->sigmoid_scale = strtod(sg + 8, NULL);
    static const char *const ident[] = {
        "regression", "regression_l1", "huber",  "fair", "quantile", "mape",
        "lambdarank", "rank_xendcg",   "custom", "none", ""};
    for (size_t i = 0; i < sizeof ident / sizeof ident[0]; i++)
        if (strcmp(first, ident[i]) == 0) {
            f->link = CANOPY_LINK_IDENTITY;
            return CANOPY_OK;
        }
    if (!strcmp(first, "binary") || !strcmp(first, "cross_entropy")) {
        f->link = CANOPY_LINK_SIGMOID;
        f->n_classes = 2;
    } else if ((!strcmp(first, "multiclass") || !strcmp(first, "multiclassova")) &&
               (num_class < 2 || num_class != f->n_outputs)) {
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: objective %s needs num_class >= 2 equal to "
                           "num_tree_per_iteration, not num_class=%d and %d",
                           name, first, num_class, f->n_outputs);
    } else if (!strcmp(first, "multiclass")) {
        f->link = CANOPY_LINK_SOFTMAX;
        f->n_classes = num_class;
    } else if (!strcmp(first, "multiclassova")) {
        f->link = CANOPY_LINK_SIGMOID; /* one-vs-all: a sigmoid per class */
        f->n_classes = num_class;
    } else if (!strcmp(first, "poisson") || !strcmp(first, "gamma") || !strcmp(first, "tweedie")) {
        f->link = CANOPY_LINK_EXP;
    } else {
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: objective '%s' is not supported", name,
                           first);
    }
    if (!(f->sigmoid_scale > 0)) f->sigmoid_scale = 1;
    return CANOPY_OK;
}

static const char *feature_label(const block *h, int32_t feat, char *buf, size_t len) {
    const char *names = block_get(h, "feature_names");
    int32_t i = 0;
    const char *p = names;
    while (p && *p && i < feat) {
        p = strchr(p, ' ');
        if (p) p++;
        i++;
    }
    if (p && *p) {
        size_t n = strcspn(p, " ");
        snprintf(buf, len, "%d ('%.*s')", feat, (int)(n < 60 ? n : 60), p);
    } else
        snprintf(buf, len, "%d", feat);
    return buf;
}

static canopy_status read_tree(canopy_forest *f, const block *h, const block *b, int32_t tree,
                               int32_t output, const char *name) {
    int32_t nl = 0;
    const char *s_nl = block_get(b, "num_leaves");
    if (!s_nl) return canopy_fail(CANOPY_ERR_FORMAT, "%s: Tree=%d has no num_leaves", name, tree);
    char *end;
    long v = strtol(s_nl, &end, 10);
    if (end == s_nl || *end || v < 1 || v > 1 << 28)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: Tree=%d: bad num_leaves=%s", name, tree, s_nl);
    nl = (int32_t)v;
    /* Each leaf value takes at least 2 bytes ("0 "): a count the list cannot hold is
     * refused before the arrays for it are allocated. */
    const char *s_lv = block_get(b, "leaf_value");
    if (!s_lv || (size_t)nl > strlen(s_lv) / 2 + 1)
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: Tree=%d: num_leaves=%d but leaf_value holds fewer values", name,
                           tree, nl);
    const char *lin = block_get(b, "is_linear");
    if (lin && atoi(lin) != 0)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "%s: Tree=%d is a linear tree (linear_tree=true); not supported", name,
                           tree);
    int32_t ni = nl - 1, n = ni + nl;
    double *buf = malloc((size_t)(5 * ni + nl + 1) * sizeof *buf);
    if (!buf)
        return canopy_fail(CANOPY_ERR_NOMEM, "%s: Tree=%d: out of memory allocating %zu bytes",
                           name, tree, (size_t)(5 * ni + nl + 1) * sizeof *buf);
    double *sf = buf, *th = sf + ni, *dt = th + ni, *lc = dt + ni, *rc = lc + ni, *lv = rc + ni;
    canopy_status s = CANOPY_OK;
    if (ni > 0) {
        s = read_list(b, "split_feature", ni, sf, name, tree);
        if (!s) s = read_list(b, "threshold", ni, th, name, tree);
        if (!s) s = read_list(b, "decision_type", ni, dt, name, tree);
        if (!s) s = read_list(b, "left_child", ni, lc, name, tree);
        if (!s) s = read_list(b, "right_child", ni, rc, name, tree);
    }
    if (!s) s = read_list(b, "leaf_value", nl, lv, name, tree);
    cf_raw_tree r = {0};
    if (!s) s = canopy_cf_raw_alloc(&r, n, 1);
    for (int32_t i = 0; i < ni && !s; i++) {
        /* ranges before the int conversions (undefined outside the type; NaN fails) */
        if (!(sf[i] >= 0 && sf[i] < f->n_features && lc[i] < ni && rc[i] < ni && lc[i] >= -nl &&
              rc[i] >= -nl && dt[i] >= 0 && dt[i] < 256)) {
            s = canopy_fail(CANOPY_ERR_FORMAT,
                            "%s: Tree=%d node %d: bad feature, child or decision type", name, tree,
                            i);
            break;
        }
        int d = (int)dt[i];
        char fb[96];
        if (d & 1) {
            s = canopy_fail(CANOPY_ERR_UNSUPPORTED,
                            "%s: categorical split on feature %s (Tree=%d) is not supported", name,
                            feature_label(h, (int32_t)sf[i], fb, sizeof fb), tree);
            break;
        }
        int missing = (d >> 2) & 3, dl = (d >> 1) & 1;
        r.feature[i] = (int32_t)sf[i];
        r.thr[i] = th[i];
        /* leaf j lives at raw id ni + j */
        r.left[i] = lc[i] < 0 ? ni + (int32_t)(~(int64_t)lc[i]) : (int32_t)lc[i];
        r.right[i] = rc[i] < 0 ? ni + (int32_t)(~(int64_t)rc[i]) : (int32_t)rc[i];
        if (missing == 0)
            r.flags[i] = 0.0 <= th[i] ? CF_DEFAULT_LEFT : 0; /* NaN is read as 0 */
        else if (missing == 1)
            r.flags[i] = CF_MISS_ZERO | (dl ? CF_DEFAULT_LEFT : 0);
        else
            r.flags[i] = dl ? CF_DEFAULT_LEFT : 0;
    }
    for (int32_t j = 0; j < nl && !s; j++) {
        r.feature[ni + j] = -1;
        r.value[ni + j] = lv[j];
    }
    if (!s) s = canopy_cf_add_raw_tree(f, &r, 0, output, name);
    canopy_cf_raw_free(&r);
    free(buf);
    return s;
}

canopy_status canopy_cf_import_lightgbm(const char *text, size_t len, const char *name,
                                        canopy_forest **out) {
    *out = NULL;
    char *copy = malloc(len + 1); /* split into lines in place */
    if (!copy)
        return canopy_fail(CANOPY_ERR_NOMEM, "%s: out of memory copying %zu bytes", name, len);
    memcpy(copy, text, len);
    copy[len] = '\0';
    block header = {0}, tb = {0};
    canopy_forest *f = NULL;
    canopy_status s = canopy_cf_forest_new(&f);
    int average = 0, in_tree = 0, ended = 0;
    int32_t tree_no = -1, n_read = 0, ntpi = 1, num_class = 1, max_feat = 0;
    /* Line by line: header, then "Tree=k" blocks separated by blank lines. */
    for (char *line = copy; line && !s;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        size_t ll = strlen(line);
        if (ll && line[ll - 1] == '\r') line[--ll] = '\0';
        char *next = nl ? nl + 1 : NULL;
        int is_tree = strncmp(line, "Tree=", 5) == 0;
        int is_end = strcmp(line, "end of trees") == 0;
        if ((is_tree || is_end) && !in_tree && tree_no < 0) {
            /* header complete */
            s = header_int(&header, "num_class", name, 1, &num_class);
            if (!s) s = header_int(&header, "num_tree_per_iteration", name, 1, &ntpi);
            if (!s) s = header_int(&header, "max_feature_idx", name, -1, &max_feat);
            if (!s && ntpi < 1)
                s = canopy_fail(CANOPY_ERR_FORMAT, "%s: num_tree_per_iteration=0", name);
            if (!s && num_class < 1) s = canopy_fail(CANOPY_ERR_FORMAT, "%s: num_class=0", name);
            /* Each tree takes more than 16 bytes of text ("Tree=0" and its lists). */
            if (!s && (size_t)ntpi > len / 16 + 1)
                s = canopy_fail(CANOPY_ERR_FORMAT,
                                "%s: num_tree_per_iteration=%d but the file holds far fewer trees",
                                name, ntpi);
            if (s) break;
            f->n_features = max_feat + 1;
            f->n_outputs = ntpi;
            f->aggregation = average ? CANOPY_AGG_MEAN : CANOPY_AGG_SUM;
            s = set_objective(f, block_get(&header, "objective"), num_class, name);
            if (!s) s = canopy_cf_set_base(f, NULL, f->n_outputs);
            if (s) break;
        }
        if ((is_tree || is_end) && in_tree) {
            s = read_tree(f, &header, &tb, n_read, n_read % ntpi, name);
            n_read++;
            tb.n = 0;
            in_tree = 0;
            if (s) break;
        }
        if (is_end) {
            ended = 1;
            break;
        }
        if (is_tree) {
            tree_no = atoi(line + 5);
            if (tree_no != n_read) {
                s = canopy_fail(CANOPY_ERR_FORMAT, "%s: found Tree=%d where Tree=%d was expected",
                                name, tree_no, n_read);
                break;
            }
            in_tree = 1;
        } else if (ll) {
            char *eq = strchr(line, '=');
            if (eq) {
                *eq = '\0';
                s = block_add(in_tree ? &tb : &header, line, eq + 1);
            } else if (!in_tree && tree_no < 0 && strcmp(line, "average_output") == 0) {
                average = 1;
            }
        }
        line = next;
    }
    if (!s && !ended)
        s = canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated LightGBM model (no \"end of trees\")",
                        name);
    if (!s && n_read % ntpi != 0)
        s = canopy_fail(CANOPY_ERR_FORMAT, "%s: %d trees is not a multiple of %d per iteration",
                        name, n_read, ntpi);
    if (!s) {
        snprintf(f->source, sizeof f->source, "lightgbm");
        s = canopy_cf_validate(f, name);
    }
    free(header.items);
    free(tb.items);
    free(copy);
    if (s) {
        canopy_forest_free(f);
        f = NULL;
    }
    *out = f;
    return s;
}
