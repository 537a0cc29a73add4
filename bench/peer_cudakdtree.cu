/* SPDX-License-Identifier: MIT */
/* Issue 30's GPU kNN peer: cudaKDTree (github ingowald/cudaKDTree, never committed here)
 * on the points of bench_edges_gpu.c (clust2 200k + 200k, cities 135k self-query: the
 * points as queries, as canopy's rows have them; rand7 200k + 200k uniform 7-D, the same
 * generator calls and seeds), timed as canopy's rows are: host wall of a launch and its
 * synchronisation, queries and results already on the device, medians with min-max of
 * REPS runs after 3 warm-ups (the CUDA-event time of the kernel beside it). Every tree
 * and walk it has, in 2-D (float2) and 7-D (its cukd::vec_float<7>, the type its own
 * tests use above 4-D): the balanced tree (round-robin split dimensions), the balanced
 * "xd" tree (each node's split dimension stored in the point, the widest of its
 * subtree) and the spatial tree; the stack-based, stack-free (balanced trees only) and
 * closest-corner-tracking (cct) walks; kNN k = 8 with its fixed and heap candidate
 * lists, and closest point (NN). Each variant's k-th distance is checked against brute
 * force on 200 queries. Then the same queries sorted in Morton order beforehand (not
 * timed). Not built by CMake: bench/run_peer_cudakdtree.sh builds and runs it beside
 * canopy's rows; by hand, on the GPU machine,
 *   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -I CUKD -I include \
 *        bench/peer_cudakdtree.cu -L BUILD -lcanopy -Xlinker -rpath=BUILD
 * Usage: peer_cudakdtree [reps] (one line a variant). */
#include "canopy.h"

#include <cukd/builder.h>
#include <cukd/fcp.h>
#include <cukd/knn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

enum { WARM = 3, K = 8, SAMPLES = 200 };

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "peer_cudakdtree: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

template <class P> struct dims {
    enum { D = cukd::num_dims_of<P>::value };
    /* the generators write D floats a point, which the peer's arrays must match */
    static_assert(sizeof(P) == D * sizeof(float), "point type is not D packed floats");
};

template <class P> __host__ __device__ float coord(const P &p, int c) {
    return cukd::point_traits<P>::get_coord(p, c);
}

template <class P> __host__ __device__ float dist2(const P &a, const P &b) {
    float s = 0;
    for (int c = 0; c < dims<P>::D; c++) {
        const float t = coord(a, c) - coord(b, c);
        s += t * t;
    }
    return s;
}

/* The xd tree's point: the split dimension the builder picks for its node beside it. */
template <class P> struct xd_point {
    P p;
    int dim;
};

template <class P> struct xd_traits : public cukd::default_data_traits<P> {
    enum { has_explicit_dim = true };
    using data_t = xd_point<P>;
    static __host__ __device__ const P &get_point(const data_t &n) { return n.p; }
    static __host__ __device__ float get_coord(const data_t &n, int c) { return coord(n.p, c); }
    static __host__ __device__ int get_dim(const data_t &n) { return n.dim; }
    static __host__ __device__ void set_dim(data_t &n, int c) { n.dim = c; }
};

enum walk { STACK, FREE, CCT };

/* A balanced tree: the points reordered in place (data type Data described by Traits)
 * and the world box the cct walk starts from. */
template <class P, class Data, class Traits> struct balanced {
    const Data *pts;
    int n;
    const cukd::box_t<P> *bounds;
};

template <int W, class List, class P, class Data, class Traits>
__device__ void knn_walk(List &r, const P &q, const balanced<P, Data, Traits> &t) {
    if constexpr (W == STACK) cukd::stackBased::knn<List, Data, Traits>(r, q, t.pts, t.n);
    if constexpr (W == FREE) cukd::stackFree::knn<List, Data, Traits>(r, q, t.pts, t.n);
    if constexpr (W == CCT) cukd::cct::knn<List, Data, Traits>(r, q, *t.bounds, t.pts, t.n);
}

template <int W, class List, class P>
__device__ void knn_walk(List &r, const P &q, const cukd::SpatialKDTree<P> &t) {
    static_assert(W != FREE, "the spatial tree has no stack-free walk");
    if constexpr (W == STACK) cukd::stackBased::knn<List, P>(r, t, q);
    if constexpr (W == CCT) cukd::cct::knn<List, P>(r, t, q);
}

template <int W, class P, class Data, class Traits>
__device__ int fcp_walk(const P &q, const balanced<P, Data, Traits> &t) {
    if constexpr (W == STACK)
        return cukd::stackBased::fcp<Data, Traits>(q, t.pts, t.n);
    else if constexpr (W == FREE)
        return cukd::stackFree::fcp<Data, Traits>(q, t.pts, t.n);
    else
        return cukd::cct::fcp<Data, Traits>(q, *t.bounds, t.pts, t.n);
}

template <int W, class P> __device__ int fcp_walk(const P &q, const cukd::SpatialKDTree<P> &t) {
    static_assert(W != FREE, "the spatial tree has no stack-free walk");
    if constexpr (W == STACK)
        return cukd::stackBased::fcp<P>(t, q);
    else
        return cukd::cct::fcp<P>(t, q);
}

template <class P, class Data, class Traits>
__device__ const P &point_at(const balanced<P, Data, Traits> &t, int id) {
    return Traits::get_point(t.pts[id]);
}

template <class P> __device__ const P &point_at(const cukd::SpatialKDTree<P> &t, int id) {
    return t.data[id];
}

template <int W, class List, class P, class Tree>
__global__ void k_knn(const P *q, int nq, Tree tree, int *ids, float *d2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nq) return;
    List r(INFINITY);
    knn_walk<W, List>(r, q[i], tree);
    for (int j = 0; j < K; j++) {
        ids[(size_t)i * K + j] = r.get_pointID(j);
        d2[(size_t)i * K + j] = r.get_dist2(j);
    }
}

template <int W, class P, class Tree>
__global__ void k_fcp(const P *q, int nq, Tree tree, int *ids, float *d2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nq) return;
    const int id = fcp_walk<W>(q[i], tree);
    ids[i] = id;
    d2[i] = id < 0 ? INFINITY : dist2(q[i], point_at(tree, id));
}

template <class P> struct setup {
    std::string name;
    std::vector<P> ref, qry;
};

/* The largest distance among the k nearest, brute force, for sample queries. */
template <class P>
std::vector<float> brute_kth(const setup<P> &s, int k, const std::vector<int> &sample) {
    std::vector<float> out;
    std::vector<float> d(s.ref.size());
    for (int i : sample) {
        for (size_t j = 0; j < s.ref.size(); j++) d[j] = dist2(s.qry[i], s.ref[j]);
        std::nth_element(d.begin(), d.begin() + (k - 1), d.end());
        out.push_back(d[k - 1]);
    }
    return out;
}

/* What each timed row needs beside its launch: the set, the sample and its brute-force
 * answers, the device outputs. */
template <class P> struct bench {
    const setup<P> &s;
    int reps;
    std::vector<int> sample;
    std::vector<float> want8, want1;
    const P *dq;
    int *di;
    float *dd;
    unsigned blocks;
};

template <class P, class F>
void time_it(const bench<P> &B, const std::string &variant, const char *op, int k, F launch) {
    const std::vector<float> &want = k == 1 ? B.want1 : B.want8;
    std::vector<double> wall, kern;
    cudaEvent_t e0, e1;
    ok(cudaEventCreate(&e0), "event");
    ok(cudaEventCreate(&e1), "event");
    for (int r = 0; r < WARM + B.reps; r++) {
        double t0 = now();
        cudaEventRecord(e0);
        launch();
        cudaEventRecord(e1);
        ok(cudaDeviceSynchronize(), op);
        double t = now() - t0;
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r >= WARM) wall.push_back(t * 1e3), kern.push_back(ms);
    }
    std::vector<float> got((size_t)B.s.qry.size() * k);
    ok(cudaMemcpy(got.data(), B.dd, sizeof(float) * got.size(), cudaMemcpyDeviceToHost), "copy");
    /* the peer's distances may round differently (contracted multiply-adds): a
     * difference beyond 1e-6 relative is an error, one below is counted apart */
    int bad = 0, inexact = 0;
    for (size_t j = 0; j < B.sample.size(); j++) {
        float m = 0;
        for (int c = 0; c < k; c++) m = std::max(m, got[(size_t)B.sample[j] * k + c]);
        bad += std::fabs(m - want[j]) > 1e-6f * want[j];
        inexact += m != want[j];
    }
    std::sort(wall.begin(), wall.end());
    std::sort(kern.begin(), kern.end());
    printf("peer cudaKDTree dataset=%s variant=%s op=%s median_ms=%.4f min_ms=%.4f max_ms=%.4f "
           "kernel_median_ms=%.4f reps=%d n=%zu nq=%zu d=%d check=%s bad=%d inexact=%d\n",
           B.s.name.c_str(), variant.c_str(), op, wall[wall.size() / 2], wall.front(), wall.back(),
           kern[kern.size() / 2], B.reps, B.s.ref.size(), B.s.qry.size(), (int)dims<P>::D,
           bad ? "FAIL" : "ok", bad, inexact);
    fflush(stdout);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
}

/* kNN 8 with each candidate list and NN, through walk W of one tree. */
template <int W, class P, class Tree>
void walk_rows(const bench<P> &B, const char *tree_name, const Tree &tree) {
    static const char *walks[] = {"stackBased", "stackFree", "cct"};
    const std::string v = std::string(tree_name) + "-" + walks[W];
    const int nq = (int)B.s.qry.size();
    time_it(B, v, "knn8-fixed", K, [&] {
        k_knn<W, cukd::FixedCandidateList<K>><<<B.blocks, 128>>>(B.dq, nq, tree, B.di, B.dd);
    });
    time_it(B, v, "knn8-heap", K, [&] {
        k_knn<W, cukd::HeapCandidateList<K>><<<B.blocks, 128>>>(B.dq, nq, tree, B.di, B.dd);
    });
    time_it(B, v, "nn-fcp", 1, [&] { k_fcp<W><<<B.blocks, 128>>>(B.dq, nq, tree, B.di, B.dd); });
}

/* A balanced tree over a device copy of the points (Data from P by make), every walk. */
template <class Data, class Traits, class P, class Make>
void balanced_rows(const bench<P> &B, const char *tree_name, Make make) {
    const int n = (int)B.s.ref.size();
    std::vector<Data> host(n);
    for (int i = 0; i < n; i++) host[i] = make(B.s.ref[i]);
    Data *dp;
    cukd::box_t<P> *bounds;
    ok(cudaMalloc(&dp, sizeof(Data) * n), "alloc");
    ok(cudaMalloc(&bounds, sizeof *bounds), "alloc");
    ok(cudaMemcpy(dp, host.data(), sizeof(Data) * n, cudaMemcpyHostToDevice), "copy");
    cukd::buildTree<Data, Traits>(dp, n, bounds);
    ok(cudaDeviceSynchronize(), "build");
    const balanced<P, Data, Traits> tree{dp, n, bounds};
    walk_rows<STACK>(B, tree_name, tree);
    walk_rows<FREE>(B, tree_name, tree);
    walk_rows<CCT>(B, tree_name, tree);
    cudaFree(dp), cudaFree(bounds);
}

template <class P> void run(const setup<P> &s, int reps) {
    const int n = (int)s.ref.size(), nq = (int)s.qry.size();
    std::vector<int> sample;
    for (int j = 0; j < SAMPLES; j++) sample.push_back((int)((j * 2654435761u) % (unsigned)nq));
    P *dq, *dsp;
    float *dd;
    int *di;
    ok(cudaMalloc(&dq, sizeof(P) * nq), "alloc");
    ok(cudaMalloc(&dd, sizeof(float) * nq * K), "alloc");
    ok(cudaMalloc(&di, sizeof(int) * nq * K), "alloc");
    ok(cudaMemcpy(dq, s.qry.data(), sizeof(P) * nq, cudaMemcpyHostToDevice), "copy");
    const bench<P> B{s,  reps, sample, brute_kth(s, K, sample),     brute_kth(s, 1, sample),
                     dq, di,   dd,     (unsigned)((nq + 127) / 128)};
    balanced_rows<P, cukd::default_data_traits<P>>(B, "balanced", [](const P &p) { return p; });
    balanced_rows<xd_point<P>, xd_traits<P>>(B, "xd", [](const P &p) { return xd_point<P>{p, 0}; });
    ok(cudaMalloc(&dsp, sizeof(P) * n), "alloc");
    ok(cudaMemcpy(dsp, s.ref.data(), sizeof(P) * n, cudaMemcpyHostToDevice), "copy");
    cukd::SpatialKDTree<P> tree;
    cukd::buildTree<P>(tree, dsp, n);
    ok(cudaDeviceSynchronize(), "build");
    walk_rows<STACK>(B, "spatial", tree);
    walk_rows<CCT>(B, "spatial", tree);
    cukd::free(tree);
    cudaFree(dsp), cudaFree(dq), cudaFree(dd), cudaFree(di);
}

/* Morton keys of 64 / D bits a coordinate (16 at most) over the queries' bounding box,
 * stable sort */
template <class P> setup<P> morton_sorted(const setup<P> &s) {
    enum { D = dims<P>::D, BITS = 64 / D < 16 ? 64 / D : 16 };
    const std::vector<P> &q = s.qry;
    float lo[D], hi[D];
    std::fill(lo, lo + D, INFINITY), std::fill(hi, hi + D, -INFINITY);
    for (const P &p : q)
        for (int c = 0; c < D; c++)
            lo[c] = std::min(lo[c], coord(p, c)), hi[c] = std::max(hi[c], coord(p, c));
    std::vector<std::pair<uint64_t, size_t>> key(q.size());
    for (size_t i = 0; i < q.size(); i++) {
        uint64_t k = 0;
        for (int c = 0; c < D; c++) {
            const uint64_t x = (uint64_t)((float)((1u << BITS) - 1) * (coord(q[i], c) - lo[c]) /
                                          std::max(hi[c] - lo[c], 1e-30f));
            for (int b = 0; b < BITS; b++) k |= (x >> b & 1) << (b * D + c);
        }
        key[i] = {k, i};
    }
    std::stable_sort(key.begin(), key.end());
    setup<P> out{s.name + "-morton-sorted", s.ref, std::vector<P>(q.size())};
    for (size_t i = 0; i < q.size(); i++) out.qry[i] = q[key[i].second];
    return out;
}

/* The set as given, then its queries in Morton order (sorted here, not timed): what a
 * caller who sorts its queries first gets from the walk */
template <class P> void run_both(const setup<P> &s, int reps) {
    run(s, reps);
    run(morton_sorted(s), reps);
}

void data(canopy_status st) {
    if (st) {
        fprintf(stderr, "peer_cudakdtree: data: %s\n", canopy_last_error());
        exit(1);
    }
}

} // namespace

int main(int argc, char **argv) {
    typedef cukd::vec_float<7> float7;
    const int reps = argc > 1 ? std::max(1, atoi(argv[1])) : 15;
    const int64_t n = 200000, nc = 135000;
    setup<float2> c2{"clust2", std::vector<float2>(n), std::vector<float2>(n)};
    setup<float2> ci{"cities", std::vector<float2>(nc), {}};
    setup<float7> r7{"rand7", std::vector<float7>(n), std::vector<float7>(n)};
    data(canopy_gen_clusters((float *)c2.ref.data(), NULL, n, 2, 64, 0.01, 1));
    data(canopy_gen_clusters((float *)c2.qry.data(), NULL, n, 2, 64, 0.01, 2));
    data(canopy_gen_cities((float *)ci.ref.data(), NULL, nc, 2, 64, 0.02, 3));
    data(canopy_gen_uniform((float *)r7.ref.data(), n, 7, 0.0, 1.0, 4));
    data(canopy_gen_uniform((float *)r7.qry.data(), n, 7, 0.0, 1.0, 5));
    ci.qry = ci.ref;
    run_both(c2, reps);
    run_both(ci, reps);
    run_both(r7, reps);
    return 0;
}
