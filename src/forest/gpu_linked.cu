/* SPDX-License-Identifier: MIT */
/* GPU iter over Ren's linked layouts (df, bf, ll, sll, cc, hybrid): a thread walks
 * one tree with branch-free child addressing (cf_dev_walk_linked). */
#include "forest/gpu_common.cuh"

struct cf_linked_walk {
    __device__ static int32_t walk(const cf_gpu_model &M, const float *x, int32_t t) {
        return cf_dev_walk_linked(M, x, t);
    }
};

void cf_gpu_run_linked(const cf_gpu_model &M, const cf_gpu_launch &P) {
    cf_thread_launch<cf_linked_walk>(M, P);
}
