// Dtype conversions for loading weights (f32/f16 checkpoints → bf16 on the device) and for reading
// activations back. Round to nearest even throughout; f16 → bf16 goes through fp32, which is exact.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

struct F32ToBf16 {
  __device__ __nv_bfloat16 operator()(float x) const { return __float2bfloat16_rn(x); }
};
struct Bf16ToF32 {
  __device__ float operator()(__nv_bfloat16 x) const { return __bfloat162float(x); }
};
struct F16ToBf16 {
  __device__ __nv_bfloat16 operator()(__half x) const { return __float2bfloat16_rn(__half2float(x)); }
};

template <typename In, typename Out, typename Convert>
__global__ void convert_kernel(const In* __restrict__ x, Out* __restrict__ y, int64_t n, Convert convert) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = convert(x[i]);
  }
}

template <typename In, typename Out, typename Convert>
void launch_convert(const char* name, const In* x, Out* y, int64_t n, Convert convert, cudaStream_t s) {
  ABL_CHECK(n >= 0, "{}: negative length {}", name, n);
  if (n == 0) return;
  convert_kernel<<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, s>>>(x, y, n, convert);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void f32_to_bf16(const float* x, __nv_bfloat16* y, int64_t n, cudaStream_t s) {
  launch_convert("f32_to_bf16", x, y, n, F32ToBf16{}, s);
}

void bf16_to_f32(const __nv_bfloat16* x, float* y, int64_t n, cudaStream_t s) {
  launch_convert("bf16_to_f32", x, y, n, Bf16ToF32{}, s);
}

void f16_to_bf16(const __half* x, __nv_bfloat16* y, int64_t n, cudaStream_t s) {
  launch_convert("f16_to_bf16", x, y, n, F16ToBf16{}, s);
}

}  // namespace abl::cuda
