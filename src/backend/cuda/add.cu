// Residual add x += y in fp32: the residual stream and the o_proj/down_proj outputs (after the
// ablation epilogue) stay fp32, so nothing is rounded here.
#include <cuda_bf16.h>

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

// x[r, i] += bias[i] of row r's group (every row the same bias when offsets is null).
__global__ void add_bias_kernel(float* __restrict__ x, int64_t rows, int64_t width, const __nv_bfloat16* bias0,
                                int64_t stride, const int64_t* __restrict__ offsets, int64_t groups) {
  const int64_t n = rows * width;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t r = i / width;
    const int64_t e = offsets ? detail::group_of_row(offsets, groups, r) : 0;
    x[i] += __bfloat162float(bias0[e * stride + i % width]);
  }
}

void launch_add_bias(float* x, int64_t rows, int64_t width, const __nv_bfloat16* bias0, int64_t stride,
                     const int64_t* offsets, int64_t groups, cudaStream_t s) {
  ABL_CHECK(rows >= 0 && width >= 0, "add_bias: negative shape ({}, {})", rows, width);
  if (rows == 0 || width == 0 || bias0 == nullptr) return;
  add_bias_kernel<<<detail::elementwise_blocks(rows * width), detail::kElementwiseThreads, 0, s>>>(
      x, rows, width, bias0, stride, offsets, groups);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void add_bias_rows(float* x, const __nv_bfloat16* bias, int64_t rows, int64_t width, cudaStream_t s) {
  launch_add_bias(x, rows, width, bias, 0, nullptr, 1, s);
}

void add_group_bias(float* x, int64_t rows, int64_t width, const GroupBias& bias, cudaStream_t s) {
  ABL_CHECK(bias.bias0 == nullptr || (bias.offsets != nullptr && bias.groups > 0),
            "add_group_bias: a bias without its {} groups' offsets", bias.groups);
  launch_add_bias(x, rows, width, bias.bias0, bias.stride, bias.offsets, bias.groups, s);
}

void add(float* x, const float* y, int64_t n, cudaStream_t s) {
  ABL_CHECK(n >= 0, "add: negative length {}", n);
  if (n == 0) return;
  add_kernel<<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, s>>>(x, y, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
