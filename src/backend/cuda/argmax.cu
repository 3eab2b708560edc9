// Greedy decoding's argmax, one block per row: each thread keeps its best (value, index), then a
// warp-shuffle and a shared-memory round pick the largest value and, on ties, the smallest index
// (torch.argmax and the CPU twin). NaN never wins (torch would pick it; the CPU twin does the same as
// here); a row with no number gives index 0.
#include <climits>
#include <cmath>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

constexpr int kNoIndex = INT_MAX;  // above every index, as V < 2³¹

// A strict order on (value, index) pairs: larger value first, then smaller index.
__device__ bool better(float v, int i, float best_v, int best_i) {
  return v > best_v || (v == best_v && i < best_i);
}

__device__ void warp_best(float& v, int& i) {
  for (int offset = detail::kWarp / 2; offset > 0; offset /= 2) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, offset);
    const int oi = __shfl_xor_sync(0xffffffffu, i, offset);
    if (better(ov, oi, v, i)) {
      v = ov;
      i = oi;
    }
  }
}

__global__ void argmax_kernel(const float* __restrict__ x, int64_t V, int32_t* __restrict__ out) {
  __shared__ float warp_v[detail::kMaxRowThreads / detail::kWarp];
  __shared__ int warp_i[detail::kMaxRowThreads / detail::kWarp];
  const float* xr = x + static_cast<int64_t>(blockIdx.x) * V;
  float best_v = -INFINITY;
  int best_i = kNoIndex;
  for (int64_t i = threadIdx.x; i < V; i += blockDim.x) {
    if (better(xr[i], static_cast<int>(i), best_v, best_i)) {
      best_v = xr[i];
      best_i = static_cast<int>(i);
    }
  }
  warp_best(best_v, best_i);
  const int lane = static_cast<int>(threadIdx.x) % detail::kWarp;
  const int warp = static_cast<int>(threadIdx.x) / detail::kWarp;
  if (lane == 0) {
    warp_v[warp] = best_v;
    warp_i[warp] = best_i;
  }
  __syncthreads();
  if (warp == 0) {
    const int n_warps = static_cast<int>(blockDim.x) / detail::kWarp;
    best_v = lane < n_warps ? warp_v[lane] : -INFINITY;
    best_i = lane < n_warps ? warp_i[lane] : kNoIndex;
    warp_best(best_v, best_i);
    if (lane == 0) out[blockIdx.x] = best_i == kNoIndex ? 0 : best_i;
  }
}

}  // namespace

void argmax(const float* x, int64_t rows, int64_t V, int32_t* out, cudaStream_t s) {
  ABL_CHECK(rows >= 0 && V >= 0, "argmax: negative extent (rows = {}, V = {})", rows, V);
  ABL_CHECK(rows <= INT_MAX, "argmax: {} rows exceed one grid (one block per row)", rows);
  ABL_CHECK(V < INT_MAX, "argmax: V = {} does not fit the int32 indices", V);
  ABL_CHECK(V > 0 || rows == 0, "argmax: empty rows (V = 0)");
  if (rows == 0) return;
  argmax_kernel<<<static_cast<unsigned>(rows), detail::row_threads(V), 0, s>>>(x, V, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
