// SwiGLU out = silu(gate) · up and GeGLU out = gelu_tanh(gate) · up on bf16 activations: both
// products in fp32 and one rounding to bf16 at the end (torch rounds twice, after the activation and
// after the product, so it may differ by one bf16 ulp).
#include <cuda_bf16.h>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

struct Silu {
  __device__ float operator()(float g) const { return g / (1.0f + expf(-g)); }
};
struct GeluTanh {  // torch.nn.functional.gelu(approximate="tanh")
  __device__ float operator()(float g) const {
    return 0.5f * g * (1.0f + tanhf(0.7978845608028654f * (g + 0.044715f * g * g * g)));
  }
};

// No __restrict__: out may alias gate or up (each element is read before it is written).
template <class Act>
__global__ void glu_kernel(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float g = __bfloat162float(gate[i]);
    const float u = __bfloat162float(up[i]);
    out[i] = __float2bfloat16_rn(Act{}(g) * u);
  }
}

template <class Act>
void launch_glu(const char* name, const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out, int64_t n,
                cudaStream_t s) {
  ABL_CHECK(n >= 0, "{}: negative length {}", name, n);
  if (n == 0) return;
  glu_kernel<Act><<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, s>>>(gate, up, out, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void swiglu(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out, int64_t n, cudaStream_t s) {
  launch_glu<Silu>("swiglu", gate, up, out, n, s);
}

void geglu(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out, int64_t n, cudaStream_t s) {
  launch_glu<GeluTanh>("geglu", gate, up, out, n, s);
}

}  // namespace abl::cuda
