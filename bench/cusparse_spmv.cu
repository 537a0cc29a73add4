/* SPDX-License-Identifier: MIT */
/* The SpMV peer: cuSPARSE's generic CSR SpMV (32-bit offsets and columns, double: it
 * refuses mixed index widths, and canopy's 64-bit offsets fit 32 bits here) on the
 * same matrix and vector, timed per call after one warm-up, the upload excluded,
 * two ways: between CUDA events around the call (the device's time alone), and on
 * the host from the call until a cudaDeviceSynchronize returns (launch and wait
 * included, as canopy's GPU kernel time is taken). */
#include "canopy.h"

#include <chrono>
#include <cuda_runtime.h>
#include <stdint.h>
#include <cusparse.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" int bench_cusparse_spmv(const canopy_csr *g, const double *x, double *y, int reps,
                                   double *events, double *wall) {
    int32_t *rp = NULL, *rp32 = NULL;
    int32_t *col = NULL;
    double *val = NULL, *dx = NULL, *dy = NULL, *ones = NULL;
    void *work = NULL;
    size_t work_bytes = 0;
    int rc = 1;
    cusparseHandle_t h = NULL;
    cusparseSpMatDescr_t A = NULL;
    cusparseDnVecDescr_t X = NULL, Y = NULL;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const double alpha = 1.0, beta = 0.0;
    size_t nnz = (size_t)g->nnz;
    /* pattern matrices: every entry counts 1 */
    if (g->nnz > INT32_MAX) return 1;
    ones = (double *)malloc(sizeof(double) * (nnz ? nnz : 1));
    rp32 = (int32_t *)malloc(sizeof(int32_t) * (size_t)(g->n_rows + 1));
    for (int64_t i = 0; i <= g->n_rows; i++) rp32[i] = (int32_t)g->row_ptr[i];
    for (size_t k = 0; k < nnz; k++) ones[k] = g->val ? g->val[k] : 1.0;
    if (cudaMalloc(&rp, sizeof(int32_t) * (size_t)(g->n_rows + 1)) ||
        cudaMalloc(&col, sizeof(int32_t) * nnz) || cudaMalloc(&val, sizeof(double) * nnz) ||
        cudaMalloc(&dx, sizeof(double) * (size_t)g->n_cols) ||
        cudaMalloc(&dy, sizeof(double) * (size_t)g->n_rows))
        goto done;
    cudaMemcpy(rp, rp32, sizeof(int32_t) * (size_t)(g->n_rows + 1), cudaMemcpyHostToDevice);
    cudaMemcpy(col, g->col, sizeof(int32_t) * nnz, cudaMemcpyHostToDevice);
    cudaMemcpy(val, ones, sizeof(double) * nnz, cudaMemcpyHostToDevice);
    cudaMemcpy(dx, x, sizeof(double) * (size_t)g->n_cols, cudaMemcpyHostToDevice);
    if (cusparseCreate(&h) ||
        cusparseCreateCsr(&A, g->n_rows, g->n_cols, g->nnz, rp, col, val, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F) ||
        cusparseCreateDnVec(&X, g->n_cols, dx, CUDA_R_64F) ||
        cusparseCreateDnVec(&Y, g->n_rows, dy, CUDA_R_64F) ||
        cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &work_bytes))
        goto done;
    if (cudaMalloc(&work, work_bytes ? work_bytes : 16)) goto done;
    for (int r = -1; r < reps; r++) {
        cudaDeviceSynchronize();
        auto t0 = std::chrono::steady_clock::now();
        cudaEventRecord(e0);
        if (cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_64F,
                         CUSPARSE_SPMV_ALG_DEFAULT, work))
            goto done;
        cudaEventRecord(e1);
        cudaDeviceSynchronize();
        auto t1 = std::chrono::steady_clock::now();
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r >= 0) {
            events[r] = ms * 1e-3;
            wall[r] = std::chrono::duration<double>(t1 - t0).count();
        }
    }
    cudaMemcpy(y, dy, sizeof(double) * (size_t)g->n_rows, cudaMemcpyDeviceToHost);
    rc = cudaGetLastError() != cudaSuccess;
done:
    if (rc) fprintf(stderr, "cuSPARSE SpMV failed\n");
    if (A) cusparseDestroySpMat(A);
    if (X) cusparseDestroyDnVec(X);
    if (Y) cusparseDestroyDnVec(Y);
    if (h) cusparseDestroy(h);
    cudaFree(rp), cudaFree(col), cudaFree(val), cudaFree(dx), cudaFree(dy), cudaFree(work);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    free(ones);
    free(rp32);
    return rc;
}
