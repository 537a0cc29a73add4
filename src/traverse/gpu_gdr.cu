/* gdr on the GPU (Wu ch. 4): greedy autoropes. The query loop and the stack loop
 * are one loop; a thread takes the next query from a global counter as soon as its
 * stack empties, instead of waiting for the slowest lane of its warp. */
#include "traverse/gpu_apps.cuh"

template <class App> __global__ void gdr_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
    int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int32_t *stack = L.scratch + tid;
    unsigned long long nodes = 0;
    typename App::State st;
    int64_t i = (int64_t)atomicAdd(L.next, 1ull);
    int64_t q = 0;
    int32_t sp = 0;
    if (i < L.nq) {
        q = canopy_gpu_query(L, i);
        App::init(ctx, st, q);
        stack[0] = 0;
        sp = 1;
    }
    while (i < L.nq) {
        int32_t node = stack[(int64_t)(--sp) * nthreads];
        nodes++;
        if (!App::truncate(ctx, st, L.tree, node)) {
            const canopy_node *h = canopy_tv_node(&L.tree, node);
            if (h->child < 0) {
                App::visit_leaf(ctx, st, L.tree, node);
            } else if (sp + h->nchild > L.stack_cap) {
                *L.error = 1;
                sp = 0;
            } else {
                bool reversed = App::guided && App::order(ctx, st, L.tree, node);
                for (int32_t c = 0; c < h->nchild; c++) {
                    int32_t child = reversed ? h->child + c : h->child + h->nchild - 1 - c;
                    stack[(int64_t)(sp++) * nthreads] = child;
                }
            }
        }
        if (sp == 0) {
            App::finish(ctx, st, q);
            i = (int64_t)atomicAdd(L.next, 1ull);
            if (i < L.nq) {
                q = canopy_gpu_query(L, i);
                App::init(ctx, st, q);
                stack[0] = 0;
                sp = 1;
            }
        }
    }
    canopy_counter_add(L.counters, 0, nodes);
}

template <class App>
canopy_status canopy_gpu_launch_gdr(const canopy_gpu_launch &L, const typename App::Ctx &ctx) {
    gdr_kernel<App><<<L.sms * 8, CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);
    return canopy_gpu_check(cudaGetLastError(), "gdr kernel launch");
}

#define X(APP) CANOPY_GPU_INSTANTIATE(gdr, APP)
CANOPY_GPU_FOR_EACH_APP(X)
#undef X
