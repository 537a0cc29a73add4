/* SPDX-License-Identifier: MIT */
/* The LET walk on the GPU (the twin of canopy_let_forces, gravity/let.h), reached through the CUDA
 * module's table. A gpu_let is one walk in flight: canopy_gpu_let_launch uploads the pieces and
 * the query bodies and starts the walk on the context's own stream, returning at once,
 * so the host can build and exchange meanwhile; canopy_gpu_let_finish waits and brings back
 * acc, pot and work. Each body takes exactly walk_piece's cells, in its order and with
 * its arithmetic (the module compiles with --fmad=false), so the sums equal the CPU's.
 * A context keeps its device buffers between walks (they grow, never shrink). */
#ifndef CANOPY_NBODY_LET_GPU_H
#define CANOPY_NBODY_LET_GPU_H

#include "gravity/let.h"

typedef struct gpu_let gpu_let; /* opaque, module side */

#ifdef __cplusplus
extern "C" {
#endif
canopy_status canopy_gpu_let_create(gpu_let **out);
void canopy_gpu_let_free(gpu_let *g);
/* Starts the walk of the n query bodies q (global indices qid) over pieces[0..n_pieces)
 * in order; the pieces and q may be freed when it returns. A piece's cells and bodies
 * may be in host or device memory (a block canopy_gpu_nccl_alltoallv received). */
canopy_status canopy_gpu_let_launch(gpu_let *g, const let_piece *pieces, int32_t n_pieces,
                                    canopy_points q, const int64_t *qid, float inv_theta,
                                    float eps2);
/* Waits for the walk launched last and writes acc (n, 3), pot, work and stats as
 * canopy_let_forces does (each may be NULL: not brought back); *walk_seconds (may be NULL) receives
 * the kernel's own time (device events), uploads and downloads excluded. */
canopy_status canopy_gpu_let_finish(gpu_let *g, float *acc, float *pot, int64_t *work,
                                    let_walk_stats *stats, double *walk_seconds);
/* The pieces GPU to GPU with NCCL (gravity/let_nccl.cu), loaded at run time from
 * $CANOPY_NCCL_LIBRARY or libnccl.so.2. canopy_gpu_nccl_load says whether it can be (the
 * reason when not); rank 0 makes the unique id, which the caller broadcasts; every rank
 * then creates its communicator (collective, on its bound device). */
typedef struct gpu_nccl gpu_nccl;
enum { GPU_NCCL_ID_BYTES = 128 };
canopy_status canopy_gpu_nccl_load(void);
canopy_status canopy_gpu_nccl_unique_id(unsigned char *id);
canopy_status canopy_gpu_nccl_create(const unsigned char *id, int nranks, int rank, gpu_nccl **out);
void canopy_gpu_nccl_free(gpu_nccl *c);
/* All-to-all of byte blocks (send_counts[r] bytes of the host buffer send, packed in rank
 * order, for rank r): uploaded, sent with ncclSend/ncclRecv in one group, and received
 * into a device buffer that *recv points to (kept by c until its next exchange; the
 * LET walk reads pieces from it directly: let_piece pointers may be device pointers).
 * heads receives the first head_bytes bytes of each block from rank r at
 * r * head_bytes (the pieces' headers, for the host). Waits for the exchange. */
canopy_status canopy_gpu_nccl_alltoallv(gpu_nccl *c, const void *send, const int64_t *send_counts,
                                        const int64_t *recv_counts, char **recv, void *heads,
                                        size_t head_bytes);
/* Makes `device` (an ordinal among the visible devices) the one every module entry of
 * this process runs on, whichever thread calls it (one rank per GPU, src/dist/gpu_bind.c). */
canopy_status canopy_gpu_bind_device(int device);
/* Module-internal (not in the table): every entry calls it first (cuda_module/slices.cu)
 * so that the calling thread runs on the bound device. */
void gpu_bind_thread(void);
#ifdef __cplusplus
}
#endif

#endif
