// Residual add x += y in fp32: the residual stream and the o_proj/down_proj outputs (after the
// ablation epilogue) stay fp32, so nothing is rounded here.
#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

__global__ void add_kernel(float* __restrict__ x, const float* __restrict__ y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) x[i] += y[i];
}

}  // namespace

void add(float* x, const float* y, int64_t n, cudaStream_t s) {
  ABL_CHECK(n >= 0, "add: negative length {}", n);
  if (n == 0) return;
  add_kernel<<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, s>>>(x, y, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
