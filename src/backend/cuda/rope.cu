// RoPE in Hugging Face's rotate-half layout, in place on bf16 q or k: one thread per pair
// (i, i + R/2) of the first R dims of a head (R = HD unless the model rotates part of each
// head), or (2i, 2i + 1) for GLM's interleaved layout. The angle is rounded to fp32 before
// cos/sin, as torch and the CPU twin do, cos and sin times the rope's attention factor (as
// transformers scales them: only the rotated dims of q and k carry it), and the rotation runs in fp32 with one rounding to bf16
// (torch rounds cos/sin to bf16 first).
#include <cuda_bf16.h>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

__global__ void rope_kernel(__nv_bfloat16* __restrict__ x, const int64_t* __restrict__ positions, int64_t T,
                            int64_t heads, int64_t HD, int64_t half, const float* __restrict__ inv_freq,
                            const int32_t* __restrict__ table, bool interleaved, float attention_factor) {
  const int64_t n = T * heads * half;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += stride) {
    const int64_t row = p / half;  // t * heads + h
    const int64_t i = p - row * half;
    const int64_t t = row / heads;
    const float* freq = inv_freq + (table ? table[t] : 0) * half;
    const float angle = static_cast<float>(positions[t]) * freq[i];
    float sn, cs;
    sincosf(angle, &sn, &cs);
    cs *= attention_factor;  // YaRN's / LongRoPE's scaling of cos and sin (1 otherwise)
    sn *= attention_factor;
    __nv_bfloat16* pa = x + row * HD + (interleaved ? 2 * i : i);
    __nv_bfloat16* pb = pa + (interleaved ? 1 : half);
    const float x1 = __bfloat162float(*pa);
    const float x2 = __bfloat162float(*pb);
    *pa = __float2bfloat16_rn(x1 * cs - x2 * sn);
    *pb = __float2bfloat16_rn(x2 * cs + x1 * sn);
  }
}

}  // namespace

void rope(__nv_bfloat16* x, const int64_t* positions, int64_t T, int64_t heads, int64_t HD, const float* inv_freq,
          const int32_t* table, cudaStream_t s, int64_t rotary_dim, bool interleaved, float attention_factor) {
  ABL_CHECK(T >= 0 && heads >= 0, "rope: negative extent (T = {}, heads = {})", T, heads);
  ABL_CHECK(HD > 0, "rope: head dim {} must be positive", HD);
  // (HD is the row stride: latent attention rotates R dims at the tail of rows of nope + R or C + R values)
  const int64_t R = rotary_dim > 0 ? rotary_dim : HD;
  ABL_CHECK(R % 2 == 0 && R <= HD, "rope: rotary dims {} must be even and at most the head dim {}", R, HD);
  if (T == 0 || heads == 0) return;
  rope_kernel<<<detail::elementwise_blocks(T * heads * (R / 2)), detail::kElementwiseThreads, 0, s>>>(
      x, positions, T, heads, HD, R / 2, inv_freq, table, interleaved, attention_factor);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
