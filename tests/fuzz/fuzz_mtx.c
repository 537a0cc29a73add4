/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the mtx graph reader on arbitrary bytes must never crash, leak,
 * read out of bounds or allocate beyond what the input can hold (issue 21); a success
 * is a valid CSR within the vertex bound of docs/graphs.md. */
#include "fuzz_graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_graph_check(canopy_graph_mtx_read_mem, data, size);
    return 0;
}
