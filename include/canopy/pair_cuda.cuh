/* SPDX-License-Identifier: MIT */
/* canopy/pair_cuda.cuh — the GPU engine of pair walks (canopy/pair.h): dr on node
 * pairs, one warp per pair. The host expands the walk into many pending pairs
 * (canopy_pair_frontier, with the descriptor's host copy); warps take them from a
 * shared cursor one at a time and walk each pair's subtree depth-first on a stack
 * in global memory that the whole warp shares, so the warp never diverges on the
 * walk: the child pairs of a pair are tested one per lane (each pair by exactly one
 * lane, which alone may account for it), the pairs to descend are pushed in a
 * ballot, and the lanes split the point pairs of a leaf pair among themselves.
 *
 * A pair descriptor as a GPU type App:
 *   typedef ... Ctx;                      the device context (passed by value)
 *   static size_t shared_bytes(const Ctx &)  dynamic shared memory per block
 *   __device__ static void block_begin(const Ctx &, void *smem)  every thread, then a barrier
 *   __device__ static int test(const Ctx &, void *smem, const canopy_tree_view &ta, a,
 *                              const canopy_tree_view &tb, b, int sym)  canopy/pair.h's test
 *   __device__ static void visit_leaves(const Ctx &, void *smem, ta, a, tb, b, int sym,
 *                              int lane)  lane 0..31 of the warp: its share of the pairs
 *   __device__ static void block_end(const Ctx &, void *smem)  after a barrier, every thread */
#ifndef CANOPY_PAIR_CUDA_CUH
#define CANOPY_PAIR_CUDA_CUH

#include "canopy/pair.h"
#include "canopy/traverse_cuda.cuh"

#include <omp.h>
#include <string.h>

enum { CANOPY_PAIR_GPU_BLOCK = 256, CANOPY_PAIR_GPU_TASKS_PER_WARP = 4 };

/* counters: [0] tests, [1] leaf pairs. MinBlocks: blocks an SM must hold at once (the
   compiler caps the registers to fit them; 1: no cap) */
template <class App, int MinBlocks = 1>
__global__ void __launch_bounds__(CANOPY_PAIR_GPU_BLOCK, MinBlocks)
    canopy_pair_dr_kernel(typename App::Ctx ctx, canopy_tree_view ta, canopy_tree_view tb, int sym,
                          const canopy_pair *tasks, unsigned long long ntasks, canopy_pair *stacks,
                          int64_t cap, unsigned long long *cursor, unsigned long long *counters) {
    extern __shared__ double canopy_pair_smem[];
    void *smem = canopy_pair_smem;
    App::block_begin(ctx, smem);
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    canopy_pair *stack = stacks + warp * cap;
    unsigned long long tests = 0, leaves = 0;
    for (;;) {
        unsigned long long t = 0;
        if (lane == 0) t = atomicAdd(cursor, 1ull);
        t = __shfl_sync(CANOPY_FULL_MASK, t, 0);
        if (t >= ntasks) break;
        if (lane == 0) stack[0] = tasks[t];
        int64_t sp = 1;
        __syncwarp();
        while (sp > 0) {
            canopy_pair p = stack[sp - 1];
            sp--;
            __syncwarp(); /* every lane has read the top before it is overwritten */
            const canopy_node *ha = canopy_tv_node(&ta, p.a), *hb = canopy_tv_node(&tb, p.b);
            if (ha->child < 0 && hb->child < 0) {
                App::visit_leaves(ctx, smem, ta, p.a, tb, p.b, sym, lane);
                leaves++;
                continue;
            }
            /* lane takes child pairs lane and 32 + lane (at most 36 exist) */
            canopy_pair kid[2];
            int32_t k = 0;
            for (int r = 0; r < 2; r++)
                k = canopy_pair_child(ha, hb, sym, p, r * 32 + lane, &kid[r]);
            tests += k;
            /* kid c goes below the descending kids after it, so kid 0 pops first */
            unsigned long long down = 0;
            int mine[2] = {0, 0};
            for (int r = 0; r < 2; r++) {
                int c = r * 32 + lane;
                mine[r] = c < k && App::test(ctx, smem, ta, kid[r].a, tb, kid[r].b, sym) ==
                                       CANOPY_PAIR_DESCEND;
                down |= (unsigned long long)__ballot_sync(CANOPY_FULL_MASK, mine[r]) << (32 * r);
            }
            for (int r = 0; r < 2; r++) {
                int c = r * 32 + lane;
                if (mine[r]) stack[sp + (c == 63 ? 0 : __popcll(down >> (c + 1)))] = kid[r];
            }
            sp += __popcll(down);
            __syncwarp();
        }
    }
    if (lane == 0) {
        canopy_counter_add(counters, 0, tests);
        canopy_counter_add(counters, 1, leaves);
    }
    __syncthreads();
    App::block_end(ctx, smem);
}

/* log2 of a kd node pair's work guess: the pairs it holds over the larger of the two
 * boxes' volumes (equal counts a level in a median-split tree, so the denser pair walks
 * more of its pairs at any one distance). Axes of zero extent count as 2^-30, empty
 * nodes as one point. */
static inline float canopy_pair_work_log2(const canopy_tree_view *ta, int32_t a,
                                          const canopy_tree_view *tb, int32_t b) {
    const canopy_node *ha = canopy_tv_node(ta, a), *hb = canopy_tv_node(tb, b);
    const float *ga = canopy_tv_geom(ta, a), *gb = canopy_tv_geom(tb, b);
    float va = 0.0f, vb = 0.0f;
    for (int32_t j = 0; j < ta->d; j++) {
        va += log2f(fmaxf(ga[ta->d + j] - ga[j], 0x1p-30f));
        vb += log2f(fmaxf(gb[tb->d + j] - gb[j], 0x1p-30f));
    }
    return log2f(fmaxf((float)(ha->end - ha->begin), 1.0f)) +
           log2f(fmaxf((float)(hb->end - hb->begin), 1.0f)) - fmaxf(va, vb);
}

/* Orders kd pair tasks by canopy_pair_work_log2, most work first (a counting sort on
 * 256 buckets of the guess), so that the warps taking tasks from a shared cursor meet
 * the long ones first and none is left alone with one at the end. Other tree kinds
 * keep their order. */
static inline canopy_status canopy_pair_order_by_work(const canopy_tree_view *ta,
                                                      const canopy_tree_view *tb,
                                                      canopy_pair *tasks, int64_t n) {
    enum { BUCKETS = 256 };
    if (n < 2 || ta->kind != CANOPY_TREE_KD || tb->kind != CANOPY_TREE_KD) return CANOPY_OK;
    float *w = NULL;
    canopy_pair *out = NULL;
    canopy_status s = canopy_alloc((void **)&w, (size_t)n, sizeof *w);
    if (!s) s = canopy_alloc((void **)&out, (size_t)n, sizeof *out);
    if (s) {
        canopy_free(w);
        return s;
    }
    float lo = INFINITY, hi = -INFINITY;
    /* on every thread: each guess reads two nodes' records at random (cache misses) */
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
    for (int64_t i = 0; i < n; i++) {
        w[i] = canopy_pair_work_log2(ta, tasks[i].a, tb, tasks[i].b);
        lo = fminf(lo, w[i]);
        hi = fmaxf(hi, w[i]);
    }
    const float scale = hi > lo ? (BUCKETS - 1) / (hi - lo) : 0.0f;
    int64_t start[BUCKETS + 1] = {0};
    for (int64_t i = 0; i < n; i++) start[BUCKETS - 1 - (int)((w[i] - lo) * scale) + 1]++;
    for (int k = 0; k < BUCKETS; k++) start[k + 1] += start[k];
    for (int64_t i = 0; i < n; i++)
        out[start[BUCKETS - 1 - (int)((w[i] - lo) * scale)]++] = tasks[i];
    memcpy(tasks, out, sizeof *tasks * (size_t)n);
    canopy_free(out);
    canopy_free(w);
    return CANOPY_OK;
}

/* canopy_pair_frontier on every host thread: a level's pairs are split in contiguous
 * shares, each share's children are tested into its own region and its own
 * accumulator (nacc doubles, added into acc at the end in thread order), and the
 * regions are joined in thread order. A level may overshoot `want` by its pairs'
 * children. (At 2M points, 64 node pairs a warp: 29 ms on one thread, 32 ms with this on
 * 16 and the ordering still on one: H200 host, 2026-12-03; the node records' misses.) */
static inline canopy_status canopy_pair_frontier_par(const canopy_pair_app *app,
                                                     const canopy_pair_job *job, double *acc,
                                                     int64_t nacc, int64_t want, canopy_pair **out,
                                                     int64_t *n, canopy_pair_counters *cnt) {
    const int threads = omp_get_max_threads();
    if (threads < 2 || nacc <= 0) return canopy_pair_frontier(app, job, acc, want, out, n, cnt);
    const int64_t f = job->ta->max_children > job->tb->max_children ? job->ta->max_children
                                                                    : job->tb->max_children;
    const int64_t most = f * (f + 1) / 2 > f ? f * (f + 1) / 2 : f; /* children of a pair */
    double *accs = NULL;
    canopy_pair *cur = NULL, *next = NULL;
    int64_t nc = 0, len[256];
    canopy_status s = canopy_alloc((void **)&accs, (size_t)threads * (size_t)nacc, sizeof *accs);
    if (!s) s = canopy_alloc((void **)&cur, 1, sizeof *cur);
    *out = NULL;
    *n = 0;
    if (!s) {
        memset(accs, 0, sizeof *accs * (size_t)threads * (size_t)nacc);
        cnt->tests++;
        if (!app->test(job->ctx, acc, job->ta, 0, job->tb, 0, job->sym))
            cur[nc++] = canopy_pair_make(0, 0);
    }
    const int nt = threads < 256 ? threads : 256;
    int split = 1;
    while (!s && split && nc < want) {
        const int64_t share = (nc + nt - 1) / nt;
        s = canopy_alloc((void **)&next, (size_t)(share * nt * most), sizeof *next);
        if (s) break;
        int64_t tests = 0;
        split = 0;
#pragma omp parallel num_threads(nt) reduction(+ : tests) reduction(| : split)
        {
            /* shares, not threads: a team smaller than asked (nested, OMP_DYNAMIC) still
               expands every share */
            const int team = omp_get_num_threads();
            for (int t = omp_get_thread_num(); t < nt; t += team) {
                double *mine = accs + (int64_t)t * nacc;
                canopy_pair *to = next + (int64_t)t * share * most;
                int64_t m = 0;
                const int64_t end = (t + 1) * share < nc ? (t + 1) * share : nc;
                for (int64_t i = (int64_t)t * share; i < end; i++) {
                    const int64_t before = tests;
                    m += canopy_pair_expand(app, job, mine, cur[i], to + m, &tests);
                    split |= tests != before;
                }
                len[t] = m;
            }
        }
        cnt->tests += tests;
        int64_t total = 0;
        for (int t = 0; t < nt; t++) {
            memmove(next + total, next + (int64_t)t * share * most, sizeof *next * (size_t)len[t]);
            total += len[t];
        }
        canopy_free(cur);
        cur = next;
        next = NULL;
        nc = total;
    }
    for (int t = 0; !s && t < nt; t++)
        for (int64_t i = 0; i < nacc; i++) acc[i] += accs[(int64_t)t * nacc + i];
    canopy_free(accs);
    if (s) {
        canopy_free(cur);
        return s;
    }
    *out = cur;
    *n = nc;
    cnt->tasks += nc;
    return CANOPY_OK;
}

/* The host side (MinBlocks: the kernel's, above): upload both trees (one for a
 * symmetric walk), expand the frontier
 * with the descriptor's host copy (host_app, accounting into host_acc) into about
 * tasks_per_warp node pairs a warp, run the kernel on `d` (the device context, its
 * inputs uploaded by the caller into B), and count. rep gets the transfer, kernel and
 * (schedule_seconds) host frontier times. resident_a / resident_b: device copies of
 * ta / tb already made (a GPU build from device points), walked in place with no
 * upload; NULL: upload that tree. */
template <class App, int MinBlocks = 1>
static canopy_status canopy_pair_gpu_run(canopy_trav_buffers &B, typename App::Ctx d,
                                         const canopy_pair_app *host_app, const void *host_ctx,
                                         double *host_acc, int64_t nacc, const canopy_tree_view *ta,
                                         const canopy_tree_view *tb, int sym,
                                         canopy_pair_counters *cnt, canopy_gpu_report *rep,
                                         const canopy_tree_view *resident_a = nullptr,
                                         const canopy_tree_view *resident_b = nullptr,
                                         int tasks_per_warp = CANOPY_PAIR_GPU_TASKS_PER_WARP) {
    canopy_tree_view dta, dtb;
    double t0 = canopy_now();
    canopy_status s = CANOPY_OK;
    if (resident_a)
        dta = *resident_a;
    else
        s = canopy_gpu_upload_tree(B, ta, &dta);
    if (!s) {
        if (sym)
            dtb = dta;
        else if (resident_b)
            dtb = *resident_b;
        else
            s = canopy_gpu_upload_tree(B, tb, &dtb);
    }
    rep->tree_upload_bytes += (resident_a ? 0 : canopy_tree_view_bytes(ta)) +
                              (sym || resident_b ? 0 : canopy_tree_view_bytes(tb));
    rep->tree_upload_seconds += canopy_now() - t0;
    int dev = 0, sms = 0;
    if (!s) s = canopy_gpu_check(cudaGetDevice(&dev), "cudaGetDevice");
    if (!s)
        s = canopy_gpu_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                             "cudaDeviceGetAttribute");
    /* as many blocks as fit on the device at once: the warps hide each other's loads */
    size_t smem = App::shared_bytes(d);
    if (!s && smem > 48 * 1024)
        s = canopy_gpu_check(cudaFuncSetAttribute(canopy_pair_dr_kernel<App, MinBlocks>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)smem),
                             "pair kernel shared memory");
    int per_sm = 0;
    if (!s)
        s = canopy_gpu_check(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &per_sm, canopy_pair_dr_kernel<App, MinBlocks>, CANOPY_PAIR_GPU_BLOCK, smem),
            "pair kernel occupancy");
    const int warps_per_block = CANOPY_PAIR_GPU_BLOCK / 32;
    int blocks = (sms > 0 ? sms : 16) * (per_sm > 0 ? per_sm : 4);
    int64_t warps = (int64_t)blocks * warps_per_block;
    canopy_pair *tasks = NULL;
    int64_t nt = 0;
    canopy_pair_job job = {host_ctx, ta, tb, sym, 0};
    rep->transfer_seconds += canopy_now() - t0;
    t0 = canopy_now();
    if (!s)
        s = canopy_pair_frontier_par(host_app, &job, host_acc, nacc,
                                     warps * (tasks_per_warp > 0 ? tasks_per_warp : 1), &tasks, &nt,
                                     cnt);
    if (!s) s = canopy_pair_order_by_work(ta, tb, tasks, nt);
    rep->schedule_seconds += canopy_now() - t0;
    t0 = canopy_now();
    canopy_pair *d_tasks = NULL, *d_stacks = NULL;
    unsigned long long *d_cnt = NULL;
    int64_t cap = canopy_pair_stack_capacity(ta, tb);
    if (!s) s = B.upload(&d_tasks, tasks, nt, "pair tasks");
    canopy_free(tasks);
    if (!s) s = B.alloc(&d_stacks, warps * cap, "pair stacks");
    if (!s) s = B.alloc(&d_cnt, 3, "pair counters");
    if (!s) s = canopy_gpu_check(cudaMemset(d_cnt, 0, 3 * sizeof *d_cnt), "pair counters");
    rep->transfer_seconds += canopy_now() - t0;
    cudaEvent_t e0 = NULL, e1 = NULL;
    if (!s) s = canopy_gpu_check(cudaEventCreate(&e0), "event");
    if (!s) s = canopy_gpu_check(cudaEventCreate(&e1), "event");
    if (!s && nt > 0) {
        cudaEventRecord(e0);
        canopy_pair_dr_kernel<App, MinBlocks><<<blocks, CANOPY_PAIR_GPU_BLOCK, smem>>>(
            d, dta, dtb, sym, d_tasks, (unsigned long long)nt, d_stacks, cap, d_cnt + 2, d_cnt);
        cudaEventRecord(e1);
        s = canopy_gpu_check(cudaGetLastError(), "pair kernel launch");
        if (!s) s = canopy_gpu_check(cudaEventSynchronize(e1), "pair kernel");
        float ms = 0.0f;
        if (!s) cudaEventElapsedTime(&ms, e0, e1);
        rep->traverse_seconds += ms * 1e-3;
    }
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    unsigned long long h[3] = {0, 0, 0};
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(h, d_cnt, sizeof h, cudaMemcpyDeviceToHost), "counters");
    cnt->tests += (int64_t)h[0];
    cnt->leaf_pairs += (int64_t)h[1];
    return s;
}

#endif
