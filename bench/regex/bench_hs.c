/* SPDX-License-Identifier: MIT */
/* In-process timing of Hyperscan (block mode, the whole buffer in one scan; `.`
 * does not match '\n', so matches stay within lines): the count of lines holding a
 * match of any pattern, REPS times. Prints "count ms ms ...". With REPS 0 it is a
 * whole-process peer of `grep -c` (bench/regex/suite.sh): the file is mapped as
 * `canopy grep` maps it, compiled and scanned once.
 * usage: bench_hs FILE REPS PATTERN... */
#define _GNU_SOURCE /* MAP_POPULATE */
#include <hs/hs.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct lines {
    const char *buf;
    unsigned long long len, counted_to; /* end of the last line counted */
    long count;
} lines;

static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *ctx) {
    (void)id, (void)from, (void)flags;
    lines *l = ctx;
    if (to == 0 || to - 1 < l->counted_to) return 0; /* this line is counted already */
    const char *nl = memchr(l->buf + to - 1, '\n', l->len - (to - 1));
    l->counted_to = nl ? (unsigned long long)(nl - l->buf) + 1 : l->len;
    l->count++;
    return 0;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench_hs FILE REPS PATTERN...\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) return 2;
    long len = (long)st.st_size;
    char *buf = mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (buf == MAP_FAILED) return 2;
    close(fd);
    int n = argc - 3;
    unsigned *flags = calloc((size_t)n, sizeof *flags), *ids = calloc((size_t)n, sizeof *ids);
    for (int i = 0; i < n; i++) ids[i] = (unsigned)i;
    hs_database_t *db;
    hs_compile_error_t *err;
    if (hs_compile_multi((const char *const *)argv + 3, flags, ids, (unsigned)n, HS_MODE_BLOCK,
                         NULL, &db, &err) != HS_SUCCESS) {
        fprintf(stderr, "bench_hs: %s\n", err->message);
        return 2;
    }
    hs_scratch_t *scratch = NULL;
    hs_alloc_scratch(db, &scratch);
    int reps = atoi(argv[2]);
    for (int r = -1; r < reps; r++) {
        lines l = {buf, (unsigned long long)len, 0, 0};
        double t0 = now_ms();
        hs_scan(db, buf, (unsigned)len, 0, scratch, on_match, &l);
        double ms = now_ms() - t0;
        if (r < 0)
            printf("%ld", l.count);
        else
            printf(" %.3f", ms);
    }
    printf("\n");
    hs_free_scratch(scratch);
    hs_free_database(db);
    munmap(buf, (size_t)len);
    return 0;
}
