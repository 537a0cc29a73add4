/* SPDX-License-Identifier: MIT */
/* XGBoost JSON models (Booster.save_model("m.json")), gbtree and dart boosters.
 *
 * XGBoost goes left when x < split_condition, a missing value follows default_left,
 * leaves hold their weight in split_conditions (learning rate already applied), and
 * each tree feeds the output named by tree_info. base_score is stored in the output
 * space (a probability for logistic objectives) and since XGBoost 3 as a vector
 * "[b0,b1,...]"; the margin it adds is the objective's ProbToMargin of it.
 * The file is read with the JSON tape reader (json_tape.h): a 20 MB model loads
 * several times faster than through json-c's DOM (bench/results/predictor.md). */
#include "forest/forest.h"
#include "forest/json_tape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct objective_info {
    const char *name;
    canopy_forest_link link;
    int margin;  /* base_score -> margin: 0 identity, 1 logit, 2 log */
    int classes; /* 2 binary, -1 num_class, 0 regression */
} objective_info;

static const objective_info objectives[] = {
    {"reg:squarederror", CANOPY_LINK_IDENTITY, 0, 0},
    {"reg:linear", CANOPY_LINK_IDENTITY, 0, 0},
    {"reg:squaredlogerror", CANOPY_LINK_IDENTITY, 0, 0},
    {"reg:pseudohubererror", CANOPY_LINK_IDENTITY, 0, 0},
    {"reg:absoluteerror", CANOPY_LINK_IDENTITY, 0, 0},
    {"reg:quantileerror", CANOPY_LINK_IDENTITY, 0, 0},
    {"reg:logistic", CANOPY_LINK_SIGMOID, 1, 0},
    {"binary:logistic", CANOPY_LINK_SIGMOID, 1, 2},
    {"binary:logitraw", CANOPY_LINK_IDENTITY, 1, 2},
    {"binary:hinge", CANOPY_LINK_IDENTITY, 0, 2},
    {"count:poisson", CANOPY_LINK_EXP, 2, 0},
    {"reg:gamma", CANOPY_LINK_EXP, 2, 0},
    {"reg:tweedie", CANOPY_LINK_EXP, 2, 0},
    {"multi:softprob", CANOPY_LINK_SOFTMAX, 0, -1},
    {"multi:softmax", CANOPY_LINK_SOFTMAX, 0, -1},
    {"rank:pairwise", CANOPY_LINK_IDENTITY, 0, 0},
    {"rank:ndcg", CANOPY_LINK_IDENTITY, 0, 0},
    {"rank:map", CANOPY_LINK_IDENTITY, 0, 0},
};

/* base_score: "5E-1" or "[5E-1]" or "[a,b,c]". */
static canopy_status parse_base(const char *s, const char *name, double *vals, int32_t cap,
                                int32_t *n) {
    *n = 0;
    const char *p = s;
    while (*p == ' ' || *p == '[') p++;
    while (*p && *p != ']') {
        char *end;
        double v = strtod(p, &end);
        if (end == p || *n >= cap)
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: cannot read base_score \"%s\"", name, s);
        vals[(*n)++] = v;
        p = end;
        while (*p == ' ' || *p == ',') p++;
    }
    if (*n == 0) return canopy_fail(CANOPY_ERR_FORMAT, "%s: empty base_score", name);
    return CANOPY_OK;
}

static const char *feature_name(const cf_jdoc *d, cf_jval learner, int32_t f, char *buf,
                                size_t len) {
    cf_jval names = canopy_cf_jfind(d, learner, "feature_names"), v = -1;
    if (names >= 0 && canopy_cf_jtype_of(d, names) == CF_JARRAY) {
        int32_t i = 0;
        for (v = canopy_cf_jfirst(d, names); v >= 0 && i < f; v = canopy_cf_jnext(d, names, v)) i++;
    }
    char *s = v >= 0 ? canopy_cf_jstrdup(d, v) : NULL;
    if (s)
        snprintf(buf, len, "%d ('%s')", f, s);
    else
        snprintf(buf, len, "%d", f);
    free(s);
    return buf;
}

/* The node arrays a tree needs, read once into doubles. */
enum { COL_LEFT, COL_RIGHT, COL_FEATURE, COL_COND, COL_DEFAULT, COL_TYPE, N_COLS };
static const char *const col_key[N_COLS] = {"left_children",    "right_children", "split_indices",
                                            "split_conditions", "default_left",   "split_type"};

typedef struct tree_scratch {
    double *col;
    int64_t cap;
} tree_scratch;

static canopy_status read_tree(const cf_jdoc *d, canopy_forest *f, cf_jval learner, cf_jval tree,
                               int32_t idx, int32_t output, double scale, const char *name,
                               tree_scratch *ws) {
    char where[96];
    snprintf(where, sizeof where, "trees[%d]", idx);
    cf_jval tp, arr[N_COLS];
    canopy_status s = canopy_cf_jget(d, tree, "tree_param", CF_JOBJECT, name, where, &tp);
    cf_jval slv = s ? -1 : canopy_cf_jfind(d, tp, "size_leaf_vector");
    if (slv >= 0) {
        double w = 1;
        s = canopy_cf_jnumber(d, slv, name, "size_leaf_vector", &w);
        if (!s && w > 1)
            return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                               "%s: multi-target trees (size_leaf_vector = %g, "
                               "multi_strategy=multi_output_tree) are not supported",
                               name, w);
    }
    for (int c = 0; c < COL_TYPE && !s; c++)
        s = canopy_cf_jget(d, tree, col_key[c], CF_JARRAY, name, where, &arr[c]);
    if (s) return s;
    arr[COL_TYPE] = canopy_cf_jfind(d, tree, "split_type");
    int64_t n = canopy_cf_jcount(d, arr[COL_LEFT]), n_type = 0;
    int same = n >= 1 && n <= INT32_MAX;
    for (int c = COL_RIGHT; c < COL_TYPE; c++) same = same && canopy_cf_jcount(d, arr[c]) == n;
    if (!same)
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: %s: node arrays of different lengths (left_children has %lld)",
                           name, where, (long long)n);
    if (arr[COL_TYPE] >= 0 && canopy_cf_jtype_of(d, arr[COL_TYPE]) == CF_JARRAY) {
        n_type = canopy_cf_jcount(d, arr[COL_TYPE]);
        if (n_type > n) n_type = n;
    }
    if (ws->cap < n) {
        double *nc = realloc(ws->col, (size_t)n * N_COLS * sizeof *nc);
        if (!nc) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory reading %s", name);
        ws->col = nc;
        ws->cap = n;
    }
    double *col[N_COLS];
    for (int c = 0; c < N_COLS; c++) col[c] = ws->col + (size_t)c * (size_t)n;
    for (int c = 0; c < COL_TYPE && !s; c++)
        s = canopy_cf_jnumbers(d, arr[c], n, name, col_key[c], col[c]);
    if (!s && n_type)
        s = canopy_cf_jnumbers(d, arr[COL_TYPE], n_type, name, "split_type", col[COL_TYPE]);
    if (s) return s;
    cf_raw_tree r;
    s = canopy_cf_raw_alloc(&r, (int32_t)n, 1);
    for (int32_t i = 0; i < n && !s; i++) {
        double l = col[COL_LEFT][i], rr = col[COL_RIGHT][i], fi = col[COL_FEATURE][i];
        double c = col[COL_COND][i];
        if (l < 0) {
            r.feature[i] = -1;
            r.value[i] = (double)(float)c * scale;
            continue;
        }
        /* written to reject NaN too (a numeric string "nan" is a number) */
        if (!(fi >= 0 && fi < f->n_features && l < n && rr >= 0 && rr < n)) {
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: %s node %d: bad split index or child", name,
                            where, i);
            break;
        }
        if (i < n_type && col[COL_TYPE][i] != 0) {
            char fb[96];
            s = canopy_fail(CANOPY_ERR_UNSUPPORTED,
                            "%s: categorical split on feature %s (tree %d node %d) is not "
                            "supported",
                            name, feature_name(d, learner, (int32_t)fi, fb, sizeof fb), idx, i);
            break;
        }
        r.feature[i] = (int32_t)fi;
        r.thr[i] = (float)c; /* XGBoost compares against the float32 value */
        r.left[i] = (int32_t)l;
        r.right[i] = (int32_t)rr;
        r.flags[i] = CF_CMP_LT | (col[COL_DEFAULT][i] != 0 ? CF_DEFAULT_LEFT : 0);
    }
    if (!s) s = canopy_cf_add_raw_tree(f, &r, 0, output, name);
    canopy_cf_raw_free(&r);
    return s;
}

/* learner.gradient_booster's tree container (gbtree, or dart's inner gbtree) and dart's
 * weight_drop. */
static canopy_status find_model(const cf_jdoc *d, cf_jval gb, const char *name, cf_jval *model,
                                cf_jval *wdrop) {
    cf_jval gbname, inner;
    canopy_status s = canopy_cf_jget(d, gb, "name", CF_JSTRING, name, "gradient_booster", &gbname);
    if (s) return s;
    if (canopy_cf_jstreq(d, gbname, "gbtree"))
        return canopy_cf_jget(d, gb, "model", CF_JOBJECT, name, "gradient_booster", model);
    if (canopy_cf_jstreq(d, gbname, "dart")) {
        s = canopy_cf_jget(d, gb, "gbtree", CF_JOBJECT, name, "gradient_booster", &inner);
        if (!s) s = canopy_cf_jget(d, inner, "model", CF_JOBJECT, name, "gbtree", model);
        if (!s) s = canopy_cf_jget(d, gb, "weight_drop", CF_JARRAY, name, "dart", wdrop);
        return s;
    }
    char *booster = canopy_cf_jstrdup(d, gbname);
    s = canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: booster '%s' is not supported (gbtree, dart)",
                    name, booster ? booster : "?");
    free(booster);
    return s;
}

/* An optional numeric member of obj; absent leaves *out unchanged. */
static canopy_status opt_number(const cf_jdoc *d, cf_jval obj, const char *key, const char *name,
                                double *out) {
    cf_jval v = canopy_cf_jfind(d, obj, key);
    return v < 0 ? CANOPY_OK : canopy_cf_jnumber(d, v, name, key, out);
}

/* base_score in margin space, one value per output. */
static canopy_status read_base(const cf_jdoc *d, cf_jval lmp, const objective_info *oi,
                               const char *objective, const char *name, canopy_forest *f) {
    double *base = calloc((size_t)f->n_outputs, sizeof *base);
    if (!base) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    canopy_status s = CANOPY_OK;
    cf_jval v = canopy_cf_jfind(d, lmp, "base_score");
    if (v >= 0) {
        int32_t nb = 0;
        char *text = canopy_cf_jtype_of(d, v) == CF_JSTRING ? canopy_cf_jstrdup(d, v) : NULL;
        if (text)
            s = parse_base(text, name, base, f->n_outputs, &nb);
        else
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: base_score is not a string", name);
        free(text);
        if (!s && nb == 1)
            for (int32_t k = 1; k < f->n_outputs; k++) base[k] = base[0];
        else if (!s && nb != f->n_outputs)
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: base_score has %d values for %d outputs", name,
                            nb, f->n_outputs);
    } else {
        for (int32_t k = 0; k < f->n_outputs; k++) base[k] = 0.5;
    }
    for (int32_t k = 0; k < f->n_outputs && !s; k++) {
        /* XGBoost holds base_score as float32. */
        double b = (float)base[k];
        if (oi->margin == 1) {
            if (!(b > 0 && b < 1))
                s = canopy_fail(CANOPY_ERR_FORMAT, "%s: base_score %g must be in (0, 1) for %s",
                                name, b, objective);
            else
                b = log(b / (1 - b));
        } else if (oi->margin == 2) {
            if (!(b > 0))
                s = canopy_fail(CANOPY_ERR_FORMAT, "%s: base_score %g must be > 0 for %s", name, b,
                                objective);
            else
                b = log(b);
        }
        base[k] = (float)b;
    }
    if (!s) s = canopy_cf_set_base(f, base, f->n_outputs);
    free(base);
    return s;
}

static canopy_status read_model(const cf_jdoc *d, const char *name, canopy_forest **out) {
    cf_jval learner, lmp, gb, obj, objname, model, trees, v, info, wdrop = -1;
    double num_class = 0, num_feature = 0, num_target = 1;
    canopy_status s = canopy_cf_jget(d, 0, "learner", CF_JOBJECT, name, "the model", &learner);
    if (!s)
        s = canopy_cf_jget(d, learner, "learner_model_param", CF_JOBJECT, name, "learner", &lmp);
    if (!s) s = canopy_cf_jget(d, learner, "gradient_booster", CF_JOBJECT, name, "learner", &gb);
    if (!s) s = canopy_cf_jget(d, learner, "objective", CF_JOBJECT, name, "learner", &obj);
    if (!s) s = canopy_cf_jget(d, obj, "name", CF_JSTRING, name, "objective", &objname);
    if (!s) s = find_model(d, gb, name, &model, &wdrop);
    if (s) return s;
    const objective_info *oi = NULL;
    for (size_t i = 0; i < sizeof objectives / sizeof objectives[0]; i++)
        if (canopy_cf_jstreq(d, objname, objectives[i].name)) oi = &objectives[i];
    if (!oi) {
        char *o = canopy_cf_jstrdup(d, objname);
        s = canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: objective '%s' is not supported", name,
                        o ? o : "?");
        free(o);
        return s;
    }
    s = canopy_cf_jget(d, lmp, "num_feature", CF_JSTRING, name, "learner_model_param", &v);
    if (!s) s = canopy_cf_jnumber(d, v, name, "num_feature", &num_feature);
    if (!s) s = opt_number(d, lmp, "num_class", name, &num_class);
    if (!s) s = opt_number(d, lmp, "num_target", name, &num_target);
    if (!s) s = canopy_cf_jget(d, model, "trees", CF_JARRAY, name, "model", &trees);
    if (s) return s;
    info = canopy_cf_jfind(d, model, "tree_info");

    canopy_forest *f = NULL;
    s = canopy_cf_forest_new(&f);
    if (s) return s;
    *out = f;
    snprintf(f->source, sizeof f->source, "xgboost");
    snprintf(f->objective, sizeof f->objective, "%s", oi->name);
    if (num_feature < 1 || num_feature > CF_KEY_FEATURE || num_class < 0 || num_class > 1e6 ||
        num_target < 1 || num_target > 1e6)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: bad num_feature/num_class/num_target", name);
    f->n_features = (int32_t)num_feature;
    f->n_outputs = num_class > 1 ? (int32_t)num_class : (int32_t)num_target;
    f->n_classes = oi->classes == 2 ? 2 : oi->classes < 0 ? (int32_t)num_class : 0;
    f->link = oi->link;
    f->aggregation = CANOPY_AGG_SUM;
    s = read_base(d, lmp, oi, oi->name, name, f);
    if (s) return s;

    int64_t nt = canopy_cf_jcount(d, trees);
    cf_jval gmp = canopy_cf_jfind(d, model, "gbtree_model_param");
    cf_jval ntv = gmp >= 0 ? canopy_cf_jfind(d, gmp, "num_trees") : -1;
    if (ntv >= 0) {
        double declared;
        s = canopy_cf_jnumber(d, ntv, name, "num_trees", &declared);
        if (!s && declared != (double)nt)
            s = canopy_fail(CANOPY_ERR_FORMAT,
                            "%s: gbtree_model_param.num_trees is %g but the model has %lld trees",
                            name, declared, (long long)nt);
        if (s) return s;
    }
    if (info >= 0 && (canopy_cf_jtype_of(d, info) != CF_JARRAY || canopy_cf_jcount(d, info) != nt))
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: tree_info does not match the %lld trees", name,
                           (long long)nt);
    if (wdrop >= 0 && canopy_cf_jcount(d, wdrop) != nt)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: weight_drop does not match the %lld trees", name,
                           (long long)nt);
    double *group = calloc((size_t)nt + 1, sizeof *group), *scale = NULL;
    if (group) scale = malloc(((size_t)nt + 1) * sizeof *scale);
    if (!scale) {
        free(group);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory reading %s", name);
    }
    for (int64_t i = 0; i < nt; i++) scale[i] = 1;
    if (info >= 0) s = canopy_cf_jnumbers(d, info, nt, name, "tree_info", group);
    if (!s && wdrop >= 0) s = canopy_cf_jnumbers(d, wdrop, nt, name, "weight_drop", scale);
    tree_scratch ws = {0};
    cf_jval tree = canopy_cf_jfirst(d, trees);
    for (int64_t i = 0; i < nt && !s; i++, tree = canopy_cf_jnext(d, trees, tree)) {
        if (!(group[i] >= 0 && group[i] < f->n_outputs))
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: tree %lld feeds output %g of %d", name,
                            (long long)i, group[i], f->n_outputs);
        else
            s = read_tree(d, f, learner, tree, (int32_t)i, (int32_t)group[i], scale[i], name, &ws);
    }
    free(ws.col);
    free(group);
    free(scale);
    if (!s) s = canopy_cf_validate(f, name);
    return s;
}

canopy_status canopy_cf_import_xgboost(const char *buf, size_t len, const char *name,
                                       canopy_forest **out) {
    *out = NULL;
    cf_jdoc doc;
    canopy_status s = canopy_cf_jparse(buf, len, name, &doc);
    if (s) return s;
    canopy_forest *f = NULL;
    s = read_model(&doc, name, &f);
    canopy_cf_jfree(&doc);
    if (s) {
        canopy_forest_free(f);
        f = NULL;
    }
    *out = f;
    return s;
}
