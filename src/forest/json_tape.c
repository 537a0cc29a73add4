/* SPDX-License-Identifier: MIT */
/* The strict JSON reader of json_tape.h: a recursive-descent grammar check that
 * records one 8-byte entry per value, and converters that read numbers and strings
 * from the text on demand. */
#include "forest/json_tape.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 32 };


typedef struct jparser {
    const char *s;
    size_t len, i;
    cf_jrec *rec;
    int32_t n, cap;
    const char *why; /* NULL with a failure: the text ended inside a value */
    size_t at;
} jparser;

static int fail(jparser *p, size_t at, const char *why) {
    p->why = why;
    p->at = at;
    return -1;
}

static int truncated(jparser *p) {
    p->why = NULL;
    return -1;
}

/* The text ends with a NUL (canopy_cf_jparse's contract), which no scanning loop accepts:
 * the loops need no bounds checks, and a stop at i >= len means the text ended. */
static void skip_ws(jparser *p) {
    const char *s = p->s;
    size_t i = p->i;
    while (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') i++;
    p->i = i;
}

static int is_digit(char c) {
    return c >= '0' && c <= '9';
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Length of the UTF-8 sequence at u (lead byte >= 0x80): 2-4, 0 when invalid
 * (overlong, surrogate, beyond U+10FFFF), -1 when the text ends inside it. */
static int utf8_length(const unsigned char *u, size_t avail) {
    unsigned c = u[0];
    int need = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
    if (!need) return 0;
    for (int k = 1; k < need; k++) {
        if ((size_t)k >= avail) return -1;
        if ((u[k] & 0xC0) != 0x80) return 0;
    }
    if ((c == 0xE0 && u[1] < 0xA0) || (c == 0xED && u[1] >= 0xA0) || (c == 0xF0 && u[1] < 0x90) ||
        (c == 0xF4 && u[1] >= 0x90))
        return 0;
    return need;
}

static int parse_string(jparser *p) {
    const char *s = p->s;
    size_t i = p->i + 1, len = p->len;
    for (;;) {
        while (i < len) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
            i++;
        }
        if (i >= len) return truncated(p);
        unsigned char c = (unsigned char)s[i];
        if (c == '"') break;
        if (c < 0x20) return fail(p, i, "control character inside a string");
        if (c == '\\') {
            if (++i >= len) return truncated(p);
            char e = s[i];
            if (e == 'u') {
                for (int k = 0; k < 4; k++) {
                    if (++i >= len) return truncated(p);
                    if (hex_value(s[i]) < 0) return fail(p, i, "bad \\u escape in a string");
                }
            } else if (!e || !strchr("\"\\/bfnrt", e)) {
                return fail(p, i, "bad escape in a string");
            }
            i++;
            continue;
        }
        int n = utf8_length((const unsigned char *)s + i, len - i);
        if (n < 0) return truncated(p);
        if (n == 0) return fail(p, i, "invalid UTF-8 in a string");
        i += (size_t)n;
    }
    p->i = i + 1;
    return 0;
}

static int parse_number(jparser *p) {
    const char *s = p->s;
    size_t i = p->i;
    if (s[i] == '-') i++;
    if (s[i] == '0') {
        i++;
    } else if (is_digit(s[i])) {
        do i++;
        while (is_digit(s[i]));
    } else {
        return i >= p->len ? truncated(p) : fail(p, i, "bad number");
    }
    if (s[i] == '.') {
        if (!is_digit(s[++i]))
            return i >= p->len ? truncated(p) : fail(p, i, "bad number: no digit after '.'");
        do i++;
        while (is_digit(s[i]));
    }
    if (s[i] == 'e' || s[i] == 'E') {
        if (s[++i] == '+' || s[i] == '-') i++;
        if (!is_digit(s[i]))
            return i >= p->len ? truncated(p) : fail(p, i, "bad number: no digit in the exponent");
        do i++;
        while (is_digit(s[i]));
    }
    p->i = i;
    return 0;
}

static int parse_literal(jparser *p, const char *word) {
    for (size_t k = 0; word[k]; k++) {
        if (p->i + k >= p->len) return truncated(p);
        if (p->s[p->i + k] != word[k]) return fail(p, p->i + k, "unknown literal");
    }
    p->i += strlen(word);
    return 0;
}

/* The separator after a member or element: 1 for ',', 0 for the closing bracket. */
static int next_member(jparser *p, char close, const char *why) {
    skip_ws(p);
    if (p->i >= p->len) return truncated(p);
    char c = p->s[p->i++];
    if (c == ',') return 1;
    if (c == close) return 0;
    return fail(p, p->i - 1, why);
}

static int parse_value(jparser *p, int depth) {
    skip_ws(p);
    if (p->i >= p->len) return truncated(p);
    /* R values need at least 2R - 1 bytes, so cap = len / 2 + 2 always suffices;
     * the check keeps that argument out of the memory safety. */
    if (p->n >= p->cap) return fail(p, p->i, "too many values");
    int32_t me = p->n++;
    p->rec[me].off = (uint32_t)p->i;
    p->rec[me].end = 0;
    char c = p->s[p->i];
    int r = 0;
    if (c == '{' || c == '[') {
        if (depth >= MAX_DEPTH) return fail(p, p->i, "nesting deeper than 32 levels");
        char close = c == '{' ? '}' : ']';
        p->i++;
        skip_ws(p);
        if (p->i >= p->len) return truncated(p);
        if (p->s[p->i] == close) {
            p->i++;
        } else {
            do {
                if (c == '{') {
                    skip_ws(p);
                    if (p->i >= p->len) return truncated(p);
                    if (p->s[p->i] != '"') return fail(p, p->i, "expected a string key");
                    if (parse_value(p, depth + 1)) return -1;
                    skip_ws(p);
                    if (p->i >= p->len) return truncated(p);
                    if (p->s[p->i] != ':') return fail(p, p->i, "expected ':' after a key");
                    p->i++;
                }
                /* numbers, most of a model, without a call per element */
                skip_ws(p);
                char e = p->s[p->i];
                if ((e == '-' || is_digit(e)) && p->n < p->cap) {
                    p->rec[p->n].off = (uint32_t)p->i;
                    p->rec[p->n++].end = 0;
                    if (parse_number(p)) return -1;
                } else if (parse_value(p, depth + 1)) {
                    return -1;
                }
                r = next_member(p, close, c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
            } while (r == 1);
            if (r < 0) return -1;
        }
        p->rec[me].end = (uint32_t)p->n;
        return 0;
    }
    if (c == '"') return parse_string(p);
    if (c == 't') return parse_literal(p, "true");
    if (c == 'f') return parse_literal(p, "false");
    if (c == 'n') return parse_literal(p, "null");
    if (c == '-' || is_digit(c)) return parse_number(p);
    return fail(p, p->i, "unexpected character");
}

canopy_status canopy_cf_jparse(const char *buf, size_t len, const char *name, cf_jdoc *doc) {
    memset(doc, 0, sizeof *doc);
    if (len > INT32_MAX)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: JSON larger than 2 GiB", name);
    jparser p = {.s = buf, .len = len, .cap = (int32_t)(len / 2 + 2)};
    p.rec = malloc((size_t)p.cap * sizeof *p.rec);
    if (!p.rec) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory parsing %s", name);
    int bad = parse_value(&p, 0);
    if (!bad) {
        skip_ws(&p);
        if (p.i < len) {
            free(p.rec);
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: unexpected data after the JSON at byte %zu",
                               name, p.i);
        }
    }
    if (bad) {
        free(p.rec);
        if (!p.why)
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated JSON (ends inside a value)", name);
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: invalid JSON at byte %zu: %s", name, p.at,
                           p.why);
    }
    doc->buf = buf;
    doc->len = len;
    doc->rec = p.rec;
    doc->n = p.n;
    return CANOPY_OK;
}

void canopy_cf_jfree(cf_jdoc *doc) {
    free(doc->rec);
    memset(doc, 0, sizeof *doc);
}

cf_jtype canopy_cf_jtype_of(const cf_jdoc *d, cf_jval v) {
    switch (d->buf[d->rec[v].off]) {
    case '{':
        return CF_JOBJECT;
    case '[':
        return CF_JARRAY;
    case '"':
        return CF_JSTRING;
    case 't':
    case 'f':
        return CF_JBOOL;
    case 'n':
        return CF_JNULL;
    default:
        return CF_JNUMBER;
    }
}

static int is_container(const cf_jdoc *d, cf_jval v) {
    char c = d->buf[d->rec[v].off];
    return c == '{' || c == '[';
}

cf_jval canopy_cf_jfirst(const cf_jdoc *d, cf_jval parent) {
    if (!is_container(d, parent)) return -1;
    return (uint32_t)parent + 1 < d->rec[parent].end ? parent + 1 : -1;
}

cf_jval canopy_cf_jnext(const cf_jdoc *d, cf_jval parent, cf_jval child) {
    uint32_t next = is_container(d, child) ? d->rec[child].end : (uint32_t)child + 1;
    return next < d->rec[parent].end ? (cf_jval)next : -1;
}

int64_t canopy_cf_jcount(const cf_jdoc *d, cf_jval v) {
    if (!is_container(d, v)) return 0;
    int64_t n = 0;
    for (uint32_t c = (uint32_t)v + 1, end = d->rec[v].end; c < end; n++)
        c = is_container(d, (cf_jval)c) ? d->rec[c].end : c + 1;
    return canopy_cf_jtype_of(d, v) == CF_JOBJECT ? n / 2 : n;
}

/* Appends code point cp as UTF-8 at out (when not NULL); returns its length. */
static size_t put_utf8(uint32_t cp, char *out) {
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12);
        b[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18);
        b[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    if (out) memcpy(out, b, n);
    return n;
}

static uint32_t hex4(const char *s) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) v = v << 4 | (uint32_t)hex_value(s[k]);
    return v;
}

/* Decodes the (checked) string whose text starts after the opening quote at s; out
 * may be NULL to measure. Unpaired surrogates become U+FFFD. */
static size_t decode_string(const char *s, char *out) {
    size_t n = 0;
    while (*s != '"') {
        if (*s != '\\') {
            if (out) out[n] = *s;
            n++;
            s++;
            continue;
        }
        char e = s[1];
        s += 2;
        if (e != 'u') {
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            if (out) out[n] = to[strchr(from, e) - from];
            n++;
            continue;
        }
        uint32_t cp = hex4(s);
        s += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && s[0] == '\\' && s[1] == 'u') {
            uint32_t lo = hex4(s + 2);
            if (lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s += 6;
            }
        }
        if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
        n += put_utf8(cp, out ? out + n : NULL);
    }
    return n;
}

char *canopy_cf_jstrdup(const cf_jdoc *d, cf_jval v) {
    if (canopy_cf_jtype_of(d, v) != CF_JSTRING) return NULL;
    const char *s = d->buf + d->rec[v].off + 1;
    size_t n = decode_string(s, NULL);
    char *out = malloc(n + 1);
    if (!out) return NULL;
    decode_string(s, out);
    out[n] = '\0';
    return out;
}

int canopy_cf_jstreq(const cf_jdoc *d, cf_jval v, const char *str) {
    if (canopy_cf_jtype_of(d, v) != CF_JSTRING) return 0;
    const char *s = d->buf + d->rec[v].off + 1;
    size_t k = strlen(str);
    if (strncmp(s, str, k) == 0 && s[k] == '"' && !memchr(str, '\\', k)) return 1;
    if (!strpbrk(s, "\"\\") || *strpbrk(s, "\"\\") != '\\') return 0; /* no escapes */
    size_t n = decode_string(s, NULL);
    if (n != k) return 0;
    char *t = canopy_cf_jstrdup(d, v);
    int eq = t && memcmp(t, str, k) == 0;
    free(t);
    return eq;
}

cf_jval canopy_cf_jfind(const cf_jdoc *d, cf_jval obj, const char *key) {
    if (canopy_cf_jtype_of(d, obj) != CF_JOBJECT) return -1;
    cf_jval found = -1;
    for (cf_jval k = canopy_cf_jfirst(d, obj); k >= 0; k = canopy_cf_jnext(d, obj, k + 1))
        if (canopy_cf_jstreq(d, k, key)) found = k + 1;
    return found;
}

static const char *type_word(cf_jtype t) {
    switch (t) {
    case CF_JOBJECT:
        return "an object";
    case CF_JARRAY:
        return "an array";
    case CF_JSTRING:
        return "a string";
    case CF_JNUMBER:
        return "a number";
    case CF_JBOOL:
        return "a boolean";
    default:
        return "a value";
    }
}

canopy_status canopy_cf_jget(const cf_jdoc *d, cf_jval obj, const char *key, cf_jtype type,
                             const char *name, const char *where, cf_jval *out) {
    cf_jval v = canopy_cf_jfind(d, obj, key);
    if (v < 0)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: missing field \"%s\" in %s", name, key, where);
    if (canopy_cf_jtype_of(d, v) != type)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: field \"%s\" in %s should be %s", name, key,
                           where, type_word(type));
    *out = v;
    return CANOPY_OK;
}

/* Exact powers of ten as doubles: Clinger's fast path. */
static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A checked JSON number token at s. With at most 19 significant digits whose value
 * fits 2^53 and a decimal exponent within ±22, m * 10^e (or m / 10^-e) is one
 * correctly rounded IEEE operation on exact operands; anything else goes to strtod. */
static double number_text(const char *s) {
    const char *p = s;
    int neg = *p == '-';
    p += neg;
    uint64_t m = 0;
    int sig = 0, inexact = 0;
    int64_t e10 = 0;
    for (; is_digit(*p); p++) {
        if (m == 0 && *p == '0') continue;
        if (sig < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            sig++;
        } else {
            e10++;
            inexact = 1;
        }
    }
    if (*p == '.')
        for (p++; is_digit(*p); p++) {
            if (m == 0 && *p == '0') {
                e10--;
            } else if (sig < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                sig++;
                e10--;
            } else {
                inexact = 1;
            }
        }
    if (*p == 'e' || *p == 'E') {
        p++;
        int sign = *p == '-' ? -1 : 1;
        if (*p == '-' || *p == '+') p++;
        int64_t ev = 0;
        for (; is_digit(*p); p++)
            if (ev < 100000) ev = ev * 10 + (*p - '0');
        e10 += sign * ev;
    }
    if (m == 0) return neg ? -0.0 : 0.0;
    if (inexact || m > (1ull << 53) || e10 < -22 || e10 > 22) return strtod(s, NULL);
    double v = (double)m;
    v = e10 < 0 ? v / pow10_exact[-e10] : v * pow10_exact[e10];
    return neg ? -v : v;
}

canopy_status canopy_cf_jnumber(const cf_jdoc *d, cf_jval v, const char *name, const char *where,
                                double *out) {
    const char *s = d->buf + d->rec[v].off;
    switch (canopy_cf_jtype_of(d, v)) {
    case CF_JNUMBER:
        *out = number_text(s);
        return CANOPY_OK;
    case CF_JBOOL:
        *out = *s == 't';
        return CANOPY_OK;
    case CF_JSTRING: {
        char *t = canopy_cf_jstrdup(d, v);
        if (!t) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
        char *end;
        errno = 0;
        double x = strtod(t, &end);
        int ok = *t && *end == '\0' && errno != ERANGE;
        free(t);
        if (ok) {
            *out = x;
            return CANOPY_OK;
        }
        break;
    }
    default:
        break;
    }
    return canopy_fail(CANOPY_ERR_FORMAT, "%s: %s is not a number", name, where);
}

canopy_status canopy_cf_jnumbers(const cf_jdoc *d, cf_jval arr, int64_t n, const char *name,
                                 const char *where, double *out) {
    /* Elements that are numbers (all of them in real files) are consecutive records. */
    uint32_t c = (uint32_t)arr + 1, end = is_container(d, arr) ? d->rec[arr].end : 0;
    for (int64_t i = 0; i < n; i++, c++) {
        if (c >= end) return canopy_fail(CANOPY_ERR_FORMAT, "%s: %s too short", name, where);
        const char *s = d->buf + d->rec[c].off;
        if (*s == '-' || is_digit(*s)) {
            out[i] = number_text(s);
            continue;
        }
        canopy_status st = canopy_cf_jnumber(d, (cf_jval)c, name, where, &out[i]);
        if (st) return st; /* containers are not numbers: no need to step over them */
    }
    return CANOPY_OK;
}
