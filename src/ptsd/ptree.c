/* SPDX-License-Identifier: MIT */
/* Rooted trees from parent arrays: one root, parents in range, and every node
 * reachable from the root (which also rules out cycles). Children are stored in
 * increasing index order. */
#include "ptsd/ptsd.h"

#include <string.h>

void canopy_ptree_release(canopy_ptree *t) {
    if (!t) return;
    canopy_free(t->parent);
    canopy_free(t->child_ptr);
    canopy_free(t->child);
    memset(t, 0, sizeof *t);
}

canopy_status canopy_ptree_from_parents(const int64_t *parent, int64_t n, canopy_ptree *out) {
    if (!out) return canopy_fail(CANOPY_ERR_INVALID, "canopy_ptree_from_parents: out is NULL");
    memset(out, 0, sizeof *out);
    if (n < 1 || !parent)
        return canopy_fail(CANOPY_ERR_INVALID, "a tree needs at least one node (a root)");
    int64_t root = -1;
    for (int64_t i = 0; i < n; i++) {
        if (parent[i] == -1) {
            if (root >= 0)
                return canopy_fail(CANOPY_ERR_INVALID,
                                   "tree: nodes %lld and %lld are both roots (parent -1)",
                                   (long long)root, (long long)i);
            root = i;
        } else if (parent[i] < 0 || parent[i] >= n || parent[i] == i) {
            return canopy_fail(CANOPY_ERR_INVALID,
                               "tree: node %lld has parent %lld (must be -1 or another node "
                               "0..%lld)",
                               (long long)i, (long long)parent[i], (long long)n - 1);
        }
    }
    if (root < 0) return canopy_fail(CANOPY_ERR_INVALID, "tree: no root (no parent -1)");
    canopy_status s = canopy_alloc((void **)&out->parent, (size_t)n, sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_calloc((void **)&out->child_ptr, (size_t)n + 1, sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_alloc((void **)&out->child, (size_t)n, sizeof(int64_t));
    int64_t *queue = NULL;
    int32_t *depth = NULL;
    if (s == CANOPY_OK) s = canopy_alloc((void **)&queue, (size_t)n, sizeof *queue);
    if (s == CANOPY_OK) s = canopy_alloc((void **)&depth, (size_t)n, sizeof *depth);
    if (s != CANOPY_OK) goto fail;
    out->n = n;
    out->root = root;
    memcpy(out->parent, parent, (size_t)n * sizeof *parent);
    for (int64_t i = 0; i < n; i++)
        if (i != root) out->child_ptr[parent[i] + 1]++;
    for (int64_t i = 0; i < n; i++) out->child_ptr[i + 1] += out->child_ptr[i];
    /* queue doubles as the fill cursor per parent before the breadth-first walk. */
    memcpy(queue, out->child_ptr, (size_t)n * sizeof *queue);
    for (int64_t i = 0; i < n; i++)
        if (i != root) out->child[queue[parent[i]]++] = i;

    int64_t head = 0, tail = 0;
    queue[tail++] = root;
    depth[root] = 1;
    out->depth = 1;
    while (head < tail) {
        int64_t v = queue[head++];
        for (int64_t k = out->child_ptr[v]; k < out->child_ptr[v + 1]; k++) {
            int64_t c = out->child[k];
            depth[c] = depth[v] + 1;
            if (depth[c] > out->depth) out->depth = depth[c];
            queue[tail++] = c;
        }
    }
    if (tail != n) {
        /* Some node is not below the root: it lies on a cycle or hangs from one. */
        s = canopy_fail(CANOPY_ERR_INVALID,
                        "tree: %lld of %lld nodes are not reachable from the root %lld (the "
                        "parent links contain a cycle)",
                        (long long)(n - tail), (long long)n, (long long)root);
        goto fail;
    }
    canopy_free(queue);
    canopy_free(depth);
    return CANOPY_OK;
fail:
    canopy_free(queue);
    canopy_free(depth);
    canopy_ptree_release(out);
    return s;
}
