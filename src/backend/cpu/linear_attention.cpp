// Linear attention ops (Qwen3-Next / Qwen3.5's gated delta rule, models/qwen3_next
// Qwen3NextGatedDeltaNet; Granite 4.0-H's Mamba-2, models/granitemoehybrid GraniteMoeHybridMambaLayer; LFM2's short
// convolution, models/lfm2 Lfm2ShortConv): the causal convs with their state, the recurrences token by token, the gated output norms. The recurrences run in
// their per-token form for prompts too (transformers runs prompts through torch_chunk_gated_delta_rule and
// Mamba-2's chunked SSD, the same sums regrouped in chunks: equal up to rounding).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "abl/backend/cpu/ops.h"
#include "abl/core/error.h"

namespace abl::cpu {

namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float silu(float x) { return x * sigmoid(x); }
// F.softplus(x) with beta 1 and threshold 20: x itself above it
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

bool starts_fresh(const AttnSeq& q) { return q.kv_len == q.q_len; }

// x(n) · rsqrt(Σx² + 1e-6) (l2norm of modeling_qwen3_next, as FLA's)
void l2norm(const float* x, float* y, int64_t n) {
  float ss = 0.0f;
  for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const float r = 1.0f / std::sqrt(ss + 1e-6f);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * r;
}

// The causal depthwise conv of each channel over each sequence's tokens with its state (the last K − 1 inputs;
// zeros at a sequence's start): in(t, c) is the channel's input at token t, store(t, c, Σ_j w(c, j)·window_j)
// takes the result (after in(t, c) was read: in place is fine). Shared by the SiLU conv and LFM2's short conv.
template <class In, class Store>
void conv_over_tokens(const float* w, const AttnSeq* seqs, int64_t B, int64_t C, int64_t K, const DeltaRuleState& state,
                      In in, Store store) {
  const int64_t P = K - 1;
  for (int64_t s = 0; s < B; ++s) {
    const AttnSeq& q = seqs[s];
    float* conv = state.conv + state.slots[s] * C * P;
    if (starts_fresh(q)) std::memset(conv, 0, sizeof(float) * static_cast<size_t>(C * P));
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < C; ++c) {
      float win[64];  // the channel's last K − 1 inputs, then the current one
      float* past = conv + c * P;
      for (int64_t j = 0; j < P; ++j) win[j] = past[j];
      const float* wc = w + c * K;
      for (int64_t t = q.q_begin; t < q.q_begin + q.q_len; ++t) {
        win[P] = in(t, c);
        float acc = 0.0f;
        for (int64_t j = 0; j < K; ++j) acc += wc[j] * win[j];
        for (int64_t j = 0; j < P; ++j) win[j] = win[j + 1];
        store(t, c, acc);
      }
      for (int64_t j = 0; j < P; ++j) past[j] = win[j];
    }
  }
}

// x(rows, D) = RMSNorm of x·SiLU(z) then ·w (gate_first: Mamba-2's), or RMSNorm(x)·w·SiLU(z) (Qwen3-Next's);
// rows of D in `groups` spans (weight w + (r % groups)·D each): Zamba2RMSNormGated's groups.
template <bool kGateFirst>
void gated_rmsnorm(float* x, const float* w_all, const float* z, int64_t rows, int64_t D, float eps,
                   int64_t groups = 1) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float* xr = x + r * D;
    const float* zr = z + r * D;
    const float* w = w_all + (r % groups) * D;
    float ss = 0.0f;
    for (int64_t i = 0; i < D; ++i) {
      if (kGateFirst) xr[i] *= silu(zr[i]);
      ss += xr[i] * xr[i];
    }
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(D) + eps);
    for (int64_t i = 0; i < D; ++i) xr[i] = kGateFirst ? w[i] * (xr[i] * inv) : w[i] * (xr[i] * inv) * silu(zr[i]);
  }
}

}  // namespace

void causal_conv_silu(float* x, const float* w, const float* bias, const AttnSeq* seqs, int64_t B,
                      const DeltaRuleDims& d, const DeltaRuleState& state) {
  const int64_t C = d.channels();
  ABL_CHECK(d.K >= 1 && d.K <= 64, "causal conv of {} taps", d.K);
  conv_over_tokens(
      w, seqs, B, C, d.K, state, [&](int64_t t, int64_t c) { return x[t * C + c]; },
      [&](int64_t t, int64_t c, float acc) { x[t * C + c] = silu(bias ? acc + bias[c] : acc); });
}

void gated_delta_rule(const float* x, const float* ba, const float* a_log, const float* dt_bias, const AttnSeq* seqs,
                      int64_t B, const DeltaRuleDims& d, const DeltaRuleState& state, float* out) {
  const int64_t NK = d.NK, NV = d.NV, DK = d.DK, DV = d.DV, C = d.channels(), r = NV / NK;
  ABL_CHECK(NK > 0 && NV % NK == 0, "linear attention with {} value heads over {} key heads", NV, NK);
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(DK));
  const int64_t units = B * NV;
#pragma omp parallel
  {
    std::vector<float> qn(static_cast<size_t>(DK)), kn(static_cast<size_t>(DK)), delta(static_cast<size_t>(DV));
#pragma omp for schedule(dynamic)
    for (int64_t u = 0; u < units; ++u) {
      const int64_t s = u / NV, h = u % NV, kh = h / r;
      const AttnSeq& q = seqs[s];
      float* S = state.S + (state.slots[s] * NV + h) * DK * DV;  // (DK, DV)
      if (starts_fresh(q)) std::memset(S, 0, sizeof(float) * static_cast<size_t>(DK * DV));
      const float A = -std::exp(a_log[h]);
      for (int64_t t = q.q_begin; t < q.q_begin + q.q_len; ++t) {
        const float* xt = x + t * C;
        l2norm(xt + kh * DK, qn.data(), DK);
        l2norm(xt + NK * DK + kh * DK, kn.data(), DK);
        const float* v = xt + 2 * NK * DK + h * DV;
        const float beta = sigmoid(ba[t * 2 * NV + h]);
        const float decay = std::exp(A * softplus(ba[t * 2 * NV + NV + h] + dt_bias[h]));
        // S ← decay·S; delta = β(v − Sᵀk)
        for (int64_t j = 0; j < DV; ++j) delta[static_cast<size_t>(j)] = 0.0f;
        for (int64_t i = 0; i < DK; ++i) {
          float* Si = S + i * DV;
          const float ki = kn[static_cast<size_t>(i)];
          for (int64_t j = 0; j < DV; ++j) {
            Si[j] *= decay;
            delta[static_cast<size_t>(j)] += Si[j] * ki;
          }
        }
        for (int64_t j = 0; j < DV; ++j) delta[static_cast<size_t>(j)] = (v[j] - delta[static_cast<size_t>(j)]) * beta;
        // S += k ⊗ delta; out = Sᵀq·DK^−0.5
        float* o = out + t * NV * DV + h * DV;
        for (int64_t j = 0; j < DV; ++j) o[j] = 0.0f;
        for (int64_t i = 0; i < DK; ++i) {
          float* Si = S + i * DV;
          const float ki = kn[static_cast<size_t>(i)], qi = qn[static_cast<size_t>(i)] * q_scale;
          for (int64_t j = 0; j < DV; ++j) {
            Si[j] += ki * delta[static_cast<size_t>(j)];
            o[j] += Si[j] * qi;
          }
        }
      }
    }
  }
}

void rmsnorm_gated(float* x, const float* w, const float* z, int64_t rows, int64_t D, float eps) {
  gated_rmsnorm<false>(x, w, z, rows, D, eps);
}

void mamba2_scan(const float* x, const float* dt, const float* a_log, const float* dt_bias, const float* D,
                 const AttnSeq* seqs, int64_t B, const DeltaRuleDims& d, DtRange range, const DeltaRuleState& state,
                 float* out) {
  const int64_t G = d.NK, NV = d.NV, N = d.DK, P = d.DV, C = d.channels(), r = NV / G;
  ABL_CHECK(G > 0 && NV % G == 0, "Mamba-2 with {} heads in {} groups", NV, G);
  const int64_t units = B * NV;
#pragma omp parallel for schedule(dynamic)
  for (int64_t u = 0; u < units; ++u) {
    const int64_t s = u / NV, h = u % NV, g = h / r;
    const AttnSeq& q = seqs[s];
    float* S = state.S + (state.slots[s] * NV + h) * N * P;  // (N, P)
    if (starts_fresh(q)) std::memset(S, 0, sizeof(float) * static_cast<size_t>(N * P));
    const float A = -std::exp(a_log[h]);
    for (int64_t t = q.q_begin; t < q.q_begin + q.q_len; ++t) {
      const float* xh = x + t * C + h * P;
      const float* Bg = x + t * C + NV * P + g * N;
      const float* Cg = x + t * C + NV * P + G * N + g * N;
      const float step = std::min(std::max(softplus(dt[t * NV + h] + dt_bias[h]), range.min), range.max);
      const float decay = std::exp(step * A);
      float* o = out + t * NV * P + h * P;
      for (int64_t j = 0; j < P; ++j) o[j] = D[h] * xh[j];
      for (int64_t i = 0; i < N; ++i) {
        float* Si = S + i * P;
        const float bi = step * Bg[i], ci = Cg[i];
        for (int64_t j = 0; j < P; ++j) {
          Si[j] = Si[j] * decay + bi * xh[j];
          o[j] += Si[j] * ci;
        }
      }
    }
  }
}

void short_conv(const float* bcx, const float* w, const AttnSeq* seqs, int64_t B, const DeltaRuleDims& d,
                const DeltaRuleState& state, float* out) {
  const int64_t C = d.channels();
  ABL_CHECK(d.K >= 1 && d.K <= 64, "short conv of {} taps", d.K);
  conv_over_tokens(
      w, seqs, B, C, d.K, state, [&](int64_t t, int64_t c) { return bcx[t * 3 * C + c] * bcx[t * 3 * C + 2 * C + c]; },
      [&](int64_t t, int64_t c, float acc) { out[t * C + c] = bcx[t * 3 * C + C + c] * acc; });
}

void rmsnorm_of_gated(float* x, const float* w, const float* z, int64_t rows, int64_t D, int64_t groups, float eps) {
  ABL_CHECK(groups > 0 && D % groups == 0, "RMSNorm of gated rows of {} in {} groups", D, groups);
  gated_rmsnorm<true>(x, w, z, rows * groups, D / groups, eps, groups);
}

void mul_sigmoid(float* x, const float* g, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) x[i] *= sigmoid(g[i]);
}

}  // namespace abl::cpu
