/* SPDX-License-Identifier: MIT */
/* The machine's load latencies for the cache model (issue 20): a dependent pointer
 * chase through a random cycle of cache lines in working sets sized for L1, L2, L3
 * and memory gives nanoseconds per load at each level; with AVX-512, the walkers'
 * race (measure_simd_walk) is kept beside them. Measured once per machine (well
 * under a second) and kept in $XDG_CACHE_HOME/canopy (else ~/.cache/canopy), in a
 * file named by a hash of the CPU model and cache sizes, so a different machine
 * sharing the home directory measures its own. CANOPY_CALIBRATE=off uses the built-in
 * latencies (Ren's model as published here before), =redo measures again. */
#define _POSIX_C_SOURCE 200809L
#include "forest/forest.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LINE 64

/* Cache size in bytes of the data/unified cache of `level` on cpu0, 0 if unknown. */
static int64_t cache_bytes(int level) {
    for (int i = 0; i < 8; i++) {
        char path[96], text[32] = {0};
        int lv = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *fp = fopen(path, "r");
        if (!fp) break;
        int got = fscanf(fp, "%d", &lv);
        fclose(fp);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        fp = fopen(path, "r");
        if (!fp) continue;
        got += fscanf(fp, "%31s", text);
        fclose(fp);
        if (got != 2 || lv != level || strcmp(text, "Instruction") == 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        fp = fopen(path, "r");
        if (!fp) continue;
        long long n = 0;
        char unit = 0;
        got = fscanf(fp, "%lld%c", &n, &unit);
        fclose(fp);
        if (got < 1) continue;
        return n * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1);
    }
    return 0;
}

static void cpu_model(char *out, size_t cap) {
    snprintf(out, cap, "unknown cpu");
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (!fp) return;
    char line[256];
    while (fgets(line, sizeof line, fp)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += 1 + (colon[1] == ' ');
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(out, cap, "%s", colon);
            break;
        }
    }
    fclose(fp);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ns per dependent load over a random cycle through `bytes` of lines (Sattolo's
 * shuffle: one cycle through every line, so no short loop stays in a faster level). */
static double chase_ns(int64_t bytes, int64_t steps) {
    int64_t n = bytes / LINE;
    if (n < 2) n = 2;
    uint32_t *perm = malloc((size_t)n * sizeof *perm);
    char *buf = aligned_alloc(LINE, (size_t)n * LINE);
    if (!perm || !buf) {
        free(perm);
        free(buf);
        return 0;
    }
    uint64_t r = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    for (int64_t i = n - 1; i > 0; i--) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        int64_t j = (int64_t)(r % (uint64_t)i);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int64_t i = 0; i < n; i++)
        *(char **)(buf + (size_t)perm[i] * LINE) = buf + (size_t)perm[(i + 1) % n] * LINE;
    free(perm);
    char *p = buf;
    for (int64_t i = 0; i < n; i++) p = *(char **)p; /* warm the level */
    /* short timed chunks, the fastest kept: on a shared machine a longer timing is
     * mostly other processes' time slices */
    double best = 0;
    for (int64_t done = 0; done < steps; done += 2000) {
        double t0 = now();
        for (int i = 0; i < 2000; i++) p = *(char **)p;
        double ns = (now() - t0) * 1e9 / 2000;
        if (done == 0 || ns < best) best = ns;
    }
    /* keep the chase: its result feeds a value the compiler cannot drop */
    if (p == NULL) best = -1;
    free(buf);
    return best;
}

/* Whether the AVX-512 walker runs complete trees faster than the scalar one here: 1 or
 * 0, -1 without AVX-512. Gathers cost ~20 cycles on the AMD EPYC VM and less on the
 * 16-core Xeon, where the all-gather sweep was ahead (bench/results/forests.md); the
 * sweep now gathers nothing on the top levels and walks the rest as the scalar one
 * does, but it is still measured, on 64 depth-8 trees over 2,048 rows with 5 % NaN,
 * the fastest of five runs each. */
static int measure_simd_walk(void) {
    if (canopy_cpu_isa() < CANOPY_ISA_AVX512) return -1;
    enum { TREES = 64, DEPTH = 8, FEATURES = 16, ROWS = 2048 };
    int32_t n = (2 << DEPTH) - 1, inner = (1 << DEPTH) - 1;
    uint64_t rng = 0x2545F4914F6CDD1Dull;
#define NEXT_RANDOM() (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, rng)
    canopy_forest *f = NULL;
    cf_layout L;
    memset(&L, 0, sizeof L);
    float *X = malloc((size_t)ROWS * FEATURES * sizeof *X);
    double *acc = calloc(ROWS, sizeof *acc);
    int result = -1;
    canopy_status s = X && acc ? canopy_cf_forest_new(&f) : CANOPY_ERR_NOMEM;
    if (!s) {
        f->n_features = FEATURES;
        f->n_outputs = 1;
    }
    for (int32_t t = 0; t < TREES && !s; t++) {
        cf_raw_tree r;
        s = canopy_cf_raw_alloc(&r, n, 1);
        for (int32_t i = 0; i < n && !s; i++) {
            r.feature[i] = i < inner ? (int32_t)(NEXT_RANDOM() % FEATURES) : -1;
            r.thr[i] = (double)(NEXT_RANDOM() % 2001) / 1000.0 - 1.0;
            r.left[i] = i < inner ? 2 * i + 1 : -1;
            r.right[i] = i < inner ? 2 * i + 2 : -1;
            r.flags[i] = (uint8_t)(CF_CMP_LT | (NEXT_RANDOM() % 2 ? CF_DEFAULT_LEFT : 0));
            r.value[i] = r.thr[i];
        }
        if (!s) s = canopy_cf_add_raw_tree(f, &r, 0, 0, "calibration");
        canopy_cf_raw_free(&r);
    }
    if (!s) s = canopy_cf_build_linked(f, CANOPY_FOREST_LAYOUT_BF, 0, NULL, &L);
    if (!s) s = canopy_cf_build_sync(f, &L);
    if (!s && L.perf_nodes) {
        for (int64_t i = 0; i < (int64_t)ROWS * FEATURES; i++)
            X[i] = NEXT_RANDOM() % 20 == 0 ? NAN : (float)(NEXT_RANDOM() % 4001) / 1000.0f - 2.0f;
        double best[2] = {0, 0};
        const canopy_isa isa[2] = {CANOPY_ISA_SCALAR, CANOPY_ISA_AVX512};
        for (int rep = 0; rep < 5; rep++)
            for (int k = 0; k < 2; k++) {
                double t0 = now();
                canopy_cf_walk_sync(&L, isa[k], X, FEATURES, 0, ROWS, 0, TREES, acc);
                double dt = now() - t0;
                if (rep == 0 || dt < best[k]) best[k] = dt;
            }
        result = best[1] < best[0];
    }
#undef NEXT_RANDOM
    if (L.nodes) canopy_cf_layout_free(&L);
    canopy_forest_free(f);
    free(X);
    free(acc);
    return result;
}

static void builtin(cf_latencies *lat) {
    /* The model's former cycle counts (T1 = 4, T2 = 14, TM = 200): every forest is
     * taken to miss both caches, as Ren assumes. */
    lat->l1_bytes = lat->l2_bytes = lat->l3_bytes = 0;
    lat->l1 = 4;
    lat->l2 = 18;
    lat->l3 = 218;
    lat->mem = 218;
    lat->simd_walk = -1;
    snprintf(lat->source, sizeof lat->source, "built-in (CANOPY_CALIBRATE=off)");
}

static void measure(cf_latencies *lat) {
    int64_t l1 = lat->l1_bytes > 0 ? lat->l1_bytes : 32 << 10;
    int64_t l2 = lat->l2_bytes > 2 * l1 ? lat->l2_bytes : 16 * l1;
    int64_t l3 = lat->l3_bytes > 2 * l2 ? lat->l3_bytes : 0;
    int64_t mem = 4 * (l3 ? l3 : 4 * l2); /* three quarters of it miss L3 */
    if (mem < (32 << 20)) mem = 32 << 20;
    if (mem > (128 << 20)) mem = 128 << 20;
    lat->l1 = chase_ns(l1 / 2, 200000);
    lat->l2 = chase_ns(l2 / 2, 200000);
    lat->l3 = l3 ? chase_ns(l3 / 2, 100000) : 0;
    lat->mem = chase_ns(mem, 50000);
    if (!l3) lat->l3 = lat->mem;
    lat->simd_walk = measure_simd_walk();
}

static uint64_t fnv1a(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* The directory for per-machine files, created if missing; 0 when there is none. */
static int cache_dir(char *out, size_t cap) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char base[800];
    if (xdg && *xdg)
        snprintf(base, sizeof base, "%s", xdg);
    else if (home && *home)
        snprintf(base, sizeof base, "%s/.cache", home);
    else
        return 0;
    if (mkdir(base, 0755) != 0 && errno != EEXIST) return 0;
    if ((size_t)snprintf(out, cap, "%s/canopy", base) >= cap) return 0;
    return mkdir(out, 0755) == 0 || errno == EEXIST;
}

static int read_file(const char *path, const char *key, cf_latencies *lat) {
    FILE *fp = fopen(path, "r");
    if (!fp) return 0;
    char line[512], got_key[512] = "";
    double v[4] = {0};
    int n = 0, simd = -2;
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "key ", 4) == 0) snprintf(got_key, sizeof got_key, "%s", line + 4);
        n += sscanf(line, "l1_ns %lf", &v[0]) + sscanf(line, "l2_ns %lf", &v[1]) +
             sscanf(line, "l3_ns %lf", &v[2]) + sscanf(line, "mem_ns %lf", &v[3]) +
             sscanf(line, "simd_walk %d", &simd);
    }
    fclose(fp);
    if (n != 5 || strcmp(got_key, key) != 0 || simd < -1 || simd > 1) return 0;
    for (int i = 0; i < 4; i++)
        if (!(v[i] > 0 && v[i] < 1e6)) return 0;
    lat->l1 = v[0], lat->l2 = v[1], lat->l3 = v[2], lat->mem = v[3];
    lat->simd_walk = simd;
    return 1;
}

/* Written to a temporary name and renamed: concurrent first uses never read half a
 * file. */
static void write_file(const char *path, const char *key, const cf_latencies *lat) {
    char tmp[1100];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= sizeof tmp) return;
    FILE *fp = fopen(tmp, "w");
    if (!fp) return;
    fprintf(fp,
            "# canopy cache-model latencies (ns per dependent load); delete to re-measure\n"
            "key %s\nl1_ns %.3f\nl2_ns %.3f\nl3_ns %.3f\nmem_ns %.3f\nsimd_walk %d\n",
            key, lat->l1, lat->l2, lat->l3, lat->mem, lat->simd_walk);
    if (fclose(fp) != 0 || rename(tmp, path) != 0) remove(tmp);
}

void canopy_cf_calibrate(cf_latencies *lat) {
    memset(lat, 0, sizeof *lat);
    lat->l1_bytes = cache_bytes(1);
    lat->l2_bytes = cache_bytes(2);
    lat->l3_bytes = cache_bytes(3);
    const char *mode = getenv("CANOPY_CALIBRATE");
    if (mode && strcmp(mode, "off") == 0) {
        builtin(lat);
        return;
    }
    char cpu[200], key[400], dir[900], path[1000];
    cpu_model(cpu, sizeof cpu);
    /* "walker 2": the SIMD sweep of complete trees changed, so files of the former one
     * (no such tag) are measured again */
    snprintf(key, sizeof key, "%s|L1 %lld|L2 %lld|L3 %lld|walker 2", cpu, (long long)lat->l1_bytes,
             (long long)lat->l2_bytes, (long long)lat->l3_bytes);
    int have_dir = cache_dir(dir, sizeof dir);
    if (have_dir)
        snprintf(path, sizeof path, "%s/latencies-%016llx.txt", dir,
                 (unsigned long long)fnv1a(key));
    int redo = mode && strcmp(mode, "redo") == 0;
    if (have_dir && !redo && read_file(path, key, lat)) {
        snprintf(lat->source, sizeof lat->source, "%s", path);
        return;
    }
    measure(lat);
    if (!(lat->l1 > 0 && lat->l2 > 0 && lat->l3 > 0 && lat->mem > 0)) {
        builtin(lat);
        snprintf(lat->source, sizeof lat->source, "built-in (measurement failed)");
        return;
    }
    if (have_dir) write_file(path, key, lat);
    snprintf(lat->source, sizeof lat->source, "measured now%s%s", have_dir ? ", kept in " : "",
             have_dir ? path : "");
}

const cf_latencies *canopy_cf_machine_latencies(void) {
    static cf_latencies lat;
    static int done;
    /* once per process; the model asks from whichever thread predicts */
#pragma omp critical(canopy_cf_machine_latencies)
    {
        if (!done) canopy_cf_calibrate(&lat);
        done = 1;
    }
    return &lat;
}

void canopy_cache_latencies(double ns[4], const char **source) {
    const cf_latencies *lat = canopy_cf_machine_latencies();
    ns[0] = lat->l1, ns[1] = lat->l2, ns[2] = lat->l3, ns[3] = lat->mem;
    if (source) *source = lat->source;
}
