// One check family for CUDA, cuBLAS and NCCL calls: a failure throws abl::Error naming the
// statement, file:line and the library's message; the app turns it into one message and
// MPI_Abort (CONVENTIONS 11), so a failing rank never leaves the others hanging.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace abl::cuda {

[[noreturn]] void raise_cuda(cudaError_t e, const char* stmt, const char* file, int line);
[[noreturn]] void raise_cublas(cublasStatus_t s, const char* stmt, const char* file, int line);

}  // namespace abl::cuda

#define CUDA_CHECK(stmt)                                                                   \
  do {                                                                                     \
    const cudaError_t abl_cuda_err_ = (stmt);                                              \
    if (abl_cuda_err_ != cudaSuccess) ::abl::cuda::raise_cuda(abl_cuda_err_, #stmt, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(stmt)                                                                      \
  do {                                                                                          \
    const cublasStatus_t abl_cublas_st_ = (stmt);                                               \
    if (abl_cublas_st_ != CUBLAS_STATUS_SUCCESS) ::abl::cuda::raise_cublas(abl_cublas_st_, #stmt, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, not at the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
