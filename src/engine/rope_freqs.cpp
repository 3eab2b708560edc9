// RoPE inverse frequencies as transformers computes them (modeling_rope_utils): 1 / theta^(2i/HD)
// in fp32, then the rope scaling — llama3 (long wavelengths divided by `factor`, short ones kept,
// a smooth blend between), linear (all divided by `factor`), longrope (each divided by its short
// factor; the long factors are never used, see ModelSpec::context_length).
#include <cmath>

#include "abl/engine/rope_freqs.h"

namespace abl::engine {

std::vector<float> rope_inv_freq(const model::ModelSpec& spec, bool local) {
  const int64_t HD = spec.head_dim;
  const double theta = local && spec.rope_local_theta > 0 ? spec.rope_local_theta : spec.rope_theta;
  std::vector<float> base(static_cast<size_t>(HD / 2)), f(base.size());  // base[i] = theta^(2i/HD)
  for (int64_t i = 0; i < HD / 2; ++i) {
    const float expo = static_cast<float>(2 * i) / static_cast<float>(HD);
    base[static_cast<size_t>(i)] = static_cast<float>(std::pow(static_cast<float>(theta), expo));
    f[static_cast<size_t>(i)] = 1.0f / base[static_cast<size_t>(i)];
  }
  if (local && spec.rope_local_theta > 0) return f;  // Gemma 3's local layers: default RoPE
  const model::RopeScaling& rs = spec.rope_scaling;
  switch (rs.type) {
    case model::RopeScaling::Type::none: break;
    case model::RopeScaling::Type::linear:
      for (float& inv : f) inv /= static_cast<float>(rs.factor);
      break;
    case model::RopeScaling::Type::longrope:
      // inv_freq = 1 / (ext_factors * base ** (arange(0, HD, 2) / HD)), all fp32.
      for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f / (static_cast<float>(rs.short_factor[i]) * base[i]);
      break;
    case model::RopeScaling::Type::llama3: {
      const double old_ctx = static_cast<double>(rs.original_max_position_embeddings);
      const double low_wavelen = old_ctx / rs.low_freq_factor;
      const double high_wavelen = old_ctx / rs.high_freq_factor;
      for (float& inv : f) {
        const double wavelen = 2.0 * M_PI / inv;
        if (wavelen > low_wavelen) {
          inv = static_cast<float>(inv / rs.factor);
        } else if (wavelen >= high_wavelen) {
          const double smooth = (old_ctx / wavelen - rs.low_freq_factor) / (rs.high_freq_factor - rs.low_freq_factor);
          inv = static_cast<float>((1.0 - smooth) * inv / rs.factor + smooth * inv);
        }
      }
      break;
    }
  }
  return f;
}

float rope_attention_factor(const model::ModelSpec& spec, bool local) {
  if (local && spec.rope_local_theta > 0) return 1.0f;
  if (spec.rope_scaling.type != model::RopeScaling::Type::longrope) return 1.0f;
  return static_cast<float>(spec.rope_scaling.attention_factor);
}

}  // namespace abl::engine
