// SPDX-License-Identifier: MIT
/* How to move plummer1m-sized host arrays (1M bodies: 12 MB of float xyz up, 12 MB of
 * accelerations down) between a caller's pageable memory and the GPU, the choices
 * canopy_gravity_multipole's host-array path has (issue 30, bench/results/edges.md):
 *   up    pack x y z m on one host thread into pinned memory + one copy (the path at
 *         0119ed5); the pageable array copied as it is (the GPU packs it); the caller's
 *         array registered (cudaHostRegister) per call; pieces copied into a reused
 *         pinned ring on one host thread, each piece's DMA behind the next's memcpy;
 *         the same ring filled by all host threads
 *   down  the same choices in the other direction
 * Medians (min-max) of REPS calls in ms, the caller's arrays touched once before.
 * Standalone: nvcc -O2 -arch=sm_90 -Xcompiler -fopenmp bench/gravity_copies.cu -lgomp
 * (scripts/gpu-check.sh has no stage for it; bench/results/raw/gravity-copies-*.txt). */
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

#define OK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { REPS = 15, WARM = 3, RING = 4 };

__global__ void k_pack(const float *xyz, int n, float4 *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = make_float4(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], 1.0f / n);
}

template <class F> static void timed(const char *what, F f) {
    std::vector<double> v;
    for (int r = 0; r < WARM + REPS; r++) {
        double t0 = now();
        f();
        OK(cudaDeviceSynchronize());
        if (r >= WARM) v.push_back((now() - t0) * 1e3);
    }
    std::sort(v.begin(), v.end());
    printf("| %s | %.3f | %.3f–%.3f |\n", what, v[REPS / 2], v[0], v[REPS - 1]);
}

/* Pieces of `piece` bytes through a ring of pinned buffers: copy(i) fills or drains
 * ring slot i % RING on the host; the DMA of one piece runs behind the next's memcpy. */
static void ring_up(char *dst, const char *src, size_t bytes, size_t piece, char **ring,
                    cudaEvent_t *ev, cudaStream_t st, bool all_threads) {
    size_t np = (bytes + piece - 1) / piece;
    for (size_t i = 0; i < np; i++) {
        size_t off = i * piece, len = std::min(piece, bytes - off);
        char *slot = ring[i % RING];
        if (i >= RING) OK(cudaEventSynchronize(ev[i % RING]));
        if (all_threads) {
#pragma omp parallel for
            for (long c = 0; c < (long)len; c += 65536)
                memcpy(slot + c, src + off + c, std::min((size_t)65536, len - c));
        } else {
            memcpy(slot, src + off, len);
        }
        OK(cudaMemcpyAsync(dst + off, slot, len, cudaMemcpyHostToDevice, st));
        OK(cudaEventRecord(ev[i % RING], st));
    }
    OK(cudaStreamSynchronize(st));
}

static void ring_down(char *dst, const char *src, size_t bytes, size_t piece, char **ring,
                      cudaEvent_t *ev, cudaStream_t st, bool all_threads) {
    size_t np = (bytes + piece - 1) / piece;
    for (size_t i = 0; i < np + 1; i++) {
        if (i < np) {
            size_t off = i * piece, len = std::min(piece, bytes - off);
            OK(cudaMemcpyAsync(ring[i % RING], src + off, len, cudaMemcpyDeviceToHost, st));
            OK(cudaEventRecord(ev[i % RING], st));
        }
        if (i >= 1) {
            size_t j = i - 1, off = j * piece, len = std::min(piece, bytes - off);
            OK(cudaEventSynchronize(ev[j % RING]));
            if (all_threads) {
#pragma omp parallel for
                for (long c = 0; c < (long)len; c += 65536)
                    memcpy(dst + off + c, ring[j % RING] + c, std::min((size_t)65536, len - c));
            } else {
                memcpy(dst + off, ring[j % RING], len);
            }
        }
    }
}

int main() {
    const int n = 1000000;
    const size_t b3 = sizeof(float) * 3 * n, b4 = sizeof(float) * 4 * n;
    float *pos = (float *)malloc(b3), *acc = (float *)malloc(b3);
    for (int i = 0; i < 3 * n; i++) pos[i] = (float)(i % 977) * 0.001f, acc[i] = 0.0f;
    float *d_raw, *d_acc, *h4;
    float4 *d_xyzm;
    OK(cudaMalloc(&d_raw, b3));
    OK(cudaMalloc(&d_acc, b3));
    OK(cudaMalloc(&d_xyzm, b4));
    OK(cudaMallocHost(&h4, b4));
    cudaStream_t st;
    OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    int dev = 0, hmm = 0;
    OK(cudaDeviceGetAttribute(&hmm, cudaDevAttrPageableMemoryAccess, 0));
    cudaDeviceProp pr;
    OK(cudaGetDeviceProperties(&pr, dev));
    printf("# gravity_copies: %s, %d host threads, pageable memory access %d, 1M bodies\n\n",
           pr.name, omp_get_max_threads(), hmm);
    printf("| what | median ms | min–max |\n|---|---|---|\n");
    timed("up: pack on 1 thread into pinned + copy (0119ed5)", [&] {
        for (int i = 0; i < n; i++)
            h4[4 * i] = pos[3 * i], h4[4 * i + 1] = pos[3 * i + 1], h4[4 * i + 2] = pos[3 * i + 2],
                   h4[4 * i + 3] = 1.0f / n;
        OK(cudaMemcpy(d_xyzm, h4, b4, cudaMemcpyHostToDevice));
    });
    timed("up: pack on all threads into pinned + copy", [&] {
#pragma omp parallel for
        for (int i = 0; i < n; i++)
            h4[4 * i] = pos[3 * i], h4[4 * i + 1] = pos[3 * i + 1], h4[4 * i + 2] = pos[3 * i + 2],
                   h4[4 * i + 3] = 1.0f / n;
        OK(cudaMemcpy(d_xyzm, h4, b4, cudaMemcpyHostToDevice));
    });
    timed("up: pageable copy as it is + GPU pack", [&] {
        OK(cudaMemcpy(d_raw, pos, b3, cudaMemcpyHostToDevice));
        k_pack<<<(n + 255) / 256, 256>>>(d_raw, n, d_xyzm);
    });
    timed("up: register, copy, unregister + GPU pack", [&] {
        OK(cudaHostRegister(pos, b3, cudaHostRegisterDefault));
        OK(cudaMemcpy(d_raw, pos, b3, cudaMemcpyHostToDevice));
        k_pack<<<(n + 255) / 256, 256>>>(d_raw, n, d_xyzm);
        OK(cudaHostUnregister(pos));
    });
    size_t pieces[] = {262144, 1048576, 2097152};
    char *ring[RING];
    cudaEvent_t ev[RING];
    for (int i = 0; i < RING; i++) {
        OK(cudaMallocHost(&ring[i], 2097152));
        OK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
    }
    for (size_t piece : pieces)
        for (int all = 0; all < 2; all++) {
            char what[160];
            snprintf(what, sizeof what, "up: pinned ring of %d x %zu KB, %s + GPU pack", RING,
                     piece / 1024, all ? "all threads" : "1 thread");
            timed(what, [&] {
                ring_up((char *)d_raw, (const char *)pos, b3, piece, ring, ev, st, all);
                k_pack<<<(n + 255) / 256, 256, 0, st>>>(d_raw, n, d_xyzm);
            });
        }
    timed("down: pageable copy (0119ed5)",
          [&] { OK(cudaMemcpy(acc, d_acc, b3, cudaMemcpyDeviceToHost)); });
    timed("down: pinned copy + 1 thread memcpy", [&] {
        OK(cudaMemcpy(h4, d_acc, b3, cudaMemcpyDeviceToHost));
        memcpy(acc, h4, b3);
    });
    timed("down: register, copy, unregister", [&] {
        OK(cudaHostRegister(acc, b3, cudaHostRegisterDefault));
        OK(cudaMemcpy(acc, d_acc, b3, cudaMemcpyDeviceToHost));
        OK(cudaHostUnregister(acc));
    });
    for (size_t piece : pieces)
        for (int all = 0; all < 2; all++) {
            char what[160];
            snprintf(what, sizeof what, "down: pinned ring of %d x %zu KB, %s", RING, piece / 1024,
                     all ? "all threads" : "1 thread");
            timed(what, [&] {
                ring_down((char *)acc, (const char *)d_acc, b3, piece, ring, ev, st, all);
            });
        }
    timed("pinned copy alone, 12 MB up",
          [&] { OK(cudaMemcpy(d_raw, h4, b3, cudaMemcpyHostToDevice)); });
    timed("pinned copy alone, 12 MB down",
          [&] { OK(cudaMemcpy(h4, d_acc, b3, cudaMemcpyDeviceToHost)); });
    timed("host memcpy 12 MB, 1 thread", [&] { memcpy(acc, pos, b3); });
    return 0;
}
