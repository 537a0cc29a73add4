/* SPDX-License-Identifier: MIT */
/* .npy reading and writing: round trips of every dtype and shape kind, files written
 * by NumPy (tests/data), hand-built version 2.0/3.0 headers, malformed inputs with
 * their messages, and atomic writes that leave nothing behind on failure. */
#define _XOPEN_SOURCE 700
#include "check.h"
#include "io/io.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ helpers -- */

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static void spit(const char *path, const void *buf, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(buf, 1, len, f);
    fclose(f);
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Number of entries of dir whose name contains ".tmp.". */
static int tmp_files_in(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

/* A .npy image with the given version and dict text, padded like numpy pads. */
static size_t make_npy(unsigned char *out, int major, int minor, const char *dict, const void *data,
                       size_t data_len) {
    size_t len_bytes = major == 1 ? 2 : 4, pre = 8 + len_bytes, dl = strlen(dict);
    size_t hlen = (pre + dl + 1 + 63) / 64 * 64 - pre;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = (unsigned char)minor;
    for (size_t i = 0; i < len_bytes; i++) out[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(out + pre, dict, dl);
    memset(out + pre + dl, ' ', hlen - dl - 1);
    out[pre + hlen - 1] = '\n';
    if (data_len) memcpy(out + pre + hlen, data, data_len);
    return pre + hlen + data_len;
}

static void fill_random(void *p, size_t n, uint64_t stream) {
    canopy_rng r = canopy_rng_make(check_seed(), stream);
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)canopy_rng_u64(&r);
}

static int same_array(const canopy_array *a, const canopy_array *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    size_t bytes = (size_t)canopy_array_count(a) * canopy_dtype_size(a->dtype);
    return bytes == 0 || memcmp(a->data, b->data, bytes) == 0;
}

/* Expects reading buf as "mem.npy" to fail with status st and a message that starts
 * with the name and contains needle. */
#define BAD(buf, len, st, needle) bad_mem(buf, len, st, needle, __LINE__)
static void bad_mem(const void *buf, size_t len, canopy_status st, const char *needle, int line) {
    canopy_array a;
    memset(&a, 0x55, sizeof a);
    canopy_status s = canopy_npy_read_mem(buf, len, "mem.npy", &a);
    const char *msg = canopy_last_error();
    check_record(s == st && strncmp(msg, "mem.npy: ", 9) == 0 && strstr(msg, needle) &&
                     a.data == NULL,
                 __FILE__, line, "got %s \"%s\", expected %s containing \"%s\"",
                 canopy_status_name(s), msg, canopy_status_name(st), needle);
}

/* --------------------------------------------------------------- round trip -- */

static void test_round_trip(void) {
    static const struct {
        int32_t ndim;
        int64_t shape[CANOPY_MAX_DIMS];
    } shapes[] = {
        {0, {0}},
        {1, {7}},
        {1, {0}},
        {1, {1}},
        {2, {3, 5}},
        {2, {0, 4}},
        {2, {4, 0}},
        {3, {2, 3, 4}},
        {3, {2, 0, 3}},
        {4, {1, 2, 1, 3}},
        {8, {1, 2, 1, 2, 1, 2, 1, 2}},
        {2, {1000, 17}}, /* 68 KB of float32: more than one stdio buffer */
    };
    canopy_rng r = canopy_rng_make(check_seed(), 1000);
    char path[512];
    snprintf(path, sizeof path, "%s", check_tmp_path("round.npy"));
    uint64_t stream = 0;
    for (int t = CANOPY_F32; t <= CANOPY_U8; t++) {
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0] + 3; k++) {
            canopy_array a, b;
            int32_t ndim;
            int64_t shape[CANOPY_MAX_DIMS];
            if (k < sizeof shapes / sizeof shapes[0]) {
                ndim = shapes[k].ndim;
                memcpy(shape, shapes[k].shape, sizeof shape);
            } else { /* random shapes */
                ndim = (int32_t)canopy_rng_below(&r, 4);
                for (int i = 0; i < ndim; i++) shape[i] = (int64_t)canopy_rng_below(&r, 9);
            }
            CHECK_OK(canopy_array_alloc(&a, (canopy_dtype)t, ndim, shape));
            size_t bytes = (size_t)canopy_array_count(&a) * canopy_dtype_size(a.dtype);
            fill_random(a.data, bytes, stream++);
            CHECK_OK(canopy_npy_write(path, &a));
            CHECK_OK(canopy_npy_read(path, &b));
            CHECK_MSG(same_array(&a, &b), "round trip of %s, %d-D (case %zu)",
                      canopy_dtype_name(a.dtype), (int)ndim, k);
            canopy_array_release(&b);

            /* The file is laid out as numpy lays it out, and reads the same from memory. */
            size_t len;
            unsigned char *file = slurp(path, &len);
            CHECK(file != NULL);
            if (!file) continue;
            size_t hlen = (size_t)file[8] | (size_t)file[9] << 8;
            CHECK(file[6] == 1 && file[7] == 0);
            CHECK((10 + hlen) % 64 == 0);
            CHECK(file[10 + hlen - 1] == '\n');
            CHECK(len == 10 + hlen + bytes);
            CHECK_OK(canopy_npy_read_mem(file, len, "mem", &b));
            CHECK(same_array(&a, &b));
            canopy_array_release(&b);
            free(file);
            canopy_array_release(&a);
        }
    }
    CHECK(tmp_files_in(check_tmp_path("")) == 0);
}

/* ------------------------------------------------------------ numpy's files -- */

static const char *data_path(const char *name) {
    static char path[1024];
    const char *dir = getenv("CANOPY_TEST_DATA");
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "tests/data", name);
    return path;
}

static int shape_is(const canopy_array *a, canopy_dtype t, int32_t ndim, int64_t s0, int64_t s1,
                    int64_t s2) {
    int64_t s[3] = {s0, s1, s2};
    if (a->dtype != t || a->ndim != ndim) return 0;
    for (int i = 0; i < ndim && i < 3; i++)
        if (a->shape[i] != s[i]) return 0;
    return 1;
}

static void test_numpy_files(void) {
    canopy_array a;
    if (!getenv("CANOPY_TEST_DATA"))
        printf("note: CANOPY_TEST_DATA is not set; looking in ./tests/data\n");

    CHECK_OK(canopy_npy_read(data_path("f4_2d.npy"), &a));
    CHECK(shape_is(&a, CANOPY_F32, 2, 3, 4, 0));
    if (a.data)
        for (int i = 0; i < 12; i++) CHECK(((float *)a.data)[i] == (float)(i - 5) / 4);
    canopy_array_release(&a);

    CHECK_OK(canopy_npy_read(data_path("f8_1d.npy"), &a));
    CHECK(shape_is(&a, CANOPY_F64, 1, 6, 0, 0));
    if (a.data) {
        const double *x = a.data;
        CHECK(x[0] == 0.1 && x[1] == -2.5 && x[2] == 1e-300 && isinf(x[3]) && x[3] > 0);
        CHECK(isnan(x[4]) && x[5] == 0 && signbit(x[5]));
    }
    canopy_array_release(&a);

    CHECK_OK(canopy_npy_read(data_path("i8_2d.npy"), &a));
    CHECK(shape_is(&a, CANOPY_I64, 2, 2, 2, 0));
    if (a.data) {
        const int64_t *x = a.data;
        CHECK(x[0] == INT64_MIN && x[1] == 0 && x[2] == 1 && x[3] == INT64_MAX);
    }
    canopy_array_release(&a);

    CHECK_OK(canopy_npy_read(data_path("i4_3d.npy"), &a));
    CHECK(shape_is(&a, CANOPY_I32, 3, 2, 3, 2));
    if (a.data) {
        static const int32_t want[6] = {INT32_MIN, -1, 0, 1, INT32_MAX, 7};
        for (int i = 0; i < 12; i++) CHECK(((int32_t *)a.data)[i] == want[i % 6]);
    }
    canopy_array_release(&a);

    CHECK_OK(canopy_npy_read(data_path("u1_1d.npy"), &a));
    CHECK(shape_is(&a, CANOPY_U8, 1, 5, 0, 0));
    if (a.data) CHECK(memcmp(a.data, "\x00\x01\x7f\x80\xff", 5) == 0);
    canopy_array_release(&a);

    CHECK_OK(canopy_npy_read(data_path("f8_0d.npy"), &a));
    CHECK(shape_is(&a, CANOPY_F64, 0, 0, 0, 0) && canopy_array_count(&a) == 1);
    if (a.data) CHECK(((double *)a.data)[0] == 3.5);
    canopy_array_release(&a);

    CHECK_OK(canopy_npy_read(data_path("f4_empty.npy"), &a));
    CHECK(shape_is(&a, CANOPY_F32, 2, 0, 3, 0) && canopy_array_count(&a) == 0);
    canopy_array_release(&a);

    CHECK_OK(canopy_npy_read(data_path("v2_f4.npy"), &a));
    CHECK(shape_is(&a, CANOPY_F32, 2, 2, 2, 0));
    if (a.data) {
        const float *x = a.data;
        CHECK(x[0] == 1.5f && x[1] == -2.0f && x[2] == 3.25f && x[3] == 4.0f);
    }
    canopy_array_release(&a);

    CHECK_OK(canopy_npy_read(data_path("v3_i4.npy"), &a));
    CHECK(shape_is(&a, CANOPY_I32, 1, 3, 0, 0));
    if (a.data) {
        const int32_t *x = a.data;
        CHECK(x[0] == 10 && x[1] == -20 && x[2] == 30);
    }
    canopy_array_release(&a);

    CHECK_FAILS(canopy_npy_read(data_path("fortran_f8.npy"), &a), CANOPY_ERR_FORMAT,
                "Fortran-order arrays are not supported; save with numpy.ascontiguousarray");
    CHECK_FAILS(canopy_npy_read(data_path("bigendian_f4.npy"), &a), CANOPY_ERR_FORMAT,
                "big-endian dtype '>f4'");
    CHECK_FAILS(canopy_npy_read(data_path("bool_1d.npy"), &a), CANOPY_ERR_FORMAT,
                "unsupported dtype '|b1' (canopy reads float32, float64, int32, int64, uint8)");
    CHECK(check_contains(canopy_last_error(), "bool_1d.npy: "));

    /* What canopy writes is byte for byte what np.save wrote. */
    static const char *same_as_numpy[] = {"f4_2d.npy", "i8_2d.npy", "i4_3d.npy",
                                          "u1_1d.npy", "f8_0d.npy", "f4_empty.npy"};
    char out[512];
    snprintf(out, sizeof out, "%s", check_tmp_path("numpy_copy.npy"));
    for (size_t i = 0; i < sizeof same_as_numpy / sizeof same_as_numpy[0]; i++) {
        size_t la = 0, lb = 0;
        CHECK_OK(canopy_npy_read(data_path(same_as_numpy[i]), &a));
        CHECK_OK(canopy_npy_write(out, &a));
        canopy_array_release(&a);
        unsigned char *fa = slurp(data_path(same_as_numpy[i]), &la), *fb = slurp(out, &lb);
        CHECK_MSG(fa && fb && la == lb && memcmp(fa, fb, la) == 0, "%s differs from numpy's",
                  same_as_numpy[i]);
        free(fa);
        free(fb);
    }
}

/* --------------------------------------------------------- header variants -- */

static void test_header_variants(void) {
    unsigned char buf[4096];
    canopy_array a;
    const float f[4] = {1, 2, 3, 4};
    const int32_t iv[3] = {7, 8, 9};

    size_t n = make_npy(buf, 2, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", f,
                        sizeof f);
    CHECK_OK(canopy_npy_read_mem(buf, n, "v2", &a));
    CHECK(shape_is(&a, CANOPY_F32, 2, 2, 2, 0) && memcmp(a.data, f, sizeof f) == 0);
    canopy_array_release(&a);

    n = make_npy(buf, 3, 0, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", iv,
                 sizeof iv);
    CHECK_OK(canopy_npy_read_mem(buf, n, "v3", &a));
    CHECK(shape_is(&a, CANOPY_I32, 1, 3, 0, 0) && memcmp(a.data, iv, sizeof iv) == 0);
    canopy_array_release(&a);

    /* A version 2.0 header longer than 1.0 could hold. */
    char big[70000];
    int k = snprintf(big, sizeof big, "{'shape': (4,), 'fortran_order': False, 'descr': '<f4'");
    memset(big + k, ' ', 66000);
    strcpy(big + k + 66000, "}");
    static unsigned char huge[70100];
    n = make_npy(huge, 2, 0, big, f, sizeof f);
    CHECK_OK(canopy_npy_read_mem(huge, n, "v2big", &a));
    CHECK(shape_is(&a, CANOPY_F32, 1, 4, 0, 0) && memcmp(a.data, f, sizeof f) == 0);
    canopy_array_release(&a);
    snprintf(big, sizeof big, "%s", check_tmp_path("v2big.npy"));
    spit(big, huge, n);
    CHECK_OK(canopy_npy_read(big, &a));
    CHECK(shape_is(&a, CANOPY_F32, 1, 4, 0, 0));
    canopy_array_release(&a);

    /* Key order, quotes, whitespace and tuple spellings that Python accepts. */
    static const struct {
        const char *dict;
        int32_t ndim;
        int64_t s0, s1;
    } ok[] = {
        {"{'shape': (2, 2), 'descr': '<f4', 'fortran_order': False}", 2, 2, 2},
        {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (4,)}", 1, 4, 0},
        {"{ 'descr' : '<f4' ,\n 'fortran_order' : False ,\t'shape' : ( 4 , ) , }", 1, 4, 0},
        {"{'descr':'<f4','fortran_order':False,'shape':(4)}", 1, 4, 0},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 2L), }", 2, 2, 2},
        {"{'descr': '=f4', 'fortran_order': False, 'shape': (1, 4), }", 2, 1, 4},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        n = make_npy(buf, 1, 0, ok[i].dict, f, sizeof f);
        canopy_status s = canopy_npy_read_mem(buf, n, "variant", &a);
        CHECK_MSG(s == CANOPY_OK && shape_is(&a, CANOPY_F32, ok[i].ndim, ok[i].s0, ok[i].s1, 0),
                  "header %s: %s", ok[i].dict, canopy_last_error());
        canopy_array_release(&a);
    }
    /* uint8 under any byte order mark. */
    static const char *u1[] = {"|u1", "<u1", ">u1"};
    for (int i = 0; i < 3; i++) {
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (4,), }",
                 u1[i]);
        n = make_npy(buf, 1, 0, dict, "abcd", 4);
        CHECK_OK(canopy_npy_read_mem(buf, n, "u1", &a));
        CHECK(shape_is(&a, CANOPY_U8, 1, 4, 0, 0) && memcmp(a.data, "abcd", 4) == 0);
        canopy_array_release(&a);
    }
    /* Extra bytes after the data are ignored, as numpy ignores them. */
    n = make_npy(buf, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f,
                 sizeof f);
    CHECK_OK(canopy_npy_read_mem(buf, n, "extra", &a));
    CHECK(shape_is(&a, CANOPY_F32, 1, 3, 0, 0));
    canopy_array_release(&a);
    /* An empty array with huge other dimensions is still just empty. */
    n = make_npy(buf, 1, 0,
                 "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, "
                 "4611686018427387904, 0), }",
                 NULL, 0);
    CHECK_OK(canopy_npy_read_mem(buf, n, "empty", &a));
    CHECK(a.ndim == 3 && canopy_array_count(&a) == 0);
    canopy_array_release(&a);
}

/* ---------------------------------------------------------------- malformed -- */

static void test_malformed(void) {
    unsigned char buf[4096];
    double d[10] = {0};
    const char *good = "{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }";
    size_t n;

    /* Every strict prefix of a valid file fails cleanly. */
    size_t full = make_npy(buf, 1, 0, good, d, sizeof d);
    for (size_t len = 0; len < full; len++) {
        canopy_array a;
        canopy_status s = canopy_npy_read_mem(buf, len, "cut", &a);
        CHECK_MSG(s == CANOPY_ERR_FORMAT && a.data == NULL, "prefix of %zu bytes: %s", len,
                  canopy_last_error());
    }
    BAD(buf, 5, CANOPY_ERR_FORMAT, "truncated header");
    BAD(buf, 9, CANOPY_ERR_FORMAT, "truncated header");
    BAD(buf, 40, CANOPY_ERR_FORMAT, "truncated header");
    BAD(buf, 0, CANOPY_ERR_FORMAT, "empty file");
    BAD(buf, full - 40, CANOPY_ERR_FORMAT, "truncated: expected 80 bytes of data, found 40");
    BAD(buf, full - 80, CANOPY_ERR_FORMAT, "truncated: expected 80 bytes of data, found 0");

    n = make_npy(buf, 1, 0, good, d, sizeof d);
    buf[5] = 'X';
    BAD(buf, n, CANOPY_ERR_FORMAT, "not a .npy file (bad magic)");
    BAD("a,b\n1,2\n", 8, CANOPY_ERR_FORMAT, "not a .npy file (bad magic)");
    BAD("\x93NU", 3, CANOPY_ERR_FORMAT, "truncated header");

    n = make_npy(buf, 4, 0, good, d, sizeof d);
    BAD(buf, n, CANOPY_ERR_FORMAT, "unsupported .npy format version 4.0");
    n = make_npy(buf, 1, 1, good, d, sizeof d);
    BAD(buf, n, CANOPY_ERR_FORMAT, "unsupported .npy format version 1.1");
    n = make_npy(buf, 0, 0, good, d, sizeof d);
    BAD(buf, n, CANOPY_ERR_FORMAT, "unsupported .npy format version 0.0");

    static const struct {
        const char *dict;
        const char *needle;
    } bad[] = {
        {"", "malformed .npy header (expected '{'"},
        {"[1, 2]", "malformed .npy header (expected '{'"},
        {"{'descr': '<f8' 'fortran_order': False, 'shape': (10,)}", "expected ',' or '}'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (10,)", "expected ',' or '}'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (10,), ", "expected a quoted key"},
        {"{'descr': '<f8, 'fortran_order': False, 'shape': (10,)}", "malformed .npy header"},
        {"{'descr' '<f8', 'fortran_order': False, 'shape': (10,)}", "expected ':'"},
        {"{descr: '<f8', 'fortran_order': False, 'shape': (10,)}", "expected a quoted key"},
        {"{'descr': <f8, 'fortran_order': False, 'shape': (10,)}", "'descr' is not a string"},
        {"{'descr': '<f8', 'fortran_order': false, 'shape': (10,)}", "not True or False"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': 10}", "'shape' is not a tuple"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (10,,)}", "expected an integer"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (10 10)}", "expected ',' or ')'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1e1,)}", "expected ',' or ')'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (10,)} x", "unexpected text"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (10,)}}", "unexpected text"},
        {"{'descr': '<f8', 'fortran_order': False}", "header has no 'shape' key"},
        {"{'descr': '<f8', 'shape': (10,)}", "header has no 'fortran_order' key"},
        {"{'fortran_order': False, 'shape': (10,)}", "header has no 'descr' key"},
        {"{}", "header has no 'descr' key"},
        {"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (10,)}",
         "duplicate key 'descr'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (10,), 'extra': 1}",
         "unexpected key 'extra'"},
        {"{'descr': '<f8', 'fortran_order': True, 'shape': (2, 5), }",
         "Fortran-order arrays are not supported; save with numpy.ascontiguousarray"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (10,), }",
         "unsupported dtype '<c8' (canopy reads float32, float64, int32, int64, uint8)"},
        {"{'descr': '|i1', 'fortran_order': False, 'shape': (10,), }", "unsupported dtype '|i1'"},
        {"{'descr': '<u2', 'fortran_order': False, 'shape': (10,), }", "unsupported dtype '<u2'"},
        {"{'descr': '|f8', 'fortran_order': False, 'shape': (10,), }", "unsupported dtype '|f8'"},
        {"{'descr': '<f8 ', 'fortran_order': False, 'shape': (10,), }", "unsupported dtype"},
        {"{'descr': 'float64', 'fortran_order': False, 'shape': (10,), }", "unsupported dtype"},
        {"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (10,), }",
         "unsupported dtype (a structured dtype"},
        {"{'descr': '>f8', 'fortran_order': False, 'shape': (10,), }",
         "big-endian dtype '>f8' is not supported"},
        {"{'descr': '>i4', 'fortran_order': False, 'shape': (10,), }", "big-endian dtype '>i4'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (-10,), }", "negative dimension"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, -1), }", "negative dimension"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }",
         "absurd dimension"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
         "shape is absurd"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }",
         "shape is absurd"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 10), }",
         "array has 9 dimensions; canopy supports at most 8"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }",
         "truncated: expected 8000000000000 bytes of data, found 80"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (11,), }",
         "truncated: expected 88 bytes of data, found 80"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = make_npy(buf, 1, 0, bad[i].dict, d, sizeof d);
        bad_mem(buf, n, CANOPY_ERR_FORMAT, bad[i].needle, (int)(1000 + i));
    }
    /* A hostile header length (version 2.0, 4 GB) is a truncated header, not an
     * allocation. */
    n = make_npy(buf, 2, 0, good, d, sizeof d);
    memset(buf + 8, 0xff, 4);
    BAD(buf, n, CANOPY_ERR_FORMAT, "truncated header");

    /* The same failures through files: messages name the path. */
    char path[512];
    canopy_array a;
    snprintf(path, sizeof path, "%s", check_tmp_path("cut.npy"));
    spit(path, buf, 0);
    n = make_npy(buf, 1, 0, good, d, sizeof d);
    spit(path, buf, n - 8);
    CHECK_FAILS(canopy_npy_read(path, &a), CANOPY_ERR_FORMAT,
                "truncated: expected 80 bytes of data, found 72");
    CHECK(check_contains(canopy_last_error(), path) && a.data == NULL);
    for (size_t len = 0; len < n; len += 7) {
        spit(path, buf, len);
        canopy_status s = canopy_npy_read(path, &a);
        CHECK_MSG(s == CANOPY_ERR_FORMAT && a.data == NULL &&
                      strncmp(canopy_last_error(), path, strlen(path)) == 0,
                  "file prefix of %zu bytes: %s", len, canopy_last_error());
    }
    n = make_npy(buf, 2, 0, good, d, sizeof d);
    memset(buf + 8, 0xff, 4);
    spit(path, buf, n);
    CHECK_FAILS(canopy_npy_read(path, &a), CANOPY_ERR_FORMAT, "truncated header");
    n = make_npy(buf, 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000,), }",
                 d, sizeof d);
    spit(path, buf, n);
    CHECK_FAILS(canopy_npy_read(path, &a), CANOPY_ERR_FORMAT,
                "truncated: expected 800000000000 bytes of data, found 80");
    buf[0] = 'P';
    spit(path, buf, n);
    CHECK_FAILS(canopy_npy_read(path, &a), CANOPY_ERR_FORMAT, "not a .npy file (bad magic)");

    snprintf(path, sizeof path, "%s", check_tmp_path("missing.npy"));
    char want[600];
    snprintf(want, sizeof want, "cannot open '%s': No such file or directory", path);
    CHECK_FAILS(canopy_npy_read(path, &a), CANOPY_ERR_IO, want);
    CHECK_FAILS(canopy_npy_read(check_tmp_path(""), &a), CANOPY_ERR_IO, "Is a directory");
}

/* ------------------------------------------------------------ atomic writes -- */

static void test_atomic_write(void) {
    canopy_array a;
    int64_t shape[2] = {64, 64};
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F64, 2, shape));
    fill_random(a.data, 64 * 64 * 8, 77);

    /* A missing directory: no file, and the message names the path. */
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s", check_tmp_path("atomic"));
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/no/such/dir/x.npy", dir);
    CHECK_FAILS(canopy_npy_write(path, &a), CANOPY_ERR_IO, "No such file or directory");
    CHECK(check_contains(canopy_last_error(), path));
    CHECK(!exists(path));

    /* The target is a directory: the temporary file is written, the rename fails,
     * and the temporary is removed. */
    snprintf(path, sizeof path, "%s/target.npy", dir);
    mkdir(path, 0700);
    CHECK_FAILS(canopy_npy_write(path, &a), CANOPY_ERR_IO, "target.npy");
    CHECK(tmp_files_in(dir) == 0);
    rmdir(path);

    /* An invalid array writes nothing. */
    canopy_array bad = a;
    bad.dtype = (canopy_dtype)42;
    CHECK_FAILS(canopy_npy_write(path, &bad), CANOPY_ERR_INVALID, "unknown dtype");
    bad = a;
    bad.shape[0] = -1;
    CHECK_FAILS(canopy_npy_write(path, &bad), CANOPY_ERR_INVALID, "invalid shape");
    bad = a;
    bad.data = NULL;
    CHECK_FAILS(canopy_npy_write(path, &bad), CANOPY_ERR_INVALID, "no data");
    CHECK(!exists(path));

    /* A write that fails half way (the file size limit stands in for a full disk)
     * leaves the previous file untouched and no temporary. */
    canopy_array small;
    int64_t one = 3;
    CHECK_OK(canopy_array_alloc(&small, CANOPY_I32, 1, &one));
    memcpy(small.data, (int32_t[]){1, 2, 3}, 12);
    CHECK_OK(canopy_npy_write(path, &small));
    struct rlimit old;
    getrlimit(RLIMIT_FSIZE, &old);
    struct rlimit lim = old;
    lim.rlim_cur = 4096;
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
        CHECK_FAILS(canopy_npy_write(path, &a), CANOPY_ERR_IO, "error writing");
        CHECK(check_contains(canopy_last_error(), "target.npy"));
        setrlimit(RLIMIT_FSIZE, &old);
        CHECK(tmp_files_in(dir) == 0);
        canopy_array back;
        CHECK_OK(canopy_npy_read(path, &back));
        CHECK(same_array(&back, &small));
        canopy_array_release(&back);
    }

    /* Overwriting works, and new files get the usual permissions (umask applies). */
    mode_t mask = umask(022);
    CHECK_OK(canopy_npy_write(path, &a));
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
    umask(mask);
    canopy_array back;
    CHECK_OK(canopy_npy_read(path, &back));
    CHECK(same_array(&back, &a));
    canopy_array_release(&back);
    CHECK(tmp_files_in(dir) == 0);

    /* outfile directly: abort removes the temporary, commit after abort is refused. */
    canopy_outfile o;
    snprintf(path, sizeof path, "%s/aborted.bin", dir);
    CHECK_OK(canopy_outfile_open(&o, path));
    CHECK(o.tmp_path && strncmp(o.tmp_path, path, strlen(path)) == 0 &&
          check_contains(o.tmp_path, ".tmp."));
    CHECK(tmp_files_in(dir) == 1);
    fputs("partial", o.fp);
    canopy_outfile_abort(&o);
    CHECK(tmp_files_in(dir) == 0 && !exists(path));
    CHECK_FAILS(canopy_outfile_commit(&o), CANOPY_ERR_INVALID, "not open");
    canopy_outfile_abort(&o); /* harmless twice */

    canopy_array_release(&small);
    canopy_array_release(&a);
}

/* --------------------------------------------------------- parts of a file -- */

/* canopy_npy_read_part: the parts of every split concatenate to the whole file
 * (empty parts when there are more parts than rows, 1-D and 2-D, every dtype width),
 * and every part of a truncated file fails; canopy_npy_header is the writer's header. */
static void test_parts(void) {
    static const struct {
        int32_t ndim;
        int64_t s0, s1;
    } shapes[] = {{1, 7, 0}, {2, 1001, 3}, {2, 3, 5}, {2, 0, 4}, {1, 1, 0}};
    char path[512];
    snprintf(path, sizeof path, "%s", check_tmp_path("part.npy"));
    uint64_t stream = 77;
    for (int t = CANOPY_F32; t <= CANOPY_U8; t++)
        for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
            canopy_array a;
            int64_t shape[CANOPY_MAX_DIMS] = {shapes[c].s0, shapes[c].s1};
            CHECK_OK(canopy_array_alloc(&a, (canopy_dtype)t, shapes[c].ndim, shape));
            size_t bytes = (size_t)canopy_array_count(&a) * canopy_dtype_size(a.dtype);
            size_t row = shapes[c].s0 ? bytes / (size_t)shapes[c].s0 : 0;
            fill_random(a.data, bytes, stream++);
            CHECK_OK(canopy_npy_write(path, &a));
            for (int parts = 1; parts <= 5; parts++) {
                int64_t next = 0;
                for (int part = 0; part < parts; part++) {
                    canopy_array b;
                    int64_t rows = -1, first = -1;
                    CHECK_OK(canopy_npy_read_part(path, part, parts, &b, &rows, &first));
                    CHECK(rows == shapes[c].s0 && first == next && b.ndim == a.ndim);
                    CHECK(b.ndim < 2 || b.shape[1] == a.shape[1]);
                    CHECK_MSG(
                        b.shape[0] == 0 || !memcmp(b.data, (char *)a.data + (size_t)first * row,
                                                   (size_t)b.shape[0] * row),
                        "part %d of %d, %s case %zu", part, parts, canopy_dtype_name(a.dtype), c);
                    next = first + b.shape[0];
                    canopy_array_release(&b);
                }
                CHECK(next == shapes[c].s0);
            }
            size_t len, hl;
            unsigned char *file = slurp(path, &len), head[CANOPY_NPY_HEADER_MAX];
            CHECK_OK(canopy_npy_header(&a, head, &hl));
            CHECK(file && len == hl + bytes && !memcmp(file, head, hl));
            if (file && bytes > 0) {
                spit(path, file, len - 1); /* the last byte gone: every part sees it */
                for (int part = 0; part < 3; part++) {
                    canopy_array b;
                    int64_t rows, first;
                    CHECK_FAILS(canopy_npy_read_part(path, part, 3, &b, &rows, &first),
                                CANOPY_ERR_FORMAT, "truncated");
                }
            }
            free(file);
            canopy_array_release(&a);
        }
    canopy_array z;
    int64_t rows, first, none[CANOPY_MAX_DIMS] = {0};
    CHECK_OK(canopy_array_alloc(&z, CANOPY_F32, 0, none));
    CHECK_OK(canopy_npy_write(path, &z));
    canopy_array_release(&z);
    CHECK_FAILS(canopy_npy_read_part(path, 0, 2, &z, &rows, &first), CANOPY_ERR_FORMAT, "0-D");
    CHECK_FAILS(canopy_npy_read_part(check_tmp_path("none.npy"), 0, 2, &z, &rows, &first),
                CANOPY_ERR_IO, "none.npy");
    unlink(path);
}

int main(void) {
    check_seed();
    test_round_trip();
    test_numpy_files();
    test_header_variants();
    test_malformed();
    test_atomic_write();
    test_parts();
    return check_finish();
}
