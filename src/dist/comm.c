// SPDX-License-Identifier: MIT
/* The internal MPI layer: start/stop, fatal errors, error agreement, v-collectives. */
#define _POSIX_C_SOURCE 200809L /* setenv, dirfd */
#include "dist/comm.h"

#include <dirent.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int started_here;

static int mpi_running(void) {
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

/* Open MPI's default PML selection also opens the cm PML and its PSM/PSM2 MTLs, whose
 * probing takes most of MPI_Init (0.25-0.4 s on a 2-core machine, docs/distributed.md);
 * when every rank is on one node, ob1 over shared memory is what it would pick anyway.
 * The user's own OMPI_MCA_pml (environment or mpirun -x) is kept. */
static void prefer_ob1_on_one_node(void) {
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const char *world = getenv("OMPI_COMM_WORLD_SIZE");
    if (local && world && strcmp(local, world) == 0) setenv("OMPI_MCA_pml", "ob1", 0);
}

/* PMIx 4 talks to its server (mpirun) over loopback TCP without TCP_NODELAY. In
 * MPI_Finalize the client sends event deregistrations that get no answer, so the server
 * delays its ACK (40 ms on Linux) and Nagle holds the finalize request as long: MPI_Finalize
 * took 45-51 ms, 5-9 ms with this (docs/distributed.md, "The launch floor"). The sockets
 * carry small control messages, so sending them at once is safe on every connected TCP
 * socket of the process; MPI's own TCP transport sets TCP_NODELAY already. */
static void tcp_nodelay_all(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name), type = 0, one = 1;
        socklen_t len = sizeof type;
        struct sockaddr_storage peer;
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d)) continue;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM) continue;
        len = sizeof peer;
        if (getpeername(fd, (struct sockaddr *)&peer, &len) ||
            (peer.ss_family != AF_INET && peer.ss_family != AF_INET6))
            continue;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    closedir(d);
}

int canopy_dist_start(int *argc, char ***argv) {
    if (mpi_running()) return 1;
    if (!canopy_mpi_launched()) return 0;
    prefer_ob1_on_one_node();
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "canopy: MPI_Init_thread failed\n");
        exit(1);
    }
    started_here = 1;
    tcp_nodelay_all();
    canopy_dist_set_fatal_handler(MPI_COMM_WORLD);
    if (provided < MPI_THREAD_FUNNELED)
        canopy_dist_abort(MPI_COMM_WORLD,
                          "the MPI library gives thread level %d; canopy needs "
                          "MPI_THREAD_FUNNELED (OpenMP threads inside each rank)",
                          provided);
    return 1;
}

void canopy_dist_stop(void) {
    if (started_here && mpi_running()) MPI_Finalize();
    started_here = 0;
}

int canopy_dist_rank(MPI_Comm comm) {
    int r = 0;
    if (mpi_running()) MPI_Comm_rank(comm, &r);
    return r;
}

int canopy_dist_size(MPI_Comm comm) {
    int s = 1;
    if (mpi_running()) MPI_Comm_size(comm, &s);
    return s;
}

static void fatal_handler(MPI_Comm *comm, int *code, ...) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(*code, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "code %d", *code);
    canopy_dist_abort(*comm, "MPI error: %s", msg);
}

void canopy_dist_set_fatal_handler(MPI_Comm comm) {
    MPI_Errhandler h;
    MPI_Comm_create_errhandler(fatal_handler, &h);
    MPI_Comm_set_errhandler(comm, h);
    MPI_Errhandler_free(&h);
}

void canopy_dist_abort(MPI_Comm comm, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "canopy [rank %d/%d]: %s; aborting the job\n", canopy_dist_rank(comm),
            canopy_dist_size(comm), msg);
    fflush(stderr);
    if (mpi_running()) MPI_Abort(comm, 1);
    exit(1);
}

canopy_status canopy_dist_agree(MPI_Comm comm, canopy_status local) {
    int size = canopy_dist_size(comm), rank = canopy_dist_rank(comm);
    if (size == 1) return local;
    /* The lowest failing rank (size when none), then its status and message. */
    int mine = local != CANOPY_OK ? rank : size, first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size) return CANOPY_OK;
    char msg[1024] = {0};
    int st = (int)local;
    if (rank == first) snprintf(msg, sizeof msg, "%s", canopy_last_error());
    MPI_Bcast(&st, 1, MPI_INT, first, comm);
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm);
    msg[sizeof msg - 1] = 0;
    if (rank == first) return local;
    return canopy_fail((canopy_status)st, "rank %d: %s", first, msg);
}

canopy_status canopy_dist_displs(const int64_t *counts, int n, int *icounts, int *idispls,
                                 int64_t *total) {
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0 || counts[i] > INT_MAX || sum > INT_MAX)
            return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                               "MPI: a message of %lld elements (or an offset of %lld) exceeds "
                               "MPI's int counts; use more ranks",
                               (long long)counts[i], (long long)sum);
        icounts[i] = (int)counts[i];
        if (idispls) idispls[i] = (int)sum;
        sum += counts[i];
    }
    if (total) *total = sum;
    return CANOPY_OK;
}

/* A contiguous type of elem_bytes bytes, so counts stay element counts. */
static MPI_Datatype elem_type(size_t elem_bytes) {
    MPI_Datatype t;
    MPI_Type_contiguous((int)elem_bytes, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Scratch arrays for the v-collectives: size int counts and displacements. */
typedef struct vbuf {
    int *counts, *displs;
    int64_t *c64;
} vbuf;

static canopy_status vbuf_alloc(vbuf *v, int size) {
    memset(v, 0, sizeof *v);
    canopy_status st = canopy_alloc((void **)&v->counts, (size_t)size, sizeof(int));
    if (!st) st = canopy_alloc((void **)&v->displs, (size_t)size, sizeof(int));
    if (!st) st = canopy_alloc((void **)&v->c64, (size_t)size, sizeof(int64_t));
    return st;
}

static void vbuf_free(vbuf *v) {
    canopy_free(v->counts);
    canopy_free(v->displs);
    canopy_free(v->c64);
}

static canopy_status gatherv_impl(MPI_Comm comm, int root, const void *send, int64_t n,
                                  size_t elem_bytes, void **out, int64_t *counts, int64_t *n_out) {
    int size = canopy_dist_size(comm), rank = canopy_dist_rank(comm), all = root < 0;
    *out = NULL;
    *n_out = 0;
    if (n < 0 || n > INT_MAX || elem_bytes == 0 || elem_bytes > INT_MAX)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "MPI gather: %lld elements of %zu bytes",
                           (long long)n, elem_bytes);
    vbuf v;
    canopy_status st = vbuf_alloc(&v, size);
    int64_t total = 0;
    if (!st) {
        int64_t mine = n;
        if (all)
            MPI_Allgather(&mine, 1, MPI_INT64_T, v.c64, 1, MPI_INT64_T, comm);
        else
            MPI_Gather(&mine, 1, MPI_INT64_T, v.c64, 1, MPI_INT64_T, root, comm);
        if (all || rank == root) st = canopy_dist_displs(v.c64, size, v.counts, v.displs, &total);
    }
    void *buf = NULL;
    if (!st && (all || rank == root) && total > 0)
        st = canopy_alloc(&buf, (size_t)total, elem_bytes);
    /* Every rank enters the data collective or none. */
    st = canopy_dist_agree(comm, st);
    if (!st) {
        MPI_Datatype t = elem_type(elem_bytes);
        if (all)
            MPI_Allgatherv(send, (int)n, t, buf, v.counts, v.displs, t, comm);
        else
            MPI_Gatherv(send, (int)n, t, buf, v.counts, v.displs, t, root, comm);
        MPI_Type_free(&t);
        if (all || rank == root) {
            if (counts) memcpy(counts, v.c64, sizeof *counts * (size_t)size);
            *out = buf;
            *n_out = total;
        }
    } else {
        canopy_free(buf);
    }
    vbuf_free(&v);
    return st;
}

canopy_status canopy_dist_gatherv(MPI_Comm comm, int root, const void *send, int64_t n,
                                  size_t elem_bytes, void **out, int64_t *counts, int64_t *n_out) {
    return gatherv_impl(comm, root, send, n, elem_bytes, out, counts, n_out);
}

canopy_status canopy_dist_allgatherv(MPI_Comm comm, const void *send, int64_t n, size_t elem_bytes,
                                     void **out, int64_t *counts, int64_t *n_out) {
    return gatherv_impl(comm, -1, send, n, elem_bytes, out, counts, n_out);
}

canopy_status canopy_dist_scatterv(MPI_Comm comm, int root, const void *send, const int64_t *counts,
                                   size_t elem_bytes, void **out, int64_t *n_out) {
    int size = canopy_dist_size(comm), rank = canopy_dist_rank(comm);
    *out = NULL;
    *n_out = 0;
    vbuf v;
    canopy_status st = vbuf_alloc(&v, size);
    if (!st && rank == root) st = canopy_dist_displs(counts, size, v.counts, v.displs, NULL);
    st = canopy_dist_agree(comm, st);
    if (st) {
        vbuf_free(&v);
        return st;
    }
    int mine = 0;
    MPI_Scatter(v.counts, 1, MPI_INT, &mine, 1, MPI_INT, root, comm);
    void *buf = NULL;
    st = canopy_alloc(&buf, (size_t)mine + 1, elem_bytes);
    st = canopy_dist_agree(comm, st);
    if (!st) {
        MPI_Datatype t = elem_type(elem_bytes);
        MPI_Scatterv(send, v.counts, v.displs, t, buf, mine, t, root, comm);
        MPI_Type_free(&t);
        *out = buf;
        *n_out = mine;
    } else {
        canopy_free(buf);
    }
    vbuf_free(&v);
    return st;
}

/* The byte counts go round (one MPI_Alltoall), the receive buffer is allocated and
 * the exchange starts: blocking (req NULL) or not (*req to complete). sv and rv stay
 * in use until it completes. */
static canopy_status alltoallv_start(MPI_Comm comm, const void *send, const int64_t *send_counts,
                                     void **recv, int64_t *recv_counts, int64_t *recv_displs,
                                     canopy_dist_stats *stats, vbuf *sv, vbuf *rv,
                                     MPI_Request *req) {
    int size = canopy_dist_size(comm), rank = canopy_dist_rank(comm);
    *recv = NULL;
    canopy_status st = vbuf_alloc(sv, size);
    if (!st)
        st = vbuf_alloc(rv, size);
    else
        memset(rv, 0, sizeof *rv);
    double t0 = canopy_now();
    if (!st) {
        MPI_Alltoall(send_counts, 1, MPI_INT64_T, recv_counts, 1, MPI_INT64_T, comm);
        st = canopy_dist_displs(send_counts, size, sv->counts, sv->displs, NULL);
        int64_t total = 0;
        if (!st) st = canopy_dist_displs(recv_counts, size, rv->counts, rv->displs, &total);
        if (!st && total > 0) st = canopy_alloc(recv, (size_t)total, 1);
    }
    st = canopy_dist_agree(comm, st);
    if (!st) {
        if (req)
            MPI_Ialltoallv(send, sv->counts, sv->displs, MPI_BYTE, *recv, rv->counts, rv->displs,
                           MPI_BYTE, comm, req);
        else
            MPI_Alltoallv(send, sv->counts, sv->displs, MPI_BYTE, *recv, rv->counts, rv->displs,
                          MPI_BYTE, comm);
        for (int r = 0; r < size; r++) recv_displs[r] = rv->displs[r];
        if (stats)
            for (int r = 0; r < size; r++) {
                if (r == rank) continue;
                stats->bytes_sent += send_counts[r];
                stats->bytes_received += recv_counts[r];
                stats->messages += send_counts[r] > 0;
            }
    } else {
        canopy_free(*recv);
        *recv = NULL;
    }
    if (stats) stats->comm_seconds += canopy_now() - t0;
    return st;
}

canopy_status canopy_dist_alltoallv_bytes(MPI_Comm comm, const void *send,
                                          const int64_t *send_counts, void **recv,
                                          int64_t *recv_counts, int64_t *recv_displs,
                                          canopy_dist_stats *stats) {
    vbuf sv, rv;
    canopy_status st = alltoallv_start(comm, send, send_counts, recv, recv_counts, recv_displs,
                                       stats, &sv, &rv, NULL);
    vbuf_free(&sv);
    vbuf_free(&rv);
    return st;
}

struct canopy_dist_pending {
    MPI_Request req;
    vbuf sv, rv;
    canopy_dist_stats *stats;
};

canopy_status canopy_dist_ialltoallv_bytes(MPI_Comm comm, const void *send,
                                           const int64_t *send_counts, void **recv,
                                           int64_t *recv_counts, int64_t *recv_displs,
                                           canopy_dist_stats *stats,
                                           canopy_dist_pending **pending) {
    canopy_dist_pending *p = NULL;
    *pending = NULL;
    canopy_status st = canopy_dist_agree(comm, canopy_calloc((void **)&p, 1, sizeof *p));
    if (st) {
        canopy_free(p);
        *recv = NULL;
        return st;
    }
    p->req = MPI_REQUEST_NULL;
    p->stats = stats;
    st = alltoallv_start(comm, send, send_counts, recv, recv_counts, recv_displs, stats, &p->sv,
                         &p->rv, &p->req);
    if (!st) {
        *pending = p;
        return CANOPY_OK;
    }
    vbuf_free(&p->sv);
    vbuf_free(&p->rv);
    canopy_free(p);
    return st;
}

void canopy_dist_pending_test(canopy_dist_pending *p) {
    if (!p) return;
    double t0 = canopy_now();
    int done = 0;
    MPI_Test(&p->req, &done, MPI_STATUS_IGNORE);
    if (p->stats) p->stats->comm_seconds += canopy_now() - t0;
}

void canopy_dist_pending_wait(canopy_dist_pending *p) {
    if (!p) return;
    double t0 = canopy_now();
    MPI_Wait(&p->req, MPI_STATUS_IGNORE);
    if (p->stats) p->stats->comm_seconds += canopy_now() - t0;
    vbuf_free(&p->sv);
    vbuf_free(&p->rv);
    canopy_free(p);
}
