/* SPDX-License-Identifier: MIT */
/* PTSD strategy names and the common entry: checks, dispatch, timing. */
#include "ptsd/ptsd.h"

#include <string.h>

static const char *const names[CANOPY_PTSD_STRATEGY_COUNT] = {
    "rec", "flat", "crec", "hier", "gpu-rec", "gpu-flat", "gpu-crec", "gpu-hier"};

const char *canopy_ptsd_strategy_name(canopy_ptsd_strategy s) {
    return (unsigned)s < CANOPY_PTSD_STRATEGY_COUNT ? names[s] : "?";
}

canopy_status canopy_ptsd_strategy_parse(const char *s, canopy_ptsd_strategy *out) {
    for (int i = 0; s && i < CANOPY_PTSD_STRATEGY_COUNT; i++)
        if (!strcmp(s, names[i])) {
            *out = (canopy_ptsd_strategy)i;
            return CANOPY_OK;
        }
    return canopy_fail(CANOPY_ERR_INVALID,
                       "unknown tree strategy '%s' (rec, flat, crec, hier; GPU: "
                       "gpu-rec, gpu-flat, gpu-crec, gpu-hier)",
                       s ? s : "(null)");
}

canopy_status canopy_ptsd_run_strategy(const canopy_ptree *t, canopy_ptsd_strategy s,
                                       const ptsd_agg *a, double *seconds) {
    if (!t || t->n < 1 || !t->parent || !t->child_ptr || !t->child)
        return canopy_fail(CANOPY_ERR_INVALID, "tree: not initialised");
    double t0 = canopy_now();
    canopy_status st;
    switch (s) {
    case CANOPY_PTSD_REC:
        st = canopy_ptsd_run_rec(t, a);
        break;
    case CANOPY_PTSD_FLAT:
        st = canopy_ptsd_run_flat(t, a);
        break;
    case CANOPY_PTSD_CREC:
        st = canopy_ptsd_run_crec(t, a);
        break;
    case CANOPY_PTSD_HIER:
        st = canopy_ptsd_run_hier(t, a);
        break;
    default:
        return canopy_fail(CANOPY_ERR_INVALID, "tree: unknown strategy %d", (int)s);
    }
    if (seconds) *seconds = canopy_now() - t0;
    return st;
}
