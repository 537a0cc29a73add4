/* SPDX-License-Identifier: MIT */
/* Model loading: reads the file, detects the format from the content, and holds the
 * JSON helpers the JSON importers share. */
#include "forest/forest.h"
#include "io/io.h"

#include <json-c/json.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

canopy_status canopy_cf_json_parse(const char *buf, size_t len, const char *name,
                                   struct json_object **out) {
    if (len > INT32_MAX)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: JSON larger than 2 GiB", name);
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    if (!tok) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    json_object *obj = json_tokener_parse_ex(tok, buf, (int)len);
    enum json_tokener_error err = json_tokener_get_error(tok);
    size_t at = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!obj || err != json_tokener_success) {
        if (obj) json_object_put(obj);
        if (err == json_tokener_continue)
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated JSON (ends inside a value)", name);
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: invalid JSON at byte %zu: %s", name, at,
                           json_tokener_error_desc(err));
    }
    /* Trailing garbage after the top-level value is an error too. */
    for (size_t i = at; i < len; i++)
        if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\r' && buf[i] != '\t' && buf[i]) {
            json_object_put(obj);
            return canopy_fail(CANOPY_ERR_FORMAT, "%s: unexpected data after the JSON at byte %zu",
                               name, i);
        }
    *out = obj;
    return CANOPY_OK;
}

static const char *type_word(int type) {
    switch (type) {
    case json_type_object:
        return "an object";
    case json_type_array:
        return "an array";
    case json_type_string:
        return "a string";
    case json_type_int:
    case json_type_double:
        return "a number";
    case json_type_boolean:
        return "a boolean";
    default:
        return "a value";
    }
}

canopy_status canopy_cf_json_get(struct json_object *obj, const char *key, int type,
                                 const char *name, const char *where, struct json_object **out) {
    json_object *v = NULL;
    if (!obj || !json_object_is_type(obj, json_type_object) ||
        !json_object_object_get_ex(obj, key, &v))
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: missing field \"%s\" in %s", name, key, where);
    json_type t = json_object_get_type(v);
    int ok = t == (json_type)type || ((type == json_type_double || type == json_type_int) &&
                                      (t == json_type_int || t == json_type_double));
    if (!ok)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: field \"%s\" in %s should be %s", name, key,
                           where, type_word(type));
    *out = v;
    return CANOPY_OK;
}

canopy_status canopy_cf_json_number(struct json_object *v, const char *name, const char *where,
                                    double *out) {
    json_type t = json_object_get_type(v);
    if (t == json_type_int || t == json_type_double) {
        *out = json_object_get_double(v);
        return CANOPY_OK;
    }
    if (t == json_type_boolean) {
        *out = json_object_get_boolean(v) ? 1 : 0;
        return CANOPY_OK;
    }
    if (t == json_type_string) {
        const char *s = json_object_get_string(v);
        char *end;
        errno = 0;
        double d = strtod(s, &end);
        if (*s && *end == '\0' && errno != ERANGE) {
            *out = d;
            return CANOPY_OK;
        }
    }
    return canopy_fail(CANOPY_ERR_FORMAT, "%s: %s is not a number", name, where);
}

static canopy_forest_format detect(const char *buf, size_t len) {
    size_t i = 0;
    while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')) i++;
    if (i < len && buf[i] == '{') {
        /* XGBoost models have a top-level "learner"; canopy ones say their format. */
        const char *lim = buf + (len < 4096 ? len : 4096);
        for (const char *p = buf + i; p + 9 <= lim; p++)
            if (memcmp(p, "\"learner\"", 9) == 0) return CANOPY_FOREST_FORMAT_XGBOOST;
        if (strstr(buf, "\"canopy-forest\"")) return CANOPY_FOREST_FORMAT_CANOPY;
        if (strstr(buf, "\"learner\"")) return CANOPY_FOREST_FORMAT_XGBOOST;
        return CANOPY_FOREST_FORMAT_AUTO;
    }
    if (len >= 5 && memcmp(buf + i, "tree\n", 5) == 0) return CANOPY_FOREST_FORMAT_LIGHTGBM;
    if (strstr(buf, "\nnum_tree_per_iteration=")) return CANOPY_FOREST_FORMAT_LIGHTGBM;
    return CANOPY_FOREST_FORMAT_AUTO;
}

/* Detects the format and imports copy[0, len), which must be NUL-terminated. */
static canopy_status load_text(const char *copy, size_t len, const char *name,
                               canopy_forest_format fmt, canopy_forest **out) {
    if (memchr(copy, '\0', len))
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "%s: binary model files (UBJSON, pickles) are not supported; save "
                           "XGBoost models as .json, LightGBM models as text",
                           name);
    if (fmt == CANOPY_FOREST_FORMAT_AUTO) fmt = detect(copy, len);
    canopy_status s;
    switch (fmt) {
    case CANOPY_FOREST_FORMAT_XGBOOST:
        s = canopy_cf_import_xgboost(copy, len, name, out);
        break;
    case CANOPY_FOREST_FORMAT_LIGHTGBM:
        s = canopy_cf_import_lightgbm(copy, len, name, out);
        break;
    case CANOPY_FOREST_FORMAT_CANOPY:
        s = canopy_cf_import_canopy(copy, len, name, out);
        break;
    default:
        s = canopy_fail(CANOPY_ERR_FORMAT,
                        "%s: not a recognised model (expected XGBoost JSON, a LightGBM text "
                        "model or canopy JSON)",
                        name);
    }
    if (s && *out) {
        canopy_forest_free(*out);
        *out = NULL;
    }
    return s;
}

canopy_status canopy_forest_load_mem(const char *buf, size_t len, const char *name,
                                     canopy_forest_format fmt, canopy_forest **out) {
    *out = NULL;
    /* Importers want a NUL-terminated buffer. */
    char *copy = malloc(len + 1);
    if (!copy) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory reading %s", name);
    memcpy(copy, buf, len);
    copy[len] = '\0';
    canopy_status s = load_text(copy, len, name, fmt, out);
    free(copy);
    return s;
}

canopy_status canopy_forest_load(const char *path, canopy_forest_format fmt, canopy_forest **out) {
    *out = NULL;
    /* Read in one go and imported in place: a 20 MB model's reallocations and copy
     * were a tenth of its load. */
    char *buf;
    size_t len;
    canopy_status s = canopy_io_read_all(path, &buf, &len);
    if (!s && len == 0) s = canopy_fail(CANOPY_ERR_FORMAT, "%s: empty file", path);
    if (!s) s = load_text(buf, len, path, fmt, out);
    free(buf);
    return s;
}
