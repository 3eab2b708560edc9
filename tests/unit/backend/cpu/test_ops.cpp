// CPU ops against straightforward reference formulas over odd, non-power-of-two shapes.
#include <gtest/gtest.h>

#include <limits>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "abl/backend/cpu/ops.h"

namespace {

std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Naive attention of one query at position pos over keys 0..pos of one sequence.
void naive_attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                     int64_t NH, int64_t NKV, int64_t HD, int64_t n, int64_t window, std::vector<float>& out,
                     double scale = 0, double softcap = 0, const float* sinks = nullptr) {
  if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(HD));
  out.assign(static_cast<size_t>(n * NH * HD), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t h = 0; h < NH; ++h) {
      const int64_t kh = h / (NH / NKV);
      std::vector<double> s;
      std::vector<int64_t> keys;
      for (int64_t j = 0; j <= i; ++j) {
        if (window > 0 && j <= i - window) continue;
        double dot = 0;
        for (int64_t d = 0; d < HD; ++d) dot += q[(i * NH + h) * HD + d] * k[(j * NKV + kh) * HD + d];
        dot *= scale;
        s.push_back(softcap > 0 ? softcap * std::tanh(dot / softcap) : dot);
        keys.push_back(j);
      }
      // A sink (gpt-oss's eager_attention_forward): one more logit, its column dropped after the softmax.
      double mx = sinks ? sinks[h] : -1e300, sum = sinks ? 1.0 : 0.0;
      for (double x : s) mx = std::max(mx, x);
      if (sinks) sum = std::exp(sinks[h] - mx);
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (size_t t = 0; t < keys.size(); ++t) {
        for (int64_t d = 0; d < HD; ++d) {
          out[(i * NH + h) * HD + d] += static_cast<float>(s[t] / sum * v[(keys[t] * NKV + kh) * HD + d]);
        }
      }
    }
  }
}

}  // namespace

TEST(Ops, AttentionPrefillGqaAndWindow) {
  for (auto [NH, NKV, HD, window] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
           {4, 4, 8, 0}, {6, 2, 10, 0}, {8, 2, 6, 3}, {3, 1, 14, 5}}) {
    const int64_t n1 = 7, n2 = 11;  // two packed sequences
    auto q = randn(static_cast<size_t>((n1 + n2) * NH * HD), 1);
    auto k = randn(static_cast<size_t>((n1 + n2) * NKV * HD), 2);
    auto v = randn(static_cast<size_t>((n1 + n2) * NKV * HD), 3);
    std::vector<float> out(q.size());
    abl::cpu::AttnSeq seqs[2] = {{0, n1, 0, n1}, {n1, n2, n1, n2}};
    abl::cpu::attention(q.data(), k.data(), v.data(), out.data(), seqs, 2, NH, NKV, HD, window);
    for (int s = 0; s < 2; ++s) {
      const int64_t off = s ? n1 : 0, n = s ? n2 : n1;
      std::vector<float> qs(q.begin() + off * NH * HD, q.begin() + (off + n) * NH * HD);
      std::vector<float> ks(k.begin() + off * NKV * HD, k.begin() + (off + n) * NKV * HD);
      std::vector<float> vs(v.begin() + off * NKV * HD, v.begin() + (off + n) * NKV * HD);
      std::vector<float> ref;
      naive_attention(qs, ks, vs, NH, NKV, HD, n, window, ref);
      for (size_t i = 0; i < ref.size(); ++i) {
        ASSERT_NEAR(out[static_cast<size_t>(off * NH * HD) + i], ref[i], 1e-5)
            << "NH " << NH << " NKV " << NKV << " window " << window << " seq " << s << " i " << i;
      }
    }
  }
}

TEST(Ops, AttentionDecodeMatchesPrefillRow) {
  const int64_t NH = 6, NKV = 3, HD = 12, n = 9;
  auto q = randn(static_cast<size_t>(n * NH * HD), 4);
  auto k = randn(static_cast<size_t>(n * NKV * HD), 5);
  auto v = randn(static_cast<size_t>(n * NKV * HD), 6);
  std::vector<float> full(q.size()), one(static_cast<size_t>(NH * HD));
  abl::cpu::AttnSeq all{0, n, 0, n};
  abl::cpu::attention(q.data(), k.data(), v.data(), full.data(), &all, 1, NH, NKV, HD, 0);
  // The last query alone (decode): q row n-1, kv_len n.
  abl::cpu::AttnSeq last{0, 1, 0, n};
  abl::cpu::attention(q.data() + (n - 1) * NH * HD, k.data(), v.data(), one.data(), &last, 1, NH, NKV, HD, 0);
  for (int64_t i = 0; i < NH * HD; ++i) EXPECT_EQ(one[i], full[(n - 1) * NH * HD + i]);
}

TEST(Ops, RopeRotateHalf) {
  const int64_t T = 3, heads = 2, HD = 6;
  auto x = randn(static_cast<size_t>(T * heads * HD), 7);
  auto y = x;
  const int64_t pos[T] = {0, 5, 17};
  const float inv[3] = {1.0f, 0.1f, 0.01f};
  abl::cpu::rope(y.data(), pos, T, heads, HD, inv);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < 3; ++i) {
        const double a = static_cast<double>(static_cast<float>(pos[t]) * inv[i]);
        const float* xh = &x[(t * heads + h) * HD];
        const float* yh = &y[(t * heads + h) * HD];
        EXPECT_NEAR(yh[i], xh[i] * std::cos(a) - xh[i + 3] * std::sin(a), 1e-5);
        EXPECT_NEAR(yh[i + 3], xh[i + 3] * std::cos(a) + xh[i] * std::sin(a), 1e-5);
      }
    }
  }
}

TEST(Ops, RmsnormLinearSwigluSoftmaxArgmax) {
  const int64_t rows = 5, dim = 13, out = 7;
  auto x = randn(static_cast<size_t>(rows * dim), 8);
  auto w = randn(static_cast<size_t>(dim), 9);
  std::vector<float> y(x.size());
  abl::cpu::rmsnorm(x.data(), w.data(), y.data(), rows, dim, 1e-6f);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i) ss += x[r * dim + i] * x[r * dim + i];
    const double inv = 1.0 / std::sqrt(ss / dim + 1e-6);
    for (int64_t i = 0; i < dim; ++i) EXPECT_NEAR(y[r * dim + i], w[i] * x[r * dim + i] * inv, 1e-5);
  }
  auto W = randn(static_cast<size_t>(out * dim), 10);
  auto b = randn(static_cast<size_t>(out), 11);
  std::vector<float> z(static_cast<size_t>(rows * out));
  abl::cpu::linear(x.data(), W.data(), b.data(), z.data(), rows, dim, out);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double s = b[o];
      for (int64_t i = 0; i < dim; ++i) s += x[r * dim + i] * W[o * dim + i];
      EXPECT_NEAR(z[r * out + o], s, 1e-4);
    }
  }
  std::vector<float> g = {-2.0f, 0.0f, 3.0f}, u = {1.0f, 5.0f, 2.0f}, a(3);
  abl::cpu::swiglu(g.data(), u.data(), a.data(), 3);
  EXPECT_NEAR(a[0], -2.0 / (1 + std::exp(2.0)), 1e-6);
  EXPECT_EQ(a[1], 0.0f);
  EXPECT_NEAR(a[2], 3.0 / (1 + std::exp(-3.0)) * 2.0, 1e-5);

  std::vector<float> logits = {1.0f, 3.0f, 3.0f, -1.0f}, lp(4);
  abl::cpu::log_softmax(logits.data(), lp.data(), 1, 4);
  double total = 0;
  for (float v : lp) total += std::exp(static_cast<double>(v));
  EXPECT_NEAR(total, 1.0, 1e-6);
  int32_t best = -1;
  abl::cpu::argmax(logits.data(), 1, 4, &best);
  EXPECT_EQ(best, 1);  // first of the tied maxima, as torch.argmax
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> odd = {nan, -1.0f, 2.0f, nan, nan, nan};  // NaN never wins, even first
  int32_t two[2] = {-1, -1};
  abl::cpu::argmax(odd.data(), 2, 3, two);
  EXPECT_EQ(two[0], 2);
  EXPECT_EQ(two[1], 0);  // a row without a number
}

// Gemma's and Phi-3's variants: explicit score scale and soft-cap, (1 + w) norms, GeGLU, scale,
// soft-capped logits, RoPE with an attention factor.
TEST(Ops, AttentionScaleAndSoftcap) {
  const int64_t NH = 4, NKV = 2, HD = 8, n = 10, window = 4;
  auto q = randn(static_cast<size_t>(n * NH * HD), 21, 2.0f);
  auto k = randn(static_cast<size_t>(n * NKV * HD), 22, 2.0f);
  auto v = randn(static_cast<size_t>(n * NKV * HD), 23);
  std::vector<float> out(q.size()), ref, plain;
  abl::cpu::AttnSeq seq{0, n, 0, n};
  abl::cpu::attention(q.data(), k.data(), v.data(), out.data(), &seq, 1, NH, NKV, HD, window, {0.3f, 2.0f});
  naive_attention(q, k, v, NH, NKV, HD, n, window, ref, 0.3, 2.0);
  naive_attention(q, k, v, NH, NKV, HD, n, window, plain, 0.3, 0.0);
  double differs = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_NEAR(out[i], ref[i], 1e-5) << i;
    differs = std::max(differs, std::fabs(static_cast<double>(ref[i]) - plain[i]));
  }
  EXPECT_GT(differs, 1e-2);  // the cap of 2 bites on scores of this size
}

TEST(Ops, AttentionSinks) {
  const int64_t NH = 4, NKV = 2, HD = 8, n = 10;
  auto q = randn(static_cast<size_t>(n * NH * HD), 31, 2.0f);
  auto k = randn(static_cast<size_t>(n * NKV * HD), 32, 2.0f);
  auto v = randn(static_cast<size_t>(n * NKV * HD), 33);
  // A sink far above every score (head 3) leaves almost nothing to the keys.
  const std::vector<float> sinks = {0.5f, -2.0f, 3.0f, 60.0f};
  for (int64_t window : {0, 3}) {
    std::vector<float> out(q.size()), ref, plain;
    abl::cpu::AttnSeq seq{0, n, 0, n};
    abl::cpu::attention(q.data(), k.data(), v.data(), out.data(), &seq, 1, NH, NKV, HD, window,
                        {0.0f, 0.0f, sinks.data()});
    naive_attention(q, k, v, NH, NKV, HD, n, window, ref, 0, 0, sinks.data());
    naive_attention(q, k, v, NH, NKV, HD, n, window, plain);
    double differs = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_NEAR(out[i], ref[i], 1e-5) << i;
      differs = std::max(differs, std::fabs(static_cast<double>(ref[i]) - plain[i]));
      if ((i / HD) % NH == 3) {
        EXPECT_LT(std::fabs(out[i]), 1e-12) << i;
      }
    }
    EXPECT_GT(differs, 1e-2);
  }
}

TEST(Ops, LayerNormWithoutBias) {
  // Cohere's LayerNorm: (x − mean) / sqrt(var + eps) · w; an offset added to a row changes nothing.
  const int64_t rows = 3, dim = 50;
  auto x = randn(static_cast<size_t>(rows * dim), 34, 2.0f);
  const auto w = randn(static_cast<size_t>(dim), 35);
  std::vector<float> y(x.size()), shifted_y(x.size());
  abl::cpu::layernorm(x.data(), w.data(), y.data(), rows, dim, 1e-5f);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < dim; ++i) mean += x[static_cast<size_t>(r * dim + i)] / static_cast<double>(dim);
    for (int64_t i = 0; i < dim; ++i) {
      const double d = x[static_cast<size_t>(r * dim + i)] - mean;
      var += d * d / static_cast<double>(dim);
    }
    for (int64_t i = 0; i < dim; ++i) {
      const double want = w[static_cast<size_t>(i)] * (x[static_cast<size_t>(r * dim + i)] - mean) / std::sqrt(var + 1e-5);
      EXPECT_NEAR(y[static_cast<size_t>(r * dim + i)], want, 1e-5) << r << "," << i;
    }
  }
  for (float& v : x) v += 3.0f;
  abl::cpu::layernorm(x.data(), w.data(), shifted_y.data(), rows, dim, 1e-5f);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(shifted_y[i], y[i], 1e-5) << i;
  abl::cpu::layernorm(x.data(), w.data(), x.data(), rows, dim, 1e-5f);  // in place
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(x[i], y[i], 1e-5) << i;
}

TEST(Ops, LayerNormPerHeadWeights) {
  // Command R+'s q/k norm: rows = T·heads, row r scaled by weight row r % heads; each row is the
  // one-row LayerNorm with its head's weights.
  const int64_t T = 3, heads = 4, dim = 16;
  const auto x = randn(static_cast<size_t>(T * heads * dim), 36, 2.0f);
  const auto w = randn(static_cast<size_t>(heads * dim), 37);
  std::vector<float> y(x.size()), one(static_cast<size_t>(dim));
  abl::cpu::layernorm(x.data(), w.data(), y.data(), T * heads, dim, 1e-5f, heads);
  for (int64_t r = 0; r < T * heads; ++r) {
    abl::cpu::layernorm(x.data() + r * dim, w.data() + (r % heads) * dim, one.data(), 1, dim, 1e-5f);
    for (int64_t i = 0; i < dim; ++i) EXPECT_EQ(y[static_cast<size_t>(r * dim + i)], one[static_cast<size_t>(i)]);
  }
  std::vector<float> shared(x.size());  // one weight row for all: a different result
  abl::cpu::layernorm(x.data(), w.data(), shared.data(), T * heads, dim, 1e-5f);
  EXPECT_NE(shared, y);
}

TEST(Ops, ClampedSwigluAndRowBias) {
  // gpt-oss's _apply_gate: gate clamped above at the limit, up on both sides, (up + 1) · g·σ(α g).
  const std::vector<float> g = {-9.0f, -1.0f, 0.0f, 2.5f, 6.9f, 7.5f, 30.0f};
  const std::vector<float> u = {-8.0f, 0.5f, 3.0f, -7.5f, 2.0f, 9.0f, -1.0f};
  std::vector<float> a(g.size());
  abl::cpu::swiglu_clamped(g.data(), u.data(), a.data(), static_cast<int64_t>(g.size()), 1.702f, 7.0f);
  for (size_t i = 0; i < g.size(); ++i) {
    const double gc = std::min<double>(g[i], 7.0), uc = std::clamp<double>(u[i], -7.0, 7.0);
    EXPECT_NEAR(a[i], (uc + 1) * gc / (1 + std::exp(-1.702 * gc)), 1e-5) << i;
  }
  // Both clamps bite on element 5 (gate 7.5, up 9): (7 + 1) · 7σ(1.702 · 7).
  EXPECT_NEAR(a[5], 8.0 * 7.0 / (1.0 + std::exp(-1.702 * 7.0)), 1e-5);
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const float b[3] = {10, 20, 30};
  abl::cpu::add_rows(x.data(), b, 2, 3);
  EXPECT_EQ(x, (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(Ops, XieluBranchesAndSoftplus) {
  // Apertus' XIELUActivation with stored alpha_p 0.2, alpha_n −1.0 (softplus'd), beta 0.45, eps −1e−6: the quadratic
  // branch above 0; below, (expm1(min(x, eps)) − x)·(beta + softplus(alpha_n)) + beta·x, eps capping expm1's argument
  // just below 0; an alpha above torch's softplus threshold 20 is taken as it is.
  const float alpha_p = 0.2f, alpha_n = -1.0f, beta = 0.45f, eps = -1e-6f;
  const abl::XieluParams p{&alpha_p, &alpha_n, &beta, &eps};
  const std::vector<float> x0 = {-30.0f, -2.5f, -0.25f, -1e-8f, 0.0f, 1e-8f, 0.7f, 4.0f};
  std::vector<float> x = x0;
  abl::cpu::xielu(x.data(), static_cast<int64_t>(x.size()), p);
  const double ap = std::log1p(std::exp(0.2)), an = 0.45 + std::log1p(std::exp(-1.0));
  for (size_t i = 0; i < x0.size(); ++i) {
    const double v = x0[i];
    const double want = v > 0 ? ap * v * v + 0.45 * v : (std::expm1(std::min(v, -1e-6)) - v) * an + 0.45 * v;
    EXPECT_NEAR(x[i], want, 1e-6 * std::max(1.0, std::abs(want))) << i;
  }
  EXPECT_NEAR(x[4], (std::expm1(-1e-6)) * an, 1e-9);  // 0 is the lower branch, at eps
  const float big = 25.0f;
  const abl::XieluParams q{&big, &alpha_n, &beta, &eps};
  std::vector<float> y = {2.0f};
  abl::cpu::xielu(y.data(), 1, q);
  EXPECT_NEAR(y[0], 25.0 * 4 + 0.9, 1e-4);
  EXPECT_THROW(abl::cpu::xielu(y.data(), 1, abl::XieluParams{}), abl::Error);
}

TEST(Ops, OffsetNormGegluScaleSoftcapRopeFactor) {
  const int64_t rows = 3, dim = 9;
  auto x = randn(static_cast<size_t>(rows * dim), 24);
  auto w = randn(static_cast<size_t>(dim), 25, 0.1f);
  std::vector<float> y(x.size());
  abl::cpu::rmsnorm(x.data(), w.data(), y.data(), rows, dim, 1e-6f, 1.0f);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i) ss += x[r * dim + i] * x[r * dim + i];
    const double inv = 1.0 / std::sqrt(ss / dim + 1e-6);
    for (int64_t i = 0; i < dim; ++i) EXPECT_NEAR(y[r * dim + i], (1.0 + w[i]) * x[r * dim + i] * inv, 1e-5);
  }
  std::vector<float> g = {-3.0f, -0.5f, 0.0f, 1.0f, 4.0f}, u = {2.0f, 1.0f, 7.0f, -1.0f, 0.5f}, a(5);
  abl::cpu::geglu(g.data(), u.data(), a.data(), 5);
  for (size_t i = 0; i < g.size(); ++i) {
    const double xg = g[i];
    const double gelu = 0.5 * xg * (1 + std::tanh(std::sqrt(2 / M_PI) * (xg + 0.044715 * xg * xg * xg)));
    EXPECT_NEAR(a[i], gelu * u[i], 1e-6) << i;
  }
  std::vector<float> c = {-100.0f, -1.0f, 0.0f, 2.0f, 100.0f};
  abl::cpu::scale(c.data(), 0.5f, 5);
  EXPECT_EQ(c, (std::vector<float>{-50.0f, -0.5f, 0.0f, 1.0f, 50.0f}));
  // Ministral 3's query scaling: 1 + beta·log(1 + floor(pos / period)) per row.
  std::vector<float> q(4 * 3, 2.0f);
  const int64_t qpos[4] = {0, 7, 8, 100};
  abl::cpu::scale_by_position(q.data(), qpos, 4, 3, 0.5f, 8);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(q[static_cast<size_t>(i)], 2.0f);
    EXPECT_EQ(q[static_cast<size_t>(3 + i)], 2.0f);
    EXPECT_NEAR(q[static_cast<size_t>(6 + i)], 2.0 * (1 + 0.5 * std::log(2.0)), 1e-6);
    EXPECT_NEAR(q[static_cast<size_t>(9 + i)], 2.0 * (1 + 0.5 * std::log(13.0)), 1e-6);
  }
  // Llama 4's temperature tuning: log1p(floor((pos + 1) / floor_scale)) · attn_scale + 1
  std::vector<float> q4(4, 2.0f);
  abl::cpu::scale_by_position(q4.data(), qpos, 4, 1, 0.5f, 8, 1);
  EXPECT_EQ(q4[0], 2.0f);
  EXPECT_NEAR(q4[1], 2.0 * (1 + 0.5 * std::log(2.0)), 1e-6);  // position 7: (7 + 1) / 8 = 1
  EXPECT_NEAR(q4[2], 2.0 * (1 + 0.5 * std::log(2.0)), 1e-6);
  EXPECT_NEAR(q4[3], 2.0 * (1 + 0.5 * std::log(13.0)), 1e-6);
  // the q/k L2 norm of Llama 4: an RMSNorm without weight
  std::vector<float> l2 = {3.0f, 4.0f};
  abl::cpu::rmsnorm(l2.data(), nullptr, l2.data(), 1, 2, 0.0f);
  EXPECT_NEAR(l2[0], 3.0 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(l2[1], 4.0 / std::sqrt(12.5), 1e-6);
  abl::cpu::softcap(c.data(), 30.0f, 5);
  EXPECT_NEAR(c[0], 30.0 * std::tanh(-50.0 / 30.0), 1e-5);
  EXPECT_NEAR(c[3], 30.0 * std::tanh(1.0 / 30.0), 1e-6);
  EXPECT_EQ(c[2], 0.0f);
  // RoPE with an attention factor is the plain rotation scaled by it.
  const int64_t T = 2, heads = 3, HD = 8;
  auto r1 = randn(static_cast<size_t>(T * heads * HD), 26);
  auto r2 = r1;
  const int64_t pos[T] = {3, 40};
  const float inv[4] = {1.0f, 0.3f, 0.05f, 0.001f};
  abl::cpu::rope(r1.data(), pos, T, heads, HD, inv);
  abl::cpu::rope(r2.data(), pos, T, heads, HD, inv, 1.19f);
  for (size_t i = 0; i < r1.size(); ++i) EXPECT_NEAR(r2[i], 1.19f * r1[i], 1e-5);
}

// LongRoPE's second table: a token with table row 1 rotates exactly as a separate call with the
// second frequencies; row 0 tokens as a call with the first.
TEST(Ops, RopeTableRowPerToken) {
  const int64_t T = 3, heads = 2, HD = 8;
  const auto x = randn(static_cast<size_t>(T * heads * HD), 27);
  const int64_t pos[T] = {5, 17, 4000};
  const float tables[8] = {1.0f, 0.3f, 0.05f, 0.001f, 0.7f, 0.2f, 0.01f, 0.0002f};
  const int32_t row[T] = {0, 1, 1};
  auto mixed = x, all0 = x, all1 = x;
  abl::cpu::rope(mixed.data(), pos, T, heads, HD, tables, 1.25f, row);
  abl::cpu::rope(all0.data(), pos, T, heads, HD, tables, 1.25f);
  abl::cpu::rope(all1.data(), pos, T, heads, HD, tables + HD / 2, 1.25f);
  const size_t per_token = static_cast<size_t>(heads * HD);
  for (size_t i = 0; i < mixed.size(); ++i) {
    EXPECT_EQ(mixed[i], (row[i / per_token] ? all1 : all0)[i]) << "element " << i;
  }
  EXPECT_NE(all0[per_token + 1], all1[per_token + 1]);  // the tables differ where it is checked
}

// The partial-rotary op tests: three tokens of two heads of HD = 10 dims, the first R = 6 rotating.
constexpr int64_t kT = 3, kHeads = 2, kHD = 10, kR = 6;
struct PartialRope {
  std::vector<float> x;  // (kT, kHeads, kHD)
  int64_t pos[kT];
  float inv[kR / 2];
};

// Partial rotary (Phi-4-mini): the first R dims of each head rotate as a head of R dims would,
// pairs (i, i + R/2); the other HD - R dims are left as they were.
TEST(Ops, RopeRotatesTheFirstRotaryDimsOnly) {
  const PartialRope c{randn(static_cast<size_t>(kT * kHeads * kHD), 28), {0, 9, 300}, {1.0f, 0.2f, 0.01f}};
  auto part = c.x;
  abl::cpu::rope(part.data(), c.pos, kT, kHeads, kHD, c.inv, 1.1f, nullptr, kR);
  std::vector<float> heads_of_r;  // the leading R dims of every head, as heads of their own
  for (int64_t r = 0; r < kT * kHeads; ++r) {
    heads_of_r.insert(heads_of_r.end(), c.x.begin() + r * kHD, c.x.begin() + r * kHD + kR);
  }
  abl::cpu::rope(heads_of_r.data(), c.pos, kT, kHeads, kR, c.inv, 1.1f);
  for (int64_t r = 0; r < kT * kHeads; ++r) {
    for (int64_t d = 0; d < kHD; ++d) {
      const size_t i = static_cast<size_t>(r * kHD + d);
      const float want = d < kR ? heads_of_r[static_cast<size_t>(r * kR + d)] : c.x[i];
      EXPECT_EQ(part[i], want) << "head row " << r << " dim " << d;
    }
  }
  EXPECT_NE(part[static_cast<size_t>(kHD + 1)], c.x[static_cast<size_t>(kHD + 1)]);  // position 0 is the identity
}

// GLM's interleaved layout: pair i is dims (2i, 2i + 1) of the first R, with frequency inv[i]; it
// equals the rotate-half layout on a head whose rotary dims are permuted to (0, 2, ..., 1, 3, ...).
TEST(Ops, RopeInterleavedPairsAdjacentDims) {
  const PartialRope c{randn(static_cast<size_t>(kT * kHeads * kHD), 29), {0, 7, 123}, {1.0f, 0.3f, 0.02f}};
  auto y = c.x;
  abl::cpu::rope(y.data(), c.pos, kT, kHeads, kHD, c.inv, 1.25f, nullptr, kR, /*interleaved=*/true);
  const int64_t order[kHD] = {0, 2, 4, 1, 3, 5, 6, 7, 8, 9};
  std::vector<float> halves(c.x.size());  // rotary dims permuted into the rotate-half layout
  for (int64_t r = 0; r < kT * kHeads; ++r) {
    for (int64_t d = 0; d < kHD; ++d) {
      halves[static_cast<size_t>(r * kHD + d)] = c.x[static_cast<size_t>(r * kHD + order[d])];
    }
  }
  abl::cpu::rope(halves.data(), c.pos, kT, kHeads, kHD, c.inv, 1.25f, nullptr, kR);
  for (int64_t r = 0; r < kT * kHeads; ++r) {
    const int64_t t = r / kHeads;
    for (int64_t d = 0; d < kHD; ++d) {
      EXPECT_EQ(y[static_cast<size_t>(r * kHD + order[d])], halves[static_cast<size_t>(r * kHD + d)]) << r << " " << d;
    }
    for (int64_t i = 0; i < kR / 2; ++i) {  // and the formula itself, pair (2i, 2i + 1)
      const double a = static_cast<double>(static_cast<float>(c.pos[t]) * c.inv[i]);
      const float* xh = &c.x[static_cast<size_t>(r * kHD)];
      EXPECT_NEAR(y[static_cast<size_t>(r * kHD + 2 * i)], 1.25 * (xh[2 * i] * std::cos(a) - xh[2 * i + 1] * std::sin(a)),
                  1e-5);
      EXPECT_NEAR(y[static_cast<size_t>(r * kHD + 2 * i + 1)],
                  1.25 * (xh[2 * i + 1] * std::cos(a) + xh[2 * i] * std::sin(a)), 1e-5);
    }
  }
}

TEST(Ops, EmbeddingRejectsOutOfRangeToken) {
  std::vector<float> table(6, 1.0f), out(4);
  const int32_t ok[2] = {0, 2}, bad[1] = {3};
  abl::cpu::embedding(ok, 2, table.data(), 3, 2, out.data());
  EXPECT_THROW(abl::cpu::embedding(bad, 1, table.data(), 3, 2, out.data()), std::exception);
}

TEST(Ops, SoftmaxRouterTopk) {
  const float logits[4] = {0.0f, 1.0f, 2.0f, 3.0f};
  double p[4], sum = 0;
  for (int e = 0; e < 4; ++e) sum += (p[e] = std::exp(static_cast<double>(logits[e])));
  for (double& v : p) v /= sum;
  int32_t ids[2];
  float w[2];
  abl::RouterConfig r;
  abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
  EXPECT_EQ(ids[0], 3);
  EXPECT_EQ(ids[1], 2);
  EXPECT_NEAR(w[0], p[3], 1e-6);
  EXPECT_NEAR(w[1], p[2], 1e-6);
  r.renormalize = true;
  abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
  EXPECT_NEAR(w[0], p[3] / (p[3] + p[2]), 1e-6);
  EXPECT_NEAR(w[1], p[2] / (p[3] + p[2]), 1e-6);
  // Gemma 4's per_expert_scale: each chosen weight times its expert's, after the renormalisation (the choice as before)
  const float per_expert[4] = {0.5f, 0.25f, 3.0f, 2.0f};
  r.expert_scale = per_expert;
  abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
  EXPECT_EQ(ids[0], 3);
  EXPECT_EQ(ids[1], 2);
  EXPECT_NEAR(w[0], 2.0 * p[3] / (p[3] + p[2]), 1e-6);
  EXPECT_NEAR(w[1], 3.0 * p[2] / (p[3] + p[2]), 1e-6);
}

// Phi-3.5-MoE's sparsemixer (router.h), by hand: with 2·eps = 0.2 the first pick (logit 2.0) shares
// its softmax with the logits within 20 % of it (1.7: (2 − 1.7) / 2 = 0.15), not with 1.5 (0.25); the
// second (1.7) with those within 20 % of 1.7 among the rest, measured against max(|x|, 1.7): 1.5
// ((1.7 − 1.5) / 1.7 = 0.118) but not 1.3 (0.235) nor −1.0 (2.7 / 1.7).
TEST(Ops, SparsemixerRouter) {
  const float logits[5] = {1.5f, 2.0f, -1.0f, 1.7f, 1.3f};
  abl::RouterConfig r;
  r.sparsemixer = true;
  r.jitter_eps = 0.1f;
  int32_t ids[2];
  float w[2];
  abl::cpu::router_topk(logits, 1, 5, 2, r, ids, w);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 3);
  EXPECT_NEAR(w[0], 1.0 / (1.0 + std::exp(1.7 - 2.0)), 1e-6);
  EXPECT_NEAR(w[1], 1.0 / (1.0 + std::exp(1.5 - 1.7)), 1e-6);
  // eps 0: each pick alone in its softmax (weight 1); a wide eps: plain softmaxes over the free experts
  r.jitter_eps = 0.0f;
  abl::cpu::router_topk(logits, 1, 5, 2, r, ids, w);
  EXPECT_FLOAT_EQ(w[0], 1.0f);
  EXPECT_FLOAT_EQ(w[1], 1.0f);
  r.jitter_eps = 10.0f;
  abl::cpu::router_topk(logits, 1, 5, 2, r, ids, w);
  double all = 0.0, rest = 0.0;
  for (int e = 0; e < 5; ++e) all += std::exp(static_cast<double>(logits[e]) - 2.0);
  for (int e = 0; e < 5; ++e) rest += e == 1 ? 0.0 : std::exp(static_cast<double>(logits[e]) - 1.7);
  EXPECT_NEAR(w[0], 1.0 / all, 1e-6);
  EXPECT_NEAR(w[1], 1.0 / rest, 1e-6);
  // top-2 only, as transformers' sparsemixer
  int32_t ids3[3];
  float w3[3];
  EXPECT_THROW(abl::cpu::router_topk(logits, 1, 5, 3, r, ids3, w3), std::exception);
}

// GLM-4.5's router (router.h): the bias ranks but does not weigh, the best group by the sum of its two
// best, and transformers' 0.0 for the dropped groups, which a negative c of the kept group loses to.
TEST(Ops, SigmoidRouterBiasGroupsAndScale) {
  auto sig = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  abl::RouterConfig r;
  r.sigmoid = true;
  r.groups = 2;  // experts {0, 1} and {2, 3}
  r.topk_groups = 1;
  r.renormalize = true;
  r.scale = 2.5f;
  int32_t ids[2];
  float w[2];
  {
    // c = s + bias = {0.73, 0.62, 1.0, -1.5}: group 0 scores 1.35, group 1 -0.5, so expert 2 (the best
    // c) is dropped with its group; the weights are s, not c.
    const float logits[4] = {1.0f, 0.5f, 0.0f, 0.0f}, bias[4] = {0.0f, 0.0f, 0.5f, -2.0f};
    r.bias = bias;
    abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
    EXPECT_EQ(ids[0], 0);
    EXPECT_EQ(ids[1], 1);
    const double s0 = sig(1.0), s1 = sig(0.5);
    EXPECT_NEAR(w[0], 2.5 * s0 / (s0 + s1), 1e-6);
    EXPECT_NEAR(w[1], 2.5 * s1 / (s0 + s1), 1e-6);
    r.renormalize = false;
    abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
    EXPECT_NEAR(w[0], 2.5 * s0, 1e-6);
    EXPECT_NEAR(w[1], 2.5 * s1, 1e-6);
    r.renormalize = true;
  }
  {
    // c = {1.0, -1.0, -0.1, -0.1}: group 0 (0.0) beats group 1 (-0.2), and the dropped experts' 0.0
    // beats expert 1's -1.0: the second choice is expert 2, the lower id of the tie.
    const float logits[4] = {0.0f, 0.0f, 0.0f, 0.0f}, bias[4] = {0.5f, -1.5f, -0.6f, -0.6f};
    r.bias = bias;
    abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
    EXPECT_EQ(ids[0], 0);
    EXPECT_EQ(ids[1], 2);
    EXPECT_NEAR(w[0], 1.25, 1e-6);
    EXPECT_NEAR(w[1], 1.25, 1e-6);
  }
  {
    // LFM2-MoE's renormalisation: by (sum + 1e-6), which a sum of small sigmoids feels
    const float logits[4] = {-12.0f, -12.5f, -13.0f, -14.0f}, bias[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    r.bias = bias;
    r.groups = 1;
    r.scale = 1.0f;
    r.norm_eps = 1e-6f;
    abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
    const double s0 = sig(-12.0), s1 = sig(-12.5);
    EXPECT_NEAR(w[0], s0 / (s0 + s1 + 1e-6), 1e-6);
    EXPECT_LT(w[0] + w[1], 0.99);  // 1e-20 would give 1
    r.norm_eps = 1e-20f;
    r.groups = 2;
    r.scale = 2.5f;
  }
  r.groups = 3;  // 4 experts do not split into 3 groups
  EXPECT_THROW(abl::cpu::router_topk(nullptr, 1, 4, 2, r, ids, w), std::exception);
}

// Llama 4's router (Llama4Router): the top-k logits, weighted by their sigmoid, not renormalised; the
// logits rank, so two whose sigmoids both round to 1 keep their order.
TEST(Ops, SigmoidRouterWithoutBiasRanksTheLogits) {
  abl::RouterConfig r;
  r.sigmoid = true;
  const float logits[4] = {30.0f, 40.0f, -1.0f, 0.5f};
  int32_t ids[2];
  float w[2];
  abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 0);
  EXPECT_EQ(w[0], 1.0f);
  EXPECT_EQ(w[1], 1.0f);
  const float small[4] = {-2.0f, 0.25f, 1.0f, -0.5f};
  abl::cpu::router_topk(small, 1, 4, 2, r, ids, w);
  EXPECT_EQ(ids[0], 2);
  EXPECT_EQ(ids[1], 1);
  EXPECT_NEAR(w[0], 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(w[1], 1.0 / (1.0 + std::exp(-0.25)), 1e-6);
}

// ERNIE 4.5's router (router.h; Ernie4_5_MoeSparseMoeBlock): softmax p, the k largest p + bias chosen,
// weighted by their p renormalised — the bias steers the choice only.
TEST(Ops, SoftmaxRouterChoosesByBiasedScores) {
  const float logits[4] = {2.0f, 1.0f, 0.5f, 0.0f}, bias[4] = {0.0f, -0.5f, 0.4f, 0.0f};
  double p[4], sum = 0;
  for (int e = 0; e < 4; ++e) sum += (p[e] = std::exp(static_cast<double>(logits[e])));
  for (double& v : p) v /= sum;
  ASSERT_GT(p[1], p[2]);  // without the bias expert 1 would be second
  ASSERT_GT(p[2] + 0.4, p[1] - 0.5);
  abl::RouterConfig r;
  r.renormalize = true;
  r.bias = bias;
  int32_t ids[2];
  float w[2];
  abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 2);
  EXPECT_NEAR(w[0], p[0] / (p[0] + p[2]), 1e-6);
  EXPECT_NEAR(w[1], p[2] / (p[0] + p[2]), 1e-6);
  // a bias large enough puts expert 2 first; the weights stay p, not p + bias
  const float big[4] = {0.0f, 0.0f, 1.0f, 0.0f};
  r.bias = big;
  r.renormalize = false;
  abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
  EXPECT_EQ(ids[0], 2);
  EXPECT_EQ(ids[1], 0);
  EXPECT_NEAR(w[0], p[2], 1e-6);
  EXPECT_NEAR(w[1], p[0], 1e-6);
  // no bias: the plain softmax router
  r.bias = nullptr;
  abl::cpu::router_topk(logits, 1, 4, 2, r, ids, w);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 1);
}

// DeepSeek-V2's group_limited_greedy (router.h; DeepseekV2Moe.route_tokens_to_experts): softmax p, a group
// scored by its largest p, the other groups' p masked to 0, the k largest p kept, not renormalised, scaled.
TEST(Ops, SoftmaxRouterGroupsByTheirBestExpert) {
  // experts {0, 1}, {2, 3}, {4, 5}: group 1 holds the single best expert (p of logit 2.0), group 0
  // the best pair (1.5 + 1.5 > 2.0 + 0.0 in logits, and in p); the max keeps group 1, the pair sum group 0.
  const float logits[6] = {1.5f, 1.5f, 2.0f, -3.0f, 0.0f, 0.0f};
  double p[6], sum = 0;
  for (int e = 0; e < 6; ++e) sum += (p[e] = std::exp(static_cast<double>(logits[e])));
  for (double& v : p) v /= sum;
  ASSERT_GT(p[0] + p[1], p[2] + p[3]);
  abl::RouterConfig r;
  r.groups = 3;
  r.topk_groups = 1;
  r.group_max = true;
  r.scale = 16.0f;
  int32_t ids[2];
  float w[2];
  abl::cpu::router_topk(logits, 1, 6, 2, r, ids, w);
  EXPECT_EQ(ids[0], 2);
  EXPECT_EQ(ids[1], 3);  // the weak expert of the kept group beats the masked 0.0 of the others
  EXPECT_NEAR(w[0], 16.0 * p[2], 1e-5);
  EXPECT_NEAR(w[1], 16.0 * p[3], 1e-6);
  // the same router scoring groups by their two best (V3's rule) keeps group 0
  r.group_max = false;
  abl::cpu::router_topk(logits, 1, 6, 2, r, ids, w);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 1);
  EXPECT_NEAR(w[0], 16.0 * p[0], 1e-5);
  // two of three groups kept: the best p overall from groups 1 and 0, greedy over them
  r.group_max = true;
  r.topk_groups = 2;
  abl::cpu::router_topk(logits, 1, 6, 2, r, ids, w);
  EXPECT_EQ(ids[0], 2);
  EXPECT_EQ(ids[1], 0);  // p0 = p1: the lower id
  // groups of one expert are valid under the max, not under the pair sum
  r.groups = 6;
  r.topk_groups = 3;
  EXPECT_NO_THROW(abl::cpu::router_topk(logits, 1, 6, 2, r, ids, w));
  EXPECT_EQ(ids[0], 2);
  r.group_max = false;
  EXPECT_THROW(abl::cpu::router_topk(logits, 1, 6, 2, r, ids, w), std::exception);
}
