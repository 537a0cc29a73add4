/* SPDX-License-Identifier: MIT */
/* Generic tree builder: every kind supplies only a split rule; partitioning,
 * linearization (contiguous children, depth- or breadth-first), gathering points
 * into tree order, static ropes and the cold arrays are done here once. */
#include "tree/tree.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Subtrees smaller than this are built by one task: below it, task overhead
 * outweighs the parallelism. */
enum { TASK_CUTOFF = 4096 };

const char *canopy_tree_kind_name(canopy_tree_kind k) {
    switch (k) {
    case CANOPY_TREE_KD:
        return "kd";
    case CANOPY_TREE_BALL:
        return "ball";
    case CANOPY_TREE_VP:
        return "vp";
    case CANOPY_TREE_OCT:
        return "oct";
    case CANOPY_TREE_BST:
        return "bst";
    }
    return "unknown";
}

canopy_status canopy_tree_kind_parse(const char *s, canopy_tree_kind *out) {
    for (int k = CANOPY_TREE_KD; k <= CANOPY_TREE_BST; k++)
        if (strcmp(s, canopy_tree_kind_name((canopy_tree_kind)k)) == 0) {
            *out = (canopy_tree_kind)k;
            return CANOPY_OK;
        }
    return canopy_fail(CANOPY_ERR_INVALID,
                       "unknown tree kind '%s' (expected kd, ball, vp, oct, bst)", s);
}

canopy_tree_options canopy_tree_options_default(canopy_tree_kind kind) {
    canopy_tree_options o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    return o;
}

static int32_t default_leaf_size(canopy_tree_kind k) {
    switch (k) {
    case CANOPY_TREE_OCT:
        return 8;
    case CANOPY_TREE_BST:
        return 1;
    default:
        return 16;
    }
}

typedef canopy_tmp_tree tmp_tree;

typedef struct build_job {
    canopy_points pts;
    int64_t *perm;
    const canopy_tree_spec *spec;
    const void *ctx; /* what the split rule receives: spec->ctx, or a canopy_tree_scratch */
    tmp_tree *tt;
    int32_t leaf_size;
    int failed; /* set when a split rule misbehaves */
} build_job;

static void build_rec(build_job *job, int32_t node, int32_t depth) {
    tmp_tree *tt = job->tt;
    int64_t begin = tt->begin[node], end = tt->end[node];
    int64_t cb[65];
    int nc = 0;
    float *geom = tt->geom + (int64_t)node * tt->geom_stride;
    /* zeroed here, not at allocation: most of the 2n + 1 slots are never used, and
     * pages never touched cost nothing */
    memset(geom, 0, sizeof(float) * (size_t)tt->geom_stride);
    int may_split = end - begin > job->leaf_size;
    nc = job->spec->split(job->ctx, job->pts, job->perm, begin, end, depth, may_split, geom, cb);
    if (nc < 2 || nc > job->spec->max_children) {
        if (nc == 1 || nc > job->spec->max_children) job->failed = 1;
        tt->first[node] = -1;
        tt->nchild[node] = 0;
        return;
    }
    int32_t first;
#pragma omp atomic capture
    {
        first = tt->count;
        tt->count += nc;
    }
    if (first + nc > tt->cap) {
        job->failed = 1;
        tt->first[node] = -1;
        tt->nchild[node] = 0;
        return;
    }
    tt->first[node] = first;
    tt->nchild[node] = nc;
    for (int c = 0; c < nc; c++) {
        tt->begin[first + c] = cb[c];
        tt->end[first + c] = c + 1 < nc ? cb[c + 1] : end;
        if (tt->end[first + c] <= tt->begin[first + c]) job->failed = 1;
    }
    for (int c = 0; c < nc; c++) {
        int32_t child = first + c;
        if (tt->end[child] - tt->begin[child] > TASK_CUTOFF) {
#pragma omp task firstprivate(child, depth)
            build_rec(job, child, depth + 1);
        } else {
            build_rec(job, child, depth + 1);
        }
    }
}

/* New index of each temp node: children groups stay contiguous; groups are laid out
 * depth-first (each node's child group, then each child's subtree in order) or
 * breadth-first. */
static void linearize(const tmp_tree *tt, canopy_tree_order order, int32_t *new_id,
                      int32_t *queue) {
    new_id[0] = 0;
    int32_t next = 1;
    if (order == CANOPY_ORDER_BREADTH_FIRST) {
        int32_t head = 0, tail = 0;
        queue[tail++] = 0;
        while (head < tail) {
            int32_t v = queue[head++];
            for (int32_t c = 0; c < tt->nchild[v]; c++) {
                new_id[tt->first[v] + c] = next++;
                queue[tail++] = tt->first[v] + c;
            }
        }
        return;
    }
    /* Depth-first with an explicit stack (queue doubles as the stack). */
    int32_t sp = 0;
    queue[sp++] = 0;
    while (sp > 0) {
        int32_t v = queue[--sp];
        for (int32_t c = 0; c < tt->nchild[v]; c++) new_id[tt->first[v] + c] = next++;
        for (int32_t c = tt->nchild[v] - 1; c >= 0; c--) queue[sp++] = tt->first[v] + c;
    }
}

/* The build's scratch, tmp_tree's arrays and a positional rule's second copy of the rows
 * and ids, is carved from one block, and a block of up to WORKSPACE_KEEP bytes outlives
 * its build (one per process): the next build reuses its pages where fresh ones fault in
 * one at a time (a one-thread kd build of 135k 2-D points took ~1,300 faults, 16 % of its
 * time on a 2-core VM; bench/results/edges.md). */
enum { WORKSPACE_KEEP = 64 << 20, WORKSPACE_ALIGN = 64, WORKSPACE_PARTS = 8 };

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static char *kept_block;
static size_t kept_size;

typedef struct workspace {
    char *block;
    size_t size;
} workspace;

/* Offsets of first, nchild, begin, end, geom, (positional) the scratch rows and ids, and
 * (whole-tree rules) the words. */
static canopy_status workspace_layout(const tmp_tree *tt, int64_t n, int32_t d,
                                      const canopy_tree_spec *spec, size_t off[WORKSPACE_PARTS],
                                      size_t *total) {
    int positional = spec->positional;
    size_t rows = (size_t)(n > 0 ? n : 1), cap = (size_t)tt->cap;
    const size_t count[WORKSPACE_PARTS] = {cap,
                                           cap,
                                           cap,
                                           cap,
                                           cap * (size_t)tt->geom_stride,
                                           positional ? rows : 0,
                                           positional ? rows : 0,
                                           spec->build_all ? 2 * rows : 0};
    const size_t elem[WORKSPACE_PARTS] = {
        sizeof(int32_t), sizeof(int32_t),           sizeof(int64_t), sizeof(int64_t),
        sizeof(float),   sizeof(float) * (size_t)d, sizeof(int64_t), sizeof(uint64_t)};
    size_t at = 0;
    for (int i = 0; i < WORKSPACE_PARTS; i++) {
        size_t b;
        canopy_status s = canopy_mul_size(count[i], elem[i], &b);
        if (s) return s;
        if (b > SIZE_MAX / 2 - at)
            return canopy_fail(CANOPY_ERR_NOMEM, "tree build: scratch of %zu + %zu bytes", at, b);
        off[i] = at;
        at += (b + WORKSPACE_ALIGN - 1) / WORKSPACE_ALIGN * WORKSPACE_ALIGN;
    }
    *total = at;
    return CANOPY_OK;
}

static canopy_status workspace_get(workspace *w, size_t bytes) {
    w->block = NULL;
    pthread_mutex_lock(&kept_lock);
    if (kept_block && kept_size >= bytes) {
        w->block = kept_block;
        w->size = kept_size;
        kept_block = NULL;
    }
    pthread_mutex_unlock(&kept_lock);
    if (w->block) return CANOPY_OK;
    w->size = bytes;
    return canopy_alloc((void **)&w->block, bytes, 1);
}

/* Keeps the larger of w's block and the kept one (within WORKSPACE_KEEP), frees the other. */
static void workspace_put(workspace *w) {
    char *drop = w->block;
    if (drop && w->size <= WORKSPACE_KEEP) {
        pthread_mutex_lock(&kept_lock);
        if (!kept_block || kept_size < w->size) {
            drop = kept_block;
            kept_block = w->block;
            kept_size = w->size;
        }
        pthread_mutex_unlock(&kept_lock);
    }
    canopy_free(drop);
    w->block = NULL;
}

void canopy_tree_free(canopy_tree *t) {
    if (!t) return;
    canopy_free(t->hot);
    canopy_free(t->points);
    canopy_free(t->ids);
    canopy_free(t->rope);
    canopy_free(t->weights);
    canopy_free(t->parent);
    canopy_free(t->level);
    canopy_free(t->min_id);
    free(t);
}

canopy_status canopy_tree_fill_min_id(canopy_tree *t) {
    const canopy_tree_view *v = &t->view;
    int32_t nn = v->n_nodes;
    canopy_status s = canopy_alloc((void **)&t->min_id, (size_t)(nn > 0 ? nn : 1), sizeof(int64_t));
    if (s) return s;
    int64_t *m = t->min_id;
#pragma omp parallel for schedule(static) num_threads(canopy_threads()) if (v->n > TASK_CUTOFF)
    for (int32_t u = 0; u < nn; u++) {
        const canopy_node *h = canopy_tv_node(v, u);
        /* in a local, without a branch: ids come in no order, and m might alias them */
        int64_t low = INT64_MAX;
        for (int32_t i = h->begin; h->child <= u && i < h->end; i++)
            low = v->ids[i] < low ? v->ids[i] : low;
        m[u] = low;
    }
    /* Children follow their parents in every build (a node that breaks it scans its
     * range above), so one backward pass gives each inner node its children's minimum. */
    for (int32_t u = nn - 1; u >= 0; u--) {
        const canopy_node *h = canopy_tv_node(v, u);
        for (int32_t c = 0; h->child > u && c < h->nchild; c++)
            if (m[h->child + c] < m[u]) m[u] = m[h->child + c];
    }
    t->view.min_id = m;
    return CANOPY_OK;
}

/* *rows: the points already in tree order (a positional rule's copy), or NULL to gather
 * them from pts through *perm. The tree takes *rows and *perm over as its points and
 * ids where it can (setting them to NULL) instead of copying them. */
static canopy_status finish_tree(canopy_tree *t, const tmp_tree *tt, canopy_points pts,
                                 int64_t **perm_io, float **rows_io, const canopy_tree_options *opt,
                                 int32_t max_children) {
    const int64_t *perm = *perm_io;
    const float *rows = *rows_io;
    int32_t nn = tt->count;
    canopy_status s;
    int32_t *new_id = NULL, *queue = NULL;
    if ((s = canopy_alloc((void **)&new_id, (size_t)nn, sizeof *new_id)) ||
        (s = canopy_alloc((void **)&queue, (size_t)nn, sizeof *queue))) {
        canopy_free(new_id);
        return s;
    }
    linearize(tt, opt->order, new_id, queue);

    int32_t stride = (int32_t)(sizeof(canopy_node) + sizeof(float) * (size_t)tt->geom_stride);
    stride = (stride + 15) / 16 * 16;
    int64_t n = pts.n;
    int32_t d = pts.d;
    if (rows) { /* the same sizes as the tree's own arrays: no copy */
        t->points = *rows_io;
        t->ids = *perm_io;
        *rows_io = NULL;
        *perm_io = NULL;
    }
    if ((s = canopy_calloc((void **)&t->hot, (size_t)nn, (size_t)stride)) ||
        (!rows &&
         (s = canopy_alloc((void **)&t->points, (size_t)(n > 0 ? n : 1), sizeof(float) * d))) ||
        (!rows && (s = canopy_alloc((void **)&t->ids, (size_t)(n > 0 ? n : 1), sizeof(int64_t)))) ||
        (s = canopy_alloc((void **)&t->rope, (size_t)nn, sizeof(int32_t))) ||
        (s = canopy_alloc((void **)&t->parent, (size_t)nn, sizeof(int32_t))) ||
        (s = canopy_alloc((void **)&t->level, (size_t)nn, sizeof(int32_t))) ||
        (opt->weights &&
         (s = canopy_alloc((void **)&t->weights, (size_t)(n > 0 ? n : 1), sizeof(float))))) {
        canopy_free(new_id);
        canopy_free(queue);
        return s;
    }
    for (int32_t v = 0; v < nn; v++) {
        canopy_node *h = (canopy_node *)(t->hot + (int64_t)new_id[v] * stride);
        h->child = tt->first[v] >= 0 ? new_id[tt->first[v]] : -1;
        h->nchild = tt->nchild[v];
        h->begin = (int32_t)tt->begin[v];
        h->end = (int32_t)tt->end[v];
        memcpy(h + 1, tt->geom + (int64_t)v * tt->geom_stride,
               sizeof(float) * (size_t)tt->geom_stride);
    }
    canopy_free(new_id);
    canopy_free(queue);

    const int64_t *ids = t->ids;
    if (!rows || t->weights) {
#pragma omp parallel for schedule(static) num_threads(canopy_threads()) if (n > TASK_CUTOFF)
        for (int64_t i = 0; i < n; i++) {
            if (!rows) {
                memcpy(t->points + i * d, canopy_point(pts, perm[i]), sizeof(float) * (size_t)d);
                t->ids[i] = perm[i];
            }
            if (t->weights) t->weights[i] = opt->weights[ids[i]];
        }
    }

    /* Parents precede their children in both orders, so one forward pass suffices. */
    int32_t depth = 1;
    t->rope[0] = -1;
    t->parent[0] = -1;
    t->level[0] = 0;
    for (int32_t v = 0; v < nn; v++) {
        const canopy_node *h = (const canopy_node *)(t->hot + (int64_t)v * stride);
        for (int32_t c = 0; c < h->nchild; c++) {
            int32_t ch = h->child + c;
            t->rope[ch] = c + 1 < h->nchild ? ch + 1 : t->rope[v];
            t->parent[ch] = v;
            t->level[ch] = t->level[v] + 1;
            if (t->level[ch] + 1 > depth) depth = t->level[ch] + 1;
        }
    }

    canopy_tree_view *tv = &t->view;
    tv->hot = t->hot;
    tv->points = t->points;
    tv->ids = t->ids;
    tv->rope = t->rope;
    tv->weights = t->weights;
    tv->hot_stride = stride;
    tv->geom_stride = tt->geom_stride;
    tv->n_nodes = nn;
    tv->d = d;
    tv->n = n;
    tv->depth = depth;
    tv->max_children = max_children;
    tv->kind = (int32_t)opt->kind;
    return canopy_tree_fill_min_id(t);
}

canopy_status canopy_tree_build_generic(canopy_points pts, const canopy_tree_spec *spec,
                                        const canopy_tree_options *opt, canopy_tree **out) {
    *out = NULL;
    double t0 = canopy_now();
    canopy_status s = canopy_points_check(pts, "tree points");
    if (s) return s;
    for (int64_t i = 0; opt->weights && i < pts.n; i++)
        if (!isfinite(opt->weights[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "tree weights: weight %lld is not finite",
                               (long long)i);
    if (pts.n >= INT32_MAX / 2)
        return canopy_fail(CANOPY_ERR_INVALID, "tree points: %lld points exceed the limit of %d",
                           (long long)pts.n, INT32_MAX / 2 - 1);
    canopy_tree *t = calloc(1, sizeof *t);
    if (!t) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory allocating a tree");
    t->leaf_size = opt->leaf_size > 0 ? opt->leaf_size : default_leaf_size(spec->kind);
    t->order = opt->order;

    int64_t n = pts.n;
    int64_t *perm = NULL;
    float *rows = NULL;
    canopy_tree_scratch scratch = {spec->ctx, NULL, NULL, NULL};
    tmp_tree tt;
    memset(&tt, 0, sizeof tt);
    tt.geom_stride = spec->geom_stride;
    tt.cap = (int32_t)(2 * n + 1);
    workspace ws = {NULL, 0};
    size_t off[WORKSPACE_PARTS], bytes = 0;
    if ((s = workspace_layout(&tt, n, pts.d, spec, off, &bytes)) ||
        (s = workspace_get(&ws, bytes)) ||
        (s = canopy_alloc((void **)&perm, (size_t)(n > 0 ? n : 1), sizeof *perm)))
        goto fail;
    tt.first = (int32_t *)(ws.block + off[0]);
    tt.nchild = (int32_t *)(ws.block + off[1]);
    tt.begin = (int64_t *)(ws.block + off[2]);
    tt.end = (int64_t *)(ws.block + off[3]);
    tt.geom = (float *)(ws.block + off[4]);
    for (int64_t i = 0; !spec->build_all && i < n; i++) perm[i] = i;
    canopy_points split_pts = pts;
    if (spec->positional) {
        scratch.rows = (float *)(ws.block + off[5]);
        scratch.perm = (int64_t *)(ws.block + off[6]);
        scratch.words = spec->build_all ? (uint64_t *)(ws.block + off[7]) : NULL;
        if ((s = canopy_alloc((void **)&rows, (size_t)(n > 0 ? n : 1), sizeof(float) * pts.d)))
            goto fail;
        /* a whole-tree rule reads pts and writes rows and perm itself */
        if (!spec->build_all && pts.stride == pts.d)
            memcpy(rows, pts.data, sizeof(float) * (size_t)pts.d * (size_t)n);
        else
            for (int64_t i = 0; !spec->build_all && i < n; i++)
                memcpy(rows + i * pts.d, canopy_point(pts, i), sizeof(float) * (size_t)pts.d);
        split_pts = canopy_points_make(rows, n, pts.d);
    }
    tt.count = 1;
    tt.begin[0] = 0;
    tt.end[0] = n;

    const void *ctx = spec->positional ? (const void *)&scratch : spec->ctx;
    build_job job = {split_pts, perm, spec, ctx, &tt, t->leaf_size, 0};
    /* Small trees are built by one thread: a parallel region costs more than them. */
#pragma omp parallel num_threads(canopy_threads()) if (n > TASK_CUTOFF)
#pragma omp single
    {
        if (spec->build_all)
            job.failed = spec->build_all(&scratch, pts, rows, perm, t->leaf_size, &tt);
        else
            build_rec(&job, 0, 0);
    }
    if (job.failed) {
        s = canopy_fail(CANOPY_ERR_INTERNAL, "%s tree: a split rule produced invalid children",
                        canopy_tree_kind_name(spec->kind));
        goto fail;
    }
    s = finish_tree(t, &tt, pts, &perm, &rows, opt, spec->max_children);
    if (s) goto fail;
    canopy_free(perm);
    canopy_free(rows);
    workspace_put(&ws);
    t->build_seconds = canopy_now() - t0;
    *out = t;
    return CANOPY_OK;
fail:
    canopy_free(perm);
    canopy_free(rows);
    workspace_put(&ws);
    canopy_tree_free(t);
    return s;
}

canopy_status canopy_tree_build(canopy_points pts, const canopy_tree_options *opt,
                                canopy_tree **out) {
    canopy_tree_spec spec;
    memset(&spec, 0, sizeof spec);
    canopy_oct_ctx oct;
    canopy_status s;
    *out = NULL;
    switch (opt->kind) {
    case CANOPY_TREE_KD:
        s = canopy_tree_spec_kd(pts.d, &spec);
        break;
    case CANOPY_TREE_BALL:
        s = canopy_tree_spec_ball(pts.d, &spec);
        break;
    case CANOPY_TREE_VP:
        s = canopy_tree_spec_vp(pts.d, &spec);
        break;
    case CANOPY_TREE_OCT:
        s = canopy_tree_spec_oct(pts, opt->weights, &oct, &spec);
        break;
    case CANOPY_TREE_BST:
        s = canopy_tree_spec_bst(pts.d, &spec);
        break;
    default:
        return canopy_fail(CANOPY_ERR_INVALID, "unknown tree kind %d", (int)opt->kind);
    }
    if (s) return s;
    return canopy_tree_build_generic(pts, &spec, opt, out);
}

void canopy_tree_get_info(const canopy_tree *t, canopy_tree_info *info) {
    memset(info, 0, sizeof *info);
    const canopy_tree_view *tv = &t->view;
    info->kind = (canopy_tree_kind)tv->kind;
    info->n = tv->n;
    info->d = tv->d;
    info->n_nodes = tv->n_nodes;
    for (int32_t v = 0; v < tv->n_nodes; v++) info->n_leaves += canopy_tv_node(tv, v)->child < 0;
    info->depth = tv->depth;
    info->leaf_size = t->leaf_size;
    info->hot_node_bytes = tv->hot_stride;
    info->build_seconds = t->build_seconds;
}
