// Mixture-of-experts kernels (ops.h): the router's scores (softmax or sigmoid) and top-k, the deterministic counting
// sort of (token, slot) pairs by expert (one warp per expert, ballots keep slot order), the gather of
// the routed rows, the fixed-order combine and the gated shared expert.
#include <cuda_bf16.h>

#include <climits>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kMaxK = 32;

constexpr int kMaxGroups = 64;

__device__ __forceinline__ float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

// One thread per token (router.h): the scores, then k passes of "the best expert not taken yet",
// the lower id on ties. The weight is p = exp(x − max) / sum (softmax) or s (sigmoid), ranked by
// c = weight + bias (no bias: 0). With groups, the choice value is 0 outside the best topk_groups groups.
__global__ void router_topk_kernel(const float* __restrict__ logits, int64_t T, int E, int k, RouterConfig r,
                                   int32_t* __restrict__ ids, float* __restrict__ weights) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= T) return;
  const float* x = logits + t * E;
  if (r.sparsemixer) {  // Phi-3.5-MoE: two picks, each weighted over the free experts near it (router.h)
    int first = -1;
    for (int j = 0; j < 2; ++j) {
      int best = -1;
      for (int e = 0; e < E; ++e) {
        if (e != first && (best < 0 || x[e] > x[best])) best = e;
      }
      const float m = x[best];
      float total = 0.0f;
      for (int e = 0; e < E; ++e) {
        if (e == first || (m - x[e]) / fmaxf(fabsf(x[e]), m) > 2.0f * r.jitter_eps) continue;
        total += expf(x[e] - m);
      }
      ids[t * 2 + j] = best;
      weights[t * 2 + j] = 1.0f / total;
      first = best;
    }
    return;
  }
  float mx = x[0], sum = 0.0f;
  if (!r.sigmoid) {
    for (int e = 1; e < E; ++e) mx = fmaxf(mx, x[e]);
    for (int e = 0; e < E; ++e) sum += expf(x[e] - mx);
  }
  // The choice value of expert e before the group mask, and its weight before renormalisation.
  auto score = [&](int e, float* weight) {
    *weight = r.sigmoid ? sigmoidf(x[e]) : expf(x[e] - mx) / sum;
    if (r.sigmoid && !r.bias) return x[e];  // without a bias the logits rank (router.h)
    return *weight + (r.bias ? r.bias[e] : 0.0f);
  };
  unsigned long long kept_groups = ~0ull;
  const int per = r.groups > 1 ? E / static_cast<int>(r.groups) : E;
  if (r.groups > 1) {
    float gscore[kMaxGroups];
    for (int g = 0; g < r.groups; ++g) {
      float top1 = -INFINITY, top2 = -INFINITY, w;
      for (int e = g * per; e < (g + 1) * per; ++e) {
        const float c = score(e, &w);
        if (c > top1) {
          top2 = top1;
          top1 = c;
        } else if (c > top2) {
          top2 = c;
        }
      }
      gscore[g] = r.group_max ? top1 : top1 + top2;
    }
    kept_groups = 0;
    for (int j = 0; j < r.topk_groups; ++j) {
      int best = -1;
      for (int g = 0; g < r.groups; ++g) {
        if ((kept_groups >> g) & 1ull) continue;
        if (best < 0 || gscore[g] > gscore[best]) best = g;
      }
      kept_groups |= 1ull << best;
    }
  }
  auto rank = [&](int e, float* weight) {
    const float c = score(e, weight);
    return ((kept_groups >> (e / per)) & 1ull) ? c : 0.0f;
  };
  int32_t chosen[kMaxK];
  float p[kMaxK];
  float kept = 0.0f;
  for (int j = 0; j < k; ++j) {
    int best = -1;
    float best_c = 0.0f, best_w = 0.0f;
    for (int e = 0; e < E; ++e) {
      bool taken = false;
      for (int i = 0; i < j; ++i) taken = taken || chosen[i] == e;
      if (taken) continue;
      float w;
      const float c = rank(e, &w);
      if (best < 0 || c > best_c) {  // the first free expert stands even for NaN logits: ids stay in range
        best_c = c;
        best_w = w;
        best = e;
      }
    }
    chosen[j] = best;
    p[j] = best_w;
    kept += best_w;
  }
  const float denominator = r.sigmoid ? kept + r.norm_eps : kept;
  for (int j = 0; j < k; ++j) {
    ids[t * k + j] = chosen[j];
    weights[t * k + j] = (r.renormalize ? p[j] / denominator : p[j]) * r.scale;
    if (r.expert_scale) weights[t * k + j] *= r.expert_scale[chosen[j]];
  }
}

// One warp per expert: counts its slots.
__global__ void expert_counts_kernel(const int32_t* __restrict__ ids, int64_t slots, int E,
                                     int32_t* __restrict__ counts) {
  const int e = static_cast<int>((static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / detail::kWarp);
  const int lane = static_cast<int>(threadIdx.x) % detail::kWarp;
  if (e >= E) return;  // uniform over the warp
  int32_t n = 0;
  for (int64_t base = 0; base < slots; base += detail::kWarp) {
    const int64_t i = base + lane;
    n += __popc(__ballot_sync(0xffffffffu, i < slots && ids[i] == e));
  }
  if (lane == 0) counts[e] = n;
}

// One warp per expert: writes its slots from offsets[e] on, in slot order.
__global__ void dispatch_kernel(const int32_t* __restrict__ ids, int64_t slots, int E,
                                const int64_t* __restrict__ offsets, int64_t* __restrict__ order,
                                int64_t* __restrict__ slot_pos) {
  const int e = static_cast<int>((static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / detail::kWarp);
  const int lane = static_cast<int>(threadIdx.x) % detail::kWarp;
  if (e >= E) return;
  int64_t at = offsets[e];
  const unsigned below = (1u << lane) - 1u;
  for (int64_t base = 0; base < slots; base += detail::kWarp) {
    const int64_t i = base + lane;
    const bool mine = i < slots && ids[i] == e;
    const unsigned mask = __ballot_sync(0xffffffffu, mine);
    if (mine) {
      const int64_t pos = at + __popc(mask & below);
      order[pos] = i;
      slot_pos[i] = pos;
    }
    at += __popc(mask);
  }
}

__global__ void moe_gather_kernel(const bf16* __restrict__ h, const int64_t* __restrict__ order, int64_t slots,
                                  int64_t k, int64_t H, const int64_t* __restrict__ row_seq,
                                  const float* __restrict__ scale, bf16* __restrict__ out,
                                  int64_t* __restrict__ row_seq_out) {
  const int64_t total = slots * H;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t r = i / H, c = i - r * H;
    const int64_t t = order[r] / k;
    out[i] = scale ? __float2bfloat16(__bfloat162float(h[t * H + c]) * scale[order[r]]) : h[t * H + c];
    if (c == 0) row_seq_out[r] = row_seq[t];
  }
}

__global__ void moe_combine_kernel(const float* __restrict__ expert_out, const int64_t* __restrict__ slot_pos,
                                   const float* __restrict__ weights, int64_t T, int64_t k, int64_t H,
                                   float* __restrict__ y) {
  const int64_t total = T * H;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t t = i / H, c = i - t * H;
    float acc = 0.0f;
    for (int64_t j = 0; j < k; ++j) {
      const float w = weights ? weights[t * k + j] : 1.0f;
      acc += w * expert_out[slot_pos[t * k + j] * H + c];
    }
    y[i] = acc;
  }
}

// One block per token row.
__global__ void add_gated_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w,
                                 const float* __restrict__ shared, int64_t H, float* __restrict__ y) {
  const int64_t t = blockIdx.x;
  float dot = 0.0f;
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) dot += __bfloat162float(x[t * H + i]) * __bfloat162float(w[i]);
  dot = detail::block_reduce(dot, detail::SumOp{}, 0.0f);
  const float g = 1.0f / (1.0f + expf(-dot));
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) y[t * H + i] += g * shared[t * H + i];
}

unsigned warp_blocks(int64_t warps) {
  const int64_t per_block = detail::kElementwiseThreads / detail::kWarp;
  return static_cast<unsigned>((warps + per_block - 1) / per_block);
}

}  // namespace

void router_topk(const float* logits, int64_t T, int64_t E, int64_t k, const RouterConfig& router, int32_t* ids,
                 float* weights, cudaStream_t s) {
  ABL_CHECK(T >= 0 && E > 0 && E <= 1024 && k > 0 && k <= std::min<int64_t>(E, kMaxK) &&
                router.groups <= kMaxGroups,
            "router_topk: bad extents (T = {}, E = {}, k = {}, groups = {}; E <= 1024, k <= min(E, {}), groups <= {})",
            T, E, k, router.groups, kMaxK, kMaxGroups);
  check_router(E, k, router);
  if (T == 0) return;
  const unsigned blocks = static_cast<unsigned>((T + detail::kElementwiseThreads - 1) / detail::kElementwiseThreads);
  router_topk_kernel<<<blocks, detail::kElementwiseThreads, 0, s>>>(logits, T, static_cast<int>(E),
                                                                    static_cast<int>(k), router, ids, weights);
  CUDA_CHECK_LAUNCH();
}

void moe_expert_counts(const int32_t* ids, int64_t slots, int64_t E, int32_t* counts, cudaStream_t s) {
  ABL_CHECK(slots >= 0 && E > 0 && E <= INT_MAX, "moe_expert_counts: bad extents (slots = {}, E = {})", slots, E);
  expert_counts_kernel<<<warp_blocks(E), detail::kElementwiseThreads, 0, s>>>(ids, slots, static_cast<int>(E),
                                                                              counts);
  CUDA_CHECK_LAUNCH();
}

void moe_dispatch(const int32_t* ids, int64_t slots, int64_t E, const int64_t* offsets, int64_t* order,
                  int64_t* slot_pos, cudaStream_t s) {
  ABL_CHECK(slots >= 0 && E > 0 && E <= INT_MAX, "moe_dispatch: bad extents (slots = {}, E = {})", slots, E);
  if (slots == 0) return;
  dispatch_kernel<<<warp_blocks(E), detail::kElementwiseThreads, 0, s>>>(ids, slots, static_cast<int>(E), offsets,
                                                                         order, slot_pos);
  CUDA_CHECK_LAUNCH();
}

void moe_gather(const bf16* h, const int64_t* order, int64_t slots, int64_t k, int64_t H, const int64_t* row_seq,
                const float* scale, bf16* out, int64_t* row_seq_out, cudaStream_t s) {
  ABL_CHECK(slots >= 0 && k > 0 && H > 0, "moe_gather: bad extents (slots = {}, k = {}, H = {})", slots, k, H);
  if (slots == 0) return;
  moe_gather_kernel<<<detail::elementwise_blocks(slots * H), detail::kElementwiseThreads, 0, s>>>(
      h, order, slots, k, H, row_seq, scale, out, row_seq_out);
  CUDA_CHECK_LAUNCH();
}

void moe_combine(const float* expert_out, const int64_t* slot_pos, const float* weights, int64_t T, int64_t k,
                 int64_t H, float* y, cudaStream_t s) {
  ABL_CHECK(T >= 0 && k > 0 && H > 0, "moe_combine: bad extents (T = {}, k = {}, H = {})", T, k, H);
  if (T == 0) return;
  moe_combine_kernel<<<detail::elementwise_blocks(T * H), detail::kElementwiseThreads, 0, s>>>(
      expert_out, slot_pos, weights, T, k, H, y);
  CUDA_CHECK_LAUNCH();
}

void add_gated(const bf16* x, const bf16* w, const float* shared, int64_t T, int64_t H, float* y, cudaStream_t s) {
  ABL_CHECK(T >= 0 && T <= INT_MAX && H > 0, "add_gated: bad extents (T = {}, H = {})", T, H);
  if (T == 0) return;
  add_gated_kernel<<<static_cast<unsigned>(T), detail::row_threads(H), 0, s>>>(x, w, shared, H, y);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
