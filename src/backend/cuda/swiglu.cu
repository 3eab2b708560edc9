// SwiGLU out = silu(gate) · up on bf16 activations: both products in fp32 and one rounding to bf16
// at the end (torch rounds twice, after silu and after the product, so it may differ by one bf16 ulp).
#include <cuda_bf16.h>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

// No __restrict__: out may alias gate or up (each element is read before it is written).
__global__ void swiglu_kernel(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float g = __bfloat162float(gate[i]);
    const float u = __bfloat162float(up[i]);
    out[i] = __float2bfloat16_rn(g / (1.0f + expf(-g)) * u);
  }
}

}  // namespace

void swiglu(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out, int64_t n, cudaStream_t s) {
  ABL_CHECK(n >= 0, "swiglu: negative length {}", n);
  if (n == 0) return;
  swiglu_kernel<<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, s>>>(gate, up, out, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
