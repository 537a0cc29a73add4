/* rec on the GPU: one query per thread, plain device recursion (the baseline all
 * papers improve on). The per-thread call stack is sized from the tree depth by
 * the driver. */
#include "traverse/gpu_apps.cuh"

template <class App>
__device__ void rec_visit(const typename App::Ctx &ctx, typename App::State &st,
                          const canopy_tree_view &t, int32_t node, unsigned long long &nodes) {
    nodes++;
    if (App::truncate(ctx, st, t, node)) return;
    const canopy_node *h = canopy_tv_node(&t, node);
    if (h->child < 0) {
        App::visit_leaf(ctx, st, t, node);
        return;
    }
    bool reversed = App::guided && App::order(ctx, st, t, node);
    for (int32_t c = 0; c < h->nchild; c++)
        rec_visit<App>(ctx, st, t, h->child + (reversed ? h->nchild - 1 - c : c), nodes);
}

template <class App> __global__ void rec_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
    unsigned long long nodes = 0;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t trips = (L.nq + stride - 1) / stride;
    for (int64_t k = 0; k < trips; k++) {
        int64_t i = k * stride + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < L.nq) {
            typename App::State st;
            int64_t q = canopy_gpu_query(L, i);
            App::init(ctx, st, q);
            rec_visit<App>(ctx, st, L.tree, 0, nodes);
            App::finish(ctx, st, q);
        }
    }
    canopy_counter_add(L.counters, 0, nodes);
}

template <class App>
canopy_status canopy_gpu_launch_rec(const canopy_gpu_launch &L, const typename App::Ctx &ctx) {
    rec_kernel<App><<<canopy_gpu_blocks(L, L.nq, 8), CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);
    return canopy_gpu_check(cudaGetLastError(), "rec kernel launch");
}

#define X(APP) CANOPY_GPU_INSTANTIATE(rec, APP)
CANOPY_GPU_FOR_EACH_APP(X)
#undef X
