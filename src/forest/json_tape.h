/* SPDX-License-Identifier: MIT */
/* A strict JSON (RFC 8259) reader for large model files. One pass over the text
 * checks the grammar and records each value as 8 bytes (its byte offset, and for a
 * container the index past its last descendant) in document order; numbers and
 * strings stay in the text and are converted when read. json-c's DOM (a malloc per
 * value) made a 20 MB XGBoost model load slower than XGBoost itself (issue 19). */
#ifndef CANOPY_FOREST_JSON_TAPE_H
#define CANOPY_FOREST_JSON_TAPE_H

#include "canopy.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cf_jrec {
    uint32_t off; /* byte offset of the value's first character */
    uint32_t end; /* containers: index of the record after the last descendant */
} cf_jrec;

typedef struct cf_jdoc {
    const char *buf; /* the caller's text, NUL-terminated, outliving the document */
    size_t len;
    cf_jrec *rec;
    int32_t n;
} cf_jdoc;

/* A value: its record index; -1 for none. The root is 0. */
typedef int32_t cf_jval;

typedef enum cf_jtype {
    CF_JNULL,
    CF_JBOOL,
    CF_JNUMBER,
    CF_JSTRING,
    CF_JARRAY,
    CF_JOBJECT
} cf_jtype;

/* Parses buf[0, len) (buf[len] must be NUL). Errors name the file and the byte:
 * "truncated JSON" when the text ends inside a value, "invalid JSON at byte N: why"
 * otherwise (bad grammar, escapes or UTF-8, control characters, nesting deeper than
 * 32, data after the value). */
canopy_status canopy_cf_jparse(const char *buf, size_t len, const char *name, cf_jdoc *doc);
void canopy_cf_jfree(cf_jdoc *doc);

cf_jtype canopy_cf_jtype_of(const cf_jdoc *d, cf_jval v);
/* Children of an array (elements) or object (key, value, key, value, ...). */
cf_jval canopy_cf_jfirst(const cf_jdoc *d, cf_jval parent);
cf_jval canopy_cf_jnext(const cf_jdoc *d, cf_jval parent, cf_jval child);
/* Elements of an array, members of an object. */
int64_t canopy_cf_jcount(const cf_jdoc *d, cf_jval v);
/* Member `key` of an object (the last one when repeated, as json-c did); -1 if
 * missing or v is not an object. */
cf_jval canopy_cf_jfind(const cf_jdoc *d, cf_jval obj, const char *key);
/* Member `key` of obj of the given type (CF_JNUMBER also takes numeric strings), or
 * an error naming the file and `where`. */
canopy_status canopy_cf_jget(const cf_jdoc *d, cf_jval obj, const char *key, cf_jtype type,
                             const char *name, const char *where, cf_jval *out);
/* A number, a boolean (0/1), or a string holding a number (XGBoost writes its
 * parameters as strings). */
canopy_status canopy_cf_jnumber(const cf_jdoc *d, cf_jval v, const char *name, const char *where,
                                double *out);
/* The first n elements of an array as numbers (canopy_cf_jnumber's rules). */
canopy_status canopy_cf_jnumbers(const cf_jdoc *d, cf_jval arr, int64_t n, const char *name,
                                 const char *where, double *out);
/* A string's decoded text (malloc'd, NUL-terminated); NULL when out of memory or v
 * is not a string. */
char *canopy_cf_jstrdup(const cf_jdoc *d, cf_jval v);
/* Whether v is a string whose decoded text is s. */
int canopy_cf_jstreq(const cf_jdoc *d, cf_jval v, const char *s);

#endif
