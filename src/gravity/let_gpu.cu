// SPDX-License-Identifier: MIT
/* The LET walk on the GPU (gravity/let_gpu.h). A warp takes 32 consecutive query bodies
 * (curve or tree order: neighbours, so their walks nearly coincide) and walks each piece
 * once for all of them: a stack entry is a cell and the mask of the lanes that reach it.
 * Each lane applies walk_piece's own test to the cell; the lanes that open it push its
 * children (in walk_piece's order) with their mask, so every lane visits exactly the
 * cells of its own walk, in the same order, and sums the same terms in the same order.
 * The stack lives in shared memory (global when a deep piece does not fit); a leaf's
 * bodies are loaded by the lanes together into shared memory, where every lane reads
 * them (broadcasts). */
#include "gravity/let_gpu.h"

#include "gravity/let_gpu_buf.cuh"

#include <new>
#include <stdint.h>
#include <string.h>

namespace {

constexpr int LW_WARPS = 4; /* warps per block */
constexpr unsigned FULL = 0xffffffffu;
/* The stacks' share of the 48 KB a block has without the opt-in (the bodies take 3 KB). */
constexpr size_t SHARED_STACK_MAX = 44 * 1024;

/* A piece inside the packed buffers: its first cell and body, its cell count, order. */
struct piece_desc {
    int32_t cell0, body0, n_cells, order;
};

enum { ERR_STACK = 1 };

__global__ void __launch_bounds__(LW_WARPS * 32)
    k_let_walk(const let_cell *__restrict__ cells, const let_body *__restrict__ bodies,
               const piece_desc *__restrict__ pd, int np, const float *__restrict__ q,
               const int64_t *__restrict__ qid, int64_t n, float inv_theta, float eps2, int cap,
               uint2 *gstack, float *acc, float *pot, int64_t *work, unsigned long long *counts,
               int *err) {
    extern __shared__ uint2 sstack[];
    __shared__ float4 sbody[LW_WARPS][32];
    __shared__ long long sid[LW_WARPS][32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int64_t warp = (int64_t)blockIdx.x * LW_WARPS + w;
    if (warp * 32 >= n) return; /* the whole warp */
    const int64_t i = warp * 32 + lane;
    const bool valid = i < n;
    uint2 *stack = gstack ? gstack + warp * cap : sstack + w * cap;
    float x[3] = {0.0f, 0.0f, 0.0f};
    int64_t id = -1;
    if (valid) {
        x[0] = q[3 * i];
        x[1] = q[3 * i + 1];
        x[2] = q[3 * i + 2];
        id = qid[i];
    }
    float a[3] = {0.0f, 0.0f, 0.0f}, phi = 0.0f;
    long long ne = 0, nd = 0, ndrop = 0;
    const unsigned vmask = __ballot_sync(FULL, valid);
    bool overflow = false;
    for (int p = 0; p < np && !overflow; p++) {
        const piece_desc d = pd[p];
        if (d.n_cells == 0) continue;
        const let_cell *pc = cells + d.cell0;
        const let_body *pb = bodies + d.body0;
        if (lane == 0) stack[0] = make_uint2(0u, vmask);
        __syncwarp();
        int sp = 1;
        while (sp > 0) {
            const uint2 e = stack[--sp];
            __syncwarp(); /* every lane has read the entry before it is overwritten */
            const let_cell *c = pc + e.x;
            const bool act = (e.y >> lane) & 1u;
            const float4 g0 = __ldg(reinterpret_cast<const float4 *>(c->g));
            const float4 g1 = __ldg(reinterpret_cast<const float4 *>(c->g) + 1);
            bool open = false;
            if (act) {
                const float g[8] = {g0.x, g0.y, g0.z, g0.w, g1.x, g1.y, g1.z, g1.w};
                const float half = g[7];
                const bool inside = fabsf(x[0] - g[4]) <= half && fabsf(x[1] - g[5]) <= half &&
                                    fabsf(x[2] - g[6]) <= half;
                bool accept = false;
                if (!inside) {
                    const float dx = g[0] - x[0], dy = g[1] - x[1], dz = g[2] - x[2];
                    accept = dx * dx + dy * dy + dz * dz > mp_open2(g, inv_theta);
                }
                if (accept) {
                    mp_expand(g, d.order == 2 ? c->quad : NULL, eps2, x, a, &phi);
                    ne++;
                } else {
                    open = true;
                }
            }
            const unsigned om = __ballot_sync(FULL, open);
            if (!om) continue;
            const int32_t child = __ldg(&c->child), pruned = __ldg(&c->pruned);
            if (pruned) {
                ndrop += open;
            } else if (child < 0) {
                const int32_t begin = __ldg(&c->begin), end = __ldg(&c->end);
                for (int32_t b0 = begin; b0 < end; b0 += 32) {
                    /* the lanes load 32 bodies together; each lane then reads them all
                     * from shared memory (broadcasts) */
                    const int32_t bi = b0 + lane;
                    if (bi < end) {
                        const let_body *b = pb + bi;
                        sbody[w][lane] = make_float4(__ldg(&b->x[0]), __ldg(&b->x[1]),
                                                     __ldg(&b->x[2]), __ldg(&b->m));
                        sid[w][lane] = __ldg(reinterpret_cast<const long long *>(&b->id));
                    }
                    __syncwarp();
                    const int m = end - b0 < 32 ? end - b0 : 32;
                    if (open)
                        for (int j = 0; j < m; j++) {
                            const float4 pb4 = sbody[w][j];
                            const float p3[3] = {pb4.x, pb4.y, pb4.z};
                            if (sid[w][j] != id) {
                                mp_direct(p3, pb4.w, eps2, x, a, &phi);
                                nd++;
                            }
                        }
                    __syncwarp(); /* read before the next 32 overwrite them */
                }
            } else {
                const int32_t nchild = __ldg(&c->nchild);
                if (sp + nchild > cap) {
                    overflow = true;
                    break;
                }
                /* child k at sp + nchild - 1 - k: child 0 is popped first, as on the CPU */
                if (lane < nchild)
                    stack[sp + nchild - 1 - lane] = make_uint2((unsigned)(child + lane), om);
                __syncwarp();
                sp += nchild;
            }
        }
    }
    if (overflow) {
        if (lane == 0) atomicOr(err, ERR_STACK);
        return;
    }
    if (valid) {
        acc[3 * i] = a[0];
        acc[3 * i + 1] = a[1];
        acc[3 * i + 2] = a[2];
        if (pot) pot[i] = phi;
        if (work) work[i] = ne + nd;
    }
    for (int o = 16; o > 0; o >>= 1) {
        ne += __shfl_xor_sync(FULL, ne, o);
        nd += __shfl_xor_sync(FULL, nd, o);
        ndrop += __shfl_xor_sync(FULL, ndrop, o);
    }
    if (lane == 0) {
        atomicAdd(counts, (unsigned long long)ne);
        atomicAdd(counts + 1, (unsigned long long)nd);
        atomicAdd(counts + 2, (unsigned long long)ndrop);
    }
}

int bound_device = -1; /* canopy_gpu_bind_device's choice; -1: the runtime's own */

} // namespace

struct gpu_let {
    cudaStream_t stream = nullptr;
    cudaEvent_t t0 = nullptr, t1 = nullptr;
    let_gpu_buf cells, bodies, desc, q, qid, acc, pot, work, counts, stack;
    int64_t n = 0;
    bool launched = false, walked = false;
    ~gpu_let() {
        if (t0) cudaEventDestroy(t0);
        if (t1) cudaEventDestroy(t1);
        if (stream) cudaStreamDestroy(stream);
    }
};

extern "C" canopy_status canopy_gpu_let_create(gpu_let **out) {
    *out = nullptr;
    gpu_let *g = new (std::nothrow) gpu_let;
    if (!g) return canopy_fail(CANOPY_ERR_NOMEM, "GPU: out of memory for the LET walk");
    canopy_status s = canopy_gpu_check(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking),
                                       "creating the LET walk's stream");
    if (!s) s = canopy_gpu_check(cudaEventCreate(&g->t0), "creating an event");
    if (!s) s = canopy_gpu_check(cudaEventCreate(&g->t1), "creating an event");
    if (s) {
        delete g;
        return s;
    }
    *out = g;
    return CANOPY_OK;
}

extern "C" void canopy_gpu_let_free(gpu_let *g) {
    if (!g) return;
    cudaStreamSynchronize(g->stream);
    delete g;
}

extern "C" canopy_status canopy_gpu_let_launch(gpu_let *g, const let_piece *pieces,
                                               int32_t n_pieces, canopy_points q,
                                               const int64_t *qid, float inv_theta, float eps2) {
    g->launched = g->walked = false;
    g->n = q.n;
    if (q.n > 0 && q.d != 3)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: bodies must have 3 coordinates (got %d)",
                           (int)q.d);
    if (q.n > INT64_MAX / 32 / 3)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: too many bodies for the GPU walk");
    int64_t n_cells = 0, n_bodies = 0;
    int32_t depth = 1;
    for (int32_t k = 0; k < n_pieces; k++) {
        n_cells += pieces[k].n_cells;
        n_bodies += pieces[k].n_bodies;
        depth = pieces[k].depth > depth ? pieces[k].depth : depth;
    }
    if (n_cells > INT32_MAX || n_bodies > INT32_MAX)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: LET pieces too large for the GPU walk");
    const int64_t n = q.n;
    size_t n3 = 3 * (size_t)n;
    canopy_status s;
    if ((s = g->acc.need(n3 * sizeof(float), "the LET walk's accelerations")) ||
        (s = g->pot.need((size_t)n * sizeof(float), "the LET walk's potentials")) ||
        (s = g->work.need((size_t)n * sizeof(int64_t), "the LET walk's work counts")) ||
        (s = g->counts.need(3 * sizeof(unsigned long long) + sizeof(int),
                            "the LET walk's counters")))
        return s;
    cudaStream_t st = g->stream;
    unsigned long long *counts = (unsigned long long *)g->counts.p;
    int *err = (int *)(counts + 3);
    s = canopy_gpu_check(cudaMemsetAsync(g->counts.p, 0, 3 * sizeof *counts + sizeof(int), st),
                         "clearing the LET counters");
    if (s || n == 0) {
        g->launched = !s;
        return s;
    }
    if (n_cells == 0) { /* nothing to walk: zero forces and work */
        s = canopy_gpu_check(cudaMemsetAsync(g->acc.p, 0, n3 * sizeof(float), st), "zeroing");
        if (!s) s = canopy_gpu_check(cudaMemsetAsync(g->pot.p, 0, (size_t)n * 4, st), "zeroing");
        if (!s) s = canopy_gpu_check(cudaMemsetAsync(g->work.p, 0, (size_t)n * 8, st), "zeroing");
        g->launched = !s;
        return s;
    }
    if ((s = g->cells.need((size_t)n_cells * sizeof(let_cell), "LET cells")) ||
        (s = g->bodies.need((size_t)(n_bodies + 1) * sizeof(let_body), "LET bodies")) ||
        (s = g->desc.need((size_t)n_pieces * sizeof(piece_desc), "the LET piece table")) ||
        (s = g->q.need(n3 * sizeof(float), "the LET query bodies")) ||
        (s = g->qid.need((size_t)n * sizeof(int64_t), "the LET query ids")))
        return s;
    piece_desc *pd = nullptr;
    s = canopy_alloc((void **)&pd, (size_t)n_pieces, sizeof *pd);
    if (s) return s;
    int32_t c0 = 0, b0 = 0;
    char *dc = (char *)g->cells.p, *db = (char *)g->bodies.p;
    for (int32_t k = 0; !s && k < n_pieces; k++) {
        const let_piece *p = pieces + k;
        pd[k] = piece_desc{c0, b0, p->n_cells, p->order};
        if (p->n_cells > 0)
            s = canopy_gpu_check(cudaMemcpyAsync(dc + (size_t)c0 * sizeof(let_cell), p->cells,
                                                 (size_t)p->n_cells * sizeof(let_cell),
                                                 cudaMemcpyDefault, st),
                                 "uploading LET cells");
        if (!s && p->n_bodies > 0)
            s = canopy_gpu_check(cudaMemcpyAsync(db + (size_t)b0 * sizeof(let_body), p->bodies,
                                                 (size_t)p->n_bodies * sizeof(let_body),
                                                 cudaMemcpyDefault, st),
                                 "uploading LET bodies");
        c0 += p->n_cells;
        b0 += p->n_bodies;
    }
    if (!s)
        s = canopy_gpu_check(cudaMemcpyAsync(g->desc.p, pd, (size_t)n_pieces * sizeof *pd,
                                             cudaMemcpyHostToDevice, st),
                             "uploading the piece table");
    if (!s && q.stride == 3) {
        s = canopy_gpu_check(
            cudaMemcpyAsync(g->q.p, q.data, n3 * sizeof(float), cudaMemcpyHostToDevice, st),
            "uploading the query bodies");
    } else if (!s) { /* strided rows: packed on the way */
        s = canopy_gpu_check(cudaMemcpy2DAsync(g->q.p, 3 * sizeof(float), q.data,
                                               (size_t)q.stride * sizeof(float), 3 * sizeof(float),
                                               (size_t)n, cudaMemcpyHostToDevice, st),
                             "uploading the query bodies");
    }
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpyAsync(g->qid.p, qid, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice, st),
            "uploading the query ids");
    /* The pageable copies above return once staged; the table can go. */
    if (!s) s = canopy_gpu_check(cudaStreamSynchronize(st), "uploading the LET");
    canopy_free(pd);
    if (s) return s;
    const int64_t warps = (n + 31) / 32, blocks = (warps + LW_WARPS - 1) / LW_WARPS;
    const int cap = depth * 7 + 1; /* as canopy_let_forces: 7 siblings pending per level */
    size_t shared = (size_t)cap * LW_WARPS * sizeof(uint2);
    uint2 *gstack = nullptr;
    if (shared > SHARED_STACK_MAX) {
        if ((s = g->stack.need((size_t)blocks * LW_WARPS * (size_t)cap * sizeof(uint2),
                               "the LET walk stacks")))
            return s;
        gstack = (uint2 *)g->stack.p;
        shared = 0;
    }
    if (blocks > INT32_MAX) return canopy_fail(CANOPY_ERR_INVALID, "gravity: too many bodies");
    cudaEventRecord(g->t0, st);
    k_let_walk<<<(unsigned)blocks, LW_WARPS * 32, shared, st>>>(
        (const let_cell *)g->cells.p, (const let_body *)g->bodies.p, (const piece_desc *)g->desc.p,
        n_pieces, (const float *)g->q.p, (const int64_t *)g->qid.p, n, inv_theta, eps2, cap, gstack,
        (float *)g->acc.p, (float *)g->pot.p, (int64_t *)g->work.p, counts, err);
    cudaEventRecord(g->t1, st);
    s = canopy_gpu_check(cudaGetLastError(), "launching the LET walk");
    g->launched = !s;
    g->walked = !s;
    return s;
}

extern "C" canopy_status canopy_gpu_let_finish(gpu_let *g, float *acc, float *pot, int64_t *work,
                                               let_walk_stats *stats, double *walk_seconds) {
    if (walk_seconds) *walk_seconds = 0.0;
    if (!g->launched)
        return canopy_fail(CANOPY_ERR_INTERNAL, "GPU: LET walk finished without a launch");
    g->launched = false;
    canopy_status s = canopy_gpu_check(cudaStreamSynchronize(g->stream), "the LET walk");
    unsigned long long c[3] = {0, 0, 0};
    int err = 0;
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(c, g->counts.p, sizeof c, cudaMemcpyDeviceToHost),
                             "downloading the LET counters");
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(&err, (char *)g->counts.p + sizeof c, sizeof err, cudaMemcpyDeviceToHost),
            "downloading the LET counters");
    if (!s && err) return canopy_fail(CANOPY_ERR_INTERNAL, "GPU: the LET walk's stack overflowed");
    const size_t n = (size_t)g->n;
    if (!s && n > 0 && acc)
        s = canopy_gpu_check(
            cudaMemcpy(acc, g->acc.p, 3 * n * sizeof(float), cudaMemcpyDeviceToHost),
            "downloading accelerations");
    if (!s && n > 0 && pot)
        s = canopy_gpu_check(cudaMemcpy(pot, g->pot.p, n * sizeof(float), cudaMemcpyDeviceToHost),
                             "downloading potentials");
    if (!s && n > 0 && work)
        s = canopy_gpu_check(
            cudaMemcpy(work, g->work.p, n * sizeof(int64_t), cudaMemcpyDeviceToHost),
            "downloading work counts");
    if (s) return s;
    if (stats) {
        stats->expansions = (int64_t)c[0];
        stats->direct = (int64_t)c[1];
        stats->dropped = (int64_t)c[2];
    }
    if (walk_seconds && g->walked) {
        float ms = 0.0f;
        if (cudaEventElapsedTime(&ms, g->t0, g->t1) == cudaSuccess) *walk_seconds = ms * 1e-3;
    }
    return CANOPY_OK;
}

extern "C" canopy_status canopy_gpu_bind_device(int device) {
    int count = 0;
    canopy_status s = canopy_gpu_check(cudaGetDeviceCount(&count), "counting devices");
    if (s) return s;
    if (device < 0 || device >= count)
        return canopy_fail(CANOPY_ERR_INVALID, "GPU: device %d does not exist (%d visible)", device,
                           count);
    s = canopy_gpu_check(cudaSetDevice(device), "selecting the rank's device");
    if (!s) __atomic_store_n(&bound_device, device, __ATOMIC_RELEASE);
    return s;
}

/* Called by every module entry (cuda_module/slices.cu): the calling thread, whichever it
 * is, runs on the bound device. */
extern "C" void gpu_bind_thread(void) {
    int d = __atomic_load_n(&bound_device, __ATOMIC_ACQUIRE), cur = -1;
    if (d >= 0 && cudaGetDevice(&cur) == cudaSuccess && cur != d) cudaSetDevice(d);
}
