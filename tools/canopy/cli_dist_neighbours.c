// SPDX-License-Identifier: MIT
/* knn / nn / radius under mpirun. Rank 0 reads the files (every format canopy reads,
 * one place that validates them, one error report) and scatters blocks; the ranks
 * move the reference points to Hilbert-curve pieces (small boxes: few remote queries)
 * and answer through canopy_dist_knn / canopy_dist_radius_count; rank 0 gathers the
 * rows in the caller's order and writes them with the ordinary atomic writers. */
#include "cli_dist.h"

#ifdef CANOPY_HAVE_MPI
#include "dist/comm.h"
#include "trav_opts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The exit code every rank returns: the worst one. Ranks that did not fail say
 * which rank did (its own message is above). */
static int agree_rc(const char *cmd, int rc) {
    int rank = cli_dist_rank(), size = cli_dist_size();
    int mine[2] = {rc, rc != CLI_OK ? rank : size}, worst[2];
    MPI_Allreduce(&mine[0], &worst[0], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&mine[1], &worst[1], 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (worst[0] != CLI_OK && rc == CLI_OK)
        fprintf(stderr, "canopy %s: rank %d of %d stopping: rank %d failed (its message above)\n",
                cmd, rank, size, worst[1]);
    return worst[0];
}

/* Rows of each rank's piece of n, as rank 0 scatters them. */
static void block_counts(int64_t n, int size, int64_t *counts) {
    for (int r = 0; r < size; r++) counts[r] = n * (r + 1) / size - n * r / size;
}

/* Per rank: the bytes the query phase moved (canopy_dist_knn / radius) and those
 * that placed the reference points on their pieces (rank 0's scatter not counted). */
static void print_stats(const cli_dist_job *job, const canopy_dist_stats *mine, double t_load,
                        double t_write) {
    int size = cli_dist_size(), rank = cli_dist_rank();
    canopy_dist_stats *all = NULL;
    int64_t got = 0;
    if (canopy_dist_gatherv(MPI_COMM_WORLD, 0, mine, 2, sizeof *mine, (void **)&all, NULL, &got))
        return;
    if (rank == 0 && all && cli_stats_json()) {
        /* the slowest rank's times, the traffic summed and its largest share */
        double run = 0.0, comm = 0.0, local = 0.0;
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
                    "reference points sent %lld bytes\n",
                    r, (long long)q->bytes_sent, (long long)q->messages,
                    (long long)q->bytes_received, (long long)q->remote_queries, q->local_seconds,
                    q->comm_seconds, q->total_seconds, (long long)p->bytes_sent);
        }
    }
    canopy_free(all);
}

/* Rank 0: reads and checks the inputs; hdr = {n, nq, d, self}. */
static int load_on_root(const cli_dist_job *job, canopy_array *ra, canopy_array *qa,
                        canopy_points *ref, canopy_points *query, int64_t *hdr) {
    const char *cmd = job->cmd;
    const char *ins[] = {job->ref_path, job->query_path}, *outs[] = {job->out, job->dist_out};
    if (cli_check_paths(cmd, ins, 2, outs, job->radius ? 1 : 2)) return CLI_ERROR;
    if (cli_load_ref_query(cmd, job->ref_path, job->query_path, ra, ref, qa, query))
        return CLI_ERROR;
    int self = job->query_path == NULL;
    int size = cli_dist_size();
    if (!self && query->d != ref->d) {
        fprintf(stderr, "canopy %s: %s has %d columns but %s has %d\n", cmd, job->query_path,
                (int)query->d, job->ref_path, (int)ref->d);
        return CLI_ERROR;
    }
    int64_t candidates = self ? ref->n - 1 : ref->n;
    if (!job->radius && job->k > candidates) {
        fprintf(stderr, "canopy %s: k = %lld exceeds the %lld candidate points in %s%s\n", cmd,
                (long long)job->k, (long long)(candidates > 0 ? candidates : 0), job->ref_path,
                self ? " (self excluded)" : "");
        return CLI_ERROR;
    }
    if (size > ref->n) {
        fprintf(stderr,
                "canopy %s: %d MPI ranks but only %lld reference points in %s: every rank needs "
                "at least one; start at most %lld ranks\n",
                cmd, size, (long long)ref->n, job->ref_path, (long long)ref->n);
        return CLI_ERROR;
    }
    hdr[0] = ref->n;
    hdr[1] = self ? ref->n : query->n;
    hdr[2] = ref->d;
    hdr[3] = self;
    return CLI_OK;
}

/* The reference points on every rank: rank 0's blocks, then Hilbert pieces with
 * their global ids. */
static canopy_status spread_ref(const canopy_points *ref, int64_t n, int32_t d, float **pts,
                                int64_t **ids, int64_t *nl, canopy_dist_stats *st) {
    int size = cli_dist_size(), rank = cli_dist_rank();
    int64_t counts[size];
    block_counts(n, size, counts);
    float *blk = NULL;
    int64_t nb = 0, *bid = NULL;
    int32_t *dest = NULL;
    canopy_status s = canopy_dist_scatterv(MPI_COMM_WORLD, 0, rank == 0 ? ref->data : NULL, counts,
                                           sizeof(float) * (size_t)d, (void **)&blk, &nb);
    if (s) return s;
    int64_t lo = n * rank / size;
    s = canopy_alloc((void **)&bid, (size_t)nb + 1, sizeof *bid);
    if (!s) s = canopy_alloc((void **)&dest, (size_t)nb + 1, sizeof *dest);
    for (int64_t i = 0; !s && i < nb; i++) bid[i] = lo + i;
    s = canopy_dist_agree(MPI_COMM_WORLD, s);
    if (!s)
        s = canopy_dist_decompose(MPI_COMM_WORLD, canopy_points_make(blk, nb, d), NULL,
                                  CANOPY_CURVE_HILBERT, dest);
    int64_t got = 0;
    if (!s)
        s = canopy_dist_exchange(MPI_COMM_WORLD, blk, nb, sizeof(float) * (size_t)d, dest,
                                 (void **)pts, nl, st);
    if (!s)
        s = canopy_dist_exchange(MPI_COMM_WORLD, bid, nb, sizeof *bid, dest, (void **)ids, &got,
                                 st);
    canopy_free(blk);
    canopy_free(bid);
    canopy_free(dest);
    return s;
}

int cli_dist_neighbours(const cli_dist_job *job) {
    const char *cmd = job->cmd;
    int size = cli_dist_size(), rank = cli_dist_rank();
    double t0 = canopy_now();
    canopy_array ra = {0}, qa = {0};
    canopy_points ref = {0}, query = {0};
    int64_t hdr[4] = {0};
    int rc = rank == 0 ? load_on_root(job, &ra, &qa, &ref, &query, hdr) : CLI_OK;
    if ((rc = agree_rc(cmd, rc)) != CLI_OK) {
        canopy_array_release(&ra);
        canopy_array_release(&qa);
        return rc;
    }
    MPI_Bcast(hdr, 4, MPI_INT64_T, 0, MPI_COMM_WORLD);
    int64_t n = hdr[0], nq = hdr[1];
    int32_t d = (int32_t)hdr[2];
    int self = (int)hdr[3];
    double t_load = canopy_now() - t0;

    canopy_dist_stats st[2]; /* the query phase, placing the reference points */
    memset(st, 0, sizeof st);
    float *pts = NULL, *ql = NULL;
    int64_t *ids = NULL, nl = 0, nql = 0, *idx = NULL, *all_idx = NULL, *all_ids = NULL, got = 0;
    float *d2 = NULL, *all_d2 = NULL;
    int64_t k = job->radius ? 1 : job->k, counts[size];
    canopy_status s = spread_ref(&ref, n, d, &pts, &ids, &nl, &st[1]);
    if (!s && !self) {
        block_counts(nq, size, counts);
        s = canopy_dist_scatterv(MPI_COMM_WORLD, 0, rank == 0 ? query.data : NULL, counts,
                                 sizeof(float) * (size_t)d, (void **)&ql, &nql);
    }
    canopy_array_release(&qa); /* rank 0 keeps ra: its rows are not needed either */
    canopy_array_release(&ra);
    int64_t rows = self ? nl : nql;
    if (!s) s = canopy_alloc((void **)&idx, (size_t)(rows * k + 1), sizeof *idx);
    if (!s && !job->radius) s = canopy_alloc((void **)&d2, (size_t)(rows * k + 1), sizeof *d2);
    s = canopy_dist_agree(MPI_COMM_WORLD, s);
    canopy_points rl = canopy_points_make(pts, nl, d);
    canopy_points qv = self ? (canopy_points){NULL, 0, d, d} : canopy_points_make(ql, nql, d);
    if (!s && job->radius)
        s = canopy_dist_radius_count(MPI_COMM_WORLD, rl, qv, (float)job->r, job->run, idx, &st[0]);
    else if (!s)
        s = canopy_dist_knn(MPI_COMM_WORLD, rl, ids, qv, (int32_t)k, job->run, idx, d2, &st[0]);
    if (!s) {
        for (int64_t i = 0; d2 && i < rows * k; i++) d2[i] = sqrtf(d2[i]);
        s = canopy_dist_gatherv(MPI_COMM_WORLD, 0, idx, rows, sizeof *idx * (size_t)k,
                                (void **)&all_idx, NULL, &got);
    }
    if (!s && d2)
        s = canopy_dist_gatherv(MPI_COMM_WORLD, 0, d2, rows, sizeof *d2 * (size_t)k,
                                (void **)&all_d2, NULL, &got);
    if (!s && self)
        s = canopy_dist_gatherv(MPI_COMM_WORLD, 0, ids, nl, sizeof *ids, (void **)&all_ids, NULL,
                                &got);
    if (s) rc = cli_runtime_error(cmd);
    double t_write = 0.0;
    if (rc == CLI_OK && rank == 0) {
        /* the self form's rows arrive in piece order: put each at its point's id */
        if (self) {
            int64_t *oi = NULL;
            float *od = NULL;
            if (canopy_alloc((void **)&oi, (size_t)(nq * k + 1), sizeof *oi) ||
                (all_d2 && canopy_alloc((void **)&od, (size_t)(nq * k + 1), sizeof *od))) {
                rc = cli_runtime_error(cmd);
            } else {
                for (int64_t i = 0; i < nq; i++) {
                    memcpy(oi + all_ids[i] * k, all_idx + i * k, sizeof *oi * (size_t)k);
                    if (od) memcpy(od + all_ids[i] * k, all_d2 + i * k, sizeof *od * (size_t)k);
                }
            }
            canopy_free(all_idx);
            canopy_free(all_d2);
            all_idx = oi;
            all_d2 = od;
        }
        if (rc == CLI_OK) {
            const char *paths[2] = {job->out, job->dist_out};
            canopy_array arrays[2] = {cli_array_view(all_idx, CANOPY_I64, nq, job->radius ? 0 : k),
                                      cli_array_view(all_d2, CANOPY_F32, nq, k)};
            rc = cli_write_arrays(cmd, job->radius ? 1 : 2, paths, arrays, &t_write);
        }
    }
    rc = agree_rc(cmd, rc);
    if (rc == CLI_OK && job->stats) print_stats(job, st, t_load, t_write);
    if (rc == CLI_OK && rank == 0) {
        if (job->radius) {
            int64_t total = 0;
            for (int64_t i = 0; i < nq; i++) total += all_idx[i];
            cli_summary("%s: %lld queries, r = %g, mean %.2f neighbours, %d ranks -> %s", cmd,
                        (long long)nq, job->r, nq ? (double)total / (double)nq : 0.0, size,
                        job->out);
        } else {
            cli_summary("%s: %lld queries, k = %lld, %lld reference points, d = %d, %d ranks -> "
                        "%s%s%s",
                        cmd, (long long)nq, (long long)k, (long long)n, (int)d, size, job->out,
                        job->dist_out ? ", " : "", job->dist_out ? job->dist_out : "");
        }
    }
    canopy_free(pts);
    canopy_free(ids);
    canopy_free(ql);
    canopy_free(idx);
    canopy_free(d2);
    canopy_free(all_idx);
    canopy_free(all_d2);
    canopy_free(all_ids);
    return rc;
}

#else

int cli_dist_neighbours(const cli_dist_job *job) {
    (void)job;
    return 1; /* unreachable: without MPI there is one rank */
}

#endif
