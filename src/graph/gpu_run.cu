/* SPDX-License-Identifier: MIT */
/* Host side of the GPU graph applications: upload the graph once, run every round of
 * an application on the device with the chosen strategy (the same rounds as the CPU
 * versions in sssp.c, bfs.c, ...), keep the statistics, download the result. */
#include "core/device.h"
#include "core/gpu.cuh"
#include "graph/gpu.h"
#include "graph/gpu_graph_apps.cuh"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        if ((s = (expr)) != CANOPY_OK) return s;                                                   \
    } while (0)
#define CUDA_TRY(expr, what) TRY(canopy_gpu_check((expr), what))

/* Round state: the next worklist's length (read back after rounds that make one),
 * the pool cursor and the chunk count (reset every round), the grid barrier's
 * scratch, then the counters (read once, at the end). */
enum {
    ST_NEXT_N,
    ST_CURSOR,
    ST_CHUNKS,
    ST_ROUND_WORDS,
    ST_BLOCKS_DONE = ST_ROUND_WORDS,
    ST_COUNTERS
};
enum { ST_WORDS = ST_COUNTERS + GPU_DP_NCOUNTERS };

static const int default_child_threads = 128;

typedef cudaError_t (*strategy_fn)(const gpu_launch *);
static const strategy_fn strategy_fns[] = {
    gpu_graph_nodp_thread, gpu_graph_nodp_warp, gpu_graph_nodp_block, gpu_graph_nodp_split,
    gpu_graph_dp_basic,    gpu_graph_dp_warp,   gpu_graph_dp_block,   gpu_graph_dp_grid};

/* Device memory of one run and the running statistics. */
struct session : canopy_gpu_buffers {
    gpu_launch L;
    strategy_fn run;
    canopy_graph_strategy strategy;
    unsigned long long *state = NULL;
    canopy_graph_stats *st;
    double t_phase;
    int64_t plan_heavy = 0; /* heavy rows of the plan (counted per planned round) */

    /* Checks the device, uploads the CSR and, for the DP strategies and nodp-split,
     * sets up the pool (one descriptor per row: a round never has more items than
     * rows; chunk records: a row of len entries makes at most len / GPU_CHUNK + 1 of
     * them). The partials and counters start at zero, and every round leaves them so
     * (the chunks' per-row counts rely on it).
     * all_rows: the application loops over all rows, which nodp-split plans here
     * (the plan's time counts as upload, like cuSPARSE's set-up outside its call). */
    canopy_status init(const canopy_csr *g, const canopy_graph_options *opt,
                       canopy_graph_stats *stats, bool all_rows) {
        canopy_status s;
        st = stats;
        if (!canopy_gpu_usable())
            return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                               "graph strategy '%s' needs a GPU, and no usable CUDA device is "
                               "visible (use serial, omp-flat or omp-split)",
                               canopy_graph_strategy_name(opt->strategy));
        memset(&L, 0, sizeof L);
        L.plan_n = -1;
        int dev = 0;
        CUDA_TRY(cudaGetDevice(&dev), "cudaGetDevice");
        CUDA_TRY(cudaDeviceGetAttribute(&L.sms, cudaDevAttrMultiProcessorCount, dev),
                 "multiprocessor count");
        strategy = opt->strategy;
        run = strategy_fns[opt->strategy - CANOPY_GRAPH_NODP_THREAD];
        t_phase = canopy_now();
        int64_t *rp;
        int32_t *col;
        double *val = NULL;
        TRY(upload(&rp, (const int64_t *)g->row_ptr, g->n_rows + 1, "row offsets"));
        TRY(upload(&col, (const int32_t *)g->col, g->nnz, "columns"));
        if (g->val) TRY(upload(&val, (const double *)g->val, g->nnz, "values"));
        L.ctx.row_ptr = rp;
        L.ctx.col = col;
        L.ctx.val = val;
        TRY(alloc(&state, ST_WORDS, "round state"));
        CUDA_TRY(cudaMemset(state, 0, sizeof(unsigned long long) * ST_WORDS), "round state");
        L.ctx.next_n = state + ST_NEXT_N;
        gpu_dp &dp = L.dp;
        dp.threshold = opt->dp_threshold;
        dp.form = opt->child_form;
        dp.child_threads = opt->child_threads > 0 ? opt->child_threads : default_child_threads;
        dp.child_blocks = opt->child_blocks;
        dp.kc = opt->kc;
        dp.cursor = state + ST_CURSOR;
        dp.blocks_done = (unsigned int *)(state + ST_BLOCKS_DONE);
        dp.counters = state + ST_COUNTERS;
        if (opt->strategy >= CANOPY_GRAPH_NODP_SPLIT) {
            dp.cap = g->n_rows;
            TRY(alloc(&dp.acc, dp.cap, "descriptor pool partials"));
            TRY(alloc(&dp.done, dp.cap, "descriptor pool counters"));
            CUDA_TRY(cudaMemset(dp.acc, 0, sizeof(unsigned long long) * (size_t)dp.cap),
                     "descriptor pool partials");
            CUDA_TRY(cudaMemset(dp.done, 0, sizeof(unsigned int) * (size_t)dp.cap),
                     "descriptor pool counters");
            TRY(alloc(&dp.ch.rec, g->nnz / GPU_CHUNK + g->n_rows, "chunk records"));
            dp.ch.acc = dp.acc;
            dp.ch.done = dp.done;
            dp.ch.count = state + ST_CHUNKS;
        }
        if (opt->strategy == CANOPY_GRAPH_NODP_SPLIT && all_rows) {
            gpu_chunk *plan;
            TRY(alloc(&plan, g->nnz / GPU_CHUNK + g->n_rows, "chunk plan"));
            CUDA_TRY(gpu_graph_nodp_split_plan(&L, g->n_rows, plan, &L.plan_n, &plan_heavy),
                     "nodp-split plan");
            L.plan = plan;
        }
        if (opt->strategy >= CANOPY_GRAPH_BASIC_DP) {
            TRY(alloc(&dp.rows, dp.cap, "descriptor pool"));
            TRY(canopy_gpu_dp_reserve(65536));
        }
        CUDA_TRY(cudaDeviceSynchronize(), "upload");
        stats->upload_seconds += canopy_now() - t_phase;
        t_phase = canopy_now();
        return CANOPY_OK;
    }

    /* Runs one outer loop over items[0 .. n) (NULL: all rows); when next_n is given,
     * waits for the round and returns the length of the worklist it appended to,
     * else returns at once (the next launch on the stream starts after it). */
    canopy_status round(int app, const gpu_graph_ctx &ctx, const int64_t *items, int64_t n,
                        int64_t *next_n) {
        canopy_status s;
        const bool planned = !items && L.plan_n >= 0;
        if (!planned)
            CUDA_TRY(
                cudaMemsetAsync(state, 0, ST_ROUND_WORDS * sizeof(unsigned long long), L.stream),
                "round reset");
        else
            st->heavy_items += plan_heavy;
        L.app = app;
        L.ctx = ctx;
        L.ctx.next_n = state + ST_NEXT_N;
        L.items.items = items;
        L.items.n = n;
        CUDA_TRY(run(&L), canopy_graph_strategy_name(strategy));
        st->items += n;
        if (!next_n) return CANOPY_OK;
        unsigned long long back;
        CUDA_TRY(cudaMemcpy(&back, state + ST_NEXT_N, sizeof back, cudaMemcpyDeviceToHost),
                 "round");
        *next_n = (int64_t)back;
        return CANOPY_OK;
    }

    /* Ends the kernel phase, downloads `count` values, reads the device counters. */
    template <class T> canopy_status finish(T *host, const T *dev, int64_t count) {
        canopy_status s;
        CUDA_TRY(cudaDeviceSynchronize(), "kernels");
        st->kernel_seconds += canopy_now() - t_phase;
        t_phase = canopy_now();
        if (count > 0)
            CUDA_TRY(cudaMemcpy(host, dev, sizeof(T) * (size_t)count, cudaMemcpyDeviceToHost),
                     "download");
        unsigned long long c[GPU_DP_NCOUNTERS];
        CUDA_TRY(cudaMemcpy(c, state + ST_COUNTERS, sizeof c, cudaMemcpyDeviceToHost), "counters");
        st->child_launches += (int64_t)c[GPU_DP_LAUNCHES];
        st->launch_fallbacks += (int64_t)c[GPU_DP_FALLBACKS];
        st->heavy_items += (int64_t)c[GPU_DP_HEAVY];
        if ((int64_t)c[GPU_DP_HIGH] > st->buffer_high_water)
            st->buffer_high_water = (int64_t)c[GPU_DP_HIGH];
        st->download_seconds += canopy_now() - t_phase;
        return CANOPY_OK;
    }
};

/* ---------------------------------------------------------- helper kernels -- */

template <class T> __global__ void fill_kernel(T *a, int64_t n, T v) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        a[i] = v;
}

__global__ void clear_flags_kernel(const int64_t *items, int64_t n, unsigned int *flag) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) flag[items[i]] = 0u;
}

/* Vertices with nothing left to wait for start the colouring. */
__global__ void ready_kernel(const unsigned long long *wait, int64_t n, int64_t *out,
                             unsigned long long *out_n) {
    int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (v < n && wait[v] == 0ull) out[atomicAdd(out_n, 1ull)] = v;
}

/* Sums one double per thread into *out (block partials, one atomic per block). */
__device__ void add_to(double v, double *out) {
    __shared__ double part[32];
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(GPU_FULL_MASK, v, m);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.0;
        for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(GPU_FULL_MASK, v, m);
        if (threadIdx.x == 0) atomicAdd(out, v);
    }
}

/* contrib[u] = rank[u] / outdeg(u); sums the rank of vertices without out-edges. */
__global__ void pr_contrib_kernel(const int64_t *out_ptr, const double *rank, double *contrib,
                                  int64_t n, double *dangling) {
    int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    double d = 0.0;
    if (u < n) {
        int64_t deg = out_ptr[u + 1] - out_ptr[u];
        contrib[u] = deg ? rank[u] / (double)deg : 0.0;
        if (!deg) d = rank[u];
    }
    add_to(d, dangling);
}

/* L1 change of the iteration, and rank = next. */
__global__ void pr_change_kernel(double *rank, const double *next, int64_t n, double *change) {
    int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    double d = 0.0;
    if (v < n) {
        d = fabs(next[v] - rank[v]);
        rank[v] = next[v];
    }
    add_to(d, change);
}

static unsigned blocks_for(int64_t n, int threads) {
    return (unsigned)((n + threads - 1) / threads);
}

/* ---------------------------------------------------- worklist applications -- */

/* A worklist pair on the device and its host-side length (colouring). */
struct worklists {
    int64_t *cur, *next;
    int64_t cur_n;
    void swap(int64_t next_n) {
        int64_t *t = cur;
        cur = next;
        next = t;
        cur_n = next_n;
    }
};

/* The rounds of a worklist loop from `source` (already at its start value in ctx),
 * until a round appends nothing: ctx.queued, when the application uses it, is
 * cleared for the items of the next round, and ctx.next_level counts the rounds
 * (only BFS reads it). */
static canopy_status worklist_rounds(session &S, int app, gpu_graph_ctx &ctx, int64_t source,
                                     int64_t n, canopy_graph_stats *stats) {
    canopy_status s;
    int64_t *cur, *next, cur_n = 1;
    TRY(S.alloc(&cur, n, "worklist"));
    TRY(S.alloc(&next, n, "worklist"));
    CUDA_TRY(cudaMemcpy(cur, &source, sizeof source, cudaMemcpyHostToDevice), "source");
    ctx.next_level = 1;
    while (cur_n > 0) {
        int64_t next_n;
        ctx.next = next;
        TRY(S.round(app, ctx, cur, cur_n, &next_n));
        if (ctx.queued && next_n)
            clear_flags_kernel<<<blocks_for(next_n, 256), 256>>>(next, next_n, ctx.queued);
        int64_t *t = cur;
        cur = next;
        next = t;
        cur_n = next_n;
        ctx.next_level++;
        stats->iterations++;
    }
    return CANOPY_OK;
}

extern "C" canopy_status canopy_graph_gpu_sssp(const canopy_csr *g, int64_t source,
                                               const canopy_graph_options *opt, double *dist,
                                               canopy_graph_stats *stats) {
    session S;
    canopy_status s;
    const int64_t n = g->n_rows;
    TRY(S.init(g, opt, stats, false));
    gpu_graph_ctx ctx = S.L.ctx;
    TRY(S.alloc(&ctx.dist, n, "distances"));
    TRY(S.alloc(&ctx.queued, n, "flags"));
    fill_kernel<<<blocks_for(n, 256), 256>>>(ctx.dist, n, (double)INFINITY);
    CUDA_TRY(cudaMemset(ctx.queued, 0, sizeof(unsigned) * (size_t)n), "flags");
    const double zero = 0.0;
    CUDA_TRY(cudaMemcpy(ctx.dist + source, &zero, sizeof zero, cudaMemcpyHostToDevice), "source");
    TRY(worklist_rounds(S, GPU_APP_SSSP, ctx, source, n, stats));
    return S.finish(dist, ctx.dist, n);
}

__global__ void unreached_kernel(int64_t *level, int64_t n) {
    int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (v < n && level[v] == INT64_MAX) level[v] = -1;
}

extern "C" canopy_status canopy_graph_gpu_bfs(const canopy_csr *g, int64_t source, int recursive,
                                              const canopy_graph_options *opt, int64_t *level,
                                              canopy_graph_stats *stats) {
    session S;
    canopy_status s;
    const int64_t n = g->n_rows;
    TRY(S.init(g, opt, stats, false));
    gpu_graph_ctx ctx = S.L.ctx;
    TRY(S.alloc(&ctx.level, n, "levels"));
    if (recursive) {
        TRY(S.alloc(&ctx.queued, n, "flags"));
        CUDA_TRY(cudaMemset(ctx.queued, 0, sizeof(unsigned) * (size_t)n), "flags");
    }
    fill_kernel<<<blocks_for(n, 256), 256>>>(ctx.level, n, recursive ? (int64_t)INT64_MAX : -1);
    const int64_t zero = 0;
    CUDA_TRY(cudaMemcpy(ctx.level + source, &zero, sizeof zero, cudaMemcpyHostToDevice), "source");
    TRY(worklist_rounds(S, recursive ? GPU_APP_BFS_REC : GPU_APP_BFS, ctx, source, n, stats));
    if (recursive) unreached_kernel<<<blocks_for(n, 256), 256>>>(ctx.level, n);
    return S.finish(level, ctx.level, n);
}

extern "C" canopy_status canopy_graph_gpu_spmv(const canopy_csr *g, const double *x,
                                               const canopy_graph_options *opt, double *y,
                                               canopy_graph_stats *stats) {
    session S;
    canopy_status s;
    TRY(S.init(g, opt, stats, true));
    gpu_graph_ctx ctx = S.L.ctx;
    double *dx, *dy;
    double t0 = canopy_now();
    TRY(S.upload(&dx, x, g->n_cols, "x"));
    stats->upload_seconds += canopy_now() - t0;
    TRY(S.alloc(&dy, g->n_rows, "y"));
    S.t_phase = canopy_now();
    ctx.x = dx;
    ctx.y = dy;
    TRY(S.round(ctx.val ? GPU_APP_SPMV_VAL : GPU_APP_SPMV, ctx, NULL, g->n_rows, NULL));
    stats->iterations = 1;
    return S.finish(y, (const double *)dy, g->n_rows);
}

extern "C" canopy_status canopy_graph_gpu_pagerank(const canopy_csr *g, const canopy_csr *t,
                                                   const canopy_graph_options *opt, double *rank,
                                                   canopy_graph_stats *stats) {
    session S;
    canopy_status s;
    const int64_t n = g->n_rows;
    TRY(S.init(t, opt, stats, true));
    gpu_graph_ctx ctx = S.L.ctx;
    int64_t *out_ptr;
    double *drank, *contrib, *next, *sums;
    TRY(S.upload(&out_ptr, (const int64_t *)g->row_ptr, n + 1, "out-degrees"));
    TRY(S.alloc(&drank, n, "ranks"));
    TRY(S.alloc(&contrib, n, "contributions"));
    TRY(S.alloc(&next, n, "ranks"));
    TRY(S.alloc(&sums, 2, "sums"));
    fill_kernel<<<blocks_for(n, 256), 256>>>(drank, n, 1.0 / (double)n);
    ctx.contrib = contrib;
    ctx.rank_next = next;
    ctx.damping = opt->damping;
    ctx.base = (1.0 - opt->damping) / (double)n;
    ctx.dangling = sums;
    ctx.n_f = (double)n;
    /* One round trip per iteration, for the L1 change: the dangling rank stays on the
     * device (the App's postwork reads it). */
    for (;;) {
        double h[2];
        CUDA_TRY(cudaMemsetAsync(sums, 0, 2 * sizeof(double)), "sums");
        pr_contrib_kernel<<<blocks_for(n, 256), 256>>>(out_ptr, drank, contrib, n, sums);
        TRY(S.round(GPU_APP_PAGERANK, ctx, NULL, n, NULL));
        pr_change_kernel<<<blocks_for(n, 256), 256>>>(drank, next, n, sums + 1);
        CUDA_TRY(cudaMemcpy(h, sums, sizeof h, cudaMemcpyDeviceToHost), "L1 change");
        stats->iterations++;
        if (h[1] < opt->tolerance) break;
        if (stats->iterations >= opt->max_iterations)
            return canopy_fail(CANOPY_ERR_INVALID,
                               "pagerank: no convergence in %d iterations (L1 change %g, "
                               "tolerance %g)",
                               (int)opt->max_iterations, h[1], opt->tolerance);
    }
    return S.finish(rank, (const double *)drank, n);
}

extern "C" canopy_status canopy_graph_gpu_color(const canopy_csr *sym,
                                                const canopy_graph_options *opt, int64_t *color,
                                                canopy_graph_stats *stats) {
    session S;
    canopy_status s;
    const int64_t n = sym->n_rows;
    TRY(S.init(sym, opt, stats, true));
    gpu_graph_ctx ctx = S.L.ctx;
    worklists w, retry;
    TRY(S.alloc(&ctx.color, n, "colours"));
    TRY(S.alloc(&ctx.wait, n, "wait counts"));
    TRY(S.alloc(&w.cur, n, "worklist"));
    TRY(S.alloc(&w.next, n, "worklist"));
    TRY(S.alloc(&retry.cur, n, "worklist"));
    TRY(S.alloc(&retry.next, n, "worklist"));
    TRY(S.round(GPU_APP_COLOR_COUNT, ctx, NULL, n, NULL));
    CUDA_TRY(cudaMemset(S.state + ST_NEXT_N, 0, sizeof(unsigned long long)), "ready count");
    if (n) ready_kernel<<<blocks_for(n, 256), 256>>>(ctx.wait, n, w.cur, S.state + ST_NEXT_N);
    unsigned long long ready;
    CUDA_TRY(cudaMemcpy(&ready, S.state + ST_NEXT_N, sizeof ready, cudaMemcpyDeviceToHost),
             "ready vertices");
    w.cur_n = (int64_t)ready;
    int64_t coloured = 0;
    while (w.cur_n > 0) {
        /* Colour this round's vertices, 64 candidate colours per pass. */
        const int64_t *items = w.cur;
        int64_t left = w.cur_n;
        for (ctx.window = 0; left > 0; ctx.window += 64) {
            ctx.next = retry.next;
            TRY(S.round(GPU_APP_COLOR_PICK, ctx, items, left, &left));
            retry.swap(left);
            items = retry.cur;
        }
        int64_t next_n;
        ctx.next = w.next;
        TRY(S.round(GPU_APP_COLOR_RELEASE, ctx, w.cur, w.cur_n, &next_n));
        coloured += w.cur_n;
        w.swap(next_n);
        stats->iterations++;
    }
    if (coloured != n)
        return canopy_fail(CANOPY_ERR_INTERNAL, "color: %lld of %lld vertices coloured",
                           (long long)coloured, (long long)n);
    return S.finish(color, (const int64_t *)ctx.color, n);
}
