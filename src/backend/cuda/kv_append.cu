// KV-cache append: scatter this step's k/v rows (bf16) to their cache rows. The row indices come
// from the caller's cache plan; one thread per element keeps it trivially correct (it is tiny).
// Latent attention's keys and values are built here too (mla_split_kv): a copy per element as well.
#include <cuda_bf16.h>

#include <algorithm>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

__global__ void kv_append_kernel(const __nv_bfloat16* __restrict__ k, const __nv_bfloat16* __restrict__ v,
                                 const int64_t* __restrict__ dst_rows, int64_t T, int64_t kv_dim,
                                 __nv_bfloat16* __restrict__ k_cache, __nv_bfloat16* __restrict__ v_cache) {
  const int64_t n = T * kv_dim;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t t = i / kv_dim;
    const int64_t dst = dst_rows[t] * kv_dim + (i - t * kv_dim);
    k_cache[dst] = k[i];
    v_cache[dst] = v[i];
  }
}

// One thread per (token, head, column) of the wider of a key head (nope + R) and a value head (HDv).
__global__ void mla_split_kv_kernel(const __nv_bfloat16* __restrict__ kvb, const __nv_bfloat16* __restrict__ k_pe,
                                    int64_t pe_stride, int64_t T, int64_t NH, int64_t nope, int64_t R, int64_t HDv,
                                    int64_t width, __nv_bfloat16* __restrict__ k, int64_t k_stride,
                                    __nv_bfloat16* __restrict__ v, int64_t v_stride) {
  const int64_t n = T * NH * width;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t row = i / width;  // t * NH + h
    const int64_t c = i - row * width;
    const int64_t t = row / NH;
    const __nv_bfloat16* src = kvb + row * (nope + HDv);
    if (c < nope) {
      k[row * k_stride + c] = src[c];
    } else if (c < nope + R) {
      k[row * k_stride + c] = k_pe[t * pe_stride + (c - nope)];
    }
    if (c < HDv) v[row * v_stride + c] = src[nope + c];
  }
}

}  // namespace

void mla_split_kv(const __nv_bfloat16* kvb, const __nv_bfloat16* k_pe, int64_t pe_stride, int64_t T, int64_t NH,
                  int64_t nope, int64_t R, int64_t HDv, __nv_bfloat16* k, int64_t k_stride, __nv_bfloat16* v,
                  int64_t v_stride, cudaStream_t s) {
  ABL_CHECK(T >= 0 && NH >= 0 && nope >= 0 && R >= 0 && HDv >= 0,
            "mla_split_kv: negative extent (T = {}, NH = {}, nope = {}, R = {}, HDv = {})", T, NH, nope, R, HDv);
  ABL_CHECK(k_stride >= nope + R && v_stride >= HDv && pe_stride >= R,
            "mla_split_kv: row strides k {}, v {}, k_pe {} narrower than the heads ({} + {}, {})", k_stride, v_stride,
            pe_stride, nope, R, HDv);
  const int64_t width = std::max(nope + R, HDv);
  if (T == 0 || NH == 0 || width == 0) return;
  mla_split_kv_kernel<<<detail::elementwise_blocks(T * NH * width), detail::kElementwiseThreads, 0, s>>>(
      kvb, k_pe, pe_stride, T, NH, nope, R, HDv, width, k, k_stride, v, v_stride);
  CUDA_CHECK_LAUNCH();
}

void kv_append(const __nv_bfloat16* k, const __nv_bfloat16* v, const int64_t* dst_rows, int64_t T, int64_t kv_dim,
               __nv_bfloat16* k_cache, __nv_bfloat16* v_cache, cudaStream_t s) {
  ABL_CHECK(T >= 0 && kv_dim >= 0, "kv_append: negative extent (T = {}, kv_dim = {})", T, kv_dim);
  if (T == 0 || kv_dim == 0) return;
  kv_append_kernel<<<detail::elementwise_blocks(T * kv_dim), detail::kElementwiseThreads, 0, s>>>(
      k, v, dst_rows, T, kv_dim, k_cache, v_cache);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
