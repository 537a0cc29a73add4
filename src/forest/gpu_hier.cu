/* SPDX-License-Identifier: MIT */
/* GPU hier, iterative (Wu Fig. 5.6): a thread walks one tree; inside a complete
 * subtree the child is 2j+1+right with no load, and only the step off a bottom slot
 * reads the connection table, restarting at slot 0 of the next subtree. */
#include "forest/gpu_common.cuh"

struct cf_hier_walk {
    __device__ static int32_t walk(const cf_gpu_model &M, const float *x, int32_t t) {
        const int32_t S = (1 << M.D) - 1, bottom = (1 << (M.D - 1)) - 1;
        int64_t st = __ldg(M.root + t);
        int32_t j = 0, key;
        while ((key = __ldg(M.hkey + st * S + j)) >= 0) {
            float thr = __ldg(M.hthr + st * S + j);
            int right = cf_dev_go_right(__ldg(x + (key & CF_KEY_FEATURE)), thr, key);
            if (j < bottom) {
                j = 2 * j + 1 + right;
            } else {
                st = __ldg(M.hconn + st * (S + 1) + 2 * (j - bottom) + right);
                j = 0;
            }
        }
        return ~key;
    }
};

void cf_gpu_run_hier(const cf_gpu_model &M, const cf_gpu_launch &P) {
    cf_thread_launch<cf_hier_walk>(M, P);
}
