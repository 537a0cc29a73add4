/* SPDX-License-Identifier: MIT */
/* One GPU per MPI rank (docs/distributed.md, "GPUs"): a rank takes the visible device
 * local_rank % n_devices, local_rank being its rank among the ranks of comm on its
 * node (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED). The CUDA module then puts every
 * thread that enters it on that device (canopy_gpu_bind_device), so the binding holds for all
 * GPU calls of the process, OpenMP threads' included; CUDA_VISIBLE_DEVICES, when the
 * user sets it, limits the devices counted and the binding picks among them. */
#ifndef CANOPY_DIST_GPU_BIND_H
#define CANOPY_DIST_GPU_BIND_H

#include "dist/comm.h"

typedef struct dist_gpu_binding {
    int device;     /* ordinal among the visible devices, -1 when not bound */
    int local_rank; /* among comm's ranks on this node */
    int local_size;
    int n_devices; /* visible on this node */
} dist_gpu_binding;

/* Collective over comm (every rank calls it, with or without a GPU). The first call
 * binds this rank when it sees a usable device; later calls keep that binding. *b
 * (may be NULL) receives it. CANOPY_ERR_UNSUPPORTED (local status, not agreed) when
 * this rank sees no usable GPU, with the reason. */
canopy_status dist_gpu_bind(MPI_Comm comm, dist_gpu_binding *b);

/* The binding made so far (device -1 before any). */
dist_gpu_binding dist_gpu_bound(void);

/* Whether a distributed call with this backend runs on the GPU, decided alike on every
 * rank: gpu always (every rank must have a GPU: otherwise an agreed error), auto when
 * every rank has one and the job has at least min_auto items, cpu never. Binds the
 * ranks when the answer is yes. Collective. */
canopy_status dist_gpu_choose(MPI_Comm comm, canopy_backend backend, int64_t n_all,
                              int64_t min_auto, const char *app, int *use_gpu);

#endif
