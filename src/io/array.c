/* SPDX-License-Identifier: MIT */
/* Owned n-dimensional arrays and dtype conversion. Shapes come from untrusted files,
 * so every size product is overflow-checked before it is used. */
#include "io/io.h"

#include <math.h>
#include <string.h>

size_t canopy_dtype_size(canopy_dtype t) {
    switch (t) {
    case CANOPY_F32:
        return 4;
    case CANOPY_F64:
        return 8;
    case CANOPY_I32:
        return 4;
    case CANOPY_I64:
        return 8;
    case CANOPY_U8:
        return 1;
    }
    return 0;
}

const char *canopy_dtype_name(canopy_dtype t) {
    switch (t) {
    case CANOPY_F32:
        return "float32";
    case CANOPY_F64:
        return "float64";
    case CANOPY_I32:
        return "int32";
    case CANOPY_I64:
        return "int64";
    case CANOPY_U8:
        return "uint8";
    }
    return "unknown dtype";
}

bool canopy_io_shape_size(int32_t ndim, const int64_t *shape, size_t elem_size, int64_t *count,
                          size_t *bytes) {
    if (ndim < 0 || ndim > CANOPY_MAX_DIMS || elem_size == 0) return false;
    bool empty = false;
    for (int32_t i = 0; i < ndim; i++) {
        if (shape[i] < 0) return false;
        if (shape[i] == 0) empty = true;
    }
    /* A zero dimension makes the array empty whatever the others are; checking it
     * first keeps (huge, huge, 0) from overflowing on the way. */
    if (empty) {
        *count = 0;
        *bytes = 0;
        return true;
    }
    uint64_t n = 1;
    uint64_t limit = INT64_MAX;
    if ((uint64_t)(SIZE_MAX / elem_size) < limit) limit = SIZE_MAX / elem_size;
    for (int32_t i = 0; i < ndim; i++) {
        if ((uint64_t)shape[i] > limit / n) return false;
        n *= (uint64_t)shape[i];
    }
    *count = (int64_t)n;
    *bytes = (size_t)n * elem_size;
    return true;
}

int64_t canopy_array_count(const canopy_array *a) {
    int64_t count;
    size_t bytes;
    if (!canopy_io_shape_size(a->ndim, a->shape, 1, &count, &bytes)) return -1;
    return count;
}

canopy_status canopy_array_alloc(canopy_array *a, canopy_dtype t, int32_t ndim,
                                 const int64_t *shape) {
    memset(a, 0, sizeof *a);
    size_t esize = canopy_dtype_size(t);
    if (esize == 0) return canopy_fail(CANOPY_ERR_INVALID, "unknown dtype %d", (int)t);
    if (ndim < 0 || ndim > CANOPY_MAX_DIMS)
        return canopy_fail(CANOPY_ERR_INVALID, "ndim %d is outside 0..%d", (int)ndim,
                           CANOPY_MAX_DIMS);
    for (int32_t i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return canopy_fail(CANOPY_ERR_INVALID, "dimension %d is negative (%lld)", (int)i,
                               (long long)shape[i]);
    int64_t count;
    size_t bytes;
    if (!canopy_io_shape_size(ndim, shape, esize, &count, &bytes))
        return canopy_fail(CANOPY_ERR_NOMEM, "array of %d dimensions is too large to allocate",
                           (int)ndim);
    canopy_status s = canopy_alloc(&a->data, (size_t)count, esize);
    if (s != CANOPY_OK) return s;
    a->dtype = t;
    a->ndim = ndim;
    for (int32_t i = 0; i < ndim; i++) a->shape[i] = shape[i];
    return CANOPY_OK;
}

void canopy_array_release(canopy_array *a) {
    if (!a) return;
    canopy_free(a->data);
    memset(a, 0, sizeof *a);
}

canopy_status canopy_io_check_array(const canopy_array *a, const char *path, size_t *bytes) {
    int64_t count;
    if (!a) return canopy_fail(CANOPY_ERR_INVALID, "%s: no array to write", path);
    size_t esize = canopy_dtype_size(a->dtype);
    if (esize == 0)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: unknown dtype %d", path, (int)a->dtype);
    if (!canopy_io_shape_size(a->ndim, a->shape, esize, &count, bytes))
        return canopy_fail(CANOPY_ERR_INVALID, "%s: array has an invalid shape", path);
    if (count > 0 && !a->data)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: array has no data", path);
    return CANOPY_OK;
}

/* ---------------------------------------------------------------- convert -- */

static bool is_float(canopy_dtype t) {
    return t == CANOPY_F32 || t == CANOPY_F64;
}

static double load_float(const void *p, canopy_dtype t, int64_t i) {
    return t == CANOPY_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static int64_t load_int(const void *p, canopy_dtype t, int64_t i) {
    switch (t) {
    case CANOPY_I32:
        return ((const int32_t *)p)[i];
    case CANOPY_I64:
        return ((const int64_t *)p)[i];
    default:
        return ((const uint8_t *)p)[i];
    }
}

/* Range of an integer dtype. */
static void int_range(canopy_dtype t, int64_t *lo, int64_t *hi) {
    switch (t) {
    case CANOPY_I32:
        *lo = INT32_MIN, *hi = INT32_MAX;
        break;
    case CANOPY_U8:
        *lo = 0, *hi = UINT8_MAX;
        break;
    default:
        *lo = INT64_MIN, *hi = INT64_MAX;
        break;
    }
}

/* Halfway between FLT_MAX and 2^128: doubles from here on round to infinity, those
 * below it to FLT_MAX (so the text "3.4028235e+38" still reads as FLT_MAX). */
#define FLT_ROUNDS_TO_INF 0x1.ffffffp+127

/* A value that cannot be represented in the target type is an error rather than a
 * silent wrap or truncation (and in C the cast itself would be undefined). All
 * elements are checked before any is converted, so a failure changes nothing. */
static canopy_status check_convertible(const canopy_array *a, int64_t n, canopy_dtype t) {
    const char *tn = canopy_dtype_name(t);
    if (is_float(a->dtype) && !is_float(t)) {
        int64_t lo, hi;
        int_range(t, &lo, &hi);
        /* Exact bounds: lo is 0 or -2^k, and hi + 1 is 2^k ((double)INT64_MAX
         * already rounds up to 2^63). */
        double dlo = (double)lo, dhi_excl = (double)hi + 1.0;
        for (int64_t i = 0; i < n; i++) {
            double x = load_float(a->data, a->dtype, i);
            if (isnan(x))
                return canopy_fail(CANOPY_ERR_INVALID, "cannot convert to %s: element %lld is NaN",
                                   tn, (long long)i);
            if (x != trunc(x))
                return canopy_fail(CANOPY_ERR_INVALID,
                                   "cannot convert to %s: element %lld (%.17g) is not an "
                                   "integer",
                                   tn, (long long)i, x);
            if (x < dlo || x >= dhi_excl)
                return canopy_fail(CANOPY_ERR_INVALID,
                                   "cannot convert to %s: element %lld (%.17g) is out of range", tn,
                                   (long long)i, x);
        }
    } else if (a->dtype == CANOPY_F64 && t == CANOPY_F32) {
        const double *x = a->data;
        for (int64_t i = 0; i < n; i++)
            if (isfinite(x[i]) && fabs(x[i]) >= FLT_ROUNDS_TO_INF)
                return canopy_fail(CANOPY_ERR_INVALID,
                                   "cannot convert to float32: element %lld (%.17g) is out of "
                                   "range",
                                   (long long)i, x[i]);
    } else if (!is_float(a->dtype) && !is_float(t)) {
        int64_t lo, hi, slo, shi;
        int_range(t, &lo, &hi);
        int_range(a->dtype, &slo, &shi);
        if (slo >= lo && shi <= hi) return CANOPY_OK; /* widening always fits */
        for (int64_t i = 0; i < n; i++) {
            int64_t v = load_int(a->data, a->dtype, i);
            if (v < lo || v > hi)
                return canopy_fail(CANOPY_ERR_INVALID,
                                   "cannot convert to %s: element %lld (%lld) is out of range", tn,
                                   (long long)i, (long long)v);
        }
    }
    return CANOPY_OK;
}

/* Converts n elements of src (type S) into dst (type D). */
#define CONVERT_FROM(S)                                                                            \
    do {                                                                                           \
        const S *s_ = src;                                                                         \
        switch (dt) {                                                                              \
        case CANOPY_F32:                                                                           \
            for (int64_t i = 0; i < n; i++) ((float *)dst)[i] = (float)s_[i];                      \
            break;                                                                                 \
        case CANOPY_F64:                                                                           \
            for (int64_t i = 0; i < n; i++) ((double *)dst)[i] = (double)s_[i];                    \
            break;                                                                                 \
        case CANOPY_I32:                                                                           \
            for (int64_t i = 0; i < n; i++) ((int32_t *)dst)[i] = (int32_t)s_[i];                  \
            break;                                                                                 \
        case CANOPY_I64:                                                                           \
            for (int64_t i = 0; i < n; i++) ((int64_t *)dst)[i] = (int64_t)s_[i];                  \
            break;                                                                                 \
        case CANOPY_U8:                                                                            \
            for (int64_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = (uint8_t)s_[i];                  \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

static void convert_block(const void *src, canopy_dtype st, void *dst, canopy_dtype dt, int64_t n) {
    switch (st) {
    case CANOPY_F32:
        CONVERT_FROM(float);
        break;
    case CANOPY_F64:
        CONVERT_FROM(double);
        break;
    case CANOPY_I32:
        CONVERT_FROM(int32_t);
        break;
    case CANOPY_I64:
        CONVERT_FROM(int64_t);
        break;
    case CANOPY_U8:
        CONVERT_FROM(uint8_t);
        break;
    }
}

canopy_status canopy_array_convert(canopy_array *a, canopy_dtype t) {
    size_t ssize = canopy_dtype_size(a->dtype), dsize = canopy_dtype_size(t);
    if (dsize == 0) return canopy_fail(CANOPY_ERR_INVALID, "unknown dtype %d", (int)t);
    if (ssize == 0)
        return canopy_fail(CANOPY_ERR_INVALID, "array has unknown dtype %d", (int)a->dtype);
    int64_t n = canopy_array_count(a);
    if (n < 0) return canopy_fail(CANOPY_ERR_INVALID, "array has an invalid shape");
    if (n > 0 && !a->data) return canopy_fail(CANOPY_ERR_INVALID, "array has no data");
    if (t == a->dtype) return CANOPY_OK;
    canopy_status s = check_convertible(a, n, t);
    if (s != CANOPY_OK) return s;

    /* Narrowing or same-width conversions reuse the buffer (float64 -> float32 points
     * of several GB must not need twice the memory); widening needs a new one. */
    unsigned char *src = a->data, *dst = src;
    if (dsize > ssize) {
        s = canopy_alloc((void **)&dst, (size_t)n, dsize);
        if (s != CANOPY_OK) return s;
    }
    /* Blocks go through a separate buffer: in place, block b's output overlaps only
     * input that has already been read, and the memmove keeps the compiler from
     * reordering loads and stores of differently typed views of one buffer. */
    enum { BLOCK = 2048 };
    _Alignas(64) unsigned char tmp[BLOCK * 8];
    for (int64_t b = 0; b < n; b += BLOCK) {
        int64_t m = n - b < BLOCK ? n - b : BLOCK;
        convert_block(src + (size_t)b * ssize, a->dtype, tmp, t, m);
        memmove(dst + (size_t)b * dsize, tmp, (size_t)m * dsize);
    }
    if (dst != src) {
        canopy_free(src);
        a->data = dst;
    }
    a->dtype = t;
    return CANOPY_OK;
}
