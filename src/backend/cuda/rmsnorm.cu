// RMSNorm (and Cohere's LayerNorm), one block per row: the residual-stream norm (fp32 rows → bf16
// for the next GEMM), the per-head q/k norm (bf16 rows, in place) and Gemma's post-norms (fp32 rows,
// in place). Sums in fp32; the weight (plus w_offset: Gemma's 1 + w) multiplies after normalising,
// as Hugging Face does, and the result is rounded once to the output type.
#include <cuda_bf16.h>

#include <climits>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

__device__ float to_f32(float x) { return x; }
__device__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ void store(float* p, float v) { *p = v; }
__device__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// No __restrict__ on x and y: they may alias. Every thread reads its own elements of the row before
// block_reduce's barrier and writes the same elements after it, so in-place is safe.
template <typename In, typename Out>
__global__ void rmsnorm_kernel(const In* x, const __nv_bfloat16* __restrict__ w, Out* y, int64_t dim, float eps,
                               float w_offset) {
  const In* xr = x + static_cast<int64_t>(blockIdx.x) * dim;
  Out* yr = y + static_cast<int64_t>(blockIdx.x) * dim;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = to_f32(xr[i]);
    ss += v * v;
  }
  ss = detail::block_reduce(ss, detail::SumOp{}, 0.0f);
  const float inv = rsqrtf(ss / static_cast<float>(dim) + eps);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    if (!w) {  // Llama 4's q/k L2 norm: no weight
      store(yr + i, to_f32(xr[i]) * inv);
    } else if (w_offset == 0.0f) {
      store(yr + i, __bfloat162float(w[i]) * (to_f32(xr[i]) * inv));
    } else {
      store(yr + i, (to_f32(xr[i]) * inv) * (w_offset + __bfloat162float(w[i])));
    }
  }
}

// LayerNorm (Cohere's without bias, b null; Phi-3.5-MoE's with): the row's mean, then the mean square of
// x − mean, both block sums. Row r takes weight row r % w_rows (Command R+'s q/k norm: one weight row per head).
template <typename In, typename Out>
__global__ void layernorm_kernel(const In* x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
                                 Out* y, int64_t dim, float eps, int64_t w_rows) {
  const In* xr = x + static_cast<int64_t>(blockIdx.x) * dim;
  Out* yr = y + static_cast<int64_t>(blockIdx.x) * dim;
  const __nv_bfloat16* wr = w + (static_cast<int64_t>(blockIdx.x) % w_rows) * dim;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) sum += to_f32(xr[i]);
  const float mean = detail::block_reduce(sum, detail::SumOp{}, 0.0f) / static_cast<float>(dim);
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float d = to_f32(xr[i]) - mean;
    ss += d * d;
  }
  const float inv = rsqrtf(detail::block_reduce(ss, detail::SumOp{}, 0.0f) / static_cast<float>(dim) + eps);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float shift = b ? __bfloat162float(b[i]) : 0.0f;
    store(yr + i, __bfloat162float(wr[i]) * ((to_f32(xr[i]) - mean) * inv) + shift);
  }
}

template <typename In, typename Out>
void launch_rmsnorm(const In* x, const __nv_bfloat16* w, Out* y, int64_t rows, int64_t dim, float eps, float w_offset,
                    cudaStream_t s) {
  ABL_CHECK(rows >= 0 && dim >= 0, "rmsnorm: negative extent (rows = {}, dim = {})", rows, dim);
  ABL_CHECK(rows <= INT_MAX, "rmsnorm: {} rows exceed one grid (one block per row)", rows);
  if (rows == 0 || dim == 0) return;
  rmsnorm_kernel<In, Out><<<static_cast<unsigned>(rows), detail::row_threads(dim), 0, s>>>(x, w, y, dim, eps,
                                                                                          w_offset);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void rmsnorm(const float* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows, int64_t dim, float eps,
             float w_offset, cudaStream_t s) {
  launch_rmsnorm(x, w, y, rows, dim, eps, w_offset, s);
}

void rmsnorm(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows, int64_t dim, float eps,
             float w_offset, cudaStream_t s) {
  launch_rmsnorm(x, w, y, rows, dim, eps, w_offset, s);
}

void rmsnorm(const float* x, const __nv_bfloat16* w, float* y, int64_t rows, int64_t dim, float eps, float w_offset,
             cudaStream_t s) {
  launch_rmsnorm(x, w, y, rows, dim, eps, w_offset, s);
}

template <typename In, typename Out>
void launch_layernorm(const In* x, const __nv_bfloat16* w, const __nv_bfloat16* b, Out* y, int64_t rows, int64_t dim,
                      float eps, int64_t w_rows, cudaStream_t s) {
  ABL_CHECK(rows >= 0 && dim >= 0 && w_rows > 0, "layernorm: bad extent (rows = {}, dim = {}, weight rows = {})", rows,
            dim, w_rows);
  ABL_CHECK(rows <= INT_MAX, "layernorm: {} rows exceed one grid (one block per row)", rows);
  if (rows == 0 || dim == 0) return;
  layernorm_kernel<In, Out><<<static_cast<unsigned>(rows), detail::row_threads(dim), 0, s>>>(x, w, b, y, dim, eps,
                                                                                              w_rows);
  CUDA_CHECK_LAUNCH();
}

void layernorm(const float* x, const __nv_bfloat16* w, const __nv_bfloat16* b, __nv_bfloat16* y, int64_t rows,
               int64_t dim, float eps, cudaStream_t s) {
  launch_layernorm(x, w, b, y, rows, dim, eps, 1, s);
}

void layernorm(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows, int64_t dim, float eps,
               int64_t w_rows, cudaStream_t s) {
  launch_layernorm(x, w, static_cast<const __nv_bfloat16*>(nullptr), y, rows, dim, eps, w_rows, s);
}

}  // namespace abl::cuda
