// Ablation epilogue kernels (ablation_epilogue.h). The apply step runs one block per token: a
// block reduction gives the token's projection, then every thread updates its share of the row,
// so a batch mixing trials, modes and un-ablated sequences costs one launch per component.
#include "abl/backend/cuda/ablation_epilogue.h"

#include <climits>

#include "abl/backend/cuda/check.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

constexpr int kThreads = 256;  // every kernel here; block_sum assumes it

// Sum over the block (blockDim.x == kThreads); every thread gets the total.
__device__ float block_sum(float x) {
  __shared__ float warp_sums[kThreads / 32];
  __shared__ float total;
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    x = lane < kThreads / 32 ? warp_sums[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    if (lane == 0) total = x;
  }
  __syncthreads();
  return total;
}

// n[i] = ‖w[i,:]‖, one block per row.
__global__ void row_norms_kernel(const __nv_bfloat16* __restrict__ w, int64_t in, float* __restrict__ n) {
  const __nv_bfloat16* row = w + static_cast<int64_t>(blockIdx.x) * in;
  float ss = 0.0f;
  for (int64_t j = threadIdx.x; j < in; j += kThreads) {
    const float x = __bfloat162float(row[j]);
    ss += x * x;
  }
  ss = block_sum(ss);
  if (threadIdx.x == 0) n[blockIdx.x] = sqrtf(ss);
}

// a[s, j] = Σ_i (v[s,i] / n[i]) w[i, j]: one thread per column j (coalesced along the row),
// blockIdx.y = slot s.
__global__ void column_kernel(const __nv_bfloat16* __restrict__ w, int64_t H, int64_t in, const float* __restrict__ n,
                              const float* __restrict__ v, float* __restrict__ a) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (j >= in) return;
  const float* vs = v + static_cast<int64_t>(blockIdx.y) * H;
  float acc = 0.0f;
  for (int64_t i = 0; i < H; ++i) {
    const float ni = n[i];
    if (ni > 0.0f) acc += (vs[i] / ni) * __bfloat162float(w[i * in + j]);
  }
  a[static_cast<int64_t>(blockIdx.y) * in + j] = acc;
}

// wa[s, i] = (w[i,:] · a[s,:]) / n[i], one block per (row i, slot s).
__global__ void wa_kernel(const __nv_bfloat16* __restrict__ w, int64_t H, int64_t in, const float* __restrict__ n,
                          const float* __restrict__ a, float* __restrict__ wa) {
  const int64_t i = blockIdx.x;
  const __nv_bfloat16* row = w + i * in;
  const float* as = a + static_cast<int64_t>(blockIdx.y) * in;
  float dot = 0.0f;
  for (int64_t j = threadIdx.x; j < in; j += kThreads) dot += __bfloat162float(row[j]) * as[j];
  dot = block_sum(dot);
  if (threadIdx.x == 0) {
    const float ni = n[i];
    wa[static_cast<int64_t>(blockIdx.y) * H + i] = ni > 0.0f ? dot / ni : 0.0f;
  }
}

// a2[s] = ‖a[s,:]‖², one block per slot.
__global__ void norm2_kernel(const float* __restrict__ a, int64_t in, float* __restrict__ a2) {
  const float* as = a + static_cast<int64_t>(blockIdx.x) * in;
  float ss = 0.0f;
  for (int64_t j = threadIdx.x; j < in; j += kThreads) ss += as[j] * as[j];
  ss = block_sum(ss);
  if (threadIdx.x == 0) a2[blockIdx.x] = ss;
}

// Applies the epilogue to row yr of a token of sequence `seq` with the vectors `vec`, the whole
// block; the early exits depend only on the token, so they are block-uniform.
__device__ void apply_row(float* __restrict__ yr, int64_t H, int64_t seq, const int32_t* __restrict__ seq_trial,
                          const AblationTrials& tr, int32_t component, int32_t layer, const AblationVectors& vec) {
  const int32_t trial = seq_trial[seq];
  if (trial < 0 || trial >= tr.num_trials) return;
  const int64_t L = tr.num_layers;
  const float lambda = tr.lambda[(static_cast<int64_t>(trial) * 2 + component) * L + layer];
  if (lambda == 0.0f) return;
  const int64_t slot = tr.slot[static_cast<int64_t>(trial) * L + layer];
  const auto mode = static_cast<AblationMode>(tr.mode[trial]);
  const float* v = vec.v + slot * H;

  float part = 0.0f;
  for (int64_t i = threadIdx.x; i < H; i += kThreads) {
    float coef = v[i];
    if (mode != AblationMode::none) {
      const float ni = vec.n[i];
      coef = ni > 0.0f ? coef / ni : 0.0f;
    }
    part += coef * yr[i];
  }
  const float k = lambda * block_sum(part);

  for (int64_t i = threadIdx.x; i < H; i += kThreads) {
    const float vi = v[i];
    float yi = yr[i];
    if (mode == AblationMode::none) {
      yi -= k * vi;
    } else {
      yi -= k * vec.n[i] * vi;
      if (mode == AblationMode::full) {
        const float s2 = 1.0f - 2.0f * lambda * vi * vec.wa[slot * H + i] + lambda * lambda * vi * vi * vec.a2[slot];
        if (s2 > 0.0f) yi /= sqrtf(s2);
      }
    }
    yr[i] = yi;
  }
}

// One block per token.
__global__ void apply_kernel(float* __restrict__ y, int64_t H, const int64_t* __restrict__ row_seq,
                             const int32_t* __restrict__ seq_trial, AblationTrials tr, int32_t component,
                             int32_t layer, AblationVectors vec) {
  const int64_t t = blockIdx.x;
  apply_row(y + t * H, H, row_seq[t], seq_trial, tr, component, layer, vec);
}

// One block per expert row: the expert is the last one whose block starts at or before the row.
__global__ void apply_grouped_kernel(float* __restrict__ y, int64_t H, const int64_t* __restrict__ row_seq,
                                     const int32_t* __restrict__ seq_trial, AblationTrials tr, int32_t layer,
                                     const int64_t* __restrict__ offsets, int32_t experts,
                                     const AblationVectors* __restrict__ vecs) {
  const int64_t r = blockIdx.x;
  apply_row(y + r * H, H, row_seq[r], seq_trial, tr, 1, layer, vecs[detail::group_of_row(offsets, experts, r)]);
}

}  // namespace

void AblationTrialsHost::add_trial(AblationMode m, const int32_t* slots, const float* lambda_attn,
                                   const float* lambda_mlp, int32_t num_slots) {
  const int32_t k = num_trials();
  const auto mi = static_cast<int32_t>(m);
  ABL_CHECK(mi >= 0 && mi <= 2, "ablation trial {}: invalid row normalization {}", k, mi);
  for (int32_t l = 0; l < num_layers; ++l) {
    ABL_CHECK(slots[l] >= 0 && slots[l] < num_slots, "ablation trial {}, layer {}: direction slot {} of {}", k, l,
              slots[l], num_slots);
  }
  mode.push_back(mi);
  slot.insert(slot.end(), slots, slots + num_layers);
  lambda.insert(lambda.end(), lambda_attn, lambda_attn + num_layers);
  lambda.insert(lambda.end(), lambda_mlp, lambda_mlp + num_layers);
}

void ablation_row_norms(const __nv_bfloat16* w, int64_t H, int64_t in, float* n, cudaStream_t stream) {
  ABL_CHECK(H > 0 && in > 0, "ablation_row_norms: invalid shape ({}, {})", H, in);
  row_norms_kernel<<<static_cast<unsigned>(H), kThreads, 0, stream>>>(w, in, n);
  CUDA_CHECK_LAUNCH();
}

void ablation_direction_vectors(const __nv_bfloat16* w, int64_t H, int64_t in, const float* n, const float* v,
                                int64_t S, float* a, float* wa, float* a2, cudaStream_t stream) {
  ABL_CHECK(H > 0 && in > 0 && S >= 0 && S <= 65535, "ablation_direction_vectors: invalid shape H={} in={} S={}", H,
            in, S);
  if (S == 0) return;
  const dim3 col_grid(static_cast<unsigned>((in + kThreads - 1) / kThreads), static_cast<unsigned>(S));
  column_kernel<<<col_grid, kThreads, 0, stream>>>(w, H, in, n, v, a);
  CUDA_CHECK_LAUNCH();
  const dim3 row_grid(static_cast<unsigned>(H), static_cast<unsigned>(S));
  wa_kernel<<<row_grid, kThreads, 0, stream>>>(w, H, in, n, a, wa);
  CUDA_CHECK_LAUNCH();
  norm2_kernel<<<static_cast<unsigned>(S), kThreads, 0, stream>>>(a, in, a2);
  CUDA_CHECK_LAUNCH();
}

void ablation_apply(float* y, int64_t T, int64_t H, const int64_t* row_seq, const int32_t* seq_trial,
                    const AblationTrials& trials, int32_t component, int32_t layer, const AblationVectors& vecs,
                    cudaStream_t stream) {
  ABL_CHECK(component == 0 || component == 1, "ablation_apply: invalid component {}", component);
  ABL_CHECK(layer >= 0 && layer < trials.num_layers, "ablation_apply: layer {} of {}", layer, trials.num_layers);
  ABL_CHECK(T >= 0 && H > 0, "ablation_apply: invalid shape ({}, {})", T, H);
  if (T == 0 || trials.num_trials == 0) return;
  apply_kernel<<<static_cast<unsigned>(T), kThreads, 0, stream>>>(y, H, row_seq, seq_trial, trials, component, layer,
                                                                   vecs);
  CUDA_CHECK_LAUNCH();
}


void ablation_apply_grouped(float* y, int64_t rows, int64_t H, const int64_t* row_seq, const int32_t* seq_trial,
                            const AblationTrials& trials, int32_t layer, const int64_t* offsets, int64_t experts,
                            const AblationVectors* vecs, cudaStream_t stream) {
  ABL_CHECK(layer >= 0 && layer < trials.num_layers, "ablation_apply_grouped: layer {} of {}", layer,
            trials.num_layers);
  ABL_CHECK(rows >= 0 && rows <= INT_MAX && H > 0 && experts > 0 && experts <= INT_MAX,
            "ablation_apply_grouped: invalid shape (rows {}, H {}, experts {})", rows, H, experts);
  if (rows == 0 || trials.num_trials == 0) return;
  apply_grouped_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      y, H, row_seq, seq_trial, trials, layer, offsets, static_cast<int32_t>(experts), vecs);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
