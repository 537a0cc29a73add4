/* SPDX-License-Identifier: MIT */
/* In-process timing of canopy_regex_match on a file: the count of lines matching
 * any of the patterns, REPS times. Prints "count ms ms ...".
 * usage: bench_canopy FILE ENGINE REPS PATTERN... */
#include "canopy.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: bench_canopy FILE ENGINE REPS PATTERN...\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) return 2;
    fclose(f);
    canopy_regex_match_options o = {CANOPY_REGEX_ENGINE_AUTO, 0};
    canopy_regex *re = NULL;
    if (canopy_regex_engine_parse(argv[2], &o.engine) ||
        canopy_regex_compile((const char *const *)argv + 4, NULL, argc - 4, 0, &re)) {
        fprintf(stderr, "bench_canopy: %s\n", canopy_last_error());
        return 2;
    }
    int reps = atoi(argv[3]);
    canopy_regex_result r;
    canopy_regex_match(re, buf, (size_t)len, &o, NULL, NULL, &r); /* warm-up */
    printf("%lld", (long long)r.selected);
    for (int i = 0; i < reps; i++) {
        double t0 = canopy_now();
        canopy_regex_match(re, buf, (size_t)len, &o, NULL, NULL, &r);
        printf(" %.3f", (canopy_now() - t0) * 1e3);
    }
    printf("\n");
    canopy_regex_free(re);
    free(buf);
    return 0;
}
