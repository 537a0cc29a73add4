/* SPDX-License-Identifier: MIT */
/* XGBoost JSON models (Booster.save_model("m.json")), gbtree and dart boosters.
 *
 * XGBoost goes left when x < split_condition, a missing value follows default_left,
 * leaves hold their weight in split_conditions (learning rate already applied), and
 * each tree feeds the output named by tree_info. base_score is stored in the output
 * space (a probability for logistic objectives) and since XGBoost 3 as a vector
 * "[b0,b1,...]"; the margin it adds is the objective's ProbToMargin of it. */
#include "forest/forest.h"

#include <json-c/json.h>

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

static canopy_status num_at(json_object *arr, size_t i, const char *name, const char *where,
                            double *out) {
    json_object *v = json_object_array_get_idx(arr, i);
    if (!v) return canopy_fail(CANOPY_ERR_FORMAT, "%s: %s too short", name, where);
    return cf_json_number(v, name, where, out);
}

static const char *feature_name(json_object *learner, int32_t f, char *buf, size_t len) {
    json_object *names = NULL;
    if (json_object_object_get_ex(learner, "feature_names", &names) &&
        json_object_is_type(names, json_type_array) &&
        (size_t)f < json_object_array_length(names)) {
        snprintf(buf, len, "%d ('%s')", f,
                 json_object_get_string(json_object_array_get_idx(names, (size_t)f)));
    } else
        snprintf(buf, len, "%d", f);
    return buf;
}

static canopy_status read_tree(canopy_forest *f, json_object *learner, json_object *tree,
                               int32_t idx, int32_t output, double scale, const char *name) {
    char where[96];
    snprintf(where, sizeof where, "trees[%d]", idx);
    json_object *tp, *lc, *rc, *si, *sc, *dl, *st = NULL;
    canopy_status s = cf_json_get(tree, "tree_param", json_type_object, name, where, &tp);
    json_object *slv = NULL;
    if (!s && json_object_object_get_ex(tp, "size_leaf_vector", &slv)) {
        double w = 1;
        s = cf_json_number(slv, name, "size_leaf_vector", &w);
        if (!s && w > 1)
            return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                               "%s: multi-target trees (size_leaf_vector = %g, "
                               "multi_strategy=multi_output_tree) are not supported",
                               name, w);
    }
    if (!s) s = cf_json_get(tree, "left_children", json_type_array, name, where, &lc);
    if (!s) s = cf_json_get(tree, "right_children", json_type_array, name, where, &rc);
    if (!s) s = cf_json_get(tree, "split_indices", json_type_array, name, where, &si);
    if (!s) s = cf_json_get(tree, "split_conditions", json_type_array, name, where, &sc);
    if (!s) s = cf_json_get(tree, "default_left", json_type_array, name, where, &dl);
    if (s) return s;
    json_object_object_get_ex(tree, "split_type", &st);
    int32_t n = (int32_t)json_object_array_length(lc);
    if (n < 1 || (int32_t)json_object_array_length(rc) != n ||
        (int32_t)json_object_array_length(si) != n || (int32_t)json_object_array_length(sc) != n ||
        (int32_t)json_object_array_length(dl) != n)
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: %s: node arrays of different lengths (left_children has %d)", name,
                           where, n);
    cf_raw_tree r;
    s = cf_raw_alloc(&r, n, 1);
    for (int32_t i = 0; i < n && !s; i++) {
        double l, rr, fi, c, d;
        s = num_at(lc, (size_t)i, name, "left_children", &l);
        if (!s) s = num_at(rc, (size_t)i, name, "right_children", &rr);
        if (!s) s = num_at(si, (size_t)i, name, "split_indices", &fi);
        if (!s) s = num_at(sc, (size_t)i, name, "split_conditions", &c);
        if (!s) s = num_at(dl, (size_t)i, name, "default_left", &d);
        if (s) break;
        if (l < 0) {
            r.feature[i] = -1;
            r.value[i] = (double)(float)c * scale;
            continue;
        }
        if (st && (size_t)i < json_object_array_length(st)) {
            double kind = 0;
            s = num_at(st, (size_t)i, name, "split_type", &kind);
            char fb[96];
            if (!s && kind != 0)
                s = canopy_fail(CANOPY_ERR_UNSUPPORTED,
                                "%s: categorical split on feature %s (tree %d node %d) is not "
                                "supported",
                                name, feature_name(learner, (int32_t)fi, fb, sizeof fb), idx, i);
            if (s) break;
        }
        if (fi < 0 || fi >= f->n_features || l >= n || rr < 0 || rr >= n) {
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: %s node %d: bad split index or child", name,
                            where, i);
            break;
        }
        r.feature[i] = (int32_t)fi;
        r.thr[i] = (float)c; /* XGBoost compares against the float32 value */
        r.left[i] = (int32_t)l;
        r.right[i] = (int32_t)rr;
        r.flags[i] = CF_CMP_LT | (d != 0 ? CF_DEFAULT_LEFT : 0);
    }
    if (!s) s = cf_add_raw_tree(f, &r, 0, output, name);
    cf_raw_free(&r);
    return s;
}

canopy_status cf_import_xgboost(const char *buf, size_t len, const char *name,
                                canopy_forest **out) {
    json_object *root;
    canopy_status s = cf_json_parse(buf, len, name, &root);
    if (s) return s;
    canopy_forest *f = NULL;
    json_object *learner, *lmp, *gb, *obj, *objname, *gbname, *model, *trees, *info = NULL,
                                                                              *wdrop = NULL;
    double num_class = 0, num_feature = 0, num_target = 1;
    s = cf_json_get(root, "learner", json_type_object, name, "the model", &learner);
    if (!s)
        s = cf_json_get(learner, "learner_model_param", json_type_object, name, "learner", &lmp);
    if (!s) s = cf_json_get(learner, "gradient_booster", json_type_object, name, "learner", &gb);
    if (!s) s = cf_json_get(learner, "objective", json_type_object, name, "learner", &obj);
    if (!s) s = cf_json_get(obj, "name", json_type_string, name, "objective", &objname);
    if (!s) s = cf_json_get(gb, "name", json_type_string, name, "gradient_booster", &gbname);
    if (s) goto done;
    const char *booster = json_object_get_string(gbname);
    if (strcmp(booster, "gbtree") == 0) {
        s = cf_json_get(gb, "model", json_type_object, name, "gradient_booster", &model);
    } else if (strcmp(booster, "dart") == 0) {
        json_object *inner;
        s = cf_json_get(gb, "gbtree", json_type_object, name, "gradient_booster", &inner);
        if (!s) s = cf_json_get(inner, "model", json_type_object, name, "gbtree", &model);
        if (!s) s = cf_json_get(gb, "weight_drop", json_type_array, name, "dart", &wdrop);
    } else {
        s = canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: booster '%s' is not supported (gbtree, dart)",
                        name, booster);
    }
    if (s) goto done;
    const char *objective = json_object_get_string(objname);
    const objective_info *oi = NULL;
    for (size_t i = 0; i < sizeof objectives / sizeof objectives[0]; i++)
        if (strcmp(objective, objectives[i].name) == 0) oi = &objectives[i];
    if (!oi) {
        s = canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: objective '%s' is not supported", name,
                        objective);
        goto done;
    }
    json_object *v;
    s = cf_json_get(lmp, "num_feature", json_type_string, name, "learner_model_param", &v);
    if (!s) s = cf_json_number(v, name, "num_feature", &num_feature);
    if (!s && json_object_object_get_ex(lmp, "num_class", &v))
        s = cf_json_number(v, name, "num_class", &num_class);
    if (!s && json_object_object_get_ex(lmp, "num_target", &v))
        s = cf_json_number(v, name, "num_target", &num_target);
    if (!s) s = cf_json_get(model, "trees", json_type_array, name, "model", &trees);
    if (s) goto done;
    json_object_object_get_ex(model, "tree_info", &info);

    s = cf_forest_new(&f);
    if (s) goto done;
    snprintf(f->source, sizeof f->source, "xgboost");
    snprintf(f->objective, sizeof f->objective, "%s", objective);
    if (num_feature < 1 || num_feature > CF_KEY_FEATURE || num_class < 0 || num_class > 1e6 ||
        num_target < 1 || num_target > 1e6) {
        s = canopy_fail(CANOPY_ERR_FORMAT, "%s: bad num_feature/num_class/num_target", name);
        goto done;
    }
    f->n_features = (int32_t)num_feature;
    f->n_outputs = num_class > 1 ? (int32_t)num_class : (int32_t)num_target;
    f->n_classes = oi->classes == 2 ? 2 : oi->classes < 0 ? (int32_t)num_class : 0;
    f->link = oi->link;
    f->aggregation = CANOPY_AGG_SUM;

    /* base_score */
    double *base = calloc((size_t)f->n_outputs, sizeof *base);
    if (!base) {
        s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (json_object_object_get_ex(lmp, "base_score", &v)) {
        int32_t nb = 0;
        s = parse_base(json_object_get_string(v), name, base, f->n_outputs, &nb);
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
    if (!s) s = cf_set_base(f, base, f->n_outputs);
    free(base);
    if (s) goto done;

    size_t nt = json_object_array_length(trees);
    json_object *gmp, *ntv;
    double declared;
    if (json_object_object_get_ex(model, "gbtree_model_param", &gmp) &&
        json_object_object_get_ex(gmp, "num_trees", &ntv)) {
        s = cf_json_number(ntv, name, "num_trees", &declared);
        if (!s && declared != (double)nt)
            s = canopy_fail(CANOPY_ERR_FORMAT,
                            "%s: gbtree_model_param.num_trees is %g but the model has %zu trees",
                            name, declared, nt);
        if (s) goto done;
    }
    if (info &&
        (!json_object_is_type(info, json_type_array) || json_object_array_length(info) != nt)) {
        s = canopy_fail(CANOPY_ERR_FORMAT, "%s: tree_info does not match the %zu trees", name, nt);
        goto done;
    }
    if (wdrop && json_object_array_length(wdrop) != nt) {
        s = canopy_fail(CANOPY_ERR_FORMAT, "%s: weight_drop does not match the %zu trees", name,
                        nt);
        goto done;
    }
    for (size_t i = 0; i < nt && !s; i++) {
        double group = 0, scale = 1;
        if (info) s = num_at(info, i, name, "tree_info", &group);
        if (!s && wdrop) s = num_at(wdrop, i, name, "weight_drop", &scale);
        if (!s && (group < 0 || group >= f->n_outputs))
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: tree %zu feeds output %g of %d", name, i, group,
                            f->n_outputs);
        if (!s)
            s = read_tree(f, learner, json_object_array_get_idx(trees, i), (int32_t)i,
                          (int32_t)group, scale, name);
    }
    if (!s) s = cf_validate(f, name);
done:
    json_object_put(root);
    if (s) {
        canopy_forest_free(f);
        f = NULL;
    }
    *out = f;
    return s;
}
