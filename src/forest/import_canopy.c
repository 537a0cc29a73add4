/* SPDX-License-Identifier: MIT */
/* canopy JSON forests (schema in docs/forests.md); written by
 * scripts/sklearn_to_canopy.py for scikit-learn models. */
#include "forest/forest.h"

#include <json-c/json.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static canopy_status opt_int(json_object *o, const char *key, int32_t def, int32_t lo, int32_t hi,
                             const char *name, int32_t *out) {
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) {
        *out = def;
        return CANOPY_OK;
    }
    double d;
    canopy_status s = canopy_cf_json_number(v, name, key, &d);
    if (s) return s;
    /* range first: converting a double outside the type is undefined */
    if (!(d >= lo && d <= hi) || d != (double)(int32_t)d)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: \"%s\" = %g is not an integer in [%d, %d]", name,
                           key, d, lo, hi);
    *out = (int32_t)d;
    return CANOPY_OK;
}

static canopy_status array_of(json_object *tree, const char *key, int32_t n, int required,
                              const char *name, const char *where, json_object **out) {
    *out = NULL;
    json_object *v;
    if (!json_object_object_get_ex(tree, key, &v)) {
        if (!required) return CANOPY_OK;
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: missing field \"%s\" in %s", name, key, where);
    }
    if (!json_object_is_type(v, json_type_array) || (int32_t)json_object_array_length(v) != n)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: \"%s\" in %s should be an array of %d", name,
                           key, where, n);
    *out = v;
    return CANOPY_OK;
}

static canopy_status read_tree(canopy_forest *f, json_object *tree, int32_t t, const char *name) {
    char where[64];
    snprintf(where, sizeof where, "trees[%d]", t);
    if (!json_object_is_type(tree, json_type_object))
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: %s is not an object", name, where);
    int32_t output = -1;
    canopy_status s = opt_int(tree, "output", -1, -1, f->n_outputs - 1, name, &output);
    if (s) return s;
    int lt = 0;
    json_object *cmp;
    if (json_object_object_get_ex(tree, "comparison", &cmp)) {
        const char *c = json_object_get_string(cmp);
        if (!strcmp(c, "<"))
            lt = 1;
        else if (strcmp(c, "<="))
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: %s: comparison must be \"<=\" or \"<\"",
                               name, where);
    }
    json_object *feat, *thr, *left, *right, *dl, *val;
    s = canopy_cf_json_get(tree, "feature", json_type_array, name, where, &feat);
    if (s) return s;
    int32_t n = (int32_t)json_object_array_length(feat);
    if (n < 1) return canopy_fail(CANOPY_ERR_FORMAT, "%s: %s has no nodes", name, where);
    s = array_of(tree, "threshold", n, 1, name, where, &thr);
    if (!s) s = array_of(tree, "left", n, 1, name, where, &left);
    if (!s) s = array_of(tree, "right", n, 1, name, where, &right);
    if (!s) s = array_of(tree, "default_left", n, 0, name, where, &dl);
    if (!s) s = array_of(tree, "value", n, 1, name, where, &val);
    if (s) return s;
    int32_t w = output >= 0 ? 1 : f->n_outputs;
    cf_raw_tree r;
    s = canopy_cf_raw_alloc(&r, n, w);
    for (int32_t i = 0; i < n && !s; i++) {
        double fi, th = 0, l = -1, rr = -1, d = 0;
        s = canopy_cf_json_number(json_object_array_get_idx(feat, (size_t)i), name, "feature", &fi);
        if (s) break;
        if (fi < 0) {
            /* A leaf has no children: one that names some is a broken tree, not a leaf. */
            s = canopy_cf_json_number(json_object_array_get_idx(left, (size_t)i), name, "left", &l);
            if (!s)
                s = canopy_cf_json_number(json_object_array_get_idx(right, (size_t)i), name,
                                          "right", &rr);
            if (!s && (l >= 0 || rr >= 0))
                s = canopy_fail(CANOPY_ERR_FORMAT,
                                "%s: %s node %d: feature %g with children %g and %g (a negative "
                                "feature marks a leaf, whose children are -1)",
                                name, where, i, fi, l, rr);
            if (s) break;
            r.feature[i] = -1;
            json_object *v = json_object_array_get_idx(val, (size_t)i);
            if (w == 1 && !json_object_is_type(v, json_type_array)) {
                s = canopy_cf_json_number(v, name, "a leaf value", &r.value[i]);
            } else if (json_object_is_type(v, json_type_array) &&
                       (int32_t)json_object_array_length(v) == w) {
                for (int32_t k = 0; k < w && !s; k++)
                    s = canopy_cf_json_number(json_object_array_get_idx(v, (size_t)k), name,
                                              "a leaf value", &r.value[(size_t)i * (size_t)w + k]);
            } else {
                s = canopy_fail(CANOPY_ERR_FORMAT, "%s: %s leaf %d: value should be %s", name,
                                where, i, w == 1 ? "a number" : "an array of n_outputs numbers");
            }
            continue;
        }
        s = canopy_cf_json_number(json_object_array_get_idx(thr, (size_t)i), name, "threshold",
                                  &th);
        if (!s)
            s = canopy_cf_json_number(json_object_array_get_idx(left, (size_t)i), name, "left", &l);
        if (!s)
            s = canopy_cf_json_number(json_object_array_get_idx(right, (size_t)i), name, "right",
                                      &rr);
        if (!s && dl)
            s = canopy_cf_json_number(json_object_array_get_idx(dl, (size_t)i), name,
                                      "default_left", &d);
        if (s) break;
        if (fi >= f->n_features || l < 0 || l >= n || rr < 0 || rr >= n) {
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: %s node %d: bad feature or child index", name,
                            where, i);
            break;
        }
        r.feature[i] = (int32_t)fi;
        r.thr[i] = th;
        r.left[i] = (int32_t)l;
        r.right[i] = (int32_t)rr;
        r.flags[i] = (uint8_t)((lt ? CF_CMP_LT : 0) | (d != 0 ? CF_DEFAULT_LEFT : 0));
    }
    if (!s) s = canopy_cf_add_raw_tree(f, &r, 0, output, name);
    canopy_cf_raw_free(&r);
    return s;
}

canopy_status canopy_cf_import_canopy(const char *buf, size_t len, const char *name,
                                      canopy_forest **out) {
    *out = NULL;
    json_object *root, *v, *trees;
    canopy_status s = canopy_cf_json_parse(buf, len, name, &root);
    if (s) return s;
    canopy_forest *f = NULL;
    s = canopy_cf_json_get(root, "format", json_type_string, name, "the model", &v);
    if (!s && strcmp(json_object_get_string(v), "canopy-forest"))
        s = canopy_fail(CANOPY_ERR_FORMAT, "%s: \"format\" is not \"canopy-forest\"", name);
    int32_t version = 0;
    if (!s) s = opt_int(root, "version", -1, 1, 1000, name, &version);
    if (!s && version != 1)
        s = canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: canopy-forest version %d (this build reads 1)",
                        name, version);
    if (!s) s = canopy_cf_forest_new(&f);
    if (!s) s = opt_int(root, "n_features", -1, 1, CF_KEY_FEATURE, name, &f->n_features);
    if (!s) s = opt_int(root, "n_outputs", 1, 1, 1 << 20, name, &f->n_outputs);
    if (!s) s = opt_int(root, "n_classes", 0, 0, 1 << 20, name, &f->n_classes);
    if (s) goto done;
    snprintf(f->source, sizeof f->source, "canopy");
    snprintf(f->objective, sizeof f->objective, "%s",
             json_object_object_get_ex(root, "objective", &v) ? json_object_get_string(v) : "");
    f->link = CANOPY_LINK_IDENTITY;
    if (json_object_object_get_ex(root, "link", &v)) {
        const char *l = json_object_get_string(v);
        int found = 0;
        for (int i = 0; i <= CANOPY_LINK_EXP; i++)
            if (!strcmp(l, canopy_forest_link_name((canopy_forest_link)i))) {
                f->link = (canopy_forest_link)i;
                found = 1;
            }
        if (!found) {
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: unknown link '%s'", name, l);
            goto done;
        }
    }
    if (json_object_object_get_ex(root, "sigmoid_scale", &v)) {
        s = canopy_cf_json_number(v, name, "sigmoid_scale", &f->sigmoid_scale);
        if (s) goto done;
    }
    f->aggregation = CANOPY_AGG_SUM;
    if (json_object_object_get_ex(root, "aggregation", &v)) {
        const char *a = json_object_get_string(v);
        if (!strcmp(a, "mean"))
            f->aggregation = CANOPY_AGG_MEAN;
        else if (strcmp(a, "sum")) {
            s = canopy_fail(CANOPY_ERR_FORMAT, "%s: aggregation must be \"sum\" or \"mean\"", name);
            goto done;
        }
    }
    s = canopy_cf_set_base(f, NULL, f->n_outputs);
    if (!s && json_object_object_get_ex(root, "base_score", &v)) {
        if (json_object_is_type(v, json_type_array)) {
            if ((int32_t)json_object_array_length(v) != f->n_outputs)
                s = canopy_fail(CANOPY_ERR_FORMAT, "%s: base_score needs %d values", name,
                                f->n_outputs);
            for (int32_t k = 0; k < f->n_outputs && !s; k++)
                s = canopy_cf_json_number(json_object_array_get_idx(v, (size_t)k), name,
                                          "base_score", &f->base[k]);
        } else {
            double b = 0;
            s = canopy_cf_json_number(v, name, "base_score", &b);
            for (int32_t k = 0; k < f->n_outputs; k++) f->base[k] = b;
        }
    }
    if (!s) s = canopy_cf_json_get(root, "trees", json_type_array, name, "the model", &trees);
    if (s) goto done;
    for (size_t i = 0; i < json_object_array_length(trees) && !s; i++)
        s = read_tree(f, json_object_array_get_idx(trees, i), (int32_t)i, name);
    if (!s) s = canopy_cf_validate(f, name);
done:
    json_object_put(root);
    if (s) {
        canopy_forest_free(f);
        f = NULL;
    }
    *out = f;
    return s;
}
