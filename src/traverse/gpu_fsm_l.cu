/* fsm_l on the GPU (Liu ch. 3, Fig. 3.10): lockstep with a warp-shared stack of
 * nodes only. Each lane keeps a flag (still traversing) and `critical`, the stack
 * depth right after popping the node where it truncated: its skipped subtree is
 * exactly what the warp pops while the depth stays >= critical, so the lane wakes
 * up when the depth first falls below it. The warp descends if any lane continues
 * (__any_sync); guided traversals take the majority order (__ballot_sync/__popc). */
#include "traverse/gpu_apps.cuh"

template <class App> __global__ void fsm_l_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
    extern __shared__ int32_t fsm_stacks[];
    canopy_warp W(L.nq);
    const int lane = W.lane;
    int32_t *stack = fsm_stacks + (int64_t)W.slot * L.stack_cap;
    canopy_lockstep_counts counts;
    for (int64_t chunk = W.first_chunk; chunk < W.chunks; chunk += W.stride) {
        typename App::State st;
        int64_t q;
        bool valid = canopy_lane_start<App>(L, ctx, st, chunk, lane, &q);
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
            if (!canopy_warp_push_children(stack, sp, h, reversed, L, lane,
                                           [](int32_t c) { return c; }))
                break;
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
