// Elementwise scale and soft-cap in place: the twins of abl::cpu::scale, abl::cpu::softcap and
// abl::cpu::scale_by_position (Gemma's embedding normaliser and final-logit soft-capping; Ministral 3's
// query scaling).
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

__global__ void scale_by_position_kernel(__nv_bfloat16* x, const int64_t* positions, int64_t T, int64_t width,
                                         float beta, float period, int64_t offset, bool bf16_factor) {
  const int64_t n = T * width, stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    // each operation rounded on its own (no fused multiply-add), as the CPU twin and torch compute it
    float f = __fadd_rn(1.0f, __fmul_rn(beta, logf(1.0f + floorf(static_cast<float>(positions[i / width] + offset) /
                                                                  period))));
    if (bf16_factor) f = __bfloat162float(__float2bfloat16(f));
    x[i] = __float2bfloat16(__bfloat162float(x[i]) * f);
  }
}

}  // namespace

void scale_by_position(__nv_bfloat16* x, const int64_t* positions, int64_t T, int64_t width, float beta,
                       int64_t period, int64_t offset, bool bf16_factor, cudaStream_t s) {
  ABL_CHECK(T >= 0 && width >= 0, "scale_by_position: negative shape ({}, {})", T, width);
  ABL_CHECK(period > 0, "scale_by_position: the period must be positive, got {}", period);
  if (T * width == 0) return;
  scale_by_position_kernel<<<detail::elementwise_blocks(T * width), detail::kElementwiseThreads, 0, s>>>(
      x, positions, T, width, beta, static_cast<float>(period), offset, bf16_factor);
  CUDA_CHECK_LAUNCH();
}

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
