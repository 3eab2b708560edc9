// Mixture-of-experts ops: the router's softmax and top-k, gathering the tokens of one expert, the
// fixed-order combine of the k expert outputs of each token, and the gated shared expert.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "abl/backend/cpu/ops.h"

namespace abl::cpu {

void router_topk(const float* logits, int64_t T, int64_t E, int64_t k, bool renormalize, int32_t* ids,
                 float* weights) {
#pragma omp parallel if (T * E > 65536)
  {
    std::vector<float> p(static_cast<size_t>(E));
    std::vector<int32_t> order(static_cast<size_t>(E));
#pragma omp for schedule(static)
    for (int64_t t = 0; t < T; ++t) {
      const float* x = logits + t * E;
      float mx = x[0];
      for (int64_t e = 1; e < E; ++e) mx = std::max(mx, x[e]);
      float sum = 0.0f;
      for (int64_t e = 0; e < E; ++e) sum += (p[static_cast<size_t>(e)] = std::exp(x[e] - mx));
      for (float& v : p) v /= sum;
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
        return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)] ||
               (p[static_cast<size_t>(a)] == p[static_cast<size_t>(b)] && a < b);
      });
      float kept = 0.0f;
      for (int64_t j = 0; j < k; ++j) kept += p[static_cast<size_t>(order[static_cast<size_t>(j)])];
      for (int64_t j = 0; j < k; ++j) {
        const int32_t e = order[static_cast<size_t>(j)];
        ids[t * k + j] = e;
        weights[t * k + j] = renormalize ? p[static_cast<size_t>(e)] / kept : p[static_cast<size_t>(e)];
      }
    }
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
