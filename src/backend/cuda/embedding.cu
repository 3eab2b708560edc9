// Embedding gather: bf16 table rows widened to the fp32 residual stream. Token ids are validated on
// the host before upload; the kernel still never reads outside the table (a bad id gives NaN).
#include <cuda_bf16.h>

#include <cmath>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

__global__ void embedding_kernel(const int32_t* __restrict__ tokens, int64_t T, const __nv_bfloat16* __restrict__ table,
                                 int64_t V, int64_t H, float* __restrict__ out) {
  const int64_t n = T * H;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t t = i / H;
    const int64_t h = i - t * H;
    const int64_t token = tokens[t];
    out[i] = (token >= 0 && token < V) ? __bfloat162float(table[token * H + h]) : NAN;
  }
}

}  // namespace

void embedding(const int32_t* tokens, int64_t T, const __nv_bfloat16* table, int64_t V, int64_t H, float* out,
               cudaStream_t s) {
  ABL_CHECK(T >= 0 && V >= 0 && H >= 0, "embedding: negative extent (T = {}, V = {}, H = {})", T, V, H);
  if (T == 0 || H == 0) return;
  embedding_kernel<<<detail::elementwise_blocks(T * H), detail::kElementwiseThreads, 0, s>>>(tokens, T, table, V, H,
                                                                                            out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
