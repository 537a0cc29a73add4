/* SPDX-License-Identifier: MIT */
/* Syntax trees to Ren's bytecode (Table III): a byte set is `cmp set`, `.` is
 * `dot`, alternation is `fork L2; C(e1); jmp L3; L2: C(e2); L3:`, e* is
 * `L1: fork L2; C(e); jmp L1; L2:`, e+ is `L1: C(e); fork L1`, and e? is
 * `fork L2; C(e); L2:`. Bounded repetitions are unrolled. The program of n
 * patterns is their alternation, each ending in `match p`, so one simulation
 * answers for all of them. Anchors are one extra op, `assert bol|eol`. */
#include "regex/regex.h"

#include <stdlib.h>
#include <string.h>

typedef struct emitter {
    cvm_insn *code;
    int32_t n;
    uint32_t (*sets)[8];
    int32_t n_sets, cap_sets;
    int32_t *hash; /* open addressing over set indices, -1 = empty */
    int32_t hash_cap;
    canopy_status err;
    /* Per node of the tree being emitted, computed once: a repetition emits its operand
     * up to 4 Mi times, and recomputing sizes or spines per copy made compiling
     * quadratic (issue 21: `]?????{1108}??...{0554}` took seconds). */
    const int64_t *size;
    int32_t **spine, *spine_len;
    int32_t *set_id; /* a SET node's interned set, -1 until its first emission */
} emitter;

static uint64_t set_hash(const uint32_t *s) {
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k < 8; k++) h = (h ^ s[k]) * 1099511628211ull;
    return h;
}

static int grow_hash(emitter *e) {
    int32_t cap = e->hash_cap ? e->hash_cap * 2 : 64;
    int32_t *h = malloc((size_t)cap * sizeof *h);
    if (!h) return -1;
    for (int32_t i = 0; i < cap; i++) h[i] = -1;
    for (int32_t i = 0; i < e->n_sets; i++) {
        uint64_t k = set_hash(e->sets[i]) & (uint64_t)(cap - 1);
        while (h[k] >= 0) k = (k + 1) & (uint64_t)(cap - 1);
        h[k] = i;
    }
    free(e->hash);
    e->hash = h;
    e->hash_cap = cap;
    return 0;
}

/* The index of `set` in the program's set table, added if new (patterns share sets). */
static int32_t intern_set(emitter *e, const uint32_t *set) {
    if (2 * (e->n_sets + 1) > e->hash_cap && grow_hash(e)) return -1;
    uint64_t k = set_hash(set) & (uint64_t)(e->hash_cap - 1);
    while (e->hash[k] >= 0) {
        if (memcmp(e->sets[e->hash[k]], set, 32) == 0) return e->hash[k];
        k = (k + 1) & (uint64_t)(e->hash_cap - 1);
    }
    if (e->n_sets == e->cap_sets) {
        int32_t cap = e->cap_sets ? e->cap_sets * 2 : 16;
        void *s = realloc(e->sets, (size_t)cap * sizeof *e->sets);
        if (!s) return -1;
        e->sets = s;
        e->cap_sets = cap;
    }
    memcpy(e->sets[e->n_sets], set, 32);
    e->hash[k] = e->n_sets;
    return e->n_sets++;
}

/* CAT and ALT trees are left-deep chains as long as the pattern; walking their
 * spine iteratively keeps recursion depth at the nesting depth of groups. */
static int32_t spine(const cre_tree *t, int32_t i, int kind, int32_t **out) {
    int32_t n = 1;
    for (int32_t j = i; t->nodes[j].kind == kind; j = t->nodes[j].a) n++;
    int32_t *v = malloc((size_t)n * sizeof *v);
    if (!v) return -1;
    int32_t k = n;
    int32_t j = i;
    for (; t->nodes[j].kind == kind; j = t->nodes[j].a) v[--k] = t->nodes[j].b;
    v[--k] = j;
    *out = v;
    return n;
}

static int64_t cap_add(int64_t a, int64_t b) {
    return a + b > CRE_MAX_INSNS ? CRE_MAX_INSNS + 1 : a + b;
}
static int64_t cap_mul(int64_t a, int64_t b) {
    return a && b > (CRE_MAX_INSNS + 1) / a ? CRE_MAX_INSNS + 1 : cap_add(a * b, 0);
}

/* Instructions emitted for a node, capped just above CRE_MAX_INSNS; -1: no memory.
 * memo[i] >= 0 is a size already known. */
static int64_t node_size_uncached(const cre_tree *t, int32_t i, int64_t *memo);
static int64_t node_size(const cre_tree *t, int32_t i, int64_t *memo) {
    if (memo[i] >= 0) return memo[i];
    int64_t s = node_size_uncached(t, i, memo);
    if (s >= 0) memo[i] = s;
    return s;
}

static int64_t node_size_uncached(const cre_tree *t, int32_t i, int64_t *memo) {
    const cre_node *n = &t->nodes[i];
    switch (n->kind) {
    case CRE_EMPTY:
        return 0;
    case CRE_SET:
    case CRE_DOT:
    case CRE_BOL:
    case CRE_EOL:
        return 1;
    case CRE_CAT:
    case CRE_ALT: {
        int32_t *v;
        int32_t k = spine(t, i, n->kind, &v);
        if (k < 0) return -1;
        int64_t s = n->kind == CRE_ALT ? 2 * (int64_t)(k - 1) : 0;
        for (int32_t j = 0; j < k && s >= 0; j++) {
            int64_t c = node_size(t, v[j], memo);
            s = c < 0 ? -1 : cap_add(s, c);
        }
        free(v);
        return s;
    }
    case CRE_REP: {
        int64_t c = node_size(t, n->a, memo);
        if (c <= 0) return c;
        if (n->max < 0) return n->min == 0 ? c + 2 : cap_add(cap_mul(c, n->min), 1);
        return cap_add(cap_mul(c, n->min), cap_mul(c + 1, n->max - n->min));
    }
    }
    return 0;
}

static int32_t put(emitter *e, int32_t op, int32_t arg, int32_t target) {
    cvm_insn *in = &e->code[e->n];
    in->op = op;
    in->arg = arg;
    in->imm = 0;
    in->target = target;
    return e->n++;
}

/* The spine of a CAT or ALT node, computed on its first emission and kept for the tree. */
static int32_t cached_spine(emitter *e, const cre_tree *t, int32_t i, int32_t **v) {
    if (!e->spine[i]) {
        int32_t k = spine(t, i, t->nodes[i].kind, &e->spine[i]);
        if (k < 0) return -1;
        e->spine_len[i] = k;
    }
    *v = e->spine[i];
    return e->spine_len[i];
}

/* Points every instruction of a chain linked through `target` (ending in -1) at `to`:
 * forward jumps are chained while their destination is unknown, so emitting needs no
 * allocation per copy. */
static void patch_chain(emitter *e, int32_t chain, int32_t to) {
    while (chain >= 0) {
        int32_t next = e->code[chain].target;
        e->code[chain].target = to;
        chain = next;
    }
}

static int emit(emitter *e, const cre_tree *t, int32_t i);

/* Emits `copies` copies of node a (each after a fork chained into *forks when forks is
 * not NULL): the first by walking the tree, the others copied from it with their jmp
 * and fork targets moved (a node's jumps stay inside its code), so unrolling x{32767}
 * costs a memcpy per copy, not a walk of x. Sets *len to one copy's length; -1: no
 * memory. */
static int emit_copies(emitter *e, const cre_tree *t, int32_t a, int32_t copies, int32_t *forks,
                       int32_t *len) {
    if (forks) *forks = put(e, CVM_FORK, 0, *forks);
    int32_t s0 = e->n;
    if (emit(e, t, a)) return -1;
    int32_t c = *len = e->n - s0, nj = 0;
    if (copies < 2) return 0;
    int32_t *jumps = malloc((size_t)c * sizeof *jumps); /* the copy's jmps and forks */
    if (!jumps) return -1;
    for (int32_t k = 0; k < c; k++)
        if (e->code[s0 + k].op == CVM_JMP || e->code[s0 + k].op == CVM_FORK) jumps[nj++] = k;
    for (int32_t j = 1; j < copies; j++) {
        if (forks) *forks = put(e, CVM_FORK, 0, *forks);
        cvm_insn *to = e->code + e->n;
        memcpy(to, e->code + s0, (size_t)c * sizeof *to);
        for (int32_t k = 0; k < nj; k++) to[jumps[k]].target += e->n - s0;
        e->n += c;
    }
    free(jumps);
    return 0;
}

static int emit(emitter *e, const cre_tree *t, int32_t i) {
    const cre_node *n = &t->nodes[i];
    switch (n->kind) {
    case CRE_EMPTY:
        return 0;
    case CRE_SET: {
        if (e->set_id[i] < 0) e->set_id[i] = intern_set(e, n->set);
        if (e->set_id[i] < 0) return -1;
        put(e, CVM_CMP, e->set_id[i], 0);
        return 0;
    }
    case CRE_DOT:
        put(e, CVM_DOT, 0, 0);
        return 0;
    case CRE_BOL:
        put(e, CVM_ASSERT, CVM_ASSERT_BOL, 0);
        return 0;
    case CRE_EOL:
        put(e, CVM_ASSERT, CVM_ASSERT_EOL, 0);
        return 0;
    case CRE_CAT: {
        int32_t *v;
        int32_t k = cached_spine(e, t, i, &v);
        if (k < 0) return -1;
        for (int32_t j = 0; j < k; j++)
            if (emit(e, t, v[j])) return -1;
        return 0;
    }
    case CRE_ALT: {
        /* fork L2; C(e1); jmp L3; L2: C(e2); ... with every jmp to the common end */
        int32_t *v;
        int32_t k = cached_spine(e, t, i, &v);
        if (k < 0) return -1;
        int32_t jumps = -1;
        for (int32_t j = 0; j < k; j++) {
            int32_t f = j + 1 < k ? put(e, CVM_FORK, 0, 0) : -1;
            if (emit(e, t, v[j])) return -1;
            if (f >= 0) {
                jumps = put(e, CVM_JMP, 0, jumps);
                e->code[f].target = e->n;
            }
        }
        patch_chain(e, jumps, e->n);
        return 0;
    }
    case CRE_REP: {
        if (e->size[n->a] == 0) return 0;
        if (n->max < 0 && n->min == 0) {
            int32_t l1 = put(e, CVM_FORK, 0, 0);
            if (emit(e, t, n->a)) return -1;
            put(e, CVM_JMP, 0, l1);
            e->code[l1].target = e->n;
            return 0;
        }
        /* e{m,}: m copies, the last one looping back */
        int32_t len = 0;
        if (n->min > 0 && emit_copies(e, t, n->a, n->min, NULL, &len)) return -1;
        if (n->max < 0) {
            put(e, CVM_FORK, 0, e->n - len);
            return 0;
        }
        /* then e{0,k} as k times "fork END; C(e)": each copy may be the last */
        int32_t forks = -1;
        if (n->max > n->min && emit_copies(e, t, n->a, n->max - n->min, &forks, &len)) return -1;
        patch_chain(e, forks, e->n);
        return 0;
    }
    }
    return 0;
}

/* The size of every node of t reachable from its root (-1 elsewhere); NULL: no memory. */
static int64_t *tree_sizes(const cre_tree *t) {
    int64_t *memo = malloc((size_t)(t->n > 0 ? t->n : 1) * sizeof *memo);
    if (!memo) return NULL;
    for (int32_t i = 0; i < t->n; i++) memo[i] = -1;
    if (node_size(t, t->root, memo) < 0) {
        free(memo);
        return NULL;
    }
    return memo;
}

/* Emits tree t with its node sizes, spines and interned sets cached; -1: no memory. */
static int emit_tree(emitter *e, const cre_tree *t) {
    size_t nodes = (size_t)(t->n > 0 ? t->n : 1);
    int64_t *size = tree_sizes(t);
    int32_t **spines = calloc(nodes, sizeof *spines);
    int32_t *lens = malloc(nodes * sizeof *lens), *set_id = malloc(nodes * sizeof *set_id);
    int rc = size && spines && lens && set_id ? 0 : -1;
    if (!rc) {
        for (size_t i = 0; i < nodes; i++) set_id[i] = -1;
        e->size = size;
        e->spine = spines;
        e->spine_len = lens;
        e->set_id = set_id;
        rc = emit(e, t, t->root);
    }
    for (size_t i = 0; spines && i < nodes; i++) free(spines[i]);
    free(spines);
    free(lens);
    free(set_id);
    free(size);
    return rc;
}

/* a[0, n) = v by doubling copies: a loop costs a coverage callback per element in the
 * fuzz build, a third of compiling a 1 Mi-instruction program there */
static void fill_i32(int32_t *a, int32_t n, int32_t v) {
    if (n <= 0) return;
    a[0] = v;
    for (int32_t k = 1; k < n; k *= 2)
        memcpy(a + k, a, (size_t)(n - k < k ? n - k : k) * sizeof *a);
}

canopy_status canopy_cre_compile(const cre_tree *trees, int32_t n, cre_prog *out) {
    memset(out, 0, sizeof *out);
    if (n < 0) return canopy_fail(CANOPY_ERR_INVALID, "negative pattern count");
    int64_t total = 1;
    for (int32_t i = 0; i < n; i++) {
        int64_t *size = tree_sizes(&trees[i]);
        if (!size) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory compiling patterns");
        total = cap_add(total, size[trees[i].root] + 2);
        free(size);
    }
    if (total > CRE_MAX_INSNS) return canopy_fail(CANOPY_ERR_INVALID, "Regular expression too big");
    emitter e;
    memset(&e, 0, sizeof e);
    canopy_status st = canopy_alloc((void **)&e.code, (size_t)total, sizeof *e.code);
    if (st) return st;
    int32_t *pattern_of = NULL;
    st = canopy_alloc((void **)&pattern_of, (size_t)total, sizeof *pattern_of);
    if (st) {
        canopy_free(e.code);
        return st;
    }
    int rc = 0;
    for (int32_t i = 0; i < n && !rc; i++) {
        int32_t f = i + 1 < n ? put(&e, CVM_FORK, 0, 0) : -1;
        if (f >= 0) pattern_of[f] = -1;
        int32_t begin = e.n;
        rc = emit_tree(&e, &trees[i]);
        put(&e, CVM_MATCH, i, 0);
        fill_i32(pattern_of + begin, e.n - begin, i);
        if (f >= 0) e.code[f].target = e.n;
    }
    int32_t pad = put(&e, CVM_NOMATCH, 0, 0);
    pattern_of[pad] = -1;
    free(e.hash);
    if (rc) {
        canopy_free(e.code);
        canopy_free(pattern_of);
        free(e.sets);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory compiling patterns");
    }
    out->vm.code = e.code;
    out->vm.n = e.n;
    out->vm.pad_pc = pad;
    out->sets = e.sets;
    out->n_sets = e.n_sets;
    out->n_patterns = n;
    out->mask_words = n > 0 ? (n + 63) / 64 : 1;
    out->pattern_of = pattern_of;
    return CANOPY_OK;
}

void canopy_cre_closures(cre_prog *p) {
    int32_t n = p->vm.n;
    int64_t cap = 8 * (int64_t)n + 1024, used = 0; /* beyond: not worth the memory */
    if (n > (1 << 18)) return; /* and the walks of a big program miss the cache: no table */
    /* The SIMD VM expands only pc 0 and the pcs after a consuming one (a thread's pc
     * + 1); the rest (the forks and jmps of x?????{1000}) get empty closures. */
    int64_t resume = 1;
    for (int32_t pc = 0; pc + 1 < n; pc++)
        resume += p->vm.code[pc].op == CVM_CMP || p->vm.code[pc].op == CVM_DOT;
    /* Long nullable runs ((x?????){1000}) make each walk O(n); past 8 steps per
     * resume pc in all (and a little slack for small programs: 64 Ki steps took
     * ~10 ms under ASan, most of a fuzzer's execution) the table is given up, so
     * compiling stays linear. */
    int64_t steps = 8 * resume + 4096;
    int32_t *off = malloc(((size_t)n + 1) * sizeof *off);
    int32_t *clo = malloc((size_t)cap * sizeof *clo);
    int32_t *mark = malloc((size_t)n * sizeof *mark), *stack = malloc((size_t)n * sizeof *stack);
    int ok = off && clo && mark && stack;
    for (int32_t i = 0; ok && i < n; i++) mark[i] = -1;
    for (int32_t pc0 = 0; ok && pc0 < n; pc0++) {
        off[pc0] = (int32_t)used;
        int32_t prev = pc0 > 0 ? p->vm.code[pc0 - 1].op : CVM_CMP;
        if (prev != CVM_CMP && prev != CVM_DOT) continue;
        int32_t sp = 0;
        mark[pc0] = pc0;
        stack[sp++] = pc0;
        while (sp > 0 && ok) {
            ok = --steps > 0;
            const cvm_insn *in = &p->vm.code[stack[--sp]];
            int32_t pc = (int32_t)(in - p->vm.code), next[2], k = 0;
            if (in->op == CVM_CMP || in->op == CVM_DOT || in->op == CVM_MATCH) {
                ok = used < cap;
                if (ok) clo[used++] = pc;
            } else if (in->op == CVM_JMP) {
                next[k++] = in->target;
            } else if (in->op == CVM_FORK) {
                next[k++] = in->target;
                next[k++] = pc + 1;
            } /* assert: fails away from the line's ends; nomatch: ends */
            for (int32_t j = 0; j < k; j++)
                if (mark[next[j]] != pc0) {
                    mark[next[j]] = pc0;
                    stack[sp++] = next[j];
                }
        }
    }
    if (ok) {
        off[n] = (int32_t)used;
        p->clo_off = off;
        p->clo = clo;
    } else {
        free(off);
        free(clo);
    }
    free(mark);
    free(stack);
}

void canopy_cre_prog_free(cre_prog *p) {
    free(p->clo_off);
    free(p->clo);
    canopy_free(p->vm.code);
    canopy_free(p->pattern_of);
    free(p->sets);
    memset(p, 0, sizeof *p);
}
