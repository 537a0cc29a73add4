/* SPDX-License-Identifier: MIT */
#include "canopy.h"

#include <math.h>

canopy_status canopy_points_check(canopy_points p, const char *what) {
    if (p.n < 0 || p.d < 1 || p.stride < p.d || (p.n > 0 && !p.data))
        return canopy_fail(CANOPY_ERR_INVALID, "%s: bad shape (n=%lld, d=%d, stride=%lld)", what,
                           (long long)p.n, (int)p.d, (long long)p.stride);
    for (int64_t i = 0; i < p.n; i++) {
        const float *x = canopy_point(p, i);
        for (int32_t j = 0; j < p.d; j++)
            if (!isfinite(x[j]))
                return canopy_fail(CANOPY_ERR_INVALID, "%s: row %lld, column %d is %s", what,
                                   (long long)i, (int)j, isnan(x[j]) ? "NaN" : "infinite");
    }
    return CANOPY_OK;
}
