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
    int lane = threadIdx.x & 31, warp_in_block = threadIdx.x >> 5;
    dr_l_entry *stack = dr_l_stacks + (int64_t)warp_in_block * L.stack_cap;
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
            if (sp + h->nchild > L.stack_cap) {
                if (lane == 0) *L.error = 1;
                break;
            }
            if (lane == 0)
                for (int32_t c = 0; c < h->nchild; c++)
                    stack[sp + c] =
                        dr_l_entry{reversed ? h->child + c : h->child + h->nchild - 1 - c, m};
            sp += h->nchild;
            __syncwarp();
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
