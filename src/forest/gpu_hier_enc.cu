/* SPDX-License-Identifier: MIT */
/* GPU hier, encoded topology (Wu Fig. 5.7): the walk through a complete subtree is
 * generated as nested if/else with every slot number a constant, so there is no
 * index arithmetic and no inner loop; node data stay in the hier arrays. The source
 * is specialised to the model (subtree depth, outputs, tree count, whether
 * any node treats zero as missing, the mapping), compiled at run time with NVRTC,
 * loaded with cudaLibraryLoadData, and cached per forest object in memory and,
 * when CANOPY_KERNEL_CACHE names a directory, on disk by a hash of the source. */
#include "forest/gpu_common.cuh"

#include <nvrtc.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A growing text buffer; a failed allocation sticks and is reported once. */
struct cf_text {
    char *s = NULL;
    size_t len = 0, cap = 0;
    bool oom = false;
    void add(const char *fmt, ...) {
        if (oom) return;
        for (;;) {
            va_list ap;
            va_start(ap, fmt);
            int n = vsnprintf(s ? s + len : NULL, s ? cap - len : 0, fmt, ap);
            va_end(ap);
            if (n < 0) {
                oom = true;
                return;
            }
            if (s && len + (size_t)n < cap) {
                len += (size_t)n;
                return;
            }
            size_t c = cap ? cap * 2 : 4096;
            while (c <= len + (size_t)n) c *= 2;
            char *q = (char *)realloc(s, c);
            if (!q) {
                oom = true;
                return;
            }
            s = q;
            cap = c;
        }
    }
};

/* Slot j of a complete subtree: a leaf returns ~leaf (< 0), a bottom slot returns the
 * next subtree (>= 0). */
static void gen_slot(cf_text &T, int32_t j, int32_t bottom, int depth) {
    int ind = 2 * depth + 4;
    T.add("%*sk = __ldg(key + %d);\n%*sif (k < 0) return k;\n", ind, "", j, ind, "");
    T.add("%*sr = CF_GO(x, __ldg(thr + %d), k);\n", ind, "", j);
    if (j < bottom) {
        T.add("%*sif (!r) {\n", ind, "");
        gen_slot(T, 2 * j + 1, bottom, depth + 1);
        T.add("%*s} else {\n", ind, "");
        gen_slot(T, 2 * j + 2, bottom, depth + 1);
        T.add("%*s}\n", ind, "");
    } else {
        T.add("%*sreturn __ldg(conn + %d + r);\n", ind, "", 2 * (j - bottom));
    }
}

canopy_status canopy_cf_gpu_enc_source(const cf_layout *L, canopy_forest_mapping m, char **src) {
    if (L->kind != CANOPY_FOREST_LAYOUT_HIER)
        return canopy_fail(CANOPY_ERR_INTERNAL, "enc needs the hier layout");
    const int32_t D = L->hier_depth, S = (1 << D) - 1, bottom = (1 << (D - 1)) - 1;
    const int32_t K = L->n_outputs, KR = K <= 2 ? K : 0;
    int atomic = m != CANOPY_FOREST_MAPPING_ATOMIC_FREE;
    int zero = 0;
    for (int64_t i = 0; i < L->n_subtrees * S && !zero; i++)
        zero = L->hier_key[i] >= 0 && (L->hier_key[i] & CF_KEY_ZERO);
    cf_text T;
    T.add("/* canopy enc kernel: hier depth %d, %d outputs, %d trees, %s mapping */\n", D, K,
          L->n_trees, atomic ? "atomic" : "atomic-free");
    T.add("#define CF_FEATURE %d\n#define CF_ZERO %d\n#define CF_DL %d\n", CF_KEY_FEATURE,
          CF_KEY_ZERO, CF_KEY_DL);
    T.add("#define CF_NT %d\n#define CF_K %d\n#define CF_CHUNK %d\n#define CF_S %d\n"
          "#define CF_C %d\n",
          L->n_trees, K, (int)CF_GPU_TREE_CHUNK, S, S + 1);
    /* the same comparison as cf_go_right; without zero-as-missing nodes it drops out */
    if (zero)
        T.add("#define CF_MISS(v, k) ((v) != (v) || (((k) & CF_ZERO) && (v) >= -1e-35f && "
              "(v) <= 1e-35f))\n");
    else
        T.add("#define CF_MISS(v, k) ((v) != (v))\n");
    T.add("__device__ __forceinline__ int cf_go(float v, float t, int k) {\n"
          "    return CF_MISS(v, k) ? !(k & CF_DL) : !(v <= t);\n}\n"
          "#define CF_GO(x, t, k) cf_go(__ldg((x) + ((k) & CF_FEATURE)), (t), (k))\n");
    T.add("__device__ __forceinline__ int cf_subtree(const float *x, const float *thr, "
          "const int *key, const int *conn) {\n    int k, r;\n");
    gen_slot(T, 0, bottom, 0);
    T.add("}\n");
    T.add("__device__ __forceinline__ void cf_put(double *p, double v) { %s; }\n",
          atomic ? "atomicAdd(p, v)" : "*p += v");
    T.add("extern \"C\" __global__ void __launch_bounds__(%d) cf_enc(const float *X, long long "
          "n, int d, const int *root, const float *hthr, const int *hkey, const int *hconn, "
          "const int *leaf_out, const long long *leaf_off, const double *values, double "
          "*acc) {\n",
          (int)CF_GPU_BLOCK);
    T.add("    long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
          "    if (r >= n) return;\n");
    if (atomic)
        T.add("    int t0 = blockIdx.y * CF_CHUNK, t1 = min(CF_NT, t0 + CF_CHUNK);\n");
    else
        T.add("    int t0 = 0, t1 = CF_NT;\n");
    T.add("    const float *x = X + r * d;\n    double *row = acc + r * CF_K;\n"
          "    double a0 = 0, a1 = 0;\n    (void)a0; (void)a1;\n"
          "    for (int t = t0; t < t1; t++) {\n"
          "        long long st = __ldg(root + t);\n        int res;\n"
          "        while ((res = cf_subtree(x, hthr + st * CF_S, hkey + st * CF_S, hconn + st * "
          "CF_C)) "
          ">= 0) st = res;\n"
          "        int leaf = ~res, o = __ldg(leaf_out + leaf);\n"
          "        const double *v = values + __ldg(leaf_off + leaf);\n");
    if (KR == 1)
        T.add("        a0 += v[0];\n    }\n    cf_put(row, a0);\n");
    else if (KR == 2)
        T.add("        if (o < 0) { a0 += v[0]; a1 += v[1]; }\n"
              "        else if (o == 0) a0 += v[0];\n        else a1 += v[0];\n    }\n"
              "    cf_put(row, a0);\n    cf_put(row + 1, a1);\n");
    else
        T.add("        if (o >= 0) cf_put(row + o, v[0]);\n"
              "        else for (int k = 0; k < CF_K; k++) cf_put(row + k, v[k]);\n    }\n");
    T.add("}\n");
    if (T.oom) {
        free(T.s);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for the enc kernel source");
    }
    *src = T.s;
    return CANOPY_OK;
}

canopy_status canopy_cf_gpu_nvrtc_compile(const char *src, int cc, void **cubin, size_t *size) {
    *cubin = NULL;
    *size = 0;
    nvrtcProgram prog;
    nvrtcResult e = nvrtcCreateProgram(&prog, src, "canopy_enc.cu", 0, NULL, NULL);
    if (e != NVRTC_SUCCESS)
        return canopy_fail(CANOPY_ERR_DEVICE, "NVRTC: %s", nvrtcGetErrorString(e));
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d", cc);
    /* --fmad=false as for the library's own kernels; -std for min() and constexpr use */
    const char *opts[] = {arch, "--fmad=false", "--std=c++17"};
    e = nvrtcCompileProgram(prog, 3, opts);
    canopy_status s = CANOPY_OK;
    if (e != NVRTC_SUCCESS) {
        size_t n = 0;
        char log[2048] = "";
        if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
            char *full = (char *)malloc(n);
            if (full && nvrtcGetProgramLog(prog, full) == NVRTC_SUCCESS)
                snprintf(log, sizeof log, "%s", full);
            free(full);
        }
        s = canopy_fail(CANOPY_ERR_INTERNAL, "NVRTC could not compile the enc kernel: %s: %s",
                        nvrtcGetErrorString(e), log);
    }
    size_t n = 0;
    if (!s && (e = nvrtcGetCUBINSize(prog, &n)) != NVRTC_SUCCESS)
        s = canopy_fail(CANOPY_ERR_DEVICE, "NVRTC: %s", nvrtcGetErrorString(e));
    if (!s) {
        *cubin = malloc(n ? n : 1);
        if (!*cubin) s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a cubin");
    }
    if (!s && (e = nvrtcGetCUBIN(prog, (char *)*cubin)) != NVRTC_SUCCESS) {
        s = canopy_fail(CANOPY_ERR_DEVICE, "NVRTC: %s", nvrtcGetErrorString(e));
    }
    if (s) {
        free(*cubin);
        *cubin = NULL;
    } else {
        *size = n;
    }
    nvrtcDestroyProgram(&prog);
    return s;
}

/* FNV-1a, 64 bits: names the cache entry of a source (with the architecture). */
static uint64_t fnv1a(const char *s, uint64_t h) {
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The on-disk cache: CANOPY_KERNEL_CACHE=DIR (unset or empty: none). */
static int disk_path(uint64_t h, int cc, char *path, size_t len) {
    const char *dir = getenv("CANOPY_KERNEL_CACHE");
    if (!dir || !*dir) return 0;
    snprintf(path, len, "%s/canopy-enc-%016llx-sm%d.cubin", dir, (unsigned long long)h, cc);
    return 1;
}

static void *disk_load(const char *path, size_t *size) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    void *buf = NULL;
    long n = -1;
    if (fseek(fp, 0, SEEK_END) == 0) n = ftell(fp);
    if (n > 0 && fseek(fp, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n)) != NULL &&
        fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(fp);
    *size = buf ? (size_t)n : 0;
    return buf;
}

/* Best effort (a cache): a temporary name renamed into place, so readers never see
 * half a file; failures only cost a later recompile. */
static void disk_store(const char *path, const void *cubin, size_t size) {
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *fp = fopen(tmp, "wb");
    if (!fp) return;
    int ok = fwrite(cubin, 1, size, fp) == size;
    ok &= fclose(fp) == 0;
    if (!ok || rename(tmp, path) != 0) remove(tmp);
}

canopy_status cf_gpu_enc_kernel(struct cf_gpu_state *S, const cf_layout *L, canopy_forest_mapping m,
                                const void **kernel, double *seconds, int32_t *cache) {
    double t0 = canopy_now();
    int dev = 0, major = 0, minor = 0;
    canopy_status s = canopy_gpu_check(cudaGetDevice(&dev), "cudaGetDevice");
    if (!s)
        s = canopy_gpu_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev),
                          "attribute");
    if (!s)
        s = canopy_gpu_check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev),
                          "attribute");
    char *src = NULL;
    if (!s) s = canopy_cf_gpu_enc_source(L, m, &src);
    if (s) return s;
    int cc = major * 10 + minor;
    int ver[2] = {0, 0};
    nvrtcVersion(&ver[0], &ver[1]);
    char salt[64];
    snprintf(salt, sizeof salt, "sm_%d nvrtc %d.%d", cc, ver[0], ver[1]);
    uint64_t h = fnv1a(src, fnv1a(salt, 1469598103934665603ull));
    if (cf_gpu_state_find_kernel(S, h, kernel)) {
        free(src);
        *cache = 2;
        *seconds = canopy_now() - t0;
        return CANOPY_OK;
    }
    char path[1024];
    int disk = disk_path(h, cc, path, sizeof path);
    size_t size = 0;
    void *cubin = disk ? disk_load(path, &size) : NULL;
    cudaLibrary_t lib = NULL;
    *cache = 3;
    if (cubin && cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0) != cudaSuccess) {
        cudaGetLastError(); /* a stale or foreign file: compile afresh */
        free(cubin);
        cubin = NULL;
        lib = NULL;
    }
    if (!cubin) {
        *cache = 1;
        s = canopy_cf_gpu_nvrtc_compile(src, cc, &cubin, &size);
        if (!s)
            s = canopy_gpu_check(cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0),
                              "loading the enc kernel");
        if (!s && disk) disk_store(path, cubin, size);
    }
    free(src);
    free(cubin);
    cudaKernel_t k = NULL;
    if (!s) s = canopy_gpu_check(cudaLibraryGetKernel(&k, lib, "cf_enc"), "finding the enc kernel");
    if (!s) s = cf_gpu_state_add_kernel(S, h, lib, (const void *)k);
    if (s && lib) cudaLibraryUnload(lib);
    if (!s) *kernel = (const void *)k;
    *seconds = canopy_now() - t0;
    return s;
}

canopy_status cf_gpu_run_enc(const cf_gpu_model &M, const cf_gpu_launch &P) {
    dim3 g = cf_thread_grid(M, P);
    const float *X = P.X;
    long long n = P.n;
    int d = P.d;
    double *acc = P.acc;
    void *args[] = {(void *)&X,          (void *)&n,        (void *)&d,       (void *)&M.root,
                    (void *)&M.hthr,     (void *)&M.hkey,   (void *)&M.hconn, (void *)&M.leaf_out,
                    (void *)&M.leaf_off, (void *)&M.values, (void *)&acc};
    return canopy_gpu_check(cudaLaunchKernel(P.enc_kernel, g, dim3(CF_GPU_BLOCK), args, 0, P.stream),
                         "launching the enc kernel");
}
