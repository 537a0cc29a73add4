/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include "canopy.h"
#include "gravity/force_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bench_summary bench_summarise(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    bench_summary s = {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v[0], v[n - 1]};
    return s;
}

/* The first line of a command's output, without its newline ("" when it fails). */
static void command_line(const char *cmd, char *out, size_t len) {
    out[0] = '\0';
    FILE *p = popen(cmd, "r");
    if (!p) return;
    if (!fgets(out, (int)len, p)) out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    pclose(p);
}

static void cpu_model(char *out, size_t len) {
    snprintf(out, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(out, len, "%s", colon + 1 + strspn(colon + 1, " \t"));
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    }
    if (f) fclose(f);
}

/* s as the inside of a JSON string (quotes, backslashes and control bytes dropped:
 * names of CPUs, GPUs and commits never need them). */
static void json_clean(char *s) {
    char *w = s;
    for (const char *r = s; *r; r++)
        if (*r != '"' && *r != '\\' && (unsigned char)*r >= 0x20) *w++ = *r;
    *w = '\0';
}

const char *bench_meta_json(void) {
    static char meta[1024];
    if (meta[0]) return meta;
    char commit[128], machine[512], date[32];
    const char *env = getenv("CANOPY_COMMIT");
    if (env && *env)
        snprintf(commit, sizeof commit, "%s", env);
    else
        command_line("git -C '" CANOPY_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null", commit,
                     sizeof commit);
    if (!commit[0]) snprintf(commit, sizeof commit, "unknown");
    env = getenv("CANOPY_MACHINE");
    if (env && *env) {
        snprintf(machine, sizeof machine, "%s", env);
    } else {
        char cpu[200], gpu[200];
        cpu_model(cpu, sizeof cpu);
        int n = (int)sysconf(_SC_NPROCESSORS_ONLN);
        int have_gpu = canopy_gpu_info(gpu, sizeof gpu, NULL) == CANOPY_OK;
        canopy_clear_error();
        snprintf(machine, sizeof machine, "%s, %d CPUs%s%s", cpu, n, have_gpu ? ", " : "",
                 have_gpu ? gpu : "");
    }
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    json_clean(commit);
    json_clean(machine);
    snprintf(meta, sizeof meta, "\"commit\":\"%s\",\"machine\":\"%s\",\"date\":\"%s\"", commit,
             machine, date);
    return meta;
}

bench_errors bench_force_errors(const float *acc, const double *ref, const int64_t *sample,
                                int64_t ns) {
    double *rel = malloc(sizeof(double) * (size_t)(ns > 0 ? ns : 1));
    bench_errors e = {0.0, 0.0};
    if (!rel || ns < 1) {
        free(rel);
        return e;
    }
    e.rms = canopy_nbody_relative_errors(acc, ref, sample, ns, rel);
    e.median = ns % 2 ? rel[ns / 2] : 0.5 * (rel[ns / 2 - 1] + rel[ns / 2]);
    free(rel);
    return e;
}
