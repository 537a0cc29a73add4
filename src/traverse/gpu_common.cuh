/* Pieces every GPU engine shares: the adapter that turns a C descriptor into a
 * template argument, the launch description, warp-level votes and counters. */
#ifndef CANOPY_TRAVERSE_GPU_COMMON_CUH
#define CANOPY_TRAVERSE_GPU_COMMON_CUH

#include "core/gpu.cuh"
#include "traverse/gpu.h"

#include <cuda_runtime.h>

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

/* Kernel launchers, one per variant, explicitly instantiated per application in
 * gpu_<variant>.cu. */
template <class App>
canopy_status canopy_gpu_launch_rec(const canopy_gpu_launch &, const typename App::Ctx &);
template <class App>
canopy_status canopy_gpu_launch_dr(const canopy_gpu_launch &, const typename App::Ctx &);
template <class App>
canopy_status canopy_gpu_launch_sr(const canopy_gpu_launch &, const typename App::Ctx &);
template <class App>
canopy_status canopy_gpu_launch_gdr(const canopy_gpu_launch &, const typename App::Ctx &);
template <class App>
canopy_status canopy_gpu_launch_dr_l(const canopy_gpu_launch &, const typename App::Ctx &);
template <class App>
canopy_status canopy_gpu_launch_sr_l(const canopy_gpu_launch &, const typename App::Ctx &);
template <class App>
canopy_status canopy_gpu_launch_fsm_l(const canopy_gpu_launch &, const typename App::Ctx &);

/* The hybrid schedule on the device: profile L.nq queries by plan (plan.col a device
 * array), write their order to the device array `order` (gpu_profile.cu). */
template <class App>
canopy_status canopy_gpu_profile_order(const canopy_gpu_launch &L, const typename App::Ctx &ctx,
                                       const canopy_profile_plan &plan, int64_t *order,
                                       int64_t *tests);

enum { CANOPY_GPU_BLOCK = 128 };
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

#endif
