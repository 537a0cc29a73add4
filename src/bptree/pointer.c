/* SPDX-License-Identifier: MIT */
/* The baseline of Ren §6: a classic pointer-based B+ tree, bulk-loaded from the
 * sorted keys. Every node is its own allocation holding up to CBP_FANOUT keys; an
 * inner node has one more child pointer than keys, a leaf holds the values. A lookup
 * descends with a binary search per node and compares for equality in the leaf. */
#include "bptree/bptree.h"

#include <stdlib.h>

struct cbp_pnode {
    int32_t n;    /* keys in use */
    int32_t leaf; /* 1: vals are valid, else child */
    float keys[CBP_FANOUT];
    union {
        cbp_pnode *child[CBP_FANOUT + 1]; /* child[i] holds keys in [keys[i-1], keys[i]) */
        int64_t val[CBP_FANOUT];
    } u;
};

static void free_node(cbp_pnode *nd) {
    if (!nd) return;
    if (!nd->leaf)
        for (int32_t i = 0; i <= nd->n; i++) free_node(nd->u.child[i]);
    free(nd);
}

void canopy_cbp_pointer_free(cbp_pointer_tree *p) {
    if (!p) return;
    free_node(p->root);
    free(p);
}

/* The smallest key under a node: what its parent uses as the separator before it. */
static float min_key(const cbp_pnode *nd) {
    while (!nd->leaf) nd = nd->u.child[0];
    return nd->keys[0];
}

canopy_status canopy_cbp_pointer_build(const float *keys, const int64_t *values, int64_t n,
                                       cbp_pointer_tree **out) {
    cbp_pointer_tree *p = calloc(1, sizeof *p);
    if (!p) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a B+ tree");
    *out = p;
    if (n == 0) return CANOPY_OK;
    int64_t m = (n + CBP_FANOUT - 1) / CBP_FANOUT;
    cbp_pnode **level = calloc((size_t)m, sizeof *level);
    if (!level) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a B+ tree");
    canopy_status s = CANOPY_OK;
    for (int64_t j = 0; j < m && !s; j++) {
        cbp_pnode *nd = level[j] = malloc(sizeof *nd);
        if (!nd) {
            s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a B+ tree");
            break;
        }
        int64_t a = j * CBP_FANOUT, e = a + CBP_FANOUT < n ? a + CBP_FANOUT : n;
        nd->n = (int32_t)(e - a);
        nd->leaf = 1;
        for (int64_t i = a; i < e; i++) {
            nd->keys[i - a] = keys[i];
            nd->u.val[i - a] = values[i];
        }
        p->bytes += sizeof *nd;
    }
    p->height = 1;
    /* Inner levels bottom-up: CBP_FANOUT + 1 children per node, the last may be
     * smaller (a bulk load; lookups do not need the half-full invariant). */
    while (!s && m > 1) {
        int64_t up = (m + CBP_FANOUT) / (CBP_FANOUT + 1);
        for (int64_t j = 0; j < up; j++) {
            cbp_pnode *nd = malloc(sizeof *nd);
            int64_t a = j * (CBP_FANOUT + 1), e = a + CBP_FANOUT + 1 < m ? a + CBP_FANOUT + 1 : m;
            if (!nd) {
                /* owned so far: the new parents [0, j) and the children [a, m) */
                for (int64_t k = 0; k < j; k++) free_node(level[k]);
                for (int64_t k = a; k < m; k++) free_node(level[k]);
                m = 0;
                s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a B+ tree");
                break;
            }
            nd->leaf = 0;
            nd->n = (int32_t)(e - a - 1);
            for (int64_t i = a; i < e; i++) {
                nd->u.child[i - a] = level[i];
                if (i > a) nd->keys[i - a - 1] = min_key(level[i]);
            }
            level[j] = nd; /* j <= a: the children were read first */
            p->bytes += sizeof *nd;
        }
        if (s) break;
        m = up;
        p->height++;
    }
    if (s) {
        for (int64_t j = 0; j < m; j++) free_node(level[j]);
    } else {
        p->root = level[0];
    }
    free(level);
    return s;
}

/* The number of keys of a node that are <= q (binary search): the child to take. */
static inline int32_t upper_bound(const cbp_pnode *nd, float q) {
    int32_t lo = 0, len = nd->n;
    while (len > 0) {
        int32_t half = len / 2;
        if (nd->keys[lo + half] <= q) {
            lo += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return lo;
}

int64_t canopy_cbp_pointer_lookup(const cbp_pointer_tree *p, const float *queries, int64_t nq,
                                  int64_t not_found, int64_t *out) {
    int64_t found = 0;
/* dynamic, like the forest engines' row blocks: fair when cores are shared */
#pragma omp parallel for num_threads(canopy_threads()) schedule(dynamic, 1024) \
    reduction(+ : found) if (nq > CBP_SERIAL_BELOW)
    for (int64_t i = 0; i < nq; i++) {
        float q = queries[i];
        const cbp_pnode *nd = p->root;
        int64_t v = not_found;
        if (nd) {
            while (!nd->leaf) nd = nd->u.child[upper_bound(nd, q)];
            int32_t j = upper_bound(nd, q);
            if (j > 0 && nd->keys[j - 1] == q) {
                v = nd->u.val[j - 1];
                found++;
            }
        }
        out[i] = v;
    }
    return found;
}
