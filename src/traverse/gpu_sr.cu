/* sr on the GPU (Wu ch. 4): static ropes make the walk stackless; unguided
 * traversals only (the driver refuses guided ones). */
#include "traverse/gpu_apps.cuh"

template <class App> __global__ void sr_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
    unsigned long long nodes = 0;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t trips = (L.nq + stride - 1) / stride;
    for (int64_t k = 0; k < trips; k++) {
        int64_t i = k * stride + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= L.nq) continue;
        typename App::State st;
        int64_t q = canopy_gpu_query(L, i);
        App::init(ctx, st, q);
        int32_t node = 0;
        while (node >= 0) {
            nodes++;
            const canopy_node *h = canopy_tv_node(&L.tree, node);
            if (App::truncate(ctx, st, L.tree, node)) {
                node = L.tree.rope[node];
            } else if (h->child < 0) {
                App::visit_leaf(ctx, st, L.tree, node);
                node = L.tree.rope[node];
            } else {
                node = h->child;
            }
        }
        App::finish(ctx, st, q);
    }
    canopy_counter_add(L.counters, 0, nodes);
}

template <class App>
canopy_status canopy_gpu_launch_sr(const canopy_gpu_launch &L, const typename App::Ctx &ctx) {
    sr_kernel<App><<<canopy_gpu_blocks(L, L.nq, 16), CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);
    return canopy_gpu_check(cudaGetLastError(), "sr kernel launch");
}

#define X(APP) CANOPY_GPU_INSTANTIATE(sr, APP)
CANOPY_GPU_FOR_EACH_APP(X)
#undef X
