// SPDX-License-Identifier: MIT
/* The LET pieces GPU to GPU with NCCL (gravity/let_gpu.h). NCCL is not a build
 * dependency: libnccl.so.2 (or $CANOPY_NCCL_LIBRARY) is opened at run time and the few
 * entry points used are declared here, with NCCL's own types reduced to what they are
 * on the ABI (an opaque communicator pointer, an int result, a 128-byte unique id). */
#include "gravity/let_gpu.h"

#include "gravity/let_gpu_buf.cuh"

#include <dlfcn.h>
#include <new>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

struct nccl_id {
    char internal[GPU_NCCL_ID_BYTES];
};
typedef struct nccl_comm_opaque *nccl_comm_t;
typedef int nccl_result_t; /* 0: ncclSuccess */
enum { NCCL_UINT8 = 1 };   /* ncclUint8 */

struct nccl_api {
    nccl_result_t (*get_unique_id)(nccl_id *);
    nccl_result_t (*comm_init_rank)(nccl_comm_t *, int, nccl_id, int);
    nccl_result_t (*group_start)(void);
    nccl_result_t (*group_end)(void);
    nccl_result_t (*send)(const void *, size_t, int, int, nccl_comm_t, cudaStream_t);
    nccl_result_t (*recv)(void *, size_t, int, int, nccl_comm_t, cudaStream_t);
    nccl_result_t (*comm_destroy)(nccl_comm_t);
    const char *(*error_string)(nccl_result_t);
};

pthread_once_t load_once = PTHREAD_ONCE_INIT;
nccl_api api;
bool loaded;
char why_not[512];

void load_nccl() {
    const char *env = getenv("CANOPY_NCCL_LIBRARY");
    const char *path = env && *env ? env : "libnccl.so.2";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why_not, sizeof why_not, "NCCL (%s) cannot load: %s", path, e ? e : "?");
        return;
    }
    struct {
        const char *name;
        void **slot;
    } syms[] = {{"ncclGetUniqueId", (void **)&api.get_unique_id},
                {"ncclCommInitRank", (void **)&api.comm_init_rank},
                {"ncclGroupStart", (void **)&api.group_start},
                {"ncclGroupEnd", (void **)&api.group_end},
                {"ncclSend", (void **)&api.send},
                {"ncclRecv", (void **)&api.recv},
                {"ncclCommDestroy", (void **)&api.comm_destroy},
                {"ncclGetErrorString", (void **)&api.error_string}};
    for (auto &s : syms) {
        *s.slot = dlsym(h, s.name);
        if (!*s.slot) {
            snprintf(why_not, sizeof why_not, "%s has no %s (NCCL 2.7 or later is needed)", path,
                     s.name);
            dlclose(h);
            return;
        }
    }
    loaded = true; /* never closed: communicators may outlive any caller */
}

canopy_status nccl_check(nccl_result_t r, const char *what) {
    if (r == 0) return CANOPY_OK;
    return canopy_fail(CANOPY_ERR_DEVICE, "NCCL: %s: %s", what, api.error_string(r));
}

} // namespace

struct gpu_nccl {
    nccl_comm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    int nranks = 0, rank = 0;
    let_gpu_buf send, recv;
    ~gpu_nccl() {
        if (comm) api.comm_destroy(comm);
        if (stream) cudaStreamDestroy(stream);
    }
};

extern "C" canopy_status canopy_gpu_nccl_load(void) {
    pthread_once(&load_once, load_nccl);
    return loaded ? CANOPY_OK : canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s", why_not);
}

extern "C" canopy_status canopy_gpu_nccl_unique_id(unsigned char *id) {
    canopy_status s = canopy_gpu_nccl_load();
    if (s) return s;
    nccl_id u;
    memset(&u, 0, sizeof u);
    s = nccl_check(api.get_unique_id(&u), "ncclGetUniqueId");
    if (!s) memcpy(id, u.internal, sizeof u.internal);
    return s;
}

extern "C" canopy_status canopy_gpu_nccl_create(const unsigned char *id, int nranks, int rank,
                                                gpu_nccl **out) {
    *out = nullptr;
    canopy_status s = canopy_gpu_nccl_load();
    if (s) return s;
    setenv("NCCL_NVLS_ENABLE", "0", 0); /* NVLink multicast stays off unless the user asks */
    gpu_nccl *c = new (std::nothrow) gpu_nccl;
    if (!c) return canopy_fail(CANOPY_ERR_NOMEM, "NCCL: out of memory");
    c->nranks = nranks;
    c->rank = rank;
    nccl_id u;
    memcpy(u.internal, id, sizeof u.internal);
    s = canopy_gpu_check(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking),
                         "creating the NCCL stream");
    if (!s) s = nccl_check(api.comm_init_rank(&c->comm, nranks, u, rank), "ncclCommInitRank");
    if (s) {
        delete c;
        return s;
    }
    *out = c;
    return CANOPY_OK;
}

extern "C" void canopy_gpu_nccl_free(gpu_nccl *c) {
    delete c;
}

extern "C" canopy_status canopy_gpu_nccl_alltoallv(gpu_nccl *c, const void *send,
                                                   const int64_t *send_counts,
                                                   const int64_t *recv_counts, char **recv,
                                                   void *heads, size_t head_bytes) {
    int64_t st = 0, rt = 0;
    for (int r = 0; r < c->nranks; r++) {
        st += send_counts[r];
        rt += recv_counts[r];
    }
    canopy_status s = c->send.need((size_t)st, "the pieces sent");
    if (!s) s = c->recv.need((size_t)rt, "the pieces received");
    if (!s && st > 0)
        s = canopy_gpu_check(
            cudaMemcpyAsync(c->send.p, send, (size_t)st, cudaMemcpyHostToDevice, c->stream),
            "uploading the pieces sent");
    if (s) return s;
    s = nccl_check(api.group_start(), "ncclGroupStart");
    int64_t so = 0, ro = 0;
    for (int r = 0; !s && r < c->nranks; r++) {
        if (send_counts[r] > 0)
            s = nccl_check(
                api.send(c->send.p + so, (size_t)send_counts[r], NCCL_UINT8, r, c->comm, c->stream),
                "ncclSend");
        if (!s && recv_counts[r] > 0)
            s = nccl_check(
                api.recv(c->recv.p + ro, (size_t)recv_counts[r], NCCL_UINT8, r, c->comm, c->stream),
                "ncclRecv");
        so += send_counts[r];
        ro += recv_counts[r];
    }
    /* the group is closed even after a failure inside it */
    canopy_status e = nccl_check(api.group_end(), "ncclGroupEnd");
    if (!s) s = e;
    if (!s) s = canopy_gpu_check(cudaStreamSynchronize(c->stream), "the NCCL exchange");
    ro = 0;
    for (int r = 0; !s && r < c->nranks; r++) {
        if (recv_counts[r] >= (int64_t)head_bytes && head_bytes > 0)
            s = canopy_gpu_check(cudaMemcpy((char *)heads + (size_t)r * head_bytes, c->recv.p + ro,
                                            head_bytes, cudaMemcpyDeviceToHost),
                                 "downloading the piece headers");
        ro += recv_counts[r];
    }
    *recv = s ? nullptr : c->recv.p;
    return s;
}
