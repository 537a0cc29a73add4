/* SPDX-License-Identifier: MIT */
/* GPU csr (Wu ch. 5 baseline): a thread walks one tree of the four CSR arrays; each
 * step is two dependent loads (children index, then child). */
#include "forest/gpu_common.cuh"

struct cf_csr_walk {
    __device__ static int32_t walk(const cf_gpu_model &M, const float *x, int32_t t) {
        int32_t n = __ldg(M.root + t), key;
        while ((key = __ldg(M.csr_feature + n)) >= 0) {
            int right =
                cf_dev_go_right(__ldg(x + (key & CF_KEY_FEATURE)), __ldg(M.csr_value + n), key);
            n = __ldg(M.csr_children + __ldg(M.csr_cidx + n) + right);
        }
        return ~key;
    }
};

void cf_gpu_run_csr(const cf_gpu_model &M, const cf_gpu_launch &P) {
    cf_thread_launch<cf_csr_walk>(M, P);
}
