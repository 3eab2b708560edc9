// The linear-attention ops (the gated delta rule of Qwen3-Next / Qwen3.5, Mamba-2's selective scan of
// Granite 4.0-H) against the formulas written out, and their state: a sequence split over passes, or sharing a pass with others, gives what one
// pass over it alone gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "abl/backend/cpu/ops.h"
#include "common/random_values.h"

namespace {

using abl::cpu::AttnSeq;
using abl::cpu::DeltaRuleDims;
using abl::cpu::DeltaRuleState;

std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) { return abl::testing::normal(n, scale, seed); }

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The states of `slots` sequences of a layer of dims d.
struct States {
  States(const DeltaRuleDims& d, int64_t slots)
      : conv(static_cast<size_t>(slots * d.channels() * (d.K - 1)), 7.0f),
        S(static_cast<size_t>(slots * d.NV * d.DK * d.DV), 7.0f) {}  // garbage: a fresh sequence must clear it
  DeltaRuleState view(const std::vector<int64_t>& slot_of) {
    return {conv.data(), S.data(), slot_of.data()};
  }
  std::vector<float> conv, S;
};

// conv + silu, then the delta rule, over the tokens `x` (T, C) and `ba` (T, 2NV) of the sequences `seqs`.
std::vector<float> mix(const DeltaRuleDims& d, std::vector<float> x, const std::vector<float>& ba,
                       const std::vector<float>& conv_w, const std::vector<float>& a_log, const std::vector<float>& dt,
                       const std::vector<AttnSeq>& seqs, const DeltaRuleState& st) {
  const int64_t T = static_cast<int64_t>(x.size()) / d.channels();
  abl::cpu::causal_conv_silu(x.data(), conv_w.data(), nullptr, seqs.data(), static_cast<int64_t>(seqs.size()), d, st);
  std::vector<float> out(static_cast<size_t>(T * d.NV * d.DV));
  abl::cpu::gated_delta_rule(x.data(), ba.data(), a_log.data(), dt.data(), seqs.data(),
                             static_cast<int64_t>(seqs.size()), d, st, out.data());
  return out;
}

TEST(LinearAttention, DeltaRuleFollowsTheRecurrence) {
  // One head of DK 2, DV 2, two tokens, the rule written out in doubles.
  const DeltaRuleDims d{1, 1, 2, 2, 1};
  const std::vector<float> x = {0.3f, -1.2f, 2.0f, 0.5f, 1.5f, -0.7f,    // q, k, v of token 0
                                -0.4f, 0.9f, -1.0f, 1.1f, 0.2f, 0.8f};   // token 1
  const std::vector<float> ba = {0.4f, -0.3f, -1.1f, 0.6f};              // b, a of each token
  const std::vector<float> a_log = {0.2f}, dt = {0.9f};
  std::vector<int64_t> slot = {0};
  States st(d, 1);
  std::vector<float> out(4);
  const std::vector<AttnSeq> seqs = {{0, 2, 0, 2}};
  abl::cpu::gated_delta_rule(x.data(), ba.data(), a_log.data(), dt.data(), seqs.data(), 1, d, st.view(slot), out.data());

  double S[2][2] = {{0, 0}, {0, 0}};
  for (int t = 0; t < 2; ++t) {
    const float* xt = x.data() + t * 6;
    const double qn = std::sqrt(xt[0] * xt[0] + xt[1] * xt[1] + 1e-6), kn = std::sqrt(xt[2] * xt[2] + xt[3] * xt[3] + 1e-6);
    const double q[2] = {xt[0] / qn / std::sqrt(2.0), xt[1] / qn / std::sqrt(2.0)};
    const double k[2] = {xt[2] / kn, xt[3] / kn};
    const double beta = sigmoid(ba[t * 2]);
    const double g = -std::exp(0.2) * std::log1p(std::exp(ba[t * 2 + 1] + 0.9));
    for (auto& row : S) {
      for (double& s : row) s *= std::exp(g);
    }
    for (int j = 0; j < 2; ++j) {
      const double delta = (xt[4 + j] - (S[0][j] * k[0] + S[1][j] * k[1])) * beta;
      S[0][j] += k[0] * delta;
      S[1][j] += k[1] * delta;
    }
    for (int j = 0; j < 2; ++j) EXPECT_NEAR(out[t * 2 + j], S[0][j] * q[0] + S[1][j] * q[1], 1e-6) << t << " " << j;
  }
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) EXPECT_NEAR(st.S[static_cast<size_t>(i * 2 + j)], S[i][j], 1e-6);
  }
}

TEST(LinearAttention, ConvIsCausalWithItsState) {
  // Three channels (NK 1, DK 1, NV 1, DV 1), kernel 3: y_t = silu(w0 x_{t-2} + w1 x_{t-1} + w2 x_t).
  const DeltaRuleDims d{1, 1, 1, 1, 3};
  std::vector<float> x = randn(5 * 3, 11);
  const std::vector<float> w = randn(3 * 3, 12);
  std::vector<int64_t> slot = {0};
  States st(d, 1);
  const std::vector<float> in = x;
  const std::vector<AttnSeq> seqs = {{0, 5, 0, 5}};
  abl::cpu::causal_conv_silu(x.data(), w.data(), nullptr, seqs.data(), 1, d, st.view(slot));
  for (int t = 0; t < 5; ++t) {
    for (int c = 0; c < 3; ++c) {
      double acc = 0;
      for (int j = 0; j < 3; ++j) {
        const int src = t - 2 + j;
        if (src >= 0) acc += w[static_cast<size_t>(c * 3 + j)] * in[static_cast<size_t>(src * 3 + c)];
      }
      EXPECT_NEAR(x[static_cast<size_t>(t * 3 + c)], acc * sigmoid(acc), 1e-6) << t << " " << c;
    }
  }
  // the state: each channel's last two inputs, oldest first
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(st.conv[static_cast<size_t>(c * 2)], in[static_cast<size_t>(3 * 3 + c)]);
    EXPECT_EQ(st.conv[static_cast<size_t>(c * 2 + 1)], in[static_cast<size_t>(4 * 3 + c)]);
  }
}

struct Layer {
  DeltaRuleDims d{2, 4, 3, 5, 4};  // value heads read key heads 0, 0, 1, 1
  int64_t T = 9;
  std::vector<float> x = randn(static_cast<size_t>(T * d.channels()), 21);
  std::vector<float> ba = randn(static_cast<size_t>(T * 2 * d.NV), 22);
  std::vector<float> conv_w = randn(static_cast<size_t>(d.channels() * d.K), 23, 0.5f);
  std::vector<float> a_log = randn(static_cast<size_t>(d.NV), 24, 0.5f);
  std::vector<float> dt = randn(static_cast<size_t>(d.NV), 25, 0.5f);
  // rows [a, b) of a (T, width) array
  static std::vector<float> rows(const std::vector<float>& v, int64_t width, int64_t a, int64_t b) {
    return {v.begin() + a * width, v.begin() + b * width};
  }
};

TEST(LinearAttention, SequenceSplitOverPassesEqualsOnePass) {
  Layer L;
  const int64_t C = L.d.channels(), W = L.d.NV * L.d.DV;
  std::vector<int64_t> slot = {0};
  States whole(L.d, 1), split(L.d, 1);
  const std::vector<float> want = mix(L.d, L.x, L.ba, L.conv_w, L.a_log, L.dt, {{0, L.T, 0, L.T}}, whole.view(slot));
  // prompt of 5, then one token, then 3 (kv_len counts the tokens before: the sequence continues)
  std::vector<float> got;
  const int64_t cuts[] = {0, 5, 6, 9};
  for (int i = 0; i < 3; ++i) {
    const int64_t a = cuts[i], b = cuts[i + 1];
    const std::vector<float> part = mix(L.d, Layer::rows(L.x, C, a, b), Layer::rows(L.ba, 2 * L.d.NV, a, b), L.conv_w,
                                        L.a_log, L.dt, {{0, b - a, 0, b}}, split.view(slot));
    got.insert(got.end(), part.begin(), part.end());
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i / W;
  for (size_t i = 0; i < whole.S.size(); ++i) EXPECT_NEAR(split.S[i], whole.S[i], 1e-5);
  EXPECT_EQ(split.conv, whole.conv);
}

TEST(LinearAttention, SequencesInOnePassKeepTheirOwnSlots) {
  Layer L;
  const int64_t C = L.d.channels(), W = L.d.NV * L.d.DV;
  // alone: tokens [0, 4) in slot 0 and [4, 9) in slot 0 of another state
  std::vector<int64_t> one = {0};
  States s1(L.d, 1), s2(L.d, 1);
  std::vector<float> want = mix(L.d, Layer::rows(L.x, C, 0, 4), Layer::rows(L.ba, 2 * L.d.NV, 0, 4), L.conv_w, L.a_log,
                                L.dt, {{0, 4, 0, 4}}, s1.view(one));
  const std::vector<float> second = mix(L.d, Layer::rows(L.x, C, 4, 9), Layer::rows(L.ba, 2 * L.d.NV, 4, 9), L.conv_w,
                                        L.a_log, L.dt, {{0, 5, 0, 5}}, s2.view(one));
  want.insert(want.end(), second.begin(), second.end());
  // together, in slots 2 and 0 of a state of 3 (slot 1 untouched)
  std::vector<int64_t> slots = {2, 0};
  States both(L.d, 3);
  const std::vector<float> got =
      mix(L.d, L.x, L.ba, L.conv_w, L.a_log, L.dt, {{0, 4, 0, 4}, {4, 5, 40, 5}}, both.view(slots));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i / W;
  const size_t per = static_cast<size_t>(L.d.NV * L.d.DK * L.d.DV);
  for (size_t i = 0; i < per; ++i) {
    EXPECT_EQ(both.S[2 * per + i], s1.S[i]);
    EXPECT_EQ(both.S[i], s2.S[i]);
    EXPECT_EQ(both.S[per + i], 7.0f);
  }
}

TEST(LinearAttention, GatedNormAndSigmoidGate) {
  std::vector<float> x = {1.0f, -2.0f, 3.0f, 0.5f, 0.25f, -1.0f};
  const std::vector<float> z = {0.3f, -0.6f, 1.2f, 2.0f, -0.1f, 0.0f}, w = {0.5f, 1.5f, -1.0f};
  const std::vector<float> in = x;
  abl::cpu::rmsnorm_gated(x.data(), w.data(), z.data(), 2, 3, 1e-6f);
  for (int r = 0; r < 2; ++r) {
    double ss = 0;
    for (int i = 0; i < 3; ++i) ss += in[static_cast<size_t>(r * 3 + i)] * in[static_cast<size_t>(r * 3 + i)];
    const double inv = 1.0 / std::sqrt(ss / 3 + 1e-6);
    for (int i = 0; i < 3; ++i) {
      const size_t k = static_cast<size_t>(r * 3 + i);
      EXPECT_NEAR(x[k], w[static_cast<size_t>(i)] * in[k] * inv * z[k] * sigmoid(z[k]), 1e-6);
    }
  }
  std::vector<float> y = in;
  abl::cpu::mul_sigmoid(y.data(), z.data(), 6);
  for (size_t k = 0; k < 6; ++k) EXPECT_NEAR(y[k], in[k] * sigmoid(z[k]), 1e-7);
}

TEST(LinearAttention, Mamba2ScanFollowsTheRecurrence) {
  // Two groups (NK 2) of B and C of 2 (DK), four heads (NV 4) of 2 (DV): heads 0, 1 read group 0, heads 2, 3
  // group 1. Three tokens, the scan written out in doubles; dt clamped to [0.05, 1.5].
  const DeltaRuleDims d{2, 4, 2, 2, 1};
  const int64_t C = d.channels(), T = 3;  // x (8) | B (4) | C (4)
  const std::vector<float> x = randn(static_cast<size_t>(T * C), 31);
  const std::vector<float> dt = randn(static_cast<size_t>(T * d.NV), 32, 1.5f);
  const std::vector<float> a_log = {0.1f, -0.5f, 0.7f, 1.2f}, dt_bias = {0.3f, -0.2f, 0.0f, 0.9f};
  const std::vector<float> D = {1.0f, -0.5f, 0.25f, 2.0f};
  std::vector<int64_t> slot = {0};
  States st(d, 1);
  std::vector<float> out(static_cast<size_t>(T * d.NV * d.DV));
  const std::vector<AttnSeq> seqs = {{0, T, 0, T}};
  abl::cpu::mamba2_scan(x.data(), dt.data(), a_log.data(), dt_bias.data(), D.data(), seqs.data(), 1, d, {0.05f, 1.5f},
                        st.view(slot), out.data());
  for (int h = 0; h < 4; ++h) {
    const int g = h / 2;
    double S[2][2] = {{0, 0}, {0, 0}};  // (DK, DV)
    for (int t = 0; t < T; ++t) {
      const float* xt = x.data() + t * C;
      const double raw = double{dt[static_cast<size_t>(t * 4 + h)]} + dt_bias[static_cast<size_t>(h)];
      const double step = std::min(std::max(std::log1p(std::exp(raw)), 0.05), 1.5);
      const double decay = std::exp(-std::exp(a_log[static_cast<size_t>(h)]) * step);
      for (int j = 0; j < 2; ++j) {
        double y = D[static_cast<size_t>(h)] * xt[h * 2 + j];
        for (int i = 0; i < 2; ++i) {
          S[i][j] = S[i][j] * decay + step * xt[8 + g * 2 + i] * xt[h * 2 + j];
          y += S[i][j] * xt[12 + g * 2 + i];
        }
        EXPECT_NEAR(out[static_cast<size_t>(t * 8 + h * 2 + j)], y, 1e-5) << t << " " << h << " " << j;
      }
    }
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) EXPECT_NEAR(st.S[static_cast<size_t>(h * 4 + i * 2 + j)], S[i][j], 1e-5);
    }
  }
}

TEST(LinearAttention, Mamba2SequenceSplitOverPassesEqualsOnePass) {
  // The conv with a bias, then the scan, over 9 tokens at once or as 5 + 1 + 3 in the sequence's slot.
  const DeltaRuleDims d{2, 4, 3, 5, 4};
  const int64_t T = 9, C = d.channels(), W = d.NV * d.DV;
  const std::vector<float> x = randn(static_cast<size_t>(T * C), 41), dt = randn(static_cast<size_t>(T * d.NV), 42);
  const std::vector<float> conv_w = randn(static_cast<size_t>(C * d.K), 43, 0.5f), bias = randn(static_cast<size_t>(C), 44);
  const std::vector<float> a_log = randn(4, 45, 0.5f), dt_bias = randn(4, 46, 0.5f), D = randn(4, 47);
  const auto run = [&](int64_t a, int64_t b, States& st) {
    std::vector<int64_t> slot = {0};
    std::vector<float> xs(x.begin() + a * C, x.begin() + b * C);
    const std::vector<AttnSeq> seqs = {{0, b - a, 0, b}};
    abl::cpu::causal_conv_silu(xs.data(), conv_w.data(), bias.data(), seqs.data(), 1, d, st.view(slot));
    std::vector<float> out(static_cast<size_t>((b - a) * W));
    abl::cpu::mamba2_scan(xs.data(), dt.data() + a * d.NV, a_log.data(), dt_bias.data(), D.data(), seqs.data(), 1, d,
                          {0.0f, INFINITY}, st.view(slot), out.data());
    return out;
  };
  States whole(d, 1), split(d, 1);
  const std::vector<float> want = run(0, T, whole);
  std::vector<float> got;
  const int64_t cuts[] = {0, 5, 6, 9};
  for (int i = 0; i < 3; ++i) {
    const std::vector<float> part = run(cuts[i], cuts[i + 1], split);
    got.insert(got.end(), part.begin(), part.end());
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i / W;
  for (size_t i = 0; i < whole.S.size(); ++i) EXPECT_NEAR(split.S[i], whole.S[i], 1e-5);
  EXPECT_EQ(split.conv, whole.conv);
}

TEST(LinearAttention, ConvBiasJoinsBeforeTheSiLU) {
  const DeltaRuleDims d{1, 1, 1, 1, 2};  // three channels, kernel 2
  std::vector<float> x = randn(4 * 3, 51);
  const std::vector<float> w = randn(3 * 2, 52), bias = {0.5f, -1.0f, 2.0f}, in = x;
  std::vector<int64_t> slot = {0};
  States st(d, 1);
  const std::vector<AttnSeq> seqs = {{0, 4, 0, 4}};
  abl::cpu::causal_conv_silu(x.data(), w.data(), bias.data(), seqs.data(), 1, d, st.view(slot));
  for (int t = 0; t < 4; ++t) {
    for (int c = 0; c < 3; ++c) {
      double acc = bias[static_cast<size_t>(c)] + w[static_cast<size_t>(c * 2 + 1)] * in[static_cast<size_t>(t * 3 + c)];
      if (t > 0) acc += w[static_cast<size_t>(c * 2)] * in[static_cast<size_t>((t - 1) * 3 + c)];
      EXPECT_NEAR(x[static_cast<size_t>(t * 3 + c)], acc * sigmoid(acc), 1e-6) << t << " " << c;
    }
  }
}

TEST(LinearAttention, NormOfGatedMultipliesBeforeNormalising) {
  std::vector<float> x = {1.0f, -2.0f, 3.0f, 0.5f, 0.25f, -1.0f};
  const std::vector<float> z = {0.3f, -0.6f, 1.2f, 2.0f, -0.1f, 0.0f}, w = {0.5f, 1.5f, -1.0f};
  const std::vector<float> in = x;
  abl::cpu::rmsnorm_of_gated(x.data(), w.data(), z.data(), 2, 3, 1, 1e-6f);
  for (int r = 0; r < 2; ++r) {
    double g[3], ss = 0;
    for (int i = 0; i < 3; ++i) {
      const size_t k = static_cast<size_t>(r * 3 + i);
      g[i] = in[k] * z[k] * sigmoid(z[k]);
      ss += g[i] * g[i];
    }
    const double inv = 1.0 / std::sqrt(ss / 3 + 1e-6);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(x[static_cast<size_t>(r * 3 + i)], w[static_cast<size_t>(i)] * g[i] * inv, 1e-6);
  }
}

TEST(LinearAttention, NormOfGatedPerGroupNormalisesEachSpanApart) {
  // Zamba2RMSNormGated (Nemotron-H): rows of 6 in 2 groups of 3, each group its own RMS, w spanning the row.
  const std::vector<float> in = randn(2 * 6, 71), z = randn(2 * 6, 72), w = randn(6, 73);
  std::vector<float> x = in;
  abl::cpu::rmsnorm_of_gated(x.data(), w.data(), z.data(), 2, 6, 2, 1e-5f);
  for (int r = 0; r < 2; ++r) {
    for (int g = 0; g < 2; ++g) {
      double v[3], ss = 0;
      for (int i = 0; i < 3; ++i) {
        const size_t k = static_cast<size_t>(r * 6 + g * 3 + i);
        v[i] = in[k] * z[k] * sigmoid(z[k]);
        ss += v[i] * v[i];
      }
      const double inv = 1.0 / std::sqrt(ss / 3 + 1e-5);
      for (int i = 0; i < 3; ++i) {
        const size_t k = static_cast<size_t>(r * 6 + g * 3 + i);
        EXPECT_NEAR(x[k], w[static_cast<size_t>(g * 3 + i)] * v[i] * inv, 1e-5) << r << " " << g << " " << i;
      }
    }
  }
  EXPECT_THROW(abl::cpu::rmsnorm_of_gated(x.data(), w.data(), z.data(), 2, 6, 4, 1e-5f), abl::Error);
}

TEST(LinearAttention, ReluSquaredZeroesNegativesAndSquaresTheRest) {
  std::vector<float> x = {-2.0f, -0.0f, 0.0f, 0.5f, 3.0f};
  abl::cpu::relu_squared(x.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(x, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.25f, 9.0f}));
}

TEST(LinearAttention, ShortConvIsCausalOverBxTimesC) {
  // LFM2: three channels, kernel 3, five tokens of [B | C | x]: out = C ⊙ Σ_j w_j (B ⊙ x)_{t−2+j}; split 3 + 2 over
  // two passes in the sequence's slot gives the same, and the state keeps the last two B ⊙ x.
  const DeltaRuleDims d{0, 1, 0, 3, 3};
  const std::vector<float> bcx = randn(5 * 9, 61), w = randn(3 * 3, 62);
  const auto bx = [&](int t, int c) { return double{bcx[static_cast<size_t>(t * 9 + c)]} * bcx[static_cast<size_t>(t * 9 + 6 + c)]; };
  std::vector<int64_t> slot = {0};
  States whole(d, 1), split(d, 1);
  std::vector<float> out(5 * 3), parts(5 * 3);
  const std::vector<AttnSeq> all = {{0, 5, 0, 5}};
  abl::cpu::short_conv(bcx.data(), w.data(), all.data(), 1, d, whole.view(slot), out.data());
  const std::vector<AttnSeq> first = {{0, 3, 0, 3}}, second = {{0, 2, 0, 5}};
  abl::cpu::short_conv(bcx.data(), w.data(), first.data(), 1, d, split.view(slot), parts.data());
  abl::cpu::short_conv(bcx.data() + 3 * 9, w.data(), second.data(), 1, d, split.view(slot), parts.data() + 3 * 3);
  for (int t = 0; t < 5; ++t) {
    for (int c = 0; c < 3; ++c) {
      double acc = 0;
      for (int j = 0; j < 3; ++j) {
        if (t - 2 + j >= 0) acc += w[static_cast<size_t>(c * 3 + j)] * bx(t - 2 + j, c);
      }
      const size_t k = static_cast<size_t>(t * 3 + c);
      EXPECT_NEAR(out[k], bcx[static_cast<size_t>(t * 9 + 3 + c)] * acc, 1e-5) << t << " " << c;
      EXPECT_NEAR(parts[k], out[k], 1e-6) << t << " " << c;
    }
  }
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(whole.conv[static_cast<size_t>(c * 2)], bx(3, c), 1e-6);
    EXPECT_NEAR(whole.conv[static_cast<size_t>(c * 2 + 1)], bx(4, c), 1e-6);
  }
  EXPECT_EQ(split.conv, whole.conv);
}

}  // namespace
