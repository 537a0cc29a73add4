/* SPDX-License-Identifier: MIT */
/* The bottom-up aggregations on the GPU, in a form every GPU strategy can run: a node's
 * value is combine(start(node), contrib(child 1), contrib(child 2), ...) with an
 * associative combine, which a thread can fold in child order (bit-identical to the
 * CPU's rec) or a block can reduce in parallel. flat uses up() instead: a node's
 * contribution to an ancestor `dist` levels above, applied atomically. */
#ifndef CANOPY_PTSD_GPU_PTSD_CUH
#define CANOPY_PTSD_GPU_PTSD_CUH

#include "canopy.h"

#include <cuda_runtime.h>
#include <stdint.h>

struct gpu_ptsd_ctx {
    int64_t n, root;
    const int64_t *parent, *child_ptr, *child;
    int64_t *out_i64; /* heights, descendants */
    double *out_f64;  /* mass: 4 per node */
    const double *mass, *pos;
};

__device__ __forceinline__ bool gpu_ptsd_leaf(const gpu_ptsd_ctx &c, int64_t v) {
    return c.child_ptr[v] == c.child_ptr[v + 1];
}

struct gpu_agg_heights {
    typedef int64_t V;
    __device__ static V identity() { return 0; }
    __device__ static V start(const gpu_ptsd_ctx &, int64_t) { return 0; }
    __device__ static V contrib(const gpu_ptsd_ctx &c, int64_t ch) { return c.out_i64[ch] + 1; }
    __device__ static V combine(V a, V b) { return a > b ? a : b; }
    __device__ static void store(const gpu_ptsd_ctx &c, int64_t v, V a) { c.out_i64[v] = a; }
    __device__ static bool walks(const gpu_ptsd_ctx &c, int64_t v) { return gpu_ptsd_leaf(c, v); }
    __device__ static void up(const gpu_ptsd_ctx &c, int64_t, int64_t anc, int64_t dist) {
        atomicMax((long long *)&c.out_i64[anc], (long long)dist);
    }
};

struct gpu_agg_descendants {
    typedef int64_t V;
    __device__ static V identity() { return 0; }
    __device__ static V start(const gpu_ptsd_ctx &, int64_t) { return 0; }
    __device__ static V contrib(const gpu_ptsd_ctx &c, int64_t ch) { return c.out_i64[ch] + 1; }
    __device__ static V combine(V a, V b) { return a + b; }
    __device__ static void store(const gpu_ptsd_ctx &c, int64_t v, V a) { c.out_i64[v] = a; }
    __device__ static bool walks(const gpu_ptsd_ctx &c, int64_t v) { return c.parent[v] >= 0; }
    __device__ static void up(const gpu_ptsd_ctx &c, int64_t, int64_t anc, int64_t) {
        atomicAdd((unsigned long long *)&c.out_i64[anc], 1ull);
    }
};

/* (mass, mass * x, mass * y, mass * z); centres are divided out on the host. */
struct gpu_mass4 {
    double m, x, y, z;
};
struct gpu_agg_mass {
    typedef gpu_mass4 V;
    __device__ static V identity() { return {0.0, 0.0, 0.0, 0.0}; }
    __device__ static V start(const gpu_ptsd_ctx &c, int64_t v) {
        if (!gpu_ptsd_leaf(c, v)) return identity();
        double m = c.mass[v];
        return {m, m * c.pos[3 * v], m * c.pos[3 * v + 1], m * c.pos[3 * v + 2]};
    }
    __device__ static V contrib(const gpu_ptsd_ctx &c, int64_t ch) {
        const double *o = c.out_f64 + 4 * ch;
        return {o[0], o[1], o[2], o[3]};
    }
    __device__ static V combine(V a, V b) { return {a.m + b.m, a.x + b.x, a.y + b.y, a.z + b.z}; }
    __device__ static void store(const gpu_ptsd_ctx &c, int64_t v, V a) {
        double *o = c.out_f64 + 4 * v;
        o[0] = a.m;
        o[1] = a.x;
        o[2] = a.y;
        o[3] = a.z;
    }
    __device__ static bool walks(const gpu_ptsd_ctx &c, int64_t v) { return gpu_ptsd_leaf(c, v); }
    __device__ static void up(const gpu_ptsd_ctx &c, int64_t v, int64_t anc, int64_t) {
        V a = start(c, v);
        double *o = c.out_f64 + 4 * anc;
        atomicAdd(o, a.m);
        atomicAdd(o + 1, a.x);
        atomicAdd(o + 2, a.y);
        atomicAdd(o + 3, a.z);
    }
};

/* Node v's value from its finished children, folded in child order by one thread. */
template <class A> __device__ void gpu_ptsd_fold_serial(const gpu_ptsd_ctx &c, int64_t v) {
    typename A::V a = A::start(c, v);
    for (int64_t k = c.child_ptr[v]; k < c.child_ptr[v + 1]; k++)
        a = A::combine(a, A::contrib(c, c.child[k]));
    A::store(c, v, a);
}

/* The same by a whole block (blockDim <= 1024): threads stride over the children,
 * then a shared-memory tree reduction. Every thread of the block must call. */
template <class A> __device__ void gpu_ptsd_fold_block(const gpu_ptsd_ctx &c, int64_t v) {
    __shared__ typename A::V part[1024];
    typename A::V a = A::identity();
    for (int64_t k = c.child_ptr[v] + threadIdx.x; k < c.child_ptr[v + 1]; k += blockDim.x)
        a = A::combine(a, A::contrib(c, c.child[k]));
    part[threadIdx.x] = a;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half)
            part[threadIdx.x] = A::combine(part[threadIdx.x], part[threadIdx.x + half]);
        __syncthreads();
    }
    if (threadIdx.x == 0) A::store(c, v, A::combine(A::start(c, v), part[0]));
    __syncthreads(); /* part[] is reused by the block's next node */
}

/* What the host side hands a strategy. levels/level_start: the breadth-first
 * segments of the nodes (crec, hier; built by gpu_run.cu), on the device and host. */
struct gpu_ptsd_run {
    int app; /* canopy_ptsd_app */
    gpu_ptsd_ctx ctx;
    const int64_t *order;       /* device: nodes level by level */
    const int64_t *level_start; /* host: levels + 1 offsets into order */
    int32_t levels;
    int32_t depth;
    unsigned long long *counters; /* device: launches made, launches failed (rec) */
    int64_t *launches;            /* host launches */
    int sms;
};

/* One function per strategy file, returning the launch error (the dynamic-parallelism
 * file sits in its own archive and calls nothing of the rest of the library). */
cudaError_t gpu_ptsd_flat(const gpu_ptsd_run *R);
cudaError_t gpu_ptsd_crec(const gpu_ptsd_run *R);
cudaError_t gpu_ptsd_hier(const gpu_ptsd_run *R);
cudaError_t gpu_ptsd_dp_rec(const gpu_ptsd_run *R);

/* In a strategy file defining `template <class A> static cudaError_t run_agg(const
 * gpu_ptsd_run *R)`: returns run_agg<A>(R) for the aggregation R->app names. */
#define GPU_PTSD_DISPATCH()                                                                        \
    do {                                                                                           \
        switch (R->app) {                                                                          \
        case CANOPY_PTSD_HEIGHTS:                                                                  \
            return run_agg<gpu_agg_heights>(R);                                                    \
        case CANOPY_PTSD_DESCENDANTS:                                                              \
            return run_agg<gpu_agg_descendants>(R);                                                \
        case CANOPY_PTSD_MASS:                                                                     \
            return run_agg<gpu_agg_mass>(R);                                                       \
        }                                                                                          \
        return cudaErrorInvalidValue;                                                              \
    } while (0)

#endif
