/* SPDX-License-Identifier: MIT */
/* libFuzzer target: canopy_npy_read_mem on arbitrary bytes must never crash, leak or
 * read out of bounds, and must keep its contract (an error leaves no array and
 * names the input; a success returns an array that fits in the input). */
#include "canopy.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    canopy_array a;
    canopy_status s = canopy_npy_read_mem(data, size, "fuzz.npy", &a);
    if (s != CANOPY_OK) {
        if (a.data || strncmp(canopy_last_error(), "fuzz.npy: ", 10) != 0) abort();
        return 0;
    }
    int64_t n = canopy_array_count(&a);
    if (n < 0 || a.ndim > CANOPY_MAX_DIMS || (uint64_t)n * canopy_dtype_size(a.dtype) > size)
        abort();
    canopy_array_release(&a);
    return 0;
}
