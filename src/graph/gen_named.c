/* SPDX-License-Identifier: MIT */
/* The named graphs of the design's workloads, matched to the paper's data sets:
 * kron16 stands for DIMACS kron_g500-logn16 (65,536 vertices, about 4.9 M directed
 * entries: edge factor 48 before self loops and repeats are dropped, as that graph
 * was made), powerlaw434k for CiteSeer (434,102 vertices, out-degree 1..1,199, mean
 * 73.9: alpha = 1.2318 gives that mean, so about 32 M directed entries). */
#include "graph/graph.h"

#include <string.h>

static const char *const names[] = {"kron16", "powerlaw434k", NULL};

const char *const *canopy_graph_gen_names(void) {
    return names;
}

canopy_status canopy_graph_gen(const char *name, uint64_t seed, canopy_csr *out) {
    if (!out) return canopy_fail(CANOPY_ERR_INVALID, "canopy_graph_gen: out is NULL");
    memset(out, 0, sizeof *out);
    if (name && !strcmp(name, "kron16")) return canopy_gen_kron(16, 48, seed, out);
    if (name && !strcmp(name, "powerlaw434k"))
        return canopy_gen_powerlaw(434102, 1, 1199, 1.2318, seed, out);
    return canopy_fail(CANOPY_ERR_INVALID, "unknown graph generator '%s' (kron16, powerlaw434k)",
                       name ? name : "(null)");
}
