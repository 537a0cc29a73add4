/* fsm_l on the GPU (Liu ch. 3, Fig. 3.10): lockstep with a warp-shared stack of
 * nodes only. Each lane keeps a flag (still traversing) and `critical`, the stack
 * depth right after popping the node where it truncated: its skipped subtree is
 * exactly what the warp pops while the depth stays >= critical, so the lane wakes
 * up when the depth first falls below it. The warp descends if any lane continues
 * (__any_sync); guided traversals take the majority order (__ballot_sync/__popc). */
#include "traverse/gpu_apps.cuh"

template <class App> __global__ void fsm_l_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
    extern __shared__ int32_t fsm_stacks[];
    int lane = threadIdx.x & 31, warp_in_block = threadIdx.x >> 5;
    int32_t *stack = fsm_stacks + (int64_t)warp_in_block * L.stack_cap;
    int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    int64_t warp = (int64_t)blockIdx.x * (blockDim.x >> 5) + warp_in_block;
    canopy_lockstep_counts counts;
    int64_t chunks = (L.nq + 31) / 32;
    for (int64_t chunk = warp; chunk < chunks; chunk += warps) {
        int64_t i = chunk * 32 + lane;
        bool valid = i < L.nq;
        typename App::State st;
        int64_t q = valid ? canopy_gpu_query(L, i) : 0;
        if (valid) App::init(ctx, st, q);
        bool traversing = valid;
        int32_t critical = 0; /* only read while !traversing */
        unsigned long long mine = 0, popped = 0;
        if (lane == 0) stack[0] = 0;
        int32_t sp = 1;
        __syncwarp();
        while (sp > 0) {
            int32_t node = stack[--sp];
            __syncwarp();
            popped++;
            if (valid && !traversing && sp < critical) traversing = true;
            bool cont = false;
            const canopy_node *h = canopy_tv_node(&L.tree, node);
            if (traversing) {
                mine++;
                cont = !App::truncate(ctx, st, L.tree, node);
                if (cont && h->child < 0) App::visit_leaf(ctx, st, L.tree, node);
                if (!cont) {
                    traversing = false;
                    critical = sp;
                }
            }
            if (!__any_sync(CANOPY_FULL_MASK, cont) || h->child < 0) continue;
            bool reversed = canopy_majority_reversed<App>(ctx, st, L.tree, node, cont);
            if (sp + h->nchild > L.stack_cap) {
                if (lane == 0) *L.error = 1;
                break;
            }
            if (lane == 0)
                for (int32_t c = 0; c < h->nchild; c++)
                    stack[sp + c] = reversed ? h->child + c : h->child + h->nchild - 1 - c;
            sp += h->nchild;
            __syncwarp();
        }
        if (valid) App::finish(ctx, st, q);
        counts.add_chunk(mine, popped, lane);
    }
    counts.flush(L.counters);
}

template <class App>
canopy_status canopy_gpu_launch_fsm_l(const canopy_gpu_launch &L, const typename App::Ctx &ctx) {
    return canopy_gpu_launch_lockstep(fsm_l_kernel<App>, sizeof(int32_t), L, ctx,
                                      "fsm_l kernel launch");
}

#define X(APP) CANOPY_GPU_INSTANTIATE(fsm_l, APP)
CANOPY_GPU_FOR_EACH_APP(X)
#undef X
