/* dr on the GPU (Goldfarb §3, §5): autoropes with per-thread stacks in global
 * memory, interleaved so that entry s of adjacent threads is adjacent (coalesced
 * when neighbouring threads are at the same depth). */
#include "traverse/gpu_apps.cuh"

template <class App> __global__ void dr_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
    int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int32_t *stack = L.scratch + tid; /* entry s at stack[s * nthreads] */
    unsigned long long nodes = 0;
    int64_t trips = (L.nq + nthreads - 1) / nthreads;
    for (int64_t k = 0; k < trips; k++) {
        int64_t i = k * nthreads + tid;
        if (i >= L.nq) continue;
        typename App::State st;
        int64_t q = canopy_gpu_query(L, i);
        App::init(ctx, st, q);
        int32_t sp = 0;
        stack[0] = 0;
        sp = 1;
        while (sp > 0) {
            int32_t node = stack[(int64_t)(--sp) * nthreads];
            nodes++;
            if (App::truncate(ctx, st, L.tree, node)) continue;
            const canopy_node *h = canopy_tv_node(&L.tree, node);
            if (h->child < 0) {
                App::visit_leaf(ctx, st, L.tree, node);
                continue;
            }
            if (sp + h->nchild > L.stack_cap) {
                *L.error = 1;
                break;
            }
            bool reversed = App::guided && App::order(ctx, st, L.tree, node);
            for (int32_t c = 0; c < h->nchild; c++) {
                int32_t child = reversed ? h->child + c : h->child + h->nchild - 1 - c;
                stack[(int64_t)(sp++) * nthreads] = child;
            }
        }
        App::finish(ctx, st, q);
    }
    canopy_counter_add(L.counters, 0, nodes);
}

template <class App>
canopy_status canopy_gpu_launch_dr(const canopy_gpu_launch &L, const typename App::Ctx &ctx) {
    /* The driver sized L.scratch for exactly this grid (canopy_gpu_resident_threads). */
    int blocks = L.sms * 8;
    dr_kernel<App><<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);
    return canopy_gpu_check(cudaGetLastError(), "dr kernel launch");
}

#define X(APP) CANOPY_GPU_INSTANTIATE(dr, APP)
CANOPY_GPU_FOR_EACH_APP(X)
#undef X
