// SwiGLU out = silu(gate) · up, GeGLU out = gelu_tanh(gate) · up and gpt-oss's clamped SwiGLU on bf16
// activations: both
// products in fp32 and one rounding to bf16 at the end (torch rounds twice, after the activation and
// after the product, so it may differ by one bf16 ulp). The ungated MLPs' activations beside them:
// relu² (Nemotron-H, Arcee) and xIELU (Apertus).
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

__global__ void relu_squared_kernel(__nv_bfloat16* x, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float r = fmaxf(__bfloat162float(x[i]), 0.0f);
    x[i] = __float2bfloat16_rn(r * r);
  }
}

__device__ float softplus(float v) { return v > 20.0f ? v : log1pf(expf(v)); }

__device__ float round_bf16(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

// The per-layer factors rounded as transformers' bf16 model has them (XIELUActivation built in the model's dtype:
// softplus and beta + softplus are bf16 ops); the rest in fp32, rounded once.
__global__ void xielu_kernel(__nv_bfloat16* x, int64_t n, XieluParams p) {
  const float beta = *p.beta, eps = *p.eps;
  const float ap = round_bf16(softplus(*p.alpha_p)), an = round_bf16(beta + round_bf16(softplus(*p.alpha_n)));
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = __bfloat162float(x[i]);
    const float y = v > 0.0f ? ap * v * v + beta * v : (expm1f(fminf(v, eps)) - v) * an + beta * v;
    x[i] = __float2bfloat16_rn(y);
  }
}

// gpt-oss's clamped SwiGLU with the gate/up biases of each row's group (GroupBias).
__global__ void swiglu_clamped_kernel(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out,
                                      int64_t rows, int64_t F, float alpha, float limit, GroupBias gb, GroupBias ub) {
  const int64_t n = rows * F;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t r = i / F, f = i % F;
    float g = __bfloat162float(gate[i]);
    float u = __bfloat162float(up[i]);
    if (gb.bias0) g += __bfloat162float(gb.bias0[detail::group_of_row(gb.offsets, gb.groups, r) * gb.stride + f]);
    if (ub.bias0) u += __bfloat162float(ub.bias0[detail::group_of_row(ub.offsets, ub.groups, r) * ub.stride + f]);
    g = fminf(g, limit);
    u = fminf(fmaxf(u, -limit), limit);
    out[i] = __float2bfloat16_rn((u + 1.0f) * (g / (1.0f + expf(-alpha * g))));
  }
}

}  // namespace

void swiglu_clamped(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out, int64_t rows, int64_t F,
                    float alpha, float limit, const GroupBias& gate_bias, const GroupBias& up_bias, cudaStream_t s) {
  ABL_CHECK(rows >= 0 && F >= 0, "swiglu_clamped: negative shape ({}, {})", rows, F);
  for (const GroupBias* b : {&gate_bias, &up_bias}) {
    ABL_CHECK(b->bias0 == nullptr || (b->offsets != nullptr && b->groups > 0),
              "swiglu_clamped: a bias without its {} groups' offsets", b->groups);
  }
  if (rows == 0 || F == 0) return;
  swiglu_clamped_kernel<<<detail::elementwise_blocks(rows * F), detail::kElementwiseThreads, 0, s>>>(
      gate, up, out, rows, F, alpha, limit, gate_bias, up_bias);
  CUDA_CHECK_LAUNCH();
}

void swiglu(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out, int64_t n, cudaStream_t s) {
  launch_glu<Silu>("swiglu", gate, up, out, n, s);
}

void geglu(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out, int64_t n, cudaStream_t s) {
  launch_glu<GeluTanh>("geglu", gate, up, out, n, s);
}

void relu_squared(__nv_bfloat16* x, int64_t n, cudaStream_t s) {
  ABL_CHECK(n >= 0, "relu_squared: negative length {}", n);
  if (n == 0) return;
  relu_squared_kernel<<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, s>>>(x, n);
  CUDA_CHECK_LAUNCH();
}

void xielu(__nv_bfloat16* x, int64_t n, const XieluParams& p, cudaStream_t s) {
  ABL_CHECK(n >= 0, "xielu: negative length {}", n);
  ABL_CHECK(p.present(), "xielu: the layer's alpha_p, alpha_n, beta and eps are required");
  if (n == 0) return;
  xielu_kernel<<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, s>>>(x, n, p);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
