// Mixture-of-experts ops: the router (softmax or sigmoid scores, top-k), gathering the tokens of one expert, the
// fixed-order combine of the k expert outputs of each token, and the gated shared expert.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "abl/backend/cpu/ops.h"
#include "abl/core/error.h"

namespace abl::cpu {

namespace {

bool ranks_before(const std::vector<float>& v, int32_t a, int32_t b) {
  return v[static_cast<size_t>(a)] > v[static_cast<size_t>(b)] ||
         (v[static_cast<size_t>(a)] == v[static_cast<size_t>(b)] && a < b);
}

// With groups > 1 (router.h): the choice values c of the experts outside the topk_groups best groups
// become 0; a group scores its largest c (group_max) or the sum of its two largest.
void keep_best_groups(int64_t E, const RouterConfig& r, std::vector<float>& c) {
  if (r.groups <= 1) return;
  const int64_t per = E / r.groups;
  std::vector<float> score(static_cast<size_t>(r.groups));
  for (int64_t g = 0; g < r.groups; ++g) {
    float top1 = -INFINITY, top2 = -INFINITY;
    for (int64_t e = g * per; e < (g + 1) * per; ++e) {
      const float v = c[static_cast<size_t>(e)];
      if (v > top1) {
        top2 = top1;
        top1 = v;
      } else if (v > top2) {
        top2 = v;
      }
    }
    score[static_cast<size_t>(g)] = r.group_max ? top1 : top1 + top2;
  }
  std::vector<int32_t> gorder(static_cast<size_t>(r.groups));
  std::iota(gorder.begin(), gorder.end(), 0);
  std::partial_sort(gorder.begin(), gorder.begin() + r.topk_groups, gorder.end(),
                    [&](int32_t a, int32_t b) { return ranks_before(score, a, b); });
  std::vector<uint8_t> kept(static_cast<size_t>(r.groups), 0);
  for (int64_t j = 0; j < r.topk_groups; ++j) kept[static_cast<size_t>(gorder[static_cast<size_t>(j)])] = 1;
  for (int64_t e = 0; e < E; ++e) {
    if (!kept[static_cast<size_t>(e / per)]) c[static_cast<size_t>(e)] = 0.0f;
  }
}

// Phi-3.5-MoE's sparsemixer (router.h) for one token: the best expert not yet taken, weighted by its
// probability over the free experts whose logits lie within a relative 2·eps of it.
void sparsemixer_token(const float* x, int64_t E, float eps, int32_t* ids, float* weights) {
  const float threshold = 2.0f * eps;
  for (int j = 0; j < 2; ++j) {
    int32_t best = -1;
    for (int32_t e = 0; e < E; ++e) {
      if (j == 1 && e == ids[0]) continue;
      if (best < 0 || x[e] > x[best]) best = e;
    }
    const float m = x[best];
    float sum = 0.0f;
    for (int32_t e = 0; e < E; ++e) {
      if (j == 1 && e == ids[0]) continue;
      const float factor = std::max(std::fabs(x[e]), m);  // scores.abs().clamp(min=max)
      if ((m - x[e]) / factor > threshold) continue;       // masked to -inf
      sum += std::exp(x[e] - m);
    }
    ids[j] = best;
    weights[j] = 1.0f / sum;  // exp(m - m) / sum
  }
}

// The router of one token (router.h): the weights w (softmax p, or sigmoid s) and the choice values
// c (w + bias, the bias 0 when there is none), the groups, the k largest c; their w renormalised and scaled.
void route_token(const float* x, int64_t E, int64_t k, const RouterConfig& r, std::vector<float>& w,
                 std::vector<float>& c, std::vector<int32_t>& order, int32_t* ids, float* weights) {
  if (r.sparsemixer) {
    sparsemixer_token(x, E, r.jitter_eps, ids, weights);
    return;
  }
  if (r.sigmoid) {
    for (int64_t e = 0; e < E; ++e) {
      w[static_cast<size_t>(e)] = 1.0f / (1.0f + std::exp(-x[e]));
      c[static_cast<size_t>(e)] = r.bias ? w[static_cast<size_t>(e)] + r.bias[e] : x[e];  // no bias: the logits rank
    }
  } else {
    float mx = x[0];
    for (int64_t e = 1; e < E; ++e) mx = std::max(mx, x[e]);
    float sum = 0.0f;
    for (int64_t e = 0; e < E; ++e) sum += (w[static_cast<size_t>(e)] = std::exp(x[e] - mx));
    for (int64_t e = 0; e < E; ++e) {
      w[static_cast<size_t>(e)] /= sum;
      c[static_cast<size_t>(e)] = w[static_cast<size_t>(e)] + (r.bias ? r.bias[e] : 0.0f);
    }
  }
  keep_best_groups(E, r, c);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int32_t a, int32_t b) { return ranks_before(c, a, b); });
  float kept = 0.0f;
  for (int64_t j = 0; j < k; ++j) kept += w[static_cast<size_t>(order[static_cast<size_t>(j)])];
  // transformers: the sigmoid routers divide by (sum + 1e-20; LFM2-MoE's 1e-6), the softmax ones by the sum
  const float denominator = r.sigmoid ? kept + r.norm_eps : kept;
  for (int64_t j = 0; j < k; ++j) {
    const int32_t e = order[static_cast<size_t>(j)];
    ids[j] = e;
    weights[j] = (r.renormalize ? w[static_cast<size_t>(e)] / denominator : w[static_cast<size_t>(e)]) * r.scale;
    if (r.expert_scale) weights[j] *= r.expert_scale[e];
  }
}

}  // namespace

void router_topk(const float* logits, int64_t T, int64_t E, int64_t k, const RouterConfig& r, int32_t* ids,
                 float* weights) {
  check_router(E, k, r);
#pragma omp parallel if (T * E > 65536)
  {
    std::vector<float> w(static_cast<size_t>(E)), c(static_cast<size_t>(E));
    std::vector<int32_t> order(static_cast<size_t>(E));
#pragma omp for schedule(static)
    for (int64_t t = 0; t < T; ++t) route_token(logits + t * E, E, k, r, w, c, order, ids + t * k, weights + t * k);
  }
}

void gather_rows(const float* src, const int64_t* rows, int64_t n, int64_t width, float* dst) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * width, src + rows[i] * width, sizeof(float) * width);
}

void combine_experts(const float* slots, const float* weights, int64_t T, int64_t k, int64_t H, float* out) {
#pragma omp parallel for schedule(static) if (T * k * H > 65536)
  for (int64_t t = 0; t < T; ++t) {
    float* o = out + t * H;
    std::fill(o, o + H, 0.0f);
    for (int64_t j = 0; j < k; ++j) {
      const float w = weights[t * k + j];
      const float* s = slots + (t * k + j) * H;
      for (int64_t i = 0; i < H; ++i) o[i] += w * s[i];
    }
  }
}

void add_gated(const float* x, const float* w, const float* s, int64_t T, int64_t H, float* y) {
#pragma omp parallel for schedule(static) if (T * H > 65536)
  for (int64_t t = 0; t < T; ++t) {
    double dot = 0.0;
    for (int64_t i = 0; i < H; ++i) dot += static_cast<double>(x[t * H + i]) * w[i];
    const float g = static_cast<float>(1.0 / (1.0 + std::exp(-dot)));
    for (int64_t i = 0; i < H; ++i) y[t * H + i] += g * s[t * H + i];
  }
}

}  // namespace abl::cpu
