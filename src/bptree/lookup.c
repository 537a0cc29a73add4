/* SPDX-License-Identifier: MIT */
/* Batch lookups: option resolution (auto layout via Ren's cache model with the bias
 * sampled from the batch), the layout kept on the tree between calls, then three
 * parallel passes over the queries: the hash picks each query's subtree, the forest
 * engine runs one task per query from that root (sparse bucket access: a query
 * touches one tree), and the leaf's record is checked for equality. */
#include "bptree/bptree.h"
#include "forest/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

canopy_bptree_options canopy_bptree_options_default(void) {
    canopy_bptree_options o;
    memset(&o, 0, sizeof o);
    o.compaction = 1;
    o.not_found = CANOPY_BPTREE_NOT_FOUND;
    return o;
}

static int is_linked(canopy_forest_layout l) {
    return l >= CANOPY_FOREST_LAYOUT_DF && l <= CANOPY_FOREST_LAYOUT_HYBRID;
}

/* Share of left decisions of every 20th query (5 %, Ren §5.3) along its own subtree. */
static double sample_beta(const canopy_bptree *t, const float *q, int64_t nq) {
    const canopy_forest *f = t->forest;
    int64_t left = 0, total = 0;
    for (int64_t i = 0; i < nq; i += 20) {
        int64_t b = f->trees[cbp_bucket(t, q[i])].first, g = b;
        while (f->feature[g] >= 0) {
            int l = q[i] <= (float)f->threshold[g];
            left += l;
            total++;
            g = b + (l ? f->left[g] : f->right[g]);
        }
    }
    return total ? (double)left / (double)total : 0.5;
}

/* The tree's layout for these options, built unless the last lookup left it. */
static canopy_status get_layout(canopy_bptree *t, const canopy_bptree_options *o, int vm,
                                double *seconds) {
    int32_t hd = o->layout == CANOPY_FOREST_LAYOUT_HIER ? (o->hier_depth ? o->hier_depth : 4) : 0;
    int32_t sw = o->layout == CANOPY_FOREST_LAYOUT_HYBRID ? o->switch_level : 0;
    double t0 = canopy_now();
    if (!t->have_layout || t->layout.kind != o->layout || t->layout_hier_depth != hd ||
        t->layout_switch_level != sw) {
        if (t->have_layout) canopy_cf_layout_free(&t->layout);
        free(t->prog.code);
        memset(&t->prog, 0, sizeof t->prog);
        t->have_layout = 0;
        canopy_status s;
        if (o->layout == CANOPY_FOREST_LAYOUT_CSR)
            s = canopy_cf_build_csr(t->forest, &t->layout);
        else if (o->layout == CANOPY_FOREST_LAYOUT_HIER)
            s = canopy_cf_build_hier(t->forest, hd, &t->layout);
        else
            s = canopy_cf_build_linked(t->forest, o->layout, sw, NULL, &t->layout);
        if (s) return s;
        t->have_layout = 1;
        t->layout_hier_depth = hd;
        t->layout_switch_level = sw;
    }
    if (vm && !t->prog.code) {
        canopy_status s = canopy_cf_vm_compile(&t->layout, &t->prog);
        if (s) return s;
    }
    *seconds = canopy_now() - t0;
    return CANOPY_OK;
}

static canopy_status lookup_pointer(canopy_bptree *t, const float *q, int64_t nq,
                                    const canopy_bptree_options *o, int64_t *out,
                                    canopy_bptree_stats *st) {
    double t0 = canopy_now();
    if (!t->pointer) {
        canopy_status s = canopy_cbp_pointer_build(t->keys, t->values, t->n, &t->pointer);
        if (s) {
            canopy_cbp_pointer_free(t->pointer);
            t->pointer = NULL;
            return s;
        }
        st->build_seconds = canopy_now() - t0;
    }
    double t1 = canopy_now();
    st->found = canopy_cbp_pointer_lookup(t->pointer, q, nq, o->not_found, out);
    st->lookup_seconds = canopy_now() - t1;
    st->layout_bytes = t->pointer->bytes;
    snprintf(st->note, sizeof st->note, "pointer B+ tree, %d keys a node, %d levels, %d threads",
             CBP_FANOUT, t->pointer->height, canopy_threads());
    return CANOPY_OK;
}

static canopy_status lookup_forest(canopy_bptree *t, const float *q, int64_t nq,
                                   canopy_bptree_options *o, int64_t *out,
                                   canopy_bptree_stats *st) {
    if (o->layout == CANOPY_FOREST_LAYOUT_AUTO ||
        (o->layout == CANOPY_FOREST_LAYOUT_HYBRID && !o->switch_level)) {
        cf_cache_choice c;
        st->beta = sample_beta(t, q, nq);
        canopy_cf_cache_model(t->forest, st->beta, &c);
        if (o->layout == CANOPY_FOREST_LAYOUT_AUTO) o->layout = c.layout;
        if (o->layout == CANOPY_FOREST_LAYOUT_HYBRID && !o->switch_level)
            o->switch_level = c.switch_level;
    }
    if (o->engine == CANOPY_FOREST_ENGINE_AUTO)
        o->engine = is_linked(o->layout) ? CANOPY_FOREST_ENGINE_VM : CANOPY_FOREST_ENGINE_SCALAR;
    int vm = o->engine == CANOPY_FOREST_ENGINE_VM || o->engine == CANOPY_FOREST_ENGINE_VM_SIMD;
    if (vm && !is_linked(o->layout))
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "engine %s runs the linked layouts (df, bf, ll, sll, cc, hybrid), not "
                           "%s",
                           canopy_forest_engine_name(o->engine),
                           canopy_forest_layout_name(o->layout));
    int simd = o->engine == CANOPY_FOREST_ENGINE_VM_SIMD && canopy_cpu_isa() >= CANOPY_ISA_AVX2;
    st->isa = simd ? CANOPY_ISA_AVX2 : CANOPY_ISA_SCALAR;
    canopy_status s = get_layout(t, o, vm, &st->build_seconds);
    if (s) return s;
    st->layout_bytes = t->layout.bytes;
    int32_t *tree_of = NULL;
    double *acc = NULL;
    size_t m = (size_t)(nq > 0 ? nq : 1);
    if (canopy_alloc((void **)&tree_of, m, sizeof *tree_of) ||
        canopy_alloc((void **)&acc, m, sizeof *acc)) {
        canopy_free(tree_of);
        return CANOPY_ERR_NOMEM;
    }
    int threads = canopy_threads();
    double t0 = canopy_now();
#pragma omp parallel for num_threads(threads) schedule(static) if (nq > CBP_SERIAL_BELOW)
    for (int64_t i = 0; i < nq; i++) {
        tree_of[i] = (int32_t)cbp_bucket(t, q[i]);
        acc[i] = 0.0;
    }
    s = canopy_cf_predict_rows(&t->layout, vm ? &t->prog : NULL, simd, o->compaction, q, 1, nq,
                               tree_of, acc, NULL);
    int64_t found = 0;
    if (!s) {
        /* the leaf holds the only candidate rank: its key decides */
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : found) if (nq > CBP_SERIAL_BELOW)
        for (int64_t i = 0; i < nq; i++) {
            int64_t r = (int64_t)acc[i];
            int hit = r >= 0 && t->keys[r] == q[i];
            out[i] = hit ? t->values[r] : o->not_found;
            found += hit;
        }
    }
    st->lookup_seconds = canopy_now() - t0;
    st->found = found;
    canopy_free(tree_of);
    canopy_free(acc);
    snprintf(st->note, sizeof st->note, "%lld buckets, %s layout, %s engine%s, %d threads",
             (long long)t->n_buckets, canopy_forest_layout_name(o->layout),
             canopy_forest_engine_name(o->engine),
             o->engine == CANOPY_FOREST_ENGINE_VM_SIMD ? (simd ? " (avx2)" : " (scalar fallback)")
                                                       : "",
             threads);
    return s;
}

canopy_status canopy_bptree_lookup(canopy_bptree *t, const float *queries, int64_t nq,
                                   const canopy_bptree_options *opt, int64_t *out,
                                   canopy_bptree_stats *stats) {
    canopy_bptree_options o = opt ? *opt : canopy_bptree_options_default();
    canopy_bptree_stats st;
    memset(&st, 0, sizeof st);
    if (!t || nq < 0 || (nq > 0 && (!queries || !out)))
        return canopy_fail(CANOPY_ERR_INVALID, "bad arguments for a B+-tree lookup");
    if ((unsigned)o.method > CANOPY_BPTREE_POINTER ||
        (unsigned)o.layout >= CANOPY_FOREST_LAYOUT_COUNT ||
        (unsigned)o.engine >= CANOPY_FOREST_ENGINE_COUNT)
        return canopy_fail(CANOPY_ERR_INVALID, "bad B+-tree lookup options");
    if (o.engine > CANOPY_FOREST_ENGINE_VM_SIMD)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "B+-tree lookups run the engines auto, scalar, vm and vm_simd; engine "
                           "%s walks whole forests per row",
                           canopy_forest_engine_name(o.engine));
    if (o.hier_depth && (o.hier_depth < 3 || o.hier_depth > 5))
        return canopy_fail(CANOPY_ERR_INVALID, "hier subtree depth %d (3 to 5)", o.hier_depth);
    if (o.switch_level < 0)
        return canopy_fail(CANOPY_ERR_INVALID, "switch level %d < 0", o.switch_level);
    canopy_status s = o.method == CANOPY_BPTREE_POINTER
                          ? lookup_pointer(t, queries, nq, &o, out, &st)
                          : lookup_forest(t, queries, nq, &o, out, &st);
    st.method = o.method;
    st.layout = o.method == CANOPY_BPTREE_FOREST ? o.layout : CANOPY_FOREST_LAYOUT_AUTO;
    st.engine = o.method == CANOPY_BPTREE_FOREST ? o.engine : CANOPY_FOREST_ENGINE_AUTO;
    st.switch_level = o.layout == CANOPY_FOREST_LAYOUT_HYBRID ? o.switch_level : 0;
    if (stats) *stats = st;
    return s;
}
