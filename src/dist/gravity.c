/* SPDX-License-Identifier: MIT */
/* canopy_dist_gravity: bodies moved to curve domains of equal estimated work
 * (canopy_dist_decompose_by_density), a
 * local octree per rank, locally essential trees exchanged with one non-blocking
 * all-to-all while the local tree is walked, then the received pieces walked, and
 * the forces sent back to the ranks that own the bodies (docs/distributed.md). */
#include "dist/gravity.h"

#include "dist/gpu_bind.h"
#include "gravity/gpu_multipole.h"
#include "gravity/let.h"
#include "gravity/let_gpu.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A piece on the wire: this header, n_cells let_cell records, n_bodies let_body
 * records. Every part is a multiple of 8 bytes, so pieces packed back to back in a
 * 64-byte aligned buffer keep their records aligned. */
typedef struct let_wire {
    int32_t n_cells, n_bodies, depth, order;
} let_wire;
/* Pieces of the local walk between which the exchange is given a chance to progress. */
enum { LOCAL_CHUNKS = 16 };

_Static_assert(sizeof(let_wire) % 8 == 0 && sizeof(let_cell) % 8 == 0 && sizeof(let_body) % 8 == 0,
               "LET records must keep 8-byte alignment when packed");

canopy_status dist_gravity_resolve(canopy_gravity_options *g, const canopy_run_options *o) {
    if (g->box != 0.0f)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "gravity: periodic boxes are not built across ranks; run one process");
    /* bucket opening is the single-GPU engine's (GPU ranks only: dist_gravity_backend) */
    int bucket = g->opening == CANOPY_OPENING_BUCKET;
    if (g->accuracy != 0.0) {
        canopy_status s =
            bucket ? canopy_gpu_mp_choose(g->accuracy, &g->theta, &g->order, NULL)
                   : canopy_gravity_choose_for(g, g->accuracy, &g->theta, &g->order, NULL);
        if (s) return s;
        g->accuracy = 0.0;
    }
    if (!(g->theta > 0.0f) || !isfinite(g->theta))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: theta must be > 0 (got %g)",
                           (double)g->theta);
    int max_order = g->opening == CANOPY_OPENING_LIST ? 4 : 2;
    if (g->order != 0 && (g->order < 2 || g->order > max_order))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: order must be 0 or 2%s (got %d)",
                           max_order > 2 ? "-4"
                           : bucket      ? " with bucket opening (the GPU's)"
                                         : " with body opening",
                           (int)g->order);
    if (g->opening == CANOPY_OPENING_LIST && g->tree != CANOPY_GRAVITY_TREE_OCT &&
        g->tree != CANOPY_GRAVITY_TREE_BINARY)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: tree must be oct or binary");
    if (!(g->softening >= 0.0f) || !isfinite(g->softening))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: softening must be finite and >= 0");
    (void)o; /* the backend is chosen with the body count (dist_gravity_backend) */
    return CANOPY_OK;
}

canopy_status dist_gravity_backend(MPI_Comm comm, canopy_backend backend,
                                   const canopy_gravity_options *g, int64_t n_all, int *use_gpu) {
    if (g->opening == CANOPY_OPENING_LIST) {
        *use_gpu = 0;
        if (backend == CANOPY_BACKEND_GPU)
            return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                               "gravity: GPU ranks walk with bucket or body opening (--opening "
                               "bucket|body); list opening over ranks runs on the CPU");
        return CANOPY_OK;
    }
    canopy_status s = dist_gpu_choose(comm, backend, n_all, GPU_MP_AUTO_MIN, "gravity", use_gpu);
    if (!s && !*use_gpu && g->opening == CANOPY_OPENING_BUCKET)
        s = canopy_fail(CANOPY_ERR_UNSUPPORTED,
                        "gravity: bucket opening over ranks is the GPU ranks' engine (backend "
                        "gpu, or auto with a GPU on every rank); CPU ranks walk with list or "
                        "body opening");
    return s;
}

void dist_count_traffic(canopy_dist_stats *st, const int64_t *sent, const int64_t *received,
                        int size, int rank) {
    for (int r = 0; r < size; r++) {
        if (r == rank) continue;
        st->bytes_sent += sent[r];
        st->bytes_received += received[r];
        st->messages += sent[r] > 0;
    }
}

void dist_offsets(MPI_Comm comm, int64_t n, int64_t *first, int64_t *total) {
    int64_t f = 0, t = 0;
    MPI_Exscan(&n, &f, 1, MPI_INT64_T, MPI_SUM, comm);
    if (canopy_dist_rank(comm) == 0) f = 0; /* MPI_Exscan leaves rank 0's undefined */
    MPI_Allreduce(&n, &t, 1, MPI_INT64_T, MPI_SUM, comm);
    *first = f;
    *total = t;
}

/* What every rank holds of every other (the shared top of the global tree): its
 * boxes (let_domain's top-cell boxes), which decide what it is sent, and its top
 * tree (the cells above and at those boxes, with multipoles), which stands for its
 * whole piece wherever canopy_let_top_suffices. On the wire: this, then the top's cells. */
typedef struct top_record {
    let_wire w; /* the top tree's header (n_bodies 0) */
    float boxes[LET_MAX_BOXES][6];
    int32_t n_boxes, pad;
} top_record;

_Static_assert(sizeof(top_record) % 8 == 0, "top records travel as 8-byte words");

/* A rank's view of another's top record, inside the all-gathered words. */
typedef struct top_view {
    const float *boxes;
    int32_t n_boxes;
    let_piece top; /* cells borrowed from the record; no bodies */
} top_view;

/* Every rank's top record, all-gathered: views[r] points into *words. */
static canopy_status share_tops(MPI_Comm comm, const let_domain *dom, const let_piece *top,
                                uint64_t **words, top_view *views) {
    int size = canopy_dist_size(comm);
    int64_t nw = ((int64_t)sizeof(top_record) + canopy_let_piece_bytes(top)) / 8, n_all = 0;
    uint64_t *mine = NULL;
    int64_t *counts = NULL;
    canopy_status s = canopy_calloc((void **)&mine, (size_t)nw, 8);
    if (!s) s = canopy_alloc((void **)&counts, (size_t)size, sizeof *counts);
    if (!s) {
        top_record h;
        memset(&h, 0, sizeof h);
        h.w = (let_wire){top->n_cells, 0, top->depth, top->order};
        memcpy(h.boxes, dom->boxes, sizeof h.boxes);
        h.n_boxes = dom->n_boxes;
        memcpy(mine, &h, sizeof h);
        if (top->n_cells > 0)
            memcpy((char *)mine + sizeof h, top->cells, (size_t)top->n_cells * sizeof(let_cell));
    }
    if ((s = canopy_dist_agree(comm, s))) goto done;
    s = canopy_dist_allgatherv(comm, mine, nw, 8, (void **)words, counts, &n_all);
    const char *p = (const char *)*words;
    for (int r = 0; !s && r < size; r++) {
        top_record h;
        memcpy(&h, p, sizeof h);
        int64_t want = (int64_t)sizeof h + (int64_t)h.w.n_cells * (int64_t)sizeof(let_cell);
        if (h.w.n_cells < 0 || h.n_boxes < 0 || h.n_boxes > LET_MAX_BOXES || want != 8 * counts[r])
            s = canopy_fail(CANOPY_ERR_INTERNAL, "gravity: the top tree of rank %d is malformed",
                            r);
        top_view *v = views + r;
        memset(v, 0, sizeof *v);
        v->boxes = (const float *)(const void *)(p + offsetof(top_record, boxes));
        v->n_boxes = h.n_boxes;
        v->top.cells = (let_cell *)(void *)(p + sizeof h);
        v->top.n_cells = h.w.n_cells;
        v->top.depth = h.w.depth;
        v->top.order = h.w.order;
        p += 8 * counts[r];
    }
done:
    canopy_free(mine);
    canopy_free(counts);
    return s;
}

/* Serialises the pieces this rank exports to every other rank (views: every rank's
 * boxes); none to a rank that this rank's top tree suffices for. */
static canopy_status pack_pieces(MPI_Comm comm, const let_domain *dom, const let_piece *top,
                                 const top_view *views, float inv_theta, char **buf,
                                 int64_t *counts) {
    int size = canopy_dist_size(comm), rank = canopy_dist_rank(comm);
    let_piece *pc = NULL;
    canopy_status s = canopy_calloc((void **)&pc, (size_t)size, sizeof *pc);
    /* The exports are independent: with a destination per thread or more the rank's
     * threads share them (a serial loop here was the walk's only companion that grows
     * with the rank count); with fewer, each export spreads over the threads itself
     * (canopy_let_export). Errors are thread-local, so the first one's message is carried to
     * this thread. */
    canopy_status failed = CANOPY_OK;
    char why[256] = "";
#pragma omp parallel for schedule(dynamic, 1)                                                      \
    num_threads(canopy_threads()) if (size - 1 >= canopy_threads())
    for (int r = 0; r < size; r++) {
        if (s || r == rank ||
            canopy_let_top_suffices(top, views[r].boxes, views[r].n_boxes, inv_theta))
            continue;
        canopy_status e = canopy_let_export(dom, views[r].boxes, views[r].n_boxes, inv_theta,
                                            LET_RADIUS_CORRECTED, pc + r);
        if (e) {
#pragma omp critical(canopy_let_export_error)
            if (!failed) {
                failed = e;
                snprintf(why, sizeof why, "%s", canopy_last_error());
            }
        }
    }
    if (!s && failed) s = canopy_fail(failed, "%s", why);
    int64_t total = 0;
    for (int r = 0; !s && r < size; r++) {
        counts[r] =
            pc[r].n_cells > 0 ? (int64_t)sizeof(let_wire) + canopy_let_piece_bytes(pc + r) : 0;
        total += counts[r];
    }
    if (!s) s = canopy_alloc((void **)buf, (size_t)total + 1, 1);
    char *w = s ? NULL : *buf;
    for (int r = 0; pc && r < size; r++) {
        if (w && counts[r] > 0) {
            let_wire h = {pc[r].n_cells, pc[r].n_bodies, pc[r].depth, pc[r].order};
            memcpy(w, &h, sizeof h);
            w += sizeof h;
            memcpy(w, pc[r].cells, (size_t)pc[r].n_cells * sizeof(let_cell));
            w += (size_t)pc[r].n_cells * sizeof(let_cell);
            if (pc[r].n_bodies > 0) /* all cells pruned: no body array at all */
                memcpy(w, pc[r].bodies, (size_t)pc[r].n_bodies * sizeof(let_body));
            w += (size_t)pc[r].n_bodies * sizeof(let_body);
        }
        canopy_let_piece_free(pc + r);
    }
    canopy_free(pc);
    return s;
}

/* The pieces to walk, in rank order (no copies; in device memory where recv is, with
 * their headers in heads): the one received from a rank, or its top tree where it sent none (it
 * found the top sufficient; checked again here, as the receiver must not silently walk a top that
 * some body would open). *np receives their number. */
static canopy_status unpack_pieces(char *recv, const char *heads, const int64_t *counts, int size,
                                   int rank, const top_view *views, float inv_theta, let_piece *pc,
                                   int *np) {
    *np = 0;
    char *p = recv;
    const top_view *me = views + rank;
    for (int r = 0; r < size; r++) {
        if (r == rank) continue;
        if (counts[r] == 0) {
            if (views[r].top.n_cells == 0) continue; /* no bodies there */
            if (!canopy_let_top_suffices(&views[r].top, me->boxes, me->n_boxes, inv_theta))
                return canopy_fail(CANOPY_ERR_INTERNAL,
                                   "gravity: rank %d sent no piece but its top tree is not enough",
                                   r);
            pc[(*np)++] = views[r].top;
            continue;
        }
        let_wire h; /* heads: the headers, brought to the host, of pieces on the device */
        memcpy(&h, heads ? heads + sizeof h * (size_t)r : p, sizeof h);
        int64_t want = (int64_t)sizeof h + (int64_t)h.n_cells * (int64_t)sizeof(let_cell) +
                       (int64_t)h.n_bodies * (int64_t)sizeof(let_body);
        if (h.n_cells < 1 || h.n_bodies < 0 || want != counts[r])
            return canopy_fail(CANOPY_ERR_INTERNAL,
                               "gravity: a LET piece from rank %d is malformed", r);
        let_piece *q = pc + (*np)++;
        q->cells = (let_cell *)(void *)(p + sizeof h);
        q->bodies = (let_body *)(void *)(p + sizeof h + (size_t)h.n_cells * sizeof(let_cell));
        q->n_cells = h.n_cells;
        q->n_bodies = h.n_bodies;
        q->depth = h.depth;
        q->order = h.order;
        p += counts[r];
    }
    return CANOPY_OK;
}

/* Adds the terms of pieces pc[0..np) to acc, pot and work, their count to *terms. */
static canopy_status add_remote(const let_piece *pc, int np, canopy_points x, const int64_t *gid,
                                float inv_theta, float eps2, float *acc, float *pot, double *work,
                                int64_t *terms) {
    if (np == 0 || x.n == 0) return CANOPY_OK;
    float *ra = NULL, *rp = NULL;
    int64_t *rw = NULL;
    canopy_status s = canopy_alloc((void **)&ra, (size_t)x.n * 3, sizeof *ra);
    if (!s) s = canopy_alloc((void **)&rp, (size_t)x.n, sizeof *rp);
    if (!s) s = canopy_alloc((void **)&rw, (size_t)x.n, sizeof *rw);
    if (!s) s = canopy_let_forces(pc, np, x, gid, inv_theta, eps2, ra, rp, rw, NULL);
    if (!s)
        for (int64_t i = 0; i < x.n; i++) {
            for (int j = 0; j < 3; j++) acc[3 * i + j] += ra[3 * i + j];
            if (pot) pot[i] += rp[i];
            if (work) work[i] += (double)rw[i];
            *terms += rw[i];
        }
    canopy_free(ra);
    canopy_free(rp);
    canopy_free(rw);
    return s;
}

/* The GPU walks of a force evaluation, kept for the process (their device buffers are
 * reused from call to call): the local tree's and the received pieces', each on its own
 * stream, so the second may start while the first still runs. */
static gpu_let *gpu_walks[2];

/* NCCL between the GPUs (CANOPY_DIST_NCCL=1): the communicator of the process, made on
 * first use over the communicator of that call; state 0 untried, 1 ready, -1 unusable. */
static gpu_nccl *nccl;
static int nccl_state, nccl_size;

/* Whether this call's pieces travel by NCCL: asked for on every rank, loadable on every
 * rank, communicator made. Collective (decided alike on all ranks); a failure is said
 * once, on stderr, and the pieces travel by MPI. */
static int nccl_wanted(MPI_Comm comm) {
    const char *env = getenv("CANOPY_DIST_NCCL");
    int want = env && !strcmp(env, "1"), all = 0;
    MPI_Allreduce(&want, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) return 0;
    int size = canopy_dist_size(comm), rank = canopy_dist_rank(comm);
    if (nccl_state == 0) {
        /* NCCL takes one rank per GPU: ranks sharing a device stay with MPI */
        dist_gpu_binding b = dist_gpu_bound();
        canopy_status s = b.local_size > b.n_devices
                              ? canopy_fail(CANOPY_ERR_UNSUPPORTED,
                                            "%d ranks share %d GPUs on a node; NCCL needs one "
                                            "GPU per rank",
                                            b.local_size, b.n_devices)
                              : canopy_gpu_nccl_load();
        unsigned char id[GPU_NCCL_ID_BYTES];
        memset(id, 0, sizeof id);
        if ((s = canopy_dist_agree(comm, s)) == CANOPY_OK) {
            if (rank == 0) s = canopy_gpu_nccl_unique_id(id);
            s = canopy_dist_agree(comm, s);
        }
        if (!s) {
            MPI_Bcast(id, (int)sizeof id, MPI_BYTE, 0, comm);
            s = canopy_dist_agree(comm, canopy_gpu_nccl_create(id, size, rank, &nccl));
        }
        nccl_state = s ? -1 : 1;
        nccl_size = size;
        if (s && rank == 0)
            fprintf(stderr,
                    "canopy: CANOPY_DIST_NCCL=1 but NCCL is not usable (%s): the LET "
                    "pieces travel by MPI\n",
                    canopy_last_error());
    }
    return nccl_state == 1 && nccl_size == size;
}

/* The domain's bodies in tree order (neighbours together: coherent warps; the local
 * piece's body order) as the GPU walks' queries: positions q (n, 3), global indices qid. */
static canopy_status tree_order_queries(const let_domain *dom, float **q, int64_t **qid) {
    const canopy_tree_view *tv = dom->tv;
    int64_t n = tv->n;
    canopy_status s = canopy_alloc((void **)q, (size_t)n * 3 + 1, sizeof **q);
    if (!s) s = canopy_alloc((void **)qid, (size_t)n + 1, sizeof **qid);
    if (s) return s;
    memcpy(*q, tv->points, (size_t)n * 3 * sizeof **q);
    int64_t *qi = *qid;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < n; i++) qi[i] = dom->gid[tv->ids[i]];
    return CANOPY_OK;
}

/* One force evaluation of dist_domain_forces: its inputs, buffers and timings. */
typedef struct domain_walk {
    MPI_Comm comm;
    int size, rank, use_gpu, use_nccl;
    /* bucket opening on a GPU rank: the local forces came from the single-GPU engine
     * (local_device), already in acc, pot and work; only the pieces are walked here */
    int device_local;
    canopy_points x;
    const int64_t *gid;
    float inv_theta, eps2;
    let_domain dom;
    let_piece local, top;
    top_view *views;
    uint64_t *tops;
    char *send, *recv, *recv_dev;
    char *heads; /* NCCL: the received pieces' headers */
    int64_t *sc, *rc, *lw, *qid, *rw;
    int *isc, *isd, *irc, *ird;
    let_piece *remote;
    int np; /* pieces received */
    float *q, *la, *lp, *ra, *rp;
    int gpu_local, gpu_remote; /* walks launched, to be finished */
    int64_t terms;
    double t_comm, t_build, t_lwalk, t_rwalk;
    double t_tree, t_moments; /* the device build's phases (local_device) */
} domain_walk;

/* The GPU's results (tree order) summed into acc, pot and work (caller order), in the
 * order the CPU path sums them: local first, then remote. With device_local the local
 * terms are in acc, pot and work already and the pieces' are added to them. */
static void gpu_combine(domain_walk *w, float *acc, float *pot, double *work) {
    const canopy_tree_view *tv = w->dom.tv;
    const float *la = w->la, *lp = w->lp, *ra = w->ra, *rp = w->rp;
    const int64_t *lw = w->lw, *rw = w->rw;
    const int dl = w->device_local;
    int64_t t = 0;
#pragma omp parallel for schedule(static) num_threads(canopy_threads()) reduction(+ : t)
    for (int64_t i = 0; i < tv->n; i++) {
        int64_t k = tv->ids[i];
        for (int j = 0; j < 3; j++) {
            float l = dl ? acc[3 * k + j] : la[3 * i + j];
            acc[3 * k + j] = l + (ra ? ra[3 * i + j] : 0.0f);
        }
        if (pot) {
            float l = dl ? pot[k] : lp[i];
            pot[k] = rp ? l + rp[i] : l;
        }
        int64_t r = rw ? rw[i] : 0;
        if (dl) {
            if (work) work[k] += (double)r;
            t += r;
        } else {
            if (work) work[k] = (double)(lw[i] + r);
            t += lw[i] + r;
        }
    }
    w->terms += t;
}

/* The local octree, its top tree, the buffers and the local piece. On the GPU the local
 * walk starts at once and runs while the host exports and exchanges the pieces. */
static canopy_status walk_build(domain_walk *w, const float *mass, const canopy_gravity_options *g,
                                int32_t leaf_size) {
    int size = w->size;
    canopy_points x = w->x;
    /* CANOPY_DIST_GPU_BUILD=1 (experimental): GPU ranks build their octree on the GPU;
     * its centres of mass differ from the host's in the last bits. */
    const char *gb = getenv("CANOPY_DIST_GPU_BUILD");
    canopy_status s =
        w->use_gpu && gb && !strcmp(gb, "1")
            ? canopy_let_domain_build_gpu(x, mass, w->gid, g->order, leaf_size, &w->dom)
            : canopy_let_domain_build(x, mass, w->gid, g->order, leaf_size, &w->dom);
    if (!s) s = canopy_let_export(&w->dom, NULL, 0, w->inv_theta, LET_RADIUS_TOP, &w->top);
    if (!s) s = canopy_alloc((void **)&w->views, (size_t)size, sizeof *w->views);
    if (!s) s = canopy_alloc((void **)&w->sc, (size_t)size, sizeof *w->sc);
    if (!s) s = canopy_alloc((void **)&w->rc, (size_t)size, sizeof *w->rc);
    if (!s) s = canopy_alloc((void **)&w->isc, (size_t)size * 4, sizeof *w->isc);
    if (!s) s = canopy_calloc((void **)&w->remote, (size_t)size, sizeof *w->remote);
    if (!s) s = canopy_alloc((void **)&w->lw, (size_t)x.n + 1, sizeof *w->lw);
    for (int k = 0; !s && w->use_gpu && k < 2; k++)
        if (!gpu_walks[k]) s = canopy_gpu_let_create(gpu_walks + k);
    if (!s && !w->device_local)
        s = canopy_let_export(&w->dom, w->dom.boxes[0], w->dom.n_boxes, w->inv_theta,
                              LET_RADIUS_ALL, &w->local);
    if (!s && w->use_gpu && x.n > 0) s = tree_order_queries(&w->dom, &w->q, &w->qid);
    if (!s && w->use_gpu && x.n > 0 && !w->device_local) {
        s = canopy_gpu_let_launch(gpu_walks[0], &w->local, 1, canopy_points_make(w->q, x.n, 3),
                                  w->qid, w->inv_theta, w->eps2);
        w->gpu_local = !s;
    }
    return s;
}

/* Every rank's boxes and top tree, then the pieces each other rank needs, packed, their
 * sizes exchanged and the receive buffer made. Collective: the status is agreed. */
static canopy_status walk_plan(domain_walk *w) {
    int size = w->size;
    w->isd = w->isc + size;
    w->irc = w->isc + 2 * size;
    w->ird = w->isc + 3 * size;
    double t0 = canopy_now();
    canopy_status s = share_tops(w->comm, &w->dom, &w->top, &w->tops, w->views);
    w->t_comm += canopy_now() - t0;
    t0 = canopy_now();
    if (!s) s = pack_pieces(w->comm, &w->dom, &w->top, w->views, w->inv_theta, &w->send, w->sc);
    w->t_build += canopy_now() - t0;
    if ((s = canopy_dist_agree(w->comm, s))) return s;
    t0 = canopy_now();
    MPI_Alltoall(w->sc, 1, MPI_INT64_T, w->rc, 1, MPI_INT64_T, w->comm);
    w->t_comm += canopy_now() - t0;
    int64_t rtotal = 0;
    s = canopy_dist_displs(w->sc, size, w->isc, w->isd, NULL);
    if (!s) s = canopy_dist_displs(w->rc, size, w->irc, w->ird, &rtotal);
    if (!s && !w->use_nccl) s = canopy_alloc((void **)&w->recv, (size_t)rtotal + 1, 1);
    if (!s && w->use_nccl) s = canopy_calloc((void **)&w->heads, (size_t)size, sizeof(let_wire));
    return canopy_dist_agree(w->comm, s);
}

/* The exchange runs while this rank walks its own tree: on the CPU in chunks, as MPI
 * progresses a non-blocking collective only inside MPI calls, so each chunk ends with a
 * test (from the main thread, as MPI_THREAD_FUNNELED allows); the GPU's walk runs
 * already. */
static canopy_status walk_local(domain_walk *w, float *acc, float *pot, double *work) {
    canopy_points x = w->x;
    canopy_status s = CANOPY_OK;
    MPI_Request req = MPI_REQUEST_NULL;
    int done = 0;
    double t0 = canopy_now();
    if (w->use_nccl) { /* GPU to GPU, into a device buffer the remote walk reads */
        s = canopy_gpu_nccl_alltoallv(nccl, w->send, w->sc, w->rc, &w->recv_dev, w->heads,
                               sizeof(let_wire));
        done = 1;
    } else {
        MPI_Ialltoallv(w->send, w->isc, w->isd, MPI_BYTE, w->recv, w->irc, w->ird, MPI_BYTE,
                       w->comm, &req);
    }
    w->t_comm += canopy_now() - t0;
    t0 = canopy_now();
    for (int c = 0; c < LOCAL_CHUNKS && !s && !w->use_gpu; c++) {
        int64_t lo = x.n * c / LOCAL_CHUNKS, hi = x.n * (c + 1) / LOCAL_CHUNKS;
        canopy_points part = x;
        part.data = x.n ? canopy_point(x, lo) : x.data;
        part.n = hi - lo;
        s = canopy_let_forces(&w->local, 1, part, w->gid + lo, w->inv_theta, w->eps2, acc + 3 * lo,
                              pot ? pot + lo : NULL, w->lw + lo, NULL);
        if (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
    if (!w->use_gpu) w->t_lwalk = canopy_now() - t0;
    for (int64_t i = 0; !s && !w->use_gpu && i < x.n; i++) {
        w->terms += w->lw[i];
        if (work) work[i] = (double)w->lw[i];
    }
    t0 = canopy_now();
    if (!done) MPI_Wait(&req, MPI_STATUS_IGNORE);
    w->t_comm += canopy_now() - t0;
    return s;
}

/* On the GPU: the received pieces' walk launched, both walks' results collected and
 * summed into acc, pot and work. */
static canopy_status walk_remote_gpu(domain_walk *w, float *acc, float *pot, double *work) {
    int64_t n = w->x.n;
    canopy_status s = CANOPY_OK;
    if (w->np > 0) {
        s = canopy_gpu_let_launch(gpu_walks[1], w->remote, w->np, canopy_points_make(w->q, n, 3), w->qid,
                           w->inv_theta, w->eps2);
        w->gpu_remote = !s;
    }
    if (!s && !w->device_local) s = canopy_alloc((void **)&w->la, (size_t)n * 3, sizeof *w->la);
    if (!s && !w->device_local) s = canopy_alloc((void **)&w->lp, (size_t)n, sizeof *w->lp);
    if (!s && w->gpu_remote) s = canopy_alloc((void **)&w->ra, (size_t)n * 3, sizeof *w->ra);
    if (!s && w->gpu_remote) s = canopy_alloc((void **)&w->rp, (size_t)n, sizeof *w->rp);
    if (!s && w->gpu_remote) s = canopy_alloc((void **)&w->rw, (size_t)n, sizeof *w->rw);
    if (!s && w->gpu_local) { /* after a failure, walk_release waits for what was launched */
        s = canopy_gpu_let_finish(gpu_walks[0], w->la, w->lp, w->lw, NULL, &w->t_lwalk);
        w->gpu_local = 0;
    }
    if (!s && w->gpu_remote) {
        s = canopy_gpu_let_finish(gpu_walks[1], w->ra, w->rp, w->rw, NULL, &w->t_rwalk);
        w->gpu_remote = 0;
    }
    if (!s) gpu_combine(w, acc, pot, work);
    return s;
}

/* The received pieces unpacked, then walked on the CPU or the GPU; s: the status so far
 * (after a failure nothing more runs). */
static canopy_status walk_remote(domain_walk *w, canopy_status s, float *acc, float *pot,
                                 double *work) {
    double t0 = canopy_now();
    if (!s)
        s = w->use_nccl ? unpack_pieces(w->recv_dev, w->heads, w->rc, w->size, w->rank, w->views,
                                        w->inv_theta, w->remote, &w->np)
                        : unpack_pieces(w->recv, NULL, w->rc, w->size, w->rank, w->views,
                                        w->inv_theta, w->remote, &w->np);
    w->t_build += canopy_now() - t0;
    if (!w->use_gpu) {
        t0 = canopy_now();
        if (!s)
            s = add_remote(w->remote, w->np, w->x, w->gid, w->inv_theta, w->eps2, acc, pot, work,
                           &w->terms);
        w->t_rwalk = canopy_now() - t0;
        return s;
    }
    return !s && w->x.n > 0 ? walk_remote_gpu(w, acc, pot, work) : s;
}

/* Waits for a walk launched before a failure elsewhere (its results dropped), adds the
 * evaluation's times to stats (when given) and frees everything. */
static void walk_release(domain_walk *w, double t_start, canopy_dist_stats *stats) {
    if (w->gpu_local) canopy_gpu_let_finish(gpu_walks[0], NULL, NULL, NULL, NULL, NULL);
    if (w->gpu_remote) canopy_gpu_let_finish(gpu_walks[1], NULL, NULL, NULL, NULL, NULL);
    if (stats) {
        double t = canopy_now() - t_start;
        stats->comm_seconds += w->t_comm;
        stats->local_seconds += t - w->t_comm;
        stats->total_seconds += t;
        stats->build_seconds += w->t_build;
        stats->local_walk_seconds += w->t_lwalk;
        stats->remote_walk_seconds += w->t_rwalk;
        stats->device = w->use_gpu ? dist_gpu_bound().device : -1;
        /* the local engine's: with bucket opening the pieces are still walked per body */
        stats->opening = w->device_local ? CANOPY_OPENING_BUCKET : CANOPY_OPENING_BODY;
        stats->tree = w->device_local ? CANOPY_GRAVITY_TREE_BINARY : CANOPY_GRAVITY_TREE_OCT;
        stats->nccl = w->use_nccl;
        stats->tree_seconds += w->dom.tree_seconds + w->t_tree;
        stats->moments_seconds += w->dom.moments_seconds + w->t_moments;
    }
    canopy_let_domain_free(&w->dom);
    canopy_let_piece_free(&w->local);
    canopy_let_piece_free(&w->top);
    canopy_free(w->views);
    canopy_free(w->tops);
    canopy_free(w->send);
    canopy_free(w->recv);
    canopy_free(w->heads);
    canopy_free(w->sc);
    canopy_free(w->rc);
    canopy_free(w->lw);
    canopy_free(w->isc);
    canopy_free(w->remote);
    canopy_free(w->q);
    canopy_free(w->qid);
    canopy_free(w->la);
    canopy_free(w->lp);
    canopy_free(w->ra);
    canopy_free(w->rp);
    canopy_free(w->rw);
}

/* Bucket opening on a GPU rank: the local forces by the single-GPU engine (radix tree,
 * moments and bucket walk on the device, gravity/gpu_multipole.h), written to acc, pot
 * and work in the caller's order; each body's work is its bucket's interactions. */
static canopy_status local_device(domain_walk *w, const float *mass,
                                  const canopy_gravity_options *g, int32_t leaf_size, float *acc,
                                  float *pot, double *work) {
    int64_t n = w->x.n;
    gpu_mp_params p = {g->theta, g->order, g->softening, leaf_size, 0};
    gpu_mp_timing t;
    memset(&t, 0, sizeof t);
    int32_t *lw = NULL;
    canopy_status s = canopy_alloc((void **)&lw, (size_t)n + 1, sizeof *lw);
    if (!s && n > 0) s = canopy_gpu_mp_forces_host(w->x, mass, &p, acc, pot, lw, &t);
    for (int64_t i = 0; !s && i < n; i++) {
        if (work) work[i] = (double)lw[i];
        w->terms += lw[i];
    }
    w->t_tree = t.build_ms * 1e-3;
    w->t_moments = t.moments_ms * 1e-3;
    w->t_lwalk = t.walk_ms * 1e-3;
    canopy_free(lw);
    return s;
}

canopy_status dist_domain_forces(MPI_Comm comm, canopy_points x, const float *mass,
                                 const int64_t *gid, const canopy_gravity_options *g,
                                 int32_t leaf_size, int use_gpu, float *acc, float *pot,
                                 double *work, canopy_dist_stats *stats) {
    if (g->opening == CANOPY_OPENING_LIST && !use_gpu)
        return dist_list_forces(comm, x, mass, g, leaf_size, acc, pot, work, stats);
    double t_start = canopy_now();
    domain_walk w;
    memset(&w, 0, sizeof w);
    w.comm = comm;
    w.size = canopy_dist_size(comm);
    w.rank = canopy_dist_rank(comm);
    w.use_gpu = use_gpu;
    w.device_local = use_gpu && g->opening == CANOPY_OPENING_BUCKET;
    w.x = x;
    w.gid = gid;
    w.inv_theta = 1.0f / g->theta;
    w.eps2 = g->softening * g->softening;
    /* one rank with the device engine: no pieces to make or walk, no host tree */
    int pieces = !w.device_local || w.size > 1;
    w.use_nccl = use_gpu && pieces && nccl_wanted(comm);
    canopy_status s =
        w.device_local ? local_device(&w, mass, g, leaf_size, acc, pot, work) : CANOPY_OK;
    w.t_build += w.t_tree + w.t_moments;
    double t0 = canopy_now();
    if (!s && pieces) s = walk_build(&w, mass, g, leaf_size);
    w.t_build += canopy_now() - t0;
    if (!(s = canopy_dist_agree(comm, s)) && pieces) s = walk_plan(&w);
    if (!s && pieces) {
        s = walk_local(&w, acc, pot, work);
        s = canopy_dist_agree(comm, walk_remote(&w, s, acc, pot, work));
    }
    if (!s && stats) {
        stats->interactions += w.terms;
        if (pieces) dist_count_traffic(stats, w.sc, w.rc, w.size, w.rank);
    }
    walk_release(&w, t_start, stats);
    return s;
}

/* A body on its way to its domain, and its forces on the way back. */
typedef struct grav_row {
    float x[3], m;
    int64_t gid;
} grav_row;
typedef struct force_row {
    int64_t gid;
    float a[3], phi;
} force_row;

/* The rank whose slice holds global index g (firsts: size + 1 boundaries). */
static int owner_of(const int64_t *firsts, int size, int64_t g) {
    int lo = 0, hi = size - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (firsts[mid] <= g)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static canopy_status check_local(canopy_points b, const float *mass) {
    canopy_status s = b.n > 0 ? canopy_points_check(b, "gravity bodies") : CANOPY_OK;
    if (s) return s;
    if (b.n > 0 && b.d != 3)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: bodies must have 3 coordinates (got %d)",
                           (int)b.d);
    for (int64_t i = 0; mass && i < b.n; i++)
        if (!(mass[i] >= 0.0f) || !isfinite(mass[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "gravity: mass of body %lld is %g", (long long)i,
                               (double)mass[i]);
    return CANOPY_OK;
}

canopy_status canopy_dist_gravity(MPI_Comm comm, canopy_points bodies, const float *mass,
                                  const canopy_gravity_options *gopt, const canopy_run_options *opt,
                                  float *acc, float *pot, canopy_dist_stats *stats) {
    int size = canopy_dist_size(comm), rank = canopy_dist_rank(comm);
    canopy_gravity_options g = gopt ? *gopt : canopy_gravity_options_default();
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->device = -1;
    }
    double t_start = canopy_now();
    canopy_status s = dist_gravity_resolve(&g, &o);
    if (!s) s = check_local(bodies, mass);
    if ((s = canopy_dist_agree(comm, s))) return s;

    int64_t first, n_all;
    dist_offsets(comm, bodies.n, &first, &n_all);
    int use_gpu = 0;
    if ((s = dist_gravity_backend(comm, o.backend, &g, n_all, &use_gpu))) return s;
    int64_t *firsts = NULL;
    int32_t *dest = NULL, *home = NULL;
    grav_row *rows = NULL, *mine = NULL;
    force_row *back = NULL, *got = NULL;
    float *x = NULL, *m = NULL, *a = NULL, *ph = NULL;
    double *est = NULL;
    int64_t *gid = NULL, n_mine = 0, n_got = 0;
    s = canopy_alloc((void **)&firsts, (size_t)size + 1, sizeof *firsts);
    if (!s) s = canopy_alloc((void **)&dest, (size_t)bodies.n + 1, sizeof *dest);
    if (!s) s = canopy_alloc((void **)&rows, (size_t)bodies.n + 1, sizeof *rows);
    if ((s = canopy_dist_agree(comm, s))) goto done;
    MPI_Allgather(&first, 1, MPI_INT64_T, firsts, 1, MPI_INT64_T, comm);
    firsts[size] = n_all;
    if (n_all == 0) goto done;
    for (int64_t i = 0; i < bodies.n; i++) {
        memcpy(rows[i].x, canopy_point(bodies, i), sizeof rows[i].x);
        rows[i].m = mass ? mass[i] : (float)(1.0 / (double)n_all);
        rows[i].gid = first + i;
    }
    /* pieces of equal estimated work (cut by count, Plummer's core rank walked 7 % more
     * than the mean on 4 ranks, and the others waited for it) */
    s = canopy_dist_agree(comm, canopy_alloc((void **)&est, (size_t)bodies.n + 1, sizeof *est));
    double t_cut = canopy_now();
    if (!s) s = canopy_dist_decompose_by_density(comm, bodies, est, dest);
    if (stats) stats->cut_seconds += canopy_now() - t_cut;
    if (!s)
        s = canopy_dist_exchange(comm, rows, bodies.n, sizeof *rows, dest, (void **)&mine, &n_mine,
                                 stats);
    if (s) goto done;
    s = canopy_alloc((void **)&x, (size_t)n_mine * 3 + 1, sizeof *x);
    if (!s) s = canopy_alloc((void **)&m, (size_t)n_mine + 1, sizeof *m);
    if (!s) s = canopy_alloc((void **)&gid, (size_t)n_mine + 1, sizeof *gid);
    if (!s) s = canopy_alloc((void **)&a, (size_t)n_mine * 3 + 1, sizeof *a);
    /* potentials only when asked for: up to 20 % of the list walk (AVX2) */
    if (!s && pot) s = canopy_alloc((void **)&ph, (size_t)n_mine + 1, sizeof *ph);
    if (!s) s = canopy_alloc((void **)&back, (size_t)n_mine + 1, sizeof *back);
    if (!s) s = canopy_alloc((void **)&home, (size_t)n_mine + 1, sizeof *home);
    if ((s = canopy_dist_agree(comm, s))) goto done;
    for (int64_t i = 0; i < n_mine; i++) {
        memcpy(x + 3 * i, mine[i].x, sizeof mine[i].x);
        m[i] = mine[i].m;
        gid[i] = mine[i].gid;
    }
    s = dist_domain_forces(comm, canopy_points_make(x, n_mine, 3), m, gid, &g, o.leaf_size, use_gpu,
                           a, ph, NULL, stats);
    if (s) goto done;
    for (int64_t i = 0; i < n_mine; i++) {
        back[i].gid = gid[i];
        memcpy(back[i].a, a + 3 * i, sizeof back[i].a);
        back[i].phi = ph ? ph[i] : 0.0f;
        home[i] = owner_of(firsts, size, gid[i]);
    }
    s = canopy_dist_exchange(comm, back, n_mine, sizeof *back, home, (void **)&got, &n_got, stats);
    if (!s && n_got != bodies.n)
        s = canopy_fail(CANOPY_ERR_INTERNAL, "gravity: rank %d got %lld forces for %lld bodies",
                        rank, (long long)n_got, (long long)bodies.n);
    for (int64_t i = 0; !s && i < n_got; i++) {
        int64_t k = got[i].gid - first;
        memcpy(acc + 3 * k, got[i].a, sizeof got[i].a);
        if (pot) pot[k] = got[i].phi;
    }
    s = canopy_dist_agree(comm, s);
done:
    if (stats) stats->total_seconds = canopy_now() - t_start;
    canopy_free(firsts);
    canopy_free(dest);
    canopy_free(est);
    canopy_free(home);
    canopy_free(rows);
    canopy_free(mine);
    canopy_free(back);
    canopy_free(got);
    canopy_free(x);
    canopy_free(m);
    canopy_free(a);
    canopy_free(ph);
    canopy_free(gid);
    return s;
}
