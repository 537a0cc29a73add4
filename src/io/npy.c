/* SPDX-License-Identifier: MIT */
/* NumPy .npy files (format versions 1.0, 2.0, 3.0; see numpy.lib.format): a magic
 * string, a version, a little-endian header length, a Python dict literal
 * describing dtype, order and shape, then the raw array bytes. The header is
 * untrusted input: it is parsed by a small grammar (never evaluated), and the shape
 * it claims is checked against the bytes actually present before anything is
 * allocated. */
#define _POSIX_C_SOURCE 200809L /* fseeko */
#include "io/io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char NPY_MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
/* Real headers are a few hundred bytes; the cap stops a hostile length field from
 * costing a large allocation. */
enum { MAX_HEADER = 1 << 20 };

typedef struct npy_header {
    canopy_dtype dtype;
    int32_t ndim;
    int64_t shape[CANOPY_MAX_DIMS];
} npy_header;

/* ---------------------------------------------------------------- preamble -- */

/* Checks magic and version in the first min(have, 8) bytes; sets the width of the
 * header-length field that follows (2 bytes in 1.0, 4 in 2.0 and 3.0). */
static canopy_status check_start(const unsigned char *p, size_t have, const char *name,
                                 size_t *len_bytes) {
    if (have == 0) return canopy_fail(CANOPY_ERR_FORMAT, "%s: empty file, not a .npy file", name);
    size_t m = have < sizeof NPY_MAGIC ? have : sizeof NPY_MAGIC;
    if (memcmp(p, NPY_MAGIC, m) != 0)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: not a .npy file (bad magic)", name);
    if (have < 8)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated header (the file has %zu bytes)", name,
                           have);
    int major = p[6], minor = p[7];
    if (minor != 0 || major < 1 || major > 3)
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: unsupported .npy format version %d.%d (canopy reads 1.0, 2.0 "
                           "and 3.0)",
                           name, major, minor);
    *len_bytes = major == 1 ? 2 : 4;
    return CANOPY_OK;
}

static size_t read_le(const unsigned char *p, size_t n) {
    size_t v = 0;
    for (size_t i = n; i-- > 0;) v = v << 8 | p[i];
    return v;
}

/* ------------------------------------------------------------------ header -- */

typedef struct cursor {
    const char *start, *p, *end;
    const char *name;
} cursor;

static canopy_status malformed(const cursor *c, const char *what) {
    char text[96];
    const char *e = c->end; /* the padding would only push the useful part out */
    while (e > c->start && (e[-1] == ' ' || e[-1] == '\n')) e--;
    canopy_io_printable(text, sizeof text, c->start, (size_t)(e - c->start));
    return canopy_fail(CANOPY_ERR_FORMAT, "%s: malformed .npy header (%s at byte %zu): \"%s\"",
                       c->name, what, (size_t)(c->p - c->start), text);
}

static void skip_ws(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool eat(cursor *c, char ch) {
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

static bool eat_word(cursor *c, const char *w) {
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0) return false;
    c->p += n;
    return true;
}

static bool is_digit(char ch) {
    return ch >= '0' && ch <= '9';
}

/* A Python string literal in single or double quotes (numpy never writes escapes). */
static bool string_lit(cursor *c, const char **s, size_t *n) {
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    char q = *c->p++;
    const char *close = memchr(c->p, q, (size_t)(c->end - c->p));
    if (!close) return false;
    *s = c->p;
    *n = (size_t)(close - c->p);
    c->p = close + 1;
    return true;
}

/* A tuple of non-negative integers: (), (5,), (5), (3, 4), (3, 4,), and Python 2's
 * long suffix (3L, 4L). */
static canopy_status shape_lit(cursor *c, npy_header *h) {
    if (!eat(c, '(')) return malformed(c, "'shape' is not a tuple");
    int total = 0;
    if (eat(c, ')')) {
        h->ndim = 0;
        return CANOPY_OK;
    }
    for (;;) {
        skip_ws(c);
        if (c->p < c->end && *c->p == '-')
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: shape has a negative dimension", c->name);
        if (c->p >= c->end || !is_digit(*c->p))
            return malformed(c, "expected an integer in 'shape'");
        int64_t v = 0;
        for (; c->p < c->end && is_digit(*c->p); c->p++) {
            int digit = *c->p - '0';
            if (v > (INT64_MAX - digit) / 10)
                return canopy_fail(CANOPY_ERR_FORMAT, "%s: shape has an absurd dimension", c->name);
            v = v * 10 + digit;
        }
        if (c->p < c->end && *c->p == 'L') c->p++;
        if (total < CANOPY_MAX_DIMS) h->shape[total] = v;
        total++;
        if (eat(c, ',')) {
            if (eat(c, ')')) break;
        } else if (eat(c, ')')) {
            break;
        } else {
            return malformed(c, "expected ',' or ')' in 'shape'");
        }
    }
    if (total > CANOPY_MAX_DIMS)
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: array has %d dimensions; canopy supports at most %d", c->name,
                           total, CANOPY_MAX_DIMS);
    h->ndim = total;
    return CANOPY_OK;
}

static canopy_status parse_dtype(const char *name, const char *d, size_t n, canopy_dtype *t) {
    static const struct {
        const char *code;
        canopy_dtype t;
    } codes[] = {{"f4", CANOPY_F32},
                 {"f8", CANOPY_F64},
                 {"i4", CANOPY_I32},
                 {"i8", CANOPY_I64},
                 {"u1", CANOPY_U8}};
    char shown[40];
    canopy_io_printable(shown, sizeof shown, d, n);
    if (n == 3) {
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
            if (memcmp(d + 1, codes[i].code, 2) != 0) continue;
            /* '<' little-endian, '=' native (little-endian here); byte order is
             * meaningless for one-byte types, which numpy marks '|'. */
            bool one_byte = codes[i].t == CANOPY_U8;
            if (d[0] == '<' || d[0] == '=' || (one_byte && (d[0] == '|' || d[0] == '>'))) {
                *t = codes[i].t;
                return CANOPY_OK;
            }
            if (d[0] == '>')
                return canopy_fail(CANOPY_ERR_FORMAT,
                                   "%s: big-endian dtype '%s' is not supported; convert with "
                                   "numpy: a.astype('<%s')",
                                   name, shown, codes[i].code);
        }
    }
    return canopy_fail(CANOPY_ERR_FORMAT,
                       "%s: unsupported dtype '%s' (canopy reads float32, float64, int32, "
                       "int64, uint8)",
                       name, shown);
}

/* The header: a dict literal with exactly the keys 'descr', 'fortran_order' and
 * 'shape' in any order, then padding whitespace. */
static canopy_status parse_header(const char *text, size_t len, const char *name, npy_header *h) {
    cursor c = {text, text, text + len, name};
    const char *descr = NULL;
    size_t descr_len = 0;
    int fortran = -1;
    bool have_shape = false;
    canopy_status s;

    if (!eat(&c, '{')) return malformed(&c, "expected '{'");
    while (!eat(&c, '}')) {
        const char *key;
        size_t klen;
        if (!string_lit(&c, &key, &klen)) return malformed(&c, "expected a quoted key");
        if (!eat(&c, ':')) return malformed(&c, "expected ':'");
        if (klen == 5 && memcmp(key, "descr", 5) == 0) {
            if (descr) return malformed(&c, "duplicate key 'descr'");
            skip_ws(&c);
            if (c.p < c.end && *c.p == '[')
                return canopy_fail(CANOPY_ERR_FORMAT,
                                   "%s: unsupported dtype (a structured dtype; canopy reads "
                                   "float32, float64, int32, int64, uint8)",
                                   name);
            if (!string_lit(&c, &descr, &descr_len))
                return malformed(&c, "'descr' is not a string");
        } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
            if (fortran >= 0) return malformed(&c, "duplicate key 'fortran_order'");
            if (eat_word(&c, "True"))
                fortran = 1;
            else if (eat_word(&c, "False"))
                fortran = 0;
            else
                return malformed(&c, "'fortran_order' is not True or False");
        } else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
            if (have_shape) return malformed(&c, "duplicate key 'shape'");
            if ((s = shape_lit(&c, h)) != CANOPY_OK) return s;
            have_shape = true;
        } else {
            char shown[40];
            canopy_io_printable(shown, sizeof shown, key, klen);
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: unexpected key '%s' in .npy header", name,
                               shown);
        }
        if (!eat(&c, ',') && !(c.p < c.end && *c.p == '}'))
            return malformed(&c, "expected ',' or '}'");
    }
    skip_ws(&c);
    if (c.p != c.end) return malformed(&c, "unexpected text after the dict");

    const char *missing = !descr ? "descr" : fortran < 0 ? "fortran_order" : NULL;
    if (!missing && !have_shape) missing = "shape";
    if (missing)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: .npy header has no '%s' key", name, missing);
    if ((s = parse_dtype(name, descr, descr_len, &h->dtype)) != CANOPY_OK) return s;
    if (fortran)
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: Fortran-order arrays are not supported; save with "
                           "numpy.ascontiguousarray",
                           name);
    return CANOPY_OK;
}

/* Byte size of the data the header describes. */
static canopy_status data_size(const npy_header *h, const char *name, size_t *bytes) {
    int64_t count;
    if (!canopy_io_shape_size(h->ndim, h->shape, canopy_dtype_size(h->dtype), &count, bytes))
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: shape is absurd (the array would not fit)",
                           name);
    return CANOPY_OK;
}

static canopy_status truncated(const char *name, size_t expected, size_t found) {
    return canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated: expected %zu bytes of data, found %zu",
                       name, expected, found);
}

/* -------------------------------------------------------------------- read -- */

canopy_status canopy_npy_read_mem(const void *buf, size_t len, const char *name,
                                  canopy_array *out) {
    const unsigned char *p = buf;
    size_t len_bytes, bytes;
    npy_header h;
    canopy_status s;
    memset(out, 0, sizeof *out);
    name = canopy_io_name(name);
    if (!buf && len > 0) return canopy_fail(CANOPY_ERR_INVALID, "%s: no buffer", name);

    if ((s = check_start(p, len < 8 ? len : 8, name, &len_bytes)) != CANOPY_OK) return s;
    if (len < 8 + len_bytes) return canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated header", name);
    size_t hlen = read_le(p + 8, len_bytes), start = 8 + len_bytes;
    if (hlen > len - start)
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: truncated header (%zu bytes announced, %zu present)", name, hlen,
                           len - start);
    if ((s = parse_header((const char *)p + start, hlen, name, &h)) != CANOPY_OK) return s;
    if ((s = data_size(&h, name, &bytes)) != CANOPY_OK) return s;
    size_t offset = start + hlen;
    if (bytes > len - offset) return truncated(name, bytes, len - offset);
    if ((s = canopy_io_array_alloc(out, h.dtype, h.ndim, h.shape, name)) != CANOPY_OK) return s;
    if (bytes) memcpy(out->data, p + offset, bytes);
    return CANOPY_OK;
}

/* Reads n bytes; a short read is a truncated header (or an I/O error). */
static canopy_status read_header_bytes(FILE *f, const char *path, void *dst, size_t n) {
    if (fread(dst, 1, n, f) == n) return CANOPY_OK;
    if (ferror(f))
        return canopy_fail(CANOPY_ERR_IO, "error reading '%s': %s", path, strerror(errno));
    return canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated header", path);
}

static const char *npy_descr(canopy_dtype t);

/* Opens a .npy file and reads and checks its header: on success *f is positioned at
 * the data, *offset is where it starts and *bytes its length, which a regular file
 * was checked to hold (a truncated file fails here, before any allocation). */
static canopy_status open_npy(const char *path, FILE **fp, npy_header *h, size_t *offset,
                              size_t *bytes) {
    FILE *f;
    int64_t size;
    unsigned char pre[12];
    size_t len_bytes;
    char *text = NULL;
    canopy_status s = canopy_io_open_read(path, &f, &size);
    if (s != CANOPY_OK) return s;

    size_t got = fread(pre, 1, 8, f);
    if (got < 8 && ferror(f)) {
        s = canopy_fail(CANOPY_ERR_IO, "error reading '%s': %s", path, strerror(errno));
        goto done;
    }
    if ((s = check_start(pre, got, path, &len_bytes)) != CANOPY_OK) goto done;
    if ((s = read_header_bytes(f, path, pre + 8, len_bytes)) != CANOPY_OK) goto done;
    size_t hlen = read_le(pre + 8, len_bytes);
    *offset = 8 + len_bytes + hlen;
    if (size >= 0 && *offset > (uint64_t)size) {
        s = canopy_fail(CANOPY_ERR_FORMAT,
                        "%s: truncated header (%zu bytes announced, %zu present)", path, hlen,
                        (size_t)size - (8 + len_bytes));
        goto done;
    }
    if (hlen > MAX_HEADER) {
        s = canopy_fail(CANOPY_ERR_FORMAT, "%s: header of %zu bytes is too large", path, hlen);
        goto done;
    }
    if (!(text = malloc(hlen + 1))) {
        s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory reading '%s'", path);
        goto done;
    }
    if ((s = read_header_bytes(f, path, text, hlen)) != CANOPY_OK) goto done;
    if ((s = parse_header(text, hlen, path, h)) != CANOPY_OK) goto done;
    if ((s = data_size(h, path, bytes)) != CANOPY_OK) goto done;
    /* A regular file's size shows truncation before a large allocation is made. */
    if (size >= 0 && *bytes > (uint64_t)size - *offset)
        s = truncated(path, *bytes, (size_t)((uint64_t)size - *offset));
done:
    free(text);
    if (s)
        fclose(f);
    else
        *fp = f;
    return s;
}

/* Reads bytes of data into out's buffer; releases out on a short read. */
static canopy_status read_data(FILE *f, const char *path, canopy_array *out, size_t bytes) {
    size_t n = fread(out->data, 1, bytes, f);
    if (n == bytes) return CANOPY_OK;
    canopy_status s =
        ferror(f) ? canopy_fail(CANOPY_ERR_IO, "error reading '%s': %s", path, strerror(errno))
                  : truncated(path, bytes, n);
    canopy_array_release(out);
    return s;
}

/* Streams the data straight into the array, so a multi-GB file is read once and
 * never held twice. */
canopy_status canopy_npy_read(const char *path, canopy_array *out) {
    int64_t rows, first;
    return canopy_npy_read_part(path, 0, 1, out, &rows, &first);
}

canopy_status canopy_npy_read_part(const char *path, int part, int parts, canopy_array *out,
                                   int64_t *rows, int64_t *first) {
    FILE *f;
    size_t offset = 0, bytes = 0;
    npy_header h;
    memset(out, 0, sizeof *out);
    canopy_status s = open_npy(path, &f, &h, &offset, &bytes);
    if (s != CANOPY_OK) return s;
    if (h.ndim < 1 && parts > 1) {
        fclose(f);
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: a 0-D array has no rows", path);
    }
    int64_t n = h.ndim > 0 ? h.shape[0] : 1, lo = n * part / parts, hi = n * (part + 1) / parts;
    size_t row = n > 0 ? bytes / (size_t)n : 0;
    *rows = n;
    *first = lo;
    if (h.ndim > 0) h.shape[0] = hi - lo;
    s = canopy_io_array_alloc(out, h.dtype, h.ndim, h.shape, path);
    /* only a later part seeks: the whole file still streams from a pipe */
    if (!s && lo > 0 && fseeko(f, (off_t)(offset + (size_t)lo * row), SEEK_SET) != 0) {
        s = canopy_fail(CANOPY_ERR_IO, "cannot seek in '%s': %s", path, strerror(errno));
        canopy_array_release(out);
    }
    if (!s) s = read_data(f, path, out, (size_t)(hi - lo) * row);
    fclose(f);
    return s;
}

canopy_status canopy_npy_header(const canopy_array *a, unsigned char *head, size_t *len) {
    size_t bytes;
    int64_t count;
    if (!canopy_dtype_size(a->dtype) ||
        !canopy_io_shape_size(a->ndim, a->shape, canopy_dtype_size(a->dtype), &count, &bytes))
        return canopy_fail(CANOPY_ERR_INVALID, ".npy header: invalid dtype or shape");
    char *dict = (char *)head + 10;
    size_t cap = CANOPY_NPY_HEADER_MAX - 10, n;
    n = (size_t)snprintf(dict, cap, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                         npy_descr(a->dtype));
    for (int32_t i = 0; i < a->ndim; i++)
        n += (size_t)snprintf(dict + n, cap - n, "%s%lld", i ? ", " : "", (long long)a->shape[i]);
    n += (size_t)snprintf(dict + n, cap - n, "%s), }", a->ndim == 1 ? "," : "");
    size_t total = (10 + n + 1 + 63) / 64 * 64; /* + 1 for the newline */
    memset(dict + n, ' ', total - 10 - n - 1);
    head[total - 1] = '\n';
    memcpy(head, NPY_MAGIC, 6);
    head[6] = 1;
    head[7] = 0;
    head[8] = (unsigned char)((total - 10) & 0xff);
    head[9] = (unsigned char)((total - 10) >> 8);
    *len = total;
    return CANOPY_OK;
}

/* ------------------------------------------------------------------- write -- */

static const char *npy_descr(canopy_dtype t) {
    switch (t) {
    case CANOPY_F32:
        return "<f4";
    case CANOPY_F64:
        return "<f8";
    case CANOPY_I32:
        return "<i4";
    case CANOPY_I64:
        return "<i8";
    case CANOPY_U8:
        return "|u1";
    }
    return "";
}

/* Version 1.0, laid out as numpy writes it: the dict padded with spaces and ended
 * by a newline so the data starts at a multiple of 64 bytes. With at most
 * CANOPY_MAX_DIMS dimensions the header stays far below 1.0's 65535-byte limit, so
 * versions 2.0 and 3.0 are never needed for writing. */
canopy_status canopy_npy_write(const char *path, const canopy_array *a) {
    size_t bytes;
    canopy_status s = canopy_io_check_array(a, path, &bytes);
    if (s != CANOPY_OK) return s;
    canopy_outfile o;
    if ((s = canopy_outfile_open(&o, path)) != CANOPY_OK) return s;
    if ((s = canopy_npy_write_to(&o, a)) != CANOPY_OK) {
        canopy_outfile_abort(&o);
        return s;
    }
    return canopy_outfile_commit(&o);
}

canopy_status canopy_npy_write_to(canopy_outfile *o, const canopy_array *a) {
    size_t bytes, total;
    canopy_status s = canopy_io_check_array(a, o->final_path, &bytes);
    if (s != CANOPY_OK) return s;
    unsigned char head[CANOPY_NPY_HEADER_MAX];
    if ((s = canopy_npy_header(a, head, &total)) != CANOPY_OK) return s;
    if ((s = canopy_io_write(o, head, total)) != CANOPY_OK) return s;
    return canopy_io_write(o, a->data, bytes);
}
