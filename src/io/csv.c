/* SPDX-License-Identifier: MIT */
/* Numeric CSV: comma-separated numbers, one row per line, an optional header line.
 * Every row must have the same number of fields, and every field must be a number
 * (NaN and Inf included: forests take missing values as NaN). Blank lines may end
 * the file; anywhere else they are an error, since in a one-column file a blank
 * line is a missing value and skipping it would shift the rows below. */
#include "io/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool is_space(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\r';
}

static void trim(const char **s, const char **e) {
    while (*s < *e && is_space(**s)) (*s)++;
    while (*e > *s && is_space((*e)[-1])) (*e)--;
}

static bool is_blank(const char *s, const char *e) {
    trim(&s, &e);
    return s == e;
}

/* Splits off the line at *pos (without its '\n'); false at the end of the input. */
static bool next_line(const char **pos, const char *end, const char **s, const char **e) {
    if (*pos >= end) return false;
    const char *nl = memchr(*pos, '\n', (size_t)(end - *pos));
    *s = *pos;
    *e = nl ? nl : end;
    *pos = nl ? nl + 1 : end;
    return true;
}

static int64_t count_fields(const char *s, const char *e) {
    int64_t n = 1;
    while ((s = memchr(s, ',', (size_t)(e - s))) != NULL) n++, s++;
    return n;
}

/* Parses a trimmed field. It is copied first: strtod needs a terminated string,
 * and the input buffer need not have one where the field ends. A double needs at
 * most 17 significant digits, so longer fields are not taken for numbers. */
static bool parse_number(const char *s, const char *e, double *v) {
    char buf[128];
    size_t n = (size_t)(e - s);
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    *v = strtod(buf, &end);
    return end == buf + n;
}

/* Splits off the next field of a line ending at e, trimmed, into fs..fe; *p is the
 * field's start and becomes NULL after the last field. */
static bool next_field(const char **p, const char *e, const char **fs, const char **fe) {
    if (!*p) return false;
    const char *comma = memchr(*p, ',', (size_t)(e - *p));
    *fs = *p;
    *fe = comma ? comma : e;
    trim(fs, fe);
    *p = comma ? comma + 1 : NULL;
    return true;
}

/* Parses the fields of one line into row[0..cols). Returns 0, or the failing
 * field's 1-based index with its span in fs..fe. */
static int64_t parse_row(const char *s, const char *e, double *row, const char **fs,
                         const char **fe) {
    int64_t field = 0;
    for (const char *p = s; next_field(&p, e, fs, fe); field++)
        if (!parse_number(*fs, *fe, &row[field])) return field + 1;
    return 0;
}

/* A line of two or more numbers separated by spaces or tabs and no comma: a
 * whitespace-delimited table, which would otherwise read as a header line. */
static bool whitespace_delimited(const char *s, const char *e) {
    trim(&s, &e);
    if (memchr(s, ',', (size_t)(e - s))) return false;
    int tokens = 0;
    double v;
    while (s < e) {
        const char *t = s;
        while (t < e && !is_space(*t)) t++;
        if (!parse_number(s, t, &v)) return false;
        tokens++;
        while (t < e && is_space(*t)) t++;
        s = t;
    }
    return tokens >= 2;
}

/* A header is a first line with a non-empty field that is not a number. */
static bool looks_like_header(const char *s, const char *e) {
    const char *fs, *fe;
    double v;
    for (const char *p = s; next_field(&p, e, &fs, &fe);)
        if (fs != fe && !parse_number(fs, fe, &v)) return true;
    return false;
}

static canopy_status field_error(const char *name, int64_t line, int64_t field, const char *fs,
                                 const char *fe) {
    if (fs == fe)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: line %lld, field %lld is empty", name,
                           (long long)line, (long long)field);
    char shown[48];
    canopy_io_printable(shown, sizeof shown, fs, (size_t)(fe - fs));
    return canopy_fail(CANOPY_ERR_FORMAT, "%s: line %lld, field %lld: '%s' is not a number", name,
                       (long long)line, (long long)field, shown);
}

canopy_status canopy_csv_read_mem(const void *buf, size_t len, const char *name,
                                  canopy_array *out) {
    memset(out, 0, sizeof *out);
    name = canopy_io_name(name);
    if (!buf && len > 0) return canopy_fail(CANOPY_ERR_INVALID, "%s: no buffer", name);
    if (len == 0) return canopy_fail(CANOPY_ERR_FORMAT, "%s: empty CSV", name);
    const char *pos = buf, *end = pos + len, *s = NULL, *e = NULL, *fs, *fe;
    if (len >= 3 && memcmp(pos, "\xEF\xBB\xBF", 3) == 0) pos += 3; /* UTF-8 BOM (Excel) */
    const char *q = pos;
    while (q < end && (is_space(*q) || *q == '\n')) q++;
    if (q == end) return canopy_fail(CANOPY_ERR_FORMAT, "%s: empty CSV", name);

    next_line(&pos, end, &s, &e);
    const char *head_s = s, *head_e = e;
    bool header = looks_like_header(s, e);
    /* line 1, or the first data row under a header (whose words are not numbers) */
    const char *row_pos = pos, *row_s = s, *row_e = e;
    int bad_line = whitespace_delimited(s, e) ? 1 : 0;
    if (!bad_line && header && next_line(&row_pos, end, &row_s, &row_e) &&
        whitespace_delimited(row_s, row_e))
        bad_line = 2;
    if (bad_line)
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: line %d holds numbers separated by spaces or tabs; CSV fields "
                           "are separated by commas (convert it, e.g. with tr -s ' \\t' ',')",
                           name, bad_line);
    const char *data = header ? pos : s;
    int64_t first_line = header ? 2 : 1;

    /* First pass: the table's structure (blank lines, field counts), so the array is
     * allocated once and at its exact size. The first row sets the column count; a
     * header alone sets it for an empty table. */
    int64_t rows = 0, cols = -1, blank = 0, line = first_line - 1;
    for (q = data; next_line(&q, end, &s, &e);) {
        line++;
        if (is_blank(s, e)) {
            if (!blank) blank = line;
            continue;
        }
        if (blank)
            return canopy_fail(CANOPY_ERR_FORMAT,
                               "%s: line %lld is blank (blank lines may only end the file)", name,
                               (long long)blank);
        int64_t n = count_fields(s, e);
        if (cols < 0) cols = n;
        if (n != cols)
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: line %lld has %lld fields, expected %lld",
                               name, (long long)line, (long long)n, (long long)cols);
        rows++;
    }
    if (cols < 0) cols = count_fields(head_s, head_e);
    int64_t shape[2] = {rows, cols};
    canopy_status st = canopy_array_alloc(out, CANOPY_F64, 2, shape);
    if (st != CANOPY_OK) return st;

    /* Second pass: the numbers. */
    double *row = out->data;
    line = first_line - 1;
    for (q = data; next_line(&q, end, &s, &e);) {
        line++;
        if (is_blank(s, e)) continue;
        int64_t bad = parse_row(s, e, row, &fs, &fe);
        if (bad) {
            canopy_array_release(out);
            return field_error(name, line, bad, fs, fe);
        }
        row += cols;
    }
    return CANOPY_OK;
}

canopy_status canopy_csv_read(const char *path, canopy_array *out) {
    char *buf;
    size_t len;
    memset(out, 0, sizeof *out);
    canopy_status s = canopy_io_read_all(path, &buf, &len);
    if (s != CANOPY_OK) return s;
    s = canopy_csv_read_mem(buf, len, path, out);
    free(buf);
    return s;
}

/* ------------------------------------------------------------------- write -- */

/* The shortest of %.6g..%.9g (float32) or %.15g..%.17g (float64) that reads back
 * as the same value, so files stay readable and round-trip exactly. */
static int format_float(char *buf, size_t cap, double x, bool single) {
    if (isnan(x)) return snprintf(buf, cap, "nan");
    if (isinf(x)) return snprintf(buf, cap, x < 0 ? "-inf" : "inf");
    int lo = single ? 6 : 15, hi = single ? 9 : 17, n = 0;
    for (int prec = lo; prec <= hi; prec++) {
        n = snprintf(buf, cap, "%.*g", prec, x);
        double back = strtod(buf, NULL);
        if (single ? ((float)back == (float)x && strtof(buf, NULL) == (float)x) : back == x) break;
    }
    return n;
}

static int format_value(char *buf, size_t cap, const canopy_array *a, int64_t i) {
    switch (a->dtype) {
    case CANOPY_F32:
        return format_float(buf, cap, ((const float *)a->data)[i], true);
    case CANOPY_F64:
        return format_float(buf, cap, ((const double *)a->data)[i], false);
    case CANOPY_I32:
        return snprintf(buf, cap, "%ld", (long)((const int32_t *)a->data)[i]);
    case CANOPY_I64:
        return snprintf(buf, cap, "%lld", (long long)((const int64_t *)a->data)[i]);
    case CANOPY_U8:
        return snprintf(buf, cap, "%u", (unsigned)((const uint8_t *)a->data)[i]);
    }
    return 0;
}

canopy_status canopy_csv_write(const char *path, const canopy_array *a, const char *header) {
    size_t bytes;
    canopy_status s = canopy_io_check_array(a, path, &bytes);
    if (s != CANOPY_OK) return s;
    canopy_outfile o;
    if ((s = canopy_outfile_open(&o, path)) != CANOPY_OK) return s;
    if ((s = canopy_csv_write_to(&o, a, header)) != CANOPY_OK) {
        canopy_outfile_abort(&o);
        return s;
    }
    return canopy_outfile_commit(&o);
}

canopy_status canopy_csv_write_to(canopy_outfile *o, const canopy_array *a, const char *header) {
    const char *path = o->final_path;
    size_t bytes;
    canopy_status s = canopy_io_check_array(a, path, &bytes);
    if (s != CANOPY_OK) return s;
    if (a->ndim != 1 && a->ndim != 2)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: CSV holds 1-D or 2-D arrays, not %d-D", path,
                           (int)a->ndim);
    int64_t rows = a->shape[0], cols = a->ndim == 2 ? a->shape[1] : 1;
    if (cols == 0 && rows > 0)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: cannot write rows of 0 columns to CSV", path);
    if (header && strpbrk(header, "\r\n"))
        return canopy_fail(CANOPY_ERR_INVALID, "%s: the CSV header must be a single line", path);

    FILE *f = o->fp;
    if (header) fprintf(f, "%s\n", header);
    char buf[64];
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++) {
            int n = format_value(buf, sizeof buf, a, r * cols + c);
            if (c) fputc(',', f);
            fwrite(buf, 1, (size_t)n, f);
        }
        fputc('\n', f);
        /* Stop at the first failed row (a full disk) instead of formatting the rest;
         * the commit reports it. */
        if (ferror(f)) break;
    }
    return CANOPY_OK;
}
