/* SPDX-License-Identifier: MIT */
/* libFuzzer target: canopy_csv_read_mem on arbitrary bytes must never crash, leak or
 * read out of bounds (the input is not NUL-terminated), and must keep its contract:
 * an error leaves no array and names the input; a success is a 2-D float64 table
 * with at least one column. */
#include "canopy.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    canopy_array a;
    canopy_status s = canopy_csv_read_mem(data, size, "fuzz.csv", &a);
    if (s != CANOPY_OK) {
        if (a.data || strncmp(canopy_last_error(), "fuzz.csv: ", 10) != 0) abort();
        return 0;
    }
    if (a.dtype != CANOPY_F64 || a.ndim != 2 || a.shape[1] < 1 ||
        a.shape[0] * a.shape[1] > (int64_t)size)
        abort();
    canopy_array_release(&a);
    return 0;
}
