/* Selection on (key, index) pairs, shared by the builders that split at a median. */
#ifndef CANOPY_TREE_SELECT_H
#define CANOPY_TREE_SELECT_H

#include <stdint.h>

/* Reorders key[0..n) and perm[0..n) together so that key[nth] is the value a full
 * sort would put there, with no larger key before it and no smaller after it.
 * Three-way partitioning keeps it linear on inputs with many equal keys. */
void canopy_select_pairs(float *key, int64_t *perm, int64_t n, int64_t nth);

#endif
