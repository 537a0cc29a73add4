/* SPDX-License-Identifier: MIT */
/* canopy-bench: times the traversal applications through the public API and prints
 * one JSON object per (application, backend, variant, schedule): medians and min-max
 * of build and traverse time over --repeat runs after a warm-up, mean nodes visited
 * per query and work expansion. Peers are timed by bench/peers_*.py on the same data. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "bench_util.h"
#include "canopy.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_REPEAT = 64 };

/* Radius giving about `target` neighbours per query, from a sample of queries
 * (bisection on brute-force counts). */
static float radius_for_mean(canopy_points ref, canopy_points query, double target) {
    int64_t m = query.n < 512 ? query.n : 512;
    canopy_points sample = query;
    sample.n = m;
    int64_t *counts = malloc(sizeof(int64_t) * (size_t)(m + 1));
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 40; it++) {
        double mid = 0.5 * (lo + hi), total = 0.0;
        canopy_radius_count_brute(ref, sample, (float)mid, counts);
        for (int64_t i = 0; i < m; i++) total += (double)counts[i];
        if (total / (double)m < target)
            lo = mid;
        else
            hi = mid;
        if (it == 0 && total / (double)m < target) hi = 8.0, lo = 1.0;
    }
    free(counts);
    return (float)hi;
}

/* Fisher-Yates over the rows of a loaded (n, d) float32 array. */
static void shuffle_rows(canopy_array *a, uint64_t seed) {
    int64_t n = a->shape[0], d = a->ndim == 2 ? a->shape[1] : 1;
    float *p = (float *)a->data, tmp[256];
    canopy_rng r = canopy_rng_make(seed, 0);
    for (int64_t i = n - 1; i > 0 && d <= 256; i--) {
        int64_t j = (int64_t)canopy_rng_below(&r, (uint64_t)i + 1);
        memcpy(tmp, p + i * d, sizeof(float) * (size_t)d);
        memcpy(p + i * d, p + j * d, sizeof(float) * (size_t)d);
        memcpy(p + j * d, tmp, sizeof(float) * (size_t)d);
    }
}

static void usage(void) {
    printf("usage: canopy-bench --app knn|nn|radius|gravity --ref R.npy [--query Q.npy]\n"
           "       [-k K] [-r R | --mean-neighbours M] [--theta T] [--softening E]\n"
           "       [--variants rec,dr,...] [--schedules none,tree,...] [--backend cpu|gpu]\n"
           "       [--tree kd|ball|vp] [--repeat N] [--label TEXT] [--shuffle SEED]\n"
           "Prints one JSON line per (variant, schedule). --shuffle permutes the queries\n"
           "(gravity: the bodies) first, so their given order is incoherent.\n");
}

int main(int argc, char **argv) {
    static const struct option opts[] = {{"app", required_argument, NULL, 'a'},
                                         {"ref", required_argument, NULL, 'R'},
                                         {"query", required_argument, NULL, 'Q'},
                                         {"k", required_argument, NULL, 'k'},
                                         {"radius", required_argument, NULL, 'r'},
                                         {"mean-neighbours", required_argument, NULL, 'm'},
                                         {"theta", required_argument, NULL, 't'},
                                         {"softening", required_argument, NULL, 'e'},
                                         {"variants", required_argument, NULL, 'V'},
                                         {"schedules", required_argument, NULL, 'S'},
                                         {"backend", required_argument, NULL, 'b'},
                                         {"tree", required_argument, NULL, 'T'},
                                         {"repeat", required_argument, NULL, 'n'},
                                         {"label", required_argument, NULL, 'l'},
                                         {"shuffle", required_argument, NULL, 'X'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *app = "knn", *ref_path = NULL, *query_path = NULL, *label = "";
    char variants[256] = "rec,dr,gdr,simd_l", schedules[256] = "none,tree";
    int k = 8, repeat = 5, shuffle = 0;
    uint64_t shuffle_seed = 0;
    double radius = -1.0, mean_nb = 100.0, theta = 0.5, eps = 0.05;
    canopy_backend backend = CANOPY_BACKEND_CPU;
    canopy_tree_kind tree = CANOPY_TREE_KD;
    int c;
    while ((c = getopt_long(argc, argv, "hk:r:", opts, NULL)) != -1) {
        switch (c) {
        case 'a':
            app = optarg;
            break;
        case 'R':
            ref_path = optarg;
            break;
        case 'Q':
            query_path = optarg;
            break;
        case 'k':
            k = atoi(optarg);
            break;
        case 'r':
            radius = atof(optarg);
            break;
        case 'm':
            mean_nb = atof(optarg);
            break;
        case 't':
            theta = atof(optarg);
            break;
        case 'e':
            eps = atof(optarg);
            break;
        case 'V':
            snprintf(variants, sizeof variants, "%s", optarg);
            break;
        case 'S':
            snprintf(schedules, sizeof schedules, "%s", optarg);
            break;
        case 'b':
            if (canopy_backend_parse(optarg, &backend))
                return fprintf(stderr, "%s\n", canopy_last_error()), 2;
            break;
        case 'T':
            if (canopy_tree_kind_parse(optarg, &tree))
                return fprintf(stderr, "%s\n", canopy_last_error()), 2;
            break;
        case 'n':
            repeat = atoi(optarg);
            break;
        case 'l':
            label = optarg;
            break;
        case 'X':
            shuffle_seed = strtoull(optarg, NULL, 10);
            shuffle = 1;
            break;
        case 'h':
            usage();
            return 0;
        default:
            usage();
            return 2;
        }
    }
    if (!ref_path || repeat < 1 || repeat > MAX_REPEAT) {
        usage();
        return 2;
    }
    canopy_array ra, qa;
    memset(&qa, 0, sizeof qa);
    if (canopy_points_load(ref_path, &ra)) return fprintf(stderr, "%s\n", canopy_last_error()), 1;
    canopy_points ref =
        canopy_points_make(ra.data, ra.shape[0], (int32_t)(ra.ndim == 2 ? ra.shape[1] : 1));
    canopy_points query = ref;
    if (query_path) {
        if (canopy_points_load(query_path, &qa))
            return fprintf(stderr, "%s\n", canopy_last_error()), 1;
        query = canopy_points_make(qa.data, qa.shape[0], (int32_t)(qa.ndim == 2 ? qa.shape[1] : 1));
    }
    if (shuffle) shuffle_rows(query_path ? &qa : &ra, shuffle_seed);
    int is_nn = strcmp(app, "nn") == 0;
    if (is_nn) k = 1;
    int64_t nq = query.n;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(nq * (k > 3 ? k : 3) + 1));
    float *fbuf = malloc(sizeof(float) * (size_t)(nq * (k > 3 ? k : 3) + 1));
    if (strcmp(app, "radius") == 0 && radius < 0) radius = radius_for_mean(ref, query, mean_nb);

    char vlist[256], slist[256];
    snprintf(vlist, sizeof vlist, "%s", variants);
    for (char *vs = strtok(vlist, ","); vs; vs = strtok(NULL, ",")) {
        canopy_variant v;
        if (canopy_variant_parse(vs, &v)) return fprintf(stderr, "%s\n", canopy_last_error()), 2;
        snprintf(slist, sizeof slist, "%s", schedules);
        char *save = NULL;
        for (char *ss = strtok_r(slist, ",", &save); ss; ss = strtok_r(NULL, ",", &save)) {
            canopy_schedule sch;
            if (canopy_schedule_parse(ss, &sch))
                return fprintf(stderr, "%s\n", canopy_last_error()), 2;
            canopy_run_options o = canopy_run_options_default();
            o.variant = v;
            o.schedule = sch;
            o.backend = backend;
            o.tree = tree;
            double build[MAX_REPEAT], sched[MAX_REPEAT], trav[MAX_REPEAT], xfer[MAX_REPEAT],
                total[MAX_REPEAT];
            canopy_stats st;
            canopy_status s = CANOPY_OK;
            for (int rep = -1; rep < repeat && !s; rep++) {
                if (strcmp(app, "knn") == 0 || is_nn)
                    s = canopy_knn(ref, query_path ? query : (canopy_points){NULL, 0, 0, 0}, k, &o,
                                   idx, fbuf, &st);
                else if (strcmp(app, "radius") == 0)
                    s = canopy_radius_count(ref,
                                            query_path ? query : (canopy_points){NULL, 0, 0, 0},
                                            (float)radius, &o, idx, &st);
                else if (strcmp(app, "gravity") == 0)
                    s = canopy_gravity(ref, NULL, (float)theta, (float)eps, &o, fbuf, &st);
                else
                    return fprintf(stderr, "unknown app %s\n", app), 2;
                if (rep < 0) continue; /* warm-up */
                build[rep] = st.build_seconds;
                sched[rep] = st.schedule_seconds;
                trav[rep] = st.traverse_seconds;
                xfer[rep] = st.transfer_seconds;
                total[rep] = st.schedule_seconds + st.traverse_seconds;
            }
            if (s) {
                printf("{%s,\"label\":\"%s\",\"app\":\"%s\",\"variant\":\"%s\",\"schedule\":\"%s\","
                       "\"backend\":\"%s\",\"error\":\"%s\"}\n",
                       bench_meta_json(), label, app, vs, ss, canopy_backend_name(backend),
                       canopy_last_error());
                fflush(stdout);
                continue;
            }
            bench_summary b = bench_summarise(build, repeat), sc = bench_summarise(sched, repeat),
                          t = bench_summarise(trav, repeat), x = bench_summarise(xfer, repeat),
                          a = bench_summarise(total, repeat);
            printf("{%s,\"label\":\"%s\",\"app\":\"%s\",\"variant\":\"%s\",\"schedule\":\"%s\","
                   "\"backend\":\"%s\",\"tree\":\"%s\",\"n\":%lld,\"nq\":%lld,\"d\":%d,\"k\":%d,"
                   "\"radius\":%.6g,\"threads\":%d,\"repeat\":%d,"
                   "\"build_med\":%.6g,\"build_min\":%.6g,\"build_max\":%.6g,"
                   "\"schedule_med\":%.6g,\"schedule_min\":%.6g,\"schedule_max\":%.6g,"
                   "\"traverse_med\":%.6g,\"traverse_min\":%.6g,\"traverse_max\":%.6g,"
                   "\"transfer_med\":%.6g,\"total_med\":%.6g,\"total_min\":%.6g,"
                   "\"total_max\":%.6g,\"requested\":\"%s/%s\",\"shuffled\":%d,"
                   "\"profile_depth\":%d,\"nodes_per_group\":%.4g,"
                   "\"nodes_per_query\":%.4g,\"work_expansion\":%.4g,\"lane_calls\":%lld}\n",
                   bench_meta_json(), label, app, canopy_variant_name(st.variant),
                   canopy_schedule_name(st.schedule), canopy_backend_name(st.backend),
                   canopy_tree_kind_name(st.tree), (long long)ref.n, (long long)nq, (int)ref.d, k,
                   radius, canopy_threads(), repeat, b.med, b.min, b.max, sc.med, sc.min, sc.max,
                   t.med, t.min, t.max, x.med, a.med, a.min, a.max, vs, ss, shuffle,
                   st.profile_depth, st.nodes_per_group, st.nodes_per_query, st.work_expansion,
                   (long long)st.lane_calls);
            fflush(stdout);
        }
    }
    free(idx);
    free(fbuf);
    canopy_array_release(&ra);
    canopy_array_release(&qa);
    return 0;
}
