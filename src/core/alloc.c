/* SPDX-License-Identifier: MIT */
/* Overflow-checked, aligned allocation: sizes from files are untrusted, so every
 * count * size product is checked before it reaches the allocator. */
#define _DEFAULT_SOURCE /* madvise */
#include "canopy.h"
#include "core/device.h"

#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

enum { ALIGNMENT = 64 }; /* a cache line, and the widest SIMD load */

canopy_status canopy_mul_size(size_t a, size_t b, size_t *out) {
    if (b != 0 && a > SIZE_MAX / b)
        return canopy_fail(CANOPY_ERR_NOMEM, "size overflow: %zu * %zu", a, b);
    *out = a * b;
    return CANOPY_OK;
}

canopy_status canopy_alloc(void **out, size_t count, size_t elem_size) {
    size_t bytes = 0;
    *out = NULL;
    canopy_status s = canopy_mul_size(count, elem_size, &bytes);
    if (s != CANOPY_OK) return s;
    if (bytes > SIZE_MAX - ALIGNMENT)
        return canopy_fail(CANOPY_ERR_NOMEM, "allocation of %zu bytes is too large", bytes);
    size_t rounded = (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    void *p = aligned_alloc(ALIGNMENT, rounded ? rounded : ALIGNMENT);
    if (!p) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory allocating %zu bytes", bytes);
    *out = p;
    return CANOPY_OK;
}

canopy_status canopy_calloc(void **out, size_t count, size_t elem_size) {
    canopy_status s = canopy_alloc(out, count, elem_size);
    if (s == CANOPY_OK) memset(*out, 0, count * elem_size);
    return s;
}

/* A fault per 4 KiB page cost about 1.5-2 us on the 2-core VM, a huge page's a
 * fraction of that per 4 KiB (bench/results/paircount.md, 10^6 bins). */
enum { HUGE_PAGE = 2 << 20 };

canopy_status canopy_alloc_large(void **out, size_t count, size_t elem_size) {
    size_t bytes = 0;
    *out = NULL;
    canopy_status s = canopy_mul_size(count, elem_size, &bytes);
    if (s != CANOPY_OK || bytes < HUGE_PAGE) return s ? s : canopy_alloc(out, count, elem_size);
    if (bytes > SIZE_MAX - HUGE_PAGE)
        return canopy_fail(CANOPY_ERR_NOMEM, "allocation of %zu bytes is too large", bytes);
    size_t rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = aligned_alloc(HUGE_PAGE, rounded);
    if (!p) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory allocating %zu bytes", bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(p, rounded, MADV_HUGEPAGE); /* advice: small pages where it is refused */
#endif
    *out = p;
    return CANOPY_OK;
}

void canopy_free(void *p) {
    free(p);
}

/* A memory budget rather than a traversal's choice, so that the CUDA module's profile
 * passes (core/cuda_module.h's host services) read the same environment. */
int64_t canopy_profile_chunk(int32_t words) {
    int64_t limit = (int64_t)256 << 20;
    const char *env = getenv("CANOPY_PROFILE_MAX_BYTES");
    if (env && atoll(env) > 0) limit = atoll(env);
    int64_t chunk = limit / ((int64_t)words * (int64_t)sizeof(uint64_t));
    return chunk < 32 ? 32 : chunk;
}
