// Private to the CUDA ops: warp/block reductions for one-block-per-row kernels and the launch
// shapes the launchers share. Blocks are whole warps, so full-mask shuffles are always legal.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace abl::cuda::detail {

constexpr int kWarp = 32;
constexpr int kElementwiseThreads = 256;
constexpr int64_t kMaxElementwiseBlocks = 65536;  // grid-stride loops cover the rest
constexpr int kMaxRowThreads = 1024;

// Blocks for a grid-stride loop over n > 0 elements.
inline unsigned elementwise_blocks(int64_t n) {
  const int64_t blocks = (n + kElementwiseThreads - 1) / kElementwiseThreads;
  return static_cast<unsigned>(blocks < kMaxElementwiseBlocks ? blocks : kMaxElementwiseBlocks);
}

// Threads of a one-block-per-row kernel over `cols` > 0 columns: whole warps, at most 1024.
inline unsigned row_threads(int64_t cols) {
  const int64_t warps = (cols + kWarp - 1) / kWarp;
  const int64_t threads = warps * kWarp;
  return static_cast<unsigned>(threads < kMaxRowThreads ? threads : kMaxRowThreads);
}

// The group of row r of rows sorted by group: the e with offsets[e] <= r < offsets[e + 1] (binary
// search; offsets has groups + 1 entries, non-decreasing, offsets[0] = 0).
__device__ inline int64_t group_of_row(const int64_t* offsets, int64_t groups, int64_t r) {
  int64_t lo = 0, hi = groups - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (offsets[mid] <= r) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct MaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};

template <typename T, typename Op>
__device__ T warp_reduce(T v, Op op) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reduces one value per thread over the block; every thread gets the result. Call it with the
// whole block (it synchronises); consecutive calls in one kernel are safe.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity) {
  __shared__ T warp_vals[kMaxRowThreads / kWarp];
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int n_warps = static_cast<int>(blockDim.x) / kWarp;
  v = warp_reduce(v, op);
  __syncthreads();  // a previous call's readers are done with warp_vals
  if (lane == 0) warp_vals[warp] = v;
  __syncthreads();
  v = lane < n_warps ? warp_vals[lane] : identity;
  return warp_reduce(v, op);
}

}  // namespace abl::cuda::detail
