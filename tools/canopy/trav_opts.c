/* SPDX-License-Identifier: MIT */
#include "trav_opts.h"

#include <stdio.h>
#include <string.h>

void trav_opts_init(trav_opts *o) {
    memset(o, 0, sizeof *o);
    o->run = canopy_run_options_default();
}

int grav_parse_opening(const char *cmd, const char *arg, canopy_opening *o) {
    if (!strcmp(arg, "body"))
        *o = CANOPY_OPENING_BODY;
    else if (!strcmp(arg, "bucket"))
        *o = CANOPY_OPENING_BUCKET;
    else if (!strcmp(arg, "list"))
        *o = CANOPY_OPENING_LIST;
    else
        return cli_usage_error(cmd, "--opening must be body, bucket or list (got '%s')", arg);
    return 0;
}

int grav_parse_tree(const char *cmd, const char *arg, canopy_gravity_tree *t) {
    if (!strcmp(arg, "oct"))
        *t = CANOPY_GRAVITY_TREE_OCT;
    else if (!strcmp(arg, "binary"))
        *t = CANOPY_GRAVITY_TREE_BINARY;
    else
        return cli_usage_error(cmd, "--tree must be oct or binary (got '%s')", arg);
    return 0;
}

int grav_parse_periodic(const char *cmd, const char *arg, canopy_periodic_method *m) {
    if (!strcmp(arg, "auto"))
        *m = CANOPY_PERIODIC_AUTO;
    else if (!strcmp(arg, "ewald"))
        *m = CANOPY_PERIODIC_EWALD;
    else if (!strcmp(arg, "treepm"))
        *m = CANOPY_PERIODIC_TREEPM;
    else
        return cli_usage_error(cmd, "--periodic must be auto, ewald or treepm (got '%s')", arg);
    return 0;
}

const char *grav_periodic_name(canopy_periodic_method m) {
    return m == CANOPY_PERIODIC_TREEPM ? "treepm" : m == CANOPY_PERIODIC_EWALD ? "ewald" : "auto";
}

const char *grav_opening_name(canopy_opening o) {
    return o == CANOPY_OPENING_LIST ? "list" : o == CANOPY_OPENING_BUCKET ? "bucket" : "body";
}

const char *grav_tree_name(canopy_gravity_tree t) {
    return t == CANOPY_GRAVITY_TREE_BINARY ? "binary" : "oct";
}

int trav_opts_handle(const char *cmd, int opt, const char *arg, void *ctx) {
    trav_opts *o = ctx;
    canopy_status s = CANOPY_OK;
    switch (opt) {
    case OPT_TREE:
        if (o->tree_fixed) return cli_usage_error(cmd, "%s", o->tree_fixed), -1;
        s = canopy_tree_kind_parse(arg, &o->run.tree);
        break;
    case OPT_VARIANT:
        s = canopy_variant_parse(arg, &o->run.variant);
        break;
    case OPT_SCHEDULE:
        s = canopy_schedule_parse(arg, &o->run.schedule);
        break;
    case OPT_BACKEND:
        s = canopy_backend_parse(arg, &o->run.backend);
        break;
    case OPT_LEAF_SIZE: {
        int64_t v = 0;
        if (cli_parse_i64(cmd, "--leaf-size", arg, 1, 1 << 20, &v)) return -1;
        o->run.leaf_size = (int32_t)v;
        return 1;
    }
    case OPT_PROFILE_DEPTH: {
        int64_t v = 0;
        if (cli_parse_i64(cmd, "--profile-depth", arg, 0, 64, &v)) return -1;
        o->run.profile_depth = (int32_t)v;
        return 1;
    }
    case OPT_INDEX:
        o->index_path = arg;
        return 1;
    default:
        return 0;
    }
    if (s) {
        cli_usage_error(cmd, "%s", canopy_last_error());
        return -1;
    }
    return 1;
}

void trav_print_stats(const char *cmd, const canopy_stats *st, double load_seconds,
                      double write_seconds) {
    if (cli_stats_json()) {
        cli_json *j = cli_json_begin(cmd);
        cli_json_seconds(j, "load", load_seconds);
        cli_json_seconds(j, "build", st->build_seconds);
        cli_json_seconds(j, "schedule", st->schedule_seconds);
        cli_json_seconds(j, "transfer", st->transfer_seconds);
        if (st->upload_seconds > 0.0 || st->download_seconds > 0.0) {
            cli_json_seconds(j, "upload", st->upload_seconds);
            cli_json_seconds(j, "download", st->download_seconds);
        }
        cli_json_seconds(j, "run", st->traverse_seconds);
        cli_json_seconds(j, "write", write_seconds);
        cli_json_count(j, "queries", (double)st->queries);
        cli_json_count(j, "tree_nodes", st->tree_nodes);
        cli_json_count(j, "tree_depth", st->tree_depth);
        cli_json_count(j, "nodes_per_query", st->nodes_per_query);
        if (st->threads > 0) cli_json_count(j, "team_threads", st->threads);
        if (st->work_expansion > 0.0) {
            cli_json_count(j, "nodes_per_group", st->nodes_per_group);
            cli_json_count(j, "work_expansion", st->work_expansion);
        }
        if (st->variant == CANOPY_VARIANT_SIMD_L)
            cli_json_count(j, "lane_calls", (double)st->lane_calls);
        cli_json_choice(j, "backend", canopy_backend_name(st->backend));
        cli_json_choice(j, "variant", canopy_variant_name(st->variant));
        cli_json_choice(j, "schedule", canopy_schedule_name(st->schedule));
        cli_json_choice(j, "tree", canopy_tree_kind_name(st->tree));
        cli_json_emit(j, st->note[0] ? st->note : "as requested");
        return;
    }
    /* the team the traversal ran on (sized by its work), not the most it could have had */
    char threads[48];
    if (st->threads > 0)
        snprintf(threads, sizeof threads, "%d of %d", (int)st->threads, canopy_threads());
    else
        snprintf(threads, sizeof threads, "%s",
                 st->backend == CANOPY_BACKEND_GPU ? "none (GPU)" : "not reported");
    fprintf(stderr,
            "%s stats:\n"
            "  backend %s, variant %s, schedule %s, tree %s (%d nodes, depth %d), threads %s\n"
            "  choice: %s\n"
            "  load %.4f s, build %.4f s%s, schedule %.4f s, transfer %.4f s, traverse %.4f s, "
            "write %.4f s\n"
            "  queries %lld, nodes visited per query %.1f",
            cmd, canopy_backend_name(st->backend), canopy_variant_name(st->variant),
            canopy_schedule_name(st->schedule), canopy_tree_kind_name(st->tree), st->tree_nodes,
            st->tree_depth, threads, st->note[0] ? st->note : "as requested", load_seconds,
            st->build_seconds, st->index_reused ? " (reused index)" : "", st->schedule_seconds,
            st->transfer_seconds, st->traverse_seconds, write_seconds, (long long)st->queries,
            st->nodes_per_query);
    if (st->work_expansion > 0.0)
        fprintf(
            stderr,
            ",\n  nodes per warp/packet %.1f, work expansion %.2f (packet nodes / longest member)",
            st->nodes_per_group, st->work_expansion);
    if (st->variant == CANOPY_VARIANT_SIMD_L)
        fprintf(stderr, "\n  simd_l: %s, lane_calls %lld (scalar hook calls made lane by lane)",
                st->lane_calls ? "per-lane fallback (no vector hooks)" : "vector hooks",
                (long long)st->lane_calls);
    if (st->backend == CANOPY_BACKEND_GPU) {
        if (st->device_tree_reused)
            fprintf(stderr, "\n  tree upload 0 bytes, 0.0000 s (reused device tree)");
        else
            fprintf(stderr, "\n  tree upload %lld bytes, %.4f s", (long long)st->tree_upload_bytes,
                    st->tree_upload_seconds);
        if (st->upload_seconds > 0.0 || st->download_seconds > 0.0)
            fprintf(stderr,
                    "\n  host arrays: queries in %.4f s, results out %.4f s (the transfer above; "
                    "how: see the choice)",
                    st->upload_seconds, st->download_seconds);
    }
    if (st->profile_depth > 0)
        fprintf(stderr, "\n  hybrid profile: top tree of %d levels, %d leaves", st->profile_depth,
                st->profile_leaves);
    fputc('\n', stderr);
}

int cli_load_points(const char *cmd, const char *path, canopy_array *a, canopy_points *p) {
    if (canopy_points_load(path, a)) return cli_runtime_error(cmd);
    int64_t d = a->ndim == 2 ? a->shape[1] : 1;
    *p = canopy_points_make((const float *)a->data, a->shape[0], (int32_t)d);
    return 0;
}

int cli_load_index(const char *cmd, const char *path, canopy_index **ix, canopy_points *ref) {
    canopy_index_info info;
    if (canopy_index_load(path, ix)) return cli_runtime_error(cmd);
    canopy_index_get_info(*ix, &info);
    /* The shape only: the points stay inside the index. */
    *ref = canopy_points_make(NULL, info.n, info.d);
    return CLI_OK;
}

int cli_load_ref_query(const char *cmd, const char *ref_path, const char *query_path,
                       canopy_array *ra, canopy_points *ref, canopy_array *qa,
                       canopy_points *query) {
    memset(qa, 0, sizeof *qa);
    memset(query, 0, sizeof *query);
    if (ref_path && cli_load_points(cmd, ref_path, ra, ref)) return CLI_ERROR;
    if (query_path && cli_load_points(cmd, query_path, qa, query)) {
        canopy_array_release(ra);
        return CLI_ERROR;
    }
    return CLI_OK;
}
