/* SPDX-License-Identifier: MIT */
/* Names of variants, schedules and backends, as the CLI and --stats spell them. */
#include "canopy.h"

#include <string.h>

static const char *const variant_names[CANOPY_VARIANT_COUNT] = {
    "auto", "rec", "dr", "sr", "gdr", "simd_l", "dr_l", "sr_l", "fsm_l"};
static const char *const schedule_names[CANOPY_SCHEDULE_COUNT] = {"auto",   "none",    "tree",
                                                                  "morton", "hilbert", "hybrid"};
static const char *const backend_names[] = {"auto", "cpu", "gpu"};

const char *canopy_variant_name(canopy_variant v) {
    return (unsigned)v < CANOPY_VARIANT_COUNT ? variant_names[v] : "unknown";
}
const char *canopy_schedule_name(canopy_schedule s) {
    return (unsigned)s < CANOPY_SCHEDULE_COUNT ? schedule_names[s] : "unknown";
}
const char *canopy_backend_name(canopy_backend b) {
    return (unsigned)b < 3 ? backend_names[b] : "unknown";
}

static canopy_status parse(const char *what, const char *s, const char *const *names, int n,
                           const char *list, int *out) {
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return CANOPY_OK;
        }
    return canopy_fail(CANOPY_ERR_INVALID, "unknown %s '%s' (expected %s)", what, s, list);
}

canopy_status canopy_variant_parse(const char *s, canopy_variant *out) {
    int v = 0;
    canopy_status st = parse("variant", s, variant_names, CANOPY_VARIANT_COUNT,
                             "auto, rec, dr, sr, gdr, simd_l, dr_l, sr_l, fsm_l", &v);
    *out = (canopy_variant)v;
    return st;
}
canopy_status canopy_schedule_parse(const char *s, canopy_schedule *out) {
    int v = 0;
    canopy_status st = parse("schedule", s, schedule_names, CANOPY_SCHEDULE_COUNT,
                             "auto, none, tree, morton, hilbert, hybrid", &v);
    *out = (canopy_schedule)v;
    return st;
}
canopy_status canopy_backend_parse(const char *s, canopy_backend *out) {
    int v = 0;
    canopy_status st = parse("backend", s, backend_names, 3, "auto, cpu, gpu", &v);
    *out = (canopy_backend)v;
    return st;
}

canopy_run_options canopy_run_options_default(void) {
    canopy_run_options o;
    memset(&o, 0, sizeof o);
    o.tree = CANOPY_TREE_KD;
    return o;
}
