// SPDX-License-Identifier: MIT
/* Multipole gravity on the GPU (gravity/gpu_multipole.h): device tree build, moments
 * bottom-up, Liu's bucket-to-node walk, float64 direct reference, and the resident
 * leapfrog integrator. The inner loops use explicit fmaf (the library compiles CUDA
 * with --fmad=false). */
#include "gravity/gpu_multipole.h"

#include "canopy/cuda_util.cuh"
#include "core/gpu.cuh"

#include <cub/cub.cuh>
#include <mutex>
#include <new>
#include <thrust/iterator/counting_iterator.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int WALK_WARPS = 4;                       /* warps per walk block */
constexpr int STACK_CAP = 4096;                     /* per-warp node stack (global memory) */
constexpr int BODY_CAP = 32 + 32 * GPU_MP_LEAF_MAX; /* per-warp body list */
constexpr unsigned FULL = 0xffffffffu;

/* Flags the walk kernel raises: a node stack overflowed. */
enum { ERR_STACK = 1 };

/* ------------------------------------------------------------- tree build -- */

__device__ __forceinline__ unsigned f2ord(float x) {
    unsigned u = __float_as_uint(x);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float ord2f(unsigned u) {
    return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

__global__ void k_bbox_init(unsigned *bb) {
    if (threadIdx.x < 3)
        bb[threadIdx.x] = 0xffffffffu;
    else if (threadIdx.x < 6)
        bb[threadIdx.x] = 0u;
}

__global__ void k_bbox(const float4 *b, int n, unsigned *bb) {
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float4 p = b[i];
        float c[3] = {p.x, p.y, p.z};
        for (int j = 0; j < 3; j++) {
            lo[j] = fminf(lo[j], c[j]);
            hi[j] = fmaxf(hi[j], c[j]);
        }
    }
    for (int j = 0; j < 3; j++)
        for (int o = 16; o > 0; o >>= 1) {
            lo[j] = fminf(lo[j], __shfl_xor_sync(FULL, lo[j], o));
            hi[j] = fmaxf(hi[j], __shfl_xor_sync(FULL, hi[j], o));
        }
    if ((threadIdx.x & 31) == 0)
        for (int j = 0; j < 3; j++) {
            atomicMin(bb + j, f2ord(lo[j]));
            atomicMax(bb + 3 + j, f2ord(hi[j]));
        }
}

__device__ __forceinline__ uint64_t spread3(uint64_t v) {
    v &= 0x1fffffull;
    v = (v | v << 32) & 0x1f00000000ffffull;
    v = (v | v << 16) & 0x1f0000ff0000ffull;
    v = (v | v << 8) & 0x100f00f00f00f00full;
    v = (v | v << 4) & 0x10c30c30c30c30c3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}

/* 63-bit Morton key of each body in the bounding cube, and the identity permutation. */
__global__ void k_keys(const float4 *b, int n, const unsigned *bb, uint64_t *key, int *idx) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float lo[3], side = 0.0f;
    for (int j = 0; j < 3; j++) {
        lo[j] = ord2f(bb[j]);
        side = fmaxf(side, ord2f(bb[3 + j]) - lo[j]);
    }
    float scale = side > 0.0f ? 2097151.0f / side : 0.0f;
    float4 p = b[i];
    float c[3] = {p.x, p.y, p.z};
    uint64_t k = 0;
    for (int j = 0; j < 3; j++) {
        float q = fminf(fmaxf((c[j] - lo[j]) * scale, 0.0f), 2097151.0f);
        k |= spread3((uint64_t)q) << (2 - j);
    }
    key[i] = k;
    idx[i] = i;
}

__global__ void k_gather(const float4 *b, const int *perm, int n, float4 *sp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) sp[i] = b[perm[i]];
}

/* Length of the common prefix of keys i and j, the index breaking ties; -1 outside. */
__device__ __forceinline__ int common_prefix(const uint64_t *k, int n, int i, int j) {
    if (j < 0 || j >= n) return -1;
    uint64_t a = k[i], b = k[j];
    if (a == b) return 64 + __clz(i ^ j);
    return __clzll(a ^ b);
}

/* Internal node i of the binary radix tree (Karras 2012): its range of sorted bodies,
 * its split, and its children (>= 0 internal node, < 0 ~body). */
__global__ void k_radix_tree(const uint64_t *k, int n, int2 *child, int2 *range, int *iparent,
                             int *lparent) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n - 1) return;
    int d = common_prefix(k, n, i, i + 1) - common_prefix(k, n, i, i - 1) > 0 ? 1 : -1;
    int dmin = common_prefix(k, n, i, i - d);
    int lmax = 2;
    while (common_prefix(k, n, i, i + lmax * d) > dmin) lmax *= 2;
    int l = 0;
    for (int t = lmax / 2; t >= 1; t /= 2)
        if (common_prefix(k, n, i, i + (l + t) * d) > dmin) l += t;
    int j = i + l * d;
    int dnode = common_prefix(k, n, i, j);
    int s = 0;
    for (int div = 2;; div *= 2) {
        int t = (l + div - 1) / div;
        if (common_prefix(k, n, i, i + (s + t) * d) > dnode) s += t;
        if (t <= 1) break;
    }
    int split = i + s * d + (d < 0 ? -1 : 0);
    int lo = min(i, j), hi = max(i, j);
    int left = lo == split ? ~split : split;
    int right = hi == split + 1 ? ~(split + 1) : split + 1;
    child[i] = make_int2(left, right);
    range[i] = make_int2(lo, hi - lo + 1);
    if (left >= 0)
        iparent[left] = i;
    else
        lparent[split] = i;
    if (right >= 0)
        iparent[right] = i;
    else
        lparent[split + 1] = i;
    if (i == 0) iparent[0] = -1;
}

/* -------------------------------------------------------- moments, buckets -- */

struct mp_tree {
    const float4 *sp; /* bodies in key order: x y z m */
    const int2 *child, *range;
    float4 *hot;   /* com, squared opening radius */
    float4 *cold0; /* mass, Qxx, Qyy, Qzz */
    float4 *cold1; /* Qxy, Qxz, Qyz, T = sum m |x - com|^2 (the softening term) */
    float4 *lo, *hi;
};

struct child_moments {
    float m, c[3], q[6], tr, lo[3], hi[3];
};

__device__ void load_child(const mp_tree &t, int c, child_moments &o) {
    if (c < 0) {
        float4 p = t.sp[~c];
        o.m = p.w;
        o.c[0] = o.lo[0] = o.hi[0] = p.x;
        o.c[1] = o.lo[1] = o.hi[1] = p.y;
        o.c[2] = o.lo[2] = o.hi[2] = p.z;
        for (int j = 0; j < 6; j++) o.q[j] = 0.0f;
        o.tr = 0.0f;
        return;
    }
    /* written by another thread of this launch: read past L1 */
    float4 h = __ldcg(t.hot + c), a = __ldcg(t.cold0 + c), b = __ldcg(t.cold1 + c);
    float4 l = __ldcg(t.lo + c), u = __ldcg(t.hi + c);
    o.m = a.x;
    o.c[0] = h.x, o.c[1] = h.y, o.c[2] = h.z;
    o.q[0] = a.y, o.q[1] = a.z, o.q[2] = a.w, o.q[3] = b.x, o.q[4] = b.y, o.q[5] = b.z;
    o.tr = b.w;
    o.lo[0] = l.x, o.lo[1] = l.y, o.lo[2] = l.z;
    o.hi[0] = u.x, o.hi[1] = u.y, o.hi[2] = u.z;
}

/* Bottom-up: a thread per body climbs while it is the second child to arrive and
 * combines the two children (parallel-axis shift of the quadrupoles to the new
 * centre of mass, in float64). The opening radius is side / theta + |com - centre|
 * with the tight box's longest side (Barnes' offset criterion). */
__global__ void k_moments(mp_tree t, const int *iparent, const int *lparent, int *arrived, int n,
                          float inv_theta) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int node = lparent[i];
    while (node >= 0) {
        __threadfence();
        if (atomicAdd(arrived + node, 1) == 0) return;
        __threadfence();
        int2 ch = t.child[node];
        child_moments a, b;
        load_child(t, ch.x, a);
        load_child(t, ch.y, b);
        double m = (double)a.m + b.m, com[3], lo[3], hi[3];
        for (int j = 0; j < 3; j++) {
            lo[j] = fminf(a.lo[j], b.lo[j]);
            hi[j] = fmaxf(a.hi[j], b.hi[j]);
            com[j] =
                m > 0.0 ? ((double)a.m * a.c[j] + (double)b.m * b.c[j]) / m : 0.5 * (lo[j] + hi[j]);
        }
        double q[6], tr = (double)a.tr + b.tr;
        for (int j = 0; j < 6; j++) q[j] = (double)a.q[j] + b.q[j];
        const child_moments *cs[2] = {&a, &b};
        for (int s = 0; s < 2; s++) {
            double d[3], mm = cs[s]->m;
            for (int j = 0; j < 3; j++) d[j] = cs[s]->c[j] - com[j];
            double d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            tr += mm * d2;
            q[0] += mm * (3 * d[0] * d[0] - d2);
            q[1] += mm * (3 * d[1] * d[1] - d2);
            q[2] += mm * (3 * d[2] * d[2] - d2);
            q[3] += mm * 3 * d[0] * d[1];
            q[4] += mm * 3 * d[0] * d[2];
            q[5] += mm * 3 * d[1] * d[2];
        }
        double side = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2])), off2 = 0.0;
        for (int j = 0; j < 3; j++) {
            double o = com[j] - 0.5 * (lo[j] + hi[j]);
            off2 += o * o;
        }
        double r = side * inv_theta + sqrt(off2);
        t.hot[node] = make_float4((float)com[0], (float)com[1], (float)com[2], (float)(r * r));
        t.cold0[node] = make_float4((float)m, (float)q[0], (float)q[1], (float)q[2]);
        t.cold1[node] = make_float4((float)q[3], (float)q[4], (float)q[5], (float)tr);
        t.lo[node] = make_float4((float)lo[0], (float)lo[1], (float)lo[2], 0.0f);
        t.hi[node] = make_float4((float)hi[0], (float)hi[1], (float)hi[2], 0.0f);
        node = node == 0 ? -1 : __ldcg(iparent + node);
    }
}

/* Buckets: the largest subtrees of at most `group` bodies; each marks its first body
 * with its size (the buckets partition the bodies). */
__global__ void k_buckets(const int2 *child, const int2 *range, int n, int group, int *gsize) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n - 1) return;
    int2 r = range[i];
    if (r.y <= group) {
        if (i == 0) gsize[r.x] = r.y;
        return;
    }
    int2 ch = child[i];
    int c[2] = {ch.x, ch.y};
    for (int s = 0; s < 2; s++) {
        int first = c[s] < 0 ? ~c[s] : range[c[s]].x, cnt = c[s] < 0 ? 1 : range[c[s]].y;
        if (cnt <= group) gsize[first] = cnt;
    }
}

struct nonzero {
    const int *v;
    __device__ bool operator()(int i) const { return v[i] != 0; }
};

/* --------------------------------------------------------------- the walk -- */

struct walk_args {
    const float4 *sp;
    const int *perm; /* sorted -> caller index */
    const float4 *hot, *cold0, *cold1;
    const int2 *child, *range;
    const int *gfirst, *gsize, *ngroups;
    int *next_group, *err;
    int *stack;
    unsigned long long *counts; /* tests, cells, bodies */
    float *acc, *pot;
    int *work; /* per body: its bucket's list entries (cells + bodies), or NULL */
    float eps2;
    int leaf;
};

__device__ __forceinline__ int warp_excl_scan(int v, int lane, int *total) {
    int x = v;
    for (int o = 1; o < 32; o <<= 1) {
        int y = __shfl_up_sync(FULL, x, o);
        if (lane >= o) x += y;
    }
    *total = __shfl_sync(FULL, x, 31);
    return x - v;
}

/* Cell terms: the Taylor expansion of the Plummer-softened potential to second order,
 *   phi = -M / R - (r.Q.r - T eps^2) / (2 R^5),   R^2 = r^2 + eps^2,
 * Q traceless, T the trace of the second moment: the T eps^2 term is what the
 * traceless quadrupole alone misses under softening (without it the quadrupole gained
 * only 2x over the monopole on plummer1m, eps 0.05, at theta 0.3). */
/* 1 / sqrt(x), the hardware approximation (2 ulp) without the denormal fix-up
 * rsqrtf carries: the walk's inner loops spend most of their time around it. */
__device__ __forceinline__ float rsqrt_approx(float x) {
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* One body of a bucket: its position, sorted index and sums. */
struct sink {
    float x, y, z, ax, ay, az, phi;
    int me;
};

template <int ORDER, int B>
__device__ __forceinline__ void eval_cells(const walk_args &w, const int *list, int cnt,
                                           float4 *stage, int lane, sink (&s)[B]) {
    if (lane < cnt) {
        int c = list[lane];
        float4 h = w.hot[c], a = w.cold0[c];
        stage[lane] = make_float4(h.x, h.y, h.z, a.x);
        if (ORDER == 2) {
            float4 b = w.cold1[c];
            stage[32 + lane] = make_float4(a.y, a.z, a.w, b.x);
            stage[64 + lane] = make_float4(b.y, b.z, b.w * w.eps2, 0.0f);
        }
    }
    __syncwarp();
    for (int j = 0; j < cnt; j++) {
        float4 g = stage[j], q0, q1;
        if (ORDER == 2) q0 = stage[32 + j], q1 = stage[64 + j];
#pragma unroll
        for (int k = 0; k < B; k++) {
            float rx = s[k].x - g.x, ry = s[k].y - g.y, rz = s[k].z - g.z;
            float r2 = fmaf(rx, rx, fmaf(ry, ry, fmaf(rz, rz, w.eps2)));
            /* arranged so that most products pair into FMAs (ncu: the walk is
             * FP32-issue-bound) */
            float inv = rsqrt_approx(r2), inv2 = inv * inv, inv3 = inv * inv2;
            float f = g.w * inv3;
            s[k].phi = fmaf(-g.w, inv, s[k].phi);
            if (ORDER == 2) {
                /* q0 = Qxx Qyy Qzz Qxy, q1 = Qxz Qyz, T eps^2 */
                float qx = fmaf(q0.x, rx, fmaf(q0.w, ry, q1.x * rz));
                float qy = fmaf(q0.w, rx, fmaf(q0.y, ry, q1.y * rz));
                float qz = fmaf(q1.x, rx, fmaf(q1.y, ry, q0.z * rz));
                float rqr = fmaf(rx, qx, fmaf(ry, qy, fmaf(rz, qz, -q1.z)));
                float inv5 = inv3 * inv2, u = rqr * inv5;
                float fc = fmaf(2.5f * u, inv2, f);
                s[k].ax = fmaf(qx, inv5, fmaf(-fc, rx, s[k].ax));
                s[k].ay = fmaf(qy, inv5, fmaf(-fc, ry, s[k].ay));
                s[k].az = fmaf(qz, inv5, fmaf(-fc, rz, s[k].az));
                s[k].phi = fmaf(-0.5f, u, s[k].phi);
            } else {
                s[k].ax = fmaf(-f, rx, s[k].ax);
                s[k].ay = fmaf(-f, ry, s[k].ay);
                s[k].az = fmaf(-f, rz, s[k].az);
            }
        }
    }
    __syncwarp();
}

template <int B>
__device__ __forceinline__ void eval_bodies(const walk_args &w, const int *list, int cnt,
                                            float4 *stage, int *sidx, int lane, sink (&s)[B]) {
    if (lane < cnt) {
        int b = list[lane];
        stage[lane] = w.sp[b];
        sidx[lane] = b;
    }
    __syncwarp();
    for (int j = 0; j < cnt; j++) {
        float4 src = stage[j];
        int id = sidx[j];
#pragma unroll
        for (int k = 0; k < B; k++) {
            if (id == s[k].me) continue;
            float dx = src.x - s[k].x, dy = src.y - s[k].y, dz = src.z - s[k].z;
            float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, w.eps2)));
            float inv = rsqrt_approx(r2);
            float p = src.w * inv, f = p * inv * inv;
            s[k].ax = fmaf(f, dx, s[k].ax);
            s[k].ay = fmaf(f, dy, s[k].ay);
            s[k].az = fmaf(f, dz, s[k].az);
            s[k].phi -= p;
        }
    }
    __syncwarp();
}

/* A warp per bucket of up to 32 B bodies, B per lane (persistent warps take buckets
 * in key order from a counter). The bucket's box is tested against up to 32 nodes at
 * a time (a lane each): accepted nodes go to the cell list, opened leaves' bodies to
 * the body list, other opened nodes' children to the stack; full lists are evaluated
 * 32 entries at a time, every body of the bucket over every entry. */
template <int ORDER, int B> __global__ void __launch_bounds__(WALK_WARPS * 32) k_walk(walk_args w) {
    __shared__ float4 s_stage[WALK_WARPS][96];
    __shared__ int s_sidx[WALK_WARPS][32];
    __shared__ int s_cells[WALK_WARPS][64];
    __shared__ int s_bodies[WALK_WARPS][BODY_CAP];
    const int wid = threadIdx.x >> 5, lane = threadIdx.x & 31;
    float4 *stage = s_stage[wid];
    int *sidx = s_sidx[wid], *cells = s_cells[wid], *bodies = s_bodies[wid];
    int *stack = w.stack + (size_t)(blockIdx.x * WALK_WARPS + wid) * STACK_CAP;
    const int ngroups = *w.ngroups;
    for (;;) {
        int g = 0;
        if (lane == 0) g = atomicAdd(w.next_group, 1);
        g = __shfl_sync(FULL, g, 0);
        if (g >= ngroups) break;
        const int first = w.gfirst[g], cnt = w.gsize[first];
        sink s[B];
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
#pragma unroll
        for (int k = 0; k < B; k++) {
            /* idle slots repeat the first body: inside the box, results dropped */
            int slot = lane + 32 * k;
            s[k].me = first + (slot < cnt ? slot : 0);
            float4 p = w.sp[s[k].me];
            s[k].x = p.x, s[k].y = p.y, s[k].z = p.z;
            s[k].ax = s[k].ay = s[k].az = s[k].phi = 0.0f;
            lo[0] = fminf(lo[0], p.x), lo[1] = fminf(lo[1], p.y), lo[2] = fminf(lo[2], p.z);
            hi[0] = fmaxf(hi[0], p.x), hi[1] = fmaxf(hi[1], p.y), hi[2] = fmaxf(hi[2], p.z);
        }
        for (int j = 0; j < 3; j++)
            for (int o = 16; o > 0; o >>= 1) {
                lo[j] = fminf(lo[j], __shfl_xor_sync(FULL, lo[j], o));
                hi[j] = fmaxf(hi[j], __shfl_xor_sync(FULL, hi[j], o));
            }
        int top = 1, nc = 0, nb = 0;
        long long tests = 0, ncell = 0, nbody = 0;
        if (lane == 0) stack[0] = 0;
        __syncwarp();
        while (top > 0) {
            const int k = min(top, 32);
            int node = lane < k ? stack[top - k + lane] : -1;
            top -= k;
            tests += k;
            __syncwarp();
            int accept = 0, npush = 0, push0 = 0, push1 = 0, nbod = 0, bstart = 0;
            if (node >= 0) {
                float4 h = w.hot[node];
                float d2 = 0.0f, c[3] = {h.x, h.y, h.z};
                for (int j = 0; j < 3; j++) {
                    float e = fmaxf(fmaxf(lo[j] - c[j], c[j] - hi[j]), 0.0f);
                    d2 = fmaf(e, e, d2);
                }
                if (d2 > h.w) {
                    accept = 1;
                } else {
                    int2 r = w.range[node];
                    if (r.y <= w.leaf) {
                        nbod = r.y;
                        bstart = r.x;
                    } else {
                        int2 ch = w.child[node];
                        /* r.y > leaf >= 2: at most one child is a single body */
                        if (ch.x < 0)
                            nbod = 1, bstart = ~ch.x;
                        else
                            push0 = ch.x, npush = 1;
                        if (ch.y < 0)
                            nbod = 1, bstart = ~ch.y;
                        else
                            (npush ? push1 : push0) = ch.y, npush++;
                    }
                }
            }
            unsigned ab = __ballot_sync(FULL, accept);
            if (accept) cells[nc + __popc(ab & ((1u << lane) - 1))] = node;
            nc += __popc(ab);
            int ptotal, poff = warp_excl_scan(npush, lane, &ptotal);
            if (top + ptotal > STACK_CAP) {
                if (lane == 0) atomicOr(w.err, ERR_STACK);
                break;
            }
            if (npush > 0) stack[top + poff] = push0;
            if (npush > 1) stack[top + poff + 1] = push1;
            top += ptotal;
            int btotal, boff = warp_excl_scan(nbod, lane, &btotal);
            for (int t = 0; t < nbod; t++) bodies[nb + boff + t] = bstart + t;
            nb += btotal;
            __syncwarp();
            while (nc >= 32) {
                nc -= 32;
                eval_cells<ORDER, B>(w, cells + nc, 32, stage, lane, s);
                ncell += 32;
            }
            while (nb >= 32) {
                nb -= 32;
                eval_bodies<B>(w, bodies + nb, 32, stage, sidx, lane, s);
                nbody += 32;
            }
        }
        if (nc > 0) eval_cells<ORDER, B>(w, cells, nc, stage, lane, s);
        if (nb > 0) eval_bodies<B>(w, bodies, nb, stage, sidx, lane, s);
        ncell += nc;
        nbody += nb;
#pragma unroll
        for (int k = 0; k < B; k++)
            if (lane + 32 * k < cnt) {
                int o = w.perm[s[k].me];
                w.acc[3 * (size_t)o + 0] = s[k].ax;
                w.acc[3 * (size_t)o + 1] = s[k].ay;
                w.acc[3 * (size_t)o + 2] = s[k].az;
                if (w.pot) w.pot[o] = s[k].phi;
                if (w.work) w.work[o] = (int)(ncell + nbody);
            }
        if (lane == 0) {
            atomicAdd(w.counts + 0, (unsigned long long)tests);
            atomicAdd(w.counts + 1, (unsigned long long)ncell);
            atomicAdd(w.counts + 2, (unsigned long long)nbody);
        }
    }
}

__global__ void k_zero_forces(float *acc, float *pot, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    acc[3 * i] = acc[3 * i + 1] = acc[3 * i + 2] = 0.0f;
    if (pot) pot[i] = 0.0f;
}

/* --------------------------------------------------- float64 direct sample -- */

constexpr int DIRECT_CHUNKS = 64;
struct sums4 {
    double x, y, z, w;
};

/* Partial sums over chunk blockIdx.y of the sources for each sampled body. */
__global__ void k_direct_sample(const float4 *b, int n, const int64_t *sample, int ns, double eps2,
                                sums4 *part) {
    __shared__ float4 tile[256];
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    int64_t me = s < ns ? sample[s] : -1;
    float4 q = me >= 0 ? b[me] : make_float4(0, 0, 0, 0);
    int per = (n + DIRECT_CHUNKS - 1) / DIRECT_CHUNKS;
    int j0 = blockIdx.y * per, j1 = min(n, j0 + per);
    double ax = 0, ay = 0, az = 0, ph = 0;
    for (int base = j0; base < j1; base += 256) {
        int j = base + threadIdx.x;
        tile[threadIdx.x] = j < j1 ? b[j] : make_float4(0, 0, 0, 0);
        __syncthreads();
        int m = min(256, j1 - base);
        for (int t = 0; t < m; t++) {
            if (base + t == me) continue;
            float4 p = tile[t];
            double dx = (double)p.x - q.x, dy = (double)p.y - q.y, dz = (double)p.z - q.z;
            double r2 = dx * dx + dy * dy + dz * dz + eps2;
            double inv = 1.0 / sqrt(r2), f = p.w * inv * inv * inv;
            ax += f * dx;
            ay += f * dy;
            az += f * dz;
            ph -= p.w * inv;
        }
        __syncthreads();
    }
    if (s < ns) part[(size_t)blockIdx.y * ns + s] = sums4{ax, ay, az, ph};
}

/* ------------------------------------------------------------- integrator -- */

__global__ void k_to_xyzm(const double *pos, const float *mass, int n, float4 *xyzm) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        xyzm[i] =
            make_float4((float)pos[3 * i], (float)pos[3 * i + 1], (float)pos[3 * i + 2], mass[i]);
}

/* v += h a; then, when dt != 0, x += dt v and the float32 copy for the next tree. */
__global__ void k_kick_drift(double *pos, double *vel, const float *acc, const float *mass, int n,
                             double h, double dt, float4 *xyzm) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x[3];
    for (int j = 0; j < 3; j++) {
        double v = vel[3 * i + j] + h * (double)acc[3 * i + j];
        vel[3 * i + j] = v;
        x[j] = pos[3 * i + j];
        if (dt != 0.0) {
            x[j] += dt * v;
            pos[3 * i + j] = x[j];
        }
    }
    if (dt != 0.0) xyzm[i] = make_float4((float)x[0], (float)x[1], (float)x[2], mass[i]);
}

/* Per block: kinetic, momentum (3), angular momentum (3), half sum of m phi. */
__global__ void k_energy(const double *pos, const double *vel, const float *mass, const float *pot,
                         int n, double *part) {
    __shared__ double red[8][256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (i < n) {
        const double *x = pos + 3 * i, *v = vel + 3 * i;
        double m = mass[i];
        v8[0] = 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (int j = 0; j < 3; j++) v8[1 + j] = m * v[j];
        v8[4] = m * (x[1] * v[2] - x[2] * v[1]);
        v8[5] = m * (x[2] * v[0] - x[0] * v[2]);
        v8[6] = m * (x[0] * v[1] - x[1] * v[0]);
        v8[7] = 0.5 * m * (double)pot[i];
    }
    for (int j = 0; j < 8; j++) red[j][threadIdx.x] = v8[j];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            for (int j = 0; j < 8; j++) red[j][threadIdx.x] += red[j][threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x < 8) part[(size_t)blockIdx.x * 8 + threadIdx.x] = red[threadIdx.x][0];
}

/* Float64 direct potential energy: per block, sum over its bodies i of
 * -m_i/2 sum_{j != i} m_j / sqrt(r^2 + eps^2). */
__global__ void k_direct_potential(const double *pos, const float *mass, int n, double eps2,
                                   double *part) {
    __shared__ double tile[4][256];
    __shared__ double red[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double x = 0, y = 0, z = 0, s = 0;
    if (i < n) x = pos[3 * i], y = pos[3 * i + 1], z = pos[3 * i + 2];
    for (int base = 0; base < n; base += 256) {
        int j = base + threadIdx.x;
        if (j < n) {
            tile[0][threadIdx.x] = pos[3 * j];
            tile[1][threadIdx.x] = pos[3 * j + 1];
            tile[2][threadIdx.x] = pos[3 * j + 2];
            tile[3][threadIdx.x] = mass[j];
        }
        __syncthreads();
        int m = min(256, n - base);
        for (int t = 0; t < m; t++) {
            if (base + t == i) continue;
            double dx = tile[0][t] - x, dy = tile[1][t] - y, dz = tile[2][t] - z;
            s += tile[3][t] / sqrt(dx * dx + dy * dy + dz * dz + eps2);
        }
        __syncthreads();
    }
    red[threadIdx.x] = i < n ? -0.5 * (double)mass[i] * s : 0.0;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = red[0];
}

int blocks(int64_t n, int t) {
    return (int)((n + t - 1) / t);
}

} // namespace

/* ------------------------------------------------------------ host state -- */

/* Host-array calls move their arrays in this many pieces, a host thread each, from
 * HOST_PARALLEL_MIN bodies (fewer stay on the calling thread). */
enum { HOST_PIECES = 16, HOST_PARALLEL_MIN = 65536 };

struct gpu_mp {
    int64_t cap = 0;
    float4 *sp = nullptr, *hot = nullptr, *cold0 = nullptr, *cold1 = nullptr, *lo = nullptr,
           *hi = nullptr;
    uint64_t *key = nullptr, *key2 = nullptr;
    int *idx = nullptr, *perm = nullptr, *iparent = nullptr, *lparent = nullptr, *arrived = nullptr,
        *gsize = nullptr, *gfirst = nullptr;
    int2 *child = nullptr, *range = nullptr;
    void *cub = nullptr;
    size_t cub_bytes = 0;
    int *small = nullptr; /* ngroups, next_group, err */
    unsigned *bbox = nullptr;
    unsigned long long *counts = nullptr;
    int *stack = nullptr;
    int walk_grid[2][2] = {{0, 0}, {0, 0}}; /* [order 0/2][1/2 bodies per lane] */
    cudaEvent_t ev[4] = {nullptr, nullptr, nullptr, nullptr};
};

static void release(gpu_mp *m) {
    void *p[] = {m->sp,      m->hot,   m->cold0,  m->cold1, m->lo,      m->hi,
                 m->key,     m->key2,  m->idx,    m->perm,  m->iparent, m->lparent,
                 m->arrived, m->gsize, m->gfirst, m->child, m->range,   m->cub};
    for (void *q : p) cudaFree(q);
    m->sp = m->hot = m->cold0 = m->cold1 = m->lo = m->hi = nullptr;
    m->key = m->key2 = nullptr;
    m->idx = m->perm = m->iparent = m->lparent = m->arrived = m->gsize = m->gfirst = nullptr;
    m->child = m->range = nullptr;
    m->cub = nullptr;
    m->cap = 0;
    m->cub_bytes = 0;
}

static canopy_status dalloc(void **p, size_t bytes, const char *what) {
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 16);
    if (e != cudaSuccess)
        return canopy_fail(CANOPY_ERR_DEVICE, "GPU gravity: allocating %zu bytes for %s: %s", bytes,
                           what, cudaGetErrorString(e));
    return CANOPY_OK;
}

extern "C" canopy_status canopy_gpu_mp_create(gpu_mp **out) {
    *out = nullptr;
    int dev = 0, sms = 0;
    canopy_status s = canopy_gpu_check(cudaGetDevice(&dev), "GPU gravity: device");
    if (!s)
        s = canopy_gpu_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                             "GPU gravity: device attributes");
    if (s) return s;
    gpu_mp *m = new (std::nothrow) gpu_mp;
    if (!m) return canopy_fail(CANOPY_ERR_NOMEM, "GPU gravity: out of memory");
    int grid = 0;
    void (*kernels[2][2])(walk_args) = {{k_walk<0, 1>, k_walk<0, 2>}, {k_walk<2, 1>, k_walk<2, 2>}};
    for (int o = 0; o < 2 && !s; o++)
        for (int b = 0; b < 2 && !s; b++) {
            int per = 0;
            s = canopy_gpu_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernels[o][b],
                                                                               WALK_WARPS * 32, 0),
                                 "GPU gravity: occupancy");
            m->walk_grid[o][b] = sms * (per > 0 ? per : 1);
            if (m->walk_grid[o][b] > grid) grid = m->walk_grid[o][b];
        }
    if (!s)
        s = dalloc((void **)&m->stack, sizeof(int) * (size_t)grid * WALK_WARPS * STACK_CAP,
                   "walk stacks");
    if (!s) s = dalloc((void **)&m->small, 4 * sizeof(int), "walk counters");
    if (!s) s = dalloc((void **)&m->bbox, 6 * sizeof(unsigned), "bounding box");
    if (!s) s = dalloc((void **)&m->counts, 3 * sizeof(unsigned long long), "walk counts");
    for (int i = 0; i < 4 && !s; i++)
        s = canopy_gpu_check(cudaEventCreate(&m->ev[i]), "GPU gravity: events");
    if (s) {
        canopy_gpu_mp_free(m);
        return s;
    }
    *out = m;
    return CANOPY_OK;
}

extern "C" void canopy_gpu_mp_free(gpu_mp *m) {
    if (!m) return;
    release(m);
    cudaFree(m->stack);
    cudaFree(m->small);
    cudaFree(m->bbox);
    cudaFree(m->counts);
    for (int i = 0; i < 4; i++)
        if (m->ev[i]) cudaEventDestroy(m->ev[i]);
    delete m;
}

static canopy_status reserve(gpu_mp *m, int64_t n) {
    if (n <= m->cap) return CANOPY_OK;
    release(m);
    int64_t c = n + n / 4 + 64;
    size_t f4 = sizeof(float4) * (size_t)c, i4 = sizeof(int) * (size_t)c;
    canopy_status s = CANOPY_OK;
    struct {
        void **p;
        size_t bytes;
    } want[] = {{(void **)&m->sp, f4},
                {(void **)&m->hot, f4},
                {(void **)&m->cold0, f4},
                {(void **)&m->cold1, f4},
                {(void **)&m->lo, f4},
                {(void **)&m->hi, f4},
                {(void **)&m->key, 8 * (size_t)c},
                {(void **)&m->key2, 8 * (size_t)c},
                {(void **)&m->idx, i4},
                {(void **)&m->perm, i4},
                {(void **)&m->iparent, i4},
                {(void **)&m->lparent, i4},
                {(void **)&m->arrived, i4},
                {(void **)&m->gsize, i4},
                {(void **)&m->gfirst, i4},
                {(void **)&m->child, 2 * i4},
                {(void **)&m->range, 2 * i4}};
    for (auto &w : want)
        if (!s) s = dalloc(w.p, w.bytes, "tree arrays");
    size_t b1 = 0, b2 = 0;
    if (!s)
        s = canopy_gpu_check(cub::DeviceRadixSort::SortPairs(nullptr, b1, m->key, m->key2, m->idx,
                                                             m->perm, (int)c, 0, 63),
                             "GPU gravity: sort size");
    if (!s)
        s = canopy_gpu_check(cub::DeviceSelect::If(nullptr, b2, thrust::counting_iterator<int>(0),
                                                   m->gfirst, m->small, (int)c, nonzero{m->gsize}),
                             "GPU gravity: select size");
    m->cub_bytes = b1 > b2 ? b1 : b2;
    if (!s) s = dalloc(&m->cub, m->cub_bytes, "sort scratch");
    if (s) {
        release(m);
        return s;
    }
    m->cap = c;
    return CANOPY_OK;
}

extern "C" canopy_status canopy_gpu_mp_forces(gpu_mp *m, const float *d_xyzm, int64_t n,
                                              const gpu_mp_params *p, float *d_acc, float *d_pot,
                                              int *d_work, gpu_mp_timing *t) {
    if (t) memset(t, 0, sizeof *t);
    if (n <= 0) return CANOPY_OK;
    if (n >= (int64_t)1 << 30)
        return canopy_fail(CANOPY_ERR_INVALID, "GPU gravity: too many bodies (%lld)", (long long)n);
    int leaf = p->leaf > 0 ? p->leaf : 8;
    if (leaf > GPU_MP_LEAF_MAX) leaf = GPU_MP_LEAF_MAX;
    if (leaf < 2) leaf = 2;
    /* 64-body buckets halve the walks per body but also the warps: below ~500k bodies
     * too few to fill the GPU (100k: 723 against 927 steps/s on an H200) */
    int group = p->group == 32 || p->group == 64 ? p->group : n >= 500000 ? 64 : 32;
    const int N = (int)n;
    const float4 *b = (const float4 *)d_xyzm;
    if (N == 1) {
        k_zero_forces<<<1, 32>>>(d_acc, d_pot, 1);
        if (d_work) cudaMemsetAsync(d_work, 0, sizeof(int));
        return canopy_gpu_check(cudaGetLastError(), "GPU gravity: launch");
    }
    canopy_status s = reserve(m, n);
    if (s) return s;
    cudaStream_t st = 0;
    if (t) cudaEventRecord(m->ev[0], st);
    /* build: box, keys, sort, bodies in key order, radix tree */
    k_bbox_init<<<1, 32, 0, st>>>(m->bbox);
    k_bbox<<<blocks(N, 256) < 1024 ? blocks(N, 256) : 1024, 256, 0, st>>>(b, N, m->bbox);
    k_keys<<<blocks(N, 256), 256, 0, st>>>(b, N, m->bbox, m->key, m->idx);
    size_t cb = m->cub_bytes;
    cudaError_t e =
        cub::DeviceRadixSort::SortPairs(m->cub, cb, m->key, m->key2, m->idx, m->perm, N, 0, 63, st);
    if ((s = canopy_gpu_check(e, "GPU gravity: sort"))) return s;
    k_gather<<<blocks(N, 256), 256, 0, st>>>(b, m->perm, N, m->sp);
    k_radix_tree<<<blocks(N - 1, 256), 256, 0, st>>>(m->key2, N, m->child, m->range, m->iparent,
                                                     m->lparent);
    if (t) cudaEventRecord(m->ev[1], st);
    /* moments bottom-up, buckets */
    cudaMemsetAsync(m->arrived, 0, sizeof(int) * (size_t)N, st);
    mp_tree tr = {m->sp, m->child, m->range, m->hot, m->cold0, m->cold1, m->lo, m->hi};
    k_moments<<<blocks(N, 256), 256, 0, st>>>(tr, m->iparent, m->lparent, m->arrived, N,
                                              1.0f / p->theta);
    cudaMemsetAsync(m->gsize, 0, sizeof(int) * (size_t)N, st);
    k_buckets<<<blocks(N - 1, 256), 256, 0, st>>>(m->child, m->range, N, group, m->gsize);
    cb = m->cub_bytes;
    e = cub::DeviceSelect::If(m->cub, cb, thrust::counting_iterator<int>(0), m->gfirst, m->small, N,
                              nonzero{m->gsize}, st);
    if ((s = canopy_gpu_check(e, "GPU gravity: buckets"))) return s;
    if (t) cudaEventRecord(m->ev[2], st);
    /* walk */
    cudaMemsetAsync(m->small + 1, 0, 2 * sizeof(int), st);
    cudaMemsetAsync(m->counts, 0, 3 * sizeof(unsigned long long), st);
    walk_args w;
    w.sp = m->sp;
    w.perm = m->perm;
    w.hot = m->hot;
    w.cold0 = m->cold0;
    w.cold1 = m->cold1;
    w.child = m->child;
    w.range = m->range;
    w.gfirst = m->gfirst;
    w.gsize = m->gsize;
    w.ngroups = m->small;
    w.next_group = m->small + 1;
    w.err = m->small + 2;
    w.stack = m->stack;
    w.counts = m->counts;
    w.acc = d_acc;
    w.pot = d_pot;
    w.work = d_work;
    w.eps2 = p->softening * p->softening;
    w.leaf = leaf;
    int o2 = p->order == 2, b2 = group > 32;
    if (o2 && b2)
        k_walk<2, 2><<<m->walk_grid[1][1], WALK_WARPS * 32, 0, st>>>(w);
    else if (o2)
        k_walk<2, 1><<<m->walk_grid[1][0], WALK_WARPS * 32, 0, st>>>(w);
    else if (b2)
        k_walk<0, 2><<<m->walk_grid[0][1], WALK_WARPS * 32, 0, st>>>(w);
    else
        k_walk<0, 1><<<m->walk_grid[0][0], WALK_WARPS * 32, 0, st>>>(w);
    if (t) cudaEventRecord(m->ev[3], st);
    if ((s = canopy_gpu_check(cudaGetLastError(), "GPU gravity: launch"))) return s;
    if (!t) return CANOPY_OK;
    int small[3];
    unsigned long long counts[3];
    if ((s = canopy_gpu_check(cudaMemcpy(small, m->small, sizeof small, cudaMemcpyDeviceToHost),
                              "GPU gravity: walk")) ||
        (s = canopy_gpu_check(cudaMemcpy(counts, m->counts, sizeof counts, cudaMemcpyDeviceToHost),
                              "GPU gravity: walk")))
        return s;
    if (small[2])
        return canopy_fail(CANOPY_ERR_INTERNAL, "GPU gravity: a walk stack overflowed (%d nodes)",
                           STACK_CAP);
    float ms[3];
    for (int i = 0; i < 3; i++) cudaEventElapsedTime(&ms[i], m->ev[i], m->ev[i + 1]);
    t->build_ms = ms[0];
    t->moments_ms = ms[1];
    t->walk_ms = ms[2];
    t->total_ms = (double)ms[0] + ms[1] + ms[2];
    t->groups = small[0];
    t->tests = (int64_t)counts[0];
    t->cells = (int64_t)counts[1];
    t->bodies = (int64_t)counts[2];
    return CANOPY_OK;
}

/* The walk's error flag after an untimed evaluation (synchronises). */
static canopy_status check_walk(gpu_mp *m) {
    int err = 0;
    canopy_status s = canopy_gpu_check(
        cudaMemcpy(&err, m->small + 2, sizeof err, cudaMemcpyDeviceToHost), "GPU gravity: walk");
    if (!s && err)
        s = canopy_fail(CANOPY_ERR_INTERNAL, "GPU gravity: a walk stack overflowed (%d nodes)",
                        STACK_CAP);
    return s;
}

/* Host bodies (any stride, mass or 1/n) packed as x y z m and uploaded. */
static canopy_status upload_xyzm(canopy_points b, const float *mass, canopy_gpu_buffers &B,
                                 float **d) {
    float *h = (float *)malloc(sizeof(float) * 4 * (size_t)(b.n > 0 ? b.n : 1));
    if (!h) return canopy_fail(CANOPY_ERR_NOMEM, "GPU gravity: out of memory");
    for (int64_t i = 0; i < b.n; i++) {
        const float *q = canopy_point(b, i);
        h[4 * i] = q[0], h[4 * i + 1] = q[1], h[4 * i + 2] = q[2];
        h[4 * i + 3] = mass ? mass[i] : 1.0f / (float)b.n;
    }
    canopy_status s = B.upload(d, h, 4 * b.n, "bodies");
    free(h);
    return s;
}

/* What host-array calls keep between them: one evaluator (its buffers grown to the
 * largest call) and the bodies' pinned and device arrays, so that a call after the first
 * allocates nothing; kept until the process ends, as the build pool's are. A call that
 * finds them busy (another thread) works with its own. */
struct host_calls {
    gpu_mp *m = nullptr;
    float *h_xyzm = nullptr, *h_out = nullptr; /* pinned: bodies up, acc and pot down */
    float *d_xyzm = nullptr, *d_acc = nullptr, *d_pot = nullptr;
    int *d_work = nullptr; /* host-array calls that ask for each body's interactions */
    cudaEvent_t piece[HOST_PIECES] = {};
    int64_t cap = 0, pinned_cap = 0;     /* bodies the device and the pinned arrays hold */
    unsigned long long *d_bad = nullptr; /* device-pointer calls: the first bad body */
};

static void host_calls_release(host_calls &k) {
    canopy_gpu_mp_free(k.m);
    cudaFreeHost(k.h_xyzm);
    cudaFreeHost(k.h_out);
    for (cudaEvent_t e : k.piece)
        if (e) cudaEventDestroy(e);
    void *p[] = {k.d_xyzm, k.d_acc, k.d_pot, k.d_work, k.d_bad};
    for (void *q : p) cudaFree(q);
    k = host_calls();
}

/* Room for n bodies: device arrays (acc and pot for host-array calls only), pinned
 * ones when `pinned`. */
static canopy_status host_calls_reserve(host_calls &k, int64_t n, bool pinned) {
    canopy_status s = k.m ? CANOPY_OK : canopy_gpu_mp_create(&k.m);
    if (!s && !k.d_bad) s = dalloc((void **)&k.d_bad, sizeof *k.d_bad, "a flag");
    for (int i = 0; i < HOST_PIECES && !s && pinned; i++)
        if (!k.piece[i])
            s = canopy_gpu_check(cudaEventCreateWithFlags(&k.piece[i], cudaEventDisableTiming),
                                 "GPU gravity: events");
    if (!s && n > k.cap) {
        void *p[] = {k.d_xyzm, k.d_acc, k.d_pot, k.d_work};
        for (void *q : p) cudaFree(q);
        k.d_xyzm = k.d_acc = k.d_pot = nullptr;
        k.d_work = nullptr;
        k.cap = 0;
        if ((s = dalloc((void **)&k.d_xyzm, sizeof(float) * 4 * (size_t)n, "bodies")) ||
            (s = dalloc((void **)&k.d_acc, sizeof(float) * 3 * (size_t)n, "accelerations")) ||
            (s = dalloc((void **)&k.d_pot, sizeof(float) * (size_t)n, "potentials")) ||
            (s = dalloc((void **)&k.d_work, sizeof(int) * (size_t)n, "interaction counts")))
            return s;
        k.cap = n;
    }
    if (!s && pinned && n > k.pinned_cap) {
        cudaFreeHost(k.h_xyzm);
        cudaFreeHost(k.h_out);
        k.h_xyzm = k.h_out = nullptr;
        k.pinned_cap = 0;
        if ((s = canopy_gpu_check(cudaMallocHost(&k.h_xyzm, sizeof(float) * 4 * (size_t)n),
                                  "GPU gravity: pinned bodies")) ||
            (s = canopy_gpu_check(cudaMallocHost(&k.h_out, sizeof(float) * 4 * (size_t)n),
                                  "GPU gravity: pinned results")))
            return s;
        k.pinned_cap = n;
    }
    return s;
}

static std::mutex kept_lock;
static host_calls kept;

/* The first failure among a call's pieces, as a status. */
static canopy_status pieces_ok(const cudaError_t (&e)[HOST_PIECES], const char *what) {
    for (cudaError_t x : e)
        if (x != cudaSuccess) return canopy_gpu_check(x, what);
    return CANOPY_OK;
}

/* The host arrays go up and come back in HOST_PIECES pieces through the kept pinned
 * buffers, one host thread per piece: each packs its piece and queues its copy (or waits
 * for its piece's copy and unpacks it), so the copy engine moves one piece while the
 * threads work on the others and the call pays for about one parallel pass over its
 * memory. One parallel region per direction: with passive waiting every region costs a
 * wake-up of the team (bench/gravity_copies.cu measured the choices). */
extern "C" canopy_status canopy_gpu_mp_forces_host(canopy_points bodies, const float *mass,
                                                   const gpu_mp_params *p, float *acc, float *pot,
                                                   int32_t *work, gpu_mp_timing *t) {
    if (bodies.n == 0) return CANOPY_OK;
    const int64_t n = bodies.n, per = (n + HOST_PIECES - 1) / HOST_PIECES;
    const float m1 = 1.0f / (float)n;
    std::unique_lock<std::mutex> hold(kept_lock, std::try_to_lock);
    host_calls own, &k = hold.owns_lock() ? kept : own;
    canopy_status s = host_calls_reserve(k, n, true);
    cudaError_t e[HOST_PIECES] = {};
    double t0 = canopy_now();
    if (!s) {
        float *h = k.h_xyzm;
#pragma omp parallel for schedule(static, 1) if (n >= HOST_PARALLEL_MIN)
        for (int i = 0; i < HOST_PIECES; i++) {
            int64_t lo = i * per, hi = lo + per < n ? lo + per : n;
            if (lo >= hi) continue;
            for (int64_t b = lo; b < hi; b++) {
                const float *q = canopy_point(bodies, b);
                h[4 * b] = q[0], h[4 * b + 1] = q[1], h[4 * b + 2] = q[2];
                h[4 * b + 3] = mass ? mass[b] : m1;
            }
            e[i] =
                cudaMemcpyAsync(k.d_xyzm + 4 * lo, h + 4 * lo,
                                sizeof(float) * 4 * (size_t)(hi - lo), cudaMemcpyHostToDevice, 0);
        }
        s = pieces_ok(e, "GPU gravity: upload");
    }
    if (!s) s = canopy_gpu_check(cudaStreamSynchronize(0), "GPU gravity: upload");
    double t1 = canopy_now();
    if (!s)
        s = canopy_gpu_mp_forces(k.m, k.d_xyzm, n, p, k.d_acc, pot ? k.d_pot : nullptr,
                                 work ? k.d_work : nullptr, t);
    if (!s && !t) s = check_walk(k.m);
    double t2 = canopy_now();
    if (!s) {
        /* pot (n floats) rides behind acc (3n) in the pinned results */
        float *h_acc = k.h_out, *h_pot = k.h_out + 3 * n;
#pragma omp parallel for schedule(static, 1) if (n >= HOST_PARALLEL_MIN)
        for (int i = 0; i < HOST_PIECES; i++) {
            int64_t lo = i * per, hi = lo + per < n ? lo + per : n;
            if (lo >= hi) continue;
            size_t c3 = sizeof(float) * 3 * (size_t)(hi - lo),
                   c1 = sizeof(float) * (size_t)(hi - lo);
            cudaError_t x =
                cudaMemcpyAsync(h_acc + 3 * lo, k.d_acc + 3 * lo, c3, cudaMemcpyDeviceToHost, 0);
            if (x == cudaSuccess && pot)
                x = cudaMemcpyAsync(h_pot + lo, k.d_pot + lo, c1, cudaMemcpyDeviceToHost, 0);
            if (x == cudaSuccess) x = cudaEventRecord(k.piece[i], 0);
            if (x == cudaSuccess) x = cudaEventSynchronize(k.piece[i]);
            if (x == cudaSuccess) {
                memcpy(acc + 3 * lo, h_acc + 3 * lo, c3);
                if (pot) memcpy(pot + lo, h_pot + lo, c1);
            }
            e[i] = x;
        }
        s = pieces_ok(e, "GPU gravity: download");
    }
    if (!s && work)
        s = canopy_gpu_check(
            cudaMemcpy(work, k.d_work, sizeof(int) * (size_t)n, cudaMemcpyDeviceToHost),
            "GPU gravity: interaction counts");
    if (s) cudaStreamSynchronize(0); /* no copy may still target the pinned buffers */
    if (t) {
        t->upload_ms = (t1 - t0) * 1e3;
        t->download_ms = (canopy_now() - t2) * 1e3;
    }
    if (!hold.owns_lock() || s) host_calls_release(k);
    return s;
}

/* Bodies (any stride) and masses (NULL: 1/n) on the device packed as x y z m; the
 * first body with a non-finite coordinate or a mass that is not finite and >= 0 in
 * *bad (untouched when none). */
__global__ void k_pack_xyzm(const float *pos, int64_t stride, const float *mass, int64_t n,
                            float4 *out, unsigned long long *bad) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const float *q = pos + i * stride;
        float m = mass ? mass[i] : 1.0f / (float)n;
        if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2]) || !(m >= 0.0f) || !isfinite(m))
            atomicMin(bad, (unsigned long long)i);
        out[i] = make_float4(q[0], q[1], q[2], m);
    }
}

/* Forces of bodies given by device pointers, results to device arrays, after the work
 * queued on `stream`; synchronous. */
static canopy_status gpu_mp_forces_device(canopy_points bodies, const float *mass,
                                          const gpu_mp_params *p, float *acc, float *pot,
                                          void *stream, gpu_mp_timing *t) {
    const int64_t n = bodies.n;
    if (n == 0) return CANOPY_OK;
    if (!canopy_gpu_on_device(bodies.data) || (mass && !canopy_gpu_on_device(mass)) ||
        !canopy_gpu_on_device(acc) || (pot && !canopy_gpu_on_device(pot)))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity (device): bodies, masses, accelerations and potentials must "
                           "be device memory");
    std::unique_lock<std::mutex> hold(kept_lock, std::try_to_lock);
    host_calls own, &k = hold.owns_lock() ? kept : own;
    unsigned long long bad = ~0ull;
    canopy_status s = host_calls_reserve(k, n, false);
    if (!s) s = canopy_gpu_after_stream(stream);
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(k.d_bad, &bad, sizeof bad, cudaMemcpyHostToDevice),
                             "GPU gravity: a flag");
    if (!s) {
        int64_t nb = (n + 255) / 256;
        k_pack_xyzm<<<(int)(nb < 4096 ? nb : 4096), 256>>>(bodies.data, bodies.stride, mass, n,
                                                           (float4 *)k.d_xyzm, k.d_bad);
        s = canopy_gpu_check(cudaMemcpy(&bad, k.d_bad, sizeof bad, cudaMemcpyDeviceToHost),
                             "GPU gravity: packing the bodies");
    }
    if (!s && bad != ~0ull)
        s = canopy_fail(CANOPY_ERR_INVALID,
                        "gravity (device): body %lld has a non-finite coordinate or a mass "
                        "that is not finite and >= 0",
                        (long long)bad);
    if (!s) s = canopy_gpu_mp_forces(k.m, k.d_xyzm, n, p, acc, pot, nullptr, t);
    if (!s && !t) s = check_walk(k.m);
    if (!hold.owns_lock() || s) host_calls_release(k);
    return s;
}

extern "C" canopy_status canopy_gravity_multipole_gpu(canopy_points bodies, const float *mass,
                                                      const canopy_gravity_options *g, int32_t leaf,
                                                      float *acc, float *pot, int device,
                                                      void *stream, canopy_stats *stats) {
    gpu_mp_params p = {g->theta, g->order, g->softening, leaf, 0};
    gpu_mp_timing t{};
    canopy_status s =
        device
            ? gpu_mp_forces_device(bodies, mass, &p, acc, pot, stream, stats ? &t : nullptr)
            : canopy_gpu_mp_forces_host(bodies, mass, &p, acc, pot, nullptr, stats ? &t : nullptr);
    if (!s && stats) {
        stats->build_seconds = (t.build_ms + t.moments_ms) * 1e-3;
        stats->traverse_seconds = t.walk_ms * 1e-3;
        stats->upload_seconds = t.upload_ms * 1e-3;
        stats->download_seconds = t.download_ms * 1e-3;
        stats->transfer_seconds = stats->upload_seconds + stats->download_seconds;
        stats->queries = t.groups;
        stats->nodes_per_query = t.groups ? (double)t.tests / (double)t.groups : 0.0;
        stats->backend = CANOPY_BACKEND_GPU;
        stats->tree_nodes = bodies.n > 1 ? (int32_t)(bodies.n - 1) : 0;
    }
    return s;
}

extern "C" canopy_status canopy_gpu_mp_direct_sample(canopy_points bodies, const float *mass,
                                                     float softening, const int64_t *sample,
                                                     int64_t ns, double *acc, double *pot) {
    if (ns == 0) return CANOPY_OK;
    canopy_gpu_buffers B;
    float *d_b = nullptr;
    int64_t *d_s = nullptr;
    sums4 *d_part = nullptr;
    canopy_status s = upload_xyzm(bodies, mass, B, &d_b);
    if (!s) s = B.upload(&d_s, sample, ns, "sample");
    if (!s) s = B.alloc(&d_part, ns * DIRECT_CHUNKS, "partial sums");
    if (s) return s;
    double e2 = (double)softening * softening;
    k_direct_sample<<<dim3(blocks(ns, 256), DIRECT_CHUNKS), 256>>>(
        (const float4 *)d_b, (int)bodies.n, d_s, (int)ns, e2, d_part);
    sums4 *h = (sums4 *)malloc(sizeof(sums4) * (size_t)ns * DIRECT_CHUNKS);
    if (!h) return canopy_fail(CANOPY_ERR_NOMEM, "GPU direct sum: out of memory");
    s = canopy_gpu_check(
        cudaMemcpy(h, d_part, sizeof(sums4) * (size_t)ns * DIRECT_CHUNKS, cudaMemcpyDeviceToHost),
        "GPU direct sum");
    for (int64_t i = 0; !s && i < ns; i++) {
        double a[4] = {0, 0, 0, 0};
        for (int c = 0; c < DIRECT_CHUNKS; c++) {
            sums4 v = h[(size_t)c * ns + i];
            a[0] += v.x, a[1] += v.y, a[2] += v.z, a[3] += v.w;
        }
        for (int j = 0; j < 3; j++) acc[3 * i + j] = a[j];
        if (pot) pot[i] = a[3];
    }
    free(h);
    return s;
}

/* ----------------------------------------------------------- integrator -- */

struct gpu_nbody {
    int64_t n = 0;
    gpu_mp_params p;
    gpu_mp *mp = nullptr;
    double *pos = nullptr, *vel = nullptr, *part = nullptr;
    float *mass = nullptr, *acc = nullptr, *pot = nullptr;
    float4 *xyzm = nullptr;
};

extern "C" void canopy_gpu_nbody_free(gpu_nbody *s) {
    if (!s) return;
    canopy_gpu_mp_free(s->mp);
    void *p[] = {s->pos, s->vel, s->part, s->mass, s->acc, s->pot, s->xyzm};
    for (void *q : p) cudaFree(q);
    delete s;
}

extern "C" canopy_status canopy_gpu_nbody_create(const double *pos, const double *vel,
                                                 const float *mass, int64_t n,
                                                 const gpu_mp_params *p, gpu_nbody **out) {
    *out = nullptr;
    if (n < 1 || n >= (int64_t)1 << 30)
        return canopy_fail(CANOPY_ERR_INVALID, "GPU nbody: %lld bodies", (long long)n);
    gpu_nbody *s = new (std::nothrow) gpu_nbody;
    if (!s) return canopy_fail(CANOPY_ERR_NOMEM, "GPU nbody: out of memory");
    s->n = n;
    s->p = *p;
    size_t n3 = 3 * (size_t)n;
    float *hm = nullptr;
    canopy_status st = canopy_gpu_mp_create(&s->mp);
    if (!st) st = dalloc((void **)&s->pos, n3 * sizeof(double), "positions");
    if (!st) st = dalloc((void **)&s->vel, n3 * sizeof(double), "velocities");
    if (!st) st = dalloc((void **)&s->part, 8 * sizeof(double) * (size_t)blocks(n, 256), "sums");
    if (!st) st = dalloc((void **)&s->mass, (size_t)n * sizeof(float), "masses");
    if (!st) st = dalloc((void **)&s->acc, n3 * sizeof(float), "accelerations");
    if (!st) st = dalloc((void **)&s->pot, (size_t)n * sizeof(float), "potentials");
    if (!st) st = dalloc((void **)&s->xyzm, (size_t)n * sizeof(float4), "bodies");
    if (!st && !mass) {
        hm = (float *)malloc(sizeof(float) * (size_t)n);
        if (!hm) st = canopy_fail(CANOPY_ERR_NOMEM, "GPU nbody: out of memory");
        for (int64_t i = 0; hm && i < n; i++) hm[i] = 1.0f / (float)n;
    }
    if (!st)
        st = canopy_gpu_check(cudaMemcpy(s->pos, pos, n3 * sizeof(double), cudaMemcpyHostToDevice),
                              "GPU nbody: upload");
    if (!st)
        st = canopy_gpu_check(cudaMemcpy(s->vel, vel, n3 * sizeof(double), cudaMemcpyHostToDevice),
                              "GPU nbody: upload");
    if (!st)
        st = canopy_gpu_check(cudaMemcpy(s->mass, mass ? mass : hm, (size_t)n * sizeof(float),
                                         cudaMemcpyHostToDevice),
                              "GPU nbody: upload");
    free(hm);
    if (!st) {
        k_to_xyzm<<<blocks(n, 256), 256>>>(s->pos, s->mass, (int)n, s->xyzm);
        st = canopy_gpu_mp_forces(s->mp, (const float *)s->xyzm, n, &s->p, s->acc, s->pot, nullptr,
                                  nullptr);
    }
    if (!st) st = check_walk(s->mp);
    if (st) {
        canopy_gpu_nbody_free(s);
        return st;
    }
    *out = s;
    return CANOPY_OK;
}

extern "C" canopy_status canopy_gpu_nbody_step(gpu_nbody *s, double dt, int64_t steps) {
    int nb = blocks(s->n, 256), n = (int)s->n;
    for (int64_t k = 0; k < steps; k++) {
        k_kick_drift<<<nb, 256>>>(s->pos, s->vel, s->acc, s->mass, n, 0.5 * dt, dt, s->xyzm);
        canopy_status st = canopy_gpu_mp_forces(s->mp, (const float *)s->xyzm, s->n, &s->p, s->acc,
                                                s->pot, nullptr, nullptr);
        if (st) return st;
        k_kick_drift<<<nb, 256>>>(s->pos, s->vel, s->acc, s->mass, n, 0.5 * dt, 0.0, s->xyzm);
    }
    canopy_status st = canopy_gpu_check(cudaGetLastError(), "GPU nbody: step");
    return st ? st : check_walk(s->mp);
}

extern "C" canopy_status canopy_gpu_nbody_download(const gpu_nbody *s, double *pos, double *vel) {
    size_t bytes = 3 * sizeof(double) * (size_t)s->n;
    canopy_status st =
        canopy_gpu_check(cudaMemcpy(pos, s->pos, bytes, cudaMemcpyDeviceToHost), "GPU nbody");
    if (!st)
        st = canopy_gpu_check(cudaMemcpy(vel, s->vel, bytes, cudaMemcpyDeviceToHost), "GPU nbody");
    return st;
}

extern "C" canopy_status canopy_gpu_nbody_energy(const gpu_nbody *s, int direct, double *kinetic,
                                                 double *potential, double momentum[3],
                                                 double angular[3]) {
    int nb = blocks(s->n, 256), n = (int)s->n;
    size_t bytes = 8 * sizeof(double) * (size_t)nb;
    double *h = (double *)malloc(bytes);
    if (!h) return canopy_fail(CANOPY_ERR_NOMEM, "GPU nbody: out of memory");
    k_energy<<<nb, 256>>>(s->pos, s->vel, s->mass, s->pot, n, s->part);
    canopy_status st = canopy_gpu_check(cudaMemcpy(h, s->part, bytes, cudaMemcpyDeviceToHost),
                                        "GPU nbody: energy");
    double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int b = 0; !st && b < nb; b++)
        for (int j = 0; j < 8; j++) v[j] += h[8 * b + j];
    if (!st && direct) {
        double e2 = (double)s->p.softening * s->p.softening;
        k_direct_potential<<<nb, 256>>>(s->pos, s->mass, n, e2, s->part);
        st = canopy_gpu_check(
            cudaMemcpy(h, s->part, sizeof(double) * (size_t)nb, cudaMemcpyDeviceToHost),
            "GPU nbody: direct potential");
        v[7] = 0.0;
        for (int b = 0; !st && b < nb; b++) v[7] += h[b];
    }
    free(h);
    if (st) return st;
    *kinetic = v[0];
    for (int j = 0; j < 3; j++) momentum[j] = v[1 + j], angular[j] = v[4 + j];
    *potential = v[7];
    return CANOPY_OK;
}
