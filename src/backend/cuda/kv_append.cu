// KV-cache append: scatter this step's k/v rows (bf16) to their cache rows. The row indices come
// from the caller's cache plan; one thread per element keeps it trivially correct (it is tiny).
#include <cuda_bf16.h>

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

}  // namespace

void kv_append(const __nv_bfloat16* k, const __nv_bfloat16* v, const int64_t* dst_rows, int64_t T, int64_t kv_dim,
               __nv_bfloat16* k_cache, __nv_bfloat16* v_cache, cudaStream_t s) {
  ABL_CHECK(T >= 0 && kv_dim >= 0, "kv_append: negative extent (T = {}, kv_dim = {})", T, kv_dim);
  if (T == 0 || kv_dim == 0) return;
  kv_append_kernel<<<detail::elementwise_blocks(T * kv_dim), detail::kElementwiseThreads, 0, s>>>(
      k, v, dst_rows, T, kv_dim, k_cache, v_cache);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
