// Elementwise fp32 scale and soft-cap in place: the twins of abl::cpu::scale and abl::cpu::softcap
// (Gemma's embedding normaliser and final-logit soft-capping).
#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

__global__ void scale_kernel(float* x, float f, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) x[i] *= f;
}

__global__ void softcap_kernel(float* x, float cap, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    x[i] = cap * tanhf(x[i] / cap);
  }
}

}  // namespace

void scale(float* x, float s_factor, int64_t n, cudaStream_t s) {
  ABL_CHECK(n >= 0, "scale: negative length {}", n);
  if (n == 0) return;
  scale_kernel<<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, s>>>(x, s_factor, n);
  CUDA_CHECK_LAUNCH();
}

void softcap(float* x, float cap, int64_t n, cudaStream_t s) {
  ABL_CHECK(n >= 0, "softcap: negative length {}", n);
  ABL_CHECK(cap > 0.0f, "softcap: the cap must be positive, got {}", cap);
  if (n == 0) return;
  softcap_kernel<<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, s>>>(x, cap, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
