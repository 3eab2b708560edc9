// RoPE inverse frequencies as transformers computes them: 1 / theta^(2i/HD) in fp32, then the
// llama3 scaling (long wavelengths divided by `factor`, short ones kept, a smooth blend between).
#include <cmath>

#include "abl/engine/rope_freqs.h"

namespace abl::engine {

std::vector<float> rope_inv_freq(const model::ModelSpec& spec) {
  const int64_t HD = spec.head_dim;
  std::vector<float> f(static_cast<size_t>(HD / 2));
  for (int64_t i = 0; i < HD / 2; ++i) {
    const float expo = static_cast<float>(2 * i) / static_cast<float>(HD);
    const float base = static_cast<float>(std::pow(static_cast<float>(spec.rope_theta), expo));
    f[static_cast<size_t>(i)] = 1.0f / base;
  }
  const model::RopeScaling& rs = spec.rope_scaling;
  if (rs.type == model::RopeScaling::Type::llama3) {
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
  }
  return f;
}

}  // namespace abl::engine
