/* SPDX-License-Identifier: MIT */
/* canopy_predictor: a forest with its prediction plan (resolved options, layout)
 * made once; and its file form, a section file (src/io/sectionfile.h) holding the
 * model arrays, used in place from the mapped file, and the compile options. */
#include "core/device.h"
#include "forest/gpu.h"
#include "forest/plan.h"
#include "io/sectionfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREDICTOR_MAGIC 0x43504e5052454431ull
#define FILE_VERSION 1u
static const char file_magic[8] = {'C', 'N', 'P', 'Y', 'C', 'P', 'F', '1'};

enum {
    SEC_META = 1,
    SEC_NAMES,
    SEC_BASE,
    SEC_TREES,
    SEC_FEATURE,
    SEC_THRESHOLD,
    SEC_LEFT,
    SEC_RIGHT,
    SEC_FLAGS,
    SEC_VALUE_OFF,
    SEC_VALUES
};
enum {
    M_FEATURES,
    M_OUTPUTS,
    M_CLASSES,
    M_LINK,
    M_AGG,
    M_TREES,
    M_NODES,
    M_VALUES,
    M_LAYOUT,
    M_ENGINE,
    M_BACKEND,
    M_OUTPUT,
    M_HIER_DEPTH,
    M_SWITCH_LEVEL,
    M_COMPACTION,
    M_MAPPING,
    M_COUNT
};
/* Strings and the one float parameter, as one fixed record. */
typedef struct names_rec {
    char objective[64];
    char source[32];
    double sigmoid_scale;
} names_rec;

struct canopy_predictor {
    uint64_t magic;
    const canopy_forest *f;
    canopy_forest loaded; /* when loaded: arrays point into the file */
    canopy_secfile file;
    canopy_predict_options opt; /* as compiled, before resolution */
    cf_plan plan;
};

static canopy_status check(const canopy_predictor *p) {
    if (!p || p->magic != PREDICTOR_MAGIC)
        return canopy_fail(CANOPY_ERR_INVALID, "predictor: NULL or not a live predictor");
    return CANOPY_OK;
}

static canopy_status make_plan(canopy_predictor *p) {
    canopy_predict_options o = p->opt;
    if (o.backend == CANOPY_BACKEND_AUTO) o.backend = CANOPY_BACKEND_CPU;
    canopy_points none = {NULL, 0, p->f->n_features, p->f->n_features};
    canopy_status s = canopy_cf_predict_resolve(p->f, none, &o, &p->plan);
    return s ? s : canopy_cf_predict_build(p->f, &p->plan);
}

canopy_status canopy_predictor_compile(const canopy_forest *f, const canopy_predict_options *opt,
                                       canopy_predictor **out) {
    *out = NULL;
    if (!f) return canopy_fail(CANOPY_ERR_INVALID, "predictor: no model");
    canopy_predictor *p = calloc(1, sizeof *p);
    if (!p) return canopy_fail(CANOPY_ERR_NOMEM, "predictor: out of memory");
    p->f = f;
    p->opt = opt ? *opt : canopy_predict_options_default();
    canopy_status s = make_plan(p);
    if (s) {
        free(p);
        return s;
    }
    p->magic = PREDICTOR_MAGIC;
    *out = p;
    return CANOPY_OK;
}

void canopy_predictor_free(canopy_predictor *p) {
    if (!p || p->magic != PREDICTOR_MAGIC) return;
    p->magic = 0;
    canopy_cf_plan_free(&p->plan);
    if (p->f == &p->loaded) canopy_cf_gpu_release(&p->loaded);
    canopy_secfile_close(&p->file);
    free(p);
}

canopy_status canopy_predictor_predict(const canopy_predictor *p, canopy_points X,
                                       canopy_forest_output output, double *out,
                                       canopy_predict_stats *stats) {
    canopy_status s = check(p);
    if (s) return s;
    if ((unsigned)output > CANOPY_FOREST_OUTPUT_CLASS)
        return canopy_fail(CANOPY_ERR_INVALID, "predictor: bad output kind %d", (int)output);
    cf_plan plan = p->plan; /* shares the layout; only the output kind differs */
    plan.o.output = output;
    plan.st.build_seconds = 0.0;
    return canopy_cf_predict_run(p->f, &plan, X, out, stats);
}

canopy_status canopy_predictor_predict_device(const canopy_predictor *p, canopy_points d_X,
                                              canopy_forest_output output, double *d_out,
                                              void *stream, canopy_predict_stats *stats) {
    canopy_status s = check(p);
    if (s) return s;
    if ((unsigned)output > CANOPY_FOREST_OUTPUT_CLASS)
        return canopy_fail(CANOPY_ERR_INVALID, "predictor: bad output kind %d", (int)output);
    if (!p->plan.gpu)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "predictor (device): compiled for the CPU, which reads host rows; "
                           "compile with backend gpu for device rows");
    if (d_X.d != p->f->n_features)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "the data has %d columns but the model has %d features", d_X.d,
                           p->f->n_features);
    if (d_X.n < 0 || d_X.stride < d_X.d)
        return canopy_fail(CANOPY_ERR_INVALID, "bad input view for prediction");
    if (stats) memset(stats, 0, sizeof *stats);
    if (d_X.n == 0) return CANOPY_OK;
    if ((s = canopy_gpu_require_device(d_X.data, "predictor (device): X")) ||
        (s = canopy_gpu_require_device(d_out, "predictor (device): out")) ||
        (s = canopy_gpu_wait_stream(stream)))
        return s;
    /* the scores come back for the link and aggregation (predict.c, as on the CPU);
       the predictions go to the device */
    size_t count = 0;
    double *out = NULL;
    s = canopy_mul_size((size_t)d_X.n, (size_t)canopy_forest_output_width(p->f, output), &count);
    if (!s) s = canopy_alloc((void **)&out, count, sizeof *out);
    if (!s) s = canopy_predictor_predict(p, d_X, output, out, stats);
    if (!s) s = canopy_gpu_to_device(d_out, out, sizeof *out * count, "predictor (device): out");
    canopy_free(out);
    return s;
}

const canopy_forest *canopy_predictor_forest(const canopy_predictor *p) {
    return check(p) ? NULL : p->f;
}
canopy_predict_options canopy_predictor_options(const canopy_predictor *p) {
    return check(p) ? canopy_predict_options_default() : p->opt;
}
double canopy_predictor_build_seconds(const canopy_predictor *p) {
    return check(p) ? 0.0 : p->plan.st.build_seconds;
}

canopy_status canopy_predictor_save(const canopy_predictor *p, const char *path) {
    canopy_status s = check(p);
    if (s) return s;
    const canopy_forest *f = p->f;
    const canopy_predict_options *o = &p->opt;
    int64_t meta[M_COUNT] = {
        [M_FEATURES] = f->n_features,   [M_OUTPUTS] = f->n_outputs,
        [M_CLASSES] = f->n_classes,     [M_LINK] = f->link,
        [M_AGG] = f->aggregation,       [M_TREES] = f->n_trees,
        [M_NODES] = f->n_nodes,         [M_VALUES] = f->n_values,
        [M_LAYOUT] = o->layout,         [M_ENGINE] = o->engine,
        [M_BACKEND] = o->backend,       [M_OUTPUT] = o->output,
        [M_HIER_DEPTH] = o->hier_depth, [M_SWITCH_LEVEL] = o->switch_level,
        [M_COMPACTION] = o->compaction, [M_MAPPING] = o->mapping,
    };
    names_rec names;
    memset(&names, 0, sizeof names);
    snprintf(names.objective, sizeof names.objective, "%s", f->objective);
    snprintf(names.source, sizeof names.source, "%s", f->source);
    names.sigmoid_scale = f->sigmoid_scale;
    uint64_t nn = (uint64_t)f->n_nodes;
    canopy_section secs[] = {
        {SEC_META, 8, meta, sizeof meta},
        {SEC_NAMES, sizeof names, &names, sizeof names},
        {SEC_BASE, 8, f->base, (uint64_t)f->n_outputs * 8},
        {SEC_TREES, sizeof(cf_tree), f->trees, (uint64_t)f->n_trees * sizeof(cf_tree)},
        {SEC_FEATURE, 4, f->feature, nn * 4},
        {SEC_THRESHOLD, 8, f->threshold, nn * 8},
        {SEC_LEFT, 4, f->left, nn * 4},
        {SEC_RIGHT, 4, f->right, nn * 4},
        {SEC_FLAGS, 1, f->flags, nn},
        {SEC_VALUE_OFF, 8, f->value_off, nn * 8},
        {SEC_VALUES, 8, f->values, (uint64_t)f->n_values * 8},
    };
    return canopy_sections_write(path, file_magic, FILE_VERSION, secs,
                                 (int32_t)(sizeof secs / sizeof secs[0]));
}

static canopy_status bad(const canopy_secfile *f, const char *what) {
    return canopy_fail(CANOPY_ERR_FORMAT, "%s: inconsistent compiled forest: %s", f->name, what);
}

/* What canopy_cf_validate takes for granted from an importer: trees inside the node arrays,
 * leaf values inside the value array, enums in range. */
static canopy_status check_ranges(const canopy_secfile *file, const canopy_forest *f) {
    if (f->link < CANOPY_LINK_IDENTITY || f->link > CANOPY_LINK_EXP ||
        f->aggregation < CANOPY_AGG_SUM || f->aggregation > CANOPY_AGG_MEAN)
        return bad(file, "unknown link or aggregation");
    if (f->n_outputs < 1 || f->n_outputs > (1 << 20) || f->n_classes < 0)
        return bad(file, "output count out of range");
    for (int32_t t = 0; t < f->n_trees; t++) {
        const cf_tree *tr = &f->trees[t];
        /* as an importer appends them: trees tile the node arrays in order */
        int64_t at = t ? f->trees[t - 1].first + f->trees[t - 1].n_nodes : 0;
        if (tr->first != at || tr->n_nodes < 1 || tr->first > f->n_nodes - tr->n_nodes ||
            tr->output < -1)
            return bad(file, "the trees do not tile the node arrays");
        int32_t w = cf_leaf_width(f, tr);
        for (int32_t i = 0; i < tr->n_nodes; i++) {
            int64_t g = tr->first + i;
            if (f->feature[g] < 0 && f->value_off[g] >= 0 && f->value_off[g] > f->n_values - w)
                return bad(file, "a leaf value lies outside the value array");
        }
    }
    const cf_tree *last = f->n_trees ? &f->trees[f->n_trees - 1] : NULL;
    if (last && last->first + last->n_nodes != f->n_nodes)
        return bad(file, "nodes after the last tree");
    return CANOPY_OK;
}

static canopy_status from_file(canopy_predictor *p) {
    canopy_secfile *file = &p->file;
    canopy_forest *f = &p->loaded;
    const void *m_, *nm_, *base, *trees, *feat, *thr, *left, *right, *flags, *voff, *vals;
    canopy_status s = canopy_secfile_get(file, SEC_META, 8, "meta", M_COUNT, &m_, NULL);
    if (s) return s;
    int64_t m[M_COUNT];
    memcpy(m, m_, sizeof m);
    for (int i = 0; i < M_COUNT; i++)
        if (m[i] < 0 || m[i] > INT32_MAX) return bad(file, "header value out of range");
    if ((s = canopy_secfile_get(file, SEC_NAMES, sizeof(names_rec), "names", 1, &nm_, NULL)))
        return s;
    names_rec names;
    memcpy(&names, nm_, sizeof names);
    names.objective[sizeof names.objective - 1] = 0;
    names.source[sizeof names.source - 1] = 0;
    f->n_features = (int32_t)m[M_FEATURES];
    f->n_outputs = (int32_t)m[M_OUTPUTS];
    f->n_classes = (int32_t)m[M_CLASSES];
    f->link = (canopy_forest_link)m[M_LINK];
    f->aggregation = (canopy_forest_aggregation)m[M_AGG];
    f->n_trees = f->cap_trees = (int32_t)m[M_TREES];
    f->n_nodes = f->cap_nodes = m[M_NODES];
    f->n_values = f->cap_values = m[M_VALUES];
    f->sigmoid_scale = names.sigmoid_scale;
    memcpy(f->objective, names.objective, sizeof f->objective);
    memcpy(f->source, names.source, sizeof f->source);
    int64_t nn = f->n_nodes;
    if ((s = canopy_secfile_get(file, SEC_BASE, 8, "base", f->n_outputs, &base, NULL)) ||
        (s = canopy_secfile_get(file, SEC_TREES, sizeof(cf_tree), "trees", f->n_trees, &trees,
                                NULL)) ||
        (s = canopy_secfile_get(file, SEC_FEATURE, 4, "features", nn, &feat, NULL)) ||
        (s = canopy_secfile_get(file, SEC_THRESHOLD, 8, "thresholds", nn, &thr, NULL)) ||
        (s = canopy_secfile_get(file, SEC_LEFT, 4, "left children", nn, &left, NULL)) ||
        (s = canopy_secfile_get(file, SEC_RIGHT, 4, "right children", nn, &right, NULL)) ||
        (s = canopy_secfile_get(file, SEC_FLAGS, 1, "flags", nn, &flags, NULL)) ||
        (s = canopy_secfile_get(file, SEC_VALUE_OFF, 8, "value offsets", nn, &voff, NULL)) ||
        (s = canopy_secfile_get(file, SEC_VALUES, 8, "values", f->n_values, &vals, NULL)))
        return s;
    /* The model's arrays are read-only in place; the forest's own free never runs on
     * them (the predictor owns the mapping). */
    f->base = (double *)base;
    f->trees = (cf_tree *)trees;
    f->feature = (int32_t *)feat;
    f->threshold = (double *)thr;
    f->left = (int32_t *)left;
    f->right = (int32_t *)right;
    f->flags = (uint8_t *)flags;
    f->value_off = (int64_t *)voff;
    f->values = (double *)vals;
    if ((s = check_ranges(file, f)) || (s = canopy_cf_validate(f, file->name))) return s;
    canopy_predict_options *o = &p->opt;
    o->layout = (canopy_forest_layout)m[M_LAYOUT];
    o->engine = (canopy_forest_engine)m[M_ENGINE];
    o->backend = (canopy_backend)m[M_BACKEND];
    o->output = (canopy_forest_output)m[M_OUTPUT];
    o->hier_depth = (int32_t)m[M_HIER_DEPTH];
    o->switch_level = (int32_t)m[M_SWITCH_LEVEL];
    o->compaction = (int32_t)m[M_COMPACTION];
    o->mapping = (canopy_forest_mapping)m[M_MAPPING];
    if (o->backend > CANOPY_BACKEND_GPU) return bad(file, "unknown backend");
    p->f = f;
    if ((s = make_plan(p))) {
        char why[512];
        snprintf(why, sizeof why, "%s", canopy_last_error());
        return canopy_fail(s, "%s: compiled options: %s", file->name, why);
    }
    return CANOPY_OK;
}

static canopy_status finish_load(canopy_predictor *p, canopy_status s, canopy_predictor **out) {
    if (!s) s = from_file(p);
    if (s) {
        canopy_secfile_close(&p->file);
        free(p);
        return s;
    }
    p->magic = PREDICTOR_MAGIC;
    *out = p;
    return CANOPY_OK;
}

canopy_status canopy_predictor_load(const char *path, canopy_predictor **out) {
    *out = NULL;
    canopy_predictor *p = calloc(1, sizeof *p);
    if (!p) return canopy_fail(CANOPY_ERR_NOMEM, "predictor: out of memory");
    return finish_load(p, canopy_secfile_open(path, file_magic, FILE_VERSION, &p->file), out);
}

canopy_status canopy_predictor_load_mem(const void *buf, size_t len, const char *name,
                                        canopy_predictor **out) {
    *out = NULL;
    canopy_predictor *p = calloc(1, sizeof *p);
    if (!p) return canopy_fail(CANOPY_ERR_NOMEM, "predictor: out of memory");
    return finish_load(
        p, canopy_secfile_open_mem(buf, len, name, file_magic, FILE_VERSION, &p->file), out);
}
