/* SPDX-License-Identifier: MIT */
/* canopy/pair_cuda.cuh — the GPU engine of pair walks (canopy/pair.h): dr on node
 * pairs, one warp per pair. The walk is first expanded breadth-first on the device,
 * one kernel a level (canopy_pair_level_kernel: the host frontier's rule, with the
 * descriptor's device test), into many pending pairs, ordered by a guess of their
 * work; warps take them from a
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

#include <cub/device/device_radix_sort.cuh>

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

/* One breadth-first level of the walk (canopy_pair_expand's rule): pair i of cur goes
 * to next as it is when both are leaves, else those of its children that the test
 * leaves to walk; with root set, cur holds the root pair, which is tested itself.
 * lvl[0] counts the pairs written, lvl[1] the tests. A warp takes one child number of
 * its lanes' pairs at a time and reserves the slots of those kept with one atomic. */
template <class App>
__global__ void __launch_bounds__(CANOPY_PAIR_GPU_BLOCK)
    canopy_pair_level_kernel(typename App::Ctx ctx, canopy_tree_view ta, canopy_tree_view tb,
                             int sym, const canopy_pair *cur, int64_t ncur, int root,
                             canopy_pair *next, unsigned long long *lvl) {
    extern __shared__ double canopy_pair_smem[];
    void *smem = canopy_pair_smem;
    App::block_begin(ctx, smem);
    __syncthreads();
    const int lane = threadIdx.x & 31;
    unsigned long long tests = 0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    /* whole warps go round the loop together (the ballots) */
    for (int64_t i0 = (int64_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31); i0 < ncur;
         i0 += stride) {
        const int64_t i = i0 + lane;
        canopy_pair p = canopy_pair_make(0, 0), q = p;
        const canopy_node *ha = NULL, *hb = NULL;
        int32_t k = 0;
        int leaves = 0;
        if (i < ncur) {
            p = cur[i];
            ha = canopy_tv_node(&ta, p.a);
            hb = canopy_tv_node(&tb, p.b);
            leaves = !root && ha->child < 0 && hb->child < 0;
            k = root || leaves ? 1 : canopy_pair_child(ha, hb, sym, p, -1, &q);
        }
        const int32_t kmax = (int32_t)__reduce_max_sync(CANOPY_FULL_MASK, (unsigned)k);
        for (int32_t c = 0; c < kmax; c++) {
            int keep = 0;
            if (c < k) {
                q = p;
                if (!root && !leaves) canopy_pair_child(ha, hb, sym, p, c, &q);
                if (!leaves) tests++;
                keep = leaves || App::test(ctx, smem, ta, q.a, tb, q.b, sym) == CANOPY_PAIR_DESCEND;
            }
            const unsigned m = __ballot_sync(CANOPY_FULL_MASK, keep);
            unsigned long long base = 0;
            if (lane == 0 && m) base = atomicAdd(lvl, (unsigned long long)__popc(m));
            base = __shfl_sync(CANOPY_FULL_MASK, base, 0);
            if (keep) next[base + __popc(m & ((1u << lane) - 1u))] = q;
        }
    }
    canopy_counter_add(lvl, 1, tests);
    __syncthreads();
    App::block_end(ctx, smem);
}

/* log2 of a kd node pair's work guess: the pairs it holds over the larger of the two
 * boxes' volumes (equal counts a level in a median-split tree, so the denser pair walks
 * more of its pairs at any one distance). Axes of zero extent count as 2^-30, empty
 * nodes as one point. */
__device__ static inline float canopy_pair_work_log2(const canopy_tree_view &ta, int32_t a,
                                                     const canopy_tree_view &tb, int32_t b) {
    const canopy_node *ha = canopy_tv_node(&ta, a), *hb = canopy_tv_node(&tb, b);
    const float *ga = canopy_tv_geom(&ta, a), *gb = canopy_tv_geom(&tb, b);
    float va = 0.0f, vb = 0.0f;
    for (int32_t j = 0; j < ta.d; j++) {
        va += log2f(fmaxf(ga[ta.d + j] - ga[j], 0x1p-30f));
        vb += log2f(fmaxf(gb[tb.d + j] - gb[j], 0x1p-30f));
    }
    return log2f(fmaxf((float)(ha->end - ha->begin), 1.0f)) +
           log2f(fmaxf((float)(hb->end - hb->begin), 1.0f)) - fmaxf(va, vb);
}

static __global__ void canopy_pair_work_kernel(canopy_tree_view ta, canopy_tree_view tb,
                                               const canopy_pair *tasks, int64_t n, float *work) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) work[i] = canopy_pair_work_log2(ta, tasks[i].a, tb, tasks[i].b);
}

/* The walk's first levels on the device (canopy_pair_level_kernel, one launch a level,
 * until at least `want` pairs are pending or none can be split), then, for kd trees,
 * the pending pairs ordered by canopy_pair_work_log2, most work first, so that the
 * warps taking them from a shared cursor meet the long ones first and none is left
 * alone with one at the end. *tasks (in B) holds the *n pairs to walk. The host reads
 * two counters a level: the walk's first levels hold few pairs, and a level's launch
 * needs the last one's count. */
template <class App>
static canopy_status canopy_pair_frontier_device(canopy_trav_buffers &B, const typename App::Ctx &d,
                                                 const canopy_tree_view &dta,
                                                 const canopy_tree_view &dtb, int sym, size_t smem,
                                                 int max_blocks, int64_t want, canopy_pair **tasks,
                                                 int64_t *n, canopy_pair_counters *cnt) {
    const int64_t f = dta.max_children > dtb.max_children ? dta.max_children : dtb.max_children;
    const int64_t most = f * (f + 1) / 2 > f ? f * (f + 1) / 2 : f; /* children of a pair */
    want = want > 1 ? want : 1;
    const int64_t cap = want * most + 1; /* a level starts below want pairs (or is the root) */
    canopy_pair *buf[2] = {NULL, NULL};
    unsigned long long *lvl = NULL;
    canopy_status s = B.alloc(&buf[0], 2 * cap, "pair frontier");
    if (!s) s = B.alloc(&lvl, 2, "pair frontier counters");
    if (s) return s;
    buf[1] = buf[0] + cap;
    const canopy_pair root = canopy_pair_make(0, 0);
    s = canopy_gpu_check(cudaMemcpy(buf[0], &root, sizeof root, cudaMemcpyHostToDevice),
                         "pair frontier");
    if (!s && smem > 48 * 1024)
        s = canopy_gpu_check(cudaFuncSetAttribute(canopy_pair_level_kernel<App>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)smem),
                             "pair level kernel shared memory");
    int64_t nc = 1;
    int cur = 0, first = 1;
    while (!s && nc > 0 && (first || nc < want)) {
        const int64_t need = (nc + CANOPY_PAIR_GPU_BLOCK - 1) / CANOPY_PAIR_GPU_BLOCK;
        const int grid = (int)(need < max_blocks ? need : max_blocks);
        unsigned long long h[2] = {0, 0};
        s = canopy_gpu_check(cudaMemsetAsync(lvl, 0, sizeof h), "pair frontier counters");
        if (s) break;
        canopy_pair_level_kernel<App><<<grid, CANOPY_PAIR_GPU_BLOCK, smem>>>(
            d, dta, dtb, sym, buf[cur], nc, first, buf[1 - cur], lvl);
        s = canopy_gpu_check(cudaGetLastError(), "pair level kernel launch");
        if (!s)
            s = canopy_gpu_check(cudaMemcpy(h, lvl, sizeof h, cudaMemcpyDeviceToHost),
                                 "pair level kernel");
        if (s) break;
        cnt->tests += (int64_t)h[1];
        nc = (int64_t)h[0];
        cur = 1 - cur;
        if (!first && h[1] == 0) break; /* leaf pairs only: nothing left to split */
        first = 0;
    }
    if (s) return s;
    cnt->tasks += nc;
    *n = nc;
    *tasks = buf[cur];
    if (nc < 2 || dta.kind != CANOPY_TREE_KD || dtb.kind != CANOPY_TREE_KD) return CANOPY_OK;
    float *work = NULL;
    void *temp = NULL;
    size_t temp_bytes = 0;
    s = B.alloc(&work, 2 * nc, "pair work guesses");
    if (!s)
        s = canopy_gpu_check(cub::DeviceRadixSort::SortPairsDescending(
                                 NULL, temp_bytes, work, work + nc, (unsigned long long *)buf[cur],
                                 (unsigned long long *)buf[1 - cur], nc),
                             "pair order");
    if (!s) s = B.alloc_bytes(&temp, temp_bytes, "pair order");
    if (s) return s;
    canopy_pair_work_kernel<<<(unsigned)((nc + 255) / 256), 256>>>(dta, dtb, buf[cur], nc, work);
    s = canopy_gpu_check(cub::DeviceRadixSort::SortPairsDescending(
                             temp, temp_bytes, work, work + nc, (unsigned long long *)buf[cur],
                             (unsigned long long *)buf[1 - cur], nc),
                         "pair order");
    if (!s) *tasks = buf[1 - cur];
    return s;
}

/* The host side (MinBlocks: the kernel's, above): upload both trees (one for a
 * symmetric walk), expand the walk on the device into about tasks_per_warp node pairs
 * a warp (canopy_pair_frontier_device), run the kernel on `d` (the device context,
 * its inputs uploaded by the caller into B), and count. rep gets the transfer, kernel
 * and (schedule_seconds) frontier times. resident_a / resident_b: device copies of
 * ta / tb already made (a GPU build from device points), walked in place with no
 * upload; NULL: upload that tree. */
template <class App, int MinBlocks = 1>
static canopy_status canopy_pair_gpu_run(canopy_trav_buffers &B, typename App::Ctx d,
                                         const canopy_tree_view *ta, const canopy_tree_view *tb,
                                         int sym, canopy_pair_counters *cnt, canopy_gpu_report *rep,
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
    rep->transfer_seconds += canopy_now() - t0;
    t0 = canopy_now();
    canopy_pair *d_tasks = NULL;
    int64_t nt = 0;
    if (!s)
        s = canopy_pair_frontier_device<App>(B, d, dta, dtb, sym, smem, blocks,
                                             warps * (tasks_per_warp > 0 ? tasks_per_warp : 1),
                                             &d_tasks, &nt, cnt);
    rep->schedule_seconds += canopy_now() - t0;
    t0 = canopy_now();
    canopy_pair *d_stacks = NULL;
    unsigned long long *d_cnt = NULL;
    int64_t cap = canopy_pair_stack_capacity(ta, tb);
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
