/* SPDX-License-Identifier: MIT */
/* The cache model's inputs (issue 20): per-machine latencies measured once and kept
 * in a file under $XDG_CACHE_HOME/canopy (read back, re-measured when the machine key
 * or values are wrong, CANOPY_CALIBRATE=off/redo), and sll's hot-first order from
 * sampled branch statistics (canopy_cf_sample_bias). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "forest/forest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256], file[1100];

/* The one latencies file in dir/canopy. */
static int find_file(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s/canopy/latencies-*.txt 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    int ok = fgets(file, sizeof file, p) != NULL;
    pclose(p);
    file[strcspn(file, "\n")] = '\0';
    return ok;
}

/* Rewrites one line of the file that starts with `prefix`. */
static void edit_line(const char *prefix, const char *line) {
    char text[4096] = "", buf[512];
    FILE *fp = fopen(file, "r");
    if (!fp) return;
    while (fgets(buf, sizeof buf, fp)) {
        if (strncmp(buf, prefix, strlen(prefix)) == 0) snprintf(buf, sizeof buf, "%s\n", line);
        strncat(text, buf, sizeof text - strlen(text) - 1);
    }
    fclose(fp);
    fp = fopen(file, "w");
    if (fp) fputs(text, fp), fclose(fp);
}

static void test_calibration(void) {
    snprintf(dir, sizeof dir, "/tmp/canopy-test-cache-XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    setenv("XDG_CACHE_HOME", dir, 1);
    unsetenv("CANOPY_CALIBRATE");
    cf_latencies a, b;
    canopy_cf_calibrate(&a);
    CHECK_MSG(strncmp(a.source, "measured now, kept in ", 22) == 0, "first use: %s", a.source);
    CHECK_MSG(a.l1 > 0 && a.l2 > 0 && a.l3 > 0 && a.mem > 0 && a.l1 < a.mem,
              "latencies %g %g %g %g", a.l1, a.l2, a.l3, a.mem);
    CHECK(find_file());
    canopy_cf_calibrate(&b);
    CHECK_MSG(strcmp(b.source, file) == 0, "second use reads %s: %s", file, b.source);
    CHECK(fabs(b.l1 - a.l1) < 1e-3 && fabs(b.mem - a.mem) < 1e-3 && b.simd_walk == a.simd_walk);
    /* measured where there is AVX-512 */
    CHECK_MSG(canopy_cpu_isa() >= CANOPY_ISA_AVX512 ? a.simd_walk == 0 || a.simd_walk == 1
                                                    : a.simd_walk == -1,
              "simd_walk %d", a.simd_walk);
    edit_line("l1_ns", "l1_ns 123.5");
    edit_line("simd_walk", a.simd_walk == 1 ? "simd_walk 0" : "simd_walk 1");
    canopy_cf_calibrate(&b);
    CHECK_MSG(b.l1 == 123.5, "the file's value is used: %g", b.l1);
    CHECK_MSG(b.simd_walk == (a.simd_walk == 1 ? 0 : 1), "simd_walk from the file: %d",
              b.simd_walk);
    /* another machine's file (same name, other key) or a bad value: measured again */
    edit_line("key", "key another machine");
    canopy_cf_calibrate(&b);
    CHECK_MSG(strncmp(b.source, "measured now", 12) == 0 && b.l1 != 123.5, "%s", b.source);
    edit_line("mem_ns", "mem_ns -4");
    setenv("XDG_CACHE_HOME", "/proc/no-such-dir", 1); /* no usable directory either */
    canopy_cf_calibrate(&b);
    CHECK_MSG(strcmp(b.source, "measured now") == 0 && b.mem > 0, "%s", b.source);
    setenv("XDG_CACHE_HOME", dir, 1);
    canopy_cf_calibrate(&b); /* the bad value: measured again, and the file rewritten */
    CHECK_MSG(strncmp(b.source, "measured now, kept", 18) == 0 && b.mem > 0, "%s", b.source);
    setenv("CANOPY_CALIBRATE", "redo", 1);
    canopy_cf_calibrate(&b);
    CHECK_MSG(strncmp(b.source, "measured now", 12) == 0, "redo: %s", b.source);
    setenv("CANOPY_CALIBRATE", "off", 1);
    canopy_cf_calibrate(&b);
    CHECK_MSG(strncmp(b.source, "built-in", 8) == 0 && b.l1 == 4 && b.mem == 218 &&
                  b.simd_walk == -1,
              "off: %s", b.source);
    unsetenv("CANOPY_CALIBRATE");
    remove(file);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/canopy", dir);
    rmdir(sub);
    rmdir(dir);
    setenv("CANOPY_CALIBRATE", "off", 1); /* the rest of the process: no files */
}

/* One complete tree of depth 3 on feature 0, every threshold 0.5. */
static const char *tree3 =
    "{\"format\":\"canopy-forest\",\"version\":1,\"n_features\":1,\"trees\":[{\"output\":0,"
    "\"feature\":[0,0,0,0,0,0,0,-1,-1,-1,-1,-1,-1,-1,-1],"
    "\"threshold\":[0.5,0.5,0.5,0.5,0.5,0.5,0.5,0,0,0,0,0,0,0,0],"
    "\"left\":[1,3,5,7,9,11,13,-1,-1,-1,-1,-1,-1,-1,-1],"
    "\"right\":[2,4,6,8,10,12,14,-1,-1,-1,-1,-1,-1,-1,-1],"
    "\"value\":[0,0,0,0,0,0,0,1,2,3,4,5,6,7,8]}]}";

static void test_hot_first(void) {
    canopy_forest *f = NULL;
    CHECK_OK(
        canopy_forest_load_mem(tree3, strlen(tree3), "tree3", CANOPY_FOREST_FORMAT_CANOPY, &f));
    if (!f) return;
    float xs[64];
    for (int i = 0; i < 64; i++) xs[i] = 0.9f; /* every row goes right at every node */
    canopy_points X = {xs, 64, 1, 1};
    uint8_t *cold = malloc((size_t)f->n_nodes);
    double share = canopy_cf_sample_bias(f, X, cold);
    CHECK_MSG(share == 1.0, "hot share %g", share);
    int64_t b = f->trees[0].first;
    CHECK(cold[b] == 0);
    CHECK(cold[b + f->left[b]] == 1 && cold[b + f->right[b]] == 0);
    /* the sample takes rows 0, 20, 40, 60: two go left at the root, two right, and
     * each then keeps its side: (2 + 4 + 4) hot decisions of 12 */
    for (int i = 0; i < 64; i++) xs[i] = (i / 20) % 2 ? 0.9f : 0.1f;
    share = canopy_cf_sample_bias(f, X, NULL);
    CHECK_MSG(fabs(share - 10.0 / 12.0) < 1e-12, "hot share %g, want 10/12", share);

    /* sll: level 2's pair under the hot child comes first */
    for (int i = 0; i < 64; i++) xs[i] = 0.9f;
    canopy_cf_sample_bias(f, X, cold);
    const uint8_t *how[2] = {NULL, cold};
    int32_t first_under_left[2];
    for (int k = 0; k < 2; k++) {
        cf_layout L;
        CHECK_OK(canopy_cf_build_linked(f, CANOPY_FOREST_LAYOUT_SLL, 0, how[k], &L));
        if (!L.nodes) continue;
        const cf_lnode *root = &L.nodes[L.root[0]];
        const cf_lnode *l1 = &L.nodes[root->child], *r1 = &L.nodes[root->child + 1];
        first_under_left[k] = l1->child < r1->child;
        canopy_cf_layout_free(&L);
    }
    CHECK_MSG(first_under_left[0] == 1 && first_under_left[1] == 0,
              "without statistics the left child's pair comes first (%d); with right hot, "
              "the right child's (%d)",
              first_under_left[0], first_under_left[1]);
    /* and predictions stay those of the plain layout */
    canopy_predict_options o = canopy_predict_options_default();
    double want[64], got[64];
    for (int i = 0; i < 64; i++) xs[i] = (float)((i * 37) % 64) / 64.0f;
    o.layout = CANOPY_FOREST_LAYOUT_BF;
    CHECK_OK(canopy_forest_predict(f, X, &o, want, NULL));
    canopy_forest_layout hot_layouts[] = {CANOPY_FOREST_LAYOUT_SLL, CANOPY_FOREST_LAYOUT_HYBRID};
    canopy_forest_engine engines[] = {CANOPY_FOREST_ENGINE_SCALAR, CANOPY_FOREST_ENGINE_VM};
    for (int l = 0; l < 2; l++)
        for (int e = 0; e < 2; e++) {
            o.layout = hot_layouts[l];
            o.engine = engines[e];
            CHECK_OK(canopy_forest_predict(f, X, &o, got, NULL));
            CHECK(memcmp(got, want, sizeof got) == 0);
        }
    free(cold);
    canopy_forest_free(f);
}

int main(void) {
    test_calibration();
    test_hot_first();
    return check_finish();
}
