/* SPDX-License-Identifier: MIT */
/* Where the GPU's specialised kd walks (kd_walk_gpu.cu: kNN and radius counts, the
 * dimension a template argument, box bounds kept on the walk's stack) run: variants dr
 * and dr_l on kd trees of up to KD_WALK_MAX_D dimensions and KD_WALK_MAX_DEPTH levels.
 * Host code reads it too (auto choices, --stats notes). */
#ifndef CANOPY_APPS_KD_WALK_H
#define CANOPY_APPS_KD_WALK_H

#include "canopy/traverse.h"

enum { KD_WALK_MAX_D = 8, KD_WALK_MAX_DEPTH = 65 };

CANOPY_HD int kd_walk_applies(const canopy_tree_view *t, int variant) {
    return t->kind == CANOPY_TREE_KD && t->max_children == 2 && t->d >= 1 &&
           t->d <= KD_WALK_MAX_D && t->depth <= KD_WALK_MAX_DEPTH &&
           (variant == CANOPY_VARIANT_DR || variant == CANOPY_VARIANT_DR_L);
}

#endif
