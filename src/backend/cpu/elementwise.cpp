// Small elementwise and per-row ops: embedding gather, RMSNorm, SwiGLU/GeGLU, scale, soft-cap,
// residual add, KV append, log-softmax, argmax. Reductions accumulate in double so results do not depend on thread count.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "abl/backend/cpu/ops.h"
#include "abl/core/error.h"

namespace abl::cpu {

void embedding(const int32_t* tokens, int64_t T, const float* table, int64_t V, int64_t H, float* out) {
  for (int64_t t = 0; t < T; ++t) {
    ABL_CHECK(tokens[t] >= 0 && tokens[t] < V, "token id {} at position {} is outside the vocabulary (V = {})",
              tokens[t], t, V);
    std::memcpy(out + t * H, table + static_cast<int64_t>(tokens[t]) * H, sizeof(float) * H);
  }
}

void rmsnorm(const float* x, const float* w, float* y, int64_t rows, int64_t dim, float eps, float w_offset) {
#pragma omp parallel for schedule(static) if (rows * dim > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    double ss = 0.0;
    for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / dim + eps));
    if (!w) {
      for (int64_t i = 0; i < dim; ++i) yr[i] = xr[i] * inv;
    } else if (w_offset == 0.0f) {
      for (int64_t i = 0; i < dim; ++i) yr[i] = w[i] * (xr[i] * inv);
    } else {
      for (int64_t i = 0; i < dim; ++i) yr[i] = (xr[i] * inv) * (w_offset + w[i]);
    }
  }
}

void layernorm(const float* x, const float* w, float* y, int64_t rows, int64_t dim, float eps, int64_t w_rows) {
  ABL_CHECK(w_rows > 0, "layernorm: {} weight rows", w_rows);
#pragma omp parallel for schedule(static) if (rows * dim > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    const float* wr = w + (r % w_rows) * dim;
    double sum = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum += xr[i];
    const double mean = sum / static_cast<double>(dim);
    double ss = 0.0;
    for (int64_t i = 0; i < dim; ++i) ss += (xr[i] - mean) * (xr[i] - mean);
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(dim) + eps);
    for (int64_t i = 0; i < dim; ++i) yr[i] = wr[i] * static_cast<float>((xr[i] - mean) * inv);
  }
}

void swiglu(const float* gate, const float* up, float* out, int64_t n) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void swiglu_clamped(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], limit);
    const float u = std::min(std::max(up[i], -limit), limit);
    out[i] = (u + 1.0f) * (g / (1.0f + std::exp(-alpha * g)));
  }
}

void relu_squared(float* x, int64_t n) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const float r = x[i] > 0.0f ? x[i] : 0.0f;
    x[i] = r * r;
  }
}

void xielu(float* x, int64_t n, const XieluParams& p) {
  ABL_CHECK(p.present(), "xielu: the layer's alpha_p, alpha_n, beta and eps are required");
  const auto softplus = [](float v) { return v > 20.0f ? v : std::log1p(std::exp(v)); };
  const float beta = *p.beta, eps = *p.eps;
  const float ap = softplus(*p.alpha_p), an = beta + softplus(*p.alpha_n);
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = v > 0.0f ? ap * v * v + beta * v : (std::expm1(std::min(v, eps)) - v) * an + beta * v;
  }
}

void geglu(const float* gate, const float* up, float* out, int64_t n) {
  const float k = 0.7978845608028654f;  // sqrt(2/π)
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = 0.5f * g * (1.0f + std::tanh(k * (g + 0.044715f * g * g * g))) * up[i];
  }
}

void scale(float* x, float s, int64_t n) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void scale_by_position(float* x, const int64_t* positions, int64_t T, int64_t width, float beta, int64_t period,
                       int64_t offset) {
#pragma omp parallel for schedule(static) if (T * width > 65536)
  for (int64_t t = 0; t < T; ++t) {
    const float f = 1.0f + beta * std::log(1.0f + std::floor(static_cast<float>(positions[t] + offset) /
                                                             static_cast<float>(period)));
    for (int64_t i = 0; i < width; ++i) x[t * width + i] *= f;
  }
}

void softcap(float* x, float cap, int64_t n) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

void add(float* x, const float* y, int64_t n) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void add_rows(float* x, const float* b, int64_t rows, int64_t width) {
#pragma omp parallel for schedule(static) if (rows * width > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < width; ++i) x[r * width + i] += b[i];
  }
}

void kv_append(const float* k, const float* v, const int64_t* dst_rows, int64_t T, int64_t kv_dim,
               float* k_cache, float* v_cache, int64_t v_dim) {
  if (v_dim == 0) v_dim = kv_dim;
  for (int64_t t = 0; t < T; ++t) {
    std::memcpy(k_cache + dst_rows[t] * kv_dim, k + t * kv_dim, sizeof(float) * kv_dim);
    std::memcpy(v_cache + dst_rows[t] * v_dim, v + t * v_dim, sizeof(float) * v_dim);
  }
}

void mla_split_kv(const float* kvb, const float* k_pe, int64_t pe_stride, int64_t T, int64_t NH, int64_t nope,
                  int64_t R, int64_t HDv, float* k, float* v) {
  const int64_t HD = nope + R, in = nope + HDv;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < NH; ++h) {
      const float* src = kvb + (t * NH + h) * in;
      float* kh = k + (t * NH + h) * HD;
      std::memcpy(kh, src, sizeof(float) * nope);
      std::memcpy(kh + nope, k_pe + t * pe_stride, sizeof(float) * R);
      std::memcpy(v + (t * NH + h) * HDv, src + nope, sizeof(float) * HDv);
    }
  }
}

void copy_columns(const float* src, int64_t src_stride, int64_t rows, int64_t width, float* dst) {
  for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * width, src + r * src_stride, sizeof(float) * width);
}

void log_softmax(const float* logits, float* out, int64_t rows, int64_t V) {
#pragma omp parallel for schedule(static) if (rows * V > 262144)
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = logits + r * V;
    float* o = out + r * V;
    float mx = x[0];
    for (int64_t i = 1; i < V; ++i) mx = std::max(mx, x[i]);
    double sum = 0.0;
    for (int64_t i = 0; i < V; ++i) sum += std::exp(static_cast<double>(x[i] - mx));
    const float lse = mx + static_cast<float>(std::log(sum));
    for (int64_t i = 0; i < V; ++i) o[i] = x[i] - lse;
  }
}

void argmax(const float* x, int64_t rows, int64_t V, int32_t* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * V;
    int64_t best = -1;  // NaN never wins (as the CUDA twin); a row without a number gives 0
    for (int64_t i = 0; i < V; ++i) {
      if (!std::isnan(xr[i]) && (best < 0 || xr[i] > xr[best])) best = i;
    }
    out[r] = static_cast<int32_t>(best < 0 ? 0 : best);
  }
}

}  // namespace abl::cpu
