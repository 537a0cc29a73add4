/* SPDX-License-Identifier: MIT */
/* canopy-bench-bptree: Ren et al. 2014 Fig. 6 / Fig. 12 on the CPU. For each key
 * count, a B+-tree forest over distinct uniform random keys (integers < 2^24), query batches
 * drawn with left bias 0.5 (unbiased), 0.625, 0.75 and 0.875 (canopy_bptree_sample_
 * queries), and every configuration (the pointer-based B+ tree baseline, forest
 * layouts x engines, hybrid at several switch levels) timed through the public API.
 * Prints one JSON object per (keys, forest configuration, bias): median and min-max
 * of the lookup time over --repeat runs after one warm-up, of the pointer tree's time
 * in runs paired with them, and of the per-pair speed-up over the pointer tree. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "bench_util.h"
#include "canopy.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CFG = 32, MAX_BIAS = 8, MAX_REPEAT = 64 };

typedef struct config {
    char name[32];
    canopy_bptree_options o;
} config;

/* LAYOUT[@SWITCH]:ENGINE, e.g. "hybrid@4:vm_simd". */
static int parse_config(const char *s, config *c) {
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", s);
    c->o = canopy_bptree_options_default();
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *colon = strchr(buf, ':'), *at = strchr(buf, '@');
    if (colon) *colon = '\0';
    if (at) {
        *at = '\0';
        c->o.switch_level = atoi(at + 1);
    }
    if (canopy_forest_layout_parse(buf, &c->o.layout)) return -1;
    if (colon && canopy_forest_engine_parse(colon + 1, &c->o.engine)) return -1;
    return 0;
}

static void usage(void) {
    printf("usage: canopy-bench-bptree [--log2-keys 20,22,24] [--queries N] [--repeat R]\n"
           "       [--biases 0.5,0.625,0.75,0.875] [--configs LAYOUT[@SWITCH]:ENGINE,...]\n"
           "       [--keys-per-bucket K] [--seed S]\n"
           "Prints one JSON line per (keys, configuration, bias); each is timed against the\n"
           "pointer-based B+ tree in paired runs.\n");
}

int main(int argc, char **argv) {
    static const struct option opts[] = {{"log2-keys", required_argument, NULL, 'k'},
                                         {"queries", required_argument, NULL, 'q'},
                                         {"repeat", required_argument, NULL, 'n'},
                                         {"biases", required_argument, NULL, 'b'},
                                         {"configs", required_argument, NULL, 'c'},
                                         {"keys-per-bucket", required_argument, NULL, 'p'},
                                         {"seed", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    char log2s[128] = "20,22,24", biases_s[128] = "0.5,0.625,0.75,0.875";
    char configs_s[1024] = "df:vm_simd,bf:vm_simd,ll:vm_simd,"
                           "sll:vm_simd,cc:vm_simd,hybrid:vm_simd,sll:vm,sll:scalar";
    int64_t nq = 4 << 20, per_bucket = 256;
    int repeat = 5, c;
    uint64_t seed = 42;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            snprintf(log2s, sizeof log2s, "%s", optarg);
            break;
        case 'q':
            nq = atoll(optarg);
            break;
        case 'n':
            repeat = atoi(optarg);
            break;
        case 'b':
            snprintf(biases_s, sizeof biases_s, "%s", optarg);
            break;
        case 'c':
            snprintf(configs_s, sizeof configs_s, "%s", optarg);
            break;
        case 'p':
            per_bucket = atoll(optarg);
            break;
        case 's':
            seed = strtoull(optarg, NULL, 10);
            break;
        case 'h':
            usage();
            return 0;
        default:
            usage();
            return 2;
        }
    }
    if (repeat < 1 || repeat > MAX_REPEAT || nq < 1 || per_bucket < 1) {
        usage();
        return 2;
    }
    config cfg[MAX_CFG];
    double bias[MAX_BIAS];
    int ncfg = 0, nbias = 0;
    char *save, *tok;
    for (tok = strtok_r(configs_s, ",", &save); tok && ncfg < MAX_CFG;
         tok = strtok_r(NULL, ",", &save))
        if (parse_config(tok, &cfg[ncfg++]))
            return fprintf(stderr, "bad config '%s': %s\n", tok, canopy_last_error()), 2;
    for (tok = strtok_r(biases_s, ",", &save); tok && nbias < MAX_BIAS;
         tok = strtok_r(NULL, ",", &save))
        bias[nbias++] = atof(tok);

    float *q = malloc((size_t)nq * nbias * sizeof *q);
    int64_t *out = malloc((size_t)nq * sizeof *out);
    if (!q || !out) return fprintf(stderr, "out of memory\n"), 1;
    for (tok = strtok_r(log2s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int lg = atoi(tok);
        int64_t want = (int64_t)1 << lg, n = 0;
        /* Distinct uniform keys: each integer of [0, 2^24) (all exact in float32) is a
         * key with probability 2^lg / 2^24, so 2^24 keys is all of them. */
        if (lg < 1 || lg > 24) return fprintf(stderr, "--log2-keys: 1 to 24\n"), 2;
        float *keys = malloc((size_t)want * 2 * sizeof *keys);
        if (!keys) return fprintf(stderr, "out of memory\n"), 1;
        canopy_rng rng = canopy_rng_make(seed, (uint64_t)lg);
        double p = (double)want / (double)(1 << 24);
        for (int64_t i = 0; i < (1 << 24) && n < 2 * want; i++)
            if (p >= 1 || canopy_rng_uniform(&rng) < p) keys[n++] = (float)i;
        canopy_bptree *t = NULL;
        double t0 = canopy_now();
        if (canopy_bptree_build(keys, NULL, n, n / per_bucket > 1 ? n / per_bucket : 1, &t))
            return fprintf(stderr, "build: %s\n", canopy_last_error()), 1;
        double build_s = canopy_now() - t0;
        free(keys);
        canopy_bptree_info info;
        canopy_bptree_get_info(t, &info);
        for (int b = 0; b < nbias; b++)
            if (canopy_bptree_sample_queries(t, nq, bias[b], seed + 1000 + (uint64_t)b,
                                             q + (size_t)b * nq))
                return fprintf(stderr, "queries: %s\n", canopy_last_error()), 1;
        /* The pointer tree is kept beside the forest layout, so each timed forest run
         * is paired with a pointer run right before it: on a shared machine the ratio
         * of a pair is steadier than either time alone. */
        canopy_bptree_options po = canopy_bptree_options_default();
        po.method = CANOPY_BPTREE_POINTER;
        for (int ci = 0; ci < ncfg; ci++) {
            for (int b = 0; b < nbias; b++) {
                double tc[MAX_REPEAT], tp[MAX_REPEAT], ratio[MAX_REPEAT];
                canopy_bptree_stats st, sp;
                const float *qb = q + (size_t)b * nq;
                for (int r = -1; r < repeat; r++) {
                    if (canopy_bptree_lookup(t, qb, nq, &po, out, &sp) ||
                        canopy_bptree_lookup(t, qb, nq, &cfg[ci].o, out, &st))
                        return fprintf(stderr, "%s: %s\n", cfg[ci].name, canopy_last_error()), 1;
                    if (st.found != nq || sp.found != nq)
                        return fprintf(stderr, "%s: lost keys\n", cfg[ci].name), 1;
                    if (r < 0) continue;
                    tc[r] = st.lookup_seconds;
                    tp[r] = sp.lookup_seconds;
                    ratio[r] = tp[r] / tc[r];
                }
                bench_summary forest = bench_summarise(tc, repeat);
                bench_summary pointer = bench_summarise(tp, repeat);
                bench_summary speedup = bench_summarise(ratio, repeat);
                printf("{%s,\"bench\":\"bptree\",\"log2_keys\":%d,\"keys\":%lld,\"buckets\":%lld,"
                       "\"mean_depth\":%.2f,\"max_depth\":%d,\"tree_build_s\":%.3f,"
                       "\"queries\":%lld,\"bias\":%.3f,\"config\":\"%s\",\"layout\":\"%s\","
                       "\"engine\":\"%s\",\"switch_level\":%d,\"threads\":%d,"
                       "\"bytes\":%zu,\"pointer_bytes\":%zu,\"repeat\":%d,"
                       "\"median_s\":%.6f,\"min_s\":%.6f,\"max_s\":%.6f,"
                       "\"pointer_median_s\":%.6f,\"pointer_min_s\":%.6f,"
                       "\"pointer_max_s\":%.6f,\"mlookups_per_s\":%.2f,"
                       "\"pointer_mlookups_per_s\":%.2f,\"vs_pointer\":%.3f,"
                       "\"vs_pointer_min\":%.3f,\"vs_pointer_max\":%.3f,\"note\":\"%s\"}\n",
                       bench_meta_json(), lg, (long long)n, (long long)info.n_buckets,
                       info.mean_depth, info.max_depth, build_s, (long long)nq, bias[b],
                       cfg[ci].name, canopy_forest_layout_name(st.layout),
                       canopy_forest_engine_name(st.engine), st.switch_level, canopy_threads(),
                       st.layout_bytes, sp.layout_bytes, repeat, forest.med, forest.min, forest.max,
                       pointer.med, pointer.min, pointer.max, (double)nq / forest.med / 1e6,
                       (double)nq / pointer.med / 1e6, speedup.med, speedup.min, speedup.max,
                       st.note);
                fflush(stdout);
            }
        }
        canopy_bptree_free(t);
    }
    free(q);
    free(out);
    return 0;
}
