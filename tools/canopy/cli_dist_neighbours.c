// SPDX-License-Identifier: MIT
/* knn / nn / radius under mpirun. Each rank reads its block of rows of the inputs
 * (cli_dist_read_points), the ranks move the reference points to Hilbert-curve pieces
 * (small boxes: few remote queries) and answer through canopy_dist_knn /
 * canopy_dist_radius_count, and each rank writes the rows of its block of queries into
 * the outputs (cli_dist_write): no rank holds more than its share. */
#include "cli_dist.h"

#ifdef CANOPY_HAVE_MPI
#include "dist/comm.h"
#include "trav_opts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Per rank: the bytes the query phase moved (canopy_dist_knn / radius) and those
 * that placed the reference points on their pieces; load and write are the slowest
 * rank's. */
static void print_stats(const cli_dist_job *job, const canopy_dist_stats *mine, double t_load,
                        double t_write) {
    int size = cli_dist_size(), rank = cli_dist_rank();
    canopy_dist_stats *all = NULL;
    int64_t got = 0;
    if (canopy_dist_gatherv(MPI_COMM_WORLD, 0, mine, 2, sizeof *mine, (void **)&all, NULL, &got))
        return;
    if (rank == 0 && all && cli_stats_json()) {
        /* the slowest rank's times, the traffic summed and its largest share */
        double run = 0.0, comm = 0.0, local = 0.0, place = 0.0;
        int64_t sent = 0, sent_max = 0, remote = 0, placed = 0, on_gpu = 0;
        for (int r = 0; r < size; r++) {
            const canopy_dist_stats *q = &all[2 * r];
            run = q->total_seconds > run ? q->total_seconds : run;
            comm = q->comm_seconds > comm ? q->comm_seconds : comm;
            local = q->local_seconds > local ? q->local_seconds : local;
            sent += q->bytes_sent;
            sent_max = q->bytes_sent > sent_max ? q->bytes_sent : sent_max;
            remote += q->remote_queries;
            placed += all[2 * r + 1].bytes_sent;
            place = all[2 * r + 1].total_seconds > place ? all[2 * r + 1].total_seconds : place;
            on_gpu += q->device >= 0;
        }
        cli_json *j = cli_json_begin(job->cmd);
        cli_json_seconds(j, "load", t_load);
        cli_json_seconds(j, "run", run);
        cli_json_seconds(j, "local_max", local);
        cli_json_seconds(j, "comm_max", comm);
        cli_json_seconds(j, "write", t_write);
        cli_json_count(j, "ranks", size);
        cli_json_count(j, "bytes_sent", (double)sent);
        cli_json_count(j, "bytes_sent_max_rank", (double)sent_max);
        cli_json_count(j, "remote_queries", (double)remote);
        cli_json_count(j, "bytes_sent_placing", (double)placed);
        cli_json_seconds(j, "place_max", place);
        /* gpu when asked for and every rank was bound to one (auto: the indexes choose) */
        int asked = job->run && job->run->backend == CANOPY_BACKEND_GPU;
        cli_json_choice(j, "backend", asked && on_gpu == size ? "gpu" : "cpu");
        cli_json_choice(j, "distributed", "mpi");
        cli_json_emit(j, "reference points on Hilbert pieces, one per rank");
    } else if (rank == 0 && all) {
        fprintf(stderr, "%s: %d ranks, load %.3f s, write %.3f s\n", job->cmd, size, t_load,
                t_write);
        for (int r = 0; r < size; r++) {
            const canopy_dist_stats *q = &all[2 * r], *p = &all[2 * r + 1];
            if (q->device >= 0) fprintf(stderr, "  rank %d runs on GPU %d\n", r, (int)q->device);
            fprintf(stderr,
                    "  rank %d: queries sent %lld bytes in %lld messages, received %lld bytes, "
                    "%lld remote queries, local %.3f s, comm %.3f s, total %.3f s; placing the "
                    "reference points %.3f s, sent %lld bytes\n",
                    r, (long long)q->bytes_sent, (long long)q->messages,
                    (long long)q->bytes_received, (long long)q->remote_queries, q->local_seconds,
                    q->comm_seconds, q->total_seconds, p->total_seconds, (long long)p->bytes_sent);
        }
    }
    canopy_free(all);
}

/* Checks every rank makes alike (all know the shapes): rank 0's message is printed. */
static canopy_status check_shapes(const cli_dist_job *job, const cli_dist_points *ref,
                                  const cli_dist_points *query, int self) {
    if (!self && query->d != ref->d)
        return canopy_fail(CANOPY_ERR_INVALID, "%s has %d columns but %s has %d", job->query_path,
                           (int)query->d, job->ref_path, (int)ref->d);
    int64_t candidates = self ? ref->n - 1 : ref->n;
    if (!job->radius && job->k > candidates)
        return canopy_fail(CANOPY_ERR_INVALID, "k = %lld exceeds the %lld candidate points in %s%s",
                           (long long)job->k, (long long)(candidates > 0 ? candidates : 0),
                           job->ref_path, self ? " (self excluded)" : "");
    return CANOPY_OK;
}

/* This rank's block of reference points, moved to its Hilbert piece with their
 * global ids (the rows of the input). */
#define PLACE_SLACK 0.02
static canopy_status place_ref(const cli_dist_points *blk, float **pts, int64_t **ids, int64_t *nl,
                               canopy_dist_stats *st) {
    int64_t nb = blk->count, *bid = NULL, got = 0;
    int32_t *dest = NULL, d = blk->d;
    canopy_status s = canopy_alloc((void **)&bid, (size_t)nb + 1, sizeof *bid);
    if (!s) s = canopy_alloc((void **)&dest, (size_t)nb + 1, sizeof *dest);
    for (int64_t i = 0; !s && i < nb; i++) bid[i] = blk->first + i;
    s = canopy_dist_agree(MPI_COMM_WORLD, s);
    /* 10 bits a side: the pieces only need to be compact (the answers do not depend on
     * them), at half the keys' and the sort's cost of the full curve; a cut may move by
     * PLACE_SLACK of a rank's share to fall on a curve block's face (no stray points in
     * the neighbour's domain, whose queries near them would all go remote) */
    if (!s)
        s = canopy_dist_decompose_bits(MPI_COMM_WORLD, canopy_points_make(blk->data, nb, d), NULL,
                                       CANOPY_CURVE_HILBERT, 10, PLACE_SLACK, dest);
    if (!s)
        s = canopy_dist_exchange(MPI_COMM_WORLD, blk->data, nb, sizeof(float) * (size_t)d, dest,
                                 (void **)pts, nl, st);
    if (!s)
        s = canopy_dist_exchange(MPI_COMM_WORLD, bid, nb, sizeof *bid, dest, (void **)ids, &got,
                                 st);
    canopy_free(bid);
    canopy_free(dest);
    return s;
}

/* The self form's rows are those of the Hilbert piece: each goes, with its point's
 * row, to the rank whose block holds that row (one all-to-all), and lands there in
 * the block's order. */
static canopy_status rows_to_blocks(int64_t nl, const int64_t *ids, int64_t k, const int64_t *idx,
                                    const float *d2, int64_t n, int64_t first, int64_t *out_idx,
                                    float *out_d2, canopy_dist_stats *st) {
    size_t rec = sizeof(int64_t) * (size_t)(k + 1) + (d2 ? sizeof(float) * (size_t)k : 0);
    int size = cli_dist_size();
    char *buf = NULL, *back = NULL;
    int32_t *dest = NULL;
    int64_t got = 0;
    canopy_status s = canopy_alloc((void **)&buf, (size_t)nl + 1, rec);
    if (!s) s = canopy_alloc((void **)&dest, (size_t)nl + 1, sizeof *dest);
    if (!s) {
        for (int64_t i = 0; i < nl; i++) {
            char *r = buf + (size_t)i * rec;
            memcpy(r, &ids[i], sizeof *ids);
            memcpy(r + sizeof *ids, idx + i * k, sizeof *idx * (size_t)k);
            if (d2) memcpy(r + sizeof *ids * (size_t)(k + 1), d2 + i * k, sizeof *d2 * (size_t)k);
            dest[i] = cli_dist_block_owner(ids[i], n, size);
        }
    }
    s = canopy_dist_agree(MPI_COMM_WORLD, s);
    if (!s) s = canopy_dist_exchange(MPI_COMM_WORLD, buf, nl, rec, dest, (void **)&back, &got, st);
    for (int64_t i = 0; !s && i < got; i++) {
        const char *r = back + (size_t)i * rec;
        int64_t id;
        memcpy(&id, r, sizeof id);
        int64_t row = id - first;
        memcpy(out_idx + row * k, r + sizeof id, sizeof *out_idx * (size_t)k);
        if (d2)
            memcpy(out_d2 + row * k, r + sizeof id * (size_t)(k + 1), sizeof *out_d2 * (size_t)k);
    }
    canopy_free(buf);
    canopy_free(back);
    canopy_free(dest);
    return s;
}

int cli_dist_neighbours(const cli_dist_job *job) {
    const char *cmd = job->cmd;
    int size = cli_dist_size(), rank = cli_dist_rank();
    double t0 = canopy_now();
    int self = job->query_path == NULL, n_out = job->radius ? 1 : 2;
    const char *ins[] = {job->ref_path, job->query_path}, *outs[] = {job->out, job->dist_out};
    int rc = CLI_OK;
    if (rank == 0) {
        rc = cli_check_paths(cmd, ins, 2, outs, n_out);
        if (rc == CLI_OK) rc = cli_check_array_outputs(cmd, n_out, outs);
    }
    if ((rc = cli_dist_agree_rc(cmd, rc)) != CLI_OK) return rc;

    cli_dist_points ref, query;
    memset(&query, 0, sizeof query);
    if (cli_dist_read_points(cmd, job->ref_path, &ref)) return CLI_ERROR;
    if (!self && cli_dist_read_points(cmd, job->query_path, &query)) {
        cli_dist_points_release(&ref);
        return CLI_ERROR;
    }
    const cli_dist_points *blk = self ? &ref : &query; /* the rows this rank writes */
    rc = cli_dist_agree(cmd, check_shapes(job, &ref, &query, self));
    int32_t d = ref.d;
    int64_t n = ref.n, nq = blk->n, first = blk->first, mine = blk->count;
    double t_load = canopy_now() - t0;

    canopy_dist_stats st[2]; /* the query phase, placing the reference points */
    memset(st, 0, sizeof st);
    float *pts = NULL, *d2 = NULL, *od2 = NULL;
    int64_t *ids = NULL, nl = 0, *idx = NULL, *oidx = NULL;
    int64_t k = job->radius ? 1 : job->k, rows = 0;
    double t_place = canopy_now();
    canopy_status s = rc == CLI_OK ? place_ref(&ref, &pts, &ids, &nl, &st[1]) : CANOPY_OK;
    st[1].total_seconds = canopy_now() - t_place;
    if (rc == CLI_OK) {
        if (self) cli_dist_points_release(&ref); /* the piece holds the points now */
        rows = self ? nl : query.count;
        if (!s) s = canopy_alloc((void **)&idx, (size_t)(rows * k + 1), sizeof *idx);
        /* distances only for --dist-out: the rows going back carry a third less */
        if (!s && !job->radius && job->dist_out)
            s = canopy_alloc((void **)&d2, (size_t)(rows * k + 1), sizeof *d2);
        if (!s && self) s = canopy_alloc((void **)&oidx, (size_t)(mine * k + 1), sizeof *oidx);
        if (!s && self && d2) s = canopy_alloc((void **)&od2, (size_t)(mine * k + 1), sizeof *od2);
        s = canopy_dist_agree(MPI_COMM_WORLD, s);
        canopy_points rl = canopy_points_make(pts, nl, d);
        canopy_points qv =
            self ? (canopy_points){NULL, 0, d, d} : canopy_points_make(query.data, query.count, d);
        if (!s && job->radius)
            s = canopy_dist_radius_count(MPI_COMM_WORLD, rl, qv, (float)job->r, job->run, idx,
                                         &st[0]);
        else if (!s)
            s = canopy_dist_knn(MPI_COMM_WORLD, rl, ids, qv, (int32_t)k, job->run, idx, d2, &st[0]);
        for (int64_t i = 0; !s && d2 && i < rows * k; i++) d2[i] = sqrtf(d2[i]);
        if (!s && self) s = rows_to_blocks(nl, ids, k, idx, d2, n, first, oidx, od2, &st[1]);
        rc = cli_dist_agree(cmd, s);
    }
    double t_write = 0.0;
    if (rc == CLI_OK) {
        canopy_array arrays[2] = {
            cli_array_view(self ? oidx : idx, CANOPY_I64, mine, job->radius ? 0 : k),
            cli_array_view(self ? od2 : d2, CANOPY_F32, mine, k)};
        rc = cli_dist_write(cmd, n_out, outs, arrays, first, nq, &t_write);
    }
    if (rc == CLI_OK && job->stats) {
        double t[2] = {t_load, t_write};
        MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        print_stats(job, st, t[0], t[1]);
    }
    int64_t total = 0;
    for (int64_t i = 0; rc == CLI_OK && job->radius && i < mine; i++)
        total += (self ? oidx : idx)[i];
    if (rc == CLI_OK && job->radius)
        MPI_Reduce(rank == 0 ? MPI_IN_PLACE : &total, &total, 1, MPI_INT64_T, MPI_SUM, 0,
                   MPI_COMM_WORLD);
    if (rc == CLI_OK && rank == 0) {
        if (job->radius)
            cli_summary("%s: %lld queries, r = %g, mean %.2f neighbours, %d ranks -> %s", cmd,
                        (long long)nq, job->r, nq ? (double)total / (double)nq : 0.0, size,
                        job->out);
        else
            cli_summary("%s: %lld queries, k = %lld, %lld reference points, d = %d, %d ranks -> "
                        "%s%s%s",
                        cmd, (long long)nq, (long long)k, (long long)n, (int)d, size, job->out,
                        job->dist_out ? ", " : "", job->dist_out ? job->dist_out : "");
    }
    cli_dist_points_release(&ref);
    cli_dist_points_release(&query);
    canopy_free(pts);
    canopy_free(ids);
    canopy_free(idx);
    canopy_free(d2);
    canopy_free(oidx);
    canopy_free(od2);
    return rc;
}

#else

int cli_dist_neighbours(const cli_dist_job *job) {
    (void)job;
    return 1; /* unreachable: without MPI there is one rank */
}

#endif
