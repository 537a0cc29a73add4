/* SPDX-License-Identifier: MIT */
/* Arrays (allocation, counting, dtype conversion) and loading by extension,
 * including canopy_points_load's shape and value checks. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "io/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path_buf[512];
static const char *tmp(const char *name) {
    snprintf(path_buf, sizeof path_buf, "%s", check_tmp_path(name));
    return path_buf;
}

static void spit(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void test_dtypes_and_alloc(void) {
    CHECK(canopy_dtype_size(CANOPY_F32) == 4 && canopy_dtype_size(CANOPY_F64) == 8);
    CHECK(canopy_dtype_size(CANOPY_I32) == 4 && canopy_dtype_size(CANOPY_I64) == 8);
    CHECK(canopy_dtype_size(CANOPY_U8) == 1 && canopy_dtype_size((canopy_dtype)9) == 0);
    CHECK(strcmp(canopy_dtype_name(CANOPY_F32), "float32") == 0);
    CHECK(strcmp(canopy_dtype_name(CANOPY_F64), "float64") == 0);
    CHECK(strcmp(canopy_dtype_name(CANOPY_I32), "int32") == 0);
    CHECK(strcmp(canopy_dtype_name(CANOPY_I64), "int64") == 0);
    CHECK(strcmp(canopy_dtype_name(CANOPY_U8), "uint8") == 0);

    canopy_array a;
    int64_t shape[CANOPY_MAX_DIMS + 1] = {3, 4, 5, 1, 1, 1, 1, 1, 1};
    CHECK_OK(canopy_array_alloc(&a, CANOPY_I64, 3, shape));
    CHECK(a.data && a.ndim == 3 && a.dtype == CANOPY_I64 && canopy_array_count(&a) == 60);
    CHECK(((uintptr_t)a.data & 63) == 0);
    canopy_array_release(&a);
    CHECK(a.data == NULL && a.ndim == 0);
    canopy_array_release(&a); /* a released (zeroed) array can be released again */
    canopy_array_release(NULL);

    CHECK_OK(canopy_array_alloc(&a, CANOPY_F32, 0, NULL)); /* a scalar */
    CHECK(canopy_array_count(&a) == 1 && a.data);
    canopy_array_release(&a);
    int64_t empty[2] = {0, 7};
    CHECK_OK(canopy_array_alloc(&a, CANOPY_U8, 2, empty));
    CHECK(canopy_array_count(&a) == 0);
    canopy_array_release(&a);

    CHECK_FAILS(canopy_array_alloc(&a, (canopy_dtype)7, 1, shape), CANOPY_ERR_INVALID,
                "unknown dtype");
    CHECK_FAILS(canopy_array_alloc(&a, CANOPY_F32, CANOPY_MAX_DIMS + 1, shape), CANOPY_ERR_INVALID,
                "ndim 9");
    CHECK_FAILS(canopy_array_alloc(&a, CANOPY_F32, -1, shape), CANOPY_ERR_INVALID, "ndim -1");
    int64_t neg[2] = {3, -2};
    CHECK_FAILS(canopy_array_alloc(&a, CANOPY_F32, 2, neg), CANOPY_ERR_INVALID,
                "dimension 1 is negative");
    int64_t huge[3] = {1LL << 31, 1LL << 31, 1LL << 31};
    CHECK_FAILS(canopy_array_alloc(&a, CANOPY_F32, 3, huge), CANOPY_ERR_NOMEM, "too large");
    CHECK(a.data == NULL);

    /* Counting never overflows: a zero anywhere wins, an overflow is -1. */
    canopy_array v = {0};
    v.ndim = 3;
    v.shape[0] = INT64_MAX, v.shape[1] = INT64_MAX, v.shape[2] = 0;
    CHECK(canopy_array_count(&v) == 0);
    v.shape[2] = 2;
    CHECK(canopy_array_count(&v) == -1);
    v.ndim = 99;
    CHECK(canopy_array_count(&v) == -1);
}

/* ------------------------------------------------------------------ convert -- */

static double get(const canopy_array *a, int64_t i) {
    switch (a->dtype) {
    case CANOPY_F32:
        return ((const float *)a->data)[i];
    case CANOPY_F64:
        return ((const double *)a->data)[i];
    case CANOPY_I32:
        return ((const int32_t *)a->data)[i];
    case CANOPY_I64:
        return (double)((const int64_t *)a->data)[i];
    case CANOPY_U8:
        return ((const uint8_t *)a->data)[i];
    }
    return NAN;
}

static void set(canopy_array *a, int64_t i, double x) {
    switch (a->dtype) {
    case CANOPY_F32:
        ((float *)a->data)[i] = (float)x;
        break;
    case CANOPY_F64:
        ((double *)a->data)[i] = x;
        break;
    case CANOPY_I32:
        ((int32_t *)a->data)[i] = (int32_t)x;
        break;
    case CANOPY_I64:
        ((int64_t *)a->data)[i] = (int64_t)x;
        break;
    case CANOPY_U8:
        ((uint8_t *)a->data)[i] = (uint8_t)x;
        break;
    }
}

static void test_convert_all_pairs(void) {
    /* Sizes around the internal block size, values every dtype holds exactly. */
    static const int64_t sizes[] = {0, 1, 7, 2047, 2048, 2049, 10000};
    canopy_rng r = canopy_rng_make(check_seed(), 1);
    for (int from = CANOPY_F32; from <= CANOPY_U8; from++) {
        for (int to = CANOPY_F32; to <= CANOPY_U8; to++) {
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                canopy_array a;
                CHECK_OK(canopy_array_alloc(&a, (canopy_dtype)from, 1, &sizes[k]));
                double *want = malloc((size_t)sizes[k] * sizeof *want + 1);
                for (int64_t i = 0; i < sizes[k]; i++) {
                    want[i] = (double)canopy_rng_below(&r, 256);
                    set(&a, i, want[i]);
                }
                CHECK_OK(canopy_array_convert(&a, (canopy_dtype)to));
                int64_t bad = -1;
                for (int64_t i = 0; i < sizes[k] && bad < 0; i++)
                    if (get(&a, i) != want[i]) bad = i;
                CHECK_MSG(a.dtype == (canopy_dtype)to && a.shape[0] == sizes[k] && bad < 0,
                          "%s -> %s, n = %lld: element %lld wrong",
                          canopy_dtype_name((canopy_dtype)from),
                          canopy_dtype_name((canopy_dtype)to), (long long)sizes[k], (long long)bad);
                free(want);
                canopy_array_release(&a);
            }
        }
    }
}

/* Converts a one-element array holding x from `from` to `to`. */
static canopy_status convert1(canopy_dtype from, double x, canopy_dtype to, double *out) {
    canopy_array a;
    int64_t n = 2;
    canopy_array_alloc(&a, from, 1, &n);
    set(&a, 0, 0);
    set(&a, 1, x);
    canopy_status s = canopy_array_convert(&a, to);
    *out = get(&a, 1);
    /* A failed conversion leaves the array as it was. */
    if (s != CANOPY_OK) CHECK(a.dtype == from && (isnan(x) ? isnan(*out) : *out == x));
    canopy_array_release(&a);
    return s;
}

static void test_convert_limits(void) {
    double y;
    CHECK_OK(convert1(CANOPY_F64, 2147483647.0, CANOPY_I32, &y));
    CHECK(y == 2147483647.0);
    CHECK_OK(convert1(CANOPY_F64, -2147483648.0, CANOPY_I32, &y));
    CHECK(y == -2147483648.0);
    CHECK_FAILS(convert1(CANOPY_F64, 2147483648.0, CANOPY_I32, &y), CANOPY_ERR_INVALID,
                "cannot convert to int32: element 1 (2147483648) is out of range");
    CHECK_FAILS(convert1(CANOPY_F64, -2147483649.0, CANOPY_I32, &y), CANOPY_ERR_INVALID,
                "out of range");
    CHECK_FAILS(convert1(CANOPY_F64, 2.5, CANOPY_I32, &y), CANOPY_ERR_INVALID,
                "element 1 (2.5) is not an integer");
    CHECK_FAILS(convert1(CANOPY_F32, -0.5f, CANOPY_U8, &y), CANOPY_ERR_INVALID,
                "is not an integer");
    CHECK_FAILS(convert1(CANOPY_F64, NAN, CANOPY_I64, &y), CANOPY_ERR_INVALID,
                "cannot convert to int64: element 1 is NaN");
    CHECK_FAILS(convert1(CANOPY_F64, INFINITY, CANOPY_I64, &y), CANOPY_ERR_INVALID, "out of range");
    CHECK_FAILS(convert1(CANOPY_F32, -INFINITY, CANOPY_U8, &y), CANOPY_ERR_INVALID, "out of range");
    CHECK_OK(convert1(CANOPY_F64, -9223372036854775808.0, CANOPY_I64, &y));
    CHECK(y == -9223372036854775808.0);
    CHECK_FAILS(convert1(CANOPY_F64, 9223372036854775808.0, CANOPY_I64, &y), CANOPY_ERR_INVALID,
                "out of range");
    CHECK_OK(convert1(CANOPY_F32, 255.0f, CANOPY_U8, &y));
    CHECK(y == 255);
    CHECK_FAILS(convert1(CANOPY_F64, 256.0, CANOPY_U8, &y), CANOPY_ERR_INVALID,
                "cannot convert to uint8");
    CHECK_OK(convert1(CANOPY_F64, -0.0, CANOPY_I32, &y));
    CHECK(y == 0);

    CHECK_FAILS(convert1(CANOPY_I64, 4294967296.0, CANOPY_I32, &y), CANOPY_ERR_INVALID,
                "element 1 (4294967296) is out of range");
    CHECK_FAILS(convert1(CANOPY_I32, -1, CANOPY_U8, &y), CANOPY_ERR_INVALID,
                "cannot convert to uint8: element 1 (-1) is out of range");
    CHECK_FAILS(convert1(CANOPY_I64, 256, CANOPY_U8, &y), CANOPY_ERR_INVALID, "out of range");
    CHECK_OK(convert1(CANOPY_I64, -2147483648.0, CANOPY_I32, &y));

    /* float64 -> float32: NaN and Inf carry over, finite values beyond float32 fail,
     * values that round to FLT_MAX do not. */
    CHECK_OK(convert1(CANOPY_F64, NAN, CANOPY_F32, &y));
    CHECK(isnan(y));
    CHECK_OK(convert1(CANOPY_F64, -INFINITY, CANOPY_F32, &y));
    CHECK(isinf(y) && y < 0);
    CHECK_OK(convert1(CANOPY_F64, 3.40282347e38, CANOPY_F32, &y));
    CHECK(y == 0x1.fffffep+127);
    CHECK_FAILS(convert1(CANOPY_F64, 1e300, CANOPY_F32, &y), CANOPY_ERR_INVALID,
                "cannot convert to float32: element 1 (1.0000000000000001e+300) is out of "
                "range");
    CHECK_FAILS(convert1(CANOPY_F64, -0x1.ffffffp+127, CANOPY_F32, &y), CANOPY_ERR_INVALID,
                "out of range");
    CHECK_OK(convert1(CANOPY_F64, 1e-300, CANOPY_F32, &y)); /* underflow to 0 is fine */
    CHECK(y == 0);

    canopy_array a = {0};
    CHECK_FAILS(canopy_array_convert(&a, (canopy_dtype)11), CANOPY_ERR_INVALID, "unknown dtype");
    CHECK_FAILS(canopy_array_convert(&a, CANOPY_F64), CANOPY_ERR_INVALID, "no data");
}

/* --------------------------------------------------------------------- load -- */

static void test_load(void) {
    canopy_array a;
    spit(tmp("t.csv"), "1,2\n3,4\n");
    CHECK_OK(canopy_array_load(path_buf, &a));
    CHECK(a.dtype == CANOPY_F64 && a.shape[0] == 2 && a.shape[1] == 2);
    canopy_array_release(&a);
    spit(tmp("T.CSV"), "5\n");
    CHECK_OK(canopy_array_load(path_buf, &a));
    CHECK(a.shape[0] == 1 && ((double *)a.data)[0] == 5);
    canopy_array_release(&a);

    CHECK_FAILS(canopy_array_load("x.txt", &a), CANOPY_ERR_FORMAT,
                "unknown file type 'x.txt' (expected .npy, .csv, .fvecs or .ivecs)");
    CHECK_FAILS(canopy_array_load("noext", &a), CANOPY_ERR_FORMAT, "unknown file type 'noext'");
    CHECK_FAILS(canopy_array_load("d.csv.gz", &a), CANOPY_ERR_FORMAT,
                "d.csv.gz: compressed files are not supported; decompress it first");
    CHECK_FAILS(canopy_array_load("d.npy.xz", &a), CANOPY_ERR_FORMAT, "compressed");
    CHECK_FAILS(canopy_array_load("d.npz", &a), CANOPY_ERR_FORMAT, ".npz archives");
    CHECK_FAILS(canopy_array_load(tmp("nope.npy"), &a), CANOPY_ERR_IO, "No such file or directory");
    CHECK(a.data == NULL);
}

/* Writes a float64 array of the given shape as .npy, with values v(i). */
static const char *npy_of(const char *name, int32_t ndim, const int64_t *shape, canopy_dtype t,
                          double bad_value, int64_t bad_at) {
    canopy_array a;
    canopy_array_alloc(&a, t, ndim, shape);
    int64_t n = canopy_array_count(&a);
    for (int64_t i = 0; i < n; i++) set(&a, i, (double)(i % 50) * 0.5);
    if (bad_at >= 0) set(&a, bad_at, bad_value);
    const char *p = tmp(name);
    CHECK_OK(canopy_npy_write(p, &a));
    canopy_array_release(&a);
    return p;
}

static void test_points_load(void) {
    canopy_array a;
    int64_t s2[2] = {20, 5}, s1[1] = {6}, s3[3] = {2, 2, 2}, s0[2] = {4, 0}, rows0[2] = {0, 3};

    const char *p = npy_of("pts.npy", 2, s2, CANOPY_F64, 0, -1);
    CHECK_OK(canopy_points_load(p, &a));
    CHECK(a.dtype == CANOPY_F32 && a.ndim == 2 && a.shape[0] == 20 && a.shape[1] == 5);
    CHECK(a.data && ((float *)a.data)[99] == (float)(99 % 50) * 0.5f);
    canopy_array_release(&a);

    p = npy_of("line.npy", 1, s1, CANOPY_I32, 0, -1);
    CHECK_OK(canopy_points_load(p, &a));
    CHECK(a.dtype == CANOPY_F32 && a.ndim == 2 && a.shape[0] == 6 && a.shape[1] == 1);
    canopy_array_release(&a);

    p = npy_of("bytes.npy", 2, s2, CANOPY_U8, 0, -1);
    CHECK_OK(canopy_points_load(p, &a));
    CHECK(a.dtype == CANOPY_F32);
    canopy_array_release(&a);

    p = npy_of("none.npy", 2, rows0, CANOPY_F32, 0, -1);
    CHECK_OK(canopy_points_load(p, &a));
    CHECK(a.shape[0] == 0 && a.shape[1] == 3);
    canopy_array_release(&a);

    char want[600];
    p = npy_of("nan.npy", 2, s2, CANOPY_F64, NAN, 17 * 5 + 3);
    snprintf(want, sizeof want, "%s: row 17, column 3 is NaN", p);
    CHECK_FAILS(canopy_points_load(p, &a), CANOPY_ERR_INVALID, want);
    CHECK(a.data == NULL);
    p = npy_of("inf.npy", 2, s2, CANOPY_F32, -INFINITY, 2 * 5 + 0);
    snprintf(want, sizeof want, "%s: row 2, column 0 is infinite", p);
    CHECK_FAILS(canopy_points_load(p, &a), CANOPY_ERR_INVALID, want);
    p = npy_of("big.npy", 2, s2, CANOPY_F64, 1e200, 7);
    snprintf(want, sizeof want, "%s: cannot convert to float32: element 7", p);
    CHECK_FAILS(canopy_points_load(p, &a), CANOPY_ERR_INVALID, want);
    p = npy_of("cube.npy", 3, s3, CANOPY_F32, 0, -1);
    CHECK_FAILS(canopy_points_load(p, &a), CANOPY_ERR_FORMAT, "1-D or 2-D array, not 3-D");
    p = npy_of("flat.npy", 2, s0, CANOPY_F32, 0, -1);
    CHECK_FAILS(canopy_points_load(p, &a), CANOPY_ERR_FORMAT, "0 columns");
    p = npy_of("scalar.npy", 0, s1, CANOPY_F32, 0, -1);
    CHECK_FAILS(canopy_points_load(p, &a), CANOPY_ERR_FORMAT, "not 0-D");
    CHECK(a.data == NULL);

    /* CSV with a header, and NaN spelled out (CSV reads it; points reject it). */
    spit(tmp("pts.csv"), "x,y\n1,2\n3,4\n");
    CHECK_OK(canopy_points_load(path_buf, &a));
    CHECK(a.dtype == CANOPY_F32 && a.shape[0] == 2 && ((float *)a.data)[3] == 4);
    canopy_array_release(&a);
    spit(tmp("nan.csv"), "x,y\n1,2\n3,nan\n");
    CHECK_FAILS(canopy_points_load(path_buf, &a), CANOPY_ERR_INVALID, "row 1, column 1 is NaN");
    CHECK_FAILS(canopy_points_load("pts.txt", &a), CANOPY_ERR_FORMAT, "unknown file type");
}

static char *slurp_text(const char *path) {
    static char buf[64];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Files in the test folder whose name contains ".tmp." (temporaries or backups). */
static int leftovers(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c '\\.tmp\\.'", check_tmp_path(""));
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p && fscanf(p, "%d", &n) != 1) n = -1;
    if (p) pclose(p);
    return n;
}

/* canopy_outfile_commit_all: the outputs of one run are replaced all or none (issue
 * 35, row 4): a rename that fails half way puts back the targets already replaced. */
static void test_commit_all(void) {
    char a[512], b[512];
    snprintf(a, sizeof a, "%s", check_tmp_path("set_a.txt"));
    snprintf(b, sizeof b, "%s", check_tmp_path("set_b.txt"));
    spit(a, "OLD A");
    spit(b, "OLD B");
    canopy_outfile o[2];
    CHECK_OK(canopy_outfile_open(&o[0], a));
    CHECK_OK(canopy_outfile_open(&o[1], b));
    fputs("NEW A", (FILE *)o[0].fp);
    fputs("NEW B", (FILE *)o[1].fp);
    CHECK_OK(canopy_outfile_commit_all(o, 2));
    CHECK(!strcmp(slurp_text(a), "NEW A") && !strcmp(slurp_text(b), "NEW B"));
    CHECK_MSG(leftovers() == 0, "no temporaries after a commit");

    /* the second target turns into a folder after its temporary was written: its
     * rename fails after the first one replaced a */
    spit(a, "OLD A");
    char c[512];
    snprintf(c, sizeof c, "%s", check_tmp_path("set_c"));
    CHECK_OK(canopy_outfile_open(&o[0], a));
    CHECK_OK(canopy_outfile_open(&o[1], c));
    fputs("NEW A", (FILE *)o[0].fp);
    fputs("NEW C", (FILE *)o[1].fp);
    CHECK(mkdir(c, 0700) == 0);
    char inside[600];
    snprintf(inside, sizeof inside, "%s/x", c);
    spit(inside, "x"); /* not empty: no rename may replace it */
    CHECK_FAILS(canopy_outfile_commit_all(o, 2), CANOPY_ERR_IO,
                "no output of this run was replaced");
    CHECK_MSG(!strcmp(slurp_text(a), "OLD A"), "a failed set replaced '%s': now '%s'", a,
              slurp_text(a));
    CHECK_MSG(leftovers() == 0, "no temporaries or backups after a failed commit");
    remove(inside);
    rmdir(c);

    /* a target that did not exist is removed again */
    remove(a);
    CHECK_OK(canopy_outfile_open(&o[0], a));
    CHECK_OK(canopy_outfile_open(&o[1], c));
    CHECK(mkdir(c, 0700) == 0);
    spit(inside, "x");
    CHECK_FAILS(canopy_outfile_commit_all(o, 2), CANOPY_ERR_IO, "cannot replace");
    FILE *f = fopen(a, "rb");
    CHECK_MSG(!f, "a failed set left the new '%s'", a);
    if (f) fclose(f);
    remove(inside);
    rmdir(c);
    CHECK_MSG(leftovers() == 0, "no temporaries after a failed commit");
}

/* One output over an existing target: the target's other names (a hard link) keep the
 * old file, a symbolic link is replaced rather than written through, as rename does. */
static void test_commit_replaces(void) {
    char a[512], hard[512], soft[512], text[64];
    snprintf(a, sizeof a, "%s", check_tmp_path("one_a.txt"));
    snprintf(hard, sizeof hard, "%s", check_tmp_path("one_hard.txt"));
    snprintf(soft, sizeof soft, "%s", check_tmp_path("one_soft.txt"));
    remove(a);
    remove(hard);
    remove(soft);
    canopy_outfile o;
    for (int round = 0; round < 3; round++) { /* none there, then old twice */
        CHECK_OK(canopy_outfile_open(&o, a));
        snprintf(text, sizeof text, "NEW %d", round);
        fputs(text, (FILE *)o.fp);
        if (round == 1) CHECK(link(a, hard) == 0);
        CHECK_OK(canopy_outfile_commit(&o));
        CHECK_MSG(!strcmp(slurp_text(a), text), "round %d: '%s'", round, slurp_text(a));
    }
    CHECK(!strcmp(slurp_text(hard), "NEW 0"));
    CHECK(symlink(hard, soft) == 0);
    CHECK_OK(canopy_outfile_open(&o, soft));
    fputs("NEW S", (FILE *)o.fp);
    CHECK_OK(canopy_outfile_commit(&o));
    struct stat st;
    CHECK(lstat(soft, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(!strcmp(slurp_text(soft), "NEW S") && !strcmp(slurp_text(hard), "NEW 0"));
    /* a target that became a folder after open is refused, the folder left as it was */
    remove(soft);
    CHECK_OK(canopy_outfile_open(&o, soft));
    fputs("NEW S", (FILE *)o.fp);
    CHECK(mkdir(soft, 0700) == 0);
    CHECK_FAILS(canopy_outfile_commit(&o), CANOPY_ERR_IO, "cannot replace");
    CHECK(lstat(soft, &st) == 0 && S_ISDIR(st.st_mode));
    rmdir(soft);
    remove(a);
    remove(hard);
    CHECK_MSG(leftovers() == 0, "no temporaries or old files after the commits");
}

int main(void) {
    check_seed();
    for (int exchange = 1; exchange >= 0; exchange--) { /* renameat2, then plain rename */
        canopy_outfile_use_exchange(exchange);
        test_commit_all();
        test_commit_replaces();
    }
    canopy_outfile_use_exchange(1);
    test_dtypes_and_alloc();
    test_convert_all_pairs();
    test_convert_limits();
    test_load();
    test_points_load();
    return check_finish();
}
