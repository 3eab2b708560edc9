// Rotary embedding in the rotate-half layout of Hugging Face: pairs are (i, i + R/2), not
// interleaved, so q/k weights need no permutation; R = HD, or the rotary dims of a partial rotary
// model (Phi-4-mini), whose other dims pass unchanged. The angle is rounded to fp32 first, as torch
// computes position * inv_freq in fp32, and then cos/sin are taken of that fp32 angle.
#include <cmath>

#include "abl/backend/cpu/ops.h"

namespace abl::cpu {

void rope(float* x, const int64_t* positions, int64_t T, int64_t heads, int64_t HD, const float* inv_freq,
          float attention_factor, const int32_t* table, int64_t rotary_dim) {
  const int64_t half = (rotary_dim > 0 ? rotary_dim : HD) / 2;
#pragma omp parallel for schedule(static) if (T * heads * HD > 65536)
  for (int64_t t = 0; t < T; ++t) {
    const float pos = static_cast<float>(positions[t]);
    const float* freq = inv_freq + (table ? table[t] : 0) * half;
    for (int64_t i = 0; i < half; ++i) {
      const float angle = pos * freq[i];
      const float c = static_cast<float>(std::cos(static_cast<double>(angle))) * attention_factor;
      const float s = static_cast<float>(std::sin(static_cast<double>(angle))) * attention_factor;
      for (int64_t h = 0; h < heads; ++h) {
        float* xh = x + (t * heads + h) * HD;
        const float x1 = xh[i], x2 = xh[i + half];
        xh[i] = x1 * c - x2 * s;
        xh[i + half] = x2 * c + x1 * s;
      }
    }
  }
}

}  // namespace abl::cpu
