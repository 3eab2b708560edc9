// Row gather: copies n rows of `width` floats picked by index (e.g. each sequence's last token)
// into a destination with its own row stride, so captures land in their (B, L+1, H) slot directly.
#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

__global__ void gather_rows_kernel(const float* __restrict__ src, const int64_t* __restrict__ rows, int64_t n,
                                   int64_t width, float* __restrict__ dst, int64_t dst_stride) {
  const int64_t total = n * width;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t r = i / width, c = i - r * width;
    dst[r * dst_stride + c] = src[rows[r] * width + c];
  }
}

}  // namespace

void gather_rows(const float* src, const int64_t* rows, int64_t n, int64_t width, float* dst, int64_t dst_stride,
                 cudaStream_t s) {
  ABL_CHECK(n >= 0 && width >= 0 && dst_stride >= width,
            "gather_rows: bad extent (n = {}, width = {}, dst_stride = {})", n, width, dst_stride);
  if (n == 0 || width == 0) return;
  gather_rows_kernel<<<detail::elementwise_blocks(n * width), detail::kElementwiseThreads, 0, s>>>(
      src, rows, n, width, dst, dst_stride);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
