/* SPDX-License-Identifier: MIT */
/* canopy/traverse_cuda.cuh — the GPU engines, header-only, for descriptors written
 * against canopy/traverse.h (docs/c-api.md, "Write your own traversal"). A .cu file
 * turns a descriptor into a type with
 *
 *     CANOPY_GPU_APP_GUIDED(name, name_ctx, name_state, equivalent)   or
 *     CANOPY_GPU_APP_UNGUIDED(name, name_ctx, name_state)
 *
 * (the functions name_init, name_truncate, name_visit_leaf, name_finish and, guided,
 * name_order must be CANOPY_HD; on the GPU name_order returns 1 for "children
 * reversed", 0 for canonical order: the GPU engines take two-way orders) and writes
 * its canopy_gpu_runner with canopy_gpu_run_app<name_gpu>(...): upload the tree
 * (or use rep->device_tree, a resident index's device copy),
 * let a setup callback upload the context's inputs and register its outputs, run
 * the variant (every GPU variant and the device-side hybrid schedule are
 * instantiated for the type by that one call), copy the outputs back. A type
 * written by hand may declare `static constexpr int min_blocks` (launch bounds of
 * dr and gdr, canopy_gpu_min_blocks) and an `own_kernel` (canopy_gpu_has_own_kernel).
 * canopy_gpu_run_pooled runs with scratch the caller keeps between calls.
 * tests/gpu/test_gpu_external.cu is a complete example. */
#ifndef CANOPY_TRAVERSE_CUDA_CUH
#define CANOPY_TRAVERSE_CUDA_CUH

#include "canopy/cuda_util.cuh"
#include "canopy/traverse.h"

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pieces every GPU engine shares: the adapter that turns a C descriptor into a
 * template argument, the launch description, warp-level votes and counters. */

#define CANOPY_FULL_MASK 0xffffffffu

/* A descriptor as a type: engines are templates over it, so every (engine,
 * application) pair is compiled with the descriptor inlined. */
#define CANOPY_GPU_APP_COMMON(NAME, CTX, STATE, GUIDED, EQUIV)                                     \
    typedef CTX Ctx;                                                                               \
    typedef STATE State;                                                                           \
    static constexpr bool guided = GUIDED;                                                         \
    static constexpr bool equivalent = EQUIV;                                                      \
    __device__ static void init(const Ctx &c, State &s, int64_t q) {                               \
        NAME##_init(&c, &s, q);                                                                    \
    }                                                                                              \
    __device__ static int truncate(const Ctx &c, State &s, const canopy_tree_view &t, int32_t n) { \
        return NAME##_truncate(&c, &s, &t, n);                                                     \
    }                                                                                              \
    __device__ static void visit_leaf(const Ctx &c, State &s, const canopy_tree_view &t,           \
                                      int32_t n) {                                                 \
        NAME##_visit_leaf(&c, &s, &t, n);                                                          \
    }                                                                                              \
    __device__ static void finish(const Ctx &c, State &s, int64_t q) {                             \
        NAME##_finish(&c, &s, q);                                                                  \
    }

#define CANOPY_GPU_APP_GUIDED(NAME, CTX, STATE, EQUIV)                                             \
    struct NAME##_gpu {                                                                            \
        CANOPY_GPU_APP_COMMON(NAME, CTX, STATE, true, EQUIV)                                       \
        __device__ static int order(const Ctx &c, const State &s, const canopy_tree_view &t,       \
                                    int32_t n) {                                                   \
            return NAME##_order(&c, &s, &t, n);                                                    \
        }                                                                                          \
    };

#define CANOPY_GPU_APP_UNGUIDED(NAME, CTX, STATE)                                                  \
    struct NAME##_gpu {                                                                            \
        CANOPY_GPU_APP_COMMON(NAME, CTX, STATE, false, true)                                       \
        __device__ static int order(const Ctx &, const State &, const canopy_tree_view &,          \
                                    int32_t) {                                                     \
            return 0;                                                                              \
        }                                                                                          \
    };

/* Everything a launch needs besides the application's context. */
struct canopy_gpu_launch {
    canopy_tree_view tree; /* device pointers */
    const int64_t *order;  /* device; NULL = identity */
    int64_t nq;
    int32_t stack_cap;            /* entries per stack (exact worst case for the tree) */
    unsigned long long *counters; /* device: nodes, group_nodes, group_longest, groups */
    int *error;                   /* device flag: 1 = stack overflow */
    int32_t *scratch;             /* device: per-thread stacks (dr, gdr) or NULL */
    unsigned long long *next;     /* device: gdr's query counter */
    int sms;
    cudaStream_t stream;
    /* device, with a kd bucket order (canopy_gpu_kd_bucket_order): the bucket node of
     * the query at each position of `order`, or NULL. A kernel may start a query's walk
     * by scanning its bucket, and must then not visit the bucket again. */
    const int32_t *bucket;
};

__device__ __forceinline__ int64_t canopy_gpu_query(const canopy_gpu_launch &L, int64_t i) {
    return L.order ? L.order[i] : i;
}

/* Adds a thread's count to counter slot `slot`, once per thread at kernel end. A warp
 * shuffle sum would need every lane converged there, which recursion (rec) does not
 * guarantee in practice; one atomic per thread costs nothing next to a traversal. */
__device__ __forceinline__ void canopy_counter_add(unsigned long long *counters, int slot,
                                                   unsigned long long v) {
    if (v) atomicAdd(counters + slot, v);
}

/* Guided lockstep: the order a majority of the continuing lanes votes for. */
template <class App>
__device__ __forceinline__ bool
canopy_majority_reversed(const typename App::Ctx &ctx, const typename App::State &st,
                         const canopy_tree_view &t, int32_t node, bool continuing) {
    if (!App::guided) return false;
    int want = continuing && App::order(ctx, st, t, node);
    unsigned yes = __ballot_sync(CANOPY_FULL_MASK, want);
    unsigned all = __ballot_sync(CANOPY_FULL_MASK, continuing);
    return 2 * __popc(yes) > __popc(all);
}

enum { CANOPY_GPU_BLOCK = 128 };

/* Blocks of CANOPY_GPU_BLOCK threads per SM that dr and gdr ask the compiler to fit
 * (__launch_bounds__) for a descriptor type that declares `min_blocks` (its state
 * known to fit the registers that leaves, e.g. kNN's register lists); 0, no bound,
 * for the others. The grids of dr and gdr are 8 blocks per SM: at 8 they are all
 * resident at once. */
template <class App, class = void> struct canopy_gpu_min_blocks { static constexpr int value = 0; };
template <class App> struct canopy_gpu_min_blocks<App, decltype((void)App::min_blocks)> {
    static constexpr int value = App::min_blocks;
};

/* A descriptor type may bring its own kernel for some variants and trees (one
 * specialised to a tree kind and dimension, say), declaring
 *     static canopy_status own_kernel(canopy_variant v, const canopy_gpu_launch &L,
 *                                     const Ctx &ctx, bool *taken);
 * the engines offer it every launch first and run their own kernel where it declines
 * (*taken false). It launches on L.stream and counts into L.counters like theirs. */
template <class App, class = void> struct canopy_gpu_has_own_kernel {
    static constexpr bool value = false;
};
template <class App> struct canopy_gpu_has_own_kernel<App, decltype((void)&App::own_kernel)> {
    static constexpr bool value = true;
};

/* A kernel NAME running BODY<App>(L, ctx), its twin NAME##_bounded with App's launch
 * bounds, and NAME##_launch(blocks, L, ctx) starting the one App calls for. */
#define CANOPY_GPU_STACK_KERNELS(NAME, BODY)                                                       \
    template <class App> __global__ void NAME(canopy_gpu_launch L, typename App::Ctx ctx) {        \
        BODY<App>(L, ctx);                                                                         \
    }                                                                                              \
    template <class App>                                                                           \
    __global__ void __launch_bounds__(CANOPY_GPU_BLOCK, canopy_gpu_min_blocks<App>::value)         \
        NAME##_bounded(canopy_gpu_launch L, typename App::Ctx ctx) {                               \
        BODY<App>(L, ctx);                                                                         \
    }                                                                                              \
    template <class App>                                                                           \
    void NAME##_launch(int blocks, const canopy_gpu_launch &L, const typename App::Ctx &ctx) {     \
        if constexpr (canopy_gpu_min_blocks<App>::value > 0)                                       \
            NAME##_bounded<App><<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);                \
        else                                                                                       \
            NAME<App><<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);                          \
    }
/* Blocks for a grid-stride kernel: enough to fill every SM, no more than needed. */
inline int canopy_gpu_blocks(const canopy_gpu_launch &L, int64_t work_items, int per_sm) {
    int64_t need = (work_items + CANOPY_GPU_BLOCK - 1) / CANOPY_GPU_BLOCK;
    int64_t full = (int64_t)L.sms * per_sm;
    int64_t b = need < full ? need : full;
    return b > 0 ? (int)b : 1;
}

/* A lockstep kernel's view of its warp: the lane, the warp's slot in its block (which
 * shared-memory stack it owns) and the warp-sized chunks of queries the grid strides
 * over (queries are padded to whole warps). */
struct canopy_warp {
    int lane, slot;
    int64_t first_chunk, stride, chunks;
    __device__ explicit canopy_warp(int64_t nq)
        : lane(threadIdx.x & 31), slot(threadIdx.x >> 5),
          first_chunk((int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)),
          stride((int64_t)gridDim.x * (blockDim.x >> 5)), chunks((nq + 31) / 32) {}
};

/* Starts a lane of warp chunk `chunk` on its query: false for padding lanes; else
 * *q is the caller's query index and the state is initialised. */
template <class App>
__device__ bool canopy_lane_start(const canopy_gpu_launch &L, const typename App::Ctx &ctx,
                                  typename App::State &st, int64_t chunk, int lane, int64_t *q) {
    int64_t i = chunk * 32 + lane;
    *q = 0;
    if (i >= L.nq) return false;
    *q = canopy_gpu_query(L, i);
    App::init(ctx, st, *q);
    return true;
}

/* Lane 0 pushes a node's children onto the warp's shared stack, in reverse of the
 * chosen order so they pop in it; make(child) builds an entry. False, with the error
 * flag set for the host, when the stack would overflow. */
template <class Entry, class Make>
__device__ bool canopy_warp_push_children(Entry *stack, int32_t &sp, const canopy_node *h,
                                          bool reversed, const canopy_gpu_launch &L, int lane,
                                          Make make) {
    if (sp + h->nchild > L.stack_cap) {
        if (lane == 0) *L.error = 1;
        return false;
    }
    if (lane == 0)
        for (int32_t c = 0; c < h->nchild; c++)
            stack[sp + c] = make(reversed ? h->child + c : h->child + h->nchild - 1 - c);
    sp += h->nchild;
    __syncwarp();
    return true;
}

/* Counters of a lockstep kernel: per-lane tests, and per warp the nodes it popped
 * and its longest member traversal (work expansion = group_nodes / group_longest). */
struct canopy_lockstep_counts {
    unsigned long long nodes = 0, group_nodes = 0, group_longest = 0, groups = 0;
    /* After one warp chunk: `mine` = this lane's tests, `popped` = the warp's nodes. */
    __device__ void add_chunk(unsigned long long mine, unsigned long long popped, int lane) {
        nodes += mine;
        unsigned longest = __reduce_max_sync(CANOPY_FULL_MASK, (unsigned)mine);
        if (lane == 0) {
            group_nodes += popped;
            group_longest += longest;
            groups++;
        }
    }
    __device__ void flush(unsigned long long *counters) const {
        canopy_counter_add(counters, 0, nodes);
        canopy_counter_add(counters, 1, group_nodes);
        canopy_counter_add(counters, 2, group_longest);
        canopy_counter_add(counters, 3, groups);
    }
};

/* Launches a lockstep kernel whose per-warp stack holds stack_cap entries of
 * entry_bytes in dynamic shared memory. */
template <class Kernel, class Ctx>
canopy_status canopy_gpu_launch_lockstep(Kernel kernel, size_t entry_bytes,
                                         const canopy_gpu_launch &L, const Ctx &ctx,
                                         const char *name) {
    size_t shmem = (size_t)(CANOPY_GPU_BLOCK / 32) * (size_t)L.stack_cap * entry_bytes;
    cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
    if (e != cudaSuccess) return canopy_gpu_check(e, name);
    kernel<<<canopy_gpu_blocks(L, L.nq, 16), CANOPY_GPU_BLOCK, shmem, L.stream>>>(L, ctx);
    return canopy_gpu_check(cudaGetLastError(), name);
}

/* ------------------------------------------------------------ rec -- */
/* rec on the GPU: one query per thread, plain device recursion (the baseline all
 * papers improve on). The per-thread call stack is sized from the tree depth by
 * the driver. */

template <class App>
__device__ void canopy_rec_visit_gpu(const typename App::Ctx &ctx, typename App::State &st,
                                     const canopy_tree_view &t, int32_t node,
                                     unsigned long long &nodes) {
    nodes++;
    if (App::truncate(ctx, st, t, node)) return;
    const canopy_node *h = canopy_tv_node(&t, node);
    if (h->child < 0) {
        App::visit_leaf(ctx, st, t, node);
        return;
    }
    bool reversed = App::guided && App::order(ctx, st, t, node);
    for (int32_t c = 0; c < h->nchild; c++)
        canopy_rec_visit_gpu<App>(ctx, st, t, h->child + (reversed ? h->nchild - 1 - c : c), nodes);
}

template <class App> __global__ void canopy_rec_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
    unsigned long long nodes = 0;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t trips = (L.nq + stride - 1) / stride;
    for (int64_t k = 0; k < trips; k++) {
        int64_t i = k * stride + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < L.nq) {
            typename App::State st;
            int64_t q = canopy_gpu_query(L, i);
            App::init(ctx, st, q);
            canopy_rec_visit_gpu<App>(ctx, st, L.tree, 0, nodes);
            App::finish(ctx, st, q);
        }
    }
    canopy_counter_add(L.counters, 0, nodes);
}

template <class App>
canopy_status canopy_gpu_launch_rec(const canopy_gpu_launch &L, const typename App::Ctx &ctx) {
    canopy_rec_kernel<App>
        <<<canopy_gpu_blocks(L, L.nq, 8), CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);
    return canopy_gpu_check(cudaGetLastError(), "rec kernel launch");
}

/* ------------------------------------------------------------ dr -- */
/* dr on the GPU (Goldfarb §3, §5): autoropes with per-thread stacks in global
 * memory, interleaved so that entry s of adjacent threads is adjacent (coalesced
 * when neighbouring threads are at the same depth). */

/* One step of a depth-first walk with an explicit stack (dr, gdr): tests `node`
 * and, if the walk goes on below it, makes its first child in App's order the next
 * node and pushes the others (in reverse, so they pop in order): the first child
 * never makes the round trip through the stack. False when the walk must continue
 * from the stack (node truncated or a leaf) or the stack would overflow (error set). */
template <class App>
__device__ __forceinline__ bool canopy_gpu_descend(const canopy_gpu_launch &L,
                                                   const typename App::Ctx &ctx,
                                                   typename App::State &st, int32_t &node,
                                                   int32_t *stack, int64_t step, int32_t &sp) {
    if (App::truncate(ctx, st, L.tree, node)) return false;
    const canopy_node *h = canopy_tv_node(&L.tree, node);
    if (h->child < 0) {
        App::visit_leaf(ctx, st, L.tree, node);
        return false;
    }
    const int32_t first = h->child, nchild = h->nchild;
    if (sp + nchild - 1 > L.stack_cap) {
        *L.error = 1;
        sp = 0;
        return false;
    }
    bool reversed = App::guided && App::order(ctx, st, L.tree, node);
    for (int32_t c = 0; c < nchild - 1; c++)
        stack[(int64_t)(sp++) * step] = reversed ? first + c : first + nchild - 1 - c;
    node = reversed ? first + nchild - 1 : first;
    return true;
}

template <class App>
__device__ __forceinline__ void canopy_dr_body(const canopy_gpu_launch &L,
                                               const typename App::Ctx &ctx) {
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
        int32_t sp = 0, node = 0;
        for (;;) {
            nodes++;
            if (canopy_gpu_descend<App>(L, ctx, st, node, stack, nthreads, sp)) continue;
            if (sp == 0) break;
            node = stack[(int64_t)(--sp) * nthreads];
        }
        App::finish(ctx, st, q);
    }
    canopy_counter_add(L.counters, 0, nodes);
}

CANOPY_GPU_STACK_KERNELS(canopy_dr_kernel, canopy_dr_body)

template <class App>
canopy_status canopy_gpu_launch_dr(const canopy_gpu_launch &L, const typename App::Ctx &ctx) {
    /* The driver sized L.scratch for exactly this grid (canopy_gpu_resident_threads). */
    canopy_dr_kernel_launch<App>(L.sms * 8, L, ctx);
    return canopy_gpu_check(cudaGetLastError(), "dr kernel launch");
}

/* ------------------------------------------------------------ sr -- */
/* sr on the GPU (Wu ch. 4): static ropes make the walk stackless; unguided
 * traversals only (the driver refuses guided ones). */

template <class App> __global__ void canopy_sr_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
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
    canopy_sr_kernel<App>
        <<<canopy_gpu_blocks(L, L.nq, 16), CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);
    return canopy_gpu_check(cudaGetLastError(), "sr kernel launch");
}

/* ------------------------------------------------------------ gdr -- */
/* gdr on the GPU (Wu ch. 4): greedy autoropes. The query loop and the stack loop
 * are one loop; a thread takes the next query as soon as its walk ends, instead of
 * waiting for the slowest lane of its warp. The first query of a thread is its
 * thread index; later ones come from a global counter, one atomic per group of lanes
 * that finish together (query order, e.g. a device sort, stays close within a warp). */

template <class App>
__device__ __forceinline__ void canopy_gdr_body(const canopy_gpu_launch &L,
                                                const typename App::Ctx &ctx) {
    int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int32_t *stack = L.scratch + tid;
    unsigned long long nodes = 0;
    typename App::State st;
    int64_t i = tid;
    int64_t q = 0;
    int32_t sp = 0, node = 0;
    if (i < L.nq) {
        q = canopy_gpu_query(L, i);
        App::init(ctx, st, q);
    }
    while (i < L.nq) {
        nodes++;
        if (canopy_gpu_descend<App>(L, ctx, st, node, stack, nthreads, sp)) continue;
        if (sp > 0) {
            node = stack[(int64_t)(--sp) * nthreads];
            continue;
        }
        App::finish(ctx, st, q);
        /* the lanes here now share one atomic: the first of them adds their count */
        unsigned group = __activemask();
        int lane = threadIdx.x & 31, leader = __ffs(group) - 1;
        unsigned long long base = 0;
        if (lane == leader) base = atomicAdd(L.next, (unsigned long long)__popc(group));
        base = __shfl_sync(group, base, leader);
        i = nthreads + (int64_t)base + __popc(group & ((1u << lane) - 1u));
        node = 0;
        if (i < L.nq) {
            q = canopy_gpu_query(L, i);
            App::init(ctx, st, q);
        }
    }
    canopy_counter_add(L.counters, 0, nodes);
}

CANOPY_GPU_STACK_KERNELS(canopy_gdr_kernel, canopy_gdr_body)

template <class App>
canopy_status canopy_gpu_launch_gdr(const canopy_gpu_launch &L, const typename App::Ctx &ctx) {
    canopy_gdr_kernel_launch<App>(L.sms * 8, L, ctx);
    return canopy_gpu_check(cudaGetLastError(), "gdr kernel launch");
}

/* ------------------------------------------------------------ dr_l -- */
/* dr_l on the GPU (Goldfarb §4): lockstep. A warp walks the union of its 32
 * queries' traversals with one stack of (node, active mask) in shared memory;
 * a lane whose traversal truncates drops out of the mask, children are pushed only
 * if some lane survives. Guided traversals take the majority's child order, which
 * is only allowed when the orders are semantically equivalent. */

struct canopy_dr_l_entry {
    int32_t node;
    unsigned mask;
};

template <class App>
__global__ void canopy_dr_l_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
    extern __shared__ canopy_dr_l_entry dr_l_stacks[];
    canopy_warp W(L.nq);
    const int lane = W.lane;
    canopy_dr_l_entry *stack = dr_l_stacks + (int64_t)W.slot * L.stack_cap;
    canopy_lockstep_counts counts;
    for (int64_t chunk = W.first_chunk; chunk < W.chunks; chunk += W.stride) {
        typename App::State st;
        int64_t q;
        bool valid = canopy_lane_start<App>(L, ctx, st, chunk, lane, &q);
        unsigned long long mine = 0, popped = 0;
        int32_t sp = 0;
        if (lane == 0)
            stack[0] = canopy_dr_l_entry{0, __ballot_sync(CANOPY_FULL_MASK, valid)};
        else
            __ballot_sync(CANOPY_FULL_MASK, valid);
        sp = 1;
        __syncwarp();
        while (sp > 0) {
            canopy_dr_l_entry e = stack[--sp];
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
                    return canopy_dr_l_entry{c, m};
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
    return canopy_gpu_launch_lockstep(canopy_dr_l_kernel<App>, sizeof(canopy_dr_l_entry), L, ctx,
                                      "dr_l kernel launch");
}

/* ------------------------------------------------------------ sr_l -- */
/* sr_l on the GPU (Wu ch. 4, Fig. 4.4c): lockstep over static ropes. The warp
 * walks the canonical order with ropes; a per-warp stack keeps one active mask per
 * sibling group still pending. The mask of a node's group is popped when the node
 * is the group's last child (its rope leaves the group), and a child group's mask
 * is pushed on descent. Unguided traversals only. */

template <class App>
__global__ void canopy_sr_l_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
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
    return canopy_gpu_launch_lockstep(canopy_sr_l_kernel<App>, sizeof(unsigned), L, ctx,
                                      "sr_l kernel launch");
}

/* ------------------------------------------------------------ fsm_l -- */
/* fsm_l on the GPU (Liu ch. 3, Fig. 3.10): lockstep with a warp-shared stack of
 * nodes only. Each lane keeps a flag (still traversing) and `critical`, the stack
 * depth right after popping the node where it truncated: its skipped subtree is
 * exactly what the warp pops while the depth stays >= critical, so the lane wakes
 * up when the depth first falls below it. The warp descends if any lane continues
 * (__any_sync); guided traversals take the majority order (__ballot_sync/__popc). */

template <class App>
__global__ void canopy_fsm_l_kernel(canopy_gpu_launch L, typename App::Ctx ctx) {
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
    return canopy_gpu_launch_lockstep(canopy_fsm_l_kernel<App>, sizeof(int32_t), L, ctx,
                                      "fsm_l kernel launch");
}

/* ------------------------------------------------------------ profile -- */
/* The hybrid schedule on the device (Liu ch. 3): a cheap kernel profiles every query
 * in the top tree into keys (canopy_profile_record), CUB's radix sort orders the queries by them
 * one key word at a time (least significant first, each pass stable), and the order
 * stays on the device for the traversal. Queries go in chunks whose keys fit
 * CANOPY_PROFILE_MAX_BYTES; each chunk is ordered on its own. */

template <class App>
__global__ void canopy_profile_kernel(canopy_tree_view tree, typename App::Ctx ctx,
                                      canopy_profile_plan p, int64_t q0, int64_t n, uint64_t *keys,
                                      unsigned long long *tests) {
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

static __global__ void canopy_iota_kernel(int64_t *perm, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        perm[i] = i;
}

static __global__ void canopy_gather_word_kernel(const uint64_t *keys, int32_t words, int32_t w,
                                                 const int64_t *perm, int64_t n, uint64_t *out) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = keys[perm[i] * words + w];
}

static __global__ void canopy_place_chunk_kernel(const int64_t *perm, int64_t q0, int64_t n,
                                                 int64_t *order) {
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
        canopy_profile_kernel<App>
            <<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(L.tree, ctx, plan, q0, n, keys, d_tests);
        canopy_iota_kernel<<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(perm_in, n);
        for (int32_t w = plan.words - 1; w >= 0 && e == cudaSuccess; w--) {
            canopy_gather_word_kernel<<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(
                keys, plan.words, w, perm_in, n, word_in);
            e = cub::DeviceRadixSort::SortPairs(temp, temp_bytes, word_in, word_out, perm_in,
                                                perm_out, n, 0, 64, L.stream);
            int64_t *t = perm_in;
            perm_in = perm_out;
            perm_out = t;
        }
        canopy_place_chunk_kernel<<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(perm_in, q0, n, order);
        if (e == cudaSuccess) e = cudaGetLastError();
        if (e != cudaSuccess) return canopy_gpu_check(e, "hybrid schedule");
    }
    e = cudaMemcpyAsync(&h_tests, d_tests, sizeof h_tests, cudaMemcpyDeviceToHost, L.stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(L.stream);
    *tests = (int64_t)h_tests;
    return canopy_gpu_check(e, "hybrid schedule");
}

/* ------------------------------------------------------- host driver -- */
/* Host side of the CUDA backend: upload the tree and an application's buffers, pick
 * the variant's launcher, time it with events, copy results back, report errors. */

#define GPU_TRY(expr, what)                                                                        \
    do {                                                                                           \
        if ((s = canopy_gpu_check((expr), what)) != CANOPY_OK) goto done;                          \
    } while (0)

/* Device buffers of one call, released together, and the queries' upload. */
struct canopy_trav_buffers : canopy_gpu_buffers {
    /* Points as a dense (n, d) device array whatever the host stride. */
    canopy_status upload_points(canopy_points *dev, canopy_points host, const char *what) {
        void *p;
        canopy_status s = alloc_bytes(&p, sizeof(float) * (size_t)host.n * host.d, what);
        if (s) return s;
        /* One plain copy: a pageable cudaMemcpy2D of short rows goes row by row (200k
         * rows of 7 floats: 73 ms against 0.43 ms on the H100, bench/results/gpu-index.md),
         * so strided rows are packed on the host first. */
        const size_t bytes = sizeof(float) * (size_t)host.n * (size_t)host.d;
        if (host.n > 0 && host.stride == host.d) {
            if ((s = canopy_gpu_check(cudaMemcpy(p, host.data, bytes, cudaMemcpyHostToDevice),
                                      what)))
                return s;
        } else if (host.n > 0) {
            float *packed = (float *)malloc(bytes);
            if (!packed) return canopy_fail(CANOPY_ERR_NOMEM, "%s: %zu bytes", what, bytes);
            for (int64_t i = 0; i < host.n; i++)
                memcpy(packed + i * host.d, canopy_point(host, i), sizeof(float) * host.d);
            s = canopy_gpu_check(cudaMemcpy(p, packed, bytes, cudaMemcpyHostToDevice), what);
            free(packed);
            if (s) return s;
        }
        *dev = canopy_points_make((const float *)p, host.n, host.d);
        return CANOPY_OK;
    }
};

/* Bytes of a tree's arrays (what canopy_gpu_upload_tree copies). */
static inline int64_t canopy_tree_view_bytes(const canopy_tree_view *h) {
    return (int64_t)h->n_nodes * h->hot_stride + h->n * h->d * (int64_t)sizeof(float) +
           h->n * (int64_t)sizeof(int64_t) + (int64_t)h->n_nodes * (int64_t)sizeof(int32_t) +
           (h->weights ? h->n * (int64_t)sizeof(float) : 0);
}

static inline canopy_status canopy_gpu_upload_tree(canopy_trav_buffers &B,
                                                   const canopy_tree_view *h, canopy_tree_view *d) {
    *d = *h;
    d->min_id = NULL; /* host only (knn_truncate) */
    canopy_status s;
    if ((s = B.upload(&d->hot, h->hot, (int64_t)h->n_nodes * h->hot_stride, "tree nodes")) ||
        (s = B.upload(&d->points, h->points, h->n * h->d, "tree points")) ||
        (s = B.upload(&d->ids, h->ids, h->n, "tree ids")) ||
        (s = B.upload(&d->rope, h->rope, h->n_nodes, "tree ropes")))
        return s;
    return h->weights ? B.upload(&d->weights, h->weights, h->n, "tree weights") : CANOPY_OK;
}

template <class App>
static canopy_status canopy_gpu_dispatch(canopy_variant v, const canopy_gpu_launch &L,
                                         const typename App::Ctx &ctx) {
    if constexpr (canopy_gpu_has_own_kernel<App>::value) {
        bool taken = false;
        canopy_status s = App::own_kernel(v, L, ctx, &taken);
        if (s || taken) return s;
    }
    switch (v) {
    case CANOPY_VARIANT_REC:
        return canopy_gpu_launch_rec<App>(L, ctx);
    case CANOPY_VARIANT_DR:
        return canopy_gpu_launch_dr<App>(L, ctx);
    case CANOPY_VARIANT_SR:
        return canopy_gpu_launch_sr<App>(L, ctx);
    case CANOPY_VARIANT_GDR:
        return canopy_gpu_launch_gdr<App>(L, ctx);
    case CANOPY_VARIANT_DR_L:
        return canopy_gpu_launch_dr_l<App>(L, ctx);
    case CANOPY_VARIANT_SR_L:
        return canopy_gpu_launch_sr_l<App>(L, ctx);
    case CANOPY_VARIANT_FSM_L:
        return canopy_gpu_launch_fsm_l<App>(L, ctx);
    default:
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "variant %s does not run on the GPU",
                           canopy_variant_name(v));
    }
}

static inline int canopy_gpu_is_lockstep(canopy_variant v) {
    return v == CANOPY_VARIANT_DR_L || v == CANOPY_VARIANT_SR_L || v == CANOPY_VARIANT_FSM_L;
}

/* The device words a traversal kernel counts into, cleared and read back together:
 * counters (nodes, group_nodes, group_longest, groups), gdr's query counter and the
 * stack-overflow flag. */
struct canopy_gpu_flags {
    unsigned long long counters[4];
    unsigned long long next;
    int error;
    int pad;
};

/* Checks that v runs App, and fills L's tree, query count, stack capacity and SM
 * count (sms > 0: the caller's cached count). */
template <class App>
canopy_status canopy_gpu_launch_init(canopy_gpu_launch &L, const canopy_tree_view *dt, int64_t nq,
                                     canopy_variant v, int sms) {
    if (App::guided && (v == CANOPY_VARIANT_SR || v == CANOPY_VARIANT_SR_L))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "variant %s (static ropes) needs an unguided traversal",
                           canopy_variant_name(v));
    if (App::guided && !App::equivalent && canopy_gpu_is_lockstep(v))
        return canopy_fail(CANOPY_ERR_INVALID, "lockstep needs semantically equivalent orders");
    memset(&L, 0, sizeof L);
    L.tree = *dt;
    L.nq = nq;
    L.stack_cap = (int32_t)canopy_tree_stack_capacity(dt);
    L.sms = sms;
    if (sms <= 0) {
        int dev = 0;
        canopy_status s = canopy_gpu_check(cudaGetDevice(&dev), "cudaGetDevice");
        if (!s)
            s = canopy_gpu_check(
                cudaDeviceGetAttribute(&L.sms, cudaDevAttrMultiProcessorCount, dev),
                "multiprocessor count");
        if (s) return s;
    }
    if (v == CANOPY_VARIANT_REC)
        /* nvcc cannot size a recursive kernel's stack; a frame with the descriptor
         * inlined stays well under 1 KiB. */
        return canopy_gpu_check(
            cudaDeviceSetLimit(cudaLimitStackSize, (size_t)(dt->depth + 4) * 1024),
            "device stack size for recursion");
    return CANOPY_OK;
}

/* Bytes of the per-thread stacks (L.scratch) variant v needs on L's grid (0: none). */
inline size_t canopy_gpu_stack_bytes(const canopy_gpu_launch &L, canopy_variant v) {
    if (v != CANOPY_VARIANT_DR && v != CANOPY_VARIANT_GDR) return 0;
    return (size_t)L.sms * 8 * CANOPY_GPU_BLOCK * (size_t)L.stack_cap * sizeof(int32_t);
}

/* Runs the variant's kernel on L.stream between events e0 and e1 with the flags at
 * dflags (device) cleared first and copied back to hflags (pinned memory keeps the
 * copy asynchronous), waits for it, and adds kernel time and counters to rep. */
template <class App>
canopy_status canopy_gpu_traverse(canopy_gpu_launch &L, const typename App::Ctx &ctx,
                                  canopy_variant v, canopy_gpu_flags *dflags,
                                  canopy_gpu_flags *hflags, cudaEvent_t e0, cudaEvent_t e1,
                                  canopy_gpu_report *rep) {
    L.counters = dflags->counters;
    L.next = &dflags->next;
    L.error = &dflags->error;
    canopy_status s;
    float ms = 0.0f;
    if ((s = canopy_gpu_check(cudaMemsetAsync(dflags, 0, sizeof *dflags, L.stream),
                              "clearing counters")) ||
        (s = canopy_gpu_check(cudaEventRecord(e0, L.stream), "cudaEventRecord")) ||
        (L.nq > 0 && (s = canopy_gpu_dispatch<App>(v, L, ctx))) ||
        (s = canopy_gpu_check(cudaEventRecord(e1, L.stream), "cudaEventRecord")) ||
        (s = canopy_gpu_check(
             cudaMemcpyAsync(hflags, dflags, sizeof *dflags, cudaMemcpyDeviceToHost, L.stream),
             "counters")) ||
        (s = canopy_gpu_check(cudaStreamSynchronize(L.stream), "traversal kernel")) ||
        (s = canopy_gpu_check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime")))
        return s;
    rep->traverse_seconds += ms * 1e-3;
    if (hflags->error)
        return canopy_fail(CANOPY_ERR_INTERNAL,
                           "GPU %s: a traversal stack overflowed its %d entries (tree depth %d)",
                           canopy_variant_name(v), (int)L.stack_cap, (int)L.tree.depth);
    rep->counters.nodes += (int64_t)hflags->counters[0];
    rep->counters.group_nodes += (int64_t)hflags->counters[1];
    rep->counters.group_longest += (int64_t)hflags->counters[2];
    rep->counters.groups += (int64_t)hflags->counters[3];
    return CANOPY_OK;
}

/* Device scratch a caller keeps between calls (a resident index's): flags, pinned
 * copy of them, per-thread stacks of stack_bytes, two events, the SM count, and the
 * stream everything runs on. */
struct canopy_gpu_pooled {
    canopy_gpu_flags *dflags, *hflags;
    int32_t *stacks;
    size_t stack_bytes;
    cudaEvent_t e0, e1;
    int sms;
    cudaStream_t stream;
};

/* canopy_gpu_run without any allocation, copy or event creation of its own: the
 * scratch comes from P (its stacks at least canopy_gpu_stack_bytes); order is a
 * device permutation or NULL, bucket NULL or its kd buckets (canopy_gpu_launch). */
template <class App>
canopy_status canopy_gpu_run_pooled(const typename App::Ctx &ctx, const canopy_tree_view *dt,
                                    const int64_t *order, const int32_t *bucket, int64_t nq,
                                    canopy_variant v, const canopy_gpu_pooled &P,
                                    canopy_gpu_report *rep) {
    canopy_gpu_launch L;
    canopy_status s = canopy_gpu_launch_init<App>(L, dt, nq, v, P.sms);
    if (s) return s;
    if (canopy_gpu_stack_bytes(L, v) > P.stack_bytes)
        return canopy_fail(CANOPY_ERR_INTERNAL, "GPU: pooled stacks too small");
    L.order = order;
    L.bucket = bucket;
    L.scratch = P.stacks;
    L.stream = P.stream;
    return canopy_gpu_traverse<App>(L, ctx, v, P.dflags, P.hflags, P.e0, P.e1, rep);
}

/* Runs App over an uploaded tree; ctx already holds device pointers. */
template <class App>
canopy_status canopy_gpu_run(canopy_trav_buffers &B, const typename App::Ctx &ctx,
                             const canopy_tree_view *dt, const int64_t *order, int64_t nq,
                             canopy_variant v, const canopy_profile_plan *plan,
                             canopy_gpu_report *rep) {
    canopy_gpu_launch L;
    cudaEvent_t e0 = NULL, e1 = NULL;
    void *p;
    canopy_gpu_flags *dflags, hflags;
    double t0 = canopy_now();
    float ms = 0.0f;
    canopy_status s = canopy_gpu_launch_init<App>(L, dt, nq, v, 0);
    if (s) return s;
    GPU_TRY(cudaEventCreate(&e0), "cudaEventCreate");
    GPU_TRY(cudaEventCreate(&e1), "cudaEventCreate");
    if (order) {
        if ((s = B.upload_bytes(&p, order, sizeof(int64_t) * (size_t)nq, "query order"))) goto done;
        L.order = (const int64_t *)p;
    }
    if (plan && nq > 0) {
        canopy_profile_plan dplan = *plan;
        if ((s = B.upload_bytes(&p, plan->col, sizeof(int32_t) * (size_t)dt->n_nodes,
                                "profile columns")))
            goto done;
        dplan.col = (int32_t *)p;
        if ((s = B.alloc_bytes(&p, sizeof(int64_t) * (size_t)nq, "hybrid order"))) goto done;
        GPU_TRY(cudaEventRecord(e0, 0), "cudaEventRecord");
        if ((s = canopy_gpu_profile_order<App>(L, ctx, dplan, (int64_t *)p, &rep->profile_tests)))
            goto done;
        GPU_TRY(cudaEventRecord(e1, 0), "cudaEventRecord");
        GPU_TRY(cudaEventSynchronize(e1), "hybrid schedule");
        GPU_TRY(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        rep->schedule_seconds += ms * 1e-3;
        L.order = (const int64_t *)p;
    }
    if ((s = B.alloc_bytes(&p, sizeof(canopy_gpu_flags), "counters"))) goto done;
    dflags = (canopy_gpu_flags *)p;
    if (canopy_gpu_stack_bytes(L, v)) {
        if ((s = B.alloc_bytes(&p, canopy_gpu_stack_bytes(L, v), "per-thread stacks"))) goto done;
        L.scratch = (int32_t *)p;
    }
    rep->transfer_seconds += canopy_now() - t0 - ms * 1e-3;
    s = canopy_gpu_traverse<App>(L, ctx, v, dflags, &hflags, e0, e1, rep);
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    return s;
}

/* An output buffer of an application: allocated on the device, copied back after. */
struct canopy_gpu_output {
    void *host;
    void *dev;
    size_t bytes;
};

/* The shape every application's glue shares: upload the tree, let `setup` upload
 * the application's inputs and allocate its outputs (pointing the device context at
 * them), run the variant, copy the outputs back. Transfers are timed apart. */
template <class App, class Setup>
static canopy_status
canopy_gpu_run_app(const typename App::Ctx &host_ctx, const canopy_tree_view *tree,
                   const int64_t *order, int64_t nq, canopy_variant v,
                   const canopy_profile_plan *plan, canopy_gpu_report *rep, Setup setup) {
    canopy_trav_buffers B;
    canopy_tree_view dt;
    typename App::Ctx d = host_ctx;
    canopy_gpu_output outs[2];
    int n_out = 0;
    double t0 = canopy_now();
    canopy_status s = CANOPY_OK;
    if (rep->device_tree) {
        dt = *rep->device_tree;
    } else {
        s = canopy_gpu_upload_tree(B, tree, &dt);
        rep->tree_upload_seconds += canopy_now() - t0;
        rep->tree_upload_bytes += canopy_tree_view_bytes(tree);
    }
    if (!s) s = setup(B, d, outs, n_out);
    rep->transfer_seconds += canopy_now() - t0;
    if (s || (s = canopy_gpu_run<App>(B, d, &dt, order, nq, v, plan, rep))) return s;
    t0 = canopy_now();
    for (int i = 0; i < n_out && !s; i++)
        s = canopy_gpu_check(
            cudaMemcpy(outs[i].host, outs[i].dev, outs[i].bytes, cudaMemcpyDeviceToHost),
            "copying results");
    rep->transfer_seconds += canopy_now() - t0;
    return s;
}

/* Allocates one output of `bytes` mirroring host memory `host`; *dev gets its address. */
template <class T>
static canopy_status canopy_gpu_add_output(canopy_trav_buffers &B, T **dev, T *host, size_t bytes,
                                           const char *what, canopy_gpu_output *outs, int &n_out) {
    void *p;
    canopy_status s = B.alloc_bytes(&p, bytes, what);
    if (s) return s;
    *dev = (T *)p;
    outs[n_out++] = canopy_gpu_output{host, p, bytes};
    return CANOPY_OK;
}

#endif
