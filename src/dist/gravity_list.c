/* SPDX-License-Identifier: MIT */
/* dist_list_forces: the single-process list engine (gravity/gravity_lists.h) over ranks.
 * Each rank builds its tree of its domain's bodies, all-gathers the domains' bounding
 * boxes, sends every other rank the piece of its tree pruned for that rank's box (one
 * all-to-all), and its sink groups walk their own tree and the received pieces into
 * one set of interaction lists (ChaNGa's remote walk), evaluated by the same
 * vectorised kernel. The opening test is the engine's own, so the accuracy is the
 * single process's at the same theta and order (docs/distributed.md). */
#include "gravity/gravity_lists.h"
#include "dist/gravity.h"

#include <string.h>

/* A rank's bounding box, or none (no bodies). */
typedef struct rank_box {
    float box[6];
    int32_t has, pad;
} rank_box;

/* Every other rank's piece, packed back to back in *buf (counts[r] bytes for rank r,
 * 0 for itself and for ranks without bodies). */
static canopy_status pack(const gl_tree *t, const rank_box *boxes, int size, int rank, char **buf,
                          int64_t *counts) {
    void **pc = NULL;
    canopy_status s = canopy_calloc((void **)&pc, (size_t)size, sizeof *pc);
    if (s) return s;
    int64_t total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = 0;
        if (!s && t && r != rank && boxes[r].has)
            s = canopy_gl_export(t, boxes[r].box, pc + r, counts + r);
        total += counts[r];
    }
    if (!s) s = canopy_alloc((void **)buf, (size_t)total + 1, 1);
    char *w = s ? NULL : *buf;
    for (int r = 0; r < size; r++) {
        if (w && counts[r] > 0) memcpy(w, pc[r], (size_t)counts[r]);
        if (w) w += counts[r];
        canopy_free(pc[r]);
    }
    canopy_free(pc);
    return s;
}

canopy_status dist_list_forces(MPI_Comm comm, canopy_points x, const float *mass,
                               const canopy_gravity_options *g, int32_t leaf_size, float *acc,
                               float *pot, double *work, canopy_dist_stats *stats) {
    int size = canopy_dist_size(comm), rank = canopy_dist_rank(comm);
    double t_start = canopy_now(), t_comm = 0.0, t_build = 0.0, t_walk = 0.0;
    gl_config cfg = {g->tree == CANOPY_GRAVITY_TREE_BINARY, 0, 0,
                     leaf_size > 0 ? leaf_size : GL_DEFAULT_BUCKET, GL_DEFAULT_GROUP};
    gl_tree *t = NULL, **views = NULL;
    rank_box mine, *boxes = NULL;
    char *send = NULL, *recv = NULL;
    int64_t *sc = NULL, *rc = NULL, *rd = NULL;
    int *isc = NULL;
    int nv = 0;
    gl_counts cnt;
    memset(&cnt, 0, sizeof cnt);
    memset(&mine, 0, sizeof mine);
    canopy_status s =
        x.n > 0 ? canopy_gl_tree_build(x, mass, g->theta, g->order, &cfg, &t) : CANOPY_OK;
    if (!s && t) {
        canopy_gl_tree_box(t, mine.box);
        mine.has = 1;
    }
    if (!s) s = canopy_alloc((void **)&boxes, (size_t)size, sizeof *boxes);
    if (!s) s = canopy_alloc((void **)&sc, (size_t)size * 3, sizeof *sc);
    if (!s) s = canopy_alloc((void **)&isc, (size_t)size * 4, sizeof *isc);
    if (!s) s = canopy_calloc((void **)&views, (size_t)size, sizeof *views);
    t_build += canopy_now() - t_start;
    if ((s = canopy_dist_agree(comm, s))) goto done;
    rc = sc + size;
    rd = sc + 2 * size;

    double t0 = canopy_now();
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, boxes, (int)sizeof mine, MPI_BYTE, comm);
    t_comm += canopy_now() - t0;
    t0 = canopy_now();
    s = pack(t, boxes, size, rank, &send, sc);
    t_build += canopy_now() - t0;
    if ((s = canopy_dist_agree(comm, s))) goto done;
    t0 = canopy_now();
    MPI_Alltoall(sc, 1, MPI_INT64_T, rc, 1, MPI_INT64_T, comm);
    int64_t rtotal = 0;
    int *isd = isc + size, *irc = isc + 2 * size, *ird = isc + 3 * size;
    s = canopy_dist_displs(sc, size, isc, isd, NULL);
    if (!s) s = canopy_dist_displs(rc, size, irc, ird, &rtotal);
    if (!s) s = canopy_alloc((void **)&recv, (size_t)rtotal + 1, 1);
    if (!(s = canopy_dist_agree(comm, s)))
        MPI_Alltoallv(send, isc, isd, MPI_BYTE, recv, irc, ird, MPI_BYTE, comm);
    t_comm += canopy_now() - t0;
    if (s) goto done;

    t0 = canopy_now();
    for (int r = 0; r < size && !s; r++) {
        rd[r] = r ? rd[r - 1] + rc[r - 1] : 0;
        if (rc[r] > 0) s = canopy_gl_piece_open(recv + rd[r], rc[r], views + nv++);
    }
    t_build += canopy_now() - t0;
    t0 = canopy_now();
    if (!s && t)
        s = canopy_gl_forces(t, (const gl_tree *const *)views, nv, g->softening * g->softening, acc,
                             pot, work, &cnt);
    t_walk = canopy_now() - t0;
    s = canopy_dist_agree(comm, s);
    if (!s && stats) {
        stats->interactions += cnt.pp + cnt.pc;
        dist_count_traffic(stats, sc, rc, size, rank);
    }
done:
    if (stats) {
        double total = canopy_now() - t_start;
        stats->comm_seconds += t_comm;
        stats->local_seconds += total - t_comm;
        stats->total_seconds += total;
        stats->build_seconds += t_build;
        /* one walk covers the local tree and the pieces: its time is the local walk's */
        stats->local_walk_seconds += t_walk;
        stats->device = -1;
        stats->opening = CANOPY_OPENING_LIST;
        stats->tree = g->tree;
    }
    for (int r = 0; r < nv; r++) canopy_gl_tree_free(views[r]);
    canopy_gl_tree_free(t);
    canopy_free(views);
    canopy_free(boxes);
    canopy_free(send);
    canopy_free(recv);
    canopy_free(sc);
    canopy_free(isc);
    return s;
}
