/* sr_l on the GPU (Wu ch. 4, Fig. 4.4c): lockstep over static ropes. The warp
 * walks the canonical order with ropes; a per-warp stack keeps one active mask per
 * sibling group still pending. The mask of a node's group is popped when the node
 * is the group's last child (its rope leaves the group), and a child group's mask
 * is pushed on descent. Unguided traversals only. */
#include "traverse/gpu_apps.cuh"

template <class App> __global__ void sr_l_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
    extern __shared__ unsigned sr_l_masks[];
    canopy_warp W(L.nq);
    const int lane = W.lane;
    unsigned *masks = sr_l_masks + (int64_t)W.slot * L.stack_cap;
    canopy_lockstep_counts counts;
    for (int64_t chunk = W.first_chunk; chunk < W.chunks; chunk += W.stride) {
        typename App::State st;
        int64_t q;
        bool valid = canopy_lane_start<App>(L, ctx, st, chunk, lane, &q);
        unsigned long long mine = 0, visited = 0;
        unsigned all = __ballot_sync(CANOPY_FULL_MASK, valid);
        if (lane == 0) masks[0] = all;
        int32_t sp = 1;
        int32_t node = 0;
        __syncwarp();
        while (node >= 0) {
            unsigned mask = masks[sp - 1];
            visited++;
            bool active = (mask >> lane) & 1u;
            bool cont = false;
            const canopy_node *h = canopy_tv_node(&L.tree, node);
            if (active) {
                mine++;
                cont = !App::truncate(ctx, st, L.tree, node);
                if (cont && h->child < 0) App::visit_leaf(ctx, st, L.tree, node);
            }
            unsigned m = __ballot_sync(CANOPY_FULL_MASK, cont);
            int32_t rope = L.tree.rope[node];
            if (rope != node + 1) sp--; /* last child of its group */
            if (m != 0 && h->child >= 0) {
                if (sp >= L.stack_cap) {
                    if (lane == 0) *L.error = 1;
                    break;
                }
                __syncwarp();
                if (lane == 0) masks[sp] = m;
                sp++;
                __syncwarp();
                node = h->child;
            } else {
                node = rope;
            }
        }
        if (valid) App::finish(ctx, st, q);
        counts.add_chunk(mine, visited, lane);
        __syncwarp();
    }
    counts.flush(L.counters);
}

template <class App>
canopy_status canopy_gpu_launch_sr_l(const canopy_gpu_launch &L, const typename App::Ctx &ctx) {
    return canopy_gpu_launch_lockstep(sr_l_kernel<App>, sizeof(unsigned), L, ctx,
                                      "sr_l kernel launch");
}

#define X(APP) CANOPY_GPU_INSTANTIATE(sr_l, APP)
CANOPY_GPU_FOR_EACH_APP(X)
#undef X
