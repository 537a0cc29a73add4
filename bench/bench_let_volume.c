/* SPDX-License-Identifier: MIT */
/* Locally essential tree traffic and work for R domains, computed in one process with
 * the code the MPI path runs (gravity/let.h): a Plummer sphere cut along the Morton
 * curve into R equal-count domains, every domain's piece for every other domain
 * exported, its bytes counted as sent on the wire (16-byte header + records), and the
 * interactions (accepted cells + body terms) per body of every domain measured on an
 * evenly spaced sample (and from it each domain's work: max / mean over domains). As in
 * the MPI path, a domain whose top tree is all another
 * needs (canopy_let_top_suffices) sends it nothing: the receiver walks the top tree every rank
 * holds; the top trees' all-gather (a 1,560-byte record of boxes per rank plus its top
 * cells) is counted apart. This gives exact traffic for rank counts this machine
 * cannot run (bench/results/distributed.md).
 * --opening list: the same for the list engine over ranks (run_list).
 * usage: canopy-bench-let-volume [--n N] [--sample S] [--theta T] [--order P]
 *        [--curve morton|hilbert] [--opening body|list] R... */
#include "gravity/gravity_lists.h"
#include "gravity/let.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* src/dist/gravity.c's let_wire, and its top_record (header, 64 boxes, count) */
enum { WIRE_HEADER = 16, TOP_RECORD = 16 + LET_MAX_BOXES * 24 + 8 };

static canopy_schedule curve = CANOPY_SCHEDULE_MORTON;

static void run(const float *pos, int64_t n, int32_t r, int64_t sample, float theta,
                int32_t order) {
    int64_t *perm = malloc((size_t)n * sizeof *perm), *start = malloc((size_t)(r + 1) * 8);
    float *mass = malloc((size_t)n * sizeof *mass);
    for (int64_t i = 0; i < n; i++) mass[i] = (float)(1.0 / (double)n);
    if (canopy_let_split_curve(canopy_points_make(pos, n, 3), curve, NULL, r, perm, start)) {
        fprintf(stderr, "split: %s\n", canopy_last_error());
        exit(1);
    }
    float *dpos = malloc((size_t)n * 3 * sizeof *dpos), *dmass = malloc((size_t)n * 4);
    int64_t *gid = malloc((size_t)n * sizeof *gid);
    let_domain *dom = calloc((size_t)r, sizeof *dom);
    double t0 = canopy_now();
    for (int32_t k = 0; k < r; k++) {
        for (int64_t i = start[k]; i < start[k + 1]; i++) {
            memcpy(dpos + 3 * i, pos + 3 * perm[i], 3 * sizeof(float));
            dmass[i] = mass[perm[i]];
            gid[i] = perm[i];
        }
        int64_t nk = start[k + 1] - start[k];
        if (canopy_let_domain_build(canopy_points_make(dpos + 3 * start[k], nk, 3),
                                    dmass + start[k], gid + start[k], order, 0, dom + k)) {
            fprintf(stderr, "build: %s\n", canopy_last_error());
            exit(1);
        }
    }
    int64_t *sent = calloc((size_t)r, 8), *recv = calloc((size_t)r, 8), pairs = 0;
    int64_t inter = 0, counted = 0, min_pair = INT64_MAX, top_bytes = 0;
    double work_max = 0.0, work_sum = 0.0;
    let_piece *pc = calloc((size_t)r, sizeof *pc), *top = calloc((size_t)r, sizeof *top);
    for (int32_t k = 0; k < r; k++) {
        if (canopy_let_export(dom + k, NULL, 0, 1.0f / theta, LET_RADIUS_TOP, top + k)) {
            fprintf(stderr, "top: %s\n", canopy_last_error());
            exit(1);
        }
        top_bytes += TOP_RECORD + canopy_let_piece_bytes(top + k);
    }
    int64_t stride = n / sample > 0 ? n / sample : 1;
    for (int32_t i = 0; i < r; i++) {
        for (int32_t j = 0; j < r; j++) {
            let_radius rad = j == i ? LET_RADIUS_ALL : LET_RADIUS_CORRECTED;
            if (j != i &&
                canopy_let_top_suffices(top + j, dom[i].boxes[0], dom[i].n_boxes, 1.0f / theta)) {
                pc[j] = top[j]; /* borrowed: walked, not sent */
                continue;
            }
            if (canopy_let_export(dom + j, dom[i].boxes[0], dom[i].n_boxes, 1.0f / theta, rad,
                                  pc + j)) {
                fprintf(stderr, "export: %s\n", canopy_last_error());
                exit(1);
            }
            if (j == i || pc[j].n_cells == 0) continue;
            int64_t b = WIRE_HEADER + canopy_let_piece_bytes(pc + j);
            sent[j] += b;
            recv[i] += b;
            pairs++;
            min_pair = b < min_pair ? b : min_pair;
        }
        /* The sampled bodies of domain i (global positions stride apart in Morton order). */
        int64_t first = (start[i] + stride - 1) / stride * stride, ns = 0;
        for (int64_t g = first; g < start[i + 1]; g += stride) ns++;
        if (ns > 0) {
            float *q = malloc((size_t)ns * 3 * sizeof *q), *acc = malloc((size_t)ns * 12);
            int64_t *qid = malloc((size_t)ns * 8), *work = malloc((size_t)ns * 8), m = 0;
            for (int64_t g = first; g < start[i + 1]; g += stride, m++) {
                memcpy(q + 3 * m, dpos + 3 * g, 3 * sizeof(float));
                qid[m] = gid[g];
            }
            canopy_let_forces(pc, r, canopy_points_make(q, ns, 3), qid, 1.0f / theta, 1e-4f, acc,
                              NULL, work, NULL);
            int64_t wi = 0;
            for (int64_t k = 0; k < ns; k++) wi += work[k];
            inter += wi;
            counted += ns;
            /* The domain's work: its bodies times their sampled mean. */
            double wd = (double)wi / (double)ns * (double)(start[i + 1] - start[i]);
            work_max = wd > work_max ? wd : work_max;
            work_sum += wd;
            free(q);
            free(acc);
            free(qid);
            free(work);
        }
        for (int32_t j = 0; j < r; j++)
            if (pc[j].cells != top[j].cells) canopy_let_piece_free(pc + j);
        memset(pc, 0, (size_t)r * sizeof *pc);
    }
    int64_t tot = 0, max_s = 0, max_r = 0;
    for (int32_t k = 0; k < r; k++) {
        tot += sent[k];
        max_s = sent[k] > max_s ? sent[k] : max_s;
        max_r = recv[k] > max_r ? recv[k] : max_r;
    }
    printf("| %d | %lld | %.3g | %.3g | %.3g | %lld | %.3g | %lld | %.3g | %.1f | %.2f | %.1f |\n",
           (int)r, (long long)(n / r), (double)tot, (double)tot / r, (double)max_r,
           (long long)pairs, pairs ? (double)tot / (double)pairs : 0.0,
           (long long)(pairs ? min_pair : 0), r > 1 ? (double)top_bytes : 0.0,
           counted ? (double)inter / (double)counted : 0.0,
           work_sum > 0.0 ? work_max * r / work_sum : 1.0, canopy_now() - t0);
    fflush(stdout);
    for (int32_t k = 0; k < r; k++) {
        canopy_let_domain_free(dom + k);
        canopy_let_piece_free(top + k);
    }
    free(dom);
    free(pc);
    free(top);
    free(sent);
    free(recv);
    free(perm);
    free(start);
    free(mass);
    free(dpos);
    free(dmass);
    free(gid);
}

/* The list engine over ranks (dist/gravity_list.c): each domain's binary tree, a piece
 * of it for every other domain's bounding box (every pair with bodies exchanges one:
 * R (R - 1) messages), and every body's interactions from its own tree and the pieces
 * (no sampling: the whole evaluation runs). Besides the pieces a rank receives every
 * rank's 32-byte box (an all-gather) and an 8-byte count from each (an all-to-all). */
static void run_list(const float *pos, int64_t n, int32_t r, float theta, int32_t order) {
    int64_t *perm = malloc((size_t)n * sizeof *perm), *start = malloc((size_t)(r + 1) * 8);
    float *dpos = malloc((size_t)n * 3 * sizeof *dpos), *mass = malloc((size_t)n * 4);
    float *acc = malloc((size_t)n * 3 * sizeof *acc);
    for (int64_t i = 0; i < n; i++) mass[i] = (float)(1.0 / (double)n);
    if (canopy_let_split_curve(canopy_points_make(pos, n, 3), curve, NULL, r, perm, start)) {
        fprintf(stderr, "split: %s\n", canopy_last_error());
        exit(1);
    }
    gl_config cfg = {1, 0, 0, GL_DEFAULT_BUCKET, GL_DEFAULT_GROUP};
    gl_tree **t = calloc((size_t)r, sizeof *t);
    float *box = malloc((size_t)r * 6 * sizeof *box);
    double t0 = canopy_now();
    for (int32_t k = 0; k < r; k++) {
        for (int64_t i = start[k]; i < start[k + 1]; i++)
            memcpy(dpos + 3 * i, pos + 3 * perm[i], 3 * sizeof(float));
        int64_t nk = start[k + 1] - start[k];
        if (nk > 0 && canopy_gl_tree_build(canopy_points_make(dpos + 3 * start[k], nk, 3),
                                           mass + start[k], theta, order, &cfg, t + k)) {
            fprintf(stderr, "build: %s\n", canopy_last_error());
            exit(1);
        }
        if (t[k]) canopy_gl_tree_box(t[k], box + 6 * k);
    }
    int64_t *sent = calloc((size_t)r, 8), *recv = calloc((size_t)r, 8), pairs = 0, inter = 0;
    double work_max = 0.0, work_sum = 0.0;
    void **buf = calloc((size_t)r, sizeof *buf);
    gl_tree **pc = calloc((size_t)r, sizeof *pc);
    for (int32_t i = 0; i < r; i++) {
        if (!t[i]) continue;
        int np = 0;
        for (int32_t j = 0; j < r; j++) {
            int64_t b = 0;
            if (j == i || !t[j]) continue;
            if (canopy_gl_export(t[j], box + 6 * i, buf + np, &b) ||
                canopy_gl_piece_open(buf[np], b, pc + np)) {
                fprintf(stderr, "export: %s\n", canopy_last_error());
                exit(1);
            }
            np++;
            sent[j] += b;
            recv[i] += b;
            pairs++;
        }
        gl_counts c;
        if (canopy_gl_forces(t[i], (const gl_tree *const *)pc, np, 1e-4f, acc, NULL, NULL, &c)) {
            fprintf(stderr, "forces: %s\n", canopy_last_error());
            exit(1);
        }
        inter += c.pp + c.pc;
        work_max = (double)(c.pp + c.pc) > work_max ? (double)(c.pp + c.pc) : work_max;
        work_sum += (double)(c.pp + c.pc);
        for (int k = 0; k < np; k++) {
            canopy_gl_tree_free(pc[k]);
            canopy_free(buf[k]);
        }
    }
    int64_t tot = 0, max_r = 0;
    for (int32_t k = 0; k < r; k++) {
        tot += sent[k];
        max_r = recv[k] > max_r ? recv[k] : max_r;
    }
    printf("| %d | %lld | %.3g | %.3g | %.3g | %lld | %.3g | %lld | %.1f | %.2f | %.1f |\n", (int)r,
           (long long)(n / r), (double)tot, (double)tot / r, (double)max_r, (long long)pairs,
           pairs ? (double)tot / (double)pairs : 0.0, (long long)(40 * (int64_t)r),
           (double)inter / (double)n, work_sum > 0.0 ? work_max * r / work_sum : 1.0,
           canopy_now() - t0);
    fflush(stdout);
    for (int32_t k = 0; k < r; k++) canopy_gl_tree_free(t[k]);
    free(t), free(box), free(sent), free(recv), free(buf), free(pc);
    free(perm), free(start), free(dpos), free(mass), free(acc);
}

int main(int argc, char **argv) {
    int list = 0;
    int64_t n = 200000, sample = 4000;
    float theta = 0.5f;
    int32_t order = 2;
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "--n"))
            n = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--sample"))
            sample = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--theta"))
            theta = (float)atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--order"))
            order = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--opening"))
            list = !strcmp(argv[i + 1], "list");
        else if (!strcmp(argv[i], "--curve"))
            curve =
                strcmp(argv[i + 1], "hilbert") ? CANOPY_SCHEDULE_MORTON : CANOPY_SCHEDULE_HILBERT;
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (i >= argc || n < 1 || sample < 1) {
        fprintf(stderr, "usage: canopy-bench-let-volume [--n N] [--sample S] [--theta T] "
                        "[--order P] [--curve morton|hilbert] [--opening body|list] R...\n");
        return 2;
    }
    float *pos = malloc((size_t)n * 3 * sizeof *pos), *vel = malloc((size_t)n * 3 * sizeof *vel);
    if (canopy_gen_plummer(pos, vel, n, 1)) return 1;
    printf("# Plummer n %lld (seed 1), theta %g, order %d, %s curve, interactions on %lld sampled "
           "bodies\n",
           (long long)n, (double)theta, (int)order,
           curve == CANOPY_SCHEDULE_HILBERT ? "hilbert" : "morton", (long long)sample);
    if (list) {
        printf("# list opening (binary tree, one bounding box per rank): every pair exchanges a "
               "piece; interactions of every body\n"
               "| ranks | bodies/rank | LET bytes total | per rank | max received | messages | "
               "bytes/message | boxes + counts received per rank | interactions/body | work "
               "max/mean | s |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (; i < argc; i++) run_list(pos, n, (int32_t)atoi(argv[i]), theta, order);
        free(pos);
        free(vel);
        return 0;
    }
    printf("| ranks | bodies/rank | LET bytes total | per rank | max received | messages | "
           "bytes/message | smallest message | top trees received per rank | interactions/body "
           "| work max/mean (sampled) | s |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (; i < argc; i++) run(pos, n, (int32_t)atoi(argv[i]), sample, theta, order);
    free(pos);
    free(vel);
    return 0;
}
