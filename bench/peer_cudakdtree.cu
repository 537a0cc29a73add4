/* SPDX-License-Identifier: MIT */
/* Issue 30's GPU kNN peer: cudaKDTree (github ingowald/cudaKDTree, never committed here)
 * on the points of bench_edges_gpu.c (clust2 200k + 200k, cities 135k self-query: the
 * points as queries, as canopy's rows have them), timed as canopy's rows are: host wall
 * of a launch and its synchronisation, queries and results already on the device,
 * medians with min-max of REPS runs after 3 warm-ups (the CUDA-event time of the kernel
 * beside it). Variants: its balanced tree (thrust builder) and its spatial tree, each
 * with the stack-based and the closest-corner-tracking (cct) walk, kNN k = 8 with its
 * fixed and heap candidate lists, and closest point (NN). Each variant's k-th distance
 * is checked against brute force on 200 queries. Then the same queries sorted in Morton
 * order beforehand (not timed). Not built by CMake: on the GPU machine,
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

typedef cukd::SpatialKDTree<float2> spatial_t;

/* W, the tree and walk of a kernel: 0 balanced stack-based, 1 balanced cct, 2 spatial
 * stack-based, 3 spatial cct. */
template <int W, class List>
__global__ void k_knn(const float2 *q, int nq, const float2 *pts, int n,
                      const cukd::box_t<float2> *bounds, spatial_t tree, int *ids, float *d2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nq) return;
    List r(INFINITY);
    if (W == 0) cukd::stackBased::knn<List, float2>(r, q[i], pts, n);
    if (W == 1) cukd::cct::knn<List, float2>(r, q[i], *bounds, pts, n);
    if (W == 2) cukd::stackBased::knn<List, float2>(r, tree, q[i]);
    if (W == 3) cukd::cct::knn<List, float2>(r, tree, q[i]);
    for (int j = 0; j < K; j++) {
        ids[(size_t)i * K + j] = r.get_pointID(j);
        d2[(size_t)i * K + j] = r.get_dist2(j);
    }
}

template <int W>
__global__ void k_fcp(const float2 *q, int nq, const float2 *pts, int n,
                      const cukd::box_t<float2> *bounds, spatial_t tree, int *ids, float *d2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nq) return;
    int id = -1;
    if (W == 0) id = cukd::stackBased::fcp<float2>(q[i], pts, n);
    if (W == 1) id = cukd::cct::fcp<float2>(q[i], *bounds, pts, n);
    if (W == 2) id = cukd::stackBased::fcp<float2>(tree, q[i]);
    if (W == 3) id = cukd::cct::fcp<float2>(tree, q[i]);
    ids[i] = id;
    float2 p = id < 0 ? make_float2(INFINITY, INFINITY) : (W < 2 ? pts[id] : tree.data[id]);
    float dx = q[i].x - p.x, dy = q[i].y - p.y;
    d2[i] = dx * dx + dy * dy;
}

struct setup {
    const char *name;
    std::vector<float2> ref, qry;
};

/* The largest distance among the k nearest, brute force, for sample queries. */
std::vector<float> brute_kth(const setup &s, int k, const std::vector<int> &sample) {
    std::vector<float> out;
    std::vector<float> d(s.ref.size());
    for (int i : sample) {
        for (size_t j = 0; j < s.ref.size(); j++) {
            float dx = s.qry[i].x - s.ref[j].x, dy = s.qry[i].y - s.ref[j].y;
            d[j] = dx * dx + dy * dy;
        }
        std::nth_element(d.begin(), d.begin() + (k - 1), d.end());
        out.push_back(d[k - 1]);
    }
    return out;
}

template <class F>
void time_it(const setup &s, const char *variant, const char *op, int reps, int k,
             const std::vector<int> &sample, const std::vector<float> &want, const float *dd,
             F launch) {
    std::vector<double> wall, kern;
    cudaEvent_t e0, e1;
    ok(cudaEventCreate(&e0), "event");
    ok(cudaEventCreate(&e1), "event");
    for (int r = 0; r < WARM + reps; r++) {
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
    std::vector<float> got((size_t)s.qry.size() * k);
    ok(cudaMemcpy(got.data(), dd, sizeof(float) * got.size(), cudaMemcpyDeviceToHost), "copy");
    /* the peer's distances may round differently (contracted multiply-adds): a
     * difference beyond 1e-6 relative is an error, one below is counted apart */
    int bad = 0, inexact = 0;
    for (size_t j = 0; j < sample.size(); j++) {
        float m = 0;
        for (int c = 0; c < k; c++) m = std::max(m, got[(size_t)sample[j] * k + c]);
        bad += std::fabs(m - want[j]) > 1e-6f * want[j];
        inexact += m != want[j];
    }
    std::sort(wall.begin(), wall.end());
    std::sort(kern.begin(), kern.end());
    printf("peer cudaKDTree dataset=%s variant=%s op=%s median_ms=%.4f min_ms=%.4f max_ms=%.4f "
           "kernel_median_ms=%.4f reps=%d n=%zu nq=%zu check=%s bad=%d inexact=%d\n",
           s.name, variant, op, wall[wall.size() / 2], wall.front(), wall.back(),
           kern[kern.size() / 2], reps, s.ref.size(), s.qry.size(), bad ? "FAIL" : "ok", bad,
           inexact);
    fflush(stdout);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
}

void run(const setup &s, int reps) {
    const int n = (int)s.ref.size(), nq = (int)s.qry.size();
    std::vector<int> sample;
    for (int j = 0; j < SAMPLES; j++) sample.push_back((int)((j * 2654435761u) % (unsigned)nq));
    const std::vector<float> want8 = brute_kth(s, K, sample), want1 = brute_kth(s, 1, sample);
    float2 *dp, *dsp, *dq;
    float *dd;
    int *di;
    cukd::box_t<float2> *bounds;
    ok(cudaMalloc(&dp, sizeof(float2) * n), "alloc");
    ok(cudaMalloc(&dsp, sizeof(float2) * n), "alloc");
    ok(cudaMalloc(&dq, sizeof(float2) * nq), "alloc");
    ok(cudaMalloc(&dd, sizeof(float) * nq * K), "alloc");
    ok(cudaMalloc(&di, sizeof(int) * nq * K), "alloc");
    ok(cudaMalloc(&bounds, sizeof *bounds), "alloc");
    ok(cudaMemcpy(dp, s.ref.data(), sizeof(float2) * n, cudaMemcpyHostToDevice), "copy");
    ok(cudaMemcpy(dsp, s.ref.data(), sizeof(float2) * n, cudaMemcpyHostToDevice), "copy");
    ok(cudaMemcpy(dq, s.qry.data(), sizeof(float2) * nq, cudaMemcpyHostToDevice), "copy");
    cukd::buildTree<float2>(dp, n, bounds);
    spatial_t tree;
    cukd::buildTree<float2>(tree, dsp, n);
    ok(cudaDeviceSynchronize(), "builds");
    const unsigned b = (unsigned)((nq + 127) / 128);
    const char *walks[] = {"balanced-stackBased", "balanced-cct", "spatial-stackBased",
                           "spatial-cct"};
#define PEER_KNN(W, LIST, LNAME)                                                                   \
    time_it(s, walks[W], "knn8-" LNAME, reps, K, sample, want8, dd,                                \
            [&] { k_knn<W, LIST><<<b, 128>>>(dq, nq, dp, n, bounds, tree, di, dd); })
#define PEER_FCP(W)                                                                                \
    time_it(s, walks[W], "nn-fcp", reps, 1, sample, want1, dd,                                     \
            [&] { k_fcp<W><<<b, 128>>>(dq, nq, dp, n, bounds, tree, di, dd); })
    PEER_KNN(0, cukd::FixedCandidateList<K>, "fixed");
    PEER_KNN(0, cukd::HeapCandidateList<K>, "heap");
    PEER_KNN(1, cukd::FixedCandidateList<K>, "fixed");
    PEER_KNN(1, cukd::HeapCandidateList<K>, "heap");
    PEER_KNN(2, cukd::FixedCandidateList<K>, "fixed");
    PEER_KNN(2, cukd::HeapCandidateList<K>, "heap");
    PEER_KNN(3, cukd::FixedCandidateList<K>, "fixed");
    PEER_KNN(3, cukd::HeapCandidateList<K>, "heap");
    PEER_FCP(0);
    PEER_FCP(1);
    PEER_FCP(2);
    PEER_FCP(3);
    cukd::free(tree);
    cudaFree(dp), cudaFree(dsp), cudaFree(dq), cudaFree(dd), cudaFree(di), cudaFree(bounds);
}

/* 16-bit Morton keys over the queries' bounding box, stable sort */
std::vector<float2> morton_sorted(const std::vector<float2> &q) {
    float lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (const float2 &p : q) {
        lo[0] = std::min(lo[0], p.x), hi[0] = std::max(hi[0], p.x);
        lo[1] = std::min(lo[1], p.y), hi[1] = std::max(hi[1], p.y);
    }
    auto spread = [](uint32_t v) {
        v &= 0xffff;
        v = (v | (v << 8)) & 0x00ff00ff;
        v = (v | (v << 4)) & 0x0f0f0f0f;
        v = (v | (v << 2)) & 0x33333333;
        return (v | (v << 1)) & 0x55555555;
    };
    std::vector<std::pair<uint32_t, size_t>> key(q.size());
    for (size_t i = 0; i < q.size(); i++) {
        uint32_t x = (uint32_t)(65535.0f * (q[i].x - lo[0]) / std::max(hi[0] - lo[0], 1e-30f));
        uint32_t y = (uint32_t)(65535.0f * (q[i].y - lo[1]) / std::max(hi[1] - lo[1], 1e-30f));
        key[i] = {spread(x) | spread(y) << 1, i};
    }
    std::stable_sort(key.begin(), key.end());
    std::vector<float2> out(q.size());
    for (size_t i = 0; i < q.size(); i++) out[i] = q[key[i].second];
    return out;
}

} // namespace

int main(int argc, char **argv) {
    const int reps = argc > 1 ? std::max(1, atoi(argv[1])) : 15;
    const int64_t n = 200000, nc = 135000;
    setup c2{"clust2", std::vector<float2>(n), std::vector<float2>(n)};
    setup ci{"cities", std::vector<float2>(nc), {}};
    if (canopy_gen_clusters((float *)c2.ref.data(), NULL, n, 2, 64, 0.01, 1) ||
        canopy_gen_clusters((float *)c2.qry.data(), NULL, n, 2, 64, 0.01, 2) ||
        canopy_gen_cities((float *)ci.ref.data(), NULL, nc, 2, 64, 0.02, 3)) {
        fprintf(stderr, "peer_cudakdtree: data: %s\n", canopy_last_error());
        return 1;
    }
    ci.qry = ci.ref;
    run(c2, reps);
    run(ci, reps);
    /* the same queries in Morton order (sorted here, not timed): what a caller who
     * sorts its queries first gets from the walk */
    setup c2s{"clust2-morton-sorted", c2.ref, morton_sorted(c2.qry)};
    setup cis{"cities-morton-sorted", ci.ref, morton_sorted(ci.qry)};
    run(c2s, reps);
    run(cis, reps);
    return 0;
}
