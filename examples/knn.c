/* SPDX-License-Identifier: MIT */
/* The smallest complete canopy program: 8 nearest neighbours of 1000 random queries
 * among 100000 random 3-D points, checked against the brute-force reference.
 * Build it against an installed canopy with CMake (find_package(canopy), see
 * tests/install/CMakeLists.txt) or with pkg-config:
 *   cc knn.c $(pkg-config --cflags --libs canopy) -o knn */
#include <canopy.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    const int64_t n = 100000, nq = 1000;
    const int32_t d = 3, k = 8;
    float *ref = malloc(sizeof(float) * n * d), *qry = malloc(sizeof(float) * nq * d);
    int64_t *idx = malloc(sizeof(int64_t) * nq * k), *ref_idx = malloc(sizeof(int64_t) * nq * k);
    float *dist2 = malloc(sizeof(float) * nq * k), *ref_dist2 = malloc(sizeof(float) * nq * k);
    if (!ref || !qry || !idx || !ref_idx || !dist2 || !ref_dist2) return 1;
    canopy_gen_uniform(ref, n, d, 0.0, 1.0, 1);
    canopy_gen_uniform(qry, nq, d, 0.0, 1.0, 2);

    canopy_run_options opt = canopy_run_options_default(); /* variant, schedule, backend: auto */
    canopy_stats st;
    canopy_points r = canopy_points_make(ref, n, d), q = canopy_points_make(qry, nq, d);
    if (canopy_knn(r, q, k, &opt, idx, dist2, &st) != CANOPY_OK ||
        canopy_knn_brute(r, q, k, ref_idx, ref_dist2) != CANOPY_OK) {
        fprintf(stderr, "knn: %s\n", canopy_last_error());
        return 1;
    }
    int64_t wrong = 0;
    for (int64_t i = 0; i < nq * k; i++) wrong += idx[i] != ref_idx[i];
    printf("canopy %s: knn %s/%s on %s, %.1f nodes per query, %lld of %lld neighbours differ "
           "from brute force\n",
           canopy_version(), canopy_variant_name(st.variant), canopy_schedule_name(st.schedule),
           canopy_backend_name(st.backend), st.nodes_per_query, (long long)wrong,
           (long long)(nq * k));
    free(ref), free(qry), free(idx), free(ref_idx), free(dist2), free(ref_dist2);
    return wrong != 0;
}
