/* SPDX-License-Identifier: MIT */
/* canopy_nbody: energy conservation on a two-body circular orbit and a small Plummer
 * cluster, bit-identical restart from a checkpoint, and refusals of bad input and
 * corrupt checkpoints; block time steps: equal to global steps at the finest rung, a
 * binary with distant companions on several rungs, restart, the kept (refitted) tree
 * against a new tree every substep, bad options; tree potentials along the steps or on
 * request. */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Equal masses 1/2 at separation 1 on a circular orbit: period 2 pi. Leapfrog's
 * energy error oscillates with amplitude ~ (omega dt)^2 / 8; at 5000 steps per orbit
 * that is ~2e-7, so 1e-6 leaves room for float32 forces and little else. */
static void check_two_body(void) {
    double pos[6] = {-0.5, 0, 0, 0.5, 0, 0}, vel[6] = {0, -0.5, 0, 0, 0.5, 0};
    float mass[2] = {0.5f, 0.5f};
    canopy_nbody_options o = canopy_nbody_options_default();
    int64_t steps = 5000;
    o.run.variant = CANOPY_VARIANT_DR; /* two bodies: skip auto's sampling every step */
    o.run.schedule = CANOPY_SCHEDULE_NONE;
    o.dt = 8.0 * atan(1.0) / (double)steps;
    canopy_nbody *s = NULL;
    CHECK_OK(canopy_nbody_create(pos, vel, mass, 2, &o, &s));
    if (!s) return;
    canopy_nbody_energy e0, e;
    CHECK_OK(canopy_nbody_energy_get(s, 100, &e0));
    CHECK_MSG(fabs(e0.total + 0.125) < 1e-12, "two-body energy %.15g, expected -1/8", e0.total);
    double worst = 0.0;
    for (int k = 0; k < 100; k++) {
        CHECK_OK(canopy_nbody_step(s, steps / 100));
        CHECK_OK(canopy_nbody_energy_get(s, 100, &e));
        double d = fabs((e.total - e0.total) / e0.total);
        worst = d > worst ? d : worst;
    }
    CHECK_MSG(worst < 1e-6, "two-body: relative energy error %.3g over one orbit", worst);
    CHECK_MSG(fabs(e.angular_momentum[2] - e0.angular_momentum[2]) < 1e-9,
              "two-body: angular momentum %.15g -> %.15g", e0.angular_momentum[2],
              e.angular_momentum[2]);
    const double *x = canopy_nbody_positions(s);
    CHECK_MSG(fabs(x[0] + 0.5) < 1e-3 && fabs(x[1]) < 1e-3 && fabs(x[3] - 0.5) < 1e-3,
              "two-body: after one period body 0 at (%.6f, %.6f)", x[0], x[1]);
    CHECK(canopy_nbody_steps_done(s) == steps);
    canopy_nbody_free(s);
}

static void plummer(int64_t n, uint64_t seed, double **pos, double **vel) {
    float *p = malloc((size_t)n * 3 * sizeof *p), *v = malloc((size_t)n * 3 * sizeof *v);
    CHECK_OK(canopy_gen_plummer(p, v, n, seed));
    *pos = malloc((size_t)n * 3 * sizeof **pos);
    *vel = malloc((size_t)n * 3 * sizeof **vel);
    for (int64_t i = 0; i < 3 * n; i++) (*pos)[i] = p[i], (*vel)[i] = v[i];
    free(p);
    free(v);
}

/* One Hénon time unit of a 300-body Plummer sphere: the energy error stays small
 * (tree and direct potentials both), momentum stays near zero. */
static void check_cluster(uint64_t seed) {
    int64_t n = 300;
    double *pos, *vel;
    plummer(n, seed, &pos, &vel);
    for (int op = 0; op < 2; op++) {
        canopy_nbody_options o = canopy_nbody_options_default();
        o.dt = 1.0 / 128;
        o.gravity.softening = 0.05f;
        o.gravity.theta = 0.5f;
        o.gravity.order = 2;
        o.gravity.opening = (canopy_opening)op;
        canopy_nbody *s = NULL;
        CHECK_OK(canopy_nbody_create(pos, vel, NULL, n, &o, &s));
        if (!s) continue;
        canopy_nbody_energy e0, e, et;
        CHECK_OK(canopy_nbody_energy_get(s, n, &e0));
        CHECK(e0.direct == 1);
        CHECK_OK(canopy_nbody_step(s, 128));
        CHECK_OK(canopy_nbody_energy_get(s, n, &e));
        CHECK_OK(canopy_nbody_energy_get(s, 0, &et));
        CHECK(et.direct == 0);
        double de = fabs((e.total - e0.total) / e0.total);
        CHECK_MSG(de < 2e-4, "seed %llu %s: cluster energy error %.3g after 128 steps",
                  (unsigned long long)seed, op ? "bucket" : "body", de);
        CHECK_MSG(fabs((et.potential - e.potential) / e.potential) < 2e-3,
                  "tree potential %.9g vs direct %.9g", et.potential, e.potential);
        double p = sqrt(e.momentum[0] * e.momentum[0] + e.momentum[1] * e.momentum[1] +
                        e.momentum[2] * e.momentum[2]);
        CHECK_MSG(p < 1e-3, "cluster momentum %.3g", p);
        canopy_nbody_free(s);
    }
    free(pos);
    free(vel);
}

/* 20 steps in one go equal 10 steps, a checkpoint, a restart (with another variant
 * and schedule) and 10 more, bit for bit; the checkpoints written at step 20 match. */
static void check_restart(uint64_t seed) {
    int64_t n = 700;
    double *pos, *vel;
    plummer(n, seed, &pos, &vel);
    for (int op = 0; op < 2; op++) {
        canopy_nbody_options o = canopy_nbody_options_default();
        o.dt = 1.0 / 128;
        o.gravity.softening = 0.01f;
        o.gravity.accuracy = 3e-4;
        o.gravity.opening = (canopy_opening)op;
        canopy_nbody *a = NULL, *b = NULL, *c = NULL;
        CHECK_OK(canopy_nbody_create(pos, vel, NULL, n, &o, &a));
        CHECK_OK(canopy_nbody_create(pos, vel, NULL, n, &o, &b));
        if (!a || !b) return;
        CHECK_OK(canopy_nbody_step(a, 20));
        CHECK_OK(canopy_nbody_step(b, 10));
        char p10[600], pa[600], pc[600]; /* check_tmp_path reuses one buffer */
        snprintf(p10, sizeof p10, "%s", check_tmp_path("nb10.ckpt"));
        snprintf(pa, sizeof pa, "%s", check_tmp_path("nba.ckpt"));
        snprintf(pc, sizeof pc, "%s", check_tmp_path("nbc.ckpt"));
        CHECK_OK(canopy_nbody_checkpoint(b, p10));
        canopy_run_options r = canopy_run_options_default();
        r.variant = CANOPY_VARIANT_SIMD_L;
        r.schedule = CANOPY_SCHEDULE_HILBERT;
        CHECK_OK(canopy_nbody_restart(p10, &r, &c));
        if (c) {
            CHECK(canopy_nbody_steps_done(c) == 10);
            CHECK_OK(canopy_nbody_step(c, 10));
            CHECK_MSG(!memcmp(canopy_nbody_positions(a), canopy_nbody_positions(c),
                              (size_t)n * 3 * sizeof(double)) &&
                          !memcmp(canopy_nbody_velocities(a), canopy_nbody_velocities(c),
                                  (size_t)n * 3 * sizeof(double)),
                      "%s opening: restarted run differs from the uninterrupted one",
                      op ? "bucket" : "body");
            CHECK_OK(canopy_nbody_checkpoint(a, pa));
            CHECK_OK(canopy_nbody_checkpoint(c, pc));
            char *ba = NULL, *bc = NULL;
            size_t la = 0, lc = 0;
            FILE *fa = fopen(pa, "rb"), *fc = fopen(pc, "rb");
            if (fa && fc) {
                ba = malloc(1 << 20), bc = malloc(1 << 20);
                la = fread(ba, 1, 1 << 20, fa), lc = fread(bc, 1, 1 << 20, fc);
                CHECK_MSG(la == lc && la > 0 && !memcmp(ba, bc, la),
                          "checkpoints at step 20 differ");
            }
            if (fa) fclose(fa);
            if (fc) fclose(fc);
            free(ba);
            free(bc);
        }
        canopy_nbody_free(a);
        canopy_nbody_free(b);
        canopy_nbody_free(c);
    }
    free(pos);
    free(vel);
}

static void write_bytes(const char *path, const char *buf, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(buf, 1, len, f);
    fclose(f);
}

static void check_refusals(void) {
    double pos[6] = {0, 0, 0, 1, 0, 0}, vel[6] = {0};
    float mass[2] = {1, 1};
    canopy_nbody_options o = canopy_nbody_options_default();
    o.dt = 0.01;
    canopy_nbody *s = NULL;
    pos[4] = NAN;
    CHECK_FAILS(canopy_nbody_create(pos, vel, mass, 2, &o, &s), CANOPY_ERR_INVALID,
                "position of body 1");
    pos[4] = 0;
    vel[2] = INFINITY;
    CHECK_FAILS(canopy_nbody_create(pos, vel, mass, 2, &o, &s), CANOPY_ERR_INVALID,
                "velocity of body 0");
    vel[2] = 0;
    mass[0] = -1;
    CHECK_FAILS(canopy_nbody_create(pos, vel, mass, 2, &o, &s), CANOPY_ERR_INVALID,
                "mass of body 0");
    mass[0] = NAN;
    CHECK_FAILS(canopy_nbody_create(pos, vel, mass, 2, &o, &s), CANOPY_ERR_INVALID,
                "mass of body 0");
    mass[0] = 1;
    o.dt = 0.0;
    CHECK_FAILS(canopy_nbody_create(pos, vel, mass, 2, &o, &s), CANOPY_ERR_INVALID, "dt");
    o.dt = -1.0;
    CHECK_FAILS(canopy_nbody_create(pos, vel, mass, 2, &o, &s), CANOPY_ERR_INVALID, "dt");
    o.dt = 0.01;
    o.gravity.softening = -0.1f;
    CHECK_FAILS(canopy_nbody_create(pos, vel, mass, 2, &o, &s), CANOPY_ERR_INVALID, "softening");
    o.gravity.softening = 0.0f;
    CHECK(s == NULL);

    /* Corrupt checkpoints: a flipped byte, a truncation, another file. */
    CHECK_OK(canopy_nbody_create(pos, vel, mass, 2, &o, &s));
    if (!s) return;
    char good[600], bad[600];
    snprintf(good, sizeof good, "%s", check_tmp_path("good.ckpt"));
    snprintf(bad, sizeof bad, "%s", check_tmp_path("bad.ckpt"));
    CHECK_OK(canopy_nbody_checkpoint(s, good));
    canopy_nbody_free(s);
    char buf[4096];
    FILE *f = fopen(good, "rb");
    size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    CHECK(len > 100);
    canopy_nbody *r = NULL;
    buf[len / 2] ^= 0x10;
    write_bytes(bad, buf, len);
    CHECK_FAILS(canopy_nbody_restart(bad, NULL, &r), CANOPY_ERR_FORMAT, "checksum");
    buf[len / 2] ^= 0x10;
    write_bytes(bad, buf, len - 9);
    CHECK_FAILS(canopy_nbody_restart(bad, NULL, &r), CANOPY_ERR_FORMAT, "truncated");
    write_bytes(bad, buf, 20);
    CHECK_FAILS(canopy_nbody_restart(bad, NULL, &r), CANOPY_ERR_FORMAT, "truncated");
    write_bytes(bad, "\x93NUMPY", 6);
    CHECK_FAILS(canopy_nbody_restart(bad, NULL, &r), CANOPY_ERR_FORMAT, "truncated");
    memcpy(buf, "NOTCANOP", 8);
    write_bytes(bad, buf, len);
    CHECK_FAILS(canopy_nbody_restart(bad, NULL, &r), CANOPY_ERR_FORMAT, "not a canopy nbody");
    CHECK(r == NULL);
    CHECK_OK(canopy_nbody_restart(good, NULL, &r));
    canopy_nbody_free(r);
    r = NULL;

    /* A version 1 checkpoint (72-byte header, no block-step or box fields; the current
     * header has 104 bytes) still restarts. */
    char v1[4096];
    uint32_t one = 1, bytes = 72;
    memcpy(buf, "CANOPYNB", 8);
    memcpy(v1, buf, 72);
    memcpy(v1 + 8, &one, 4);
    memcpy(v1 + 12, &bytes, 4);
    memcpy(v1 + 72, buf + 104, len - 104 - 8);
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 */
    for (size_t i = 0; i < len - 32 - 8; i++) h = (h ^ (unsigned char)v1[i]) * 0x100000001b3ull;
    memcpy(v1 + len - 32 - 8, &h, 8);
    write_bytes(bad, v1, len - 32);
    CHECK_OK(canopy_nbody_restart(bad, NULL, &r));
    CHECK(r && canopy_nbody_n(r) == 2 && canopy_nbody_get_options(r)->max_rung == 0);
    canopy_nbody_free(r);
}

static canopy_nbody_options block_options(double dt, int max_rung, double eta) {
    canopy_nbody_options o = canopy_nbody_options_default();
    o.dt = dt;
    o.gravity.softening = 0.05f;
    o.gravity.theta = 0.5f;
    o.gravity.order = 2;
    o.max_rung = max_rung;
    o.eta = eta;
    return o;
}

static int same_state(const canopy_nbody *a, const canopy_nbody *b) {
    size_t bytes = (size_t)canopy_nbody_n(a) * 3 * sizeof(double);
    return !memcmp(canopy_nbody_positions(a), canopy_nbody_positions(b), bytes) &&
           !memcmp(canopy_nbody_velocities(a), canopy_nbody_velocities(b), bytes);
}

/* Every body on the finest rung (eta tiny): block steps are the global leapfrog at
 * dt / 2^R, kick for kick, so the states agree bit for bit. */
static void check_block_finest(uint64_t seed) {
    int64_t n = 300;
    double *pos, *vel;
    plummer(n, seed, &pos, &vel);
    canopy_nbody_options ob = block_options(1.0 / 16, 3, 1e-9), og = block_options(1.0 / 128, 0, 0);
    canopy_nbody *b = NULL, *g = NULL;
    CHECK_OK(canopy_nbody_create(pos, vel, NULL, n, &ob, &b));
    CHECK_OK(canopy_nbody_create(pos, vel, NULL, n, &og, &g));
    if (b && g) {
        /* auto takes the GPU for large n on a GPU machine: block steps pin the CPU */
        CHECK(canopy_nbody_get_options(b)->run.backend == CANOPY_BACKEND_CPU);
        CHECK_OK(canopy_nbody_step(b, 4));
        CHECK_OK(canopy_nbody_step(g, 32));
        CHECK_MSG(same_state(b, g), "block steps on rung 3 differ from global steps of dt/8");
        canopy_nbody_work w;
        canopy_nbody_work_get(b, &w);
        CHECK_MSG(w.force_evals == 32 * n && w.force_evals_global == 32 * n &&
                      w.bodies_per_rung[3] == n && w.finest_rung == 3,
                  "work: %lld evaluations (global %lld), %lld on rung 3", (long long)w.force_evals,
                  (long long)w.force_evals_global, (long long)w.bodies_per_rung[3]);
    }
    canopy_nbody_free(b);
    canopy_nbody_free(g);
    free(pos);
    free(vel);
}

/* A tight binary (rung 5) and four light companions far out (rung 1): block steps
 * follow the global integration at the binary's step closely, conserve energy, make
 * far fewer force evaluations, and restart bit-identically from a checkpoint. */
static void check_block_binary(uint64_t seed) {
    enum { N = 6 };
    double pos[3 * N] = {-0.05, 0, 0, 0.05, 0, 0}, vel[3 * N] = {0, -1.5811388, 0, 0, 1.5811388, 0};
    float mass[N] = {0.5f, 0.5f, 1e-3f, 1e-3f, 1e-3f, 1e-3f};
    canopy_rng st = canopy_rng_make(seed, 33);
    for (int i = 2; i < N; i++) {
        double r = 2.0 + canopy_rng_uniform(&st), phi = 6.283185307 * canopy_rng_uniform(&st);
        double v = sqrt(1.0 / r);
        pos[3 * i] = r * cos(phi), pos[3 * i + 1] = r * sin(phi), pos[3 * i + 2] = 0.1 * (i - 3);
        vel[3 * i] = -v * sin(phi), vel[3 * i + 1] = v * cos(phi);
    }
    canopy_nbody_options ob = block_options(1.0 / 16, 6, 0.2), og = block_options(1.0 / 512, 0, 0);
    ob.gravity.softening = og.gravity.softening = 0.01f;
    canopy_nbody *b = NULL, *g = NULL, *half = NULL, *r = NULL;
    CHECK_OK(canopy_nbody_create(pos, vel, mass, N, &ob, &b));
    CHECK_OK(canopy_nbody_create(pos, vel, mass, N, &og, &g));
    CHECK_OK(canopy_nbody_create(pos, vel, mass, N, &ob, &half));
    if (!b || !g || !half) return;
    canopy_nbody_energy e0, e;
    CHECK_OK(canopy_nbody_energy_get(b, N, &e0));
    double worst = 0.0;
    for (int k = 0; k < 16; k++) {
        CHECK_OK(canopy_nbody_step(b, 1));
        CHECK_OK(canopy_nbody_energy_get(b, N, &e));
        double d = fabs((e.total - e0.total) / e0.total);
        worst = d > worst ? d : worst;
    }
    CHECK_OK(canopy_nbody_step(g, 512));
    CHECK_MSG(worst < 1e-4, "binary: block-step energy error %.3g", worst);
    const double *xb = canopy_nbody_positions(b), *xg = canopy_nbody_positions(g);
    double dmax = 0.0;
    for (int i = 0; i < 3 * N; i++) dmax = fmax(dmax, fabs(xb[i] - xg[i]));
    CHECK_MSG(dmax < 1e-4, "binary: block and global (dt/32) positions differ by %.3g", dmax);
    canopy_nbody_work w;
    canopy_nbody_work_get(b, &w);
    CHECK_MSG(w.bodies_per_rung[5] == 2 && w.bodies_per_rung[1] == N - 2 && w.finest_rung == 5,
              "binary: rungs 5 and 1 expected (%lld, %lld)", (long long)w.bodies_per_rung[5],
              (long long)w.bodies_per_rung[1]);
    /* per step dt: 32 evaluations of the binary, 2 of each companion, all at its end */
    CHECK_MSG(w.force_evals == 16 * (2 * 32 + (N - 2) * 2) && w.force_evals_global == 16 * N * 32,
              "binary: %lld evaluations, global %lld", (long long)w.force_evals,
              (long long)w.force_evals_global);

    CHECK_OK(canopy_nbody_step(half, 8));
    char path[600];
    snprintf(path, sizeof path, "%s", check_tmp_path("block.ckpt"));
    CHECK_OK(canopy_nbody_checkpoint(half, path));
    CHECK_OK(canopy_nbody_restart(path, NULL, &r));
    if (r) {
        CHECK(canopy_nbody_get_options(r)->max_rung == 6 &&
              canopy_nbody_get_options(r)->eta == 0.2);
        CHECK_OK(canopy_nbody_step(r, 8));
        CHECK_MSG(same_state(b, r), "block steps: restarted run differs");
    }
    canopy_nbody_free(b);
    canopy_nbody_free(g);
    canopy_nbody_free(half);
    canopy_nbody_free(r);
}

/* The kept tree (canopy_nbody_options.rebuild): a 2000-body Plummer sphere on several
 * rungs with a new tree every substep (rebuild 0), rebuild 1 and a rarely rebuilt tree
 * (rebuild 8) follow each other to the opening's error and conserve energy alike; the
 * kept trees are rebuilt at each step's end, where all bodies are active. */
static void check_block_refit(uint64_t seed) {
    int64_t n = 2000, steps = 3;
    double *pos, *vel;
    plummer(n, seed, &pos, &vel);
    static const double rebuild[3] = {0.0, 1.0, 8.0};
    canopy_nbody *s[3] = {NULL, NULL, NULL};
    canopy_nbody_energy e0, e[3];
    for (int k = 0; k < 3; k++) {
        canopy_nbody_options o = block_options(1.0 / 8, 5, 0.05);
        o.rebuild = rebuild[k];
        CHECK_OK(canopy_nbody_create(pos, vel, NULL, n, &o, &s[k]));
        if (!s[k]) goto done;
        if (k == 0) CHECK_OK(canopy_nbody_energy_get(s[k], n, &e0));
        CHECK_OK(canopy_nbody_step(s[k], steps));
        CHECK_OK(canopy_nbody_energy_get(s[k], n, &e[k]));
    }
    canopy_nbody_work w[3];
    for (int k = 0; k < 3; k++) canopy_nbody_work_get(s[k], &w[k]);
    int rungs = 0;
    for (int r = 0; r <= 5; r++) rungs += w[0].bodies_per_rung[r] > 0;
    CHECK_MSG(rungs >= 3, "refit: %d rungs used, want several", rungs);
    CHECK_MSG(w[0].tree_refits == 0 && w[1].tree_refits > 0 && w[1].tree_builds >= steps &&
                  w[2].tree_refits > w[1].tree_refits && w[2].tree_builds >= steps,
              "refit: builds/refits %lld/%lld, %lld/%lld, %lld/%lld", (long long)w[0].tree_builds,
              (long long)w[0].tree_refits, (long long)w[1].tree_builds, (long long)w[1].tree_refits,
              (long long)w[2].tree_builds, (long long)w[2].tree_refits);
    const double *x0 = canopy_nbody_positions(s[0]);
    for (int k = 1; k < 3; k++) {
        const double *x = canopy_nbody_positions(s[k]);
        double dmax = 0.0;
        for (int64_t i = 0; i < 3 * n; i++) dmax = fmax(dmax, fabs(x[i] - x0[i]));
        CHECK_MSG(dmax > 0.0 && dmax < 1e-4, "refit (rebuild %g): positions differ by %.3g",
                  rebuild[k], dmax);
        double d0 = fabs(e[0].total - e0.total), dk = fabs(e[k].total - e0.total);
        CHECK_MSG(dk < 1e-4 * fabs(e0.total) && fabs(dk - d0) < 1e-5 * fabs(e0.total),
                  "refit (rebuild %g): energy error %.3g, new trees %.3g", rebuild[k],
                  dk / fabs(e0.total), d0 / fabs(e0.total));
    }
done:
    for (int k = 0; k < 3; k++) canopy_nbody_free(s[k]);
    free(pos);
    free(vel);
}

static void check_block_refusals(void) {
    double pos[6] = {0, 0, 0, 1, 0, 0}, vel[6] = {0};
    canopy_nbody *s = NULL;
    canopy_nbody_options o = block_options(0.01, -1, 0.2);
    CHECK_FAILS(canopy_nbody_create(pos, vel, NULL, 2, &o, &s), CANOPY_ERR_INVALID, "max rung");
    o.max_rung = CANOPY_NBODY_MAX_RUNG + 1;
    CHECK_FAILS(canopy_nbody_create(pos, vel, NULL, 2, &o, &s), CANOPY_ERR_INVALID, "max rung");
    o.max_rung = 4;
    double etas[3] = {0.0, -0.1, NAN};
    for (int k = 0; k < 3; k++) {
        o.eta = etas[k];
        CHECK_FAILS(canopy_nbody_create(pos, vel, NULL, 2, &o, &s), CANOPY_ERR_INVALID, "eta");
    }
    o.eta = 0.2;
    double rebuilds[3] = {-1.0, NAN, INFINITY};
    for (int k = 0; k < 3; k++) {
        o.rebuild = rebuilds[k];
        CHECK_FAILS(canopy_nbody_create(pos, vel, NULL, 2, &o, &s), CANOPY_ERR_INVALID, "rebuild");
    }
    o.rebuild = 1.0;
    o.gravity.softening = 0.0f;
    CHECK_FAILS(canopy_nbody_create(pos, vel, NULL, 2, &o, &s), CANOPY_ERR_INVALID, "softening");
    o.gravity.softening = 0.05f;
    o.gravity.opening = CANOPY_OPENING_BODY;
    CHECK_FAILS(canopy_nbody_create(pos, vel, NULL, 2, &o, &s), CANOPY_ERR_UNSUPPORTED,
                "list opening");
    o.gravity.opening = CANOPY_OPENING_LIST;
    o.run.backend = CANOPY_BACKEND_GPU;
    CHECK_FAILS(canopy_nbody_create(pos, vel, NULL, 2, &o, &s), CANOPY_ERR_UNSUPPORTED,
                "GPU backend");
    CHECK(s == NULL);
}

/* Tree potentials: a run asking for energies every step (the steps then compute them
 * along) and one asking once at the end (an evaluation of its own) give the same bits
 * and the same states; block steps' energies, always evaluated on request, agree with
 * the direct sum at the current positions. */
static void check_potentials_on_demand(uint64_t seed) {
    int64_t n = 2000;
    double *pos, *vel;
    plummer(n, seed, &pos, &vel);
    canopy_nbody_options o = block_options(1.0 / 64, 0, 0.2);
    canopy_nbody *a = NULL, *b = NULL;
    CHECK_OK(canopy_nbody_create(pos, vel, NULL, n, &o, &a));
    CHECK_OK(canopy_nbody_create(pos, vel, NULL, n, &o, &b));
    canopy_nbody_energy ea, eb, ed;
    for (int k = 0; a && k < 8; k++) {
        CHECK_OK(canopy_nbody_energy_get(a, 0, &ea));
        CHECK_OK(canopy_nbody_step(a, 1));
    }
    CHECK_OK(canopy_nbody_energy_get(a, 0, &ea));
    if (b) CHECK_OK(canopy_nbody_step(b, 8));
    CHECK_OK(canopy_nbody_energy_get(b, 0, &eb));
    CHECK_MSG(a && b && same_state(a, b), "energy requests changed the steps");
    CHECK_MSG(ea.direct == 0 && ea.potential == eb.potential && ea.total == eb.total,
              "tree potential every step %.17g, on request %.17g", ea.potential, eb.potential);
    CHECK_OK(canopy_nbody_energy_get(b, n, &ed));
    CHECK_MSG(fabs((eb.potential - ed.potential) / ed.potential) < 2e-3,
              "tree potential %.9g vs direct %.9g", eb.potential, ed.potential);
    canopy_nbody_free(a);
    canopy_nbody_free(b);
    o = block_options(1.0 / 16, 3, 0.2);
    CHECK_OK(canopy_nbody_create(pos, vel, NULL, n, &o, &a));
    if (a) CHECK_OK(canopy_nbody_step(a, 4));
    CHECK_OK(canopy_nbody_energy_get(a, 0, &ea));
    CHECK_OK(canopy_nbody_energy_get(a, n, &ed));
    CHECK_MSG(fabs((ea.potential - ed.potential) / ed.potential) < 2e-3,
              "block steps: tree potential %.9g vs direct %.9g", ea.potential, ed.potential);
    canopy_nbody_free(a);
    free(pos);
    free(vel);
}

int main(void) {
    uint64_t seed = check_seed();
    check_two_body();
    for (uint64_t k = 0; k < 2; k++) check_cluster(seed + k);
    check_restart(seed);
    check_refusals();
    check_block_finest(seed);
    check_block_binary(seed);
    check_block_refit(seed);
    check_block_refusals();
    check_potentials_on_demand(seed);
    return check_finish();
}
