/* SPDX-License-Identifier: MIT */
/* The AVX2 stream-compaction table of simt/lanes.h, computed by the compiler: entry k of
 * mask m is the lane l whose bit is set in m with k set bits below it. */
#include <stdint.h>

#define BIT_(m, l) (((m) >> (l)) & 1)
#define POP8_(x)                                                                                   \
    (BIT_(x, 0) + BIT_(x, 1) + BIT_(x, 2) + BIT_(x, 3) + BIT_(x, 4) + BIT_(x, 5) + BIT_(x, 6) +    \
     BIT_(x, 7))
#define IS_KTH_(m, k, l) (BIT_(m, l) && POP8_((m) & ((1 << (l)) - 1)) == (k) ? (l) : 0)
#define ENTRY_(m, k)                                                                               \
    (IS_KTH_(m, k, 0) | IS_KTH_(m, k, 1) | IS_KTH_(m, k, 2) | IS_KTH_(m, k, 3) |                   \
     IS_KTH_(m, k, 4) | IS_KTH_(m, k, 5) | IS_KTH_(m, k, 6) | IS_KTH_(m, k, 7))
#define ROW_(m)                                                                                    \
    {                                                                                              \
        ENTRY_(m, 0), ENTRY_(m, 1), ENTRY_(m, 2), ENTRY_(m, 3), ENTRY_(m, 4), ENTRY_(m, 5),        \
            ENTRY_(m, 6), ENTRY_(m, 7)                                                             \
    }
#define ROWS4_(m) ROW_(m), ROW_((m) + 1), ROW_((m) + 2), ROW_((m) + 3)
#define ROWS16_(m) ROWS4_(m), ROWS4_((m) + 4), ROWS4_((m) + 8), ROWS4_((m) + 12)
#define ROWS64_(m) ROWS16_(m), ROWS16_((m) + 16), ROWS16_((m) + 32), ROWS16_((m) + 48)

const int32_t canopy_simt_compact_perm8[256][8] = {ROWS64_(0), ROWS64_(64), ROWS64_(128),
                                                   ROWS64_(192)};
