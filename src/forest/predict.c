/* SPDX-License-Identifier: MIT */
/* canopy_forest_predict: option resolution (auto layout via the cache model), layout
 * construction, the row-block x tree-block parallel loop over the chosen engine,
 * and the final aggregation, base score and link. */
#include "core/device.h"
#include "forest/engine.h"
#include "forest/forest.h"
#include "forest/gpu.h"
#include "forest/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The interpreter's queue holds ROW_BLOCK x TREE_BLOCK tasks per call; a task of
 * either engine spans at most SYNC_SPAN rows (cache_blocks). */
enum { ROW_BLOCK = 64, TREE_BLOCK = 64, SYNC_SPAN = 16384 };

canopy_predict_options canopy_predict_options_default(void) {
    canopy_predict_options o;
    memset(&o, 0, sizeof o);
    o.compaction = 1;
    return o;
}

static int is_linked(canopy_forest_layout l) {
    return l >= CANOPY_FOREST_LAYOUT_DF && l <= CANOPY_FOREST_LAYOUT_HYBRID;
}

static canopy_status build(const canopy_forest *f, canopy_forest_layout l, int32_t hier_depth,
                           int32_t switch_level, const uint8_t *cold, cf_layout *L) {
    switch (l) {
    case CANOPY_FOREST_LAYOUT_CSR:
        return canopy_cf_build_csr(f, L);
    case CANOPY_FOREST_LAYOUT_HIER:
        return canopy_cf_build_hier(f, hier_depth ? hier_depth : 4, L);
    default:
        return canopy_cf_build_linked(f, l, switch_level, cold, L);
    }
}

/* auto: for the interpreter, Ren's cache model's choice between ll and cc
 * (cache_model.c says why not sll or hybrid; with no data, beta = 0.5, no bias). The walkers read
 * one tree at a time for a row block, which the model does not describe: they take bf (each tree's
 * top levels in its first lines), among the fastest layouts for them on every benchmark workload
 * (bench/results/forests.md), with neither the model (its costs stay 0 in the stats) nor the branch
 * sample (beta 0): on one core they cost 3-11 % of a 10,000-row walk of 200-1,200 trees. */
static void resolve_auto(const canopy_forest *f, canopy_points X, canopy_predict_options *o,
                         canopy_predict_stats *st, uint8_t *cold) {
    int interp = o->engine == CANOPY_FOREST_ENGINE_VM || o->engine == CANOPY_FOREST_ENGINE_VM_SIMD;
    if (o->layout == CANOPY_FOREST_LAYOUT_AUTO && !interp) {
        o->layout = CANOPY_FOREST_LAYOUT_BF;
        st->beta = X.n > 0 ? 0 : 0.5;
        return;
    }
    double beta = X.n > 0 ? canopy_cf_sample_bias(f, X, cold) : 0.5;
    cf_cache_choice c;
    canopy_cf_cache_model(f, beta, &c);
    if (o->layout == CANOPY_FOREST_LAYOUT_AUTO)
        o->layout = c.forest_layout;
    else if (o->layout == CANOPY_FOREST_LAYOUT_HYBRID && !o->switch_level)
        o->switch_level = c.switch_level;
    st->beta = beta;
    memcpy(st->model_cost, c.cost, sizeof c.cost);
    st->model_layout = c.forest_layout;
    st->model_switch_level = c.switch_level;
}

canopy_status canopy_forest_layout_bytes(const canopy_forest *f, canopy_forest_layout l,
                                         size_t *bytes) {
    canopy_predict_options o = canopy_predict_options_default();
    o.layout = l;
    canopy_predict_stats st;
    canopy_points none = {NULL, 0, f->n_features, f->n_features};
    if (l == CANOPY_FOREST_LAYOUT_AUTO || l == CANOPY_FOREST_LAYOUT_HYBRID)
        resolve_auto(f, none, &o, &st, NULL);
    cf_layout L;
    canopy_status s = build(f, o.layout, o.hier_depth, o.switch_level, NULL, &L);
    if (s) return s;
    *bytes = L.bytes;
    canopy_cf_layout_free(&L);
    return CANOPY_OK;
}

static void walk(const cf_layout *L, canopy_isa isa, const float *X, int64_t stride, int64_t r0,
                 int64_t r1, int32_t t0, int32_t t1, double *acc) {
    switch (L->kind) {
    case CANOPY_FOREST_LAYOUT_CSR:
        canopy_cf_walk_csr(L, X, stride, r0, r1, t0, t1, acc);
        break;
    case CANOPY_FOREST_LAYOUT_HIER:
        canopy_cf_walk_hier(L, X, stride, r0, r1, t0, t1, acc);
        break;
    default:
        canopy_cf_walk_sync(L, isa, X, stride, r0, r1, t0, t1, acc);
        break;
    }
}

/* Row spans and tree blocks of the CPU engines (one core: 1.7x for the walker on a
 * 1,200-tree depth-8 model, bench/results/forests.md). The walker copies each
 * CF_SYNC_ROWS-row block feature-major once per call and then walks the call's trees
 * over it, the interpreter queues 64 rows x 64 trees; while all trees fit in L2, a task
 * takes one such row block and every tree. Beyond L2, every row block would pull each
 * tree from L3 or memory again: then a task takes a span of up to SYNC_SPAN rows and
 * walks it through the trees block by block, each block the trees that fill this
 * machine's L2 (cache_calibrate.c reads its size), reused from L2 by the whole span.
 * A row still meets the trees in the same order: the sums do not change. */
static void cache_blocks(const cf_layout *L, const cvm_program *prog, int vm, int64_t n,
                         int threads, int64_t *rows, int32_t *trees) {
    int32_t nt = L->n_trees > 0 ? L->n_trees : 1;
    int64_t l2 = canopy_cf_machine_latencies()->l2_bytes, bytes = 0;
    if (l2 <= 0) l2 = 512 << 10; /* unknown: a small L2 */
    if (vm)
        bytes =
            (int64_t)prog->n * (int64_t)sizeof(cvm_insn) + L->n_leaves * (int64_t)sizeof(double);
    else if (L->perf_nodes) /* complete trees: every slot's node, the bottom slots' values */
        for (int32_t t = 0; t < L->n_trees; t++)
            bytes += ((int64_t)2 << L->tree_depth[t]) * (int64_t)sizeof(cf_pnode) +
                     ((int64_t)1 << L->tree_depth[t]) * (int64_t)sizeof(double);
    else
        bytes = L->n_lnodes * (int64_t)(sizeof(cf_snode) + sizeof(double));
    int64_t per_tree = bytes / nt > 0 ? bytes / nt : 1, fit = l2 / per_tree;
    int64_t unit = vm ? ROW_BLOCK : CF_SYNC_ROWS;
    *rows = unit;
    *trees = nt;
    if (fit >= nt) return;
    *trees = (int32_t)(fit > 0 ? fit : 1);
    /* at least two spans per thread, so the dynamic schedule can balance them */
    int64_t span = n / (2 * (int64_t)threads) / unit * unit;
    *rows = span < unit ? unit : span > SYNC_SPAN ? SYNC_SPAN : span;
}

/* ---- GPU backend selection (the engines: gpu_*.cu, docs/forests.md "GPU engines") ---- */

/* --backend auto takes the GPU from this many (row, tree) walks and rows on: below,
 * the row upload and launch cost more than the CPU needs for the whole batch. */
#define CF_GPU_AUTO_WALKS 4000000.0
#define CF_GPU_AUTO_ROWS 20000

static int is_gpu_engine(canopy_forest_engine e) {
    return e >= CANOPY_FOREST_ENGINE_GPU_ITER && e <= CANOPY_FOREST_ENGINE_GPU_REN;
}

/* Sets *gpu and, for the GPU, resolves engine auto and layout auto. Engine auto is
 * ren (the fastest kernel in bench/results/forests-gpu.md); layout auto is the cache
 * model's linked layout for ren, hier for the others. */
static canopy_status pick_backend(const canopy_forest *f, canopy_points X,
                                  canopy_predict_options *o, int *gpu) {
    int ge = is_gpu_engine(o->engine);
    *gpu = 0;
    if (o->backend == CANOPY_BACKEND_CPU) {
        if (ge)
            return canopy_fail(CANOPY_ERR_INVALID,
                               "engine %s runs on the GPU; use --backend gpu or auto",
                               canopy_forest_engine_name(o->engine));
        return CANOPY_OK;
    }
    if (o->backend == CANOPY_BACKEND_GPU && !ge && o->engine != CANOPY_FOREST_ENGINE_AUTO)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "engine %s runs on the CPU; the GPU engines are iter, enc, collab, ren",
                           canopy_forest_engine_name(o->engine));
    if (o->backend == CANOPY_BACKEND_AUTO && !ge) {
        /* sizes first: a run that stays on the CPU never loads CUDA */
        if (o->engine != CANOPY_FOREST_ENGINE_AUTO || X.n < CF_GPU_AUTO_ROWS ||
            (double)X.n * f->n_trees < CF_GPU_AUTO_WALKS || !canopy_gpu_usable())
            return CANOPY_OK;
    }
    if (!canopy_gpu_usable())
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "GPU backend: %s; use --backend cpu",
                           canopy_gpu_why_not());
    *gpu = 1;
    if (o->engine == CANOPY_FOREST_ENGINE_AUTO) o->engine = CANOPY_FOREST_ENGINE_GPU_REN;
    if (o->layout == CANOPY_FOREST_LAYOUT_AUTO && o->engine != CANOPY_FOREST_ENGINE_GPU_REN)
        o->layout = CANOPY_FOREST_LAYOUT_HIER;
    return CANOPY_OK;
}

/* Raw scores -> the requested output, in place per row. */
static void finish_row(const canopy_forest *f, const double *inv_count, double *acc,
                       canopy_forest_output o, double *out) {
    int32_t K = f->n_outputs;
    for (int32_t k = 0; k < K; k++) acc[k] = acc[k] * inv_count[k] + f->base[k];
    if (o == CANOPY_FOREST_OUTPUT_RAW) {
        memcpy(out, acc, (size_t)K * sizeof *out);
        return;
    }
    if (o == CANOPY_FOREST_OUTPUT_CLASS && f->n_classes == 0 && f->link != CANOPY_LINK_EXP &&
        f->link != CANOPY_LINK_SIGMOID && K == 1) {
        out[0] = acc[0]; /* regression: the prediction */
        return;
    }
    double *p = acc; /* the link in place: acc is this row's scratch */
    switch (f->link) {
    case CANOPY_LINK_IDENTITY:
        break;
    case CANOPY_LINK_SIGMOID:
        for (int32_t k = 0; k < K; k++) p[k] = 1.0 / (1.0 + exp(-f->sigmoid_scale * acc[k]));
        break;
    case CANOPY_LINK_EXP:
        for (int32_t k = 0; k < K; k++) p[k] = exp(acc[k]);
        break;
    case CANOPY_LINK_SOFTMAX: {
        double m = acc[0], sum = 0;
        for (int32_t k = 1; k < K; k++) m = acc[k] > m ? acc[k] : m;
        for (int32_t k = 0; k < K; k++) sum += p[k] = exp(acc[k] - m);
        for (int32_t k = 0; k < K; k++) p[k] /= sum;
        break;
    }
    }
    if (o == CANOPY_FOREST_OUTPUT_PROB) {
        memcpy(out, p, (size_t)K * sizeof *out);
        return;
    }
    if (K == 1) {
        /* one score: a binary class by the link's midpoint, else the prediction */
        if (f->link == CANOPY_LINK_SIGMOID)
            out[0] = p[0] > 0.5;
        else if (f->n_classes == 2)
            out[0] =
                p[0] >
                (f->link == CANOPY_LINK_IDENTITY && f->aggregation == CANOPY_AGG_MEAN ? 0.5 : 0.0);
        else
            out[0] = p[0];
        return;
    }
    int32_t best = 0;
    for (int32_t k = 1; k < K; k++)
        if (p[k] > p[best]) best = k;
    out[0] = best;
}

canopy_status canopy_cf_predict_resolve(const canopy_forest *f, canopy_points X,
                                        const canopy_predict_options *opt, cf_plan *plan) {
    memset(plan, 0, sizeof *plan);
    canopy_predict_options o = opt ? *opt : canopy_predict_options_default();
    canopy_predict_stats st;
    memset(&st, 0, sizeof st);
    if (X.d != f->n_features)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "the data has %d columns but the model has %d "
                           "features",
                           X.d, f->n_features);
    if ((unsigned)o.layout >= CANOPY_FOREST_LAYOUT_COUNT ||
        (unsigned)o.engine >= CANOPY_FOREST_ENGINE_COUNT ||
        (unsigned)o.output > CANOPY_FOREST_OUTPUT_CLASS ||
        (unsigned)o.mapping >= CANOPY_FOREST_MAPPING_COUNT)
        return canopy_fail(CANOPY_ERR_INVALID, "bad prediction options");
    if (o.hier_depth && (o.hier_depth < 3 || o.hier_depth > 5))
        return canopy_fail(CANOPY_ERR_INVALID, "hier subtree depth %d (3 to 5)", o.hier_depth);
    if (o.switch_level < 0)
        return canopy_fail(CANOPY_ERR_INVALID, "switch level %d < 0", o.switch_level);
    int gpu = 0;
    canopy_status s = pick_backend(f, X, &o, &gpu);
    if (s) return s;
    /* sll and hybrid put the pairs under the more-taken children first (Ren §5.3):
     * branch statistics from the sample that gives beta */
    uint8_t *cold = NULL;
    int interp_auto =
        o.layout == CANOPY_FOREST_LAYOUT_AUTO &&
        (o.engine == CANOPY_FOREST_ENGINE_VM || o.engine == CANOPY_FOREST_ENGINE_VM_SIMD);
    if (X.n > 0 && (interp_auto || o.layout == CANOPY_FOREST_LAYOUT_SLL ||
                    o.layout == CANOPY_FOREST_LAYOUT_HYBRID))
        cold = malloc((size_t)f->n_nodes);
    if (o.layout == CANOPY_FOREST_LAYOUT_AUTO || o.layout == CANOPY_FOREST_LAYOUT_HYBRID)
        resolve_auto(f, X, &o, &st, cold);
    else if (cold)
        st.beta = canopy_cf_sample_bias(f, X, cold);
    /* auto on linked layouts: the level-synchronous walker, on SIMD lanes where
     * AVX-512 gathers are there (bench/results/forests.md measured it ahead of the
     * interpreter and of AVX2 gathers; docs/forests.md), unless this machine's
     * calibration measured them behind the scalar walker. */
    canopy_isa cpu = canopy_cpu_isa();
    if (o.engine == CANOPY_FOREST_ENGINE_AUTO)
        o.engine = is_linked(o.layout) && cpu >= CANOPY_ISA_AVX512 &&
                           canopy_cf_machine_latencies()->simd_walk != 0
                       ? CANOPY_FOREST_ENGINE_SIMD
                       : CANOPY_FOREST_ENGINE_SCALAR;
    int vm = o.engine == CANOPY_FOREST_ENGINE_VM || o.engine == CANOPY_FOREST_ENGINE_VM_SIMD;
    if ((vm || o.engine == CANOPY_FOREST_ENGINE_SIMD) && !is_linked(o.layout)) {
        free(cold);
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "engine %s runs the linked layouts (df, bf, ll, sll, cc, hybrid), not "
                           "%s",
                           canopy_forest_engine_name(o.engine),
                           canopy_forest_layout_name(o.layout));
    }
    /* The lanes used: the widest the CPU has (CANOPY_ISA caps it) for the SIMD
     * engines, whose gathers index a row block with 32-bit offsets. */
    canopy_isa isa = CANOPY_ISA_SCALAR;
    if ((o.engine == CANOPY_FOREST_ENGINE_VM_SIMD || o.engine == CANOPY_FOREST_ENGINE_SIMD) &&
        cpu >= CANOPY_ISA_AVX2 && (int64_t)CF_SYNC_ROWS * X.stride * 4 < INT32_MAX)
        isa = cpu >= CANOPY_ISA_AVX512 ? CANOPY_ISA_AVX512 : CANOPY_ISA_AVX2;
    st.isa = isa;
    if (o.layout != CANOPY_FOREST_LAYOUT_SLL && o.layout != CANOPY_FOREST_LAYOUT_HYBRID) {
        free(cold);
        cold = NULL;
    }
    plan->cold = cold;
    plan->o = o;
    plan->isa = isa;
    plan->gpu = gpu;
    plan->vm = vm;
    plan->st = st;
    return CANOPY_OK;
}

canopy_status canopy_cf_predict_build(const canopy_forest *f, cf_plan *plan) {
    double t0 = canopy_now();
    const canopy_predict_options *po = &plan->o;
    canopy_status s = build(f, po->layout, po->hier_depth, po->switch_level, plan->cold, &plan->L);
    if (s) return s;
    if (plan->vm) s = canopy_cf_vm_compile(&plan->L, &plan->prog);
    if (!s && !plan->vm && is_linked(po->layout)) s = canopy_cf_build_sync(f, &plan->L);
    plan->st.build_seconds = canopy_now() - t0;
    if (s) canopy_cf_plan_free(plan);
    return s;
}

void canopy_cf_plan_free(cf_plan *plan) {
    free(plan->prog.code);
    plan->prog.code = NULL;
    canopy_cf_layout_free(&plan->L);
    free(plan->cold);
    plan->cold = NULL;
}

canopy_status canopy_cf_predict_run(const canopy_forest *f, const cf_plan *plan, canopy_points X,
                                    double *out, canopy_predict_stats *stats) {
    if (X.d != f->n_features)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "the data has %d columns but the model has %d features", X.d,
                           f->n_features);
    if (X.n < 0 || X.stride < X.d || (X.n > 0 && (!X.data || !out)))
        return canopy_fail(CANOPY_ERR_INVALID, "bad input view for prediction");
    canopy_predict_options o = plan->o;
    canopy_predict_stats st = plan->st;
    canopy_isa isa = plan->isa;
    int gpu = plan->gpu, vm = plan->vm;
    const cf_layout *Lp = &plan->L;
    const cvm_program prog = plan->prog;
    canopy_status s = CANOPY_OK;
    int32_t K = f->n_outputs, nt = f->n_trees;
    int64_t n = X.n, rbs = vm ? ROW_BLOCK : CF_SYNC_ROWS;
    /* a root-to-leaf walk per row and tree, of about log2(nodes per tree) steps */
    int threads =
        canopy_threads_for((double)n * nt * log2(2.0 + (double)f->n_nodes / (nt > 0 ? nt : 1)));
    int32_t tbs = TREE_BLOCK;
    if (!gpu && is_linked(o.layout)) cache_blocks(Lp, &prog, vm, n, threads, &rbs, &tbs);
    int64_t nrb = (n + rbs - 1) / rbs;
    /* Few row blocks: also split the trees, each group with its own accumulator. */
    int32_t groups = 1;
    if (!gpu && nrb > 0 && nrb < 2 * threads) {
        int64_t want = (2 * threads + nrb - 1) / nrb, most = (nt + TREE_BLOCK - 1) / TREE_BLOCK;
        groups = (int32_t)(want < most ? want : most);
        if (groups < 1) groups = 1;
    }
    double *acc = NULL;
    size_t per = (size_t)(n > 0 ? n : 1) * (size_t)K;
    if (!s) {
        size_t total;
        s = canopy_mul_size(per, (size_t)groups, &total);
        if (!s) s = canopy_calloc((void **)&acc, total, sizeof *acc);
    }
    double t1 = canopy_now();
    int failed = 0;
    cf_gpu_report gr;
    memset(&gr, 0, sizeof gr);
    if (!s && gpu) s = canopy_cf_gpu_predict(f, Lp, X, o.engine, o.mapping, acc, &gr);
    if (!s && n > 0 && !gpu) {
#pragma omp parallel num_threads(threads)
        {
            int32_t *qrow = NULL, *qpc = NULL;
            size_t qn = (size_t)ROW_BLOCK * TREE_BLOCK + CVM_PAD;
            if (vm) {
                qrow = malloc(qn * sizeof *qrow);
                qpc = malloc(qn * sizeof *qpc);
                if (!qrow || !qpc) {
#pragma omp atomic write
                    failed = 1;
                }
            }
#pragma omp for collapse(2) schedule(dynamic, 1)
            for (int32_t g = 0; g < groups; g++)
                for (int64_t rb = 0; rb < nrb; rb++) {
                    if (vm && (!qrow || !qpc)) continue;
                    int64_t r0 = rb * rbs, r1 = r0 + rbs < n ? r0 + rbs : n;
                    int32_t ga = (int32_t)((int64_t)nt * g / groups);
                    int32_t gb = (int32_t)((int64_t)nt * (g + 1) / groups);
                    double *a = acc + (size_t)g * per + (size_t)r0 * K;
                    for (int32_t ta = ga; ta < gb; ta += tbs) {
                        int32_t tb = ta + tbs < gb ? ta + tbs : gb;
                        if (!vm) {
                            walk(Lp, isa, X.data, X.stride, r0, r1, ta, tb, a);
                            continue;
                        }
                        /* the interpreter's queue: 64 rows x 64 trees per call */
                        for (int64_t q0 = r0; q0 < r1; q0 += ROW_BLOCK)
                            for (int32_t tc = ta; tc < tb; tc += TREE_BLOCK)
                                canopy_cf_vm_block(Lp, &prog, isa, o.compaction, X.data, X.stride,
                                                   q0, q0 + ROW_BLOCK < r1 ? q0 + ROW_BLOCK : r1,
                                                   tc, tc + TREE_BLOCK < tb ? tc + TREE_BLOCK : tb,
                                                   qrow, qpc, a + (q0 - r0) * K);
                    }
                }
            free(qrow);
            free(qpc);
        }
        if (failed) s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory for interpreter queues");
    }
    if (!s) {
        double *inv = malloc((size_t)K * sizeof *inv);
        if (!inv) s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
        for (int32_t k = 0; k < K && !s; k++) inv[k] = 1;
        if (!s && f->aggregation == CANOPY_AGG_MEAN) {
            for (int32_t k = 0; k < K; k++) inv[k] = 0;
            for (int32_t t = 0; t < nt; t++) {
                int32_t out_k = f->trees[t].output;
                for (int32_t k = 0; k < K; k++) inv[k] += out_k < 0 || out_k == k;
            }
            for (int32_t k = 0; k < K; k++) inv[k] = inv[k] > 0 ? 1.0 / inv[k] : 0;
        }
        int32_t W = canopy_forest_output_width(f, o.output);
        if (!s) {
#pragma omp parallel for num_threads(threads) schedule(static)
            for (int64_t r = 0; r < n; r++) {
                double *a = acc + (size_t)r * K;
                for (int32_t g = 1; g < groups; g++)
                    for (int32_t k = 0; k < K; k++)
                        a[k] += acc[(size_t)g * per + (size_t)r * K + k];
                finish_row(f, inv, a, o.output, out + (size_t)r * W);
            }
        }
        free(inv);
    }
    st.predict_seconds = canopy_now() - t1;
    st.layout = o.layout;
    st.engine = o.engine;
    st.switch_level = o.layout == CANOPY_FOREST_LAYOUT_HYBRID ? o.switch_level : 0;
    st.layout_bytes = Lp->bytes;
    st.backend = gpu ? CANOPY_BACKEND_GPU : CANOPY_BACKEND_CPU;
    int simd_engine =
        o.engine == CANOPY_FOREST_ENGINE_VM_SIMD || o.engine == CANOPY_FOREST_ENGINE_SIMD;
    if (!gpu)
        snprintf(st.note, sizeof st.note,
                 "%s layout, %s engine%s%s%s, %d threads, %d tree group(s), blocks of %d trees x "
                 "%lld rows",
                 canopy_forest_layout_name(o.layout), canopy_forest_engine_name(o.engine),
                 simd_engine ? " (" : "",
                 simd_engine ? (isa ? canopy_isa_name(isa) : "scalar fallback") : "",
                 simd_engine ? ")" : "", threads, groups, tbs, (long long)rbs);
    if (gpu) {
        st.mapping = gr.mapping;
        st.upload_seconds = gr.upload_seconds;
        st.compile_seconds = gr.compile_seconds;
        st.kernel_seconds = gr.kernel_seconds;
        st.download_seconds = gr.download_seconds;
        st.kernel_cache = gr.kernel_cache;
        st.device_bytes = gr.device_bytes;
        snprintf(st.note, sizeof st.note, "%s layout, %s engine, %s mapping on the GPU%s",
                 canopy_forest_layout_name(o.layout), canopy_forest_engine_name(o.engine),
                 canopy_forest_mapping_name(gr.mapping),
                 gr.model_cached ? " (model already on the device)" : "");
    }
    canopy_free(acc);
    if (stats) *stats = st;
    return s;
}

canopy_status canopy_forest_predict(const canopy_forest *f, canopy_points X,
                                    const canopy_predict_options *opt, double *out,
                                    canopy_predict_stats *stats) {
    cf_plan plan;
    canopy_status s = canopy_cf_predict_resolve(f, X, opt, &plan);
    if (s || (s = canopy_cf_predict_build(f, &plan))) return s;
    s = canopy_cf_predict_run(f, &plan, X, out, stats);
    canopy_cf_plan_free(&plan);
    return s;
}
