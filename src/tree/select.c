#include "tree/select.h"

static void swap2(float *key, int64_t *perm, int64_t a, int64_t b) {
    float k = key[a];
    key[a] = key[b];
    key[b] = k;
    int64_t p = perm[a];
    perm[a] = perm[b];
    perm[b] = p;
}

static float median3(float a, float b, float c) {
    if (a < b) return b < c ? b : (a < c ? c : a);
    return a < c ? a : (b < c ? c : b);
}

void canopy_select_pairs(float *key, int64_t *perm, int64_t n, int64_t nth) {
    int64_t lo = 0, hi = n; /* the answer lies in [lo, hi) */
    while (hi - lo > 1) {
        float pivot = median3(key[lo], key[lo + (hi - lo) / 2], key[hi - 1]);
        /* Dutch flag: [lo, lt) < pivot, [lt, i) == pivot, (gt, hi) > pivot. */
        int64_t lt = lo, i = lo, gt = hi - 1;
        while (i <= gt) {
            if (key[i] < pivot)
                swap2(key, perm, lt++, i++);
            else if (key[i] > pivot)
                swap2(key, perm, i, gt--);
            else
                i++;
        }
        if (nth < lt)
            hi = lt;
        else if (nth > gt)
            lo = gt + 1;
        else
            return;
    }
}
