/* SPDX-License-Identifier: MIT */
/* A resolved prediction: the options with every auto choice made, the layout (and
 * interpreter program) built from them. canopy_forest_predict makes one per call; a
 * canopy_predictor keeps one for all its calls. */
#ifndef CANOPY_FOREST_PLAN_H
#define CANOPY_FOREST_PLAN_H

#include "forest/engine.h"
#include "forest/forest.h"

typedef struct cf_plan {
    canopy_predict_options o; /* resolved */
    canopy_isa isa;
    int gpu, vm;
    cf_layout L;
    cvm_program prog;
    uint8_t *cold; /* sampled branch statistics for sll/hybrid (canopy_cf_sample_bias), or NULL */
    canopy_predict_stats st; /* the choices' part (beta, model costs, isa, build time) */
} cf_plan;

/* Option checks and auto resolution; X gives the dimension check and the sample that
 * sets beta (X.n = 0: no sample, beta 0.5). */
canopy_status canopy_cf_predict_resolve(const canopy_forest *f, canopy_points X,
                                        const canopy_predict_options *opt, cf_plan *plan);
/* Builds the layout (and program) of a resolved plan; frees it on failure. */
canopy_status canopy_cf_predict_build(const canopy_forest *f, cf_plan *plan);
/* Predicts X over the plan's layout; the plan is only read. */
canopy_status canopy_cf_predict_run(const canopy_forest *f, const cf_plan *plan, canopy_points X,
                                    double *out, canopy_predict_stats *stats);
void canopy_cf_plan_free(cf_plan *plan);

#endif
