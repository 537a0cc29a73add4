/* SPDX-License-Identifier: MIT */
/* The GPU LET walk (gravity/let_gpu.cu) against canopy_let_forces on fresh random domains:
 * bodies split along the Morton curve into R domains, each domain's bodies walk its
 * whole tree and the others' pieces (exported with the corrected radius, the naive one,
 * which leaves pruned cells the bodies must open, or as top trees: every box cell
 * pruned), an empty piece among them. Work counts, expansions, body terms and dropped
 * cells must be identical, accelerations within 1e-5 relative (of the body's |a|) and
 * potentials likewise; uniform, Plummer and clumped duplicate bodies, orders 0 and 2,
 * n = 0, 1, 2, 33 and larger, strided query rows; canopy_let_domain_build_gpu's octree has
 * the host's cells and walks within float rounding of its. Exits 77 without a GPU;
 * CANOPY_GPU_SMALL=1 runs small sizes (compute-sanitizer). */
#define _POSIX_C_SOURCE 200809L
#include "body_sets.h"
#include "check.h"
#include "core/device.h"
#include "gravity/let_gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct dom_data {
    float *pos, *mass;
    int64_t *gid;
    int64_t n;
    let_domain dom;
} dom_data;

static gpu_let *walk;
static int64_t exact_bodies, all_bodies; /* bit-identical rows, for the report */

/* Domain i's bodies over pieces[0..np): the CPU walk and the GPU walk agree. q_stride
 * 4 walks the bodies through a strided copy of their rows. */
static void compare(const let_piece *pieces, int32_t np, const dom_data *d, float theta, float eps,
                    int q_stride, const char *what) {
    int64_t n = d->n;
    float *qs = NULL;
    canopy_points q = canopy_points_make(d->pos, n, 3);
    if (q_stride == 4) {
        qs = calloc((size_t)(4 * n + 4), sizeof *qs);
        for (int64_t i = 0; i < n; i++) memcpy(qs + 4 * i, d->pos + 3 * i, 3 * sizeof *qs);
        q.data = qs;
        q.stride = 4;
    }
    float *ac = malloc((size_t)(3 * n + 3) * sizeof(float)), *pc = malloc((size_t)(n + 1) * 4);
    float *ag = malloc((size_t)(3 * n + 3) * sizeof(float)), *pg = malloc((size_t)(n + 1) * 4);
    int64_t *wc = malloc((size_t)(n + 1) * 8), *wg = malloc((size_t)(n + 1) * 8);
    let_walk_stats sc, sg;
    float inv_theta = 1.0f / theta, eps2 = eps * eps;
    CHECK_OK(canopy_let_forces(pieces, np, q, d->gid, inv_theta, eps2, ac, pc, wc, &sc));
    CHECK_OK(canopy_gpu_let_launch(walk, pieces, np, q, d->gid, inv_theta, eps2));
    double secs = -1.0;
    CHECK_OK(canopy_gpu_let_finish(walk, ag, pg, wg, &sg, &secs));
    CHECK_MSG(secs >= 0.0, "%s: walk seconds %g", what, secs);
    CHECK_MSG(sc.expansions == sg.expansions && sc.direct == sg.direct && sc.dropped == sg.dropped,
              "%s: CPU %lld expansions, %lld terms, %lld dropped; GPU %lld, %lld, %lld", what,
              (long long)sc.expansions, (long long)sc.direct, (long long)sc.dropped,
              (long long)sg.expansions, (long long)sg.direct, (long long)sg.dropped);
    int64_t bad_work = 0, bad_acc = 0, first = -1;
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        bad_work += wc[i] != wg[i];
        double norm = sqrt((double)ac[3 * i] * ac[3 * i] + (double)ac[3 * i + 1] * ac[3 * i + 1] +
                           (double)ac[3 * i + 2] * ac[3 * i + 2]),
               e = 0.0;
        for (int j = 0; j < 3; j++) e += fabs((double)ac[3 * i + j] - (double)ag[3 * i + j]);
        double rel = norm > 0.0 ? e / norm : e;
        double prel = fabs((double)pc[i] - pg[i]) / (fabs((double)pc[i]) > 0 ? fabs(pc[i]) : 1.0);
        rel = rel > prel ? rel : prel;
        worst = rel > worst ? rel : worst;
        if (rel > 1e-5) {
            if (first < 0) first = i;
            bad_acc++;
        }
        exact_bodies += memcmp(ac + 3 * i, ag + 3 * i, 3 * sizeof *ac) == 0 && pc[i] == pg[i];
    }
    all_bodies += n;
    CHECK_MSG(bad_work == 0, "%s: %lld of %lld bodies with other work counts", what,
              (long long)bad_work, (long long)n);
    CHECK_MSG(bad_acc == 0, "%s: %lld of %lld bodies beyond 1e-5 (worst %.3g, first body %lld)",
              what, (long long)bad_acc, (long long)n, worst, (long long)first);
    free(qs);
    free(ac);
    free(pc);
    free(ag);
    free(pg);
    free(wc);
    free(wg);
}

static void run_case(int64_t n, int kind, int32_t r, int32_t order, float theta, uint64_t seed) {
    float *pos = make_bodies(n, kind, seed), eps = 0.01f;
    float *mass = malloc((size_t)(n + 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++) mass[i] = (float)(0.5 + rnd()) / (float)(n > 0 ? n : 1);
    int64_t *perm = malloc((size_t)(n + 1) * sizeof *perm), start[8];
    CHECK_OK(canopy_let_split_curve(canopy_points_make(pos, n, 3), CANOPY_SCHEDULE_MORTON, NULL, r,
                                    perm, start));
    dom_data *dd = calloc((size_t)r, sizeof *dd);
    for (int32_t k = 0; k < r; k++) {
        dom_data *d = dd + k;
        d->n = start[k + 1] - start[k];
        d->pos = malloc((size_t)(d->n + 1) * 3 * sizeof(float));
        d->mass = malloc((size_t)(d->n + 1) * sizeof(float));
        d->gid = malloc((size_t)(d->n + 1) * sizeof(int64_t));
        for (int64_t i = 0; i < d->n; i++) {
            int64_t g = perm[start[k] + i];
            memcpy(d->pos + 3 * i, pos + 3 * g, 3 * sizeof(float));
            d->mass[i] = mass[g];
            d->gid[i] = g;
        }
        CHECK_OK(canopy_let_domain_build(canopy_points_make(d->pos, d->n, 3), d->mass, d->gid,
                                         order, 0, &d->dom));
    }
    const let_radius radii[] = {LET_RADIUS_CORRECTED, LET_RADIUS_NAIVE, LET_RADIUS_TOP};
    const char *names[] = {"corrected", "naive", "top"};
    let_piece *pieces = calloc((size_t)r + 1, sizeof *pieces);
    for (int ri = 0; ri < 3; ri++)
        for (int32_t i = 0; i < r; i++) {
            dom_data *d = dd + i;
            for (int32_t j = 0; j < r; j++)
                CHECK_OK(canopy_let_export(&dd[j].dom, d->dom.boxes[0], d->dom.n_boxes,
                                           1.0f / theta, j == i ? LET_RADIUS_ALL : radii[ri],
                                           pieces + j));
            memset(pieces + r, 0, sizeof *pieces); /* an empty piece: nothing from there */
            char what[160];
            snprintf(what, sizeof what,
                     "n %lld kind %d, %d domains, order %d, theta %g, %s, domain %d (seed %llu)",
                     (long long)n, kind, (int)r, (int)order, (double)theta, names[ri], (int)i,
                     (unsigned long long)seed);
            compare(pieces, r + 1, d, theta, eps, (ri == 0 && i == 0) ? 4 : 3, what);
            if (r > 1) compare(pieces + 1, r - 1, d, theta, eps, 3, what); /* remote only */
            for (int32_t j = 0; j < r; j++) canopy_let_piece_free(pieces + j);
        }
    for (int32_t k = 0; k < r; k++) {
        canopy_let_domain_free(&dd[k].dom);
        free(dd[k].pos);
        free(dd[k].mass);
        free(dd[k].gid);
    }
    free(dd);
    free(pieces);
    free(perm);
    free(pos);
    free(mass);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* canopy_let_domain_build_gpu: the host build's cells, and walks over it within float rounding
 * of the walks over the host-built domain (a few acceptances may flip). */
static void check_gpu_build(int64_t n, uint64_t seed) {
    float *pos = make_bodies(n, 1, seed), *mass = malloc((size_t)(n + 1) * sizeof(float));
    int64_t *gid = malloc((size_t)(n + 1) * sizeof *gid);
    for (int64_t i = 0; i < n; i++) {
        mass[i] = (float)(0.5 + rnd()) / (float)n;
        gid[i] = i;
    }
    canopy_points b = canopy_points_make(pos, n, 3);
    let_domain dh, dg;
    CHECK_OK(canopy_let_domain_build(b, mass, gid, 2, 0, &dh));
    CHECK_OK(canopy_let_domain_build_gpu(b, mass, gid, 2, 0, &dg));
    CHECK_MSG(dh.tv->n_nodes == dg.tv->n_nodes && dh.n_boxes == dg.n_boxes,
              "n %lld: host build %d cells %d boxes, GPU build %d cells %d boxes", (long long)n,
              dh.tv->n_nodes, dh.n_boxes, dg.tv->n_nodes, dg.n_boxes);
    let_piece ph, pg;
    CHECK_OK(canopy_let_export(&dh, dh.boxes[0], dh.n_boxes, 2.0f, LET_RADIUS_ALL, &ph));
    CHECK_OK(canopy_let_export(&dg, dg.boxes[0], dg.n_boxes, 2.0f, LET_RADIUS_ALL, &pg));
    float *ah = malloc((size_t)(3 * n + 3) * 4), *ag = malloc((size_t)(3 * n + 3) * 4);
    double *rel = malloc((size_t)(n + 1) * sizeof *rel);
    CHECK_OK(canopy_let_forces(&ph, 1, b, gid, 2.0f, 1e-4f, ah, NULL, NULL, NULL));
    CHECK_OK(canopy_let_forces(&pg, 1, b, gid, 2.0f, 1e-4f, ag, NULL, NULL, NULL));
    for (int64_t i = 0; i < n; i++) {
        double d2 = 0.0, r2 = 0.0;
        for (int j = 0; j < 3; j++) {
            double e = (double)ah[3 * i + j] - ag[3 * i + j];
            d2 += e * e;
            r2 += (double)ah[3 * i + j] * ah[3 * i + j];
        }
        rel[i] = r2 > 0.0 ? sqrt(d2 / r2) : sqrt(d2);
    }
    qsort(rel, (size_t)n, sizeof *rel, cmp_double);
    CHECK_MSG(rel[n / 2] < 1e-5 && rel[n - 1] < 1e-2,
              "n %lld: GPU-built domain's forces differ: median %.3g, max %.3g", (long long)n,
              rel[n / 2], rel[n - 1]);
    canopy_let_piece_free(&ph);
    canopy_let_piece_free(&pg);
    canopy_let_domain_free(&dh);
    canopy_let_domain_free(&dg);
    free(pos);
    free(mass);
    free(gid);
    free(ah);
    free(ag);
    free(rel);
}

int main(void) {
    if (!canopy_gpu_usable()) return check_skip(canopy_gpu_why_not());
    int small = getenv("CANOPY_GPU_SMALL") != NULL;
    uint64_t seed = check_seed();
    CHECK_OK(canopy_gpu_let_create(&walk));
    CHECK(canopy_gpu_bind_device(-1) != CANOPY_OK); /* no such device */
    CHECK(canopy_gpu_bind_device(1 << 20) != CANOPY_OK);
    CHECK_OK(canopy_gpu_bind_device(0)); /* the tests' own device: harmless */
    /* small (compute-sanitizer): 0, 1, 33 and 300 bodies */
    const int64_t sizes[] = {0, 1, 2, 33, 1000, 20000}, sizes_small[] = {0, 1, 33, 300};
    int n_sizes = small ? 4 : 6;
    for (int si = 0; si < n_sizes; si++)
        for (int kind = 0; kind < 3; kind++)
            for (int32_t order = 0; order <= 2; order += 2) {
                int64_t n = small ? sizes_small[si] : sizes[si];
                int32_t r = n < 3 ? 1 : (int32_t)(1 + (si + kind + order) % 3);
                float theta = order == 2 ? 0.5f : 0.7f;
                run_case(n, kind, r, order, theta, seed + (uint64_t)(si * 16 + kind * 4));
            }
    if (!small) run_case(100000, 1, 2, 2, 0.5f, seed + 99); /* deeper Plummer trees */
    check_gpu_build(small ? 500 : 50000, seed + 7);
    /* The walk context is reusable after an empty walk. */
    let_piece none;
    memset(&none, 0, sizeof none);
    float a[3];
    CHECK_OK(
        canopy_gpu_let_launch(walk, &none, 1, canopy_points_make(NULL, 0, 3), NULL, 2.0f, 0.0f));
    CHECK_OK(canopy_gpu_let_finish(walk, a, NULL, NULL, NULL, NULL));
    CHECK(canopy_gpu_let_finish(walk, a, NULL, NULL, NULL, NULL) !=
          CANOPY_OK); /* nothing launched */
    canopy_gpu_let_free(walk);
    printf("GPU LET walk: %lld of %lld body rows bit-identical to canopy_let_forces\n",
           (long long)exact_bodies, (long long)all_bodies);
    return check_finish();
}
