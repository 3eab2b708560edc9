// RoPE inverse frequencies as transformers computes them (modeling_rope_utils): 1 / theta^(2i/HD)
// in fp32, then the rope scaling — llama3 (long wavelengths divided by `factor`, short ones kept,
// a smooth blend between), linear (all divided by `factor`), longrope (each divided by its short
// factor, or by its long factor in the second table, see ModelSpec::long_rope_after), yarn (a
// ramp between the frequencies kept and those divided by `factor`, _compute_yarn_parameters), proportional (Gemma 4:
// the leading frequencies of the whole head, zeros after them).
#include <algorithm>
#include <cmath>

#include "abl/core/error.h"
#include "abl/engine/rope_freqs.h"

namespace abl::engine {
namespace {

// base[i] = theta^(2i/R) in fp32, as torch computes `base ** (arange(0, R, 2) / R)`; R, the
// rotary dims, is the head dim unless the model rotates part of each head (transformers' `dim`).
std::vector<float> base_powers(double theta, int64_t R) {
  std::vector<float> base(static_cast<size_t>(R / 2));
  for (int64_t i = 0; i < R / 2; ++i) {
    const float expo = static_cast<float>(2 * i) / static_cast<float>(R);
    base[static_cast<size_t>(i)] = static_cast<float>(std::pow(static_cast<float>(theta), expo));
  }
  return base;
}

// LongRoPE: inv_freq = 1 / (ext_factors * base ** (arange(0, HD, 2) / HD)), all fp32.
std::vector<float> longrope_inv_freq(const model::ModelSpec& spec, const std::vector<double>& ext) {
  const std::vector<float> base = base_powers(spec.rope_theta, spec.rotary_dim());
  ABL_CHECK(ext.size() == base.size(), "{}: LongRoPE factor list of {} entries for {} rotary dims", spec.source,
            ext.size(), spec.rotary_dim());
  std::vector<float> f(base.size());
  for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f / (static_cast<float>(ext[i]) * base[i]);
  return f;
}

// YaRN: dimension pair i turns theta^(-2i/HD) * original / 2 pi times over the original context;
// pairs below `low` (turning more than beta_fast times) keep their frequency, those above `high`
// (fewer than beta_slow times) are divided by factor, a linear ramp in between — all in fp32 as
// torch computes it, the correction range in double as Python's math does.
std::vector<float> yarn_inv_freq(const model::ModelSpec& spec) {
  const model::RopeScaling& rs = spec.rope_scaling;
  const std::vector<float> pos = base_powers(spec.rope_theta, spec.rotary_dim());
  const double dim = static_cast<double>(spec.rotary_dim());
  const auto correction_dim = [&](double rotations) {
    return dim * std::log(static_cast<double>(rs.original_max_position_embeddings) / (rotations * 2.0 * M_PI)) /
           (2.0 * std::log(spec.rope_theta));
  };
  double low = correction_dim(rs.beta_fast), high = correction_dim(rs.beta_slow);
  if (rs.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, dim - 1.0);
  if (low == high) high += 0.001;  // as transformers: no division by zero
  const float lo = static_cast<float>(low), span = static_cast<float>(high - low);
  std::vector<float> f(pos.size());
  for (size_t i = 0; i < f.size(); ++i) {
    const float ramp = std::min(std::max((static_cast<float>(i) - lo) / span, 0.0f), 1.0f);
    const float keep = 1.0f - ramp;  // inv_freq_extrapolation_factor
    const float extrapolated = 1.0f / pos[i];
    const float interpolated = 1.0f / (static_cast<float>(rs.factor) * pos[i]);
    f[i] = interpolated * (1.0f - keep) + extrapolated * keep;
  }
  return f;
}

}  // namespace

std::vector<float> rope_inv_freq(const model::ModelSpec& spec, bool local) {
  const bool local_base = local && spec.rope_local_theta > 0;
  const double theta = local_base ? spec.rope_local_theta : spec.rope_theta;
  // Gemma 4: the full-attention layers' table spans their own head (full_head_dim)
  const int64_t R = !local_base && spec.full_head_dim > 0 ? spec.full_head_dim : spec.rotary_dim();
  std::vector<float> f = base_powers(theta, R);
  for (float& inv : f) inv = 1.0f / inv;
  if (local_base) return f;  // Gemma 3's local layers: default RoPE
  const model::RopeScaling& rs = spec.rope_scaling;
  switch (rs.type) {
    case model::RopeScaling::Type::none: break;
    case model::RopeScaling::Type::proportional: {
      // _compute_proportional_rope_parameters: rope_angles = int(partial_rotary_factor * head_dim // 2) frequencies
      // θ^(-2i/head_dim), zeros for the rest of the head_dim / 2, all divided by factor
      const auto angles = static_cast<size_t>(std::floor(rs.rotary_fraction * static_cast<double>(R) / 2.0));
      for (size_t i = 0; i < f.size(); ++i) f[i] = i < angles ? f[i] / static_cast<float>(rs.factor) : 0.0f;
      break;
    }
    case model::RopeScaling::Type::dynamic: break;  // unchanged up to max_position_embeddings (model_spec.h)
    case model::RopeScaling::Type::linear:
      for (float& inv : f) inv /= static_cast<float>(rs.factor);
      break;
    case model::RopeScaling::Type::longrope:
      return longrope_inv_freq(spec, rs.short_factor);
    case model::RopeScaling::Type::yarn:
      return yarn_inv_freq(spec);
    case model::RopeScaling::Type::llama3: {
      const double old_ctx = static_cast<double>(rs.original_max_position_embeddings);
      const double low_wavelen = old_ctx / rs.low_freq_factor;
      const double high_wavelen = old_ctx / rs.high_freq_factor;
      for (float& inv : f) {
        const double wavelen = 2.0 * M_PI / inv;
        if (wavelen > low_wavelen) {
          inv = static_cast<float>(inv / rs.factor);
        } else if (wavelen >= high_wavelen && rs.high_freq_factor > rs.low_freq_factor) {  // (no band when equal)
          const double smooth = (old_ctx / wavelen - rs.low_freq_factor) / (rs.high_freq_factor - rs.low_freq_factor);
          inv = static_cast<float>((1.0 - smooth) * inv / rs.factor + smooth * inv);
        }
      }
      break;
    }
  }
  return f;
}

std::vector<float> rope_long_inv_freq(const model::ModelSpec& spec) {
  if (spec.long_rope_after() <= 0) return {};
  return longrope_inv_freq(spec, spec.rope_scaling.long_factor);
}

float rope_attention_factor(const model::ModelSpec& spec, bool local) {
  if (local && spec.rope_local_theta > 0) return 1.0f;
  const model::RopeScaling::Type type = spec.rope_scaling.type;
  if (type != model::RopeScaling::Type::longrope && type != model::RopeScaling::Type::yarn) return 1.0f;
  return static_cast<float>(spec.rope_scaling.attention_factor);
}

}  // namespace abl::engine
