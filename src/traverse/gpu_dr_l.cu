/* dr_l on the GPU (Goldfarb §4): lockstep. A warp walks the union of its 32
 * queries' traversals with one stack of (node, active mask) in shared memory;
 * a lane whose traversal truncates drops out of the mask, children are pushed only
 * if some lane survives. Guided traversals take the majority's child order, which
 * is only allowed when the orders are semantically equivalent. */
#include "traverse/gpu_apps.cuh"

struct dr_l_entry {
    int32_t node;
    unsigned mask;
};

template <class App> __global__ void dr_l_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
    extern __shared__ dr_l_entry dr_l_stacks[];
    canopy_warp W(L.nq);
    const int lane = W.lane;
    dr_l_entry *stack = dr_l_stacks + (int64_t)W.slot * L.stack_cap;
    canopy_lockstep_counts counts;
    for (int64_t chunk = W.first_chunk; chunk < W.chunks; chunk += W.stride) {
        typename App::State st;
        int64_t q;
        bool valid = canopy_lane_start<App>(L, ctx, st, chunk, lane, &q);
        unsigned long long mine = 0, popped = 0;
        int32_t sp = 0;
        if (lane == 0)
            stack[0] = dr_l_entry{0, __ballot_sync(CANOPY_FULL_MASK, valid)};
        else
            __ballot_sync(CANOPY_FULL_MASK, valid);
        sp = 1;
        __syncwarp();
        while (sp > 0) {
            dr_l_entry e = stack[--sp];
            __syncwarp(); /* every lane has read the entry before lane 0 overwrites it */
            popped++;
            bool active = (e.mask >> lane) & 1u;
            bool cont = false;
            const canopy_node *h = canopy_tv_node(&L.tree, e.node);
            if (active) {
                mine++;
                cont = !App::truncate(ctx, st, L.tree, e.node);
                if (cont && h->child < 0) App::visit_leaf(ctx, st, L.tree, e.node);
            }
            unsigned m = __ballot_sync(CANOPY_FULL_MASK, cont);
            if (m == 0 || h->child < 0) continue;
            bool reversed = canopy_majority_reversed<App>(ctx, st, L.tree, e.node, cont);
            if (!canopy_warp_push_children(stack, sp, h, reversed, L, lane, [m](int32_t c) {
                    return dr_l_entry{c, m};
                }))
                break;
        }
        if (valid) App::finish(ctx, st, q);
        counts.add_chunk(mine, popped, lane);
    }
    counts.flush(L.counters);
}

template <class App>
canopy_status canopy_gpu_launch_dr_l(const canopy_gpu_launch &L, const typename App::Ctx &ctx) {
    return canopy_gpu_launch_lockstep(dr_l_kernel<App>, sizeof(dr_l_entry), L, ctx,
                                      "dr_l kernel launch");
}

#define X(APP) CANOPY_GPU_INSTANTIATE(dr_l, APP)
CANOPY_GPU_FOR_EACH_APP(X)
#undef X
