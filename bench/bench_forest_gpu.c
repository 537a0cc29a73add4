/* SPDX-License-Identifier: MIT */
/* canopy-forest-bench: times forest prediction configurations on one model and one
 * data file, the model loaded once. Prints one JSON line per configuration (medians
 * with min and max over --repeat runs after one warm-up run).
 *   canopy-forest-bench --model M --data X.npy [--label L] [--repeat R] SPEC...
 * SPEC = backend:engine:layout[:hier_depth[:mapping]], e.g. gpu:iter:csr,
 * gpu:enc:hier:5:atomic_free, cpu:vm_simd:auto. Every configuration's raw scores are
 * compared with the first one's (max relative difference in the output). */
#include "bench_util.h"
#include "canopy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_spec(const char *spec, canopy_predict_options *o) {
    char buf[256], *parts[5] = {NULL};
    snprintf(buf, sizeof buf, "%s", spec);
    int n = 0;
    for (char *p = strtok(buf, ":"); p && n < 5; p = strtok(NULL, ":")) parts[n++] = p;
    if (n < 3) return -1;
    *o = canopy_predict_options_default();
    o->output = CANOPY_FOREST_OUTPUT_RAW;
    if (canopy_backend_parse(parts[0], &o->backend) ||
        canopy_forest_engine_parse(parts[1], &o->engine) ||
        canopy_forest_layout_parse(parts[2], &o->layout))
        return -1;
    if (n > 3) o->hier_depth = atoi(parts[3]);
    if (n > 4 && canopy_forest_mapping_parse(parts[4], &o->mapping)) return -1;
    return 0;
}

int main(int argc, char **argv) {
    const char *model = NULL, *data = NULL, *label = "";
    int repeat = 5, first_spec = argc;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--model") && i + 1 < argc)
            model = argv[++i];
        else if (!strcmp(argv[i], "--data") && i + 1 < argc)
            data = argv[++i];
        else if (!strcmp(argv[i], "--label") && i + 1 < argc)
            label = argv[++i];
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else {
            first_spec = i;
            break;
        }
    }
    if (!model || !data || first_spec >= argc || repeat < 1 || repeat > 100) {
        fprintf(stderr, "usage: canopy-forest-bench --model M --data X.npy [--label L] "
                        "[--repeat R] backend:engine:layout[:depth[:mapping]]...\n");
        return 2;
    }
    canopy_forest *f = NULL;
    canopy_array X = {0};
    if (canopy_forest_load(model, CANOPY_FOREST_FORMAT_AUTO, &f) || canopy_npy_read(data, &X) ||
        canopy_array_convert(&X, CANOPY_F32) || X.ndim != 2) {
        fprintf(stderr, "canopy-forest-bench: %s\n", canopy_last_error());
        return 1;
    }
    canopy_forest_info info;
    canopy_forest_get_info(f, &info);
    int64_t n = X.shape[0];
    int32_t K = info.n_outputs;
    canopy_points P = {X.data, n, (int32_t)X.shape[1], X.shape[1]};
    double *ref = malloc(sizeof(double) * (size_t)n * K),
           *got = malloc(sizeof(double) * (size_t)n * K);
    double *wall = malloc(sizeof(double) * repeat), *pred = malloc(sizeof(double) * repeat);
    double *kern = malloc(sizeof(double) * repeat), *up = malloc(sizeof(double) * repeat);
    int have_ref = 0, rc = 0;
    for (int a = first_spec; a < argc; a++) {
        canopy_predict_options o;
        if (parse_spec(argv[a], &o)) {
            fprintf(stderr, "canopy-forest-bench: bad spec '%s': %s\n", argv[a],
                    canopy_last_error());
            rc = 2;
            continue;
        }
        canopy_predict_stats st, first;
        double *dst = have_ref ? got : ref;
        double t0 = canopy_now();
        if (canopy_forest_predict(f, P, &o, dst, &first)) {
            printf("{%s,\"label\":\"%s\",\"spec\":\"%s\",\"error\":\"%s\"}\n", bench_meta_json(),
                   label, argv[a], canopy_last_error());
            fflush(stdout);
            continue;
        }
        double first_wall = canopy_now() - t0;
        double maxdiff = 0;
        if (have_ref)
            for (int64_t i = 0; i < n * K; i++) {
                double d = fabs(got[i] - ref[i]) / (fabs(ref[i]) > 1 ? fabs(ref[i]) : 1);
                if (d > maxdiff) maxdiff = d;
            }
        have_ref = 1;
        for (int r = 0; r < repeat; r++) {
            t0 = canopy_now();
            canopy_forest_predict(f, P, &o, got, &st);
            wall[r] = canopy_now() - t0;
            pred[r] = st.predict_seconds;
            kern[r] = st.kernel_seconds;
            up[r] = st.upload_seconds;
        }
        bench_summary w = bench_summarise(wall, repeat), p = bench_summarise(pred, repeat),
                      k = bench_summarise(kern, repeat), u = bench_summarise(up, repeat);
        printf("{%s,\"label\":\"%s\",\"spec\":\"%s\",\"ran\":\"%s\",\"rows\":%lld,\"trees\":%d,"
               "\"max_depth\":%d,\"nodes\":%lld,\"repeat\":%d,\"wall\":[%.6f,%.6f,%.6f],"
               "\"predict\":[%.6f,%.6f,%.6f],\"kernel\":[%.6f,%.6f,%.6f],\"upload\":[%.6f,%.6f,"
               "%.6f],\"build\":%.6f,\"layout_bytes\":%zu,\"device_bytes\":%zu,"
               "\"first_wall\":%.6f,\"first_compile\":%.6f,\"first_cache\":%d,\"later_cache\":%d,"
               "\"maxdiff\":%.3g}\n",
               bench_meta_json(), label, argv[a], st.note, (long long)n, info.n_trees,
               info.max_depth, (long long)info.n_nodes, repeat, w.med, w.min, w.max, p.med, p.min,
               p.max, k.med, k.min, k.max, u.med, u.min, u.max, st.build_seconds, st.layout_bytes,
               st.device_bytes, first_wall, first.compile_seconds, first.kernel_cache,
               st.kernel_cache, maxdiff);
        fflush(stdout);
    }
    free(ref);
    free(got);
    free(wall);
    free(pred);
    free(kern);
    free(up);
    canopy_array_release(&X);
    canopy_forest_free(f);
    return rc;
}
