/* Flat GPU strategy balanced by entries, not rows (nodp-nnz): for an outer loop over
 * all rows (SpMV, PageRank, the colouring's counts) one kernel in which every warp
 * takes the same slice of NNZ_SLICE consecutive entries and every lane NNZ_LANE of
 * them, whatever the rows. A lane finds the row of its first entry by a binary search
 * of row_ptr within its warp's rows (found by a 32-way search of the warp), folds its
 * entries row by row and posts the rows that end inside it; a row cut between lanes
 * is combined by a segmented scan over shuffles, keyed by row; a row cut between
 * warps by a per-row partial and counter in global memory (the piece that completes
 * the row posts it and clears both, so they need zeroing once per run, not per
 * round). Every row, empty ones included, is posted exactly once: by the lane whose
 * entries (a, b] hold the row's end row_ptr[r + 1], the grid's first lane also
 * taking the rows that end at 0. A run of empty rows is posted by one lane.
 * Worklist loops (items given) run as nodp-split. */
#include "graph/gpu_graph_apps.cuh"

enum {
    NNZ_LANE = 8,
    NNZ_SLICE = 32 * NNZ_LANE,
    NNZ_WARPS = 8, /* per block */
    /* a lane's entries sit NNZ_LANE + 1 apart in shared memory: no bank conflicts */
    NNZ_PADDED = NNZ_SLICE + NNZ_SLICE / NNZ_LANE
};

__device__ __forceinline__ int nnz_padded(int p) {
    return p + p / NNZ_LANE;
}

/* The first row r in [lo, hi) whose end row_ptr[r + 1] is past pos, hi when none:
 * the warp's lanes probe 32 rows a step. All lanes must call with the same values. */
__device__ int64_t nnz_warp_search(const int64_t *rp, int64_t lo, int64_t hi, int64_t pos) {
    const int lane = threadIdx.x & 31;
    while (lo < hi) {
        const int64_t step = (hi - lo + 31) / 32, p = lo + lane * step;
        const int below = __popc(__ballot_sync(GPU_FULL_MASK, p < hi && __ldg(rp + p + 1) <= pos));
        if (!below) return lo;
        const int64_t q = lo + (below - 1) * step; /* the last probe that ends at or before pos */
        lo = q + 1;
        hi = q + step < hi ? q + step : hi;
    }
    return lo;
}

/* The same for one lane, by bisection. */
__device__ int64_t nnz_lane_search(const int64_t *rp, int64_t lo, int64_t hi, int64_t pos) {
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (__ldg(rp + mid + 1) <= pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One warp's part of a row [lo, hi) that spans several warps' slices: combined into
 * the row's partial; the last of the row's pieces to arrive runs the postwork. */
template <class App>
__device__ void nnz_piece(const gpu_graph_ctx &c, const gpu_chunks &part, int64_t row,
                          typename App::Acc a, int64_t lo, int64_t hi) {
    const unsigned pieces = (unsigned)((hi - 1) / NNZ_SLICE - lo / NNZ_SLICE + 1);
    App::atomic_combine(&part.acc[row], a);
    __threadfence();
    if (atomicAdd(&part.left[row], 1u) == pieces - 1) {
        __threadfence();
        part.left[row] = 0u;
        App::post(c, row, App::from_bits(atomicExch(&part.acc[row], 0ull)));
    }
}

template <class App>
__global__ void __launch_bounds__(NNZ_WARPS * 32)
    nnz_kernel(gpu_graph_ctx c, int64_t n, int64_t nnz, gpu_chunks part) {
    typedef typename App::Acc Acc;
    __shared__ int32_t s_col[NNZ_WARPS][NNZ_PADDED];
    __shared__ double s_val[NNZ_WARPS][NNZ_PADDED];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int64_t *rp = c.row_ptr;
    const int64_t ws = ((int64_t)blockIdx.x * NNZ_WARPS + w) * NNZ_SLICE;
    if (ws > 0 && ws >= nnz) return; /* the whole warp: past the entries */
    const int64_t we = ws + NNZ_SLICE < nnz ? ws + NNZ_SLICE : nnz;
    /* The slice's entries, loaded coalesced, to be read lane by lane. */
#pragma unroll
    for (int i = 0; i < NNZ_LANE; i++) {
        const int p = lane + 32 * i;
        if (ws + p < we) {
            s_col[w][nnz_padded(p)] = __ldg(c.col + ws + p);
            if (c.val) s_val[w][nnz_padded(p)] = __ldg(c.val + ws + p);
        }
    }
    /* Rows: lo_row holds entry ws, hi_row is the first to end past we (n at the end). */
    const int64_t lo_row = nnz_warp_search(rp, 0, n, ws);
    const int64_t hi_row = nnz_warp_search(rp, lo_row, n, we);
    const int64_t a = ws + lane * NNZ_LANE < we ? ws + lane * NNZ_LANE : we;
    const int64_t b = a + NNZ_LANE < we ? a + NNZ_LANE : we;
    const int cnt = (int)(b - a);
    const int64_t rs = nnz_lane_search(rp, lo_row, hi_row, a);
    const int64_t after = __shfl_down_sync(GPU_FULL_MASK, (long long)rs, 1);
    const int64_t r_next = lane == 31 ? hi_row : after; /* the first row ending past b */
    /* The row of each of the lane's entries, walking row_ptr from rs. */
    int64_t rows[NNZ_LANE];
    int64_t r = rs, e = cnt ? __ldg(rp + rs + 1) : 0;
    const int64_t head_end = e;
#pragma unroll
    for (int t = 0; t < NNZ_LANE; t++) {
        if (t < cnt)
            while (e <= a + t) e = __ldg(rp + ++r + 1);
        rows[t] = r;
    }
    /* edge() reads the entries from shared memory (k indexes col and val only). */
    gpu_graph_ctx cl = c;
    cl.col = s_col[w];
    cl.val = c.val ? s_val[w] : NULL;
    __syncwarp();
    Acc v[NNZ_LANE];
#pragma unroll
    for (int t = 0; t < NNZ_LANE; t++)
        v[t] = t < cnt
                   ? App::edge(cl, rows[t], App::pre(c, rows[t]), nnz_padded(lane * NNZ_LANE + t))
                   : App::zero();
    if constexpr (App::has_post) {
        /* Fold row by row. The first row's piece (head) waits for the scan: it may
         * continue a row begun in earlier lanes; the last row's piece (tail) is
         * open when the row goes on past b. */
        Acc acc = App::zero(), head = App::zero(), tail = App::zero();
        bool head_done = false;
        long long key = -1; /* the open row, -1: none */
        int64_t cur = lane == 0 && ws == 0 ? 0 : rs;
        const int64_t first = cnt ? rows[0] : r_next;
        for (; cur < first; cur++) App::post(c, cur, App::zero()); /* empty rows */
#pragma unroll
        for (int t = 0; t < NNZ_LANE; t++) {
            if (t < cnt) {
                if (rows[t] != cur) { /* row cur ended at entry a + t */
                    if (cur == first) {
                        head = acc;
                        head_done = true;
                    } else {
                        App::post(c, cur, acc);
                    }
                    for (int64_t q = cur + 1; q < rows[t]; q++) App::post(c, q, App::zero());
                    cur = rows[t];
                    acc = App::zero();
                }
                acc = App::combine(acc, v[t]);
            }
        }
        if (cnt && e <= b) { /* the last row ends here too */
            if (cur == first) {
                head = acc;
                head_done = true;
            } else {
                App::post(c, cur, acc);
            }
            for (int64_t q = cur + 1; q < r_next; q++) App::post(c, q, App::zero());
        } else if (cnt) {
            key = cur;
            tail = acc;
        }
        /* Segmented inclusive scan of the open pieces: a row's lanes are contiguous
         * and keys never decrease, so equal keys d lanes apart bound one segment. */
        Acc s = tail;
        for (int d = 1; d < 32; d <<= 1) {
            const Acc y = __shfl_up_sync(GPU_FULL_MASK, s, d);
            const long long ky = __shfl_up_sync(GPU_FULL_MASK, key, d);
            if (lane >= d && ky == key) s = App::combine(y, s);
        }
        const Acc s_prev = __shfl_up_sync(GPU_FULL_MASK, s, 1);
        const long long key_prev = __shfl_up_sync(GPU_FULL_MASK, key, 1);
        if (head_done) {
            const Acc total = lane > 0 && key_prev == first ? App::combine(s_prev, head) : head;
            /* Only the warp's first row can have begun in an earlier warp. */
            const int64_t lo = first == lo_row && ws > 0 ? __ldg(rp + lo_row) : ws;
            if (lo < ws)
                nnz_piece<App>(c, part, first, total, lo, head_end);
            else
                App::post(c, first, total);
        }
        if (lane == 31 && key >= 0) nnz_piece<App>(c, part, key, s, __ldg(rp + key), e);
    }
}

template <class App> static cudaError_t run_app(const gpu_launch *L) {
    const int64_t n = L->items.n, nnz = L->nnz;
    if (!n) return cudaSuccess;
    const int64_t warps = nnz ? (nnz + NNZ_SLICE - 1) / NNZ_SLICE : 1;
    nnz_kernel<App>
        <<<(unsigned)((warps + NNZ_WARPS - 1) / NNZ_WARPS), NNZ_WARPS * 32, 0, L->stream>>>(
            L->ctx, n, nnz, L->dp.ch);
    return cudaGetLastError();
}

cudaError_t gpu_graph_nodp_nnz(const gpu_launch *L) {
    if (L->items.items) return gpu_graph_nodp_split(L);
    GPU_GRAPH_DISPATCH();
}
