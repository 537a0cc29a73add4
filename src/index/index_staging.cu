/* SPDX-License-Identifier: MIT */
/* Host-array kNN on a resident index: pinned staging and device buffers kept between
 * calls (grow-only), and the copies on the staging's own stream. The caller (index.c)
 * packs queries into the pinned buffer chunk by chunk while earlier chunks travel, and
 * unpacks result chunks while later ones travel; a one-shot call copies straight from
 * and to the caller's (pageable) arrays instead. The query itself is the device-pointer
 * path (canopy_index_device_knn) on the same stream. */
#include "index/device.h"

#include "core/gpu.cuh"
#include "core/gpu_pool.cuh"

#include <new>
#include <string.h>

struct canopy_index_staging {
    unsigned char *host = nullptr, *dev = nullptr; /* pinned | device: queries, idx, dist2 */
    size_t host_bytes = 0, dev_bytes = 0;
    size_t idx_off = 0, dist2_off = 0; /* offsets of the result arrays in both */
    size_t idx32_off = 0;              /* the indices narrowed to int32 (device) */
    int64_t nq = 0;
    int32_t d = 0, k = 0, chunks = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t done[CANOPY_INDEX_STAGING_CHUNKS] = {}; /* result chunk c is on the host */
};

extern "C" void canopy_index_staging_free(canopy_index_staging *st) {
    if (!st) return;
    if (st->stream) cudaStreamSynchronize(st->stream);
    cudaFreeHost(st->host);
    cudaFree(st->dev);
    for (cudaEvent_t e : st->done)
        if (e) cudaEventDestroy(e);
    if (st->stream) cudaStreamDestroy(st->stream);
    delete st;
}

static canopy_status staging_new(canopy_index_staging **out) {
    canopy_index_staging *st = new (std::nothrow) canopy_index_staging;
    if (!st) return canopy_fail(CANOPY_ERR_NOMEM, "index staging");
    cudaError_t e = cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking);
    for (int c = 0; c < CANOPY_INDEX_STAGING_CHUNKS && e == cudaSuccess; c++)
        e = cudaEventCreateWithFlags(&st->done[c], cudaEventDisableTiming);
    if (e != cudaSuccess) {
        canopy_index_staging_free(st);
        return canopy_gpu_check(e, "index staging");
    }
    *out = st;
    return CANOPY_OK;
}

/* Makes *buf (pinned host or device memory) hold at least `need` bytes, half again on
 * growth so slowly growing calls reallocate rarely. */
static canopy_status grow(unsigned char **buf, size_t *have, size_t need, bool pinned) {
    if (need <= *have) return CANOPY_OK;
    if (pinned)
        cudaFreeHost(*buf);
    else
        cudaFree(*buf);
    *buf = nullptr;
    *have = 0;
    size_t want = need + need / 2;
    cudaError_t e = pinned ? cudaMallocHost((void **)buf, want) : cudaMalloc((void **)buf, want);
    if (e != cudaSuccess)
        return canopy_fail(CANOPY_ERR_DEVICE,
                           "GPU: allocating %zu bytes of %s for host-array queries: %s", want,
                           pinned ? "pinned staging" : "device buffers", cudaGetErrorString(e));
    *have = want;
    return CANOPY_OK;
}

extern "C" canopy_status canopy_index_staging_reserve(canopy_index_staging **stp, int64_t nq,
                                                      int32_t d, int32_t k, int pinned,
                                                      float **h_queries, int64_t **h_idx,
                                                      float **h_dist2) {
    canopy_status s;
    if (!*stp && (s = staging_new(stp))) return s;
    canopy_index_staging *st = *stp;
    typedef canopy_gpu_carve C;
    size_t need = C::bytes<float>(nq * d) + C::bytes<int64_t>(nq * k) + C::bytes<float>(nq * k);
    if ((pinned && (s = grow(&st->host, &st->host_bytes, need, true))) ||
        (s = grow(&st->dev, &st->dev_bytes, need + C::bytes<int32_t>(nq * k), false)))
        return s;
    st->nq = nq;
    st->d = d;
    st->k = k;
    st->chunks = 0;
    st->idx_off = C::bytes<float>(nq * d);
    st->dist2_off = st->idx_off + C::bytes<int64_t>(nq * k);
    st->idx32_off = need;
    *h_queries = pinned ? (float *)st->host : nullptr;
    *h_idx = pinned ? (int64_t *)(st->host + st->idx_off) : nullptr;
    *h_dist2 = pinned ? (float *)(st->host + st->dist2_off) : nullptr;
    return CANOPY_OK;
}

extern "C" canopy_status canopy_index_staging_put(canopy_index_staging *st, const float *rows_at,
                                                  int64_t row0, int64_t rows, int last) {
    size_t off = sizeof(float) * (size_t)row0 * st->d, bytes = sizeof(float) * (size_t)rows * st->d;
    canopy_status s = CANOPY_OK;
    if (bytes)
        s = canopy_gpu_check(
            cudaMemcpyAsync(st->dev + off, rows_at, bytes, cudaMemcpyHostToDevice, st->stream),
            "copying queries to the device");
    if (!s && last) s = canopy_gpu_check(cudaStreamSynchronize(st->stream), "copying queries");
    return s;
}

/* Point indices fit int32 (a tree counts its points by int32 node ranges; -1 is empty). */
__global__ void narrow_ids(const int64_t *__restrict__ in, int32_t *__restrict__ out, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (int32_t)in[i];
}

/* Queues the copy of result rows [r0, r1) back to h_idx (int64 rows, or int32 when
 * narrow) and h_dist2 (NULL: not wanted) and marks it done. */
static canopy_status queue_back(canopy_index_staging *st, int32_t c, int64_t r0, int64_t r1,
                                void *h_idx, int narrow, float *h_dist2) {
    size_t cells = (size_t)(r1 - r0) * st->k, first = (size_t)r0 * st->k;
    size_t w = narrow ? sizeof(int32_t) : sizeof(int64_t);
    size_t io = (narrow ? st->idx32_off : st->idx_off) + first * w;
    size_t d2 = st->dist2_off + first * sizeof(float);
    canopy_status s = CANOPY_OK;
    if (cells)
        s = canopy_gpu_check(cudaMemcpyAsync((char *)h_idx + first * w, st->dev + io, cells * w,
                                             cudaMemcpyDeviceToHost, st->stream),
                             "copying kNN indices back");
    if (!s && cells && h_dist2)
        s = canopy_gpu_check(cudaMemcpyAsync(h_dist2 + first, st->dev + d2, cells * sizeof(float),
                                             cudaMemcpyDeviceToHost, st->stream),
                             "copying kNN distances back");
    if (!s) s = canopy_gpu_check(cudaEventRecord(st->done[c], st->stream), "cudaEventRecord");
    return s;
}

extern "C" canopy_status canopy_index_staging_knn(canopy_index_device *dv, canopy_index_staging *st,
                                                  canopy_variant v, canopy_schedule sched,
                                                  canopy_gpu_report *rep) {
    st->chunks = 0;
    dv->own_stream = st->stream;
    return canopy_index_device_knn(dv, (const float *)st->dev, st->nq, CANOPY_INDEX_SELF_NONE,
                                   st->k, v, sched, (int64_t *)(st->dev + st->idx_off),
                                   (float *)(st->dev + st->dist2_off), st->stream, rep);
}

extern "C" canopy_status canopy_index_staging_back(canopy_index_staging *st, void *h_idx,
                                                   int narrow, float *h_dist2, int32_t chunks) {
    if (chunks < 1 || chunks > CANOPY_INDEX_STAGING_CHUNKS)
        return canopy_fail(CANOPY_ERR_INTERNAL, "index staging: %d result chunks", (int)chunks);
    canopy_status s = CANOPY_OK;
    int64_t cells = st->nq * st->k;
    if (narrow && cells > 0) {
        int blocks = (int)((cells + 255) / 256 < 4096 ? (cells + 255) / 256 : 4096);
        narrow_ids<<<blocks, 256, 0, st->stream>>>((const int64_t *)(st->dev + st->idx_off),
                                                   (int32_t *)(st->dev + st->idx32_off), cells);
        if ((s = canopy_gpu_check(cudaGetLastError(), "narrowing kNN indices"))) return s;
    }
    st->chunks = chunks;
    for (int32_t c = 0; c < chunks && !s; c++)
        s = queue_back(st, c, st->nq * c / chunks, st->nq * (c + 1) / chunks, h_idx, narrow,
                       h_dist2);
    return s;
}

extern "C" canopy_status canopy_index_staging_wait(canopy_index_staging *st, int32_t c) {
    if (c < 0 || c >= st->chunks)
        return canopy_fail(CANOPY_ERR_INTERNAL, "index staging: no result chunk %d", (int)c);
    return canopy_gpu_check(cudaEventSynchronize(st->done[c]), "copying kNN results back");
}
