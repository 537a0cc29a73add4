/* SPDX-License-Identifier: MIT */
/* .fvecs / .ivecs: round trips, the byte layout, and the errors for empty,
 * truncated and inconsistent files. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char path_buf[512];
static const char *tmp(const char *name) {
    snprintf(path_buf, sizeof path_buf, "%s", check_tmp_path(name));
    return path_buf;
}

/* Writes int32 words to path. */
static void spit_words(const char *path, const int32_t *w, size_t n_bytes) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    if (n_bytes) fwrite(w, 1, n_bytes, f);
    fclose(f);
}

static void test_round_trip(void) {
    canopy_rng r = canopy_rng_make(check_seed(), 0);
    static const int64_t shapes[][2] = {{1, 1}, {5, 3}, {100, 128}, {3, 1000}};
    for (int ext = 0; ext < 2; ext++) {
        const char *path = tmp(ext ? "rt.ivecs" : "rt.fvecs");
        canopy_dtype t = ext ? CANOPY_I32 : CANOPY_F32;
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            canopy_array a, b;
            CHECK_OK(canopy_array_alloc(&a, t, 2, shapes[k]));
            int64_t n = canopy_array_count(&a);
            for (int64_t i = 0; i < n; i++) { /* any bits, NaN payloads included */
                uint32_t w = (uint32_t)canopy_rng_u64(&r);
                memcpy((char *)a.data + 4 * i, &w, 4);
            }
            CHECK_OK(canopy_vecs_write(path, &a));
            struct stat st;
            CHECK(stat(path, &st) == 0 && st.st_size == shapes[k][0] * (4 + 4 * shapes[k][1]));
            CHECK_OK(canopy_vecs_read(path, &b));
            CHECK(b.dtype == t && b.ndim == 2 && b.shape[0] == shapes[k][0] &&
                  b.shape[1] == shapes[k][1]);
            CHECK(b.data && memcmp(a.data, b.data, (size_t)n * 4) == 0);
            canopy_array_release(&b);
            /* canopy_array_load finds the reader by extension. */
            CHECK_OK(canopy_array_load(path, &b));
            CHECK(b.data && b.dtype == t && memcmp(a.data, b.data, (size_t)n * 4) == 0);
            canopy_array_release(&b);
            canopy_array_release(&a);
        }
    }

    /* The layout, byte for byte: dimension, then values, per vector. */
    const char *path = tmp("layout.fvecs");
    canopy_array a;
    int64_t shape[2] = {2, 3};
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F32, 2, shape));
    memcpy(a.data, (float[]){1, 2, 3, 4, 5, 6}, 24);
    CHECK_OK(canopy_vecs_write(path, &a));
    canopy_array_release(&a);
    unsigned char want[32], got[40];
    int32_t d = 3;
    float v1[3] = {1, 2, 3}, v2[3] = {4, 5, 6};
    memcpy(want, &d, 4), memcpy(want + 4, v1, 12), memcpy(want + 16, &d, 4);
    memcpy(want + 20, v2, 12);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(got, 1, sizeof got, f) : 0;
    if (f) fclose(f);
    CHECK(n == 32 && memcmp(got, want, 32) == 0);
}

static void test_errors(void) {
    canopy_array a;
    const char *path = tmp("bad.fvecs");

    spit_words(path, NULL, 0);
    CHECK_FAILS(canopy_vecs_read(path, &a), CANOPY_ERR_FORMAT, "empty file (no vectors)");
    CHECK(strncmp(canopy_last_error(), path, strlen(path)) == 0 && a.data == NULL);

    /* Three vectors of d = 2 cut at every length: each error names the vector. */
    int32_t words[9] = {2, 10, 11, 2, 20, 21, 2, 30, 31};
    spit_words(path, words, sizeof words);
    CHECK_OK(canopy_vecs_read(path, &a));
    CHECK(a.shape[0] == 3 && a.shape[1] == 2);
    canopy_array_release(&a);
    for (size_t len = 1; len < sizeof words; len++) {
        if (len % 12 == 0) continue; /* whole vectors: a valid, shorter file */
        spit_words(path, words, len);
        char want[64];
        snprintf(want, sizeof want, "truncated: vector %zu is incomplete", len / 12);
        canopy_status s = canopy_vecs_read(path, &a);
        CHECK_MSG(s == CANOPY_ERR_FORMAT && check_contains(canopy_last_error(), want) &&
                      a.data == NULL,
                  "%zu bytes: %s", len, canopy_last_error());
    }

    /* A dimension that changes, in the middle or in the leftover bytes. */
    int32_t mixed[10] = {2, 10, 11, 3, 20, 21, 22, 2, 30, 31};
    spit_words(path, mixed, sizeof mixed);
    CHECK_FAILS(canopy_vecs_read(path, &a), CANOPY_ERR_FORMAT,
                "vector 1 has dimension 3, expected 2");
    int32_t tail[8] = {3, 1, 2, 3, 3, 4, 5, 6};
    int32_t tail2[11] = {3, 1, 2, 3, 3, 4, 5, 6, 2, 7, 8};
    spit_words(path, tail, sizeof tail);
    CHECK_OK(canopy_vecs_read(path, &a));
    canopy_array_release(&a);
    spit_words(path, tail2, sizeof tail2);
    CHECK_FAILS(canopy_vecs_read(path, &a), CANOPY_ERR_FORMAT,
                "vector 2 has dimension 2, expected 3");
    int32_t zero[3] = {0, 1, 2}, neg[3] = {-5, 1, 2};
    spit_words(path, zero, sizeof zero);
    CHECK_FAILS(canopy_vecs_read(path, &a), CANOPY_ERR_FORMAT, "vector 0 has dimension 0");
    spit_words(path, neg, sizeof neg);
    CHECK_FAILS(canopy_vecs_read(path, &a), CANOPY_ERR_FORMAT, "vector 0 has dimension -5");
    /* A huge first dimension is a truncated file, not a huge allocation. */
    int32_t huge[3] = {INT32_MAX, 1, 2};
    spit_words(path, huge, sizeof huge);
    CHECK_FAILS(canopy_vecs_read(path, &a), CANOPY_ERR_FORMAT, "vector 0 is incomplete");

    CHECK_FAILS(canopy_vecs_read(tmp("missing.ivecs"), &a), CANOPY_ERR_IO,
                "No such file or directory");
    CHECK_FAILS(canopy_vecs_read(tmp("x.bvecs"), &a), CANOPY_ERR_INVALID,
                "expected a .fvecs or .ivecs file name");

    /* Writing: the dtype must match the extension; vectors are rows of a 2-D array. */
    int64_t shape[2] = {2, 2}, n = 4;
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F64, 2, shape));
    CHECK_FAILS(canopy_vecs_write(tmp("w.fvecs"), &a), CANOPY_ERR_INVALID,
                "needs a float32 array, got float64");
    CHECK_FAILS(canopy_vecs_write(tmp("w.ivecs"), &a), CANOPY_ERR_INVALID,
                "needs a int32 array, got float64");
    CHECK_FAILS(canopy_vecs_write(tmp("w.npy"), &a), CANOPY_ERR_INVALID, "expected a .fvecs");
    canopy_array_release(&a);
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F32, 1, &n));
    CHECK_FAILS(canopy_vecs_write(tmp("w.fvecs"), &a), CANOPY_ERR_INVALID, "2-D");
    canopy_array_release(&a);
    shape[1] = 0;
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F32, 2, shape));
    CHECK_FAILS(canopy_vecs_write(tmp("w.fvecs"), &a), CANOPY_ERR_INVALID, "dimension 0");
    canopy_array_release(&a);
    struct stat st;
    CHECK(stat(tmp("w.fvecs"), &st) != 0);
    shape[1] = 2;
    CHECK_OK(canopy_array_alloc(&a, CANOPY_F32, 2, shape));
    char nodir[600];
    snprintf(nodir, sizeof nodir, "%s/nodir/x.fvecs", check_tmp_path(""));
    CHECK_FAILS(canopy_vecs_write(nodir, &a), CANOPY_ERR_IO, "No such file or directory");
    canopy_array_release(&a);
}

/* The reader over memory gives what the file reader gives, and the same errors. */
static void test_mem(void) {
    const int32_t words[] = {2, 0x3f800000, 0x40000000, 2, 0x40400000, 0x40800000}; /* 1 2, 3 4 */
    canopy_array a;
    CHECK_OK(canopy_vecs_read_mem(words, sizeof words, "m.fvecs", &a));
    CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 2 && a.dtype == CANOPY_F32);
    if (a.data) CHECK(((float *)a.data)[3] == 4.0f);
    canopy_array_release(&a);
    CHECK_OK(canopy_vecs_read_mem(words, sizeof words, "m.ivecs", &a));
    CHECK(a.dtype == CANOPY_I32 && a.shape[0] == 2);
    canopy_array_release(&a);
    CHECK_FAILS(canopy_vecs_read_mem(words, sizeof words - 2, "m.fvecs", &a), CANOPY_ERR_FORMAT,
                "m.fvecs: truncated: vector 1 is incomplete");
    CHECK_FAILS(canopy_vecs_read_mem(words, 0, "m.fvecs", &a), CANOPY_ERR_FORMAT, "empty file");
    const int32_t huge[] = {0x7fffffff, 0};
    CHECK_FAILS(canopy_vecs_read_mem(huge, sizeof huge, "h.fvecs", &a), CANOPY_ERR_FORMAT,
                "vector 0 is incomplete");
    CHECK(a.data == NULL);
}

int main(void) {
    check_seed();
    test_round_trip();
    test_errors();
    test_mem();
    return check_finish();
}
