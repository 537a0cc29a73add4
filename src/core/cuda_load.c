/* SPDX-License-Identifier: MIT */
/* Finds and loads the CUDA module on first GPU use, and hands out its slices of GPU
 * entry points (core/cuda_module.h). Looked for, in order: $CANOPY_CUDA_MODULE alone when set;
 * the directory of the object holding this code (libcanopy.so, or the program linked
 * with libcanopy.a); the install's libdir seen from a bindir; the loader's search path. */
#define _GNU_SOURCE /* dladdr */
#include "core/cuda_module.h"
#include "core/device.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CANOPY_CUDA_MODULE_NAME
#define CANOPY_CUDA_MODULE_NAME "libcanopy_cuda.so.0"
#endif
#ifndef CANOPY_CUDA_MODULE_LIBDIR /* the libdir relative to the bindir */
#define CANOPY_CUDA_MODULE_LIBDIR "../lib"
#endif

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const canopy_cuda_module *loaded; /* set once, then read with acquire */
static char module_path[PATH_MAX + 64];
static char why_not[3 * PATH_MAX]; /* room for two directories and a file name */
static int load_attempts;          /* CPU work must leave it 0 (tests/cli_cuda_module.sh) */

static canopy_status host_fail(canopy_status s, const char *message) {
    return canopy_fail(s, "%s", message);
}

static const canopy_cuda_host host = {
    CANOPY_CUDA_MODULE_ABI,
    sizeof(canopy_cuda_host),
    host_fail,
    canopy_alloc,
    canopy_free,
    canopy_now,
    canopy_tree_free,
    canopy_profile_chunk,
    canopy_variant_name,
    canopy_schedule_name,
    canopy_tree_kind_name,
    canopy_graph_strategy_name,
    canopy_ptsd_strategy_name,
    canopy_forest_engine_name,
    canopy_forest_layout_name,
};

/* The directory of the file this code was loaded from, with a trailing '/'. */
static int own_dir(char *dir, size_t len) {
    Dl_info info;
    char path[PATH_MAX];
    const char *file = NULL;
    if (dladdr((void *)own_dir, &info) && info.dli_fname && strchr(info.dli_fname, '/'))
        file = realpath(info.dli_fname, path);
    if (!file) { /* the main program, started through PATH */
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0) return 0;
        path[n] = '\0';
        file = path;
    }
    const char *slash = strrchr(file, '/');
    if ((size_t)(slash - file) + 2 > len) return 0;
    memcpy(dir, file, (size_t)(slash - file) + 1);
    dir[slash - file + 1] = '\0';
    return 1;
}

/* Opens one candidate: 1 loaded, 0 absent (keep looking), -1 present but refused. */
static int try_open(const char *path) {
    if (strchr(path, '/') && access(path, F_OK) != 0) return 0;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        /* by name, the loader reports its own miss with the name first */
        if (!strchr(path, '/') && e && strncmp(e, path, strlen(path)) == 0) return 0;
        snprintf(why_not, sizeof why_not, "the CUDA module %s cannot load: %s", path,
                 e ? e : "unknown error");
        return -1;
    }
    canopy_cuda_module_entry_fn entry;
    *(void **)&entry = dlsym(h, CANOPY_CUDA_MODULE_ENTRY);
    const canopy_cuda_module *m = entry ? entry(&host) : NULL;
    if (!entry) {
        snprintf(why_not, sizeof why_not, "%s is not a canopy CUDA module (no %s)", path,
                 CANOPY_CUDA_MODULE_ENTRY);
    } else if (!m) {
        snprintf(why_not, sizeof why_not,
                 "the CUDA module %s was built for another canopy (it refused this library's "
                 "ABI %d): install the two together",
                 path, CANOPY_CUDA_MODULE_ABI);
    } else if (m->abi != CANOPY_CUDA_MODULE_ABI || m->size != sizeof *m ||
               strcmp(m->version, CANOPY_VERSION_STRING) != 0) {
        snprintf(why_not, sizeof why_not,
                 "the CUDA module %s was built for another canopy (version %s, table ABI %u, "
                 "%u bytes; this library: %s, ABI %d, %zu bytes): install the two together",
                 path, m->abi == CANOPY_CUDA_MODULE_ABI ? m->version : "?", (unsigned)m->abi,
                 (unsigned)m->size, CANOPY_VERSION_STRING, CANOPY_CUDA_MODULE_ABI, sizeof *m);
    } else {
        Dl_info info; /* the file the loader chose, also when found by name */
        char real[PATH_MAX];
        const char *file =
            dladdr(*(void **)&entry, &info) && info.dli_fname ? info.dli_fname : path;
        snprintf(module_path, sizeof module_path, "%s",
                 strchr(file, '/') && realpath(file, real) ? real : file);
        __atomic_store_n(&loaded, m, __ATOMIC_RELEASE);
        return 1; /* never closed: kernels and device memory may outlive any caller */
    }
    dlclose(h);
    return -1;
}

static void load(void) {
    __atomic_store_n(&load_attempts, 1, __ATOMIC_RELEASE);
    const char *env = getenv("CANOPY_CUDA_MODULE");
    if (env && *env) {
        if (try_open(env) == 0)
            snprintf(why_not, sizeof why_not,
                     "the CUDA module %s (CANOPY_CUDA_MODULE) does not exist", env);
        return;
    }
    char dir[PATH_MAX] = "", path[PATH_MAX + 64];
    if (own_dir(dir, sizeof dir)) {
        snprintf(path, sizeof path, "%s%s", dir, CANOPY_CUDA_MODULE_NAME);
        if (try_open(path) != 0) return;
        snprintf(path, sizeof path, "%s%s/%s", dir, CANOPY_CUDA_MODULE_LIBDIR,
                 CANOPY_CUDA_MODULE_NAME);
        if (try_open(path) != 0) return;
    }
    if (try_open(CANOPY_CUDA_MODULE_NAME) != 0) return;
    snprintf(why_not, sizeof why_not,
             "the CUDA module %s is not installed (looked in %s%s%s%s%sthe library search path)",
             CANOPY_CUDA_MODULE_NAME, dir, dir[0] ? ", " : "", dir,
             dir[0] ? CANOPY_CUDA_MODULE_LIBDIR "/" : "", dir[0] ? " and " : "");
}

const canopy_cuda_module *canopy_cuda(void) {
    pthread_once(&load_once, load);
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

int canopy_cuda_load_attempts(void) {
    return __atomic_load_n(&load_attempts, __ATOMIC_ACQUIRE);
}

int canopy_cuda_loaded(void) {
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE) != NULL;
}

const char *canopy_cuda_path(void) {
    return canopy_cuda() ? module_path : "";
}

int canopy_have_cuda(void) {
    return canopy_cuda() != NULL;
}

static pthread_once_t device_once = PTHREAD_ONCE_INIT;
static int device_count;
static char device_why[512];

static void count_devices(void) {
    const canopy_cuda_module *m = canopy_cuda();
    if (m) device_count = m->device_count(device_why, sizeof device_why);
}

int canopy_gpu_usable(void) {
    pthread_once(&device_once, count_devices);
    return device_count > 0;
}

int canopy_gpu_device_count(void) {
    pthread_once(&device_once, count_devices);
    return device_count;
}

const char *canopy_gpu_why_not(void) {
    if (canopy_gpu_usable()) return "";
    return canopy_cuda() ? device_why : why_not;
}

canopy_status canopy_gpu_info(char *name, size_t name_len, size_t *total_bytes) {
    const canopy_cuda_module *m = canopy_cuda();
    if (!m) return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s", why_not);
    return m->gpu_info(name, name_len, total_bytes);
}

/* ----------------------------------------------------------------- slices -- */
const void *canopy_cuda_slice(const char *key, size_t size, const char *signature, int load) {
    const canopy_cuda_module *m = load ? canopy_cuda() : __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
    if (!m) return NULL;
    for (int32_t i = 0; i < m->n_slices; i++) {
        const canopy_cuda_slice_def *sl = &m->slices[i];
        if (strcmp(sl->key, key) == 0)
            return sl->size == size && strcmp(sl->signature, signature) == 0 ? sl->entries : NULL;
    }
    return NULL;
}

canopy_status canopy_cuda_slice_missing(const char *key) {
    if (!canopy_cuda()) return canopy_fail(CANOPY_ERR_UNSUPPORTED, "no GPU backend: %s", why_not);
    return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                       "no GPU backend: the CUDA module %s was built for another canopy (its %s "
                       "entries differ from this library's): install the two together",
                       module_path, key);
}
