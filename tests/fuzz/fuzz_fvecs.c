/* SPDX-License-Identifier: MIT */
/* libFuzzer target: canopy_vecs_read_mem (.fvecs) on arbitrary bytes must never crash,
 * leak or read out of bounds; a success holds exactly the input's vectors. */
#include "canopy.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    canopy_array a;
    canopy_status s = canopy_vecs_read_mem(data, size, "fuzz.fvecs", &a);
    if (s != CANOPY_OK) {
        if (a.data || strncmp(canopy_last_error(), "fuzz.fvecs", 10) != 0) abort();
        return 0;
    }
    if (a.ndim != 2 || a.shape[1] < 1 ||
        (uint64_t)a.shape[0] * (4 + 4 * (uint64_t)a.shape[1]) != size)
        abort();
    canopy_array_release(&a);
    return 0;
}
