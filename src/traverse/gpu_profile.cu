/* The hybrid schedule on the device (Liu ch. 3): a cheap kernel profiles every query
 * in the top tree into keys (profile.h), CUB's radix sort orders the queries by them
 * one key word at a time (least significant first, each pass stable), and the order
 * stays on the device for the traversal. Queries go in chunks whose keys fit
 * CANOPY_PROFILE_MAX_BYTES; each chunk is ordered on its own. */
#include "traverse/gpu_apps.cuh"
#include "traverse/profile.h"

#include <cub/device/device_radix_sort.cuh>

template <class App>
__global__ void profile_kernel(canopy_tree_view tree, typename App::Ctx ctx, canopy_profile_plan p,
                               int64_t q0, int64_t n, uint64_t *keys, unsigned long long *tests) {
    unsigned long long mine = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        typename App::State st;
        App::init(ctx, st, q0 + i);
        uint64_t *key = keys + i * p.words;
        for (int32_t w = 0; w < p.words; w++) key[w] = 0;
        int32_t stack[CANOPY_PROFILE_STACK];
        int32_t sp = 0, steps = 0;
        stack[sp++] = 0;
        while (sp > 0) {
            int32_t node = stack[--sp];
            mine++;
            if (App::truncate(ctx, st, tree, node)) continue;
            if (p.col[node] >= 0) {
                canopy_profile_record(&p, key, steps++, p.col[node]);
                continue;
            }
            const canopy_node *h = canopy_tv_node(&tree, node);
            bool reversed = App::guided && App::order(ctx, st, tree, node);
            for (int32_t c = 0; c < h->nchild; c++)
                stack[sp++] = reversed ? h->child + c : h->child + h->nchild - 1 - c;
        }
    }
    canopy_counter_add(tests, 0, mine);
}

__global__ void iota_kernel(int64_t *perm, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        perm[i] = i;
}

__global__ void gather_word_kernel(const uint64_t *keys, int32_t words, int32_t w,
                                   const int64_t *perm, int64_t n, uint64_t *out) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = keys[perm[i] * words + w];
}

__global__ void place_chunk_kernel(const int64_t *perm, int64_t q0, int64_t n, int64_t *order) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        order[q0 + i] = q0 + perm[i];
}

template <class App>
canopy_status canopy_gpu_profile_order(const canopy_gpu_launch &L, const typename App::Ctx &ctx,
                                       const canopy_profile_plan &plan, int64_t *order,
                                       int64_t *tests) {
    const int64_t nq = L.nq;
    const int64_t chunk = canopy_profile_chunk(plan.words);
    const int64_t cn = nq < chunk ? nq : chunk;
    canopy_gpu_buffers S;
    uint64_t *keys, *word_in, *word_out;
    int64_t *perm_in, *perm_out;
    unsigned long long *d_tests, h_tests = 0;
    size_t temp_bytes = 0;
    void *temp;
    canopy_status s;
    if ((s = S.alloc(&keys, cn * plan.words, "profile keys")) ||
        (s = S.alloc(&word_in, cn, "sort keys")) || (s = S.alloc(&word_out, cn, "sort keys")) ||
        (s = S.alloc(&perm_in, cn, "query order")) || (s = S.alloc(&perm_out, cn, "query order")) ||
        (s = S.alloc(&d_tests, 1, "profile counter")))
        return s;
    cudaError_t e = cudaMemsetAsync(d_tests, 0, sizeof *d_tests, L.stream);
    if (e == cudaSuccess)
        e = cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, word_in, word_out, perm_in, perm_out,
                                            cn, 0, 64, L.stream);
    if (e != cudaSuccess) return canopy_gpu_check(e, "hybrid schedule buffers");
    if ((s = S.alloc_bytes(&temp, temp_bytes, "radix sort scratch"))) return s;
    for (int64_t q0 = 0; q0 < nq; q0 += chunk) {
        int64_t n = nq - q0 < chunk ? nq - q0 : chunk;
        int blocks = canopy_gpu_blocks(L, n, 8);
        profile_kernel<App>
            <<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(L.tree, ctx, plan, q0, n, keys, d_tests);
        iota_kernel<<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(perm_in, n);
        for (int32_t w = plan.words - 1; w >= 0 && e == cudaSuccess; w--) {
            gather_word_kernel<<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(keys, plan.words, w,
                                                                          perm_in, n, word_in);
            e = cub::DeviceRadixSort::SortPairs(temp, temp_bytes, word_in, word_out, perm_in,
                                                perm_out, n, 0, 64, L.stream);
            int64_t *t = perm_in;
            perm_in = perm_out;
            perm_out = t;
        }
        place_chunk_kernel<<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(perm_in, q0, n, order);
        if (e == cudaSuccess) e = cudaGetLastError();
        if (e != cudaSuccess) return canopy_gpu_check(e, "hybrid schedule");
    }
    e = cudaMemcpyAsync(&h_tests, d_tests, sizeof h_tests, cudaMemcpyDeviceToHost, L.stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(L.stream);
    *tests = (int64_t)h_tests;
    return canopy_gpu_check(e, "hybrid schedule");
}

#define X(APP)                                                                                     \
    template canopy_status canopy_gpu_profile_order<APP>(                                          \
        const canopy_gpu_launch &, const typename APP::Ctx &, const canopy_profile_plan &,         \
        int64_t *, int64_t *);
CANOPY_GPU_FOR_EACH_APP(X)
#undef X
