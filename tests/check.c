/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;

void check_record(int ok, const char *file, int line, const char *fmt, ...) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    if (failed > 50) return; /* one broken loop must not flood the log */
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int check_finish(void) {
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

int check_skip(const char *why) {
    printf("SKIPPED: %s\n", why);
    return 77;
}

int check_gpu(void) {
    char name[256];
    if (canopy_gpu_info(name, sizeof name, NULL) != CANOPY_OK)
        return check_skip(canopy_last_error());
    printf("GPU: %s\n", name);
    return 0;
}

int check_contains(const char *haystack, const char *needle) {
    return haystack && needle && strstr(haystack, needle) != NULL;
}

uint64_t check_seed(void) {
    static uint64_t seed;
    static int have;
    if (!have) {
        const char *env = getenv("CANOPY_TEST_SEED");
        if (env && *env) {
            seed = strtoull(env, NULL, 0);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
        }
        have = 1;
        printf("seed %llu (replay with CANOPY_TEST_SEED=%llu)\n", (unsigned long long)seed,
               (unsigned long long)seed);
    }
    return seed;
}

int check_quick(void) {
    const char *env = getenv("CANOPY_TEST_QUICK");
    return env && *env && strcmp(env, "0") != 0;
}

const char *check_tmp_path(const char *name) {
    static char dir[256];
    static char path[512];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/canopy-test-%d", (int)getpid());
        mkdir(dir, 0700);
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double check_median_rel_error3(const float *acc, const double *ref, int64_t n) {
    double *rel = malloc((size_t)n * sizeof *rel);
    for (int64_t i = 0; i < n; i++) {
        double d2 = 0.0, r2 = 0.0;
        for (int j = 0; j < 3; j++) {
            double e = acc[3 * i + j] - ref[3 * i + j];
            d2 += e * e;
            r2 += ref[3 * i + j] * ref[3 * i + j];
        }
        rel[i] = sqrt(d2 / r2);
    }
    qsort(rel, (size_t)n, sizeof *rel, cmp_double);
    double m = rel[n / 2];
    free(rel);
    return m;
}
