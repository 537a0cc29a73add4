/* SPDX-License-Identifier: MIT */
/* POSIX extended regular expressions, as GNU grep -E reads them in the C locale:
 * a recursive-descent parser over bytes that builds a small syntax tree. Where
 * POSIX leaves a construct undefined we follow GNU (an unmatched ')' and a
 * malformed interval are literal, anchors are assertions anywhere, {,n} is {0,n});
 * where GNU only warns (a repetition with nothing before it) we reject. Error
 * messages are grep's own, so scripts that match them keep working. */
#include "regex/regex.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* glibc's RE_DUP_MAX: larger counts are "too big" in grep as well. */
#define DUP_MAX 32767

typedef struct parser {
    const unsigned char *s;
    size_t len, pos;
    int icase;
    int depth; /* open groups */
    cre_tree *t;
    canopy_status err;
} parser;

static int fail(parser *p, const char *msg) {
    if (!p->err) p->err = canopy_fail(CANOPY_ERR_INVALID, "%s", msg);
    return -1;
}

static int new_node(parser *p, int kind) {
    cre_tree *t = p->t;
    if (t->n == t->cap) {
        int32_t cap = t->cap ? t->cap * 2 : 32;
        cre_node *n = realloc(t->nodes, (size_t)cap * sizeof *n);
        if (!n) {
            if (!p->err) p->err = canopy_fail(CANOPY_ERR_NOMEM, "out of memory parsing a pattern");
            return -1;
        }
        t->nodes = n;
        t->cap = cap;
    }
    cre_node *n = &t->nodes[t->n];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->a = n->b = -1;
    return t->n++;
}

/* A node's nest from its children: a child on the same CAT/ALT spine costs no
 * recursion, any other child one level. */
static int set_nest(parser *p, int n) {
    cre_node *x = &p->t->nodes[n];
    int32_t d = 0;
    if (x->a >= 0) {
        const cre_node *a = &p->t->nodes[x->a];
        d = a->nest + ((x->kind == CRE_CAT || x->kind == CRE_ALT) && a->kind == x->kind ? 0 : 1);
    }
    if (x->b >= 0 && p->t->nodes[x->b].nest + 1 > d) d = p->t->nodes[x->b].nest + 1;
    x->nest = d;
    if (d > CRE_MAX_NEST) return fail(p, CRE_TOO_COMPLEX);
    return n;
}

static int pair(parser *p, int kind, int a, int b) {
    if (a < 0) return b;
    int n = new_node(p, kind);
    if (n < 0) return -1;
    p->t->nodes[n].a = a;
    p->t->nodes[n].b = b;
    return set_nest(p, n);
}

static void set_add(uint32_t *set, unsigned c) {
    set[c >> 5] |= 1u << (c & 31);
}

/* Case folding is applied to a set before negation, as GNU does: [^a] with -i
 * excludes both a and A. */
static void fold(uint32_t *set) {
    for (unsigned c = 'a'; c <= 'z'; c++) {
        unsigned u = c - 'a' + 'A';
        if (cre_set_has(set, c) || cre_set_has(set, u)) {
            set_add(set, c);
            set_add(set, u);
        }
    }
}

static int set_node(parser *p, const uint32_t *set) {
    int n = new_node(p, CRE_SET);
    if (n < 0) return -1;
    memcpy(p->t->nodes[n].set, set, sizeof p->t->nodes[n].set);
    if (p->icase) fold(p->t->nodes[n].set);
    return n;
}

static int char_node(parser *p, unsigned c) {
    uint32_t set[8] = {0};
    set_add(set, c);
    return set_node(p, set);
}

typedef struct named_class {
    const char *name;
    int (*test)(int);
} named_class;

static int is_word(int c) {
    return isalnum(c) || c == '_';
}

static const named_class classes[] = {
    {"alpha", isalpha}, {"digit", isdigit}, {"alnum", isalnum}, {"upper", isupper},
    {"lower", islower}, {"space", isspace}, {"blank", isblank}, {"punct", ispunct},
    {"print", isprint}, {"graph", isgraph}, {"cntrl", iscntrl}, {"xdigit", isxdigit},
};

/* The C-locale members of a class; bytes >= 128 are in none. */
static void add_class(uint32_t *set, int (*test)(int)) {
    for (unsigned c = 0; c < 128; c++)
        if (test((int)c)) set_add(set, c);
}

/* After "[:", "[." or "[=": the name up to the matching ":]" (etc.), or -1. */
static int bracket_name(parser *p, char kind, size_t *start, size_t *nlen) {
    size_t i = p->pos;
    while (i + 1 < p->len && !(p->s[i] == (unsigned char)kind && p->s[i + 1] == ']')) i++;
    if (i + 1 >= p->len) return -1;
    *start = p->pos;
    *nlen = i - p->pos;
    p->pos = i + 2;
    return 0;
}

/* One endpoint of a range or a single member: a byte, [.c.] or [=c=]. Returns the
 * byte, -2 for a class ([:name:], added to `set` directly), -1 on error. */
static int bracket_elem(parser *p, uint32_t *set) {
    if (p->pos >= p->len) return fail(p, "Unmatched [, [^, [:, [., or [=");
    unsigned c = p->s[p->pos];
    if (c == '[' && p->pos + 1 < p->len &&
        (p->s[p->pos + 1] == ':' || p->s[p->pos + 1] == '.' || p->s[p->pos + 1] == '=')) {
        char kind = (char)p->s[p->pos + 1];
        size_t start, nlen;
        p->pos += 2;
        if (bracket_name(p, kind, &start, &nlen) < 0)
            return fail(p, "Unmatched [, [^, [:, [., or [=");
        if (kind == ':') {
            for (size_t k = 0; k < sizeof classes / sizeof classes[0]; k++)
                if (strlen(classes[k].name) == nlen &&
                    memcmp(classes[k].name, p->s + start, nlen) == 0) {
                    add_class(set, classes[k].test);
                    return -2;
                }
            return fail(p, "Invalid character class name");
        }
        /* collating symbols and equivalence classes: single bytes in the C locale */
        if (nlen != 1) return fail(p, "Invalid collation character");
        return p->s[start];
    }
    p->pos++;
    return (int)c;
}

static int parse_bracket(parser *p) {
    uint32_t set[8] = {0};
    int negate = 0;
    if (p->pos < p->len && p->s[p->pos] == '^') {
        negate = 1;
        p->pos++;
    }
    int first = 1;
    for (;;) {
        if (p->pos >= p->len) return fail(p, "Unmatched [, [^, [:, [., or [=");
        unsigned c = p->s[p->pos];
        if (c == ']' && !first) {
            p->pos++;
            break;
        }
        first = 0;
        int lo = bracket_elem(p, set);
        if (lo == -1) return -1;
        /* a range lo-hi, unless the '-' is the last member */
        if (p->pos + 1 < p->len && p->s[p->pos] == '-' && p->s[p->pos + 1] != ']') {
            p->pos++;
            if (lo == -2) return fail(p, "Invalid range end");
            int hi = bracket_elem(p, set);
            if (hi == -1) return -1;
            if (hi == -2 || hi < lo) return fail(p, "Invalid range end");
            for (int k = lo; k <= hi; k++) set_add(set, (unsigned)k);
        } else if (lo >= 0) {
            set_add(set, (unsigned)lo);
        }
    }
    if (p->icase) fold(set);
    if (negate)
        for (int k = 0; k < 8; k++) set[k] = ~set[k];
    int n = new_node(p, CRE_SET);
    if (n < 0) return -1;
    memcpy(p->t->nodes[n].set, set, sizeof set);
    return n;
}

/* \w \W \s \S: GNU's word and space classes. */
static int escape_class(parser *p, unsigned c) {
    uint32_t set[8] = {0};
    add_class(set, c == 'w' || c == 'W' ? is_word : isspace);
    if (c == 'W' || c == 'S')
        for (int k = 0; k < 8; k++) set[k] = ~set[k];
    return set_node(p, set);
}

static int parse_alt(parser *p);

static int parse_atom(parser *p) {
    unsigned c = p->s[p->pos++];
    switch (c) {
    case '(': {
        /* the parser recurses once per open group */
        if (++p->depth > CRE_MAX_NEST) return fail(p, CRE_TOO_COMPLEX);
        int e = parse_alt(p);
        if (e < 0) return -1;
        if (p->pos >= p->len || p->s[p->pos] != ')') return fail(p, "Unmatched ( or \\(");
        p->pos++;
        p->depth--;
        return e;
    }
    case '[':
        return parse_bracket(p);
    case '.':
        return new_node(p, CRE_DOT);
    case '^':
        return new_node(p, CRE_BOL);
    case '$':
        return new_node(p, CRE_EOL);
    case '\\': {
        if (p->pos >= p->len) return fail(p, "Trailing backslash");
        unsigned e = p->s[p->pos++];
        if (e >= '1' && e <= '9')
            return fail(p, "back-references (\\1 to \\9) are not supported: they are not regular");
        if (strchr("bB<>`'", (int)e))
            return fail(p, "word-boundary and buffer anchors (\\b \\B \\< \\> \\` \\') are not "
                           "supported");
        if (strchr("wWsS", (int)e)) return escape_class(p, e);
        return char_node(p, e);
    }
    default:
        return char_node(p, c);
    }
}

/* An interval "{m}", "{m,}", "{m,n}", "{,n}" at p->pos (just after '{'). Returns 1
 * and the bounds if well formed, 0 if it is not an interval ('{' is then literal),
 * -1 on error (bad bounds). */
static int parse_interval(parser *p, int32_t *mn, int32_t *mx) {
    size_t i = p->pos;
    long lo = -1, hi = -1;
    int comma = 0;
    while (i < p->len && isdigit(p->s[i])) {
        lo = (lo < 0 ? 0 : lo) * 10 + (p->s[i] - '0');
        if (lo > DUP_MAX) lo = DUP_MAX + 1;
        i++;
    }
    if (i < p->len && p->s[i] == ',') {
        comma = 1;
        i++;
        while (i < p->len && isdigit(p->s[i])) {
            hi = (hi < 0 ? 0 : hi) * 10 + (p->s[i] - '0');
            if (hi > DUP_MAX) hi = DUP_MAX + 1;
            i++;
        }
    }
    if (i >= p->len || p->s[i] != '}') return 0;
    if (lo < 0 && !comma) return 0; /* "{}" */
    if (lo < 0) lo = 0;
    if (!comma) hi = lo;
    if (lo > DUP_MAX || hi > DUP_MAX) return fail(p, "Regular expression too big");
    if (hi >= 0 && hi < lo) return fail(p, "Invalid content of \\{\\}");
    p->pos = i + 1;
    *mn = (int32_t)lo;
    *mx = (int32_t)hi;
    return 1;
}

static int parse_branch(parser *p) {
    int acc = -1;
    while (p->pos < p->len) {
        unsigned c = p->s[p->pos];
        if (c == '|' || (c == ')' && p->depth > 0)) break;
        if (c == '*' || c == '+' || c == '?')
            return fail(p, "Invalid preceding regular expression");
        if (c == '{') {
            int32_t mn, mx;
            size_t save = p->pos++;
            int r = parse_interval(p, &mn, &mx);
            if (r < 0) return -1;
            if (r > 0) return fail(p, "Invalid preceding regular expression");
            p->pos = save;
        }
        int atom;
        if (c == '{' || c == ')') { /* a literal '{' or an unmatched ')' */
            p->pos++;
            atom = char_node(p, c);
        } else {
            atom = parse_atom(p);
        }
        if (atom < 0) return -1;
        /* repetitions stack: a** and a{2}{3} are valid */
        while (p->pos < p->len) {
            unsigned r = p->s[p->pos];
            int32_t mn, mx;
            if (r == '*') {
                mn = 0;
                mx = -1;
                p->pos++;
            } else if (r == '+') {
                mn = 1;
                mx = -1;
                p->pos++;
            } else if (r == '?') {
                mn = 0;
                mx = 1;
                p->pos++;
            } else if (r == '{') {
                p->pos++;
                int k = parse_interval(p, &mn, &mx);
                if (k < 0) return -1;
                if (k == 0) {
                    p->pos--;
                    break;
                }
            } else {
                break;
            }
            int n = new_node(p, CRE_REP);
            if (n < 0) return -1;
            p->t->nodes[n].a = atom;
            p->t->nodes[n].min = mn;
            p->t->nodes[n].max = mx;
            atom = set_nest(p, n);
            if (atom < 0) return -1;
        }
        acc = pair(p, CRE_CAT, acc, atom);
        if (acc < 0) return -1;
    }
    return acc < 0 ? new_node(p, CRE_EMPTY) : acc;
}

static int parse_alt(parser *p) {
    int acc = parse_branch(p);
    while (acc >= 0 && p->pos < p->len && p->s[p->pos] == '|') {
        p->pos++;
        int b = parse_branch(p);
        if (b < 0) return -1;
        acc = pair(p, CRE_ALT, acc, b);
    }
    return acc;
}

canopy_status canopy_cre_parse(const char *pat, size_t len, int icase, cre_tree *out) {
    memset(out, 0, sizeof *out);
    parser p = {(const unsigned char *)pat, len, 0, icase, 0, out, CANOPY_OK};
    int root = parse_alt(&p);
    if (root >= 0 && p.pos < len) root = fail(&p, "Unmatched ( or \\(");
    if (root < 0) {
        canopy_cre_tree_free(out);
        return p.err ? p.err : canopy_fail(CANOPY_ERR_INTERNAL, "regex parser failed silently");
    }
    out->root = root;
    return CANOPY_OK;
}

/* Puts pre before and post after the pattern: spliced into the top-level
 * concatenation (at its first item), so the literal analysis still sees the
 * pattern's own items. */
static int splice(parser *p, int pre, int post) {
    cre_tree *t = p->t;
    int first = t->root, parent = -1;
    while (t->nodes[first].kind == CRE_CAT) {
        parent = first;
        first = t->nodes[first].a;
    }
    int head = pair(p, CRE_CAT, pre, first);
    if (head < 0) return -1;
    int body = head;
    if (parent >= 0) {
        t->nodes[parent].a = head;
        body = t->root;
    }
    int root = pair(p, CRE_CAT, body, post);
    if (root < 0) return -1;
    t->root = root;
    return 0;
}

canopy_status canopy_cre_wrap(cre_tree *t, int icase, cre_wrap_kind kind) {
    parser p = {NULL, 0, 0, icase, 0, t, CANOPY_OK};
    int pre, post;
    if (kind == CRE_WRAP_LINE) {
        pre = new_node(&p, CRE_BOL);
        post = new_node(&p, CRE_EOL);
    } else {
        uint32_t other[8] = {0}; /* GNU's non-word bytes: not [_[:alnum:]] */
        for (unsigned c = 0; c < 256; c++)
            if (!is_word((int)c)) set_add(other, c);
        int s1 = set_node(&p, other), s2 = set_node(&p, other);
        int bol = new_node(&p, CRE_BOL), eol = new_node(&p, CRE_EOL);
        pre = s1 < 0 || bol < 0 ? -1 : pair(&p, CRE_ALT, bol, s1);
        post = s2 < 0 || eol < 0 ? -1 : pair(&p, CRE_ALT, s2, eol);
    }
    if (pre < 0 || post < 0 || splice(&p, pre, post))
        return p.err ? p.err : canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    return CANOPY_OK;
}

void canopy_cre_tree_free(cre_tree *t) {
    free(t->nodes);
    memset(t, 0, sizeof *t);
}
