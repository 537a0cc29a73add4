/* SPDX-License-Identifier: MIT */
/* CSV reading and writing: round trips of every dtype, the exact text written,
 * header detection, whitespace and line-ending tolerance, and the messages for
 * ragged rows, empty fields, bad numbers and misplaced blank lines. */
#define _XOPEN_SOURCE 700
#include "check.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void spit(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* Reads text as "t.csv"; checks the shape and values (NAN matches NaN). */
#define GOOD(text, rows, cols, ...) good(text, rows, cols, (const double[]){__VA_ARGS__}, __LINE__)
static void good(const char *text, int64_t rows, int64_t cols, const double *want, int line) {
    canopy_array a;
    canopy_status s = canopy_csv_read_mem(text, strlen(text), "t.csv", &a);
    int ok = s == CANOPY_OK && a.dtype == CANOPY_F64 && a.ndim == 2 && a.shape[0] == rows &&
             a.shape[1] == cols;
    for (int64_t i = 0; ok && i < rows * cols; i++) {
        double x = ((const double *)a.data)[i];
        ok = isnan(want[i]) ? isnan(x) : x == want[i];
    }
    check_record(ok, __FILE__, line, "reading \"%s\": %s %s", text, canopy_status_name(s),
                 canopy_last_error());
    canopy_array_release(&a);
}

/* Expects reading text as "t.csv" to fail with a format error containing needle. */
#define BAD(text, needle) bad(text, needle, __LINE__)
static void bad(const char *text, const char *needle, int line) {
    canopy_array a;
    canopy_status s = canopy_csv_read_mem(text, strlen(text), "t.csv", &a);
    const char *msg = canopy_last_error();
    check_record(s == CANOPY_ERR_FORMAT && strncmp(msg, "t.csv: ", 7) == 0 && strstr(msg, needle) &&
                     a.data == NULL,
                 __FILE__, line, "reading \"%s\": got %s \"%s\", expected \"%s\"", text,
                 canopy_status_name(s), msg, needle);
}

static void test_read(void) {
    GOOD("1,2\n3,4\n", 2, 2, 1, 2, 3, 4);
    GOOD("1,2\n3,4", 2, 2, 1, 2, 3, 4);
    GOOD("1,2\r\n3,4\r\n", 2, 2, 1, 2, 3, 4);
    GOOD(" 1 ,\t2 \r\n  3,4  ", 2, 2, 1, 2, 3, 4);
    GOOD("7", 1, 1, 7);
    GOOD("7\n8\n9\n", 3, 1, 7, 8, 9);
    GOOD("1e5,-3.5E-2,+4,.5,5.,-0", 1, 6, 1e5, -3.5e-2, 4, .5, 5., -0.0);
    GOOD("0.1,1e-320,1e999,-1e999", 1, 4, 0.1, 1e-320, INFINITY, -INFINITY);
    GOOD("nan,NaN,inf,-inf,Infinity", 1, 5, NAN, NAN, INFINITY, -INFINITY, INFINITY);
    GOOD("1,2\n3,4\n\n\n  \n", 2, 2, 1, 2, 3, 4); /* blank lines may end the file */
    GOOD("\xEF\xBB\xBF"
         "1,2\n",
         1, 2, 1, 2); /* UTF-8 byte order mark */

    /* Header detection: any non-empty field that is not a number. */
    GOOD("x,y\n1,2\n3,4\n", 2, 2, 1, 2, 3, 4);
    GOOD(",a,b\n0,1.5,2\n1,3,4\n", 2, 3, 0, 1.5, 2, 1, 3, 4); /* pandas' index column */
    GOOD("id,1,2\n5,6,7\n", 1, 3, 5, 6, 7);
    GOOD("a,b,c\n", 0, 3, 0);
    GOOD("a,b,c\r\n\r\n", 0, 3, 0);
    GOOD("\"x\",\"y\"\r\n1,2\r\n", 1, 2, 1, 2);
    GOOD("nan,inf\n1,2\n", 2, 2, NAN, INFINITY, 1, 2); /* numbers, so not a header */

    BAD("", "t.csv: empty CSV");
    BAD("\n \r\n\t\n", "empty CSV");
    BAD("1,2\n3\n", "line 2 has 1 fields, expected 2");
    BAD("1,2\n3,4\n5,6,7\n", "line 3 has 3 fields, expected 2");
    BAD("a,b,c,d\n1,2,3,4\n1,2,3,4\n1,2,3\n", "line 4 has 3 fields, expected 4");
    BAD("a,b\n1,2\n3,4\n5,6\n7,8\n9,10\n11,12\n1,2,3\n", "line 8 has 3 fields, expected 2");
    BAD("1,2\n3,abc\n", "line 2, field 2: 'abc' is not a number");
    BAD("a,b,c\n1,2,3\n4,5,x7\n", "line 3, field 3: 'x7' is not a number");
    BAD("1,2\n3,4x\n", "line 2, field 2: '4x' is not a number");
    BAD("1,2\n3,4 5\n", "line 2, field 2: '4 5' is not a number");
    BAD("1,2\n3,0x\n", "'0x' is not a number");
    BAD("1,,3\n", "line 1, field 2 is empty");
    BAD("a,b\n1, \n", "line 2, field 2 is empty");
    BAD("1,2,\n", "line 1, field 3 is empty");
    BAD("1\n\n2\n", "line 2 is blank");
    BAD("a\n1\n \n2\n", "line 3 is blank");
    BAD("\n1,2\n", "line 1 is blank");
    BAD("1,2\n3,\x01\n", "line 2, field 2: '?' is not a number");

    /* The buffer need not be terminated where it ends. */
    canopy_array a;
    CHECK_OK(canopy_csv_read_mem("1,23", 3, "cut", &a));
    CHECK(a.shape[0] == 1 && a.shape[1] == 2 && ((double *)a.data)[1] == 2);
    canopy_array_release(&a);
    CHECK_FAILS(canopy_csv_read_mem(NULL, 0, NULL, &a), CANOPY_ERR_FORMAT, "<memory>: empty CSV");

    /* From a file: the message names the path. */
    char path[512];
    snprintf(path, sizeof path, "%s", check_tmp_path("in.csv"));
    spit(path, "a,b\n1,2\n3,z\n");
    CHECK_FAILS(canopy_csv_read(path, &a), CANOPY_ERR_FORMAT, "line 3, field 2: 'z'");
    CHECK(strncmp(canopy_last_error(), path, strlen(path)) == 0);
    spit(path, "a,b\n1,2\n3,4\n");
    CHECK_OK(canopy_csv_read(path, &a));
    CHECK(a.shape[0] == 2 && a.shape[1] == 2 && ((double *)a.data)[3] == 4);
    canopy_array_release(&a);
    snprintf(path, sizeof path, "%s", check_tmp_path("missing.csv"));
    CHECK_FAILS(canopy_csv_read(path, &a), CANOPY_ERR_IO, "No such file or directory");
    CHECK(check_contains(canopy_last_error(), "cannot open '"));
}

/* ---------------------------------------------------------------- writing -- */

static void write_and_compare(const canopy_array *a, const char *header, const char *want,
                              int line) {
    char path[512];
    snprintf(path, sizeof path, "%s", check_tmp_path("w.csv"));
    canopy_status s = canopy_csv_write(path, a, header);
    char *text = slurp(path);
    check_record(s == CANOPY_OK && text && strcmp(text, want) == 0, __FILE__, line,
                 "wrote \"%s\", expected \"%s\" (%s)", text ? text : "(none)", want,
                 canopy_last_error());
    free(text);
    remove(path);
}

static void test_write_text(void) {
    canopy_array a;
    int64_t shape[2] = {2, 3};
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F64, 2, shape));
    memcpy(a.data, (double[]){0.1, 1.0 / 3, 1e300, -0.0, NAN, -INFINITY}, 6 * 8);
    write_and_compare(&a, NULL, "0.1,0.3333333333333333,1e+300\n-0,nan,-inf\n", __LINE__);
    write_and_compare(&a, "a,b,c", "a,b,c\n0.1,0.3333333333333333,1e+300\n-0,nan,-inf\n", __LINE__);
    canopy_array_release(&a);

    CHECK_OK(canopy_array_alloc(&a, CANOPY_F32, 2, shape));
    memcpy(a.data, (float[]){0.1f, 1.0f / 3, 3.4028235e38f, 16777216.0f, 1e-45f, INFINITY}, 6 * 4);
    write_and_compare(&a, NULL, "0.1,0.33333334,3.4028235e+38\n16777216,1.4013e-45,inf\n",
                      __LINE__);
    canopy_array_release(&a);

    int64_t n = 3;
    CHECK_OK(canopy_array_alloc(&a, CANOPY_I64, 1, &n));
    memcpy(a.data, (int64_t[]){INT64_MIN, 0, INT64_MAX}, 3 * 8);
    write_and_compare(&a, "v", "v\n-9223372036854775808\n0\n9223372036854775807\n", __LINE__);
    canopy_array_release(&a);
    CHECK_OK(canopy_array_alloc(&a, CANOPY_I32, 1, &n));
    memcpy(a.data, (int32_t[]){INT32_MIN, -1, INT32_MAX}, 3 * 4);
    write_and_compare(&a, NULL, "-2147483648\n-1\n2147483647\n", __LINE__);
    canopy_array_release(&a);
    CHECK_OK(canopy_array_alloc(&a, CANOPY_U8, 1, &n));
    memcpy(a.data, "\x00\x7f\xff", 3);
    write_and_compare(&a, NULL, "0\n127\n255\n", __LINE__);
    canopy_array_release(&a);

    /* No rows: the header alone, which reads back as (0, cols). */
    int64_t empty[2] = {0, 3};
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F64, 2, empty));
    write_and_compare(&a, "x,y,z", "x,y,z\n", __LINE__);
    char path[512];
    snprintf(path, sizeof path, "%s", check_tmp_path("empty.csv"));
    CHECK_OK(canopy_csv_write(path, &a, "x,y,z"));
    canopy_array b;
    CHECK_OK(canopy_csv_read(path, &b));
    CHECK(b.ndim == 2 && b.shape[0] == 0 && b.shape[1] == 3);
    canopy_array_release(&b);
    canopy_array_release(&a);

    /* Arrays and headers CSV cannot hold. */
    int64_t s3[3] = {2, 2, 2}, s20[2] = {2, 0};
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F64, 3, s3));
    CHECK_FAILS(canopy_csv_write(path, &a, NULL), CANOPY_ERR_INVALID, "1-D or 2-D");
    canopy_array_release(&a);
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F64, 2, s20));
    CHECK_FAILS(canopy_csv_write(path, &a, NULL), CANOPY_ERR_INVALID, "0 columns");
    canopy_array_release(&a);
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F64, 1, &n));
    CHECK_FAILS(canopy_csv_write(path, &a, "a\nb"), CANOPY_ERR_INVALID, "single line");
    snprintf(path, sizeof path, "%s/nodir/x.csv", check_tmp_path(""));
    CHECK_FAILS(canopy_csv_write(path, &a, NULL), CANOPY_ERR_IO, "No such file or directory");
    struct stat st;
    CHECK(stat(path, &st) != 0);
    canopy_array_release(&a);

    /* A write that fails part way (the file size limit stands in for a full disk)
     * fails, and leaves neither the file nor a temporary. */
    int64_t big[2] = {2000, 10};
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F64, 2, big));
    for (int64_t i = 0; i < 20000; i++) ((double *)a.data)[i] = 1.0 / (double)(i + 3);
    snprintf(path, sizeof path, "%s", check_tmp_path("limited.csv"));
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
        CHECK_FAILS(canopy_csv_write(path, &a, NULL), CANOPY_ERR_IO, "error writing");
        setrlimit(RLIMIT_FSIZE, &old);
        CHECK(stat(path, &st) != 0);
        char tmpname[600];
        snprintf(tmpname, sizeof tmpname, "%s", path);
        CHECK(check_contains(canopy_last_error(), tmpname));
    }
    canopy_array_release(&a);
}

/* Random values of every dtype survive write + read exactly (as float64). */
static void test_round_trip(void) {
    canopy_rng r = canopy_rng_make(check_seed(), 0);
    char path[512];
    snprintf(path, sizeof path, "%s", check_tmp_path("rt.csv"));
    for (int t = CANOPY_F32; t <= CANOPY_U8; t++) {
        for (int rep = 0; rep < 4; rep++) {
            int32_t ndim = rep % 2 ? 1 : 2;
            int64_t shape[2] = {1 + (int64_t)canopy_rng_below(&r, 300),
                                1 + (int64_t)canopy_rng_below(&r, 12)};
            canopy_array a, b;
            CHECK_OK(canopy_array_alloc(&a, (canopy_dtype)t, ndim, shape));
            int64_t n = canopy_array_count(&a);
            for (int64_t i = 0; i < n; i++) {
                uint64_t bits = canopy_rng_u64(&r);
                switch (a.dtype) {
                case CANOPY_F32: { /* any bit pattern: subnormals, huge, NaN, Inf */
                    uint32_t b32 = (uint32_t)bits;
                    memcpy((float *)a.data + i, &b32, 4);
                    break;
                }
                case CANOPY_F64:
                    memcpy((double *)a.data + i, &bits, 8);
                    break;
                case CANOPY_I32:
                    ((int32_t *)a.data)[i] = (int32_t)bits;
                    break;
                /* float64 holds integers exactly up to 2^53 */
                case CANOPY_I64:
                    ((int64_t *)a.data)[i] = (int64_t)(bits >> 11) - (1LL << 52);
                    break;
                case CANOPY_U8:
                    ((uint8_t *)a.data)[i] = (uint8_t)bits;
                    break;
                }
            }
            CHECK_OK(canopy_csv_write(path, &a, rep == 2 ? "some,header" : NULL));
            CHECK_OK(canopy_csv_read(path, &b));
            int64_t cols = ndim == 2 ? shape[1] : 1;
            CHECK(b.ndim == 2 && b.shape[0] == shape[0] && b.shape[1] == cols);
            int64_t bad = -1;
            for (int64_t i = 0; b.data && i < n && bad < 0; i++) {
                double x = ((double *)b.data)[i], want;
                switch (a.dtype) {
                case CANOPY_F32: /* compared as float32, the precision it was written in */
                    x = (float)x;
                    want = ((float *)a.data)[i];
                    break;
                case CANOPY_F64:
                    want = ((double *)a.data)[i];
                    break;
                case CANOPY_I32:
                    want = ((int32_t *)a.data)[i];
                    break;
                case CANOPY_I64:
                    want = (double)((int64_t *)a.data)[i];
                    break;
                default:
                    want = ((uint8_t *)a.data)[i];
                    break;
                }
                if (!(isnan(want) ? isnan(x) : x == want && signbit(x) == signbit(want))) bad = i;
            }
            CHECK_MSG(bad < 0, "%s element %lld differs after a CSV round trip",
                      canopy_dtype_name(a.dtype), (long long)bad);
            canopy_array_release(&a);
            canopy_array_release(&b);
        }
    }
}

int main(void) {
    check_seed();
    test_read();
    test_write_text();
    test_round_trip();
    return check_finish();
}
