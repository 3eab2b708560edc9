// The messages of the CUDA check family (check.h).
#include "abl/backend/cuda/check.h"

#include "abl/core/error.h"

namespace abl::cuda {

void raise_cuda(cudaError_t e, const char* stmt, const char* file, int line) {
  fail("{} failed: {} ({}) at {}:{}", stmt, cudaGetErrorString(e), cudaGetErrorName(e), file, line);
}

void raise_cublas(cublasStatus_t s, const char* stmt, const char* file, int line) {
  fail("{} failed: {} ({}) at {}:{}", stmt, cublasGetStatusString(s), static_cast<int>(s), file, line);
}

}  // namespace abl::cuda
