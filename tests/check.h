/* SPDX-License-Identifier: MIT */
/* Minimal test harness: CHECK records a failure and goes on; a test program calls
 * check_finish() last, which prints "N passed, M failed" and returns the exit code.
 * A test that needs something absent returns check_skip(why) (exit 77, shown as
 * skipped by ctest), never a silent pass. */
#ifndef CANOPY_TEST_CHECK_H
#define CANOPY_TEST_CHECK_H

#include "canopy.h"

#include <stdint.h>
#include <stdio.h>

void check_record(int ok, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
int check_finish(void);
int check_skip(const char *why);
/* GPU tests: 0 after printing the usable GPU's name, else check_skip's 77 with the
 * reason; main returns a non-zero result at once. */
int check_gpu(void);
/* Fresh seed per run unless CANOPY_TEST_SEED is set; printed so a failure can be
 * replayed. */
uint64_t check_seed(void);
/* 1 where CANOPY_TEST_QUICK is set and not "0" (ctest sets it in sanitizer builds, where
 * code runs 3-15x slower): large cases then shrink to the smallest size that still
 * takes the same code paths. */
int check_quick(void);
/* A path in a per-test scratch directory (removed by nothing; under /tmp). */
const char *check_tmp_path(const char *name);
/* Median over n bodies of |acc - ref| / |ref| for (n, 3) accelerations (gravity tests). */
double check_median_rel_error3(const float *acc, const double *ref, int64_t n);

#define CHECK(cond) check_record(!!(cond), __FILE__, __LINE__, "%s", #cond)
#define CHECK_MSG(cond, ...) check_record(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_OK(expr)                                                                             \
    do {                                                                                           \
        canopy_status check_s_ = (expr);                                                           \
        check_record(check_s_ == CANOPY_OK, __FILE__, __LINE__, "%s -> %s: %s", #expr,             \
                     canopy_status_name(check_s_), canopy_last_error());                           \
    } while (0)
/* Expects a failure with status `st` whose message contains `needle`. */
#define CHECK_FAILS(expr, st, needle)                                                              \
    do {                                                                                           \
        canopy_status check_s_ = (expr);                                                           \
        check_record(check_s_ == (st) && check_contains(canopy_last_error(), needle), __FILE__,    \
                     __LINE__, "%s -> %s \"%s\", expected %s containing \"%s\"", #expr,            \
                     canopy_status_name(check_s_), canopy_last_error(), canopy_status_name(st),    \
                     needle);                                                                      \
    } while (0)

int check_contains(const char *haystack, const char *needle);

#endif
